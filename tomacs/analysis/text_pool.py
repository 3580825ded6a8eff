"""`tomacs transcripts pool`: the K folds of a cross-fitted texts check, joined into one.

Why a cross-fit: a profile fitted on 70 % of a source's questions is judged on the other 30 %, 9-22 real
questions, where the real adversary AUC alone spreads over +-0.05-0.08, as wide as issue 38's target on the
gap (stop 76). Fitting K profiles, each without one fold of the questions (`sim fit-episodes --fold k/K`),
and checking each against its own fold (`transcripts texts --fold k/K -o F`) judges every real question
once, on a fit that never saw it. The folds' gaps are independent, so their mean has about 1/sqrt(K) of one
fold's spread.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

import numpy as np

from tomacs.analysis.folds import fold_mean, read_fold_files
from tomacs.analysis.texts import GAP_TARGET, _percentiles, _sim_auc, gap_verdict
from tomacs.transcripts.split import Fold

# the fold rows' metrics the pool averages (FoldRow's AUC keys)
METRICS = (
    "real_adversary_auc",
    "sim_adversary_auc",
    "adversary_gap",
    "transfer_auc",
    "real_trained_auc",
    "two_sample_auc",
)


def read_folds(paths: Sequence[str]) -> list[tuple[Fold, dict[str, Any]]]:
    """Each texts check's fold and result, in fold order (`tomacs.analysis.folds.read_fold_files`)."""
    return read_fold_files(paths, expect="texts")[1]


class FoldRow(TypedDict):
    """One fold's line of the pool (`transcripts texts --fold` JSON, the keys the pool reads)."""

    fold: str
    real_questions: int
    real_adversary_auc: float | None
    sim_adversary_auc: float | None
    adversary_gap: float | None
    adversary_gap_ci: list[float] | None
    transfer_auc: float | None
    real_trained_auc: float | None
    two_sample_auc: float | None


class RoundMean(TypedDict):
    """One round's means over the folds that have it."""

    round: int
    folds: int
    transfer_auc: float | None
    real_adversary_auc: float | None
    sim_adversary_auc: float | None


class PoolResult(TypedDict):
    """What `pool` returns and `transcripts pool -o` writes."""

    folds: int
    missing_folds: list[int]
    model: str | None
    embedder: str | None
    real_models: list[str] | None
    real_questions: int
    rows: list[FoldRow]
    mean: dict[str, float | None]
    adversary_gap: float | None
    adversary_gap_ci: tuple[float, float] | None
    adversary_gap_verdict: str | None
    adversary_gap_ci_refitted: list[float] | None
    adversary_gap_verdict_refitted: str | None
    transfer_auc_range: list[float] | None
    by_round: list[RoundMean]


def _fold_row(fold: Fold, res: dict[str, Any]) -> FoldRow:
    """One fold's line: its real questions and the metrics the pool averages."""
    return {
        "fold": str(fold),
        "real_questions": res["replies"]["real"]["questions"],
        "real_adversary_auc": res.get("real_adversary_auc"),
        "sim_adversary_auc": _sim_auc(res),
        "adversary_gap": res.get("adversary_gap"),
        "adversary_gap_ci": res.get("adversary_gap_ci"),
        "transfer_auc": res.get("transfer_auc"),
        "real_trained_auc": res.get("real_trained_auc"),
        "two_sample_auc": res.get("two_sample_auc"),
    }


def pooled_gap_draws(draws: Sequence[Sequence[float]], seed: int = 0) -> np.ndarray | None:
    """Draws of the folds' mean gap: the i-th draw of each fold (each fold's draws shuffled first, so that
    folds resampled with one seed are not paired position by position), averaged. None when a fold has none.

    Why this is the mean's spread: the folds hold different real questions and different simulated runs, so
    their gaps are independent, and a draw of the mean is the mean of one draw of each."""
    if not draws or any(len(d) == 0 for d in draws):
        return None
    n = min(len(d) for d in draws)
    rng = np.random.default_rng([seed, 3])
    cols = [rng.permutation(np.asarray(d, dtype=float))[:n] for d in draws]
    return np.mean(np.vstack(cols), axis=0)


