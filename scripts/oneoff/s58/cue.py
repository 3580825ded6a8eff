"""Issue 39/38 one-off (stop 58): Share of replies naming each point of the 5-point scale, by role and
round (PATH MODEL).
"""

import collections
import sys

from tomacs.sim import from_episodes as fx

model = sys.argv[2]
deb = fx.read_debates([sys.argv[1]], model)
c = collections.Counter()
n = collections.Counter()
opts = [
    "completely acceptable",
    "mostly acceptable",
    "neutral",
    "situation-dependent",
    "mostly unacceptable",
    "completely unacceptable",
]
for d in deb:
    roles = {a.agent: a.role for a in d.agents}
    for t in d.turns:
        if getattr(t, "text", None) is None:
            continue
        role = "adv" if d.is_adversarial(t.agent, t.round) else "hon"
        key = (role, "r1" if t.round == 1 else "r2+")
        n[key] += 1
        low = t.text.lower()
        for o in opts:
            if o in low:
                c[key + (o,)] += 1
for key in sorted(n):
    print(key, n[key], {o: round(100 * c[key + (o,)] / n[key]) for o in opts})
