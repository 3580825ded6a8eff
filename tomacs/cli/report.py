"""Reports on finished jobs: `tomacs report`, `tomacs paired-eval`, `tomacs check-targets`."""

from __future__ import annotations

import typer

from tomacs.cli.common import console, err, fail


def report(
    sweep_dir: str = typer.Argument(
        ..., help="A sweep directory (outputs/multirun/<table>/...) or any tree of jobs."
    ),
    out: str = typer.Option(None, "--out", "-o", help="Report directory (default: <sweep_dir>/report)."),
) -> None:
    """Paper-shaped tables (Markdown + LaTeX) with the papers' numbers beside ours, and figures
    (PNG, PDF and SVG, each with its caption file; the training curves' raw values as CSV)."""
    from pathlib import Path

    from tomacs.report.build import build_report

    try:
        res = build_report(Path(sweep_dir), Path(out) if out else None)
    except FileNotFoundError as exc:
        fail(str(exc))
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


def paired_eval(
    sweep_dir: str = typer.Argument(..., help="A sweep directory of finished jobs."),
    eval_seed: int = typer.Option(0, "--eval-seed", help="The evaluation seed every job is re-run with."),
    out: str = typer.Option(None, "--out", "-o", help="Directory (default: SWEEP_DIR_paired<K> beside it)."),
    methods: str = typer.Option(None, "--methods", help="Comma-separated; default every method."),
    jobs: int = typer.Option(2, "--jobs", help="Evaluations run side by side."),
    draws: int = typer.Option(
        1, "--draws", min=1, help="backbone=sim: pool this many draws of the agents per job (eval.draws)."
    ),
) -> None:
    """Re-evaluate every job of a finished sweep with its own checkpoint under one evaluation seed,
    so all seeds meet the same adversary plans (with --draws, pooled over draws of the agents, so the
    spread left is mostly training's); prints Acc mean ± std per cell, unpaired beside paired.
    Resumable: finished re-evaluations are skipped."""
    from pathlib import Path

    from tomacs.report.paired import paired_eval as run_paired

    wanted = {m for m in methods.split(",") if m} if methods else None
    try:
        rc = run_paired(Path(sweep_dir), eval_seed, Path(out) if out else None, wanted, jobs, draws)
    except FileNotFoundError as exc:
        fail(str(exc))
    raise typer.Exit(rc)


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
        fail("give one directory of finished jobs, or --run [OVERRIDES...] to run table2 first")
    try:
        root = run_table2(args) if run else Path(args[0])
        run_checks(root)
    except (FileNotFoundError, ValueError, RuntimeError) as exc:
        fail(str(exc))
