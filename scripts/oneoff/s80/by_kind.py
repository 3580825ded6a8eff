"""Issue 38, stop 80: adversary against honest, real (a cross-fit fold's held-out questions) and simulated,
on the questions of MAD-Follower's answer scale and on its other questions apart, and how the acting
replies split between the two (the probe and folds of `tomacs transcripts texts`, MiniLM).

Usage: .venv/bin/python by_kind.py MODEL REAL_SOURCE K/N SIM_RUN
"""

from __future__ import annotations

import sys

import numpy as np

from tomacs.analysis.text_report import embedding_function, load_side
from tomacs.analysis.texts import cv_auc, replies_of
from tomacs.sim.fit_episodes import split_questions
from tomacs.sim.from_episodes import select_debates
from tomacs.sim.text_model import _scale_text, scale_answers
from tomacs.transcripts.split import parse_fold


def main(model: str, real_src: str, fold: str, run: str) -> None:
    real_all = select_debates(load_side([real_src]), model)
    scale = scale_answers(real_all)
    _, real = split_questions(real_all, 0.7, 0, parse_fold(fold))
    embed = embedding_function("minilm")
    for side, debates in (("real", real), ("sim", load_side([run]))):
        kind = {d.question_key: any(_scale_text(o) in scale for o in d.options or ()) for d in debates}
        reps = [r for r in replies_of(debates, side == "real") if r.acting]
        x = embed([r.text for r in reps])
        y = np.array([r.adversarial for r in reps], dtype=int)
        g = [r.question for r in reps]
        row = [f"{side}: all {cv_auc(x, y, g)} (n {len(reps)}, adversaries {int(y.sum())})"]
        for k, name in ((True, "scale"), (False, "other")):
            m = np.array([kind[q] == k for q in g])
            gg = [q for q, b in zip(g, m, strict=True) if b]
            row.append(f"{name} {cv_auc(x[m], y[m], gg)} (n {int(m.sum())}, questions {len(set(gg))})")
        print("; ".join(row))


if __name__ == "__main__":
    main(*sys.argv[1:5])
