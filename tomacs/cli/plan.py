"""`tomacs plan`: what a train or evaluate command line will cost, before any paid call (a dry run of
the real executor, tomacs/launch/plan.py)."""

from __future__ import annotations

import sys

import typer
from rich.console import Console
from rich.table import Table

from tomacs.cli.common import MULTIRUN_HELP, console, err, fail
from tomacs.config import ConfigError, compose, reject_flags


def _usd(x: float | None) -> str:
    return "?" if x is None or x != x else f"${x:,.2f}" if x >= 0.01 or x == 0 else f"${x:.4f}"


def _dur(s: float | None) -> str:
    from tomacs.job.progress import _hms

    return "?" if s is None else _hms(s)


def _plan_jobs(
    overrides: list[str], multirun: bool, mode: str, sample: int | None, lat: float, as_json: bool
) -> list:
    """Dry-run every job of the command line (tomacs.launch.plan)."""
    import dataclasses
    from typing import Any

    from tomacs.launch.plan import cached_rows, other_budgets, plan_job, sweep_jobs
    from tomacs.launch.spec import job_spec

    reject_flags(overrides)
    jobs = sweep_jobs(overrides, multirun)
    k = sample if sample is not None else (None if len(jobs) <= 4 else 32)
    plans = []
    shared: dict[tuple[str, ...], Any] = {}
    # a sweep's jobs are named by what varies between them
    values: dict[str, set[str]] = {}
    for job in jobs:
        for o in job:
            values.setdefault(o.lstrip("+").split("=", 1)[0], set()).add(o.split("=", 1)[-1])
    varying = {key for key, v in values.items() if len(v) > 1}
    for i, job in enumerate(jobs):
        if len(jobs) > 1 and not as_json:
            err.print(f"planning job {i + 1}/{len(jobs)}", highlight=False, end="\r")
        spec = job_spec(compose([*job, f"mode={mode}"]))
        name = ",".join(o for o in job if o.lstrip("+").split("=", 1)[0] in varying) if len(jobs) > 1 else ""
        # seeds of a sweep have the same structure: with nothing of the model cached, one dry run
        # serves them all (a seed's own cache hits need its own)
        twin = tuple(o for o in job if not o.startswith("seed="))
        if twin in shared and cached_rows(spec) == 0:
            first = shared[twin]
            note = "seeds after the first reuse its dry run (nothing of the model is cached)"
            plans.append(dataclasses.replace(first, name=name, notes=[*first.notes, note]))
            continue
        p = plan_job(spec, mode, sample=k, name=name)
        other_budgets(p, spec, lat)
        shared[twin] = p
        plans.append(p)
    return plans


