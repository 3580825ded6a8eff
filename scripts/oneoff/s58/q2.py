"""Issue 39/38 one-off (stop 58): Honest answers per gold letter and round (MAD-Follower's 5-point
scale) (PATH MODEL).
"""

import collections
import sys

from tomacs.sim import fit_episodes as fe
from tomacs.sim import from_episodes as fx

model = sys.argv[2]
deb = fx.read_debates([sys.argv[1]], model)
c = collections.Counter()
g = collections.Counter()
for d in deb:
    hon = fe.honest_agents(d, model)
    g[d.gold] += 1
    for t in d.turns:
        if t.agent in hon:
            c[(d.gold, t.round, t.answer)] += 1
print(g)
for k in sorted(c, key=str):
    print(k, c[k])
