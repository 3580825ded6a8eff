"""Shared test setup: offline, data location, small configs."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tomacs.testing.browser import TINY_SIM_RUN

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("WANDB_MODE", "offline")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# No terminal size from outside: pytest-xdist's workers start with COLUMNS=80 LINES=24, and rich's
# consoles (tomacs.cli.common, made at import) would keep that width for good, while a test that sets
# COLUMNS for one CliRunner call expects it to count. Tests that need a width set it themselves.
os.environ.pop("COLUMNS", None)
os.environ.pop("LINES", None)

REPO = Path(__file__).resolve().parents[1]
_default_data = REPO.parent / "shared" / "data"
if "TOMACS_DATA" not in os.environ and _default_data.is_dir():
    os.environ["TOMACS_DATA"] = str(_default_data)

# The longest test files of `make test` (seconds on 2 idle cores, 2026-11-28: local_llm 150,
# run_lifecycle 115, tables_report 114, one_line_errors 59, slurm 57, sim_episodes 56, llm_run 45, ...).
# Under pytest-xdist (`--dist loadfile --no-loadscope-reorder`) files are handed to the workers in
# collection order, so these go first: a long file started last would leave the other worker idle
# for minutes. Order only (no test depends on it); a serial run keeps pytest's order.
_LONGEST_FIRST = (
    "test_local_llm.py",
    "test_run_lifecycle.py",
    "test_tables_report.py",
    "test_one_line_errors.py",
    "test_slurm.py",
    "test_sim_episodes.py",
    "test_llm_run.py",
    "test_arch_golden.py",
    "test_todycomm_learning.py",
    "test_spend_run.py",
    "test_gsafeguard.py",
    "test_method_contract.py",
    "test_calibration.py",
    "test_cli.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("PYTEST_XDIST_WORKER"):
        rank = {name: i for i, name in enumerate(_LONGEST_FIRST)}
        items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: the rest keep their order


@pytest.fixture
def data_dir() -> Path:
    d = os.environ.get("TOMACS_DATA")
    if not d or not Path(d).is_dir():
        pytest.skip("real benchmark copies not found (set TOMACS_DATA to shared/data)")
    return Path(d)


@dataclass
class Ran:
    """What a `tomacs` command did, as subprocess.CompletedProcess names it."""

    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def tomacs_here(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Ran]]:
    """`tomacs ARGS` in this process (typer's CliRunner): no interpreter start and imports per call
    (about 1.5 s each on 2 idle cores). For tests of what a command does, not of the console script
    or of what a whole process prints (warnings once per process, import-time logging, signals): those
    keep a subprocess. An exception other than the command's exit is raised with its traceback. What
    the CLI sets for Hydra (sys.argv, the typed command), the loggers Hydra configures and the
    SIGINT/SIGTERM handlers a job installs are put back after the test."""
    import logging
    import signal
    import sys

    from typer.testing import CliRunner

    from tomacs.cli import app
    from tomacs.job.rundir import ARGV_ENV

    monkeypatch.setattr(sys, "argv", list(sys.argv))
    monkeypatch.setenv(ARGV_ENV, "")
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    loggers = [
        logging.getLogger(),
        *(v for v in logging.Logger.manager.loggerDict.values() if isinstance(v, logging.Logger)),
    ]
    saved = {lg: (list(lg.handlers), lg.level, lg.propagate, lg.disabled) for lg in loggers}

    def run(*args: str) -> Ran:
        res = CliRunner().invoke(app, list(args))
        if res.exception is not None and not isinstance(res.exception, SystemExit):
            raise res.exception
        return Ran(res.exit_code, res.stdout, res.stderr)

    yield run
    for s, h in handlers.items():
        signal.signal(s, h)
    for lg in [logging.getLogger(), *logging.Logger.manager.loggerDict.values()]:
        if not isinstance(lg, logging.Logger):
            continue
        before = saved.get(lg, ([], logging.NOTSET, True, False))
        for h in lg.handlers:
            if h not in before[0]:
                h.close()
        lg.handlers[:] = before[0]
        lg.level, lg.propagate, lg.disabled = before[1:]


@pytest.fixture(scope="module")
def view_sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A sweep of two tiny sim jobs (about 5 s on 2 cores): TodyComm trained (credits, curves) in
    `todycomm/` and a complete graph evaluated in `complete/` (tests/test_view.py, test_view_browser.py)."""
    from tomacs.config import compose
    from tomacs.launch.run import run_job

    root = tmp_path_factory.mktemp("sweep")
    run_job(compose(["method=todycomm", *TINY_SIM_RUN]), "train", root / "todycomm")
    run_job(compose(["method=complete", *TINY_SIM_RUN]), "evaluate", root / "complete")
    return root
