"""Issue 38, stop 80: replies whose answer has a style of its own (`TextModel.by_answer`: an answer scale's
text) against the rest, per role and phase: how many, and their letter shares (`letter_named`, walks left
out), real and simulated.

Usage: .venv/bin/python scale_split.py MODEL REAL_SOURCE SIM_RUN...
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from tomacs.sim.text_model import _scale_text, answered_option, letter_named, scale_answers, walkthrough
from tomacs.transcripts import load_debates
from tomacs.transcripts.schema import Debate
from tomacs.transcripts.split import select_debates


def split(debates: Sequence[Debate], scale: set[str]) -> dict[str, tuple[float, int]]:
    counts: dict[str, list[int]] = {}
    for d in debates:
        opts = tuple(d.options or ())
        if len(opts) < 2:
            continue
        for t in d.turns:
            if not t.text or walkthrough(t.text, d.letters, opts) is not None:
                continue
            role = "adversary" if d.is_adversarial(t.agent, t.round) else "honest"
            on = _scale_text(answered_option(d.letters, opts, t.answer)) in scale
            key = f"{role}/{'first' if t.round == 1 else 'later'}/{'scale' if on else 'other'}"
            c = counts.setdefault(key, [0, 0])
            c[0] += letter_named(t.text, t.answer, d.letters, opts)
            c[1] += 1
    return {k: (round(a / n, 3), n) for k, (a, n) in sorted(counts.items())}


def main(model: str, real: str, runs: list[str]) -> None:
    debates = select_debates(load_debates([real]), model)
    scale = scale_answers(debates)
    print("real", split(debates, scale))
    for run in runs:
        print(run.rstrip("/").split("/")[-1], split(load_debates([run]), scale))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
