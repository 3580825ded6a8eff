"""Issue 38, stop 64: share of replies that use a word, by role (adversary in its round or honest) and phase
(round 1 / later). Usage: rates.py TRANSCRIPTS MODEL|- (a model: its fitting questions)."""

import re
import sys

from tomacs.sim.from_episodes import select_debates
from tomacs.transcripts import load_debates

pats = {
    "question": r"\bquestions?\b",
    "option": r"\boptions?\b",
    "step": r"\bstep\b",
    "correct": r"\bcorrect\b",
    "choice": r"\bchoices?\b",
}


def freq(ds):
    c = {}
    n = {}
    for d in ds:
        for t in d.turns:
            if not t.text:
                continue
            key = (
                "adv" if d.is_adversarial(t.agent, t.round) else "hon",
                "first" if t.round == 1 else "later",
            )
            n[key] = n.get(key, 0) + 1
            for k, p in pats.items():
                if re.search(p, t.text, re.I):
                    c[(key, k)] = c.get((key, k), 0) + 1
    return c, n


ds = load_debates([sys.argv[1]])
if len(sys.argv) > 2 and sys.argv[2] != "-":
    ds = select_debates(ds, sys.argv[2], False, 0.7, 0)
c, n = freq(ds)
for key in sorted(n):
    print(key, n[key], " ".join(f"{k}={c.get((key, k), 0) / n[key]:.2f}" for k in pats))
