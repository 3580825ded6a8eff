"""Real debate transcripts: the `tomacs transcripts` group (convert, stats, texts, curves) and
`tomacs replay`, which scores them with a trained policy."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import typer

from tomacs.cli.common import check_out_file, console, fail, wide

if TYPE_CHECKING:
    from tomacs.transcripts.schema import Debate

transcripts_app = typer.Typer(no_args_is_help=True, help="Real debate transcripts (docs/transcripts.md).")
FORMAT_HELP = "Format of every PATH (default: detected per path); see docs/transcripts.md."
# the sides of a sim-against-real comparison (`texts`, `curves`): one definition of each option
SIM_OPTION = typer.Option(..., "--sim", help="Simulated debates: sim run or sweep dirs, episodes.jsonl.")
REAL_OPTION = typer.Option(..., "--real", help="Real transcripts, in any format `stats` reads.")
MODEL_OPTION = typer.Option(None, "--model", help="Only real debates whose honest agents ran on this model.")
HELD_OUT_OPTION = typer.Option(
    False, "--held-out", help="Only the real questions held out from a fit (the split of calibrate)."
)
SPLIT_OPTION = typer.Option(0.7, "--split", help="With --held-out: the fitted share of the questions.")
FOLD_OPTION = typer.Option(
    None,
    "--fold",
    help="k/K: the real questions of the k-th of K folds, held out from a profile fitted with "
    "`sim fit-episodes --fold k/K` (implies --held-out; replaces --split).",
)


def load_transcripts(paths: list[str], fmt: str | None) -> list:
    from tomacs.transcripts import TranscriptError, load_debates

    try:
        return load_debates(paths, fmt=fmt)
    except TranscriptError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot read {exc.filename or ' '.join(paths)}: {exc.strerror or exc}")
    return []


@transcripts_app.command("convert")
def transcripts_convert(
    paths: list[str] = typer.Argument(..., help="Files or directories of debates (runs, sweeps, ...)."),
    out: str = typer.Option(..., "--out", "-o", help="The tomacs.debate/1 JSON Lines file to write."),
    fmt: str = typer.Option(None, "--format", "-f", help=FORMAT_HELP),
) -> None:
    """Import debates in any known format and write them as tomacs.debate/1 JSON Lines."""
    from tomacs.transcripts import write_debates

    debates = load_transcripts(paths, fmt)
    try:
        n = write_debates(out, debates)
    except OSError as exc:
        fail(f"cannot write {out}: {exc.strerror or exc}; choose a writable --out FILE")
    console.print(f"{n} debates: {out}", highlight=False, soft_wrap=True)


@transcripts_app.command("stats")
def transcripts_stats(
    paths: list[str] = typer.Argument(..., help="Files or directories of debates."),
    fmt: str = typer.Option(None, "--format", "-f", help=FORMAT_HELP),
) -> None:
    """Per source and model: debates, agents, rounds, honest round-1 accuracy, unparsed shares."""
    from tomacs.transcripts.stats import stats_table

    console.print(stats_table(load_transcripts(paths, fmt)))


@transcripts_app.command("texts")
def transcripts_texts(
    sim: list[str] = SIM_OPTION,
    real: list[str] = REAL_OPTION,
    model: str = MODEL_OPTION,
    held_out: bool = HELD_OUT_OPTION,
    split: float = SPLIT_OPTION,
    fold: str = FOLD_OPTION,
    embedder: str = typer.Option(None, "--embedder", help="minilm or hashing (default: the sim run's own)."),
    max_replies: int = typer.Option(None, "--max-replies", help="Cap each side (whole questions, seeded)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the question folds and of the split."),
    out: str = typer.Option(None, "--out", "-o", help="Also write the numbers as JSON here."),
) -> None:
    """Simulated reply texts against real ones: two-sample, adversary and sim-to-real transfer AUCs, the
    adversary AUC's gap with its interval; with --held-out, the real AUC to expect at the held-out size.
    With --fold, one fold of a cross-fit: `tomacs transcripts pool` joins the K folds' -o files."""
    from tomacs.analysis.text_report import run_texts

    if out:
        check_out_file(out)
    try:
        text = run_texts(sim, real, model, held_out, split, embedder, max_replies, seed, out, fold)
    except (ValueError, FileNotFoundError) as exc:
        fail(str(exc))
    console.print(text, highlight=False, soft_wrap=True)


