"""A run directory's life: one job holds it at a time, and an interrupted job says how to resume it.

Why a lock: two jobs in one directory both append to episodes.jsonl and both write results.json,
so every question counts twice and both exit 0. The lock is an flock on `.tomacs.lock` in the run
directory: the kernel drops it when its process ends, however it ends (SIGKILL, OOM, a node
reboot), so a killed job never leaves a stale lock behind. The file stays; its text names the last
holder and means nothing once no process holds the lock.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shlex
import signal
import socket
import sys
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

from tomacs.config import ConfigError

LOCK_NAME = ".tomacs.lock"
ARGV_ENV = "TOMACS_ARGV"  # the command as the user typed it, set by the CLI (read by launched jobs too)

_held: dict[Path, int] = {}  # run directory -> fd of its lock file, for the locks this process holds
_found: set[Path] = set()  # run directories that existed before this process took them (never removed)


class RunDirBusy(ConfigError):
    """Another live process holds the run directory."""


def command_argv() -> list[str]:
    """The command line that started this job, as the user typed it (the CLI rewrites sys.argv
    for Hydra, so it records the original in the environment first)."""
    raw = os.environ.get(ARGV_ENV)
    if raw:
        try:
            argv = json.loads(raw)
            if isinstance(argv, list) and all(isinstance(a, str) for a in argv):
                return argv
        except json.JSONDecodeError:
            pass
    return list(sys.argv)


def program(argv0: str) -> list[str]:
    """How to start tomacs again: `tomacs` for the console script, this Python's `-m tomacs.cli`
    when it was started as a module (argv[0] is then the path of cli/__main__.py)."""
    name = Path(argv0).name
    if name == "tomacs":
        return ["tomacs"]
    if name in ("cli.py", "__main__.py", "-m", "-c") or not name:
        return [sys.executable, "-m", "tomacs.cli"]
    return [argv0]


_PLAIN = re.compile(r"[\w./:~@%+-]+")


def hydra_value(path: str) -> str:
    """A path as a Hydra override value: quoted when it holds characters Hydra's grammar reads
    (=, commas, spaces, brackets, quotes)."""
    if _PLAIN.fullmatch(path):
        return path
    return "'" + path.replace("\\", "\\\\").replace("'", "\\'") + "'"


def resume_command(out_dir: Path, multirun: bool = False, argv: list[str] | None = None) -> str:
    """The original command with hydra.run.dir (a sweep: hydra.sweep.dir) set to out_dir, shell-quoted.

    Re-running it resumes: finished questions and epochs are kept, a finished sweep job is skipped."""
    argv = list(argv if argv is not None else command_argv())
    key = "hydra.sweep.dir" if multirun else "hydra.run.dir"
    args = [a for a in argv[1:] if not a.lstrip("+").startswith(key + "=")]
    return shlex.join([*program(argv[0] if argv else "tomacs"), *args, f"{key}={hydra_value(str(out_dir))}"])


def _holder() -> dict[str, object]:
    return {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "command": shlex.join([*program(argv[0]), *argv[1:]]) if (argv := command_argv()) else "?",
    }


def _describe(path: Path) -> str:
    try:
        h = json.loads(path.read_text() or "{}")
    except (OSError, json.JSONDecodeError):
        h = {}
    if not h:
        return "a job that is just starting"
    return f"pid {h.get('pid')} on {h.get('host')}, started {h.get('started')}: {h.get('command')}"


def acquire(out_dir: Path) -> bool:
    """Take the run directory's lock for this process; False if this process holds it already.
    Raises RunDirBusy (one line naming the holder) when another process holds it."""
    out_dir = Path(out_dir).resolve()
    if out_dir in _held:
        return False
    if out_dir.exists():
        _found.add(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / LOCK_NAME
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)  # not inherited by child processes (O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise RunDirBusy(
            f"{out_dir} is in use by another job ({_describe(path)}); "
            "wait for it to finish or stop it, or choose another hydra.run.dir"
        ) from None
    os.ftruncate(fd, 0)
    os.write(fd, (json.dumps(_holder()) + "\n").encode())
    _held[out_dir] = fd
    return True


def release(out_dir: Path) -> None:
    fd = _held.pop(Path(out_dir).resolve(), None)
    if fd is not None:
        os.close(fd)  # closing the only descriptor drops the flock


_HYDRA_STUBS = frozenset({".hydra/config.yaml", ".hydra/hydra.yaml", ".hydra/overrides.yaml", LOCK_NAME})
# what a job writes in its directory before it has done any work: its settled config and its clock
# (tomacs.job.clock); and, only when empty, the logs that its first result would fill
_START_FILES = frozenset({"config.yaml", "wall.json"})
_EMPTY_START_FILES = frozenset({"episodes.jsonl", "train_log.jsonl"})


def made_by_this_command(out_dir: Path) -> bool:
    """False when the run directory existed before this command took it (`acquire`), so a failed job
    never removes a directory it did not create; True otherwise (this command, or Hydra for it, made it)."""
    return Path(out_dir).resolve() not in _found


def holds_only_stubs(out_dir: Path, empty_logs: bool = True, started: bool = False) -> bool:
    """True when out_dir holds nothing but what Hydra and the lock write before a job starts
    (.hydra/, .tomacs.lock, a top-level *.log; with empty_logs, only empty ones): a job that fails
    there leaves nothing worth keeping. Anything else (results, episodes, checkpoints, a train log,
    a tracker's files) means work, of this run or a previous one. `started`: the directory held only
    stubs when this job began, so what a job writes before any work (config.yaml, wall.json, an
    empty episodes.jsonl or train_log.jsonl) is its own and is no work either."""
    out_dir = Path(out_dir)
    if not out_dir.is_dir():
        return False
    for p in out_dir.rglob("*"):
        rel = p.relative_to(out_dir).as_posix()
        if p.is_dir() and not p.is_symlink():
            if rel != ".hydra":
                return False
        elif rel in _HYDRA_STUBS:
            continue
        elif (
            started
            and not p.is_symlink()
            and (rel in _START_FILES or (rel in _EMPTY_START_FILES and p.stat().st_size == 0))
        ):
            continue
        elif "/" in rel or not rel.endswith(".log") or p.is_symlink():
            return False
        elif empty_logs and p.stat().st_size > 0:
            return False
    return True


# what a sweep directory holds before any of its jobs made one: Hydra's record of the sweep and the
# spend ledger the caps open (tomacs.backbones.spend)
_SWEEP_STUBS = (
    "multirun.yaml",
    ".tomacs_spend.sqlite",
    ".tomacs_spend.sqlite-wal",
    ".tomacs_spend.sqlite-shm",
)


def remove_empty_sweep(sweep_dir: Path) -> bool:
    """Remove a sweep directory none of whose jobs left a directory (every one refused before any
    work: no API key, say), so a refused sweep leaves no debris and no resume line. Only the files a
    sweep writes before its jobs; anything else (a job's directory, a user's file) keeps it."""
    sweep_dir = Path(sweep_dir)
    if not sweep_dir.is_dir() or any(p.name not in _SWEEP_STUBS or p.is_dir() for p in sweep_dir.iterdir()):
        return False
    try:
        for p in sweep_dir.iterdir():
            p.unlink()
        sweep_dir.rmdir()
    except OSError:
        return False
    return True


def remove_stub(out_dir: Path, started: bool = False) -> bool:
    """Remove a run directory a failed command left with only stubs (see holds_only_stubs; `started`:
    a job that held only stubs when it began, whose own start files go too), so refused jobs do not
    pile up in outputs/runs/. File by file, never a tree: whatever else is there keeps the directory."""
    out_dir = Path(out_dir)
    if not holds_only_stubs(out_dir, empty_logs=False, started=started):
        return False
    release(out_dir)
    try:
        for p in sorted(out_dir.rglob("*"), key=lambda q: len(q.parts), reverse=True):
            p.rmdir() if p.is_dir() else p.unlink()
        out_dir.rmdir()
    except OSError:
        return False
    return True


@contextmanager
def hold(out_dir: Path) -> Iterator[None]:
    """Hold the run directory for the block (a no-op when this process holds it already, e.g. the
    CLI took it before Hydra wrote anything there)."""
    mine = acquire(out_dir)
    try:
        yield
    finally:
        if mine:
            release(out_dir)


_signal_seen: list[str] = []


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    _signal_seen.append("SIGTERM")
    on_sigint = signal.getsignal(signal.SIGINT)
    if callable(on_sigint):  # Python's own, or asyncio's while a batch runs (it cancels the batch)
        on_sigint(signal.SIGINT, frame)
        return
    # SIGINT is ignored: a job started in the background by a script (`cmd &`, `nohup cmd &`)
    # inherits it so from the shell. Re-sending SIGINT (as this did) then vanished and the job ran
    # on to the end with exit 0 (issue 27 item 7), so raise Ctrl-C's exception here directly.
    raise KeyboardInterrupt


def stop_on_sigterm() -> None:
    """Make SIGTERM (a scheduler's cancel, `kill`) unwind like Ctrl-C: files closed, tracker
    finished, resume command printed, whatever SIGINT's inherited disposition is. SIGINT itself
    keeps the disposition it was started with (a background job of a script ignores it, as the
    shell intends). Only the main thread may install handlers; elsewhere this does nothing."""
    try:
        signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:
        pass


SWEEP_GRACE_S = 60.0  # how long a parallel sweep's workers get to stop before the parent kills them


def forward_sigterm_to_workers(grace_s: float = SWEEP_GRACE_S) -> None:
    """For the parent of a parallel sweep (Hydra's joblib launcher), whose jobs run in worker processes.

    Why: a SIGTERM to the parent alone (`kill PID`) used to end the parent at once and leave its
    workers running their jobs to the end, an hour or more for a MiniLM job, still writing to the run
    directories that a resume would take. Now the parent passes the signal to its workers. Each stops
    like a single job (`stop_on_sigterm`: last checkpoint kept, resume line printed), and their
    SystemExit(143) ends the sweep. A second SIGTERM, or `grace_s` without the sweep ending, raises
    KeyboardInterrupt in the parent: joblib then kills the workers. With no worker processes (the basic
    launcher runs each job in this process, which installs `stop_on_sigterm` itself) the parent stops
    as before. Only the main thread may install handlers; elsewhere this does nothing."""
    import multiprocessing
    import threading

    def on_sigterm(signum: int, frame: FrameType | None) -> None:
        workers = multiprocessing.active_children()
        if not workers:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
            return
        if _signal_seen:  # the second: stop the parent as a single job stops
            _on_sigterm(signum, frame)
            return
        _signal_seen.append("SIGTERM")
        for w in workers:
            if w.pid is not None:
                try:
                    os.kill(w.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        timer = threading.Timer(grace_s, os.kill, (os.getpid(), signal.SIGTERM))
        timer.daemon = True
        timer.start()

    try:
        signal.signal(signal.SIGTERM, on_sigterm)
    except ValueError:
        pass


def quiet_abandoned_coroutines() -> None:
    """After an interrupt, say nothing of the coroutines it left unawaited.

    Why: a SIGTERM to a job whose SIGINT is ignored (a script's background job) raises
    KeyboardInterrupt wherever the main thread is, possibly between a coroutine's creation and its
    scheduling (in asyncio's or a client library's code). Python then printed "coroutine '...' was
    never awaited" at exit, after the resume command, where a script reading the last line for it found
    the warning instead (seen once in CI, tests/test_run_lifecycle.py). That work was abandoned on
    purpose and the interrupt line already says so; any other warning still prints."""
    warnings.filterwarnings("ignore", r"coroutine '.*' was never awaited", RuntimeWarning)


def interrupted_by() -> str:
    """The signal behind a KeyboardInterrupt: SIGTERM when one came, else SIGINT."""
    return "SIGTERM" if _signal_seen else "SIGINT"
