"""Issue 38, stop 74: the share of a later reply's sentences (4+ words, frame lines left out) whose words are
at least THR of one sentence of its source: its own previous reply if it kept its answer, else the best of the
replies it read that give its new answer ("source"); "own" always against its own previous reply.

Usage: python scripts/oneoff/s74/reuse.py sim|real PATH [MODEL|-]
"""

from __future__ import annotations

import re
import sys

import numpy as np

from tomacs.analysis.text_report import load_side
from tomacs.sim.text_model import split_sentences

W = re.compile(r"[a-z0-9']+")
FRAME = re.compile(r"\s*(#answer|#confidence|answer\s*:)", re.IGNORECASE)


def body(text: str) -> list[str]:
    kept = [ln for ln in text.splitlines() if not FRAME.match(ln)]
    t = "\n".join(kept).replace("#rationale:", "")
    return [s for s in split_sentences(t) if len(W.findall(s.lower())) >= 4]


def near(s: str, src: list[str], thr: float) -> bool:
    w = set(W.findall(s.lower()))
    return max((len(w & set(W.findall(x.lower()))) / len(w) for x in src), default=0) >= thr


def share(sents: list[str], src: list[str], thr: float) -> float:
    return float(np.mean([near(s, src, thr) for s in sents])) if sents else float("nan")


def run(debates: list, thr: float) -> None:
    rows: dict[str, list[tuple[float, float]]] = {}
    for d in debates:
        tx = {(t.agent, t.round): t for t in d.turns}
        for t in d.turns:
            p = tx.get((t.agent, t.round - 1))
            if t.round < 2 or not t.text or p is None or not p.text:
                continue
            me = body(t.text)
            own = share(me, body(p.text), thr)
            s = own
            if p.answer != t.answer:
                srcs = [tx[(j, r)] for j, r in t.read if j != t.agent and (j, r) in tx]
                srcs = [x for x in srcs if x.answer == t.answer and x.text]
                s = max((share(me, body(x.text), thr) for x in srcs), default=float("nan"))
            key = ("adv" if d.is_adversarial(t.agent, t.round) else "hon") + (
                "-changed" if p.answer != t.answer else "-kept"
            )
            rows.setdefault(key, []).append((own, s))
    for k, v in sorted(rows.items()):
        a = np.array(v, dtype=float)
        print(
            f"   {k:<13} n={len(a):4d} own {np.nanmean(a[:, 0]):.3f}  source {np.nanmean(a[:, 1]):.3f} "
            f"(no source {np.isnan(a[:, 1]).mean():.2f})"
        )


def main() -> None:
    which, path = sys.argv[1], sys.argv[2]
    model = sys.argv[3] if len(sys.argv) > 3 and sys.argv[3] != "-" else None
    debates = load_side([path])
    if model:
        debates = [d for d in debates if d.model == model]
    for thr in (0.5, 0.7):
        print(which, path.split("/")[-1], model, "thr", thr)
        run(debates, thr)


if __name__ == "__main__":
    main()
