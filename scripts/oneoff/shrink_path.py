"""One-off (issue 39, 2026-11-29): are gpt-4o's jumpy shrinkage curves the optimiser's? Each fit starts
from the prior, from `restarts` random points and from the previous strength's optimum (the path, from
lambda=1 down), in the cross-validation (fold seed 0) and for the final fits scored on the held-out
questions (diagnostic only, never used to choose)."""

from __future__ import annotations

import os
import sys
from dataclasses import replace

from tomacs.sim import fit_choice as fc
from tomacs.sim import fit_episodes as fe
from tomacs.sim.from_episodes import _mechanism_choice, paper_profile, read_debates

path = os.path.join(os.environ["TOMACS_DATA"], "debates/multi-agent-attack/mmlu/adv_100_3_3_1-gpt-4o-gpt-4o")
model, restarts = "gpt-4o", int(sys.argv[1]) if len(sys.argv) > 1 else 3
debates = read_debates([path], model)
fit_d, held = fe.split_questions(debates, 0.7, 0)
kept, _ = _mechanism_choice(None, fit_d, model, 0, True, True)
paper = paper_profile()
kw = dict(model=model, extra=kept, fit_lure=True, by_benchmark=True, by_sender=True, prior=paper)


def score(res: fe.FitResult, blocks: list) -> float:
    return fe.loglik(res.profile, blocks, lure=res.target_lure, acc_by=res.accuracy_by_benchmark,
                     pers_by=res.persuasion_by_model)


grid = sorted(fc.SHRINK_GRID, reverse=True)
total, n_ans = dict.fromkeys(grid, 0.0), 0
for train, blocks in fc._fold_sets(fit_d, fc.CV_FOLDS, 0, model):
    n_ans += fe.n_answers(blocks)
    prev = None
    for lam in grid:
        prev = fe.fit(train, restarts=restarts, shrink=lam, also_from=prev, **kw)
        total[lam] += score(prev, blocks)
cv = {g: total[g] / n_ans for g in grid}
best = max(cv.values())
choice = min(g for g in grid if cv[g] >= best - fc.MIN_CV_GAIN)
print(f"restarts {restarts}, path: cv", " ".join(f"{g:g}:{cv[g]:.4f}" for g in sorted(grid)), "-> choice", choice)
hb = fe.observations(held, model)
n = fe.n_answers(hb)
prev = None
for lam in grid:
    prev = fe.fit(fit_d, restarts=restarts, shrink=lam, also_from=prev, **kw)
    print(f"held out (diagnostic) lambda {lam:g}: {score(prev, hb) / n:.4f} (fit loglik/ans {prev.loglik / prev.n_answers:.4f})", flush=True)
print(f"held out paper profile: {fe.loglik(replace(paper, n_cand=prev.profile.n_cand), hb) / n:.4f}")
