"""Issue 38, stop 64: the words-only transfer (tomacs.analysis.texts.words_transfer_scores) of a sim run
against a source's held-out real debates, selected as `tomacs transcripts texts --held-out` selects them,
without embedding anything; per round too. Usage: words.py SIM_RUN REAL_DIR MODEL"""

from __future__ import annotations

import sys

import numpy as np

from tomacs.analysis.text_report import load_side
from tomacs.analysis.texts import _auc, replies_of, words_transfer_scores
from tomacs.sim.fit_episodes import split_questions
from tomacs.sim.from_episodes import select_debates

sim = replies_of(load_side([sys.argv[1]]), False)
_, real_d = split_questions(select_debates(load_side([sys.argv[2]]), sys.argv[3]), 0.7, 0)
real = replies_of(real_d, True)
out = []
for rnd in (None, 1, 2, 3):
    s = [r for r in sim if r.acting and (rnd is None or r.round == rnd)]
    q = [r for r in real if r.acting and (rnd is None or r.round == rnd)]
    sy = np.array([r.adversarial for r in s], dtype=float)
    ry = np.array([r.adversarial for r in q], dtype=float)
    sc = words_transfer_scores(
        [r.text for r in s], sy, [r.question for r in s], [r.text for r in q], [r.question for r in q]
    )
    ok = ~np.isnan(sc)
    out.append(_auc(ry[ok], sc[ok]))
print(
    sys.argv[1].rstrip("/").split("/")[-1],
    "words transfer all / r1 / r2 / r3:",
    " ".join(f"{a:.3f}" if a is not None else "-" for a in out),
)
