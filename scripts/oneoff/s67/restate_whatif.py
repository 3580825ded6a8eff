"""Issue 38, stop 67: a what-if for the lead of docs/experiments/2026-12-06-replay-real-probe.md.

Round-1 replies of a simulated run, as written and with the question's stem and the reply's own answer text
put in front, in a share of the replies per role (the real fitting debates' share that restates half the stem
or more in its first 200 characters); MiniLM; the adversary-vs-honest AUC cross-validated by question on the
simulated side, and the transfer of a probe trained there to the real held-out round-1 replies.

Usage: python restate_whatif.py REAL_TRANSCRIPTS MODEL SIM_RUN_DIR
"""

from __future__ import annotations

import re
import sys

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GroupKFold, cross_val_predict
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from tomacs.embedding.embedders import get_embedder
from tomacs.transcripts import load_debates
from tomacs.transcripts.split import select_debates, split_questions

STOP = set("the a an of to in and or is are was were be by for on at with as that this".split())
STOP |= set("which what who whom whose why how it its from".split())


def words(s: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9]+", s.lower()) if w not in STOP and len(w) > 2]


def restates(text: str, stem: str) -> bool:
    sw = set(words(stem))
    return bool(sw) and len(sw & set(words(text[:200]))) / len(sw) >= 0.5


def round1(ds: list, rewrite: dict[str, float] | None = None, seed: int = 0) -> tuple[list, np.ndarray, list]:
    rng = np.random.default_rng(seed)
    texts, ys, qs = [], [], []
    for d in ds:
        for t in d.turns:
            if t.round != 1:
                continue
            role = d.agents[t.agent].role
            text = t.text or ""
            if rewrite is not None and rng.random() < rewrite[role] and t.answer in d.letters:
                opt = (d.options or ())[d.letters.index(t.answer)] if d.options else ""
                text = f"{(d.question or '').strip()} {opt}.\n\n{text}"
            texts.append(text)
            ys.append(int(role == "adversary"))
            qs.append(d.question_key)
    return texts, np.asarray(ys), qs


def probe() -> object:
    return make_pipeline(StandardScaler(), LogisticRegression(C=0.1, max_iter=3000, class_weight="balanced"))


def main() -> None:
    real = select_debates(load_debates([sys.argv[1]]), sys.argv[2])
    fit, held = split_questions(real)
    share = {}
    for role in ("honest", "adversary"):
        hits = [
            restates(t.text or "", d.question or "")
            for d in fit
            for t in d.turns
            if t.round == 1 and d.agents[t.agent].role == role
        ]
        share[role] = float(np.mean(hits))
    print("real fitting share restating:", share)
    sim = load_debates([sys.argv[3] + "/episodes.jsonl"])[:300]
    emb = get_embedder("minilm")
    rt, ry, _ = round1(held)
    xr = emb.embed(rt)
    for name, rw in (("as written", None), ("stem in front", share)):
        st, sy, sq = round1(sim, rw)
        xs = emb.embed(st)
        oof = cross_val_predict(probe(), xs, sy, cv=GroupKFold(5), groups=sq, method="decision_function")
        clf = probe().fit(xs, sy)
        print(
            f"{name}: sim round-1 adv AUC {roc_auc_score(sy, oof):.3f}; transfer to real held-out round 1 "
            f"{roc_auc_score(ry, clf.decision_function(xr)):.3f}"
        )


if __name__ == "__main__":
    main()
