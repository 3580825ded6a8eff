"""`tomacs calibrate`: the old spelling of the `tomacs sim` group, one flag per mode. Its options and
help stay as they were; it prints a one-line notice naming the new spelling and runs the same
functions (cli/sim.py)."""

from __future__ import annotations

import typer

from tomacs.cli import sim
from tomacs.cli.common import fail, renamed


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
    fold: str = typer.Option(
        None,
        "--fold",
        help="--from-episodes: k/K, hold out the k-th of K folds of the questions (a cross-fit).",
    ),
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
    mechanisms: str = typer.Option(
        "auto",
        "--mechanisms",
        help="--from-episodes: optional mechanisms (auto, none or a comma list; `tomacs sim fit-episodes`).",
    ),
    shrink: str = typer.Option(
        "0", "--shrink", help="--from-episodes: pull toward the paper profile (0, a strength, or auto)."
    ),
    lapse: str = typer.Option(
        "auto", "--lapse", help="--from-episodes: the lapse rate (auto, or a rate in [0, 1); 0 = none)."
    ),
) -> None:
    """Fit the simulator to TodyComm Tables 7-8 and Table 2 Complete; print simulated vs paper, cell by cell.
    With --diagnose: break the simulator's multi-round debates down (tomacs/analysis/sim_debates.py).
    With --from-episodes: fit a profile to real debates and print how it predicts held-out questions."""
    mode = "fit-episodes" if from_episodes else "diagnose" if diagnose else "check" if check else "fit"
    flag = {"fit-episodes": " --from-episodes", "diagnose": " --diagnose", "check": " --check", "fit": ""}[
        mode
    ]
    renamed(f"tomacs calibrate{flag}", f"tomacs sim {mode}")
    if from_episodes:
        if ctx.args:
            fail(
                f"unexpected arguments {' '.join(ctx.args)}: give one path per --from-episodes/--predict "
                "(repeat the flag), or quote a glob: --from-episodes 'runs/*_r3_*'"
            )
        sim.from_episodes(
            "--from-episodes",
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
            mechanisms,
            shrink,
            lapse,
            fold,
        )
        return
    if predict or name:
        fail("--name and --predict go with --from-episodes PATH")
    if diagnose:
        sim.diagnose_debates(
            "`tomacs calibrate --diagnose`",
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
        return
    if ctx.args:
        fail(f"unexpected arguments {' '.join(ctx.args)} (overrides are accepted with --diagnose only)")
    sim.paper(profile, trials, seed, check=check, write=write, jobs=jobs)
