"""Which debates a profile fits and which it is judged on: the split by question, and whose debates they are.

Here, below the simulator, because a benchmark of a source's own questions (tomacs.transcripts.benchmark)
reads the same fitting questions as the profile fit (tomacs.sim.fit_episodes), and both must split alike.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tomacs.transcripts.schema import Debate

__all__ = ["debate_models", "select_debates", "split_questions"]


def debate_models(d: Debate) -> set[str]:
    """The models of a debate's honest agents (a debate-level model fills in for agents without one)."""
    return {a.model or d.model or "?" for a in d.agents if a.role == "honest"}


def split_questions(
    debates: Sequence[Debate], fraction: float = 0.7, seed: int = 0
) -> tuple[list[Debate], list[Debate]]:
    """Seeded split of the QUESTIONS into fitting and held-out sets; every debate of a question
    goes with it. The order of the input does not matter (keys are sorted before shuffling)."""
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"--split must be between 0 and 1 (exclusive), got {fraction}")
    keys = sorted({d.question_key for d in debates})
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(keys))
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
) -> list[Debate]:
    """The debates a check should score: with `model`, those whose honest agents ran on it; with
    `held_out`, only the questions a profile fitted with `--split`/`--split-seed` did not see (the
    same split as `run`, so a text model or a policy is judged on questions held out from its fit)."""
    out = list(debates)
    if model is not None:
        models = sorted({m for d in out for m in debate_models(d)})
        out = [d for d in out if model in debate_models(d)]
        if not out:
            raise ValueError(
                f"no debate has honest agents of model {model!r}; models there: {', '.join(models)}"
            )
    if held_out:
        out = split_questions(out, split, seed)[1]
    return out
