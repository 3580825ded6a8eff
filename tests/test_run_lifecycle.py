"""Jobs as processes: a held run directory, kill -9, Ctrl-C / SIGTERM and resume, progress in a log."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

CLI = [sys.executable, "-m", "tomacs.cli"]


def start(*args: str, sigint: signal.Handlers = signal.SIG_DFL) -> subprocess.Popen[str]:
    """A job whose stderr (progress lines: it is not a terminal) is read as it runs.

    SIGINT's disposition is set, not inherited: a foreground job in a terminal has it at its
    default (so Ctrl-C reaches it) whatever the test runner had, and `sigint=SIG_IGN` starts the job
    as a script's background job (`cmd &`, `nohup cmd &`) is started."""
    return subprocess.Popen(
        [*CLI, *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        bufsize=1,
        preexec_fn=lambda: signal.signal(signal.SIGINT, sigint),
    )


def wait_for(p: subprocess.Popen[str], prefix: str) -> list[str]:
    seen = []
    assert p.stderr is not None
    for line in p.stderr:
        seen.append(line)
        if line.startswith(prefix):
            return seen
    raise AssertionError(
        f"job ended (rc {p.wait()}) before a line starting {prefix!r}: {''.join(seen)[-2000:]}"
    )


def finish(p: subprocess.Popen[str]) -> tuple[int, str]:
    _, err = p.communicate(timeout=600)
    return p.returncode, err


def ids(run: Path) -> list[str]:
    return [json.loads(x)["question"]["id"] for x in (run / "episodes.jsonl").read_text().splitlines()]


# Long enough (about 6 s on the simulator, idle) that a signal sent after the first progress line
# lands mid-run even on a loaded machine: at 40 questions the job could finish first (flaky).
N_EVAL = 1000
EVAL = ["evaluate", "method=random", "attack=gt50", f"eval.size={N_EVAL}", "eval.batch_size=4"]


def test_second_job_on_a_held_directory_fails_fast_and_the_first_is_intact(tmp_path: Path) -> None:
    run = tmp_path / "run"
    first = start(*EVAL, f"hydra.run.dir={run}")
    try:
        wait_for(first, "evaluate |")
        first.send_signal(signal.SIGSTOP)  # paused mid-run, still holding the directory
        t0 = time.monotonic()
        second = subprocess.run(
            [*CLI, *EVAL, "eval.batch_size=5", f"hydra.run.dir={run}"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert second.returncode == 2 and time.monotonic() - t0 < 60
        err = [ln for ln in second.stderr.splitlines() if ln.strip()]
        assert len(err) == 1, second.stderr
        assert (
            f"{run} is in use by another job (pid {first.pid} on " in err[0] and "eval.batch_size=4" in err[0]
        )
    finally:
        first.send_signal(signal.SIGCONT)
    rc, err = finish(first)
    assert rc == 0, err[-2000:]
    assert sorted(ids(run)) == sorted(set(ids(run))) and len(ids(run)) == N_EVAL
    res = json.loads((run / "results.json").read_text())
    assert res["metrics"]["n_queries"] == N_EVAL and res["metrics"]["llm_calls"] == N_EVAL * 25
    assert "eval.batch_size=5" not in (run / ".hydra" / "overrides.yaml").read_text()


def test_a_killed_job_leaves_no_lock_and_the_next_one_resumes(tmp_path: Path) -> None:
    run = tmp_path / "run"
    p = start(*EVAL, f"hydra.run.dir={run}")
    wait_for(p, "evaluate |")
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=60)
    again = subprocess.run([*CLI, *EVAL, f"hydra.run.dir={run}"], capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-2000:]
    res = json.loads((run / "results.json").read_text())
    assert res["metrics"]["resumed_questions"] >= 4 and res["metrics"]["n_queries"] == N_EVAL


TRAIN = [
    "train",
    "method=todycomm",
    "embedder=hashing",
    "attack=gt50",
    "train.size=64",
    "train.val_size=8",
    "train.batch_size=8",
    "train.epochs=2",
    "eval.size=8",
]


def test_ctrl_c_prints_the_resume_command_and_it_resumes_without_duplicate_log_lines(tmp_path: Path) -> None:
    run = tmp_path / "run"
    p = start(*TRAIN, f"hydra.run.dir={run}")
    assert wait_for(p, "run directory: ")[-1].strip() == f"run directory: {run}"
    wait_for(p, "train epoch 2/2 | questions 8/64")  # epoch 1 is checkpointed, epoch 2 under way
    p.send_signal(signal.SIGINT)
    rc, err = finish(p)
    assert rc == 130, err[-2000:]
    lines = err.splitlines()
    cmd = lines[lines.index(next(ln for ln in lines if ln.endswith("Resume with:"))) + 1].strip()
    assert cmd == shlex.join([*CLI, *TRAIN, f"hydra.run.dir={run}"])
    logged = [json.loads(x) for x in (run / "train_log.jsonl").read_text().splitlines()]
    assert 8 in [r["iteration"] for r in logged if "loss" in r]  # an epoch-2 line the resume redoes
    resumed = subprocess.run(shlex.split(cmd), capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    res = json.loads((run / "results.json").read_text())
    assert res["train"]["resumed_from_epoch"] == 1
    logged = [json.loads(x) for x in (run / "train_log.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in logged if "loss" in r] == list(range(16))
    assert [r["epoch"] for r in logged if "val_acc" in r] == [0, 1]


@pytest.mark.parametrize("sigint", [signal.SIG_DFL, signal.SIG_IGN], ids=["foreground", "background"])
def test_sigterm_stops_like_ctrl_c(tmp_path: Path, sigint: signal.Handlers) -> None:
    """Also for a job that inherited SIGINT ignored (a script's `tomacs train ... &`): SIGTERM was
    turned into a SIGINT, which such a job ignored, so it ran to the end and exited 0."""
    run = tmp_path / "run"
    p = start(*EVAL, f"hydra.run.dir={run}", sigint=sigint)
    wait_for(p, "evaluate | questions 200/")  # well inside the event loop's busy stretch
    p.send_signal(signal.SIGTERM)
    rc, err = finish(p)
    assert rc == 143 and "interrupted (SIGTERM)" in err and f"hydra.run.dir={run}" in err, err[-2000:]
    assert "Traceback" not in err, err[-3000:]
    assert not (run / "results.json").exists()
    cmd = err.splitlines()[-1].strip()
    assert cmd == shlex.join([*CLI, *EVAL, f"hydra.run.dir={run}"])
    done = len(ids(run))
    assert 0 < done < N_EVAL
    again = subprocess.run(shlex.split(cmd), capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-2000:]
    res = json.loads((run / "results.json").read_text())
    assert res["metrics"]["resumed_questions"] == done and res["metrics"]["n_queries"] == N_EVAL
    assert sorted(ids(run)) == sorted(set(ids(run)))


def children(pid: int) -> list[int]:
    """Live (not zombie) child processes of pid, from /proc."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            out.append(int(stat.parent.name))
    return out


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads child processes from /proc")
def test_sigterm_to_a_parallel_sweep_stops_its_workers(tmp_path: Path) -> None:
    """`kill PID` of a joblib sweep's parent used to end the parent alone: its workers ran their
    jobs on (for hours with MiniLM), orphaned, writing to the run directories its resume takes."""
    sweep, log = tmp_path / "sweep", tmp_path / "stderr.log"
    args = [*TRAIN, "train.epochs=200", "seed=0,1", "hydra/launcher=joblib", "hydra.launcher.n_jobs=2", "-m"]
    with log.open("w") as out:  # a file, not a pipe: orphaned workers would hold a pipe open for hours
        p = subprocess.Popen(
            [*CLI, *args, f"hydra.sweep.dir={sweep}"],
            stdout=subprocess.DEVNULL,
            stderr=out,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),  # a script's `cmd &`
        )
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 300
        while len(list(sweep.glob("*/checkpoint.pt"))) < 2:  # both jobs have an epoch to keep
            assert p.poll() is None and time.monotonic() < deadline, log.read_text()[-2000:]
            time.sleep(0.2)
        workers = [c for c in children(p.pid) if "loky" in Path(f"/proc/{c}/cmdline").read_text()]
        assert len(workers) >= 2, log.read_text()[-2000:]
        p.send_signal(signal.SIGTERM)
        rc = p.wait(timeout=120)
        deadline = time.monotonic() + 30
        while any(alive(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not any(alive(w) for w in workers), f"a sweep worker outlived its parent (rc {rc})"
    finally:
        if p.poll() is None:
            p.kill()
        for w in workers:
            if alive(w):
                os.kill(w, signal.SIGKILL)
    err = log.read_text()
    assert rc == 143 and "interrupted (SIGTERM)" in err and f"hydra.sweep.dir={sweep}" in err, err[-3000:]
    assert "Traceback" not in err, err[-3000:]
    jobs = sorted(d for d in sweep.iterdir() if d.is_dir())
    assert len(jobs) == 2
    for d in jobs:  # stopped mid-training, its finished epochs kept
        assert (d / "checkpoint.pt").exists() and not (d / "results.json").exists()


def test_progress_in_a_log_is_one_flushed_line_per_iteration_and_batch(tmp_path: Path) -> None:
    p = subprocess.run(
        [*CLI, *TRAIN, "train.size=16", "train.epochs=1", "eval.batch_size=4", f"hydra.run.dir={tmp_path}"],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "COLUMNS": "80"},
    )
    assert p.returncode == 0, p.stderr[-2000:]
    train = [ln for ln in p.stderr.splitlines() if ln.startswith("train epoch 1/1 | ")]
    assert [ln.split(" | ")[1:3] for ln in train] == [
        ["questions 8/16", "iter 1/2"],
        ["questions 16/16", "iter 2/2"],
    ]
    # training shows the exploring policy's figures, validation the greedy policy's, each labelled
    assert all(" | loss " in ln and " | explore Acc " in ln and " | elapsed " in ln for ln in train)
    assert all(" | job ETA " in ln for ln in train)
    assert any(ln.startswith("train epoch 1/1 validation | val Acc ") for ln in p.stderr.splitlines())
    assert any(ln.startswith("plan: sim backbone") for ln in p.stderr.splitlines())
    ev = [ln for ln in p.stderr.splitlines() if ln.startswith("evaluate | ")]
    assert [ln.split(" | ")[2] for ln in ev] == ["batch 1/2", "batch 2/2"]
    assert all(len(ln) > 80 for ln in ev)  # not wrapped at a console width
    # the summary's baselines (tomacs.launch.baselines) say whose evaluation they are
    for which in ("complete", "untrained"):
        assert any(ln.startswith(f"baseline {which}: evaluate | ") for ln in p.stderr.splitlines()), which


@pytest.mark.parametrize(
    ("sig", "sigint", "code"),
    [(signal.SIGINT, signal.SIG_DFL, 130), (signal.SIGTERM, signal.SIG_IGN, 143)],
    ids=["ctrl-c", "sigterm-background"],
)
def test_ctrl_c_with_llm_calls_in_flight_stops_cleanly_and_resumes(
    tmp_path: Path, sig: signal.Signals, sigint: signal.Handlers, code: int
) -> None:
    """The real backbone path: requests are awaited in an event loop when the signal lands (a
    background job's SIGTERM is not routed through asyncio's SIGINT handler: no traceback either)."""
    from tomacs.testing.fake_openai_server import FakeOpenAIServer

    run = tmp_path / "run"
    with FakeOpenAIServer(latency=0.3) as srv:
        llm = [
            "evaluate",
            "backbone=openai_compatible",
            f"backbone.api_base={srv.base_url}",
            "backbone.model=openai/fake",
            f"backbone.cache.path={tmp_path / 'cache.sqlite'}",
            "method=complete",
            "agents=3",
            "rounds=2",
            "eval.size=6",
            "eval.batch_size=2",
        ]
        p = start(*llm, f"hydra.run.dir={run}", sigint=sigint)
        wait_for(p, "evaluate | questions 2/6")
        p.send_signal(sig)
        rc, err = finish(p)
        assert rc == code and "Traceback" not in err, err[-2000:]
        cmd = err.splitlines()[-1].strip()
        assert cmd == shlex.join([*CLI, *llm, f"hydra.run.dir={run}"])
        again = subprocess.run(shlex.split(cmd), capture_output=True, text=True, timeout=600)
        assert again.returncode == 0, again.stderr[-2000:]
    res = json.loads((run / "results.json").read_text())
    assert res["metrics"]["resumed_questions"] >= 2 and res["metrics"]["n_queries"] == 6
