"""Issue 38, qwen-max's adversary AUC: is the real role cue the stance a reply argues? Adversary against
honest on the replies of rounds >= 2 (MiniLM, logistic regression, 5 folds by question), once over all
replies and once over the replies that answer the adversary's target only (adversaries and the honest agents
that hold it).

Usage: stance.py real TRANSCRIPTS MODEL | stance.py sim EPISODES [K]
(K: only the simulated questions 30K..30K+29)
"""

from __future__ import annotations

import sys

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GroupKFold

from tomacs.embedding.embedders import get_embedder
from tomacs.sim.from_episodes import select_debates
from tomacs.transcripts import load_debates


def cv_auc(x: np.ndarray, y: np.ndarray, groups: np.ndarray) -> float:
    pred = np.zeros(len(y))
    for tr, te in GroupKFold(5).split(x, y, groups):
        pred[te] = LogisticRegression(C=1.0, max_iter=3000).fit(x[tr], y[tr]).decision_function(x[te])
    return float(roc_auc_score(y, pred))


def main() -> None:
    if sys.argv[1] == "real":
        debates = select_debates(load_debates([sys.argv[2]]), sys.argv[3], False, 0.7, 0)
    else:
        debates = load_debates([sys.argv[2]])
        if len(sys.argv) > 3:
            k = int(sys.argv[3])
            debates = debates[30 * k : 30 * (k + 1)]
    rows = []
    for d in debates:
        target = next(a.target for a in d.agents if a.role == "adversary" and a.target is not None)
        for t in d.turns:
            if t.text and t.round >= 2:
                rows.append((t.text, d.is_adversarial(t.agent, t.round), t.answer == target, d.question_key))
    x = np.asarray(get_embedder("minilm", "cpu").embed([r[0] for r in rows]))
    adv = np.array([r[1] for r in rows], dtype=int)
    on_target = np.array([r[2] for r in rows])
    groups = np.unique([r[3] for r in rows], return_inverse=True)[1]
    print(f"{len(set(groups.tolist()))} questions")
    print(f"all replies: AUC {cv_auc(x, adv, groups):.3f} (adv {adv.sum()}, honest {(1 - adv).sum()})")
    m = on_target
    auc = cv_auc(x[m], adv[m], groups[m])
    print(f"on the target: AUC {auc:.3f} (adv {adv[m].sum()}, honest {(1 - adv[m]).sum()})")


if __name__ == "__main__":
    main()
