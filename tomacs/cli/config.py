"""Read-only commands on the config: `tomacs show-config`, `tomacs list`, `tomacs tables`. They use the
compose API, never `hydra.main`."""

from __future__ import annotations

import typer
from rich.markup import escape
from rich.table import Table

from tomacs.cli.common import console, fail, wide
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
    """List the config groups and their options, and the sim backbone's profiles (paper, shipped and
    your own) with their source and held-out score."""
    table = Table(title="tomacs config groups (choose with GROUP=OPTION)")
    table.add_column("group", style="bold")
    table.add_column("options")
    from tomacs.config import DecisionMode, group_defaults, method_budgets, shipped_config
    from tomacs.launch.table_sweeps import table_names

    defaults = group_defaults()
    rows = dict(group_options())
    rows["decision"] = [d.value for d in DecisionMode]  # a top-level key, listed as it is chosen the same way
    defaults["decision"] = str(shipped_config()["decision"])
    own: dict[str, list[str]] = {}  # train option -> the methods that choose it for themselves
    for method, budget in method_budgets().items():
        own.setdefault(budget, []).append(method)
    for group, opts in rows.items():
        shown = [f"[green]{o}[/] (default)" if o == defaults.get(group) else o for o in opts]
        if group == "train":
            mark = {o: f" (default of {', '.join(own[o])})" for o in own}
            shown = [s + mark.get(o, "") for s, o in zip(shown, opts, strict=True)]
        table.add_row(group, ", ".join(shown))
    table.add_row(
        "table", ", ".join(table_names()) + "  [dim](a sweep: tomacs train table=NAME; see tomacs tables)[/]"
    )
    console.print(table)
    wide(170).print(profiles_table())


def _ll(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def profiles_table() -> Table:
    """`backbone.profile=NAME`'s choices, in resolution order: paper, shipped, user (the profile store).
    Reads the files' heads only (tomacs.sim.profiles.list_profiles): no fit."""
    from tomacs.sim.profiles import list_profiles, store_dir

    t = Table(
        title="sim profiles (backbone=sim backbone.profile=NAME)",
        caption="held out: the questions a profile was not fitted to (30 %, split seed 0 unless its "
        "provenance says otherwise); log-lik per honest answer, higher is better, of the fitted profile "
        "(red: not above both others), of keeping the previous answer and of the paper profile mmlu. user: "
        f"the profile store {store_dir()} (fit one: tomacs sim fit-episodes PATH --name NAME)",
    )
    for col, kw in (
        ("profile", {"style": "bold"}),
        ("kind", {}),
        ("source", {}),
        ("fitted on\ndebates/questions", {"justify": "right"}),
        ("held out\ncells inside", {"justify": "right"}),
        ("log-lik\nfitted", {"justify": "right"}),
        ("log-lik\nkeep previous", {"justify": "right"}),
        ("log-lik\npaper", {"justify": "right"}),
    ):
        t.add_column(col, **kw)  # type: ignore[arg-type]
    for e in list_profiles():
        fitted_on = "-" if e.debates_fit is None else f"{e.debates_fit}/{e.questions_fit}"
        cells = "-" if e.cells_total is None else f"{e.cells_inside}/{e.cells_total}"
        source = escape(e.source) + (f" [yellow]({escape(e.note)})[/]" if e.note else "")
        fitted, keep, paper = (e.loglik.get(k) for k in ("fitted", "keep_previous", "paper"))
        beaten = fitted is not None and any(b is not None and b >= fitted for b in (keep, paper))
        t.add_row(
            e.name,
            e.kind,
            source,
            fitted_on,
            cells,
            f"[red]{_ll(fitted)}[/]" if beaten else _ll(fitted),
            _ll(keep),
            _ll(paper),
        )
    return t


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
