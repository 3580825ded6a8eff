"""Choosing a profile's form by cross-validation on its FITTING questions (issue 39): which optional
mechanisms it carries (`select_mechanisms`), its lapse rate (`choose_lapse`) and how strongly a small source
is pulled toward a prior (`choose_shrink`). Folds split questions, never a question's debates; the held-out
questions stay untouched for the scorecard (tomacs.sim.heldout)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from tomacs.sim.fit_episodes import (
    MECHANISMS,
    QUAD_NODES,
    FitResult,
    Observations,
    fit,
    loglik,
    n_answers,
    observations,
)
from tomacs.sim.model import SimProfile
from tomacs.transcripts.schema import Debate

CV_FOLDS = 3
MIN_CV_QUESTIONS = 4 * CV_FOLDS  # fewer fitting questions: no choice is made, no mechanism fitted
# A mechanism is kept when it beats none by more than this (nats per answer, cross-validated): below
# it the difference is the optimiser's tolerance, not the data (a mechanism whose fitted value is
# neutral gains about 1e-6).
MIN_CV_GAIN = 1e-4


def _fold_sets(
    debates: Sequence[Debate], folds: int, seed: int, model: str | None
) -> Iterator[tuple[list[Debate], list[Observations]]]:
    """Per fold: the debates fitted (the other folds) and the observations scored (this fold). Folds split
    QUESTIONS, seeded: every debate of a question goes with it."""
    keys = sorted({d.question_key for d in debates})
    if len(keys) < folds:
        raise ValueError(f"{len(keys)} questions cannot make {folds} folds for cross-validation")
    perm = np.random.default_rng(seed).permutation(len(keys))
    fold_of = {keys[i]: k % folds for k, i in enumerate(perm)}
    for k in range(folds):
        train = [d for d in debates if fold_of[d.question_key] != k]
        yield train, observations([d for d in debates if fold_of[d.question_key] == k], model)


def _scored(res: FitResult, blocks: Sequence[Observations], nodes: int = QUAD_NODES) -> float:
    """The log-likelihood of a fold's held-out blocks under a fit to the other folds."""
    return loglik(
        res.profile,
        blocks,
        nodes,
        lure=res.target_lure,
        acc_by=res.accuracy_by_benchmark,
        pers_by=res.persuasion_by_model,
    )


def _cv_path(
    debates: Sequence[Debate],
    order: Sequence[float],
    fit_at: Callable[[Sequence[Debate], float, FitResult | None], FitResult],
    folds: int,
    seed: int,
    model: str | None,
) -> tuple[float, dict[float, float]]:
    """Cross-validated log-likelihood per answer of each value of a setting, fitted in `order` on each
    fold (`fit_at(train, value, last fit)`, so a fit may start from the last value's optimum); and the
    value chosen: the best, the smallest on a tie within MIN_CV_GAIN (no answer to score: 0)."""
    total, n_ans = dict.fromkeys(order, 0.0), 0
    for train, blocks in _fold_sets(debates, folds, seed, model):
        n_ans += n_answers(blocks)
        path: FitResult | None = None
        for value in order:
            path = fit_at(train, value, path)
            total[value] += _scored(path, blocks)
    scores = {v: (t / n_ans if n_ans else float("nan")) for v, t in total.items()}
    if not n_ans:
        return 0.0, scores
    best = max(scores.values())
    return min(v for v in order if scores[v] >= best - MIN_CV_GAIN), scores


def cv_loglik(
    debates: Sequence[Debate],
    mechanisms: Sequence[Sequence[str]],
    model: str | None = None,
    folds: int = CV_FOLDS,
    seed: int = 0,
    nodes: int = QUAD_NODES,
    by_benchmark: bool = True,
    by_sender: bool = True,
    restarts: int = 1,
) -> dict[tuple[str, ...], float]:
    """Log-likelihood per answer of each fold's questions under a fit to the other folds, for no
    mechanism (key ``()``) and for each set in `mechanisms`. Each set starts from the fold's fit without
    mechanisms (`fit(warm=...)`), so it differs from it only by what the mechanisms add: a poor local
    optimum of one fit cannot pass for a mechanism's gain. Folds split QUESTIONS, seeded."""
    configs = [()] + [tuple(m) for m in mechanisms]
    total = dict.fromkeys(configs, 0.0)
    n_ans = 0
    kw: dict[str, Any] = dict(
        model=model, nodes=nodes, fit_lure=True, by_benchmark=by_benchmark, by_sender=by_sender
    )
    for train, blocks in _fold_sets(debates, folds, seed, model):
        n_ans += n_answers(blocks)
        nested = fit(train, restarts=restarts, **kw)
        for cfg in configs:
            res = nested if not cfg else fit(train, extra=list(cfg), warm=nested, **kw)
            total[cfg] += _scored(res, blocks, nodes)
    return {cfg: (v / n_ans if n_ans else float("nan")) for cfg, v in total.items()}


