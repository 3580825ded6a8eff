"""`tomacs` end to end through litellm against a loopback fake server: faults, cache, SIGKILL resume."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tomacs.backbones.cache import make_key
from tomacs.testing.fake_openai_server import FakeOpenAIServer

pytestmark = pytest.mark.slow

SECRET = "sk-run-SECRET-9876543210fedcba"
MODEL = "openai/fake"


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as srv:
        yield srv


def args(srv: FakeOpenAIServer, out: Path, cache: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "tomacs.cli",
        "evaluate",
        "backbone=openai_compatible",
        f"backbone.api_base={srv.base_url}",
        f"backbone.model={MODEL}",
        f"backbone.cache.path={cache}",
        "backbone.backoff_base=0.01",
        "backbone.backoff_max=0.05",
        "backbone.timeout=1",
        "backbone.max_concurrency=4",
        "method=complete",
        "agents=3",
        "rounds=2",
        "attack=none",
        "eval.size=6",
        "eval.batch_size=2",
        f"hydra.run.dir={out}",
        *extra,
    ]


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["FAKE_KEY"] = SECRET
    return e


def tomacs(cmd: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env())


def body_keys(body: dict[str, Any], agents: int = 3) -> set[str]:
    """The cache keys tomacs may give the request the server saw (evaluation: sample index 0): one
    per agent slot, as the server does not see which agent asks."""
    params = {"max_tokens": body["max_tokens"]}
    return {make_key(MODEL, body["messages"], params, 0, slot=a) for a in range(agents)}


def any_keys(bodies: list[dict[str, Any]]) -> set[str]:
    return set().union(*(body_keys(b) for b in bodies))


def cached_keys(path: Path) -> set[str]:
    with sqlite3.connect(path) as c:
        return {k for (k,) in c.execute("SELECT key FROM responses")}


def test_faults_are_survived_counted_and_never_repaid(server: FakeOpenAIServer, tmp_path: Path) -> None:
    faults = ["429", "500", "503", "malformed", "empty", "sleep:3", "429"]
    server.push(*faults)
    cache = tmp_path / "cache.sqlite"
    p = tomacs(args(server, tmp_path / "a", cache, "backbone.api_key_env=FAKE_KEY"))
    assert p.returncode == 0, p.stderr[-2000:]
    res = json.loads((tmp_path / "a" / "results.json").read_text())
    st = res["backbone_stats"]
    # 6 questions x (3 agents x 2 rounds) agent calls; vote decision (no adversaries): no LLM decision
    assert st["calls"] == 36 and st["cache_misses"] == 36 and st["cache_hits"] == 0
    assert st["retries"] == len(faults) and st["failures"] == len(faults) and st["errors"] == 0
    assert server.requests == 36 + len(faults)
    ok = [b for b, a in zip(server.bodies, server.actions, strict=True) if a == "ok"]
    # every answer was requested once (the timed-out request counts as its fault, its retry as "ok"):
    # 36 answers wrote 36 keys, none of them twice
    assert len(cached_keys(cache)) == len(ok) == 36 and cached_keys(cache) <= any_keys(ok)
    assert res["metrics"]["unparsed_answers"] == 0
    # the key came from the environment, reached the server, and is written nowhere
    assert all(h == f"Bearer {SECRET}" for h in server.auth_headers)
    for f in [*(tmp_path / "a").rglob("*"), cache]:
        if f.is_file():
            assert SECRET.encode() not in f.read_bytes(), f

    # a re-run (new output dir, same cache) makes no call at all and gives the same numbers
    before = server.requests
    p = tomacs(args(server, tmp_path / "b", cache, "backbone.api_key_env=FAKE_KEY"))
    assert p.returncode == 0, p.stderr[-2000:]
    assert server.requests == before
    rb = json.loads((tmp_path / "b" / "results.json").read_text())
    assert rb["backbone_stats"]["calls"] == 0 and rb["backbone_stats"]["cache_hits"] == 36
    assert rb["metrics"]["acc"] == res["metrics"]["acc"] and rb["metrics"]["token"] == res["metrics"]["token"]


def test_adversaries_with_one_prompt_draw_their_own_samples_and_a_rerun_pays_none(tmp_path: Path) -> None:
    """The App. D adversaries of one question send byte-identical prompts: each is its own call, so
    a model sampled at temperature > 0 answers each its own way, and a re-run replays every one."""
    cache = tmp_path / "cache.sqlite"
    with FakeOpenAIServer(sampled=True) as srv:  # every call a new reply, as at temperature > 0

        def job(out: Path) -> list[str]:  # 2 of 3 agents adversarial from round 1
            cmd = [a for a in args(srv, out, cache) if a != "attack=none"]
            return [*cmd, "attack=gt50", "attack.onset_rounds=[1]"]

        p = tomacs(job(tmp_path / "a"))
        assert p.returncode == 0, p.stderr[-2000:]
        res = json.loads((tmp_path / "a" / "results.json").read_text())
        eps = [json.loads(ln) for ln in (tmp_path / "a" / "episodes.jsonl").read_text().splitlines()]
        assert len(eps) == 6
        for ep in eps:
            advs, first = ep["plan"]["adversaries"], {o["agent"]: o for o in ep["rounds"][0]}
            assert len(advs) == 2 and all(first[a]["behaviour"] == "adversarial" for a in advs)
            assert first[advs[0]]["text"] != first[advs[1]]["text"]  # two samples, not one shared
            assert not any(first[a]["cached"] for a in advs)
        # each question's adversarial prompt reached the server twice, once per adversary
        sent = Counter(json.dumps(b["messages"]) for b in srv.bodies)
        assert sorted(n for n in sent.values() if n > 1) == [2] * 6
        assert srv.requests == res["backbone_stats"]["calls"] == len(cached_keys(cache))

        # a re-run with the same cache: every agent's reply comes back, no call is made
        before = srv.requests
        p = tomacs(job(tmp_path / "b"))
        assert p.returncode == 0, p.stderr[-2000:]
        assert srv.requests == before
    rb = json.loads((tmp_path / "b" / "results.json").read_text())
    assert rb["backbone_stats"]["calls"] == 0
    assert rb["backbone_stats"]["cache_hits"] == res["backbone_stats"]["requests"]
    again = [json.loads(ln) for ln in (tmp_path / "b" / "episodes.jsonl").read_text().splitlines()]
    texts = [[[o["text"] for o in r] for r in ep["rounds"]] for ep in eps]
    assert [[[o["text"] for o in r] for r in ep["rounds"]] for ep in again] == texts


def test_permanent_error_stops_the_run_with_one_clear_line(server: FakeOpenAIServer, tmp_path: Path) -> None:
    server.push("401")
    p = tomacs(args(server, tmp_path / "a", tmp_path / "c.sqlite"))
    assert p.returncode != 0
    assert "permanent error" in p.stderr and "Traceback" not in p.stderr


def test_sigkill_mid_run_resumes_without_repaying(tmp_path: Path) -> None:
    out, cache = tmp_path / "run", tmp_path / "cache.sqlite"
    with FakeOpenAIServer(latency=0.25) as srv:
        proc = subprocess.Popen(
            args(srv, out, cache), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env()
        )
        deadline = time.time() + 120
        episodes = out / "episodes.jsonl"
        while time.time() < deadline and proc.poll() is None:
            if episodes.is_file() and len(episodes.read_text().splitlines()) >= 2 and srv.requests > 14:
                break
            time.sleep(0.05)
        assert proc.poll() is None, "the run finished before it could be killed; slow the server down"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        assert not (out / "results.json").exists()
        first = list(srv.bodies)
        paid = cached_keys(cache)
        assert paid and paid <= any_keys(first)  # our key reconstruction is the real one
        done = len(episodes.read_text().splitlines())
        assert 2 <= done < 6

        p = tomacs(args(srv, out, cache))
        assert p.returncode == 0, p.stderr[-2000:]
        second = srv.bodies[len(first) :]
    assert not any_keys(second) & paid  # nothing cached was requested again (under any slot)
    res = json.loads((out / "results.json").read_text())
    assert res["metrics"]["resumed_questions"] == done
    assert len((out / "episodes.jsonl").read_text().splitlines()) == 6
    assert len(cached_keys(cache)) == 36

    # the resumed run scores exactly what an uninterrupted run scores
    with FakeOpenAIServer() as srv:
        p = tomacs(args(srv, tmp_path / "ref", tmp_path / "ref.sqlite"))
    assert p.returncode == 0, p.stderr[-2000:]
    ref = json.loads((tmp_path / "ref" / "results.json").read_text())
    assert res["metrics"]["acc"] == ref["metrics"]["acc"]
    assert res["metrics"]["token"] == ref["metrics"]["token"]
