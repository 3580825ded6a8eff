"""Issue 38, stop 81: how far a simulated reply's length, as the fit counts it (its text without an
"Answer: X" line), runs over the word target drawn for it (`text_model.words_target`), by role and phase.
Runs a tomacs command with the generator wrapped.

Usage: .venv/bin/python overshoot.py evaluate method=debate ... (any `tomacs` command line)
"""

from __future__ import annotations

import sys
from collections import defaultdict
from typing import Any

import numpy as np

import tomacs.sim.text as tx
import tomacs.sim.text_model as tm

LAST: dict[str, int] = {}
REC: dict[str, list[tuple[int, int]]] = defaultdict(list)
WORDS_TARGET = tm.words_target
ANALYSIS = tx._analysis


def words_target(*args: Any, **kw: Any) -> int:
    n = WORDS_TARGET(*args, **kw)
    LAST["t"] = n
    return n


def analysis(question: Any, role: str, answer: str, rng: np.random.Generator, *args: Any, **kw: Any) -> str:
    LAST.clear()
    out = ANALYSIS(question, role, answer, rng, *args, **kw)
    rnd = args[0] if args else kw.get("round", 1)
    if "t" in LAST:
        n = len(tm._ANSWER_LINE.sub("", out.replace(tm._SUFFIX_MARK, "")).split())
        key = f"{'adv' if role == tx.ADVERSARY_PERSONA else 'hon'}/{'r1' if rnd == 1 else 'r2+'}"
        REC[key].append((LAST["t"], n))
    return out


def main() -> None:
    tm.words_target = words_target
    tx._analysis = analysis
    from tomacs.cli import main as cli

    sys.argv = ["tomacs", *sys.argv[1:]]
    try:
        cli()
    except SystemExit:
        pass
    for k, v in sorted(REC.items()):
        a = np.array(v, float)
        gm = np.exp(np.log(a).mean(axis=0))
        ratio = np.exp(np.mean(np.log(a[:, 1] / a[:, 0])))
        print(f"{k} n={len(a)} target gm {gm[0]:.1f} words gm {gm[1]:.1f} ratio {ratio:.3f}", end=" ")
        print(f"mean diff {np.mean(a[:, 1] - a[:, 0]):+.1f}")


if __name__ == "__main__":
    main()
