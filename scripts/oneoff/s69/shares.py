"""Issue 38, stop 69 (stop 68's, git show 5157913:scripts/oneoff/s68/shares.py): what the words of
simulated round-1 replies are: the share in on-topic sentences (`round1.py`'s patterns), in the templates'
fillers (`tomacs.sim.text._FILL_MC`), and in the rest (the style bank's sentences and the templated core),
per role. Run from this folder (it imports round1.py).

Usage: python shares.py RUN_DIR [RUN_DIR ...]
"""

from __future__ import annotations

import sys

from round1 import PATTERNS, _pattern

from tomacs.analysis.texts import replies_of
from tomacs.sim import text as tx
from tomacs.sim.text_model import split_sentences
from tomacs.transcripts import load_debates

FILLERS = [_pattern(t) for t in tx._FILL_MC]


def main() -> None:
    for path in sys.argv[1:]:
        reps = [r for r in replies_of(load_debates([path + "/episodes.jsonl"]), False) if r.round == 1]
        for adv in (False, True):
            tot = {"on-topic": 0, "fillers": 0, "rest": 0}
            for r in reps:
                if r.adversarial != adv:
                    continue
                for s in split_sentences(r.text.rsplit("Answer:", 1)[0]):
                    kind = (
                        "on-topic"
                        if any(p.match(s) for p in PATTERNS)
                        else "fillers"
                        if any(p.match(s) for p in FILLERS)
                        else "rest"
                    )
                    tot[kind] += len(s.split())
            n = sum(tot.values())
            shares = "  ".join(f"{k} {v / n:.2f}" for k, v in tot.items())
            run = "/".join(path.rstrip("/").split("/")[-2:])
            print(f"{run:34s} {'adversary' if adv else 'honest':9s} {shares}  ({n} words)")


if __name__ == "__main__":
    main()
