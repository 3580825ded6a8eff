"""Sweeps through a real SLURM cluster: `hydra/launcher=submitit_slurm`, sbatch, scancel, requeue.

The cluster is one node on loopback, started by `scripts/slurm_local.sh` (as root; slurm-wlm and
munge from Debian's packages). Where it cannot start (not root, slurm not installed) the tests skip
with the reason, unless TOMACS_REQUIRE_SLURM=1 (set by `.ci/run`, which installs slurm), where a
skip would hide a broken path and they fail instead. A cluster already running (started by hand
with the script) is reused and left running; one the fixture started is stopped.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tomacs.testing.fake_openai_server import FakeOpenAIServer

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "slurm_local.sh"
STATE = Path(os.environ.get("TOMACS_SLURM_DIR", "/tmp/tomacs-slurm"))
LAUNCHER = [
    "hydra/launcher=submitit_slurm",
    "hydra.launcher.partition=debug",
    "hydra.launcher.timeout_min=10",
    "hydra.launcher.cpus_per_task=1",
    "hydra.launcher.mem_gb=1",
]


def _unavailable() -> str | None:
    if os.geteuid() != 0:
        return "the local SLURM cluster runs its daemons as root (run pytest as root)"
    missing = [c for c in ("sbatch", "slurmctld", "slurmd", "munged") if shutil.which(c) is None]
    if missing:
        return f"{', '.join(missing)} not found: install with `scripts/slurm_local.sh install`"
    return None


def _script(cmd: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, TOMACS_SLURM_DIR=str(STATE))
    return subprocess.run(["bash", str(SCRIPT), cmd], capture_output=True, text=True, timeout=120, env=env)


@pytest.fixture(scope="module")
def slurm() -> Iterator[dict[str, str]]:
    """The environment a sweep needs to reach the cluster (SLURM_CONF); jobs inherit it from sbatch,
    PYTHONPATH included, so they import this checkout's tomacs with this Python (sys.executable)."""
    why = _unavailable()
    if why:
        if os.environ.get("TOMACS_REQUIRE_SLURM") == "1":
            pytest.fail(f"TOMACS_REQUIRE_SLURM=1 but {why}")
        pytest.skip(why)
    reused = _script("status").returncode == 0
    if not reused:
        p = _script("start")
        if p.returncode != 0:
            pytest.fail(f"the local SLURM cluster did not start: {p.stderr[-2000:]}")
    pypath = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, SLURM_CONF=str(STATE / "slurm.conf"), PYTHONPATH=pypath, FAKE_KEY="sk-fake")
    try:
        yield env
    finally:
        if not reused:
            _script("stop")


@pytest.fixture
def sweep(slurm: dict[str, str], tmp_path: Path) -> Iterator[Path]:
    """The test's sweep dir; afterwards its SLURM jobs are waited for (cancelled after 60 s), so no
    job of one test holds a CPU in the next (the driver returns once the result files exist, while
    SLURM may still be ending the job)."""
    d = tmp_path / "sweep"
    yield d
    ids = sorted({p.name.split("_")[0] for p in (d / ".submitit").glob("*_*") if p.is_dir()})
    deadline = time.time() + 60
    while ids and any(_squeue(slurm, i) for i in ids):
        if time.time() > deadline:
            subprocess.run(["scancel", *ids], env=slurm, check=False)
            break
        time.sleep(0.2)


def _sweep(env: dict[str, str], sweep: Path, *overrides: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "tomacs.cli",
        "evaluate",
        "-m",
        "method=complete,random",
        *overrides,
        *LAUNCHER,
        f"hydra.sweep.dir={sweep}",
    ]


def _job_dir(sweep: Path, num: int) -> Path:
    (d,) = [p for p in sweep.iterdir() if p.is_dir() and p.name.split("_")[0] == str(num)]
    return d


def _slurm_id(sweep: Path, num: int) -> str:
    """The array task submitit gave job `num` (its log folder is named after it)."""
    (task,) = _tasks(sweep, num)
    return task


def _log(sweep: Path, task: str) -> str:
    """What the job printed to stderr on the node (submitit's log of that array task)."""
    return (sweep / ".submitit" / task / f"{task}_0_log.err").read_text()


