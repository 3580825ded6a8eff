"""Issue 38, stop 65: does MiniLM's 256-token window hide the role cues? For a sim run and a source's held-out
real debates: the share of acting replies longer than the window, per side and role, and the words-only
transfer on whole replies against the same replies cut to what MiniLM reads.
Usage: trunc.py SIM_RUN REAL_DIR MODEL"""

from __future__ import annotations

import sys

import numpy as np
from transformers import AutoTokenizer

from tomacs.analysis.text_report import load_side
from tomacs.analysis.texts import _auc, replies_of, words_transfer_scores
from tomacs.embedding.embedders import minilm_model_path
from tomacs.sim.fit_episodes import split_questions
from tomacs.sim.from_episodes import select_debates

WINDOW = 256
tok = AutoTokenizer.from_pretrained(minilm_model_path())
sim = [r for r in replies_of(load_side([sys.argv[1]]), False) if r.acting]
_, real_d = split_questions(select_debates(load_side([sys.argv[2]]), sys.argv[3]), 0.7, 0)
real = [r for r in replies_of(real_d, True) if r.acting]


def cut(text: str) -> tuple[str, int]:
    enc = tok(text, truncation=False, return_offsets_mapping=True, add_special_tokens=False)
    n = len(enc["input_ids"])
    if n <= WINDOW - 2:
        return text, n
    end = enc["offset_mapping"][WINDOW - 3][1]
    return text[:end], n


for name, reps in (("sim", sim), ("real", real)):
    for adv in (False, True):
        ns = [cut(r.text)[1] for r in reps if r.adversarial == adv]
        print(
            f"{name} {'adv' if adv else 'hon'}: n={len(ns)} tokens median {np.median(ns):.0f} "
            f"over window {np.mean(np.array(ns) > WINDOW - 2):.2f}"
        )
sy = np.array([r.adversarial for r in sim], dtype=float)
ry = np.array([r.adversarial for r in real], dtype=float)
for label, f in (
    ("whole", lambda t: t),
    ("window", lambda t: cut(t)[0]),
    ("after window", lambda t: t[len(cut(t)[0]) :]),
):
    sc = words_transfer_scores(
        [f(r.text) for r in sim],
        sy,
        [r.question for r in sim],
        [f(r.text) for r in real],
        [r.question for r in real],
    )
    ok = ~np.isnan(sc)
    print(f"words transfer, {label}: {_auc(ry[ok], sc[ok]):.3f}")
