"""CrS-aware aggregation of agents' final outputs (credibility-scoring §4, Appendix A / E.A.1): the math of
the `Centroid` decision rule, kept beside the rules so that the credibility package (a decision order the
executor calls back) sits above them.

* weighted vote: plurality over parsed answers with credibility weights;
* weighted centroid: x+ = (1/N) sum_i CrS_i v(o_i) in embedding space, and the final output is the
  output nearest (cosine) to x+ (Ebrahimi et al., 2024, with CrS as the weights);
* coordinator: an LLM reads the outputs with the agents' scores (prompt in tomacs.agents.prompts).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["centroid_choice", "weighted_centroid"]


def weighted_centroid(embeddings: np.ndarray, weights: Sequence[float]) -> np.ndarray:
    """x+ = (1/N) sum_i w_i v_i. With all weights zero the unweighted centroid is used instead
    (every agent has lost all credibility: nothing is left to weigh, so count everyone alike)."""
    e = np.asarray(embeddings, dtype=float)
    w = np.asarray(weights, dtype=float)
    if e.ndim != 2 or e.shape[0] != w.shape[0]:
        raise ValueError(f"{w.shape[0]} weights for {e.shape[0]} embeddings")
    if not np.any(w > 0):
        w = np.ones_like(w)
    return (w[:, None] * e).sum(axis=0) / e.shape[0]


def centroid_choice(embeddings: np.ndarray, weights: Sequence[float], rng: np.random.Generator) -> int:
    """Index of the output closest in cosine distance to the weighted centroid; exact ties are
    broken by a seeded draw (never by list order, which would favour low agent indices)."""
    e = np.asarray(embeddings, dtype=float)
    if e.shape[0] == 0:
        raise ValueError("no outputs to aggregate")
    c = weighted_centroid(e, weights)
    norms = np.linalg.norm(e, axis=1) * max(float(np.linalg.norm(c)), 1e-12)
    sims = (e @ c) / np.maximum(norms, 1e-12)
    dist = 1.0 - sims
    best = float(dist.min())
    tied = [i for i, d in enumerate(dist) if d - best <= 1e-12]
    return tied[0] if len(tied) == 1 else tied[int(rng.integers(len(tied)))]
