"""Issue 38, stop 70: what keeps two simulated round-1 replies to one question apart (MiniLM cosine).

For the first 120 questions of a run, two honest replies for the right answer and one adversarial reply for
another, under a fitted style with what one debate's replies share (tomacs.sim.text_model.DebateDraws), and
what-ifs that take one source of per-reply variety away. Prints the mean cosines honest-honest,
adversary-honest and reply-question. Usage: python alike.py RUN_DIR PROFILE_YAML
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace

import numpy as np

from tomacs.embedding.embedders import get_embedder
from tomacs.sim.profiles import load_text_model
from tomacs.sim.text import adversarial_analysis, honest_analysis
from tomacs.sim.text_model import DebateDraws
from tomacs.types import Question


def main() -> None:
    qs = []
    for ln in open(f"{sys.argv[1]}/episodes.jsonl"):
        d = json.loads(ln)["question"]
        qs.append(Question(**{**d, "options": tuple(d["options"])}))
    qs = qs[:120]
    tm = load_text_model(sys.argv[2])
    assert tm is not None
    h, a = tm.get("honest", "first"), tm.get("adversary", "first")
    assert h is not None and a is not None
    emb = get_embedder("minilm")
    variants = {
        "fitted, shared draws": (h, a, True),
        "fitted, lengths apart": (replace(h, length_shared=0.0), replace(a, length_shared=0.0), True),
        "fitted, nothing shared": (h, a, False),
        "no bank": (replace(h, generic_share=0.0), replace(a, generic_share=0.0), True),
        "no openers/closers": (
            replace(h, opener_share=0.0, closer_share=0.0),
            replace(a, opener_share=0.0, closer_share=0.0),
            True,
        ),
        "one length": (replace(h, log_words_sd=0.0), replace(a, log_words_sd=0.0), True),
    }
    for name, (hs, as_, shared) in variants.items():
        texts = []
        for i, q in enumerate(qs):
            wrong = next(x for x in q.labels if x != q.answer)

            z = float(np.random.default_rng([8, i]).standard_normal())

            def tr(ans: str, i: int = i, shared: bool = shared, z: float = z) -> DebateDraws | None:
                return DebateDraws(np.random.default_rng([7, i, ord(ans)]), z) if shared else None

            texts += [
                q.text + " " + " ".join(q.options or ()),
                honest_analysis(
                    q, "x", q.answer, np.random.default_rng([1, i]), style=hs, shared=tr(q.answer)
                ),
                honest_analysis(
                    q, "x", q.answer, np.random.default_rng([2, i]), style=hs, shared=tr(q.answer)
                ),
                adversarial_analysis(
                    q, wrong, np.random.default_rng([3, i]), style=as_, max_words=None, shared=tr(wrong)
                ),
            ]
        e = emb.embed(texts)
        e = e / np.linalg.norm(e, axis=1, keepdims=True)
        e = e.reshape(len(qs), 4, -1)
        hh = np.mean(np.sum(e[:, 1] * e[:, 2], axis=1))
        ah = np.mean((np.sum(e[:, 3] * e[:, 1], axis=1) + np.sum(e[:, 3] * e[:, 2], axis=1)) / 2)
        hq = np.mean((np.sum(e[:, 0] * e[:, 1], axis=1) + np.sum(e[:, 0] * e[:, 2], axis=1)) / 2)
        print(
            f"{name:24s} honest-honest {hh:.3f} adv-honest {ah:.3f} gap {hh - ah:.3f} "
            f"honest-question {hq:.3f}"
        )


if __name__ == "__main__":
    main()
