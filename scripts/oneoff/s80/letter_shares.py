"""Issue 38, stop 79 (again in stop 80): the share of replies whose rationale names an option by its letter
(`tomacs.sim.text_model.letter_named`; walks through the options left out, as the fit does), real and
simulated, per role and phase.

Usage: .venv/bin/python letter_shares.py MODEL REAL_SOURCE SIM_RUN...
(SIM_RUN: `tomacs evaluate` runs, read as transcripts are)
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from tomacs.sim.text_model import letter_named, walkthrough
from tomacs.transcripts import load_debates
from tomacs.transcripts.schema import Debate
from tomacs.transcripts.split import select_debates


def shares(debates: Sequence[Debate]) -> dict[str, tuple[float, int]]:
    counts: dict[str, list[int]] = {}
    for d in debates:
        opts = tuple(d.options or ())
        if len(opts) < 2:
            continue
        for t in d.turns:
            if not t.text or walkthrough(t.text, d.letters, opts) is not None:
                continue
            role = "adversary" if d.is_adversarial(t.agent, t.round) else "honest"
            key = f"{role}/{'first' if t.round == 1 else 'later'}"
            c = counts.setdefault(key, [0, 0])
            c[0] += letter_named(t.text, t.answer, d.letters, opts)
            c[1] += 1
    return {k: (round(a / n, 3), n) for k, (a, n) in sorted(counts.items())}


def main(model: str, real: str, runs: list[str]) -> None:
    print("real", shares(select_debates(load_debates([real]), model)))
    for run in runs:
        print(run.rstrip("/").split("/")[-1], shares(load_debates([run])))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
