"""Prototype (issue 39): a lapse chosen by 3-fold cross-validation on the fitting questions (each fold fitted
with the lapse fixed, from the profile's 3 starts), then the fit at the chosen lapse scored on the held-out
questions. Mechanisms: those the shipped profile kept. Usage: lapse_grid.py NAME (a conf/profiles name)."""

import sys
import time

import yaml

from tomacs.sim import fit_choice as fc
from tomacs.sim import fit_episodes as fe
from tomacs.sim import heldout as ho
from tomacs.sim.from_episodes import paper_profile, read_debates

GRID = (0.0, 0.005, 0.01, 0.02, 0.05, 0.1)
name = sys.argv[1]
prov = yaml.safe_load(open(f"conf/profiles/{name}.yaml"))["provenance"]
src = [s.replace("../shared/data", "/work/shared/data") for s in prov["sources"]]
model = prov["models"][0] if len(prov["models"]) == 1 else None
model = {"mad-qwen3-8b": "qwen3-8b", "mad-qwen-max": "qwen-max"}.get(name, model)
kept = [m for m in (prov["mechanisms"].get("kept") or {})]
t0 = time.time()
debates = read_debates(src, model)
fit_d, held = fe.split_questions(debates, 0.7, 0)
kw = dict(model=model, fit_lure=True, by_benchmark=True, by_sender=True, extra=kept)
cv = {}
for eps in GRID:
    tot = n = 0.0
    for train, blocks in fc._fold_sets(fit_d, fc.CV_FOLDS, 0, model):
        res = fe.fit(train, restarts=3, fixed={"lapse": eps}, **kw)
        n += fe.n_answers(blocks)
        tot += fe.loglik(
            res.profile,
            blocks,
            lure=res.target_lure,
            acc_by=res.accuracy_by_benchmark,
            pers_by=res.persuasion_by_model,
        )
    cv[eps] = tot / n
best = max(GRID, key=lambda e: cv[e])
print(name, "kept", kept, "cv", " · ".join(f"{e}: {cv[e]:.4f}" for e in GRID), "-> lapse", best, flush=True)
paper = paper_profile()
for eps in sorted({0.0, best}):
    res = fe.fit(fit_d, restarts=3, fixed={"lapse": eps}, **kw)
    r = ho.evaluate(
        res.profile,
        held,
        model,
        fit_d,
        paper,
        lure=res.target_lure,
        acc_by=res.accuracy_by_benchmark,
        pers_by=res.persuasion_by_model,
    )
    ll = r["loglik_per_answer"]
    print(
        f"  lapse {eps}: held-out {ll['fitted']:.4f} (paper {ll['paper']:.4f}; keep-previous "
        f"{ll['keep_previous']:.4f}); cells {r['cells_inside']}/{r['cells_total']}; "
        f"acc {res.profile.accuracy:.3f}"
        f" pers {res.profile.persuasion:.3f}",
        flush=True,
    )
print(f"  {time.time() - t0:.0f} s", flush=True)
