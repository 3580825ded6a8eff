"""Issue 38, stop 80: how much replies are about their question (`analysis.texts.about`: topic density, and
the sentences naming the answer's text), by question kind (MAD-Follower's answer scale or not), role and
phase, real and simulated.

Usage: .venv/bin/python density.py MODEL REAL_SOURCE SIM_RUN...
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import numpy as np

from tomacs.analysis.texts import replies_of
from tomacs.sim.text_model import _scale_text, scale_answers
from tomacs.transcripts import load_debates
from tomacs.transcripts.schema import Debate
from tomacs.transcripts.split import select_debates


def table(debates: Sequence[Debate], scale: set[str], real: bool) -> str:
    kind = {d.question_key: any(_scale_text(o) in scale for o in d.options or ()) for d in debates}
    g: dict[str, list[tuple[float, float]]] = {}
    for r in replies_of(debates, real):
        if r.topic_density is None:
            continue
        key = f"{'scale' if kind[r.question] else 'other'}/{'adv' if r.adversarial else 'hon'}/"
        key += "r1" if r.round == 1 else "r2+"
        g.setdefault(key, []).append((r.topic_density, r.answer_sentences or 0.0))
    return " ".join(
        f"{k}={np.mean([a for a, _ in v]):.2f}|{np.mean([b for _, b in v]):.2f}" for k, v in sorted(g.items())
    )


def main(model: str, real: str, runs: list[str]) -> None:
    debates = select_debates(load_debates([real]), model)
    scale = scale_answers(debates)
    print("real", table(debates, scale, True))
    for run in runs:
        print(run.rstrip("/").split("/")[-1], table(load_debates([run]), scale, False))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
