"""Issue 38, stop 75: is a real agent's persistence its own, or how alike all replies to one question are?
MiniLM cosine of an honest round-2 reply that kept its answer with its own round-1 reply, with another agent's
round-1 reply (same / other answer) and another's round-2 reply (same answer); median words.

Usage: python scripts/oneoff/s75/alike_own_other.py PATH [MODEL]  (a run directory or transcripts)
"""

from __future__ import annotations

import sys

import numpy as np

from tomacs.analysis.text_report import embedding_function, load_side


def main():
    path = sys.argv[1]
    model = sys.argv[2] if len(sys.argv) > 2 else None
    deb = load_side([path])
    if model:
        deb = [d for d in deb if d.model == model]
    texts, idx = [], {}
    for d in deb:
        for t in d.turns:
            if t.text:
                idx[(d.id, t.agent, t.round)] = len(texts)
                texts.append(t.text)
    x = embedding_function("minilm")(texts)
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    rows = {k: [] for k in ("own_r1", "other_r1_same", "other_r2_same", "other_r1_diff")}
    words = {"r1": [], "r2": []}
    for d in deb:
        tx = {(t.agent, t.round): t for t in d.turns}
        for t in d.turns:
            if t.round != 2 or not t.text or d.is_adversarial(t.agent, 2):
                continue
            p = tx.get((t.agent, 1))
            if p is None or not p.text or p.answer != t.answer:
                continue
            me = x[idx[(d.id, t.agent, 2)]]
            rows["own_r1"].append(me @ x[idx[(d.id, t.agent, 1)]])
            words["r1"].append(len(p.text.split()))
            words["r2"].append(len(t.text.split()))
            for (j, r), o in tx.items():
                if j == t.agent or not o.text or d.is_adversarial(j, r) or (d.id, j, r) not in idx:
                    continue
                v = float(me @ x[idx[(d.id, j, r)]])
                if r == 1:
                    rows["other_r1_same" if o.answer == t.answer else "other_r1_diff"].append(v)
                elif r == 2 and o.answer == t.answer:
                    rows["other_r2_same"].append(v)
    print(
        path,
        model,
        {k: (round(float(np.mean(v)), 3), len(v)) for k, v in rows.items()},
        {k: int(np.median(v)) for k, v in words.items()},
    )


main()
