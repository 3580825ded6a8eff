"""Issue 39/38 one-off (stop 58): Fit with the target lure fixed (or free) and score the held-out
questions (PATH MODEL LURE|free).
"""

import json
import sys

from tomacs.sim import fit_episodes as fe
from tomacs.sim import from_episodes as fx
from tomacs.sim import heldout as ho

path, model, L = sys.argv[1], sys.argv[2], sys.argv[3]
L = None if L == "free" else float(L)
deb = fx.read_debates([path], model)
fit_d, held = fe.split_questions(deb, 0.7, 0)
if L is not None:
    orig = fe.distractor_prior
    fe.distractor_prior = lambda obs, lure=None: orig(obs, L)
res = fe.fit(
    fit_d, name="x", model=model, restarts=3, fit_lure=(L is None), by_benchmark=True, by_sender=True
)
lure = res.target_lure if L is None else L
if L is not None:
    fe.distractor_prior = orig
ev = ho.evaluate(
    res.profile,
    held,
    model,
    fit_d,
    fx.paper_profile(),
    draws=400,
    seed=0,
    lure=lure,
    acc_by=res.accuracy_by_benchmark,
    pers_by=res.persuasion_by_model,
)
s = fx._summary(ev)
print(
    json.dumps(
        {
            "L": L,
            "lure": lure,
            "fit_ll": res.loglik / res.n_answers,
            "sec": round(res.seconds, 1),
            "held": s,
            "prof": res.profile.to_dict(),
            "pers_by": res.persuasion_by_model,
        },
        default=str,
    )
)
