"""Issue 38, stop 76: do the simulated adversaries' cues live in the bank sentences themselves? Banks cut
in halves A / B (every other entry, `make_halves.py`); a probe trained on A's replies, scored on A's (CV by
question), on B's (the other half's templates; folds by question over both) and on the real held-out ones.

Usage: python scripts/oneoff/s76/halves_probe.py RUN_A RUN_B REAL_DIR MODEL
"""

import sys

import numpy as np

from tomacs.analysis.text_report import embedding_function, load_side
from tomacs.analysis.texts import cv_auc, replies_of, transfer_auc
from tomacs.sim.fit_episodes import split_questions
from tomacs.sim.from_episodes import select_debates

a_p, b_p, real_p, model = sys.argv[1:5]
emb = embedding_function("minilm")
_, held = split_questions(select_debates(load_side([real_p]), model), 0.7, 0)
sides = {
    "A": replies_of(load_side([a_p]), False),
    "B": replies_of(load_side([b_p]), False),
    "real": replies_of(held, True),
}
data = {}
for k, reps in sides.items():
    rs = [r for r in reps if r.acting]
    data[k] = (
        emb([r.text for r in rs]),
        np.array([r.adversarial for r in rs], float),
        [r.question for r in rs],
        np.array([r.round for r in rs]),
    )
for rnd in (0, 1, 2, 3):

    def sel(k, rnd=rnd):
        x, y, g, r = data[k]
        m = np.ones(len(y), bool) if rnd == 0 else (r == rnd)
        return x[m], y[m], [gg for gg, mm in zip(g, m, strict=True) if mm]

    xa, ya, ga = sel("A")
    xb, yb, gb = sel("B")
    xr, yr, gr = sel("real")
    print(
        f"round {rnd or 'all'}: A cv {cv_auc(xa, ya, ga):.3f}  B cv {cv_auc(xb, yb, gb):.3f}  "
        f"A->B {transfer_auc(xa, ya, ga, xb, yb, gb):.3f}  B->A {transfer_auc(xb, yb, gb, xa, ya, ga):.3f}  "
        f"A->real {transfer_auc(xa, ya, ga, xr, yr, gr):.3f}  "
        f"B->real {transfer_auc(xb, yb, gb, xr, yr, gr):.3f}",
        flush=True,
    )
