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

from tomacs.config import (  # noqa: E402
    ConfigError,
    check_overrides,
    compose,
    group_options,
    quote_path_values,
    reject_flags,
)

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
            _fail(str(exc))
        err.print(f"table {name}: {n_jobs} jobs", highlight=False)
    if any(o.startswith("mode=") for o in overrides):
        _fail("'mode' is set by the command; use `tomacs train` or `tomacs evaluate`")
    try:
        check_overrides(overrides, multirun, mode)
    except ConfigError as exc:
        _fail(str(exc))
    _check_output_dir(overrides, multirun)
    _hold_run_dir(overrides, multirun)
    from tomacs.launch.hydra_app import hydra_entry

    sys.argv = ["tomacs", *(["--multirun"] if multirun else []), *overrides, f"mode={mode}"]
    if not multirun:
        hydra_entry()
        return
    from tomacs.job.rundir import forward_sigterm_to_workers, interrupted_by

    forward_sigterm_to_workers()
    try:
        hydra_entry()
    except KeyboardInterrupt:  # Ctrl-C, a second SIGTERM, or workers that did not stop in time
        what = interrupted_by()
        err.print(
            f"interrupted ({what}): the sweep's workers were stopped; finished jobs and epochs are kept, "
            "and the same command with the same hydra.sweep.dir resumes it",
            highlight=False,
        )
        raise SystemExit(143 if what == "SIGTERM" else 130) from None


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
        _fail(str(exc))


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
        _fail(f"output directory {given or where}: {why}; pass a writable {key}DIR")


def _check_out_file(path: object, fix: str = "choose another --out") -> None:
    """Fail before the work, not after it, when the result file could not be written."""
    from pathlib import Path

    from tomacs.paths import unwritable_reason

    why = unwritable_reason(Path(str(path)).parent)
    if why:
        _fail(f"cannot write {path}: {why}; {fix}")


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
    """Evaluate without training (static methods, or a learned one with checkpoint=PATH; checkpoint=untrained
    scores its untrained policy, marked as such)."""
    _launch("evaluate", ctx.args, multirun)


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
        cfg = compose([*job, f"mode={mode}"])
        name = ",".join(o for o in job if o.lstrip("+").split("=", 1)[0] in varying) if len(jobs) > 1 else ""
        # seeds of a sweep have the same structure: with nothing of the model cached, one dry run
        # serves them all (a seed's own cache hits need its own)
        twin = tuple(o for o in job if not o.startswith("seed="))
        if twin in shared and cached_rows(cfg) == 0:
            first = shared[twin]
            note = "seeds after the first reuse its dry run (nothing of the model is cached)"
            plans.append(dataclasses.replace(first, name=name, notes=[*first.notes, note]))
            continue
        p = plan_job(cfg, mode, sample=k, name=name)
        other_budgets(p, cfg, lat)
        shared[twin] = p
        plans.append(p)
    return plans


