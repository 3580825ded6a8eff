"""Issue 39/38 one-off (stop 58): With the lure fixed, the fit without and with target_appeal (needs
mechanisms.patch) (PATH MODEL LURE).
"""

import sys

from tomacs.sim import fit_episodes as fe
from tomacs.sim import from_episodes as fx

path, model, L = sys.argv[1], sys.argv[2], float(sys.argv[3])
deb = fx.read_debates([path], model)
fit_d, held = fe.split_questions(deb, 0.7, 0)
orig = fe.distractor_prior
fe.distractor_prior = lambda obs, lure=None: orig(obs, L)
hb = fe.observations(held, model)
for extra in ([], ["target_appeal"]):
    res = fe.fit(fit_d, name="x", model=model, restarts=3, extra=extra, by_benchmark=True, by_sender=True)
    h = fe.loglik(
        res.profile, hb, acc_by=res.accuracy_by_benchmark, pers_by=res.persuasion_by_model
    ) / fe.n_answers(hb)
    print(
        L,
        extra,
        round(res.loglik / res.n_answers, 4),
        round(h, 4),
        res.profile.target_appeal,
        res.profile.distractor_share,
        res.profile.prior_weight,
        res.profile.persuasion,
        flush=True,
    )
