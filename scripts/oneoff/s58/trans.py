"""Issue 39/38 one-off (stop 58): Exposed honest agents' moves, real against the replay of a
shipped profile (PATH MODEL PROFILE [all|fit|held]).
"""

import sys

import numpy as np
import yaml

from tomacs.sim import fit_episodes as fe
from tomacs.sim import from_episodes as fx
from tomacs.sim import heldout as ho
from tomacs.sim.model import SimProfile

path, model, prof_name = sys.argv[1], sys.argv[2], sys.argv[3]
doc = yaml.safe_load(open(f"conf/profiles/{prof_name}.yaml"))
prof = SimProfile.from_dict(doc["profile"], name=prof_name)
pv = doc["provenance"]
deb = fx.read_debates([path], model)
fit_d, held = fe.split_questions(deb, 0.7, 0)
which = sys.argv[4] if len(sys.argv) > 4 else "all"
ds = {"all": deb, "fit": fit_d, "held": held}[which]
sim = ho.simulate(
    prof,
    ds,
    model,
    200,
    0,
    pv.get("target_lure"),
    pv.get("accuracy_by_benchmark"),
    pv.get("persuasion_by_model"),
)
S = ("gold", "target", "other")


def cls(a, t):
    return None if a < 0 else 0 if a == 0 else 1 if a == t else 2


R = np.zeros((3, 3))
M = np.zeros((3, 3))
for d, sa in zip(ds, sim, strict=False):
    lay = ho.layout(d, model)
    obs = ho.observed_answers(d)
    t = lay.target
    if t < 0:
        continue
    for h in lay.honest:
        for r in range(1, d.n_rounds):
            if not lay.exposed[h, r]:
                continue
            a, b = cls(obs[h, r - 1], t), cls(obs[h, r], t)
            if a is not None and b is not None:
                R[a, b] += 1
            for n in range(sa.shape[0]):
                a, b = cls(sa[n, h, r - 1], t), cls(sa[n, h, r], t)
                if a is not None and b is not None:
                    M[a, b] += 1 / sa.shape[0]
print(f"{prof_name} ({which}, {len(ds)} debates): exposed honest moves, row = from; real% | sim%  (n real)")
for i, s in enumerate(S):
    rr = R[i] / max(R[i].sum(), 1) * 100
    mm = M[i] / max(M[i].sum(), 1) * 100
    print(
        f"  {s:6s} n={int(R[i].sum()):4d} "
        + "  ".join(f"->{S[j]}: {rr[j]:5.1f} | {mm[j]:5.1f}" for j in range(3))
    )