@app.command(context_settings=_EXTRA)
def plan(
    ctx: typer.Context,
    multirun: bool = typer.Option(False, "--multirun", "-m", help="Hydra multirun: sweep over comma lists."),
    latency: float = typer.Option(
        None,
        "--latency",
        help="Seconds per LLM call for the wall time (default 1.0; the cache records none).",
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
    by phase, tokens, dollars, cached replies, texts to embed and wall time, per job and summed. A dry
    run of the real executor on a stand-in backbone (tomacs/launch/plan.py); makes no LLM call."""
    import json

    from rich.markup import escape

    from tomacs.launch.plan import DEFAULT_LATENCY_S, budget_totals

    overrides = list(ctx.args or [])
    mode = "evaluate" if evaluate_only else "train"
    if any(o.startswith("mode=") for o in overrides):
        _fail("'mode' is set by the command; use --evaluate to plan `tomacs evaluate`")
    if latency is not None and latency <= 0:
        _fail("--latency must be > 0 seconds")
    if sample is not None and sample < 1:
        _fail("--sample must be >= 1")
    lat = DEFAULT_LATENCY_S if latency is None else latency
    import contextlib

    try:
        # libraries a dry run loads may print to stdout (transformers' W&B notice): keep stdout the plan's
        with contextlib.redirect_stdout(sys.stderr):
            plans = _plan_jobs(overrides, multirun, mode, sample, lat, as_json)
    except (ConfigError, FileNotFoundError, ValueError) as exc:
        _fail(str(exc))
    totals = budget_totals(plans, lat)
    if as_json:
        out = {"jobs": [p.summary(lat) for p in plans], "budgets": totals, "latency_s": lat}
        print(json.dumps(out, indent=1, default=str))
        return
    t = Table(title=f"tomacs plan: {len(plans)} job(s), {mode}; latency {lat:g} s per call")
    for col in (
        "job",
        "calls train/val/test/dec",
        "calls (bound)",
        "cached",
        "tokens prompt/compl.",
        "USD (bound)",
        "embed",
        "wall",
    ):
        t.add_column(col, justify="left" if col == "job" else "right")
    tot_calls = tot_bound = tot_cached = tot_p = tot_c = 0
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
            f"{s['prompt_tokens']:,}/{s['completion_tokens']:,}",
            f"{_usd(s['usd'])} ({_usd(s['usd_bound'])})",
            emb,
            _dur(s["wall_s"]),
        )
        unknown_price |= s["usd"] is None
        tot_calls += s["calls_total"]
        tot_bound += s["calls_bound"]
        tot_cached += s["cached"]
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
            f"{tot_p:,}/{tot_c:,}",
            f"{_usd(tot_usd)} ({_usd(tot_usd_bound)})",
            f"{tot_emb:,}",
            _dur(tot_wall),
        )
    out_console = console if console.is_terminal else Console(width=200)
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
    if latency is None:
        notes.append(f"latency {lat:g} s assumed: the response cache records no latency; give --latency S")
    if unknown_price:
        notes.append(
            "no price known for this model: set backbone.price={input_per_mtok: X, output_per_mtok: Y}"
        )
    for n in notes:
        out_console.print(f"note: {n}", highlight=False, markup=False, soft_wrap=True)


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


@app.command(context_settings=_EXTRA)
def calibrate(
    ctx: typer.Context,
    profile: list[str] = typer.Option(None, "--profile", "-p", help="Profiles to fit (default: all five)."),
    trials: int = typer.Option(
        10000, help="Sampled trials per Tables 7-8 cell for the check (SE about 0.4 points)."
    ),
    seed: int = typer.Option(0, help="Seed of the common random numbers (--diagnose: the run's seed)."),
    write: bool = typer.Option(False, "--write", help="Write fitted values into conf/backbone/sim.yaml."),
    check: bool = typer.Option(
        False,
        "--check",
        help="Only simulate with the stored values; no fit. Prints the fitted cells (Tables 7-8, "
        "Table 2 Complete) and, labelled held out, Table 2's Random rows beside the paper.",
    ),
    jobs: int = typer.Option(2, "--jobs", help="Processes for the fit (one profile each)."),
    diagnose: bool = typer.Option(
        False,
        "--diagnose",
        help="Run multi-round debates on the sim backbone and take them apart: per-round accuracy, "
        "conformity, flips, the model's terms, ablations. Extra OVERRIDES compose as for `tomacs evaluate`.",
    ),
    benchmark: str = typer.Option(
        None, "--benchmark", "-b", help="--diagnose: comma list of benchmarks, or 'all' (default: mmlu)."
    ),
    method: str = typer.Option("complete", "--method", help="--diagnose: the method (a static topology)."),
    attack: str = typer.Option("gt50", "--attack", help="--diagnose: comma list of attack options."),
    size: int = typer.Option(153, "--size", help="--diagnose: test questions (eval.size)."),
    ablate: bool = typer.Option(True, "--ablate/--no-ablate", help="--diagnose: also run the ablations."),
    as_json: bool = typer.Option(
        False, "--json", help="--diagnose / --from-episodes: print JSON instead of tables."
    ),
    out: str = typer.Option(
        None, "--out", "-o", help="--diagnose / --from-episodes: also write the JSON to this file."
    ),
    from_episodes: list[str] = typer.Option(
        None,
        "--from-episodes",
        help="Fit a profile to real debates instead (episodes.jsonl, tomacs.debate/1 JSONL, MAD-Follower "
        "run folders); repeat the flag for more paths, or quote a glob.",
    ),
    name: str = typer.Option(
        None, "--name", help="--from-episodes: the profile's name (backbone.profile=NAME)."
    ),
    split: float = typer.Option(0.7, "--split", help="--from-episodes: share of QUESTIONS fitted (1 = all)."),
    split_seed: int = typer.Option(0, "--split-seed", help="--from-episodes: seed of the question split."),
    model: str = typer.Option(
        None, "--model", "--honest-model", help="--from-episodes: fit only the honest agents of this model."
    ),
    predict: list[str] = typer.Option(
        None,
        "--predict",
        help="--from-episodes: also score the fitted profile on these debates (repeatable).",
    ),
    draws: int = typer.Option(400, "--draws", help="--from-episodes: simulated replays per held-out debate."),
    by_benchmark: bool = typer.Option(
        True,
        "--by-benchmark/--no-by-benchmark",
        help="--from-episodes: fit one accuracy per benchmark (meta.benchmark) instead of one in all.",
    ),
    by_sender: bool = typer.Option(
        True,
        "--by-sender/--no-by-sender",
        help="--from-episodes: fit one persuasion per adversary model instead of one in all.",
    ),
) -> None:
    """Fit the simulator to TodyComm Tables 7-8 and Table 2 Complete; print simulated vs paper, cell by cell.
    With --diagnose: break the simulator's multi-round debates down (tomacs/analysis/sim_debates.py).
    With --from-episodes: fit a profile to real debates and print how it predicts held-out questions."""
    from tomacs.sim import calibrate as cal

    if from_episodes:
        _calibrate_from_episodes(
            list(ctx.args or []),
            from_episodes,
            name,
            split,
            split_seed,
            model,
            list(predict or []),
            draws,
            seed,
            as_json,
            out,
            by_benchmark,
            by_sender,
        )
        return
    if predict or name:
        _fail("--name and --predict go with --from-episodes PATH")
    if diagnose:
        _calibrate_diagnose(list(ctx.args or []), benchmark, method, attack, size, seed, ablate, as_json, out)
        return
    if ctx.args:
        _fail(f"unexpected arguments {' '.join(ctx.args)} (overrides are accepted with --diagnose only)")
    profiles = list(profile) if profile else None
    if check:
        rows = cal.stored_rows(trials=trials, seed=seed)
        if profiles:
            rows = [r for r in rows if r["profile"] in profiles]
    else:
        rows = cal.calibrate(profiles, trials=trials, seed=seed, write=write, jobs=jobs)
    out_console = console if console.is_terminal else Console(width=170)  # no wrapping in a pipe
    out_console.print(cal.format_report(rows), highlight=False, markup=False)


def _calibrate_from_episodes(
    extra: list[str],
    paths: list[str],
    name: str | None,
    split: float,
    split_seed: int,
    model: str | None,
    predict: list[str],
    draws: int,
    seed: int,
    as_json: bool,
    out: str | None,
    by_benchmark: bool = True,
    by_sender: bool = True,
) -> None:
    """`tomacs calibrate --from-episodes`: fit, store, and print the held-out tables."""
    import json
    from pathlib import Path

    if extra:
        _fail(
            f"unexpected arguments {' '.join(extra)}: give one path per --from-episodes/--predict "
            "(repeat the flag), or quote a glob: --from-episodes 'runs/*_r3_*'"
        )
    if not name:
        _fail("--from-episodes needs --name NAME (the profile's name, used as backbone.profile=NAME)")
    if not 0.0 < split <= 1.0:
        _fail(f"--split must be in (0, 1], got {split}")
    if split >= 1.0 and not predict:
        _fail("--split 1 fits every question and leaves none held out: add --predict PATH to score it")
    if draws < 1:
        _fail("--draws must be >= 1")
    if out:
        _check_out_file(out)
    from tomacs.sim import from_episodes as fx
    from tomacs.sim import heldout as ho

    try:
        res = fx.run(
            paths,
            name,
            split,
            split_seed,
            model,
            predict,
            draws=draws,
            seed=seed,
            by_benchmark=by_benchmark,
            by_sender=by_sender,
        )
    except (FileNotFoundError, ValueError) as exc:
        _fail(str(exc))
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(json.dumps(res, indent=1), encoding="utf-8")
    if as_json:
        print(json.dumps(res, indent=1))
        return
    out_console = console if console.is_terminal else Console(width=170)
    fit = res["fit"]
    prof = {k: v for k, v in res["profile"].items() if k not in ("name", "decision_weight")}
    out_console.print(
        f"fitted {name} on {fit['debates']} debates ({fit['questions']} questions, "
        f"{fit['answers']} honest answers) in {fit['seconds']:.1f} s: "
        f"log-lik/answer {fit['loglik_per_answer']:.4f}"
        + ("" if fit["converged"] else " [yellow](optimiser did not report convergence)[/]"),
        highlight=False,
    )
    out_console.print("  " + ", ".join(f"{k}={v}" for k, v in prof.items()), highlight=False, markup=False)
    for key, label in (
        ("accuracy_by_benchmark", "accuracy per benchmark (stored accuracy: their question-weighted mean)"),
        ("persuasion_by_model", "persuasion per adversary model"),
    ):
        if fit.get(key):
            vals = ", ".join(f"{k}={v:.4g}" for k, v in fit[key].items())
            out_console.print(f"  {label}: {vals}", highlight=False, markup=False)
    for key, title in (("held_out", "held-out questions"), ("predict", "--predict")):
        if key in res:
            for t in ho.tables(res[key], title):
                out_console.print(t)
    console.print(
        f"profile: {res['path']}  (use: backbone=sim backbone.profile={name})",
        highlight=False,
        soft_wrap=True,
    )
    if out:
        console.print(f"results: {out}", highlight=False, soft_wrap=True)


def _calibrate_diagnose(
    overrides: list[str],
    benchmark: str | None,
    method: str,
    attack: str,
    size: int,
    seed: int,
    ablate: bool,
    as_json: bool,
    out: str | None,
) -> None:
    """`tomacs calibrate --diagnose`: one diagnosis per benchmark x attack, then a summary."""
    import json
    from pathlib import Path

    from tomacs.analysis.sim_debates import diagnose as run_diagnosis
    from tomacs.sim import diagnose as sd
    from tomacs.sim.model import PROFILE_NAMES

    if any(o.lstrip("+~").startswith(("hydra.", "hydra/", "mode=")) for o in overrides):
        _fail("hydra.* and mode overrides do not apply to `tomacs calibrate --diagnose`")
    if size < 1:
        _fail("--size must be >= 1")
    benches = [b.strip() for b in (benchmark or "mmlu").split(",") if b.strip()]
    if benches == ["all"]:
        benches = list(PROFILE_NAMES)
    attacks = [a.strip() for a in attack.split(",") if a.strip()]
    if out:
        _check_out_file(out)
    results = []
    # wide tables: in a pipe, do not squeeze them into rich's default 80 columns
    out_console = console if console.is_terminal else Console(width=170)
    try:
        for b in benches:
            for a in attacks:
                base = [
                    f"benchmark={b}",
                    f"method={method}",
                    f"attack={a}",
                    f"eval.size={size}",
                    f"seed={seed}",
                ]
                res = run_diagnosis(compose([*base, *overrides]), ablate=ablate)
                results.append(res)
                if not as_json:
                    for t in sd.tables(res):
                        out_console.print(t)
    except (ConfigError, FileNotFoundError, ValueError) as exc:
        _fail(str(exc))
    payload = {"analysis": "sim_diagnose", "runs": results}
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(json.dumps(payload, indent=1), encoding="utf-8")
    if as_json:
        print(json.dumps(payload, indent=1))
        return
    if len(results) > 1:
        out_console.print(sd.summary_table(results))
    if out:
        console.print(f"results: {out}", highlight=False, soft_wrap=True)


@app.command("gsafeguard-data", context_settings=_EXTRA)
def gsafeguard_data(ctx: typer.Context) -> None:
    """Generate (or finish) G-Safeguard's labelled training conversations through the executor on the
    run's backbone, into method.data (default: a file named by the settings in
    outputs/gsafeguard/).
    OVERRIDES compose as for `tomacs train` (benchmark=mmlu backbone=sim seed=0 method.regime=dynamic);
    then train with `tomacs train method=gsafeguard method.data=<file> ...`."""
    import shlex
    import time
    from pathlib import Path

    from tomacs.job.components import backbone_label, build
    from tomacs.job.progress import Progress
    from tomacs.training.detector_data import DataSpec, default_path, ensure

    overrides = list(ctx.args or [])
    if any(o.lstrip("+~").startswith(("hydra.", "hydra/", "mode=")) for o in overrides):
        _fail("hydra.* and mode overrides do not apply here; set the output file with method.data=FILE")
    if any(o.startswith("method=") and o != "method=gsafeguard" for o in overrides):
        _fail("`tomacs gsafeguard-data` makes G-Safeguard's conversations; drop the method= override")
    overrides = [o for o in overrides if o != "method=gsafeguard"]
    t0 = time.perf_counter()
    try:
        cfg = compose(["method=gsafeguard", *overrides])
        comps = build(cfg, need_train=True)
        backbone = str(getattr(comps.backbone, "name", cfg.backbone.name))
        spec = DataSpec.of(cfg, backbone, comps.train_qs)
        data = comps.method.settings.data
        path = Path(data) if data else default_path(spec)
        _check_out_file(path, "choose a writable method.data=FILE")
        records, stats = ensure(
            spec,
            path,
            comps.train_qs,
            comps.backbone,
            comps.bench.roles_key,
            int(cfg.eval.batch_size),
            Progress(),
        )
    except (ConfigError, FileNotFoundError, ValueError) as exc:
        _fail(str(exc))
    share = sum(sum(r["labels"]) for r in records) / max(1, sum(len(r["labels"]) for r in records))
    label = backbone_label(cfg, comps.backbone)
    console.print(
        f"{len(records)} conversations ({stats['generated']} generated now, {stats['calls']} LLM calls, "
        f"{time.perf_counter() - t0:.1f} s) | backbone={label} | benchmark={spec.benchmark} | "
        f"regime={spec.regime} | {spec.agents} agents x {spec.rounds} turns | "
        f"adversarial share {100 * share:.1f} %",
        highlight=False,
        soft_wrap=True,
    )
    console.print(f"data: {path}", highlight=False, soft_wrap=True)
    keep = [o for o in overrides if not o.startswith("method.data=")]
    console.print(
        "train: tomacs train method=gsafeguard "
        + " ".join(shlex.quote(o) for o in [*keep, f"method.data={path}"]),
        highlight=False,
        soft_wrap=True,
    )


analyze_app = typer.Typer(no_args_is_help=True, help="Analyses of a composed config that reuse the executor.")
app.add_typer(analyze_app, name="analyze")


@analyze_app.command("propagation", context_settings=_EXTRA)
def analyze_propagation(
    ctx: typer.Context,
    questions: int = typer.Option(None, "--questions", "-n", help="Test questions (sets eval.size)."),
    checkpoint: str = typer.Option(None, "--checkpoint", help="checkpoint.pt of a learned method."),
    out: str = typer.Option(None, "--out", "-o", help="JSON file (default outputs/analysis/...)."),
    from_round: int = typer.Option(1, "--from-round", help="Force the agent's output from this round on."),
    modes: str = typer.Option("wrong,right", "--modes", help="Comma list of wrong, right."),
    degree: str = typer.Option("total", "--degree", help="Degree shown in the table: total | out."),
) -> None:
    """Counterfactual error/insight propagation (CAPE, TCTE of the eib-learner paper, Eqs. 5-6): force
    one agent's output to a wrong or the right answer and count flips of the final answer.
    OVERRIDES compose the config as for `tomacs evaluate`, e.g. `method=chain benchmark=mmlu`."""
    from pathlib import Path

    from tomacs.analysis.propagation import DEGREES, MODES, propagation_table, run_propagation
    from tomacs.job.files import write_json
    from tomacs.job.progress import Progress

    overrides = list(ctx.args or [])
    if any(o.lstrip("+~").startswith(("hydra.", "hydra/", "mode=")) for o in overrides):
        _fail("hydra.* and mode overrides do not apply to `tomacs analyze`; use --out for the output file")
    if questions is not None:
        if questions < 1:
            _fail("--questions must be >= 1")
        overrides.append(f"eval.size={questions}")
    mode_list = [m.strip() for m in modes.split(",") if m.strip()]
    if not mode_list or any(m not in MODES for m in mode_list):
        _fail(f"--modes {modes!r}: give a comma list of {', '.join(MODES)}")
    if degree not in DEGREES:
        _fail(f"--degree {degree!r}: valid are {', '.join(DEGREES)}")
    _check_out_file(
        out or Path("outputs") / "analysis" / "propagation_*.json", "choose a writable --out FILE"
    )
    try:
        cfg = compose(overrides)
        if not 1 <= from_round <= int(cfg.rounds):
            raise ConfigError(f"--from-round must lie in 1..rounds={cfg.rounds} (got {from_round})")
        results = run_propagation(
            cfg,
            checkpoint=Path(checkpoint) if checkpoint else None,
            from_round=from_round,
            modes=mode_list,
            progress=Progress(enabled=sys.stderr.isatty()),
        )
    except (ConfigError, FileNotFoundError, ValueError) as exc:
        _fail(str(exc))
    path = (
        Path(out)
        if out
        else Path("outputs")
        / "analysis"
        / (
            f"propagation_{results['benchmark']}_{results['method']}_{results['backbone'].replace(':', '-')}"
            f"_s{results['seed']}.json"
        )
    )
    console.print(propagation_table(results, degree))  # before writing: a failed write keeps the table
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json(path, results)
    except OSError as exc:
        _fail(f"cannot write {path}: {exc.strerror or exc}; choose a writable --out FILE")
    console.print(f"results: {path}", highlight=False, soft_wrap=True)


transcripts_app = typer.Typer(no_args_is_help=True, help="Real debate transcripts (docs/transcripts.md).")
app.add_typer(transcripts_app, name="transcripts")
_FORMAT_HELP = "Format of every PATH (default: detected per path); see docs/transcripts.md."


def _load_transcripts(paths: list[str], fmt: str | None) -> list:
    from tomacs.transcripts import TranscriptError, load_debates

    try:
        return load_debates(paths, fmt=fmt)
    except TranscriptError as exc:
        _fail(str(exc))
    except OSError as exc:
        _fail(f"cannot read {exc.filename or ' '.join(paths)}: {exc.strerror or exc}")
    return []


@transcripts_app.command("convert")
def transcripts_convert(
    paths: list[str] = typer.Argument(..., help="Files or directories of debates (runs, sweeps, ...)."),
    out: str = typer.Option(..., "--out", "-o", help="The tomacs.debate/1 JSON Lines file to write."),
    fmt: str = typer.Option(None, "--format", "-f", help=_FORMAT_HELP),
) -> None:
    """Import debates in any known format and write them as tomacs.debate/1 JSON Lines."""
    from tomacs.transcripts import write_debates

    debates = _load_transcripts(paths, fmt)
    try:
        n = write_debates(out, debates)
    except OSError as exc:
        _fail(f"cannot write {out}: {exc.strerror or exc}; choose a writable --out FILE")
    console.print(f"{n} debates: {out}", highlight=False, soft_wrap=True)


@transcripts_app.command("stats")
def transcripts_stats(
    paths: list[str] = typer.Argument(..., help="Files or directories of debates."),
    fmt: str = typer.Option(None, "--format", "-f", help=_FORMAT_HELP),
) -> None:
    """Per source and model: debates, agents, rounds, honest round-1 accuracy, unparsed shares."""
    from tomacs.transcripts.stats import stats_table

    console.print(stats_table(_load_transcripts(paths, fmt)))


@transcripts_app.command("texts")
def transcripts_texts(
    sim: list[str] = typer.Option(
        ..., "--sim", help="Simulated debates: sim run or sweep dirs, episodes.jsonl."
    ),
    real: list[str] = typer.Option(..., "--real", help="Real transcripts, in any format `stats` reads."),
    model: str = typer.Option(
        None, "--model", help="Only real debates whose honest agents ran on this model."
    ),
    held_out: bool = typer.Option(
        False, "--held-out", help="Only the real questions held out from a fit (the split of calibrate)."
    ),
    split: float = typer.Option(0.7, "--split", help="With --held-out: the fitted share of the questions."),
    embedder: str = typer.Option(None, "--embedder", help="minilm or hashing (default: the sim run's own)."),
    max_replies: int = typer.Option(None, "--max-replies", help="Cap each side (whole questions, seeded)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the question folds and of the split."),
    out: str = typer.Option(None, "--out", "-o", help="Also write the numbers as JSON here."),
) -> None:
    """Simulated reply texts against real ones: two-sample, adversary and sim-to-real transfer AUCs."""
    from tomacs.analysis.text_report import run_texts

    if out:
        _check_out_file(out)
    try:
        text = run_texts(sim, real, model, held_out, split, embedder, max_replies, seed, out)
    except (ValueError, FileNotFoundError) as exc:
        _fail(str(exc))
    console.print(text, highlight=False, soft_wrap=True)


@app.command()
def replay(
    run_dir: str = typer.Argument(
        ..., metavar="RUN_DIR", help="A trained todycomm or gsafeguard run (config.yaml, best.pt)."
    ),
    paths: list[str] = typer.Argument(..., metavar="TRANSCRIPTS...", help="Files or directories of debates."),
    fmt: str = typer.Option(None, "--format", "-f", help=_FORMAT_HELP),
    out: str = typer.Option(None, "--out", "-o", help="Also write the numbers and per-debate credits here."),
    limit: int = typer.Option(None, "--limit", "-n", help="Replay only the first N debates."),
    checkpoint: str = typer.Option(None, "--checkpoint", help="A checkpoint other than the run's best.pt."),
    model: str = typer.Option(None, "--model", help="Only debates whose honest agents ran on this model."),
    held_out: bool = typer.Option(
        False, "--held-out", help="Only the questions held out from a profile fit (the split of calibrate)."
    ),
    split: float = typer.Option(0.7, "--split", help="With --held-out: the fitted share of the questions."),
    split_seed: int = typer.Option(0, "--split-seed", help="With --held-out: the seed of the split."),
) -> None:
    """Score the agents of real debates with a trained policy, along the communication they recorded:
    per round the AUC of its credits (honest vs adversary) and its ADAcc beside the all-reliable
    detector's (docs/transcripts.md, "Replaying a trained policy")."""
    from pathlib import Path

    from tomacs.analysis.replay import replay_run, replay_table
    from tomacs.job.files import write_json
    from tomacs.job.progress import Progress

    if limit is not None and limit < 1:
        _fail("--limit must be >= 1")
    if out:
        _check_out_file(out)
    from tomacs.sim.from_episodes import select_debates

    try:
        debates = select_debates(_load_transcripts(paths, fmt), model, held_out, split, split_seed)
        res = replay_run(
            Path(run_dir),
            debates,
            paths,
            limit=limit,
            checkpoint=Path(checkpoint) if checkpoint else None,
            progress=Progress(enabled=sys.stderr.isatty()),
        )
    except (ValueError, FileNotFoundError) as exc:  # ReplayError, ConfigError, checkpoint errors
        _fail(str(exc))
    console.print(replay_table(res))
    s = res["summary"]

    def pct(x: float | None) -> str:
        return "-" if x is None else f"{100 * x:.1f} %"

    console.print(
        f"{s['debates']} debates, {s['agents']} agents, {s['adversaries']} adversaries (onset <= T); "
        f"paper ADAcc (decision voters) {pct(s['adacc'])}, balanced {pct(s['adacc_balanced'])}, "
        f"all-reliable detector {pct(s['adacc_all_reliable'])}",
        highlight=False,
        soft_wrap=True,
    )
    if out:
        try:
            write_json(Path(out), res)
        except OSError as exc:
            _fail(f"cannot write {out}: {exc.strerror or exc}; choose a writable --out FILE")
        console.print(f"results: {out}", highlight=False, soft_wrap=True)


@app.command()
def report(
    sweep_dir: str = typer.Argument(
        ..., help="A sweep directory (outputs/multirun/<table>/...) or any tree of jobs."
    ),
    out: str = typer.Option(None, "--out", "-o", help="Report directory (default: <sweep_dir>/report)."),
) -> None:
    """Paper-shaped tables (Markdown + LaTeX) with the papers' numbers beside ours, and plots."""
    from pathlib import Path

    from tomacs.report.build import build_report

    try:
        res = build_report(Path(sweep_dir), Path(out) if out else None)
    except FileNotFoundError as exc:
        _fail(str(exc))
    from rich.markup import escape

    for w in res["warnings"]:
        err.print(f"[bold red]WARNING:[/] {escape(w)}", highlight=False, soft_wrap=True)
    if res["varying"]:
        console.print(
            "settings that vary inside a method/benchmark/attack/budget group (kept apart, column "
            f"'setting'): {', '.join(res['varying'])}",
            highlight=False,
            soft_wrap=True,
        )
    console.print(
        f"{res['jobs']} jobs ({', '.join(res['backbones'])}) -> {res['out'] / 'report.md'}",
        highlight=False,
        soft_wrap=True,
    )


@app.command("paired-eval")
def paired_eval(
    sweep_dir: str = typer.Argument(..., help="A sweep directory of finished jobs."),
    eval_seed: int = typer.Option(0, "--eval-seed", help="The evaluation seed every job is re-run with."),
    out: str = typer.Option(None, "--out", "-o", help="Directory (default: SWEEP_DIR_paired<K> beside it)."),
    methods: str = typer.Option(None, "--methods", help="Comma-separated; default every method."),
    jobs: int = typer.Option(2, "--jobs", help="Evaluations run side by side."),
) -> None:
    """Re-evaluate every job of a finished sweep with its own checkpoint under one evaluation seed,
    so all seeds meet the same test episodes and the spread left is training's; prints Acc mean ±
    std per cell, unpaired beside paired. Resumable: finished re-evaluations are skipped."""
    from pathlib import Path

    from tomacs.report.paired import paired_eval as run_paired

    wanted = {m for m in methods.split(",") if m} if methods else None
    try:
        rc = run_paired(Path(sweep_dir), eval_seed, Path(out) if out else None, wanted, jobs)
    except FileNotFoundError as exc:
        _fail(str(exc))
    raise typer.Exit(rc)


@app.command("check-targets")
def check_targets(
    args: list[str] = typer.Argument(
        None, metavar="SWEEP_DIR|OVERRIDE", help="A directory of finished jobs; with --run, overrides."
    ),
    run: bool = typer.Option(
        False, "--run", help="First run `tomacs train table=table2 OVERRIDES` into a fresh directory."
    ),
) -> None:
    """TodyComm's targets (ADAcc, Acc above every baseline, seed std, Token vs AgentPrune) checked on
    finished jobs, with the paper's numbers beside ours."""
    from pathlib import Path

    from tomacs.report.targets import check_targets as run_checks
    from tomacs.report.targets import run_table2

    args = list(args or [])
    if not run and len(args) != 1:
        _fail("give one directory of finished jobs, or --run [OVERRIDES...] to run table2 first")
    try:
        root = run_table2(args) if run else Path(args[0])
        run_checks(root)
    except (FileNotFoundError, ValueError, RuntimeError) as exc:
        _fail(str(exc))


@app.command()
def diagnose(
    run_dir: str = typer.Argument(
        ..., help="The directory of a trained todycomm job (has config.yaml, best.pt)."
    ),
    size: int = typer.Option(
        None, "--size", "-n", help="Test questions to re-run (default: the job's eval.size)."
    ),
    checkpoint: str = typer.Option(None, "--checkpoint", help="A checkpoint other than the job's best.pt."),
    out: str = typer.Option(None, "--out", "-o", help="JSON file (default: <run_dir>/diagnosis.json)."),
) -> None:
    """Why a trained credit policy does (not) detect adversaries: credits of honest vs adversarial
    agents per round, participation, adversaries visible before the decision (an ADAcc ceiling), a
    supervised probe on the policy's own features, and how far the weights moved from their init."""
    from pathlib import Path

    from tomacs.analysis.credit import diagnose as run_diagnosis
    from tomacs.analysis.credit import format_report
    from tomacs.job.files import write_json

    if size is not None and size < 1:
        _fail("--size must be >= 1")
    _check_out_file(Path(out) if out else Path(run_dir) / "diagnosis.json")
    try:
        res = run_diagnosis(Path(run_dir), size=size, checkpoint=Path(checkpoint) if checkpoint else None)
    except (ConfigError, FileNotFoundError, ValueError) as exc:
        _fail(str(exc))
    path = Path(out) if out else Path(run_dir) / "diagnosis.json"
    write_json(path, res)
    console.print(format_report(res), highlight=False, soft_wrap=True)
    console.print(f"results: {path}", highlight=False, soft_wrap=True)


@app.command(context_settings=_EXTRA)
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
        _fail(str(exc))
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


def main() -> None:
    # Ctrl-C inside a job prints its resume command (hydra_app); anywhere else typer exits 130
    app()


if __name__ == "__main__":
    main()