def plan(
    ctx: typer.Context,
    multirun: bool = typer.Option(False, "--multirun", "-m", help=MULTIRUN_HELP),
    latency: float = typer.Option(
        None,
        "--latency",
        help="Seconds per LLM call for the wall time (default 1.0; the cache records none; "
        "the simulator has none).",
    ),
    sample: int = typer.Option(
        None,
        "--sample",
        help="Questions dry-run per phase (at least a batch), scaled (default: all up to 4 jobs, else 32).",
    ),
    evaluate_only: bool = typer.Option(
        False, "--evaluate", help="Plan `tomacs evaluate` instead of `train`."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of tables."),
) -> None:
    """What `tomacs train` (or evaluate) with these OVERRIDES will cost, before any paid call: LLM calls
    by phase, tokens, dollars, replies already in the response cache and repeats within the job, texts
    to embed and wall time, per job and summed. A dry run of the real executor on a stand-in backbone
    (tomacs/launch/plan.py); makes no LLM call."""
    import json

    from rich.markup import escape

    from tomacs.launch.plan import DEFAULT_LATENCY_S, budget_totals

    overrides = list(ctx.args or [])
    mode = "evaluate" if evaluate_only else "train"
    if any(o.startswith("mode=") for o in overrides):
        fail("'mode' is set by the command; use --evaluate to plan `tomacs evaluate`")
    if latency is not None and (latency < 0 or latency != latency):
        fail("--latency must be >= 0 seconds")
    if sample is not None and sample < 1:
        fail("--sample must be >= 1")
    lat = DEFAULT_LATENCY_S if latency is None else latency
    import contextlib

    try:
        # libraries a dry run loads may print to stdout (transformers' W&B notice): keep stdout the plan's
        with contextlib.redirect_stdout(sys.stderr):
            plans = _plan_jobs(overrides, multirun, mode, sample, lat, as_json)
    except (ConfigError, FileNotFoundError, ValueError) as exc:
        fail(str(exc))
    totals = budget_totals(plans, lat)
    if as_json:
        out = {"jobs": [p.summary(lat) for p in plans], "budgets": totals, "latency_s": lat}
        print(json.dumps(out, indent=1, default=str))
        return
    llm = [p for p in plans if not p.simulated]
    per_call = f"latency {lat:g} s per call" if llm else "simulator: no latency per call"
    t = Table(title=f"tomacs plan: {len(plans)} job(s), {mode}; {per_call}")
    for col in (
        "job",
        "calls train/val/test/dec",
        "calls (bound)",
        "in cache",
        "repeats",
        "tokens prompt/compl.",
        "USD (bound)",
        "embed",
        "wall",
    ):
        t.add_column(col, justify="left" if col == "job" else "right")
    tot_calls = tot_bound = tot_cached = tot_repeats = tot_p = tot_c = 0
    tot_usd, tot_usd_bound, tot_wall, tot_emb = 0.0, 0.0, 0.0, 0
    unknown_price = False
    for p in plans:
        s = p.summary(lat)
        c = s["calls"]
        emb = "-" if not s["embed_texts"] else f"{s['embed_texts']:,} {p.embed_kind} ({_dur(s['embed_s'])})"
        at_min = (
            f", {_usd(s['usd_at_patience_min'])} if it stops at {p.epochs_min}"
            if p.epochs_min < p.epochs
            else ""
        )
        name = p.name + (f" [train={p.budget}: {p.epochs} epochs{at_min}]" if p.learned else "")
        t.add_row(
            escape(name),
            f"{c['train']:,}/{c['validation']:,}/{c['test']:,}/{c['decision']:,}",
            f"{s['calls_total']:,} ({s['calls_bound']:,})",
            f"{s['cached']:,}",
            f"{s['repeats']:,}",
            f"{s['prompt_tokens']:,}/{s['completion_tokens']:,}",
            f"{_usd(s['usd'])} ({_usd(s['usd_bound'])})",
            emb,
            _dur(s["wall_s"]),
        )
        unknown_price |= s["usd"] is None
        tot_calls += s["calls_total"]
        tot_bound += s["calls_bound"]
        tot_cached += s["cached"]
        tot_repeats += s["repeats"]
        tot_p += s["prompt_tokens"]
        tot_c += s["completion_tokens"]
        tot_usd += s["usd"] or 0.0
        tot_usd_bound += s["usd_bound"] or 0.0
        tot_wall += s["wall_s"] or 0.0
        tot_emb += s["embed_texts"]
    if len(plans) > 1:
        t.add_row(
            "[bold]sweep total[/]",
            "",
            f"{tot_calls:,} ({tot_bound:,})",
            f"{tot_cached:,}",
            f"{tot_repeats:,}",
            f"{tot_p:,}/{tot_c:,}",
            f"{_usd(tot_usd)} ({_usd(tot_usd_bound)})",
            f"{tot_emb:,}",
            _dur(tot_wall),
        )
    out_console = console if console.is_terminal else Console(width=240)  # a log: one row per job
    out_console.print(t)
    for b, v in totals.items():
        out_console.print(
            f"at train={b}: {v['calls']:,.0f} calls, {_usd(v['usd'])} (bound {_usd(v['usd_bound'])}), "
            f"wall {_dur(v['wall_s'])} (jobs in a row)",
            highlight=False,
        )
    notes = sorted({n for p in plans for n in p.notes} | {f"scaled: {p.sampled}" for p in plans if p.sampled})
    notes.append(
        "bound = every agent speaks in every round and every epoch runs; "
        "'if it stops at N': the patience minimum (no improvement after the first epoch)"
    )
    if llm:
        notes.append(
            "in cache = replies already in the response cache; repeats = requests that repeat an earlier "
            "one of the same job (paid once, then served by the cache); neither is paid"
        )
    if latency is None and llm:
        notes.append(f"latency {lat:g} s assumed: the response cache records no latency; give --latency S")
    if unknown_price:
        notes.append(
            "no price known for this model: set backbone.price={input_per_mtok: X, output_per_mtok: Y}"
        )
    for n in notes:
        out_console.print(f"note: {n}", highlight=False, markup=False, soft_wrap=True)
