"""The `tomacs` command.

Jobs (train, evaluate) go through `hydra.main`, so multirun, launchers and output directories
behave as Hydra users expect; before that, every override is composed once so a typo fails in
one line with the valid choices instead of a traceback. Read-only commands use the compose API.
"""

from __future__ import annotations

import os
import sys


def _offline_env() -> None:
    """Set before any heavy import: nothing may hang or phone home for lack of internet."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_MODE", "PRODUCTION")
    os.environ.setdefault("WANDB_MODE", "offline")
    os.environ.setdefault("WANDB_ERROR_REPORTING", "false")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if os.environ.get("TOMACS_ONLINE", "") not in ("1", "true", "True"):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


_offline_env()

import typer  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from tomacs.config import ConfigError, check_overrides, compose, group_options  # noqa: E402

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="tomacs: train and compare communication topologies for multi-round LLM multi-agent systems.",
)
console = Console()
err = Console(stderr=True)
_EXTRA = {"allow_extra_args": True, "ignore_unknown_options": True}


def _fail(msg: str, code: int = 2) -> None:
    err.print(f"[bold red]error:[/] {msg}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def _launch(mode: str, overrides: list[str], multirun: bool) -> None:
    overrides = list(overrides or [])
    if any(o.startswith("mode=") for o in overrides):
        _fail("'mode' is set by the command; use `tomacs train` or `tomacs evaluate`")
    try:
        check_overrides(overrides, multirun)
    except ConfigError as exc:
        _fail(str(exc))
    from tomacs.hydra_app import hydra_entry

    sys.argv = ["tomacs", *(["--multirun"] if multirun else []), *overrides, f"mode={mode}"]
    hydra_entry()


@app.command(context_settings=_EXTRA)
def train(
    ctx: typer.Context,
    multirun: bool = typer.Option(False, "--multirun", "-m", help="Hydra multirun: sweep over comma lists."),
) -> None:
    """Train the method (if it learns) then evaluate it. OVERRIDES are Hydra overrides, e.g.
    `method=complete attack=gt50 benchmark=synthetic`."""
    _launch("train", ctx.args, multirun)


@app.command(context_settings=_EXTRA)
def evaluate(
    ctx: typer.Context,
    multirun: bool = typer.Option(False, "--multirun", "-m", help="Hydra multirun: sweep over comma lists."),
) -> None:
    """Evaluate without training (static methods, or a learned one with checkpoint=PATH)."""
    _launch("evaluate", ctx.args, multirun)


@app.command("show-config", context_settings=_EXTRA)
def show_config(ctx: typer.Context) -> None:
    """Print the composed config for the given overrides."""
    from omegaconf import OmegaConf

    try:
        cfg = compose(list(ctx.args))
    except ConfigError as exc:
        _fail(str(exc))
    console.print(OmegaConf.to_yaml(cfg), highlight=False, markup=False)


@app.command("list")
def list_options() -> None:
    """List the config groups and their options."""
    table = Table(title="tomacs config groups (choose with GROUP=OPTION)")
    table.add_column("group", style="bold")
    table.add_column("options")
    defaults = {
        "benchmark": "synthetic",
        "method": "complete",
        "attack": "none",
        "budget": "none",
        "backbone": "sim",
        "device": "auto",
        "logger": "none",
    }
    for group, opts in group_options().items():
        shown = [f"[green]{o}[/] (default)" if o == defaults.get(group) else o for o in opts]
        table.add_row(group, ", ".join(shown))
    console.print(table)


@app.command()
def calibrate(
    profile: list[str] = typer.Option(None, "--profile", "-p", help="Profiles to fit (default: all five)."),
    trials: int = typer.Option(2000, help="Simulated trials per cell for the check."),
    seed: int = typer.Option(0, help="Seed of the common random numbers."),
    write: bool = typer.Option(False, "--write", help="Write fitted values into conf/backbone/sim.yaml."),
    check: bool = typer.Option(False, "--check", help="Only simulate with the stored values; no fit."),
) -> None:
    """Fit the simulator to TodyComm Tables 7-8 and print simulated vs paper, cell by cell."""
    from tomacs import calibrate as cal

    profiles = list(profile) if profile else None
    if check:
        rows = cal.stored_rows(trials=trials, seed=seed)
        if profiles:
            rows = [r for r in rows if r["profile"] in profiles]
    else:
        rows = cal.calibrate(profiles, trials=trials, seed=seed, write=write)
    console.print(cal.format_report(rows), highlight=False, markup=False)


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        err.print("interrupted; rerun with the same hydra.run.dir to resume")
        raise SystemExit(130) from None


if __name__ == "__main__":
    main()
