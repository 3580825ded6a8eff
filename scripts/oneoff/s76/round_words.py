"""Words whose adversary-vs-honest association differs most between sim and real, in one round (stop 76)."""

import re
import sys
from collections import Counter

import numpy as np

from tomacs.analysis.text_report import load_side
from tomacs.analysis.texts import replies_of
from tomacs.sim.from_episodes import select_debates

sim_p, real_p, model, rnd = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
W = re.compile(r"[a-z']+")


def doc_freq(reps):
    out = {True: Counter(), False: Counter()}
    n = {True: 0, False: 0}
    for r in reps:
        if r.round != rnd or not r.acting:
            continue
        out[r.adversarial].update(set(W.findall(r.text.lower())))
        n[r.adversarial] += 1
    return out, n


def logodds(c, n):
    words = set(c[True]) | set(c[False])
    return {
        w: np.log((c[True][w] + 0.5) / (n[True] - c[True][w] + 0.5))
        - np.log((c[False][w] + 0.5) / (n[False] - c[False][w] + 0.5))
        for w in words
    }, {w: (c[True][w] / n[True], c[False][w] / n[False]) for w in words}


sc, sn = doc_freq(replies_of(load_side([sim_p]), False))
rc, rn = doc_freq(replies_of(select_debates(load_side([real_p]), model), True))
sl, sf = logodds(sc, sn)
rl, rf = logodds(rc, rn)
common = [w for w in sl if w in rl and (sf[w][0] + sf[w][1]) > 0.05]
rows = sorted(common, key=lambda w: -(abs(sl[w] - rl[w]) * np.sqrt(max(sf[w]))))[:40]
print(f"round {rnd}: sim n={sn} real n={rn}")
print(f"{'word':<14}{'sim adv':>8}{'sim hon':>8}{'real adv':>9}{'real hon':>9}{'lo sim':>8}{'lo real':>8}")
for w in rows:
    print(f"{w:<14}{sf[w][0]:8.2f}{sf[w][1]:8.2f}{rf[w][0]:9.2f}{rf[w][1]:9.2f}{sl[w]:8.2f}{rl[w]:8.2f}")
only_sim = sorted(
    [w for w in sl if w not in rl and (sf[w][0] > 0.05 or sf[w][1] > 0.05)],
    key=lambda w: -abs(sf[w][0] - sf[w][1]),
)[:15]
print("in sim only:", [(w, round(sf[w][0], 2), round(sf[w][1], 2)) for w in only_sim])
