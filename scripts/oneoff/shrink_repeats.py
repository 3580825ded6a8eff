"""One-off (issue 39, 2026-11-29): does averaging choose_shrink's cross-validation over fold seeds steady
gpt-4o's choice? Prints the CV curve per fold seed and averaged, the choice, and (diagnostic only, never
used to choose) the held-out log-lik per answer of every strength against the paper profile."""

from __future__ import annotations

import os
import sys
from dataclasses import replace

import numpy as np

from tomacs.sim import fit_choice as fc
from tomacs.sim import fit_episodes as fe
from tomacs.sim.from_episodes import _mechanism_choice, paper_profile, read_debates

path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.environ.get("TOMACS_DATA", "../shared/data"),
    "debates/multi-agent-attack/mmlu/adv_100_3_3_1-gpt-4o-gpt-4o",
)
model = sys.argv[2] if len(sys.argv) > 2 else "gpt-4o"
seeds = [int(s) for s in (sys.argv[3] if len(sys.argv) > 3 else "0,1,2").split(",")]
debates = read_debates([path], model)
fit_d, held = fe.split_questions(debates, 0.7, 0)
kept, _ = _mechanism_choice(None, fit_d, model, 0, True, True)
paper = paper_profile()
print("kept mechanisms", kept, "fit questions", len({d.question_key for d in fit_d}))
curves = []
for s in seeds:
    lam, scores = fc.choose_shrink(fit_d, paper, model, kept, seed=s)
    curves.append([scores[g] for g in fc.SHRINK_GRID])
    print(f"fold seed {s}: choice {lam:g} |", " ".join(f"{v:.4f}" for v in curves[-1]), flush=True)
mean = np.mean(curves, axis=0)
best = mean.max()
choice = min(g for g, v in zip(fc.SHRINK_GRID, mean, strict=True) if v >= best - fc.MIN_CV_GAIN)
print("averaged:", " ".join(f"{v:.4f}" for v in mean), "-> choice", choice)
blocks = fe.observations(held, model)
n = fe.n_answers(blocks)
kw = dict(model=model, restarts=3, extra=kept, fit_lure=True, by_benchmark=True, by_sender=True, prior=paper)
for g in fc.SHRINK_GRID:
    res = fe.fit(fit_d, shrink=g, **kw)
    ll = fe.loglik(res.profile, blocks, lure=res.target_lure, acc_by=res.accuracy_by_benchmark,
                   pers_by=res.persuasion_by_model) / n
    print(f"held out (diagnostic) lambda {g:g}: {ll:.4f}", flush=True)
print(f"held out paper profile: {fe.loglik(replace(paper, n_cand=res.profile.n_cand), blocks) / n:.4f}")
