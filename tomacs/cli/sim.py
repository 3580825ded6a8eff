"""The `tomacs sim` group: the simulator backbone's profiles checked against the paper, fitted to it or
to real debates, and its multi-round debates taken apart. `tomacs calibrate` (cli/calibrate.py) is
the old spelling and runs the same functions below."""

from __future__ import annotations

import typer

from tomacs.cli.common import EXTRA, check_out_file, console, fail, wide
from tomacs.config import ConfigError, compose

sim_app = typer.Typer(
    no_args_is_help=True,
    help="The simulator backbone's profiles: check them against the paper, fit them (to the paper or to "
    "real debates), diagnose their multi-round debates.",
)
JSON_HELP = "Print JSON instead of tables."
OUT_HELP = "Also write the JSON to this file."


@sim_app.command("check")
def sim_check(
    profile: list[str] = typer.Option(None, "--profile", "-p", help="Profiles to check (default: all five)."),
    trials: int = typer.Option(
        10000, help="Sampled trials per Tables 7-8 cell for the check (SE about 0.4 points)."
    ),
    seed: int = typer.Option(0, help="Seed of the common random numbers."),
) -> None:
    """Simulate the stored paper profiles (no fit) beside TodyComm: the fitted cells (Tables 7-8,
    Table 2 Complete) and, labelled held out, Table 2's Random rows."""
    paper(profile, trials, seed, check=True)


@sim_app.command("fit")
def sim_fit(
    profile: list[str] = typer.Option(None, "--profile", "-p", help="Profiles to fit (default: all five)."),
    trials: int = typer.Option(
        10000, help="Sampled trials per Tables 7-8 cell for the check after the fit (SE about 0.4 points)."
    ),
    seed: int = typer.Option(0, help="Seed of the common random numbers."),
    write: bool = typer.Option(False, "--write", help="Write fitted values into conf/backbone/sim.yaml."),
    jobs: int = typer.Option(2, "--jobs", help="Processes for the fit (one profile each)."),
) -> None:
    """Fit the simulator to TodyComm Tables 7-8 and Table 2 Complete; print simulated vs paper, cell by
    cell."""
    paper(profile, trials, seed, check=False, write=write, jobs=jobs)


@sim_app.command("fit-episodes")
def sim_fit_episodes(
    paths: list[str] = typer.Argument(
        ...,
        metavar="PATH",
        help="Real debates: episodes.jsonl, tomacs.debate/1 JSONL, MAD-Follower run folders, a quoted glob.",
    ),
    name: str = typer.Option(None, "--name", help="The profile's name (backbone.profile=NAME)."),
    split: float = typer.Option(0.7, "--split", help="Share of QUESTIONS fitted (1 = all)."),
    split_seed: int = typer.Option(0, "--split-seed", help="Seed of the question split."),
    fold: str = typer.Option(
        None,
        "--fold",
        help="k/K: hold out the k-th of K folds of the questions instead of --split's share (one fit of a "
        "cross-fit; `tomacs transcripts pool` joins the K texts checks).",
    ),
    model: str = typer.Option(
        None, "--model", "--honest-model", help="Fit only the honest agents of this model."
    ),
    predict: list[str] = typer.Option(
        None, "--predict", help="Also score the fitted profile on these debates (repeatable)."
    ),
    draws: int = typer.Option(400, "--draws", help="Simulated replays per held-out debate."),
    seed: int = typer.Option(0, help="Seed of the simulated replays."),
    by_benchmark: bool = typer.Option(
        True,
        "--by-benchmark/--no-by-benchmark",
        help="Fit one accuracy per benchmark (meta.benchmark) instead of one in all.",
    ),
    by_sender: bool = typer.Option(
        True,
        "--by-sender/--no-by-sender",
        help="Fit one persuasion per adversary model instead of one in all.",
    ),
    mechanisms: str = typer.Option(
        "auto",
        "--mechanisms",
        help="Optional mechanisms: 'auto' keeps each that beats none in cross-validation on the fitting "
        "questions; 'none'; or a comma list of later_weight, target_persistence.",
    ),
    lapse: str = typer.Option(
        "auto",
        "--lapse",
        help="Share of later-round answers drawn uniformly: 'auto' (chosen by cross-validation on the "
        "fitting questions), or a rate in [0, 1); 0 is the plain update rule.",
    ),
    shrink: str = typer.Option(
        "0",
        "--shrink",
        help="Pull toward the paper profile: 0 (plain maximum likelihood), a strength, or 'auto' (chosen by "
        "cross-validation on the fitting questions; for a source of few questions).",
    ),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
    out: str = typer.Option(None, "--out", "-o", help=OUT_HELP),
) -> None:
    """Fit a profile to real debates and print how it predicts held-out questions."""
    from_episodes(
        "`tomacs sim fit-episodes`",
        list(paths),
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
        mechanisms,
        shrink,
        lapse,
        fold,
    )


