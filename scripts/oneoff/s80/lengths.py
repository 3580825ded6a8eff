"""Issue 38, stop 80: reply lengths by role, real and simulated: mean log words per role, the SD within
a role, and how much of it lies between questions (acting rounds, answer lines left out as the fit does).

Usage: .venv/bin/python lengths.py MODEL REAL_SOURCE SIM_RUN...
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence

import numpy as np

from tomacs.sim.text_model import _ANSWER_LINE
from tomacs.transcripts import load_debates
from tomacs.transcripts.schema import Debate
from tomacs.transcripts.split import select_debates


def stats(debates: Sequence[Debate]) -> str:
    rows: dict[str, list[tuple[str, float]]] = {"honest": [], "adversary": []}
    for d in debates:
        for t in d.turns:
            if not t.text:
                continue
            role = "adversary" if d.is_adversarial(t.agent, t.round) else "honest"
            n = max(len(_ANSWER_LINE.sub("", t.text).split()), 1)
            rows[role].append((d.question_key, math.log(n)))
    out = []
    for role, xs in rows.items():
        v = np.array([x for _, x in xs])
        by: dict[str, list[float]] = {}
        for q, x in xs:
            by.setdefault(q, []).append(x)
        qm = np.array([np.mean(by[q]) for q, _ in xs])
        out.append(
            f"{role}: n={len(v)} words={math.exp(v.mean()):.0f} sd={v.std():.2f} "
            f"between-q sd={qm.std():.2f} within sd={np.std(v - qm):.2f}"
        )
    h, a = (np.array([x for _, x in rows[r]]) for r in ("honest", "adversary"))
    pooled = math.sqrt((h.var() * len(h) + a.var() * len(a)) / (len(h) + len(a)))
    out.append(f"d(log words)={(a.mean() - h.mean()) / pooled:.2f}")
    return "; ".join(out)


def main(model: str, real: str, runs: list[str]) -> None:
    print("real", stats(select_debates(load_debates([real]), model)))
    for run in runs:
        print(run.rstrip("/").split("/")[-1], stats(load_debates([run])))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