def _tasks(sweep: Path, num: int) -> list[str]:
    """Every array task that ran job `num`, oldest submission first."""
    found = [p.name for p in (sweep / ".submitit").glob(f"*_{num}") if p.is_dir()]
    return sorted(found, key=lambda t: int(t.split("_")[0]))


def _episodes(job: Path) -> list[dict]:
    f = job / "episodes.jsonl"
    return [json.loads(line) for line in f.read_text().splitlines()] if f.is_file() else []


def _wait(cond, what: str, proc: subprocess.Popen | None = None, timeout: float = 420) -> None:  # noqa: ANN001
    deadline = time.time() + timeout
    while not cond():
        if proc is not None and proc.poll() is not None:
            pytest.fail(f"the sweep ended (rc {proc.returncode}) before {what}")
        if time.time() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.1)


def _squeue(env: dict[str, str], job: str) -> str:
    p = subprocess.run(["squeue", "-h", "-j", job, "-o", "%T"], capture_output=True, text=True, env=env)
    return p.stdout.strip()


def _llm(srv: FakeOpenAIServer, cache: Path) -> list[str]:
    """A slow loopback LLM, so a job is still running when the test cancels or requeues it."""
    return [
        "backbone=openai_compatible",
        f"backbone.api_base={srv.base_url}",
        "backbone.model=openai/fake",
        "backbone.api_key_env=FAKE_KEY",
        f"backbone.cache.path={cache}",
        "backbone.max_concurrency=4",
        "agents=3",
        "rounds=2",
        "attack=none",
        "eval.size=10",
        "eval.batch_size=2",
        "hydra.sweep.subdir=${hydra.job.num}",  # the URL would nest the default job dir names
    ]


def _check_complete(job: Path, size: int) -> dict:
    res = json.loads((job / "results.json").read_text())
    eps = _episodes(job)
    qids = [e["question"]["id"] for e in eps]
    assert len(qids) == size and len(set(qids)) == size, f"duplicated or missing episodes in {job}"
    assert res["test_questions"] == size
    return res


def test_sweep_runs_every_job_through_sbatch(slurm: dict[str, str], sweep: Path, tmp_path: Path) -> None:
    cmd = _sweep(slurm, sweep, "attack=gt50", "eval.size=3", "embedder=hashing")
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=slurm, cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "Submitit 'slurm' sweep output dir" in p.stdout + p.stderr
    (script,) = (sweep / ".submitit").glob(".submission_file_*.sh")
    text = script.read_text()
    assert "#SBATCH --partition=debug" in text and f"{sys.executable} -u -m submitit.core._submit" in text
    for num, method in enumerate(("complete", "random")):
        res = _check_complete(_job_dir(sweep, num), 3)
        assert res["method"] == method and res["attack"] == "gt50"
        # the job ran under SLURM: the log of its array task holds the job's own lines
        assert f"[job {num}] run directory:" in _log(sweep, _slurm_id(sweep, num))


def test_jobs_import_this_checkout(slurm: dict[str, str], tmp_path: Path) -> None:
    """A job runs with the submitting shell's environment: this Python, this checkout's tomacs."""
    out = tmp_path / "where.txt"
    code = "import sys, tomacs; print(sys.executable); print(tomacs.__file__)"
    subprocess.run(
        ["sbatch", "--wait", "-p", "debug", "-o", str(out), "--wrap", f"{sys.executable} -c '{code}'"],
        check=True,
        capture_output=True,
        timeout=120,
        env=slurm,
        cwd=tmp_path,
    )
    exe, module = out.read_text().split()
    assert exe == sys.executable and Path(module).resolve() == REPO / "tomacs" / "__init__.py"


