"""Issue 38, stop 69: is gpt-3.5's lost round-1 cue in the restated stem that opens a simulated reply's body
("<answer> is ...", `tomacs.sim.text._restated`)? `round1.py`'s round-1 transfer for each simulated run
given, with that sentence taken out (for every option of the question), and with it and the other on-topic
sentences taken out (`round1.py`'s strip misses the restated stem: it starts with the answer, not the stem).

Usage: python lead.py REAL_TRANSCRIPTS MODEL RUN [RUN ...]   (run from this folder; imports round1.py)
"""

from __future__ import annotations

import sys
from types import SimpleNamespace

import numpy as np
from round1 import side, strip_topical

from tomacs.analysis.texts import replies_of, transfer_auc
from tomacs.embedding.embedders import get_embedder
from tomacs.sim import text as tx
from tomacs.sim.text_model import split_sentences
from tomacs.transcripts import load_debates
from tomacs.transcripts.split import select_debates


def leads(stem: str, options: tuple[str, ...]) -> set[str]:
    q = SimpleNamespace(text=stem)
    out = set()
    for opt in options:
        said = " ".join(str(opt).strip().rstrip(".").split()[:25])
        lead = tx._restated(q, said)  # type: ignore[arg-type]
        if lead:
            out.add(lead)
    return out


def main() -> None:
    emb = get_embedder("minilm")
    real = select_debates(load_debates([sys.argv[1]]), sys.argv[2], held_out=True)
    rt, ry, rg = side(real, True)
    xr = emb.embed(rt)
    for path in sys.argv[3:]:
        debates = load_debates([path + "/episodes.jsonl"])
        led = {d.question_key: leads(d.question or "", d.options or ()) for d in debates}
        stems = {d.question_key: d.question or "" for d in debates}
        reps = [r for r in replies_of(debates, False) if r.acting and r.round == 1]
        y = np.array([float(r.adversarial) for r in reps])
        g = [r.question for r in reps]
        hit = 0
        for topical in (False, True):
            texts = []
            for r in reps:
                kept = [s for s in split_sentences(r.text) if s not in led[r.question]]
                hit += len(split_sentences(r.text)) - len(kept)
                t = " ".join(kept)
                texts.append(strip_topical(t, stems[r.question]) if topical else t)
            auc = transfer_auc(emb.embed(texts), y, g, xr, ry, rg)
            cut = ", no lead/on-topic" if topical else ", no lead"
            name = path.rstrip("/").split("/")[-2] + cut
            words = np.mean([len(t.split()) for t in texts])
            print(f"{name:26s} round-1 transfer {auc:.3f}  ({len(texts)} replies, {words:.0f} words)", hit)


if __name__ == "__main__":
    main()
