"""Issue 39/38 one-off (stop 58): Refit a shipped profile's setup without and with one more mechanism
(needs mechanisms.patch) (PATH MODEL KEPT LAPSE [MECH]).
"""

import json
import sys
import time

from tomacs.sim import fit_episodes as fe
from tomacs.sim import from_episodes as fx

path, model, kept, lapse = (
    sys.argv[1],
    sys.argv[2],
    [k for k in sys.argv[3].split(",") if k],
    float(sys.argv[4]),
)
deb = fx.read_debates([path], model)
fit_d, held = fe.split_questions(deb, 0.7, 0)
hb = fe.observations(held, model)
fixed = {"lapse": lapse} if lapse else None
out = {}


def held_ll(res):
    return fe.loglik(
        res.profile,
        hb,
        lure=res.target_lure,
        acc_by=res.accuracy_by_benchmark,
        pers_by=res.persuasion_by_model,
    ) / fe.n_answers(hb)


t = time.time()
base = fe.fit(
    fit_d,
    name="b",
    model=model,
    restarts=3,
    extra=kept,
    fixed=fixed,
    fit_lure=True,
    by_benchmark=True,
    by_sender=True,
)
out["base"] = {
    "fit": base.loglik / base.n_answers,
    "held": held_ll(base),
    "sec": base.seconds,
    "prof": base.profile.to_dict(),
    "lure": base.target_lure,
}
print(json.dumps(out), flush=True)
sp = fe.fit(
    fit_d,
    name="s",
    model=model,
    restarts=3,
    extra=kept + [sys.argv[5] if len(sys.argv) > 5 else "self_spread"],
    fixed=fixed,
    fit_lure=True,
    by_benchmark=True,
    by_sender=True,
    also_from=base,
)
out["spread"] = {
    "fit": sp.loglik / sp.n_answers,
    "held": held_ll(sp),
    "sec": sp.seconds,
    "prof": sp.profile.to_dict(),
    "lure": sp.target_lure,
}
print(json.dumps(out), flush=True)
