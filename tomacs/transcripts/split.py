"""Which debates a profile fits and which it is judged on: the split by question, and whose debates they are.

Here, below the simulator, because a benchmark of a source's own questions (tomacs.transcripts.benchmark)
reads the same fitting questions as the profile fit (tomacs.sim.fit_episodes), and both must split alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from tomacs.transcripts.schema import Debate

__all__ = ["Fold", "debate_models", "held_out_label", "parse_fold", "select_debates", "split_questions"]


def debate_models(d: Debate) -> set[str]:
    """The models of a debate's honest agents (a debate-level model fills in for agents without one)."""
    return {a.model or d.model or "?" for a in d.agents if a.role == "honest"}


class Fold(NamedTuple):
    """The k-th of K folds of the questions (1-based), held out from a cross-fit."""

    k: int
    of: int

    def __str__(self) -> str:
        return f"{self.k}/{self.of}"


def parse_fold(text: str | Fold | None) -> Fold | None:
    """`--fold k/K` -> Fold(k, K); None passes through.

    Why folds: a 70/30 split scores a fit on 9-22 real questions, too few to tell a gap of 0.05 from noise.
    Fitted K times, each time without one fold, a fit is scored on every question once, never one it saw."""
    if text is None or isinstance(text, Fold):
        return text
    k, sep, of = str(text).strip().partition("/")
    if not sep or not k.strip().isdigit() or not of.strip().isdigit():
        raise ValueError(f"--fold must be k/K (e.g. 2/3: the 2nd of 3 folds held out), got {text!r}")
    fold = Fold(int(k), int(of))
    if fold.of < 2 or not 1 <= fold.k <= fold.of:
        raise ValueError(f"--fold {text}: K must be >= 2 and k in 1..K")
    return fold


def held_out_label(split: float, seed: int, fold: Fold | None = None) -> str:
    """How a report names its real side's held-out questions, so that a reader can rebuild the split."""
    if fold is not None:
        return f" (fold {fold} of a cross-fit, seed {seed})"
    return f" (held-out questions, split {split}, seed {seed})"


def split_questions(
    debates: Sequence[Debate], fraction: float = 0.7, seed: int = 0, fold: Fold | None = None
) -> tuple[list[Debate], list[Debate]]:
    """Seeded split of the QUESTIONS into fitting and held-out sets; every debate of a question
    goes with it. The order of the input does not matter (keys are sorted before shuffling).

    With `fold` (k of K), the held-out set is every K-th question of the same seeded order, starting at
    the k-th, and `fraction` is not used: the K folds of one seed hold out each question exactly once."""
    keys = sorted({d.question_key for d in debates})
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(keys))
    if fold is not None:
        if fold.of > len(keys):
            raise ValueError(f"--fold {fold}: {fold.of} folds but only {len(keys)} questions")
        fit_keys = {keys[i] for j, i in enumerate(perm) if j % fold.of != fold.k - 1}
    else:
        if not 0.0 < fraction < 1.0:
            raise ValueError(f"--split must be between 0 and 1 (exclusive), got {fraction}")
        n_fit = int(round(fraction * len(keys)))
        n_fit = min(max(n_fit, 1), len(keys) - 1) if len(keys) > 1 else len(keys)
        fit_keys = {keys[i] for i in perm[:n_fit]}
    fit_d = [d for d in debates if d.question_key in fit_keys]
    held = [d for d in debates if d.question_key not in fit_keys]
    return fit_d, held


def select_debates(
    debates: Sequence[Debate],
    model: str | None = None,
    held_out: bool = False,
    split: float = 0.7,
    seed: int = 0,
    fold: Fold | None = None,
) -> list[Debate]:
    """The debates a check should score: with `model`, those whose honest agents ran on it; with
    `held_out`, only the questions a profile fitted with `--split`/`--split-seed` did not see (the
    same split as `run`, so a text model or a policy is judged on questions held out from its fit; with
    `fold`, that fold of a cross-fit)."""
    out = list(debates)
    if model is not None:
        models = sorted({m for d in out for m in debate_models(d)})
        out = [d for d in out if model in debate_models(d)]
        if not out:
            raise ValueError(
                f"no debate has honest agents of model {model!r}; models there: {', '.join(models)}"
            )
    if held_out:
        out = split_questions(out, split, seed, fold)[1]
    return out
