"""Issue 39/38 one-off (stop 58): Honest answers per round as gold / target / other wrong / unparsed,
fitting and held-out split (PATH MODEL).
"""

import collections
import sys

from tomacs.sim import fit_episodes as fe
from tomacs.sim import from_episodes as fx
from tomacs.sim import heldout as ho

model = sys.argv[2]
paths = [sys.argv[1]]
deb = fx.read_debates(paths, model)
fit_d, held = fe.split_questions(deb, 0.7, 0)
for name, ds in (("fit", fit_d), ("held", held), ("all", deb)):
    c = collections.Counter()
    n_opts = collections.Counter()
    wrongdist = []
    for d in ds:
        lay = ho.layout(d, model)
        ans = ho.observed_answers(d)
        n_opts[len(fe._letter_index(d))] += 1
        for r in range(d.n_rounds):
            for h in lay.honest:
                a = ans[h, r]
                if a < 0:
                    k = "unparsed"
                elif a == 0:
                    k = "gold"
                elif a == lay.target:
                    k = "target"
                else:
                    k = "other"
                c[(r + 1, k)] += 1
    print(name, len(ds), "debates", dict(n_opts))
    for r in (1, 2, 3):
        tot = sum(c[(r, k)] for k in ("gold", "target", "other", "unparsed"))
        print(
            f" r{r}",
            {k: round(100 * c[(r, k)] / tot, 1) for k in ("gold", "target", "other", "unparsed")},
            tot,
        )
