"""Per-round style, honest vs adversary, sim vs real (held-out) — issue 38 stop 76 diagnostic."""

import sys

import numpy as np

from tomacs.analysis.text_report import load_side
from tomacs.analysis.texts import _auc, _cohen_d, replies_of, style_of
from tomacs.sim.fit_episodes import split_questions
from tomacs.sim.from_episodes import select_debates

sim_p, real_p, model = sys.argv[1:4]
sim = replies_of(load_side([sim_p]), False)
fit, held = split_questions(select_debates(load_side([real_p]), model), 0.7, 0)
real = replies_of(held, True)
realf = replies_of(fit, True)
keys = [
    "words",
    "paragraphs",
    "option letters",
    "others/100w",
    "agreeing/100w",
    "hedges/100w",
    "asserting/100w",
]
for rnd in (1, 2, 3):
    print(f"round {rnd}")
    for name, reps in (("sim", sim), ("real", real), ("realfit", realf)):
        rs = [r for r in reps if r.round == rnd and r.acting]
        st = [(r.adversarial, style_of(r.text), r.topic_density, r.answer_sentences) for r in rs]
        y = np.array([a for a, *_ in st])
        out = []
        for k in keys:
            v = np.array([s[k] for _, s, *_ in st])
            out.append(f"{k[:6]} {v[~y].mean():.2f}/{v[y].mean():.2f} d{_cohen_d(v[y], v[~y]):+.2f}")
        w = np.array([s["words"] for _, s, *_ in st])
        td = np.array([t if t is not None else np.nan for *_, t, _ in st])
        out.append(f"topic {np.nanmean(td[~y]):.2f}/{np.nanmean(td[y]):.2f}")
        print(f"  {name:<7} n={len(y)} lenAUC {_auc(y, w):.3f} | " + " | ".join(out))
