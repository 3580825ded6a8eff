"""Analyses that re-run debates through the executor: the `tomacs analyze` group (propagation, credits).
`tomacs diagnose` is the old spelling of `tomacs analyze credits`."""

from __future__ import annotations

import sys

import typer

from tomacs.cli.common import EXTRA, check_out_file, console, fail, old_spelling
from tomacs.config import ConfigError, compose

analyze_app = typer.Typer(no_args_is_help=True, help="Analyses of a composed config that reuse the executor.")


@analyze_app.command("propagation", context_settings=EXTRA)
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
    from tomacs.launch.spec import job_spec

    overrides = list(ctx.args or [])
    if any(o.lstrip("+~").startswith(("hydra.", "hydra/", "mode=")) for o in overrides):
        fail("hydra.* and mode overrides do not apply to `tomacs analyze`; use --out for the output file")
    if questions is not None:
        if questions < 1:
            fail("--questions must be >= 1")
        overrides.append(f"eval.size={questions}")
    mode_list = [m.strip() for m in modes.split(",") if m.strip()]
    if not mode_list or any(m not in MODES for m in mode_list):
        fail(f"--modes {modes!r}: give a comma list of {', '.join(MODES)}")
    if degree not in DEGREES:
        fail(f"--degree {degree!r}: valid are {', '.join(DEGREES)}")
    check_out_file(out or Path("outputs") / "analysis" / "propagation_*.json", "choose a writable --out FILE")
    try:
        spec = job_spec(compose(overrides), checkpoint=checkpoint)
        if not 1 <= from_round <= spec.rounds:
            raise ConfigError(f"--from-round must lie in 1..rounds={spec.rounds} (got {from_round})")
        results = run_propagation(
            spec,
            from_round=from_round,
            modes=mode_list,
            progress=Progress(enabled=sys.stderr.isatty()),
        )
    except (ConfigError, FileNotFoundError, ValueError) as exc:
        fail(str(exc))
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
        fail(f"cannot write {path}: {exc.strerror or exc}; choose a writable --out FILE")
    console.print(f"results: {path}", highlight=False, soft_wrap=True)


@analyze_app.command("credits")
def analyze_credits(
    run_dir: str = typer.Argument(
        ..., help="The directory of a trained todycomm job (has config.yaml and its checkpoints)."
    ),
    size: int = typer.Option(
        None, "--size", "-n", help="Test questions to re-run (default: the job's eval.size)."
    ),
    checkpoint: str = typer.Option(
        None,
        "--checkpoint",
        help="Read this checkpoint, not the one the job tested (best.pt; checkpoint.pt at select=last).",
    ),
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
        fail("--size must be >= 1")
    check_out_file(Path(out) if out else Path(run_dir) / "diagnosis.json")
    try:
        res = run_diagnosis(Path(run_dir), size=size, checkpoint=Path(checkpoint) if checkpoint else None)
    except (ConfigError, FileNotFoundError, ValueError) as exc:
        fail(str(exc))
    path = Path(out) if out else Path(run_dir) / "diagnosis.json"
    write_json(path, res)
    console.print(format_report(res), highlight=False, soft_wrap=True)
    console.print(f"results: {path}", highlight=False, soft_wrap=True)


# the old spelling: the same options, help and code, after a one-line notice
diagnose = old_spelling("tomacs diagnose", "tomacs analyze credits", analyze_credits)
