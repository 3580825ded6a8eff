"""Issue 38: the real ceiling of the first credit round. A logistic probe (as `tomacs replay --probe`) on
the policy's own f^t of a model's real debates, all of its questions, cross-validated by question (5
folds): what a reader of those inputs, trained on real labels, reaches.
Usage: realceil.py RUN_DIR TRANSCRIPTS MODEL."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GroupKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from tomacs.analysis.replay import _step_rows, load_policy, replay_inputs
from tomacs.analysis.replay_probe import PROBE_C
from tomacs.sim.from_episodes import select_debates
from tomacs.transcripts import load_debates


def main() -> None:
    run, src, model = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    debates = select_debates(load_debates([src]), model, False, 0.7, 0)
    pairs, inputs = replay_inputs(load_policy(run), debates)
    assert inputs is not None
    for row in ("2", "3", "decision"):
        x, y, g = [], [], []
        for (d, ep), read in zip(pairs, inputs, strict=True):
            for r, _, _, _, truth in _step_rows(d, ep):
                if r != row:
                    continue
                for i, lab in enumerate(truth):
                    if lab is not None:
                        x.append(read[row][i])
                        y.append(lab)
                        g.append(d.question_key)
        xa, ya = np.stack(x), np.asarray(y)
        groups = np.unique(np.asarray(g), return_inverse=True)[1]
        pred = np.zeros(len(ya))
        for tr, te in GroupKFold(5).split(xa, ya, groups):
            clf = make_pipeline(
                StandardScaler(), LogisticRegression(C=PROBE_C, max_iter=3000, random_state=0)
            )
            pred[te] = clf.fit(xa[tr], ya[tr]).decision_function(xa[te])
        auc = roc_auc_score(ya, pred)
        print(f"{model} row {row}: {len(set(g))} questions, {len(ya)} agents, real CV AUC {auc:.3f}")


if __name__ == "__main__":
    main()
