"""Issue 38: the probe on f^2 of r1probe.py with MAD-Follower's followers (onset 2) labelled three ways at
round 2: left out (the replay's labels), as adversaries (what the decision's credits teach), as honest.
Scored on the real held-out debates with the replay's labels. Usage: follow.py RUN_DIR TRANSCRIPTS MODEL."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from tomacs.analysis.replay import load_policy
from tomacs.sim.from_episodes import select_debates
from tomacs.transcripts import load_debates

sys.path.insert(0, str(Path(__file__).parent))
from r1probe import traced  # noqa: E402


def round2(rows: list, follower: int) -> tuple[np.ndarray, np.ndarray]:
    """Round-2 features and labels (1 adversary, 0 honest); a follower (label -1 in `traced`) gets `follower`,
    and -1 leaves it out."""
    x = np.concatenate([f for t, f, _, _ in rows if t == 2])
    y = np.concatenate([lab for t, _, lab, _ in rows if t == 2])
    y = np.where(y < 0, follower, y)
    return x[y >= 0], y[y >= 0]


def main() -> None:
    run, src, model = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    policy = load_policy(run)
    sim = load_debates([str(run / "episodes.jsonl")])
    real = select_debates(load_debates([src]), model, True, 0.7, 0)
    rs, rr = traced(policy, sim), traced(policy, real)
    xr, yr = round2(rr, -1)
    for name, follower in (("left out", -1), ("as adversaries", 1), ("as honest", 0)):
        xs, ys = round2(rs, follower)
        clf = make_pipeline(StandardScaler(), LogisticRegression(max_iter=3000, C=0.1)).fit(xs, ys)
        print(f"followers {name}: sim -> real {roc_auc_score(yr, clf.decision_function(xr)):.3f}")


if __name__ == "__main__":
    main()