def select_mechanisms(
    debates: Sequence[Debate],
    model: str | None = None,
    candidates: Sequence[str] = tuple(MECHANISMS),
    folds: int = CV_FOLDS,
    seed: int = 0,
    by_benchmark: bool = True,
    by_sender: bool = True,
) -> tuple[list[str], dict[str, float]]:
    """Which mechanisms this model's debates support: each candidate alone against none, by
    cross-validated log-likelihood per answer on the FITTING questions (the held-out questions stay
    untouched for the scorecard). A mechanism is kept when it beats none by `MIN_CV_GAIN`; returns
    (kept, scores by configuration: "none", each candidate, and "all" when more than one is kept)."""
    unknown = [m for m in candidates if m not in MECHANISMS]
    if unknown:
        raise ValueError(f"unknown mechanism(s) {unknown}; known: {', '.join(MECHANISMS)}")

    sets = [(m,) for m in candidates] + ([tuple(candidates)] if len(candidates) > 1 else [])
    cv = cv_loglik(debates, sets, model, folds, seed, by_benchmark=by_benchmark, by_sender=by_sender)
    scores = {"none": cv[()]} | {m: cv[(m,)] for m in candidates}
    kept = [m for m in candidates if scores[m] > scores["none"] + MIN_CV_GAIN]
    if len(kept) > 1:
        scores["all"] = cv[tuple(candidates)]
        if len(kept) < len(candidates) or scores["all"] <= max(scores[m] for m in kept) + MIN_CV_GAIN:
            kept = [max(kept, key=lambda m: scores[m])]  # together no better: the best alone
    return kept, scores


# Strengths of the pull toward the prior (`fit(shrink=...)`) that `choose_shrink` compares (0: the plain fit).
SHRINK_GRID: tuple[float, ...] = (0.0, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0)


def choose_shrink(
    debates: Sequence[Debate],
    prior: SimProfile,
    model: str | None = None,
    extra: Sequence[str] = (),
    grid: Sequence[float] = SHRINK_GRID,
    folds: int = CV_FOLDS,
    seed: int = 0,
    by_benchmark: bool = True,
    by_sender: bool = True,
    restarts: int = 3,
    fixed: dict[str, float] | None = None,
) -> tuple[float, dict[float, float]]:
    """How strongly a source's fit should be pulled toward `prior`: each strength of `grid` scored by
    cross-validated log-likelihood per answer on the FITTING questions (folds by question); the best
    wins, the weaker on a tie within MIN_CV_GAIN. No answer to score: 0, the plain fit.

    Each fold's fit uses the `restarts` starting points the profile's own fit uses (`from_episodes.run`),
    plus the prior and the last strength's optimum, so the folds score the estimator that is shipped.
    With one start a fold's optimum at some strengths was a poorer local one, and on gpt-4o's 36
    questions neighbouring strengths scored -0.18 and -0.59 per answer
    (docs/experiments/2026-11-29-sim-shrink-choice-restarts.md)."""
    kw: dict[str, Any] = dict(
        model=model, fit_lure=True, by_benchmark=by_benchmark, by_sender=by_sender, fixed=fixed
    )

    def fit_at(train: Sequence[Debate], lam: float, path: FitResult | None) -> FitResult:
        return fit(train, restarts=restarts, extra=list(extra), prior=prior, shrink=lam, also_from=path, **kw)

    # from the prior down, each fit also starting at the last strength's optimum
    return _cv_path(debates, sorted(grid, reverse=True), fit_at, folds, seed, model)


# Lapse rates (`SimProfile.lapse`) that `choose_lapse` compares (0: none, the plain update rule).
LAPSE_GRID: tuple[float, ...] = (0.0, 0.005, 0.01, 0.02, 0.05, 0.1)


def choose_lapse(
    debates: Sequence[Debate],
    model: str | None = None,
    extra: Sequence[str] = (),
    grid: Sequence[float] = LAPSE_GRID,
    folds: int = CV_FOLDS,
    seed: int = 0,
    by_benchmark: bool = True,
    by_sender: bool = True,
    restarts: int = 3,
) -> tuple[float, dict[float, float]]:
    """The lapse rate a source's profile carries: each rate of `grid` held fixed in the fit and scored by
    cross-validated log-likelihood per answer on the FITTING questions (folds by question); the best wins,
    the smaller on a tie within MIN_CV_GAIN. No answer to score: 0.

    Chosen, not fitted: the maximum-likelihood lapse on the fitting questions is 0 (a fit explains its own
    answers; gpt-4o's 36 questions, docs/experiments/2026-11-29-sim-lapse.md), while a fold's fit pays for
    every answer of the other questions it made near-impossible. Each fold fits the rates in increasing
    order: the first from the profile's `restarts` starts, each next one also from the last one's optimum."""
    kw: dict[str, Any] = dict(
        model=model, extra=list(extra), fit_lure=True, by_benchmark=by_benchmark, by_sender=by_sender
    )

    def fit_at(train: Sequence[Debate], eps: float, path: FitResult | None) -> FitResult:
        starts = restarts if path is None else 1
        return fit(train, restarts=starts, fixed={"lapse": eps} if eps else None, also_from=path, **kw)

    return _cv_path(debates, sorted(grid), fit_at, folds, seed, model)