def _refitted_interval(gap: float | None, folds: Sequence[dict[str, Any]]) -> list[float] | None:
    """A normal 95 % interval of the folds' mean gap with each fold's real AUC spread as `texts --held-out`'s
    sets show it (`real_sets_auc_sd`: the probe refitted on each set of the fold's size) and its simulated
    AUC's as the spread of its size-matched draws. None where a fold lacks the sets.

    Why beside the bootstrap one: the question bootstrap holds the probe's scores fixed, and a probe refitted
    per set of questions spreads 1.1-1.5 times as far (stop 76); this interval is the wider reading."""
    if gap is None:
        return None
    var = 0.0
    for res in folds:
        sd = res.get("real_sets_auc_sd")
        if sd is None:
            return None
        draws = res.get("sim_adversary_auc_matched_draws") or []
        var += sd**2 + (float(np.var(draws, ddof=1)) if len(draws) > 1 else 0.0)
    half = 1.96 * float(np.sqrt(var)) / len(folds)
    return [gap - half, gap + half]


ROUND_KEYS = ("transfer_auc", "real_adversary_auc", "sim_adversary_auc")


def _by_round(folds: Sequence[dict[str, Any]]) -> list[RoundMean]:
    """Per round, the folds' mean transfer and adversary AUCs (`texts`' by-round table), over the folds that
    have the round; a mean is None where a fold that has the round lacks the AUC.

    Why: a whole gap within the target can hide a round whose gap holds in every fold, which is then the
    simulator's and not one held-out set's luck."""
    rounds: dict[int, list[dict[str, Any]]] = {}
    for res in folds:
        for row in res.get("by_round") or []:
            rounds.setdefault(int(row["round"]), []).append(row)
    out: list[RoundMean] = []
    for t in sorted(rounds):
        rows = rounds[t]
        means = {key: fold_mean([row.get(key) for row in rows]) for key in ROUND_KEYS}
        out.append(
            {
                "round": t,
                "folds": len(rows),
                "transfer_auc": means["transfer_auc"],
                "real_adversary_auc": means["real_adversary_auc"],
                "sim_adversary_auc": means["sim_adversary_auc"],
            }
        )
    return out


def pool(folds: Sequence[tuple[Fold, dict[str, Any]]], seed: int = 0) -> PoolResult:
    """The folds' rows, their means, and the mean gap with its interval and verdict."""
    rows = [_fold_row(f, r) for f, r in folds]
    k_of = folds[0][0].of
    missing = sorted(set(range(1, k_of + 1)) - {f.k for f, _ in folds})
    plain: list[dict[str, Any]] = [dict(row) for row in rows]
    means = {key: fold_mean([p[key] for p in plain]) for key in METRICS}
    diff = pooled_gap_draws([r.get("adversary_gap_draws") or [] for _, r in folds], seed)
    gap = means["adversary_gap"]
    ci = None if diff is None else _percentiles(diff, 0.95)
    first = folds[0][1]
    wide = _refitted_interval(gap, [r for _, r in folds])
    return {
        "folds": k_of,
        "missing_folds": missing,
        "model": first.get("model"),
        "embedder": first.get("embedder"),
        "real_models": first.get("real_models"),
        "real_questions": int(sum(row["real_questions"] for row in rows)),
        "rows": rows,
        "mean": means,
        "adversary_gap": gap,
        "adversary_gap_ci": ci,
        "adversary_gap_verdict": None if gap is None else gap_verdict(gap, ci),
        "adversary_gap_ci_refitted": wide,
        "adversary_gap_verdict_refitted": None
        if wide is None or gap is None
        else gap_verdict(gap, (wide[0], wide[1])),
        "transfer_auc_range": _range([row["transfer_auc"] for row in rows]),
        "by_round": _by_round([r for _, r in folds]),
    }


def _range(vals: Sequence[float | None]) -> list[float] | None:
    got = [v for v in vals if v is not None]
    return [float(min(got)), float(max(got))] if got else None


def _f(x: float | None, sign: bool = False) -> str:
    return "-" if x is None else f"{x:+.3f}" if sign else f"{x:.3f}"


