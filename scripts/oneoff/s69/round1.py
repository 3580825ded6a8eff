"""Issue 38, stop 69 (stop 68's, git show 5157913:scripts/oneoff/s68/round1.py): gpt-3.5's round-1
transfer. A MiniLM probe trained on simulated round-1 acting replies only, scored on the real held-out
round-1 ones, for each simulated run given, as written and with the on-topic sentences taken out (every
sentence one of `tomacs.sim.text`'s on-topic templates or the restated stem could write); first the same
probe trained on the real round-1 replies of the profile's fitting questions (the ceiling with real data).

Usage: python round1.py REAL_TRANSCRIPTS MODEL RUN [RUN ...]
"""

from __future__ import annotations

import re
import sys

import numpy as np

from tomacs.analysis.texts import replies_of, transfer_auc
from tomacs.embedding.embedders import get_embedder
from tomacs.sim import text as tx
from tomacs.sim.text_model import split_sentences
from tomacs.transcripts import load_debates
from tomacs.transcripts.split import select_debates, split_questions

TEMPLATES = (*tx._TOPICAL_ANSWER, *tx._TOPICAL_PLAIN, *tx._TOPICAL_TERMS, *tx._ASKED_ANSWER, *tx._ASKED_PLAIN)


def _pattern(t: str) -> re.Pattern[str]:
    parts = re.split(r"\{\w+\}", t)
    return re.compile("^" + ".+".join(re.escape(p) for p in parts) + "$", re.IGNORECASE)


PATTERNS = [_pattern(t) for t in TEMPLATES]


def strip_topical(text: str, stem: str) -> str:
    last = stem.strip().split("?")[0].split(".")[-1].strip()[:40].lower()
    kept = [
        s
        for s in split_sentences(text)
        if not any(p.match(s) for p in PATTERNS) and not (last and s.lower().startswith(last[:25]))
    ]
    return " ".join(kept)


def side(debates, real: bool, strip: bool = False):
    reps = [r for r in replies_of(debates, real) if r.acting and r.round == 1]
    stems = {d.question_key: d.question or "" for d in debates}
    texts = [strip_topical(r.text, stems.get(r.question, "")) if strip else r.text for r in reps]
    return texts, np.array([float(r.adversarial) for r in reps]), [r.question for r in reps]


def main() -> None:
    emb = get_embedder("minilm")
    real = select_debates(load_debates([sys.argv[1]]), sys.argv[2], held_out=True)
    rt, ry, rg = side(real, True)
    xr = emb.embed(rt)
    fit = split_questions(select_debates(load_debates([sys.argv[1]]), sys.argv[2]), 0.7, 0)[0]
    ft, fy, fg = side(fit, True)
    auc = transfer_auc(emb.embed(ft), fy, fg, xr, ry, rg)
    print(f"{'real, fitting questions':20s} round-1 transfer {auc:.3f}  ({len(ft)} replies)")
    for path, strip in ((p, x) for p in sys.argv[3:] for x in (False, True)):
        name = path.rstrip("/").split("/")[-2] + ("" if not strip else ", stripped")
        st, sy, sg = side(load_debates([path + "/episodes.jsonl"]), False, strip)
        xs = emb.embed(st)
        words = np.mean([len(t.split()) for t in st])
        auc = transfer_auc(xs, sy, sg, xr, ry, rg)
        print(f"{name:20s} round-1 transfer {auc:.3f}  ({len(st)} replies, {words:.0f} words)")


if __name__ == "__main__":
    main()
