"""Issue 38, the first credit round: is the signal in the policy's own round-2 inputs (f^2, read from round
1 only)? A logistic probe on a trained policy's f^t, fitted on the simulator's test episodes replayed
through the policy and scored on the source's held-out real debates, per round t; beside it the policy's
own credit AUC.

Usage: r1probe.py RUN_DIR TRANSCRIPTS MODEL [SIM_EPISODES] (SIM_EPISODES: the run's episodes.jsonl by
default)"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from tomacs.analysis import replay as rp
from tomacs.analysis.replay import load_policy
from tomacs.job.progress import Progress
from tomacs.sim.from_episodes import select_debates
from tomacs.transcripts import load_debates


def traced(policy, debates):
    """(t, features (N, F), labels (N,), credits (N,)) for every debate and round t = 2..T+1."""
    vecs = rp._embeddings(policy, debates, Progress(enabled=False))
    rows = []
    for k in range(0, len(debates), rp.BATCH):
        part = debates[k : k + rp.BATCH]
        n, rounds = part[0].n_agents, part[0].n_rounds
        same = [d for d in part if (d.n_agents, d.n_rounds) == (n, rounds)]
        method = policy.method(n, rounds)
        method.trace = []
        eps = rp._replay_batch(method, same, vecs.__getitem__)
        for t, f in method.trace:
            for q, ep in enumerate(eps):
                onsets = ep.plan.onsets
                lab = [(-1 if onsets[i] > t - 1 else 1) if i in onsets else 0 for i in range(n)]
                cred = ep.decision.credits if t == rounds + 1 else ep.graphs[t - 1].credits
                rows.append((t, f[q], np.array(lab), np.array(cred)))
        method.trace = None
    return rows


def stack(rows, t):
    x = np.concatenate([f for tt, f, _, _ in rows if tt == t])
    y = np.concatenate([lab for tt, _, lab, _ in rows if tt == t])
    c = np.concatenate([cr for tt, _, _, cr in rows if tt == t])
    keep = y >= 0
    return x[keep], y[keep], c[keep]


def main() -> None:
    run, src, model = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    sim_path = sys.argv[4] if len(sys.argv) > 4 else str(run / "episodes.jsonl")
    policy = load_policy(run)
    real = select_debates(load_debates([src]), model, True, 0.7, 0)
    sim = load_debates([sim_path])
    rs, rr = traced(policy, sim), traced(policy, real)
    print(f"{run.name}: sim {len(sim)} debates, real {len(real)} held-out debates")
    print("   t  policy AUC sim / real   probe on f^t: sim CV-free fit -> real   (adversary AUC: honest = 1)")
    for t in sorted({r[0] for r in rs}):
        xs, ys, cs = stack(rs, t)
        xr, yr, cr = stack(rr, t)
        if len(set(yr)) < 2:
            continue
        pol_s, pol_r = roc_auc_score(1 - ys, cs), roc_auc_score(1 - yr, cr)
        clf = make_pipeline(StandardScaler(), LogisticRegression(max_iter=3000, C=0.1))
        clf.fit(xs, ys)
        probe = roc_auc_score(1 - yr, -clf.decision_function(xr))
        print(f"  {t:2d}       {pol_s:.3f} / {pol_r:.3f}          {probe:.3f}")


if __name__ == "__main__":
    main()