@sim_app.command("diagnose", context_settings=EXTRA)
def sim_diagnose(
    ctx: typer.Context,
    benchmark: str = typer.Option(
        None, "--benchmark", "-b", help="Comma list of benchmarks, or 'all' (default: mmlu)."
    ),
    method: str = typer.Option("complete", "--method", help="The method (a static topology)."),
    attack: str = typer.Option("gt50", "--attack", help="Comma list of attack options."),
    size: int = typer.Option(153, "--size", help="Test questions (eval.size)."),
    seed: int = typer.Option(0, help="The run's seed."),
    ablate: bool = typer.Option(True, "--ablate/--no-ablate", help="Also run the ablations."),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
    out: str = typer.Option(None, "--out", "-o", help=OUT_HELP),
) -> None:
    """Run multi-round debates on the sim backbone and take them apart (tomacs/analysis/sim_debates.py):
    per-round accuracy, conformity, flips, the model's terms, ablations. Extra OVERRIDES compose as for
    `tomacs evaluate`."""
    diagnose_debates(
        "`tomacs sim diagnose`",
        list(ctx.args or []),
        benchmark,
        method,
        attack,
        size,
        seed,
        ablate,
        as_json,
        out,
    )


def paper(
    profile: list[str] | None, trials: int, seed: int, *, check: bool, write: bool = False, jobs: int = 2
) -> None:
    """`sim check` (stored values, no fit) and `sim fit`: the paper's cells beside the simulated ones."""
    from tomacs.sim import calibrate as cal

    profiles = list(profile) if profile else None
    if check:
        rows = cal.stored_rows(trials=trials, seed=seed)
        if profiles:
            rows = [r for r in rows if r["profile"] in profiles]
    else:
        rows = cal.calibrate(profiles, trials=trials, seed=seed, write=write, jobs=jobs)
    wide(170).print(cal.format_report(rows), highlight=False, markup=False)


