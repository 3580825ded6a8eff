"""Issue 38, stop 64: the words whose share of replies is most over the real one (simulated:real), all rounds.
Usage: over.py TRANSCRIPTS MODEL SIM_RUN"""

import collections
import re
import sys

from tomacs.sim.from_episodes import select_debates
from tomacs.transcripts import load_debates

W = re.compile(r"[a-z][a-z']+")


def df(ds):
    c = collections.Counter()
    n = 0
    for d in ds:
        for t in d.turns:
            if t.text:
                n += 1
                c.update(set(W.findall(t.text.lower())))
    return c, n


real = select_debates(load_debates([sys.argv[1]]), sys.argv[2], False, 0.7, 0)
sim = load_debates([sys.argv[3]])
cr, nr = df(real)
cs, ns = df(sim)
rows = sorted(cs, key=lambda w: -(cs[w] / ns - cr[w] / nr))[:40]
print(" ".join(f"{w}:{cs[w] / ns:.2f}/{cr[w] / nr:.2f}" for w in rows))
