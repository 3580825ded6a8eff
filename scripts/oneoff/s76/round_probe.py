"""Per-round adversary probe AUC (CV by question), sim vs real held-out vs real fitting; and the same on the
first N words only — issue 38 stop 76 diagnostic."""

import sys

import numpy as np

from tomacs.analysis.text_report import embedding_function, load_side
from tomacs.analysis.texts import cv_auc, replies_of
from tomacs.sim.fit_episodes import split_questions
from tomacs.sim.from_episodes import select_debates

sim_p, real_p, model = sys.argv[1:4]
cut = int(sys.argv[4]) if len(sys.argv) > 4 else 0
rounds = [int(x) for x in (sys.argv[5] if len(sys.argv) > 5 else "1").split(",")]
emb = embedding_function("minilm")
sim = replies_of(load_side([sim_p]), False)
fit, held = split_questions(select_debates(load_side([real_p]), model), 0.7, 0)
sides = {"sim": sim, "real": replies_of(held, True), "realfit": replies_of(fit, True)}
for rnd in rounds:
    for name, reps in sides.items():
        rs = [r for r in reps if r.round == rnd and r.acting]
        if name == "sim":
            rs = rs[:900]
        texts = [r.text for r in rs]
        tail = [" ".join(t.split()[cut:]) or "." for t in texts] if cut else None
        head = [" ".join(t.split()[:cut]) for t in texts] if cut else texts
        y = np.array([r.adversarial for r in rs])
        g = [r.question for r in rs]
        a = cv_auc(emb(head), y, g, 5, 0)
        b = cv_auc(emb(tail), y, g, 5, 0) if cut else None
        print(
            f"round {rnd} {name:<8} n={len(y)} head{cut or 'all'} {a:.3f}" + (f" tail {b:.3f}" if b else ""),
            flush=True,
        )