def _line(label: str, questions: str, span: str, vals: Mapping[str, object]) -> str:
    """One line of the folds' table: a fold's, or the means'."""

    def f(key: str, sign: bool = False) -> str:
        v = vals.get(key)
        return _f(v if isinstance(v, float) else None, sign)

    return (
        f"  {label:<6}{questions:>15}{f('real_adversary_auc'):>14}{f('sim_adversary_auc'):>13}"
        f"{f('adversary_gap', True):>9}{span:>20}{f('transfer_auc'):>10}{f('two_sample_auc'):>12}"
    )


def format_pool(res: PoolResult) -> str:
    """Plain text: a line per fold, the means, and the mean gap against the target."""
    who = f"model {res['model']}, " if res.get("model") else ""
    lines = [
        f"texts, cross-fit: {len(res['rows'])} of {res['folds']} folds ({who}embedder {res['embedder']}); "
        f"{res['real_questions']} real questions, each held out from the fit its fold is checked against",
    ]
    if res["missing_folds"]:
        gone = ", ".join(map(str, res["missing_folds"]))
        lines.append(f"  folds missing: {gone} (the means are over the folds given)")
    lines += [
        "",
        f"  {'fold':<6}{'real questions':>15}{'real adv AUC':>14}{'sim adv AUC':>13}{'gap':>9}"
        f"{'gap 95 %':>20}{'transfer':>10}{'two-sample':>12}",
    ]
    for row in res["rows"]:
        fold_ci = row["adversary_gap_ci"]
        span = f"[{fold_ci[0]:+.3f}, {fold_ci[1]:+.3f}]" if fold_ci else "-"
        lines.append(_line(row["fold"], str(row["real_questions"]), span, dict(row)))
    m = res["mean"]
    lines.append(_line("mean", "", "", m))
    lines.append("")
    lacking = [row["fold"] for row in res["rows"] if row["adversary_gap"] is None]
    if lacking:
        lines.append(
            f"  no mean gap: no adversary AUC in fold {', '.join(lacking)} (too few replies of a role)"
        )
    if res["adversary_gap"] is not None:
        ci = res["adversary_gap_ci"]
        span = f"  [{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else ""
        lines.append(
            f"  gap, simulated (at each fold's real size) minus real, mean over the folds   "
            f"{res['adversary_gap']:+.3f}{span}   (target within +-{GAP_TARGET:.2f}: "
            f"{res['adversary_gap_verdict']})"
        )
        lines.append(
            "  (the interval joins each fold's question bootstrap, which holds the probe's scores fixed; a "
            "probe refitted per set of questions spreads 1.1-1.5 times as far: read it as a lower bound)"
        )
        wide = res.get("adversary_gap_ci_refitted")
        if wide:
            lines.append(
                f"  the same, each fold's real AUC spread as its sets' (the probe refitted)      "
                f"{res['adversary_gap']:+.3f}  [{wide[0]:+.3f}, {wide[1]:+.3f}]   "
                f"({res['adversary_gap_verdict_refitted']})"
            )
    span_t = res["transfer_auc_range"]
    if m["transfer_auc"] is not None and span_t:
        lo, hi = span_t
        ceiling = m["real_trained_auc"]
        real = "" if ceiling is None else f"; trained on the real fitting questions instead: {ceiling:.3f}"
        lines.append(
            f"  sim-to-real transfer, mean over the folds                                     "
            f"{m['transfer_auc']:.3f}  (folds {lo:.3f}-{hi:.3f}{real})"
        )
    if res.get("by_round"):
        lines += [
            "",
            "by round, mean over the folds",
            f"  {'round':<8}{'folds':>6}{'transfer':>10}{'real adv-vs-honest':>20}{'sim adv-vs-honest':>19}",
        ]
        for rm in res["by_round"]:
            lines.append(
                f"  {rm['round']:<8}{rm['folds']:>6}{_f(rm['transfer_auc']):>10}"
                f"{_f(rm['real_adversary_auc']):>20}{_f(rm['sim_adversary_auc']):>19}"
            )
    return "\n".join(lines)
