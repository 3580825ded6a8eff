"""Issue 38, stop 76: how far a real adversary AUC moves between sets of held-out size, against the interval
the texts check prints for one set. Draws of K questions from ALL the model's real questions (fitting and held
out), the probe cross-validated afresh on each draw; and the question-bootstrap interval of the held-out set.

Usage: python scripts/oneoff/s76/subset_spread.py REAL_DIR MODEL [DRAWS]
"""

from __future__ import annotations

import sys

import numpy as np

from tomacs.analysis.text_report import embedding_function, load_side
from tomacs.analysis.texts import auc_interval, cv_auc, oof_scores, replies_of
from tomacs.sim.fit_episodes import split_questions
from tomacs.sim.from_episodes import select_debates

real_p, model = sys.argv[1], sys.argv[2]
draws = int(sys.argv[3]) if len(sys.argv) > 3 else 40
debates = select_debates(load_side([real_p]), model)
fit, held = split_questions(debates, 0.7, 0)
held_q = {d.question_key for d in held}
reps = [r for r in replies_of(debates, True) if r.acting]
x = embedding_function("minilm")([r.text for r in reps])
y = np.array([r.adversarial for r in reps], dtype=float)
g = [r.question for r in reps]
keys = sorted(set(g))
k = len(held_q)
hm = np.array([q in held_q for q in g])
hg = [q for q, m in zip(g, hm, strict=True) if m]
auc_h = cv_auc(x[hm], y[hm], hg)
ci = auc_interval(y[hm], oof_scores(x[hm], y[hm], hg, 5, 0), hg)
fm = ~hm
auc_f = cv_auc(x[fm], y[fm], [q for q, m in zip(g, fm, strict=True) if m])
rng = np.random.default_rng(0)
vals = []
for _ in range(draws):
    pick = set(rng.choice(keys, size=k, replace=False).tolist())
    m = np.array([q in pick for q in g])
    a = cv_auc(x[m], y[m], [q for q, mm in zip(g, m, strict=True) if mm])
    if a is not None:
        vals.append(a)
v = np.array(vals)
print(
    f"{model}: {len(keys)} questions, sets of {k}; held out {auc_h:.3f} {ci}, fitting {auc_f:.3f}; "
    f"{len(v)} draws of {k}: mean {v.mean():.3f} sd {v.std(ddof=1):.3f} "
    f"2.5-97.5 % [{np.percentile(v, 2.5):.3f}, {np.percentile(v, 97.5):.3f}]; "
    f"held-out set's bootstrap sd-equivalent {(ci[1] - ci[0]) / 3.92:.3f}"
)
