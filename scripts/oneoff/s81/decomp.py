"""Issue 38, stop 81: where a simulated reply's topic density comes from. Runs a tomacs command with
`text_model.on_topic` wrapped, and prints per reply the words, content words and the question's words of
each kind of sentence: the reply's fixed ones (opener, discussion, core, tail), the stem restated with the
answer (lead), others naming the answer's text, the role's own frames (own), the stem's clauses (plain),
the templates' fillers and the style bank's sentences.

Usage: .venv/bin/python decomp.py evaluate method=debate ... (any `tomacs` command line)
"""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

import tomacs.sim.text_model as tm
from tomacs.sim.text_model import OnTopic, PhaseText, topic_counts

ACC: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])  # hits, content, words
N = [0, 0]  # replies, their targets' sum
ORIGINAL = tm.on_topic


def _kind(s: str, topic: OnTopic, fillers: Sequence[str], bank: Sequence[str]) -> str:
    if s in topic.with_answer:
        return "lead" if s == topic.lead else "with_answer"
    for name, pool in (("plain", topic.plain), ("own", topic.answering), ("filler", fillers), ("bank", bank)):
        if s in pool:
            return name
    return "?"


def wrapped(
    pt: PhaseText,
    rng: np.random.Generator,
    fixed: Sequence[str],
    fillers: Sequence[str],
    bank: Sequence[str],
    topic: OnTopic,
    target: int,
) -> list[str]:
    chosen = ORIGINAL(pt, rng, fixed, fillers, bank, topic, target)
    kinds = [("fixed", s) for s in fixed] + [(_kind(s, topic, fillers, bank), s) for s in chosen]
    for k, s in kinds:
        h, n = topic_counts(s, topic.stems)
        for key in (k, "ALL"):
            ACC[key][0] += h
            ACC[key][1] += n
            ACC[key][2] += len(s.split())
    N[0] += 1
    N[1] += target
    return chosen


def main() -> None:
    tm.on_topic = wrapped
    from tomacs.cli import main as cli

    sys.argv = ["tomacs", *sys.argv[1:]]
    try:
        cli()
    except SystemExit:
        pass
    n = max(N[0], 1)
    print("replies", N[0], "mean target", round(N[1] / n, 1))
    for k, (h, c, w) in sorted(ACC.items()):
        share = h / max(ACC["ALL"][0], 1)
        print(f"{k:12s} words/reply {w / n:6.1f} content {c / n:6.1f} hits {h / n:5.1f} ", end="")
        print(f"density {h / max(c, 1):.2f} share-of-hits {share:.2f}")


if __name__ == "__main__":
    main()
