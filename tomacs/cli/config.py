"""Read-only commands on the config: `tomacs show-config`, `tomacs list`, `tomacs tables`. They use the
compose API, never `hydra.main`."""

from __future__ import annotations

import typer
from rich.table import Table

from tomacs.cli.common import console, fail
from tomacs.config import ConfigError, compose, group_options, reject_flags


def show_config(ctx: typer.Context) -> None:
    """Print the composed config for the given overrides."""
    from omegaconf import OmegaConf

    try:
        cfg = compose(list(ctx.args))
    except ConfigError as exc:
        fail(str(exc))
    console.print(OmegaConf.to_yaml(cfg), highlight=False, markup=False)


def list_options() -> None:
    """List the config groups and their options."""
    table = Table(title="tomacs config groups (choose with GROUP=OPTION)")
    table.add_column("group", style="bold")
    table.add_column("options")
    from tomacs.config import DecisionMode, group_defaults, shipped_config
    from tomacs.launch.table_sweeps import table_names

    defaults = group_defaults()
    rows = dict(group_options())
    rows["decision"] = [d.value for d in DecisionMode]  # a top-level key, listed as it is chosen the same way
    defaults["decision"] = str(shipped_config()["decision"])
    for group, opts in rows.items():
        shown = [f"[green]{o}[/] (default)" if o == defaults.get(group) else o for o in opts]
        table.add_row(group, ", ".join(shown))
    table.add_row(
        "table", ", ".join(table_names()) + "  [dim](a sweep: tomacs train table=NAME; see tomacs tables)[/]"
    )
    console.print(table)


def tables(
    ctx: typer.Context,
    check: bool = typer.Option(
        False, "--check", help="Also compose every value of every axis (slow: about 40 s for all tables)."
    ),
) -> None:
    """The paper tables that `tomacs train table=<name>` runs, with their job counts. OVERRIDES
    (e.g. seed=0 benchmark=mmlu) replace an axis; given any, they are checked like a launch would."""
    from tomacs.launch.table_sweeps import jobs, sweep_params, table_names, validate_table

    overrides = list(ctx.args or [])
    try:
        reject_flags(overrides)
    except ConfigError as exc:
        fail(str(exc))
    t = Table(title="paper tables (tomacs train table=NAME; overrides replace an axis)")
    t.add_column("table", style="bold")
    t.add_column("jobs", justify="right")
    t.add_column("axes")
    for name in table_names():
        try:  # counting reads the yaml only; composing (Hydra, ~0.3 s per config) only when asked
            n = str(validate_table(name, overrides) if check or overrides else len(jobs(name, overrides)))
        except ConfigError as exc:
            n = f"error: {exc}"
        t.add_row(name, n, "; ".join(f"{k}={v}" for k, v in sweep_params(name).items()))
    console.print(t)