def _sweep_until_job1_is_running(
    slurm: dict[str, str], sweep: Path, cmd: list[str], tmp_path: Path
) -> tuple[subprocess.Popen[bytes], Path, str]:
    """Start the sweep command in the background (output in driver.log) and return once job 1 has
    written two episodes: the sweep process, job 1's directory and its SLURM id."""
    with (tmp_path / "driver.log").open("w") as log:
        # SIGINT at its default, as for a sweep typed in a terminal: the test stops it with Ctrl-C's
        # signal, and a test runner started in the background (`nohup make test &`) has it ignored.
        proc = subprocess.Popen(
            cmd,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=slurm,
            cwd=tmp_path,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
    try:
        _wait(lambda: len(list(sweep.glob("1/episodes.jsonl"))) == 1, "job 1 started", proc)
        job1 = _job_dir(sweep, 1)
        _wait(lambda: len(_episodes(job1)) >= 2, "job 1 wrote two episodes", proc)
        return proc, job1, _slurm_id(sweep, 1)
    except BaseException:
        proc.kill()
        proc.wait(10)
        raise


def test_cancelled_job_is_resubmitted_into_the_same_sweep(
    slurm: dict[str, str], sweep: Path, tmp_path: Path
) -> None:
    """scancel of a running job (what a node failure or a preemption without requeue looks like):
    its finished questions are kept, the run-dir lock is released with the process, and the same
    command into the same sweep dir skips the finished job and completes the cancelled one."""
    cache = tmp_path / "cache.sqlite"
    with FakeOpenAIServer(latency=0.3) as srv:
        cmd = _sweep(slurm, sweep, *_llm(srv, cache))
        proc, job1, task = _sweep_until_job1_is_running(slurm, sweep, cmd, tmp_path)
        try:
            subprocess.run(["scancel", task], check=True, env=slurm)
            _wait(lambda: _squeue(slurm, task) in ("", "CANCELLED"), "job 1 left the queue")
            assert not (job1 / "results.json").exists()
            done = len(_episodes(job1))
            assert 2 <= done < 10
            # the cancelled job's run-dir lock went with its process: it can be taken at once
            with (job1 / ".tomacs.lock").open("a") as fh:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                fcntl.flock(fh, fcntl.LOCK_UN)
            _wait(lambda: (_job_dir(sweep, 0) / "results.json").exists(), "job 0 finished")
            # with no accounting (sacct disabled) submitit cannot learn that job 1 died: the sweep
            # would wait forever, so the user stops it (Ctrl-C), as docs/howto/slurm.md says
            proc.send_signal(signal.SIGINT)
            proc.wait(180)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
        first0 = (_job_dir(sweep, 0) / "results.json").read_bytes()

        p = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=slurm, cwd=tmp_path)
        assert p.returncode == 0, p.stderr[-3000:]
    assert (_job_dir(sweep, 0) / "results.json").read_bytes() == first0  # not run again
    (first, again) = _tasks(sweep, 0)  # the re-run submitted both jobs again, as a new array
    assert "skipped (finished before)" in _log(sweep, again)
    assert "skipped" not in _log(sweep, first)
    res1 = _check_complete(job1, 10)
    assert res1["metrics"]["resumed_questions"] == done
    assert "skipped" not in _log(sweep, _tasks(sweep, 1)[-1])


def test_requeued_job_resumes_in_the_same_sweep(slurm: dict[str, str], sweep: Path, tmp_path: Path) -> None:
    """Preemption with requeue (`scontrol requeue`): SLURM kills the running job and starts it again
    under the same id; it resumes from its episodes and the same sweep command ends with both."""
    cache = tmp_path / "cache.sqlite"
    with FakeOpenAIServer(latency=0.3) as srv:
        cmd = _sweep(slurm, sweep, *_llm(srv, cache))
        proc, job1, task = _sweep_until_job1_is_running(slurm, sweep, cmd, tmp_path)
        try:
            subprocess.run(["scontrol", "requeue", task], check=True, env=slurm)
            _wait(lambda: _squeue(slurm, task) == "PENDING", "job 1 requeued")
            done = len(_episodes(job1))
            assert not (job1 / "results.json").exists() and 2 <= done < 10
            # SLURM holds a requeued job back for two minutes (BeginTime); let it start now
            subprocess.run(["scontrol", "update", f"jobid={task}", "StartTime=now"], check=True, env=slurm)
            proc.wait(240)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
    out = (tmp_path / "driver.log").read_text()
    assert proc.returncode == 0, out[-3000:]
    _check_complete(_job_dir(sweep, 0), 10)
    res1 = _check_complete(job1, 10)
    assert res1["metrics"]["resumed_questions"] == done
    # the same job ran twice, the second time to the end
    assert _log(sweep, task).count("run directory:") == 2