def from_episodes(
    who: str,
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
    mechanisms: str = "auto",
    shrink: str = "0",
    lapse: str = "auto",
    fold: str | None = None,
) -> None:
    """`sim fit-episodes` (WHO names it in messages): fit, store, and print the held-out tables."""
    import json
    from pathlib import Path

    if not name:
        fail(f"{who} needs --name NAME (the profile's name, used as backbone.profile=NAME)")
    if not 0.0 < split <= 1.0:
        fail(f"--split must be in (0, 1], got {split}")
    from tomacs.transcripts.split import parse_fold

    try:
        k_of = parse_fold(fold)
    except ValueError as exc:
        fail(str(exc))
    if split >= 1.0 and not predict and k_of is None:
        fail("--split 1 fits every question and leaves none held out: add --predict PATH to score it")
    if draws < 1:
        fail("--draws must be >= 1")
    if out:
        check_out_file(out)
    from tomacs.sim import fit_episodes as fe
    from tomacs.sim import from_episodes as fx
    from tomacs.sim import heldout as ho

    mech = mechanisms.strip().lower()
    chosen: list[str] | None = (
        None
        if mech == "auto"
        else []
        if mech == "none"
        else [m.strip() for m in mech.split(",") if m.strip()]
    )
    bad = [m for m in chosen or [] if m not in fe.MECHANISMS]
    if bad:
        fail(
            f"--mechanisms: unknown {', '.join(bad)}; "
            f"use auto, none, or a comma list of {', '.join(fe.MECHANISMS)}"
        )
    try:
        strength = None if shrink.strip().lower() == "auto" else float(shrink)
    except ValueError:
        fail(f"--shrink: expected auto or a number >= 0, got {shrink!r}")
    try:
        rate = None if lapse.strip().lower() == "auto" else float(lapse)
    except ValueError:
        fail(f"--lapse: expected auto or a number in [0, 1), got {lapse!r}")
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
            mechanisms=chosen,
            shrink=strength,
            lapse=rate,
            fold=k_of,
        )
    except (FileNotFoundError, ValueError) as exc:
        fail(str(exc))
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(json.dumps(res, indent=1), encoding="utf-8")
    if as_json:
        print(json.dumps(res, indent=1))
        return
    out_console = wide(170)
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
    mch = fit.get("mechanisms") or {}
    cv = mch.get("cv_loglik_per_answer") or {}
    kept_txt = ", ".join(f"{k}={v:.4g}" for k, v in (mch.get("kept") or {}).items()) or "none"
    cv_txt = (
        f" (cross-validated log-lik/answer: {', '.join(f'{k} {v:.4f}' for k, v in cv.items())})" if cv else ""
    )
    out_console.print(f"  mechanisms kept: {kept_txt}{cv_txt}", highlight=False, markup=False)
    lap = fit.get("lapse") or {}
    if lap:
        lcv = lap.get("cv_loglik_per_answer") or {}
        lcv_txt = f" (cross-validated log-lik/answer: {', '.join(f'{k} {v:.4f}' for k, v in lcv.items())})"
        out_console.print(f"  lapse: {lap['rate']:g}{lcv_txt if lcv else ''}", highlight=False, markup=False)
    shr = fit.get("shrink") or {}
    if shr.get("strength") or shr.get("cv_loglik_per_answer"):
        scv = shr.get("cv_loglik_per_answer") or {}
        scv_txt = (
            f" (cross-validated log-lik/answer: {', '.join(f'{k} {v:.4f}' for k, v in scv.items())})"
            if scv
            else ""
        )
        out_console.print(
            f"  pull toward the {shr['prior']} profile: {shr['strength']:g}{scv_txt}",
            highlight=False,
            markup=False,
        )
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


def diagnose_debates(
    who: str,
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
    """`sim diagnose` (WHO names it in messages): one diagnosis per benchmark x attack, then a summary."""
    import json
    from pathlib import Path

    from tomacs.analysis.sim_debates import diagnose as run_diagnosis
    from tomacs.launch.spec import job_spec
    from tomacs.sim import diagnose as sd
    from tomacs.sim.model import PROFILE_NAMES

    if any(o.lstrip("+~").startswith(("hydra.", "hydra/", "mode=")) for o in overrides):
        fail(f"hydra.* and mode overrides do not apply to {who}")
    if size < 1:
        fail("--size must be >= 1")
    benches = [b.strip() for b in (benchmark or "mmlu").split(",") if b.strip()]
    if benches == ["all"]:
        benches = list(PROFILE_NAMES)
    attacks = [a.strip() for a in attack.split(",") if a.strip()]
    if out:
        check_out_file(out)
    results = []
    out_console = wide(170)
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
                res = run_diagnosis(job_spec(compose([*base, *overrides])), ablate=ablate)
                results.append(res)
                if not as_json:
                    for t in sd.tables(res):
                        out_console.print(t)
    except (ConfigError, FileNotFoundError, ValueError) as exc:
        fail(str(exc))
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
