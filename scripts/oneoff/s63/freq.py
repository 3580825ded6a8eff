"""Issue 38, a lead for the texts: the share of round-1 replies that contain a few words, honest and
adversary, real (all of a model's debates) against simulated (a sim run in the source's protocol). The words
are those a bag-of-words probe on real gpt-3.5 round-1 replies weighs most, plus the templates' "the question"
and "option". Usage: freq.py TRANSCRIPTS MODEL SIM_RUN
"""

from __future__ import annotations

import re
import sys

from tomacs.sim.from_episodes import select_debates
from tomacs.transcripts import load_debates

pats = {
    "step": r"\bstep\b",
    "because": r"\bbecause\b",
    "according to": r"according to",
    "break it down|break down": r"break (it )?down",
    "crucial": r"\bcrucial\b",
    "the question": r"the question",
    "scenario": r"scenario",
    "option": r"\boption\b",
}


def freq(ds, rnd):
    c = {k: [0, 0] for k in pats}
    n = [0, 0]
    for d in ds:
        for t in d.turns:
            if t.text and t.round == rnd:
                a = int(d.is_adversarial(t.agent, t.round))
                n[a] += 1
                for k, p in pats.items():
                    if re.search(p, t.text, re.I):
                        c[k][a] += 1
    return {k: (v[0] / max(n[0], 1), v[1] / max(n[1], 1)) for k, v in c.items()}, n


real = select_debates(load_debates([sys.argv[1]]), sys.argv[2], False, 0.7, 0)
sim = load_debates([sys.argv[3]])
fr, nr = freq(real, 1)
fs, ns = freq(sim, 1)
print(f"round 1, share of replies containing (honest / adversary): real n={nr}, sim n={ns}")
for k in pats:
    print(f"  {k:<26} real {fr[k][0]:.2f} / {fr[k][1]:.2f}   sim {fs[k][0]:.2f} / {fs[k][1]:.2f}")
