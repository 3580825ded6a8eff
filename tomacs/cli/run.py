"""`tomacs train` and `tomacs evaluate`. A single run is composed once, here, so a typo fails in one line
with the valid choices instead of a traceback, and Hydra runs that config (launch.hydra_app.run_composed);
a sweep goes through `hydra.main`, after every value of every override is composed once the same way."""

from __future__ import annotations

import os
import sys

import typer
from omegaconf import DictConfig

from tomacs.cli.common import MULTIRUN_HELP, err, fail
from tomacs.config import (
    ConfigError,
    check_overrides,
    compose,
    quote_path_values,
    reject_sweep_without_multirun,
)


def train(
    ctx: typer.Context,
    multirun: bool = typer.Option(False, "--multirun", "-m", help=MULTIRUN_HELP),
) -> None:
    """Train the method (if it learns) then evaluate it. OVERRIDES are Hydra overrides, e.g.
    `method=complete attack=gt50 benchmark=synthetic`."""
    launch("train", ctx.args, multirun)


def evaluate(
    ctx: typer.Context,
    multirun: bool = typer.Option(False, "--multirun", "-m", help=MULTIRUN_HELP),
) -> None:
    """Evaluate without training (static methods, or a learned one with checkpoint=PATH; checkpoint=untrained
    scores its untrained policy, marked as such)."""
    launch("evaluate", ctx.args, multirun)


def launch(mode: str, overrides: list[str], multirun: bool) -> None:
    overrides = quote_path_values(list(overrides or []))  # checkpoint=<a sweep dir with = and ,>
    if any(o.startswith(("+table=", "table=")) for o in overrides):
        # a paper table is a sweep (its config sets hydra.mode=MULTIRUN); `table=` is accepted too
        overrides = [f"+{o}" if o.startswith("table=") else o for o in overrides]
        multirun = True
        from tomacs.launch.table_sweeps import validate_table

        name = next(o.split("=", 1)[1] for o in overrides if o.startswith("+table="))
        try:
            n_jobs = validate_table(name, [o for o in overrides if not o.startswith("+table=")])
        except ConfigError as exc:
            fail(str(exc))
        err.print(f"table {name}: {n_jobs} jobs", highlight=False)
    if any(o.startswith("mode=") for o in overrides):
        fail("'mode' is set by the command; use `tomacs train` or `tomacs evaluate`")
    argv = [*overrides, f"mode={mode}", *_logs_to_stderr(overrides)]
    try:
        # a single run is composed here once, whole (Hydra's node too), and Hydra runs that config; a
        # sweep's values are each composed here for the one-line errors, then by the sweeper, per job
        composed = None if multirun else compose_job(overrides, argv, mode)
        if multirun:
            check_overrides(overrides, multirun, mode)
    except ConfigError as exc:
        fail(str(exc))
    _check_output_dir(overrides, multirun)
    _hold_run_dir(overrides, multirun)
    if composed is not None:
        from tomacs.launch.hydra_app import run_composed

        run_composed(composed)
        return
    from tomacs.job.rundir import forward_sigterm_to_workers, interrupted_by, quiet_abandoned_coroutines
    from tomacs.launch.hydra_app import hydra_entry

    sys.argv = ["tomacs", "--multirun", *argv]
    forward_sigterm_to_workers()
    try:
        hydra_entry()
    except KeyboardInterrupt:  # Ctrl-C, a second SIGTERM, or workers that did not stop in time
        quiet_abandoned_coroutines()
        what = interrupted_by()
        err.print(
            f"interrupted ({what}): the sweep's workers were stopped; finished jobs and epochs are kept, "
            "and the same command with the same hydra.sweep.dir resumes it",
            highlight=False,
        )
        raise SystemExit(143 if what == "SIGTERM" else 130) from None


def compose_job(overrides: list[str], argv: list[str], mode: str) -> DictConfig:
    """The single run's whole config (Hydra's node included), composed and validated once; the job
    name is the one `hydra.main` gives hydra_entry (its log file is <run dir>/hydra_app.log)."""
    reject_sweep_without_multirun(overrides, mode)
    return compose([*argv, "hydra.mode=RUN"], job_name="hydra_app")  # hydra.main records it so too


def _logs_to_stderr(overrides: list[str]) -> list[str]:
    """Hydra logs to stdout (its launcher's "Launching N jobs", a job's log records); a job's stdout is
    its results (summary table, results path, a sweep's table), so `> out.txt` keeps only those. Left
    alone where the command chooses its own logging."""
    if any("hydra_logging" in o or "job_logging" in o for o in overrides):
        return []
    return [
        f"hydra.{key}.handlers.console.stream='ext://sys.stderr'" for key in ("hydra_logging", "job_logging")
    ]


def _hold_run_dir(overrides: list[str], multirun: bool) -> None:
    """Record the command as typed (for the resume line and the lock's holder), and take a named
    run directory before Hydra writes its .hydra/ files there: a second job in a held directory
    then fails before touching anything of the first's."""
    import json
    from pathlib import Path

    from tomacs.job.rundir import ARGV_ENV, RunDirBusy, acquire

    os.environ[ARGV_ENV] = json.dumps(sys.argv)
    run_dir = next((o.split("=", 1)[1] for o in overrides if o.startswith("hydra.run.dir=")), None)
    if multirun or not run_dir or run_dir[:1] in "'\"" or "${" in run_dir:
        return  # the job takes its directory itself once Hydra has resolved it
    try:
        acquire(Path(run_dir))
    except RunDirBusy as exc:
        fail(str(exc))


def _check_output_dir(overrides: list[str], multirun: bool) -> None:
    """Hydra creates the job directory before any tomacs code runs and answers a read-only one
    with a traceback; check it here (the part before any ${...} interpolation) instead."""
    from pathlib import Path

    from tomacs.paths import unwritable_reason

    key = "hydra.sweep.dir=" if multirun else "hydra.run.dir="
    given = next((o.split("=", 1)[1] for o in overrides if o.lstrip("+").startswith(key)), None)
    where = Path(given.split("${", 1)[0] or ".") if given else Path("outputs")
    why = unwritable_reason(where)
    if why:
        fail(f"output directory {given or where}: {why}; pass a writable {key}DIR")
