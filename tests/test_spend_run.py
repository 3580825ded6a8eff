"""`tomacs evaluate` with a spend cap against the loopback fake server: it stops before the next paid
call with one line and exit code 4, and the command that line prints resumes without repaying."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tomacs.backbones.spend import EXIT_CODE, LEDGER_NAME, SpendLedger
from tomacs.testing.fake_openai_server import FakeOpenAIServer

pytestmark = pytest.mark.slow


def args(srv: FakeOpenAIServer, out: Path, cache: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "tomacs.cli",
        "evaluate",
        "backbone=openai_compatible",
        f"backbone.api_base={srv.base_url}",
        "backbone.model=openai/fake",
        f"backbone.cache.path={cache}",
        "backbone.price={input_per_mtok:100,output_per_mtok:400}",
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


def tomacs(cmd: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=dict(os.environ))


def test_cap_stops_with_one_line_and_its_command_resumes_without_repaying(tmp_path: Path) -> None:
    out, cache = tmp_path / "run", tmp_path / "cache.sqlite"
    with FakeOpenAIServer() as srv:
        p = tomacs(args(srv, out, cache, "backbone.max_calls=20"))
        assert p.returncode == EXIT_CODE == 4, p.stderr[-2000:]
        lines = [ln for ln in p.stderr.splitlines() if "spend cap reached" in ln]
        assert len(lines) == 1 and "Traceback" not in p.stderr
        line = lines[0]
        assert line.startswith("spend cap reached: backbone.max_calls=20 (this job has paid $")
        assert "for 20 calls)" in line  # reservations, not completions: exactly the cap
        assert srv.requests == 20
        assert not (out / "results.json").exists()
        done = len((out / "episodes.jsonl").read_text().splitlines())
        assert 0 < done < 6  # finished questions are kept
        assert SpendLedger(out / LEDGER_NAME).paid("job:.")[0] == 20

        # the printed command, run as printed: the cap doubled, the same run directory
        resume = shlex.split(line.split("resume with: ", 1)[1])
        assert "backbone.max_calls=40" in resume and f"hydra.run.dir={out}" in resume
        p = tomacs(resume)
        assert p.returncode == 0, p.stderr[-2000:]
        bodies = [json.dumps(b["messages"]) for b in srv.bodies]
    assert len(bodies) == len(set(bodies)) == 36  # 6 questions x 3 agents x 2 rounds, none paid twice
    res = json.loads((out / "results.json").read_text())
    assert res["metrics"]["resumed_questions"] == done
    assert res["backbone_stats"]["calls"] == 16 and res["backbone_stats"]["cache_hits"] > 0


def body_keys(body: dict, agents: int = 4) -> set[str]:
    """The cache keys the request the server saw may have: one per agent slot (the server does not
    see which agent asks)."""
    from tomacs.backbones.cache import make_key

    params = {"max_tokens": body["max_tokens"]}
    return {make_key("openai/fake", body["messages"], params, 0, slot=a) for a in range(agents)}


def test_sweep_cap_over_two_joblib_workers_ends_with_one_line_and_resumes(tmp_path: Path) -> None:
    import sqlite3

    sweep, cache = tmp_path / "sweep", tmp_path / "cache.sqlite"
    with FakeOpenAIServer(latency=0.05) as srv:
        # two role pools with no role in common: no prompt of one job is the other's, so the sweep
        # needs exactly 2 x 36 calls however the two processes interleave (agents=3,4 did not: every
        # agents=3 prompt is an agents=4 one, 48-84 calls, so a job run after the other ended under
        # the cap with exit 0)
        sweep_over = "benchmark.roles=mmlu,medqa"
        cmd = args(srv, tmp_path / "unused", cache, "backbone.sweep_max_calls=50", sweep_over)
        cmd = [a for a in cmd if not a.startswith("hydra.run.dir=")]
        cmd[4:4] = ["-m"]
        cmd += ["hydra/launcher=joblib", "hydra.launcher.n_jobs=2", f"hydra.sweep.dir={sweep}"]
        p = tomacs(cmd)
        assert p.returncode == 4, p.stderr[-3000:]
        jobs = [ln for ln in p.stderr.splitlines() if ln.startswith("[job") and "spend cap reached" in ln]
        final = [ln for ln in p.stderr.splitlines() if ln.startswith("spend cap reached")]
        assert jobs and len(final) == 1 and "Traceback" not in p.stderr
        assert "backbone.sweep_max_calls=50 (this sweep's jobs have paid $" in final[0]
        # one cap over both processes (each job alone needs 36 < 50)
        assert srv.requests == 50
        # the job directories do not carry the cap, so the raised cap finds them
        assert sorted(d.name.split("_", 1)[0] for d in sweep.iterdir() if d.is_dir()) == ["0", "1"]
        assert not any("sweep_max_calls" in d.name for d in sweep.iterdir())
        with sqlite3.connect(cache) as c:
            paid = {k for (k,) in c.execute("SELECT key FROM responses")}
        first = len(srv.bodies)

        resume = shlex.split(final[0].split("resume with: ", 1)[1])
        assert "backbone.sweep_max_calls=100" in resume and f"hydra.sweep.dir={sweep}" in resume
        p = tomacs(resume)
        assert p.returncode == 0, p.stderr[-3000:]
        second = set().union(*(body_keys(b) for b in srv.bodies[first:]))
        assert srv.requests == 72  # the whole sweep, each call paid once
    assert second and not second & paid  # nothing paid for before was requested again
    assert len(list(sweep.rglob("results.json"))) == 2  # (the api_base's slashes nest the job directories)
