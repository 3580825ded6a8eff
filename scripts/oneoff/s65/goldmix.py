"""Issue 39/38, stop 65 prototype: on a share LAM of the questions (drawn per question, like the latent), the
persuasive messages read by an honest agent whose previous answer is the gold weigh ETA times more (a target
"next to" the gold, as MAD-Follower's B next to A); elsewhere today's rule. Fixed (ETA, LAM), the rest fitted
as the shipped profiles are; prints the fitting and held-out log-lik per answer (only the log-lik: the
held-out cells' replay does not draw the state).
EXTRA (environment): the profile's kept mechanisms, e.g. EXTRA=later_weight.
Usage: goldmix.py PATH MODEL LAPSE ETA:LAM [ETA:LAM ...]"""

from __future__ import annotations

import json
import os
import sys

import numpy as np

from tomacs.sim import fit_episodes as fe
from tomacs.sim import from_episodes as fx
from tomacs.sim import heldout as ho

STATE = {"eta": 1.0, "lam": 0.0, "on": False}
_orig_m = fe.own_and_message_logits
_orig_g = fe.group_loglik


def patched_m(profile, s_honest, s_pers, prev, first, pers_scale=None, later=None):  # type: ignore[no-untyped-def]
    if STATE["on"]:
        s_pers = s_pers * np.where(prev == 0, STATE["eta"], 1.0)[..., None]
    return _orig_m(profile, s_honest, s_pers, prev, first, pers_scale=pers_scale, later=later)


def patched_g(profile, obs, c, pers_by=None):  # type: ignore[no-untyped-def]
    g0 = _orig_g(profile, obs, c, pers_by)
    lam = STATE["lam"]
    if lam <= 0 or profile.name == "mmlu":  # the paper profile: today's rule
        return g0
    STATE["on"] = True
    try:
        g1 = _orig_g(profile, obs, c, pers_by)
    finally:
        STATE["on"] = False
    return np.logaddexp(np.log1p(-lam) + g0, np.log(lam) + g1) if lam < 1 else g1


fe.own_and_message_logits = patched_m
fe.group_loglik = patched_g
path, model = sys.argv[1], sys.argv[2]
deb = fx.read_debates([path], model)
fit_d, held = fe.split_questions(deb, 0.7, 0)
FIXED = {"lapse": float(sys.argv[3])} if float(sys.argv[3]) else None
for spec in sys.argv[4:]:
    eta, lam = map(float, spec.split(":"))
    STATE.update(eta=eta, lam=lam)
    res = fe.fit(
        fit_d,
        name="x",
        model=model,
        restarts=3,
        fit_lure=True,
        by_benchmark=True,
        by_sender=True,
        prior=fx.paper_profile(),
        shrink=0.0,
        fixed=FIXED,
        extra=tuple(os.environ.get("EXTRA", "").split()),
    )
    ev = ho.evaluate(
        res.profile,
        held,
        model,
        fit_d,
        fx.paper_profile(),
        draws=50,
        seed=0,
        lure=res.target_lure,
        acc_by=res.accuracy_by_benchmark,
        pers_by=res.persuasion_by_model,
    )
    s = fx._summary(ev)
    print(
        json.dumps(
            {
                "eta": eta,
                "lam": lam,
                "lure": round(res.target_lure or -1, 3),
                "fit_ll": round(res.loglik / res.n_answers, 4),
                "held_ll": {k: round(v, 4) for k, v in s["loglik_per_answer"].items()},
                "sec": round(res.seconds, 1),
            }
        ),
        flush=True,
    )
