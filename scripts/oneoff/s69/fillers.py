"""Issue 38, stop 69: did the templates' fillers carry gpt-3.5's round-1 cue that transferred? `round1.py`'s
round-1 transfer for each simulated run given, with the templates' fillers (`tomacs.sim.text._FILL_MC`)
taken out, and with the fillers and the on-topic sentences taken out.

Usage: python fillers.py REAL_TRANSCRIPTS MODEL RUN [RUN ...]   (run from this folder; imports round1.py)
"""

from __future__ import annotations

import sys

import numpy as np
from round1 import PATTERNS, _pattern, side

from tomacs.analysis.texts import transfer_auc
from tomacs.embedding.embedders import get_embedder
from tomacs.sim import text as tx
from tomacs.sim.text_model import split_sentences
from tomacs.transcripts import load_debates
from tomacs.transcripts.split import select_debates

FILLERS = [_pattern(t) for t in tx._FILL_MC]


def strip(text: str, topical: bool) -> str:
    kept = [
        s
        for s in split_sentences(text)
        if not any(p.match(s) for p in FILLERS) and not (topical and any(p.match(s) for p in PATTERNS))
    ]
    return " ".join(kept)


def main() -> None:
    emb = get_embedder("minilm")
    real = select_debates(load_debates([sys.argv[1]]), sys.argv[2], held_out=True)
    rt, ry, rg = side(real, True)
    xr = emb.embed(rt)
    for path in sys.argv[3:]:
        st, sy, sg = side(load_debates([path + "/episodes.jsonl"]), False)
        for topical in (False, True):
            texts = [strip(t, topical) for t in st]
            words = np.mean([len(t.split()) for t in texts])
            auc = transfer_auc(emb.embed(texts), sy, sg, xr, ry, rg)
            cut = ", no fillers/on-topic" if topical else ", no fillers"
            name = path.rstrip("/").split("/")[-2] + cut
            print(f"{name:30s} round-1 transfer {auc:.3f}  ({len(texts)} replies, {words:.0f} words)")


if __name__ == "__main__":
    main()
