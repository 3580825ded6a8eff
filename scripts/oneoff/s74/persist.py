"""Issue 38, stop 74: how alike a later reply is to its own agent's previous reply ("own-prev") and to the
best reply it read ("best-read"), MiniLM cosine, by role (adversary when acting)
and whether its answer changed.

Usage: python scripts/oneoff/s74/persist.py sim RUN_DIR | real TRANSCRIPTS [MODEL]
"""

from __future__ import annotations

import sys

import numpy as np

from tomacs.analysis.text_report import embedding_function, load_side


def stats(debates: list, label: str) -> None:
    texts = [t.text for d in debates for t in d.turns if t.text]
    x = embedding_function("minilm")(texts)
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    idx = {}
    for d in debates:
        for t in d.turns:
            if t.text:
                idx[(d.id, t.agent, t.round)] = len(idx)
    rows: dict[tuple[str, int], list[tuple[float, float]]] = {}
    for d in debates:
        roles = {a.agent: a for a in d.agents}
        ans = {(t.agent, t.round): t.answer for t in d.turns}
        for t in d.turns:
            here, before = (d.id, t.agent, t.round), (d.id, t.agent, t.round - 1)
            if t.round < 2 or here not in idx or before not in idx:
                continue
            a = roles.get(t.agent)
            adv = a is not None and a.role == "adversary" and a.onset is not None and t.round >= a.onset
            changed = ans.get((t.agent, t.round - 1)) != t.answer
            me = x[idx[here]]
            prev = float(me @ x[idx[before]])
            read = [x[idx[(d.id, j, r)]] for j, r in t.read if j != t.agent and (d.id, j, r) in idx]
            best = max((float(me @ v) for v in read), default=np.nan)
            key = ("adv" if adv else "hon") + ("-changed" if changed else "-kept")
            rows.setdefault((key, min(t.round, 3)), []).append((prev, best))
    print(label, len(debates))
    for (key, r), v in sorted(rows.items()):
        a = np.array(v)
        plus = "+" if r == 3 else " "
        print(
            f"  {key:<13} round {r}{plus} n={len(a):5d}  own-prev {a[:, 0].mean():.3f}  "
            f"best-read {np.nanmean(a[:, 1]):.3f}"
        )


def main() -> None:
    which, path = sys.argv[1], sys.argv[2]
    model = sys.argv[3] if len(sys.argv) > 3 else None
    debates = load_side([path])
    if model:
        debates = [d for d in debates if d.model == model]
    stats(debates, f"{which} {path}")


if __name__ == "__main__":
    main()
