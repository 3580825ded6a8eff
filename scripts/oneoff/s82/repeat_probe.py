"""Stop 82's probes (issue 38), real debates of MODEL in SRC beside simulated runs:

- repeats: per role, kind and round, the replies that could repeat one of the round before and the share
  that did (`tomacs.sim.repeats.repeat_counts`, the fit's rule);
- restating: the mean share of a reply's words in sentences restating its question (`restating_share`), by
  role and phase;
- sharing: per round, the share of a reply's words in sentences near-copying (content-word Jaccard >= 0.5) a
  sentence of an honest peer's reply of the same debate and round, by role.

Usage: python scripts/oneoff/s82/repeat_probe.py <repeats|restating|sharing> MODEL SRC [SIM_RUN...]
"""

from __future__ import annotations

import sys
from collections import defaultdict

import numpy as np

from tomacs.analysis.texts import replies_of
from tomacs.sim.repeats import repeat_counts
from tomacs.sim.text_model import content_words, reply_body, split_sentences
from tomacs.transcripts import load_debates
from tomacs.transcripts.schema import Debate, Turn
from tomacs.transcripts.split import select_debates


def body(t: Turn) -> list[str]:
    return split_sentences(reply_body(str(t.text), t.answer))


def repeats(ds: list[Debate]) -> str:
    rows = []
    for (role, kind, r), (n, hit) in sorted(repeat_counts(ds).items()):
        rows.append(f"{role[:3]} {kind} r{r} {hit}/{n}={hit / n:.2f}")
    return "  ".join(rows)


def restating(ds: list[Debate], real: bool) -> str:
    by: dict[str, list[float]] = defaultdict(list)
    for rep in replies_of(ds, real):
        if rep.restating is not None:
            role = "adv" if rep.adversarial else "hon"
            by[f"{role}/{'r1' if rep.round == 1 else 'r2+'}"].append(rep.restating)
    return "  ".join(f"{k} {np.mean(v):.2f}" for k, v in sorted(by.items()))


def sharing(ds: list[Debate]) -> str:
    words: dict[tuple[int, str], list[int]] = defaultdict(lambda: [0, 0])
    for d in ds:
        for r in sorted({t.round for t in d.turns}):
            turns = [t for t in d.turns if t.round == r and t.text]
            sents = {t.agent: [(s, content_words(s, None)) for s in body(t)] for t in turns}
            for t in turns:
                role = "adv" if d.is_adversarial(t.agent, r) else "hon"
                pool = [
                    c
                    for u in turns
                    if u.agent != t.agent and not d.is_adversarial(u.agent, r)
                    for _, c in sents[u.agent]
                    if c
                ]
                if not pool:
                    continue
                for s, c in sents[t.agent]:
                    if len(c) < 3:
                        continue
                    row = words[(r, role)]
                    row[0] += len(s.split())
                    row[1] += len(s.split()) * any(len(c & p) / len(c | p) >= 0.5 for p in pool)
    return "  ".join(f"r{r} {role} {hit / n:.2f}" for (r, role), (n, hit) in sorted(words.items()) if r <= 3)


def main() -> None:
    what, model, src, *runs = sys.argv[1:]
    sides = [("real", select_debates(load_debates([src]), model))]
    sides += [(run, load_debates([run])) for run in runs]
    for name, ds in sides:
        if what == "repeats":
            out = repeats(ds)
        elif what == "restating":
            out = restating(ds, name == "real")
        else:
            out = sharing(ds)
        print(f"{name}: {out}")


if __name__ == "__main__":
    main()
