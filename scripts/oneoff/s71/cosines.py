"""Issue 38, stop 70 (stop 67's, git show 2e3a13f:scripts/oneoff/s67/cosines.py; a 4th argument: the
simulated side only).
Stop 67: MiniLM cosines per round between the replies of one debate (two honest ones; an honest
and an adversarial one) and between a reply and its question, real against simulated; and the share of
the stem's content words a reply restates in its first 200 characters.

Usage: python cosines.py REAL_TRANSCRIPTS MODEL SIM_RUN_DIR  (simulated side: its first 150 debates)
"""

from __future__ import annotations

import re
import sys

import numpy as np

from tomacs.embedding.embedders import get_embedder
from tomacs.transcripts import load_debates
from tomacs.transcripts.split import select_debates

STOP = set("the a an of to in and or is are was were be by for on at with as that this".split())
STOP |= set("which what who whom whose why how it its from".split())


def words(s: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9]+", s.lower()) if w not in STOP and len(w) > 2]


def restated(text: str, stem: str, cut: int) -> float:
    sw = set(words(stem))
    return len(sw & set(words(text[:cut]))) / len(sw) if sw else float("nan")


def main() -> None:
    real = select_debates(load_debates([sys.argv[1]]), sys.argv[2]) if len(sys.argv) <= 4 else []
    sim = load_debates([sys.argv[3] + "/episodes.jsonl"])[:150]
    emb = get_embedder("minilm")
    sides = [("sim", sim)] if len(sys.argv) > 4 else [("real", real), ("sim", sim)]
    for name, ds in sides:
        for rnd in (1, 2, 3):
            hh, ah, qh, qa, rs = [], [], [], [], {"honest": [], "adversary": []}
            texts, idx = [], []
            for d in ds:
                ts = [t for t in d.turns if t.round == rnd]
                texts += [(d.question or "") + " " + " ".join(d.options or ())] + [t.text or "" for t in ts]
                idx.append((d, ts))
                for t in ts:
                    rs[d.agents[t.agent].role].append(restated(t.text or "", d.question or "", 200))
            e = emb.embed(texts)
            e = e / np.linalg.norm(e, axis=1, keepdims=True)
            k = 0
            for d, ts in idx:
                eq, er = e[k], e[k + 1 : k + 1 + len(ts)]
                k += 1 + len(ts)
                roles = [d.agents[t.agent].role for t in ts]
                for i in range(len(ts)):
                    (qa if roles[i] == "adversary" else qh).append(er[i] @ eq)
                    for j in range(i + 1, len(ts)):
                        if roles[i] == roles[j] == "honest":
                            hh.append(er[i] @ er[j])
                        elif {roles[i], roles[j]} == {"honest", "adversary"}:
                            ah.append(er[i] @ er[j])
            print(
                f"{name:4s} r{rnd}: cos honest-honest {np.mean(hh):.3f} adv-honest {np.mean(ah):.3f} "
                f"gap {np.mean(hh) - np.mean(ah):.3f}; to question honest {np.mean(qh):.3f} "
                f"adv {np.mean(qa):.3f}; "
                f"stem restated (first 200 chars) honest {np.nanmean(rs['honest']):.2f} "
                f"adv {np.nanmean(rs['adversary']):.2f}"
            )


if __name__ == "__main__":
    main()