@transcripts_app.command("pool")
def transcripts_pool(
    files: list[str] = typer.Argument(
        ...,
        metavar="FILE",
        help="One file per fold: the -o files of `transcripts texts --fold k/K`, or of `replay RUN "
        "TRANSCRIPTS --fold k/K` (each fold's policy trained on the profile fitted without it).",
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the pooled intervals' draws."),
    out: str = typer.Option(None, "--out", "-o", help="Also write the numbers as JSON here."),
) -> None:
    """Join the K folds of a cross-fit, every real question held out from the fit it is judged on. Texts
    checks: each fold's line, their means, and the mean gap of the adversary AUC with its interval.
    Replays: per credit round the AUC over all held-out debates with its interval and each fold's, and the
    ADAcc beside the all-reliable detector's."""
    from pathlib import Path

    from tomacs.analysis.folds import read_fold_files
    from tomacs.analysis.replay_pool import format_replay_pool, pool_replays
    from tomacs.analysis.text_pool import format_pool, pool
    from tomacs.job.files import write_json

    if out:
        check_out_file(out)
    try:
        kind, folds = read_fold_files(files)
    except ValueError as exc:
        fail(str(exc))
    res: object
    if kind == "texts":
        texts = pool(folds, seed)
        res, text = texts, format_pool(texts)
    else:
        replays = pool_replays(folds, seed)
        res, text = replays, format_replay_pool(replays)
    if out:
        try:
            write_json(Path(out), res)
        except OSError as exc:
            fail(f"cannot write {out}: {exc.strerror or exc}; choose a writable --out FILE")
    console.print(text, highlight=False, soft_wrap=True, markup=False)


@transcripts_app.command("curves")
def transcripts_curves(
    sim: list[str] = SIM_OPTION,
    real: list[str] = REAL_OPTION,
    model: str = MODEL_OPTION,
    held_out: bool = HELD_OUT_OPTION,
    split: float = SPLIT_OPTION,
    fold: str = FOLD_OPTION,
    seed: int = typer.Option(0, "--seed", help="Seed of the split and of the bootstrap."),
    reps: int = typer.Option(2000, "--reps", help="Bootstrap resamples of the questions."),
    out: str = typer.Option(None, "--out", "-o", help="Also write the numbers as JSON here."),
    plot: str = typer.Option(
        None, "--plot", help="Also draw the curves: STEM.png, .pdf, .svg and STEM.caption.txt."
    ),
) -> None:
    """Simulated against real debates per round: honest accuracy, conformity, switches, vote accuracy."""
    from tomacs.analysis.curves import figure_stem, run_curves

    if reps < 1:
        fail("--reps must be >= 1")
    if out:
        check_out_file(out)
    if plot:
        check_out_file(f"{figure_stem(plot)}.png", fix="choose another --plot")
    try:
        text = run_curves(sim, real, model, held_out, split, seed, reps, out, plot, fold)
    except (ValueError, FileNotFoundError) as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot write {exc.filename or out or plot}: {exc.strerror or exc}")
    console.print(text, markup=False, highlight=False, soft_wrap=True)


def replay(
    run_dir: str = typer.Argument(
        ...,
        metavar="RUN_DIR",
        help="A trained todycomm or gsafeguard run (config.yaml and its checkpoints), or a directory of such "
        "runs (a seed sweep): each is replayed, then the mean and range over them.",
    ),
    paths: list[str] = typer.Argument(..., metavar="TRANSCRIPTS...", help="Files or directories of debates."),
    fmt: str = typer.Option(None, "--format", "-f", help=FORMAT_HELP),
    out: str = typer.Option(None, "--out", "-o", help="Also write the numbers and per-debate credits here."),
    limit: int = typer.Option(None, "--limit", "-n", help="Replay only the first N debates."),
    checkpoint: str = typer.Option(
        None,
        "--checkpoint",
        help="Read this checkpoint, not the one the run tested (best.pt; checkpoint.pt at select=last).",
    ),
    model: str = typer.Option(None, "--model", help="Only debates whose honest agents ran on this model."),
    held_out: bool = typer.Option(
        False, "--held-out", help="Only the questions held out from a profile fit (the split of calibrate)."
    ),
    split: float = typer.Option(0.7, "--split", help="With --held-out: the fitted share of the questions."),
    split_seed: int = typer.Option(0, "--split-seed", help="With --held-out: the seed of the split."),
    fold: str = FOLD_OPTION,
    probe: bool = typer.Option(
        False,
        "--probe",
        help="Also fit a logistic probe per round on the policy's own inputs over the run's own test "
        "debates (their labels) and score it on these: what the policy's inputs can tell. With "
        "--held-out, a second one fitted on the real debates of the fitting questions: what the real "
        "replies can tell.",
    ),
) -> None:
    """Score the agents of real debates with a trained policy, along the communication they recorded:
    per round the AUC of its credits (honest vs adversary) and its ADAcc beside the all-reliable
    detector's (docs/transcripts.md, "Replaying a trained policy")."""
    from pathlib import Path

    from tomacs.analysis.replay import Probe, replay_run, replay_table
    from tomacs.analysis.replay_probe import probe_run, with_real_probe
    from tomacs.job.files import write_json
    from tomacs.job.progress import Progress

    if limit is not None and limit < 1:
        fail("--limit must be >= 1")
    if out:
        check_out_file(out)
    from tomacs.analysis.replay_runs import over_runs, over_runs_table, run_line, trained_runs
    from tomacs.transcripts.split import parse_fold, select_debates, split_questions

    runs = trained_runs(Path(run_dir))
    if not runs:
        fail(
            f"{run_dir} has no config.yaml and no finished run below it: pass the directory of a "
            "`tomacs train` run, or of a sweep of them"
        )
    if checkpoint and len(runs) > 1:
        fail(f"--checkpoint names one run's checkpoint, and {run_dir} holds {len(runs)} runs: pass one run")
    results = []
    try:
        k_of = parse_fold(fold)
        held_out = held_out or k_of is not None
        debates = select_debates(load_transcripts(paths, fmt), model)
        fitted: list[Debate] = []
        if held_out:  # calibrate's split: replay the held-out questions; the real probe learns the others
            fitted, debates = split_questions(debates, split, split_seed, k_of)
        probe_fn: Probe | None = (with_real_probe(fitted) if held_out else probe_run) if probe else None
        for run in runs:
            res = replay_run(
                run,
                debates,
                paths,
                limit=limit,
                checkpoint=Path(checkpoint) if checkpoint else None,
                progress=Progress(enabled=sys.stderr.isatty()),
                probe=probe_fn,
            )
            # which real debates: `transcripts pool` joins the folds of one cross-fit by these
            res.update(model=model, held_out=held_out, fold=None if k_of is None else str(k_of))
            res.update(seed=split_seed if held_out else None, split=split if held_out and not k_of else None)
            results.append(res)
        over = over_runs(results) if len(results) > 1 else None
    except (ValueError, FileNotFoundError) as exc:  # ReplayError, ConfigError, checkpoint errors
        fail(str(exc))

    def pct(x: float | None) -> str:
        return "-" if x is None else f"{100 * x:.1f} %"

    s = results[0]["summary"]
    if over is None:
        wide(120).print(replay_table(results[0]))  # in a log too, every column whole
        adacc = f"{pct(s['adacc'])}, balanced {pct(s['adacc_balanced'])}"
    else:
        for run, res in zip(runs, results, strict=True):
            console.print(run_line(run, Path(run_dir), res), highlight=False, soft_wrap=True, markup=False)
        wide(120).print(over_runs_table(over))
        a = over["adacc"]
        adacc = f"{pct(a['mean'])} over {len(runs)} runs [{pct(a['min'])}, {pct(a['max'])}]"
    console.print(
        f"{s['debates']} debates, {s['agents']} agents, {s['adversaries']} adversaries (onset <= T); "
        f"paper ADAcc (decision voters) {adacc}, all-reliable detector {pct(s['adacc_all_reliable'])}",
        highlight=False,
        soft_wrap=True,
    )
    if out:
        try:
            write_json(Path(out), results[0] if over is None else {"runs": results, "over_runs": over})
        except OSError as exc:
            fail(f"cannot write {out}: {exc.strerror or exc}; choose a writable --out FILE")
        console.print(f"results: {out}", highlight=False, soft_wrap=True)
