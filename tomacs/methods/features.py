"""TodyComm node features f_i^t (Eq. 4 and Appendix C of the paper), batched over questions x agents.

f_i^t = [ s_i^{t-1} || n_i^{t-1} || d_i^{t-1} ] is built from round t-1 outputs (and, for the
persistence features, round 1), where the neighbourhood N^{t-1}(v_i) is the set of agent i's
in-neighbours (senders) in round t-1's communication graph. Round 1 has no graph, so f^2 has no
neighbours. The paper names the features but does not give formulas; the ones below are ours and
are the single definition used everywhere (tests check each against a hand computation).

Notation: sol_j = `encode_solution` (SOL_DIM), ana_j = analysis embedding (unit norm, dim D),
M = in-neighbours of i, w_j = credit weights c_j^{t-1} / sum_{k in M} c_k^{t-1} (equal weights when
no credits exist yet or they sum to 0), same(a, b) = both answers parsed and equal (numeric
answers compared as numbers), cos(x, y) = x.y / (|x||y|), 0 when either is the zero vector.

Self block s (SOL_DIM + D + 2):
  sol         the solution encoding of o_i^{t-1}
  ana         the analysis embedding of o_i^{t-1}
  sol_per     same(answer_i^{t-1}, answer_i^1)                      (1 or 0)
  ana_per     cos(ana_i^{t-1}, ana_i^1)
Neighbour block n (SOL_DIM + D + 3), all 0 when M is empty:
  nbr_sol     sum_j w_j sol_j                (credit-weighted mean)
  nbr_ana     sum_j w_j ana_j                (credit-weighted mean, not re-normalised)
  has_nbr     1 if M is non-empty else 0
  sol_disp    1 - (size of the largest group of mutually equal answers in M) / |M|;
              each unparsed answer is a group of its own (it agrees with nothing)
  ana_disp    mean_{j in M} (1 - cos(ana_j, centroid)), centroid = unweighted mean of ana_j
Difference block d (4), all 0 when M is empty:
  sol_agree   sum_j w_j same(answer_i, answer_j)   (credit-weighted share of agreeing neighbours)
  ana_agree   cos(ana_i, nbr_ana)
  sol_dist    || sol_i - nbr_sol ||_2
  ana_dist    || ana_i - nbr_ana ||_2

Solution encoding (SOL_DIM = 13 for every benchmark, so the GRU input size never depends on the
dataset): 10 one-hot slots for option letters A..J (all 0 for numeric questions), then for numeric
questions sign(x) in {-1, 0, 1} and log10(1 + |x|) (both 0 for multiple choice), then an
"unparsed" flag that is 1 when the answer is None or cannot be read as a letter/number.

Feature sets (Table 6 ablations): full, self_only, self_neighbor, self_diff, and no_persist (full
without sol_per and ana_per).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from tomacs.types import LETTERS, AgentOutput

__all__ = [
    "FEATURE_SETS",
    "SOL_DIM",
    "build_features",
    "encode_solution",
    "feature_dim",
    "feature_names",
    "same_answer",
]

N_LETTERS = len(LETTERS)
SOL_DIM = N_LETTERS + 3  # letters | sign, log-magnitude | unparsed
FEATURE_SETS = ("full", "self_only", "self_neighbor", "self_diff", "no_persist")


def _to_float(answer: str) -> float | None:
    try:
        x = float(answer.replace(",", ""))
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def encode_solution(answer: str | None, kind: str) -> np.ndarray:
    """sol_i: a fixed-size vector for a parsed answer (see the module docstring for the layout)."""
    v = np.zeros(SOL_DIM, dtype=np.float32)
    if answer is not None:
        if kind == "mc":
            a = answer.strip().upper()
            if len(a) == 1 and a in LETTERS:
                v[LETTERS.index(a)] = 1.0
                return v
        elif kind == "numeric":
            x = _to_float(answer)
            if x is not None:
                v[N_LETTERS] = float(np.sign(x))
                v[N_LETTERS + 1] = math.log10(1.0 + abs(x))
                return v
        else:
            raise ValueError(f"unknown question kind {kind!r} (expected 'mc' or 'numeric')")
    v[N_LETTERS + 2] = 1.0
    return v


def same_answer(a: str | None, b: str | None, kind: str) -> bool:
    """Whether two parsed answers agree; numbers compare numerically ("3.0" == "3"), None never agrees."""
    if a is None or b is None:
        return False
    if kind == "numeric":
        x, y = _to_float(a), _to_float(b)
        if x is not None and y is not None:
            return abs(x - y) <= 1e-9 * max(1.0, abs(x), abs(y))
    return a.strip().upper() == b.strip().upper()


def _blocks(emb_dim: int, features: str) -> list[tuple[str, int]]:
    if features not in FEATURE_SETS:
        raise ValueError(f"unknown feature set {features!r}; choose one of {FEATURE_SETS}")
    self_block = [("sol", SOL_DIM), ("ana", emb_dim)]
    if features != "no_persist":
        self_block += [("sol_per", 1), ("ana_per", 1)]
    nbr_block = [("nbr_sol", SOL_DIM), ("nbr_ana", emb_dim), ("has_nbr", 1), ("sol_disp", 1), ("ana_disp", 1)]
    diff_block = [("sol_agree", 1), ("ana_agree", 1), ("sol_dist", 1), ("ana_dist", 1)]
    out = list(self_block)
    if features in ("full", "no_persist", "self_neighbor"):
        out += nbr_block
    if features in ("full", "no_persist", "self_diff"):
        out += diff_block
    return out


def feature_names(emb_dim: int, features: str = "full") -> list[tuple[str, slice]]:
    """(name, column slice) of every feature in f_i^t, in order; lets tests and analyses index blocks."""
    out, start = [], 0
    for name, width in _blocks(emb_dim, features):
        out.append((name, slice(start, start + width)))
        start += width
    return out


def feature_dim(emb_dim: int, features: str = "full") -> int:
    """Width of f_i^t: the GRU input size for a given embedding size and feature set."""
    return sum(w for _, w in _blocks(emb_dim, features))


def _embeddings(rows: Sequence[Sequence[AgentOutput]], emb_dim: int) -> np.ndarray:
    q, n = len(rows), len(rows[0])
    out = np.zeros((q, n, emb_dim), dtype=np.float32)
    for a, row in enumerate(rows):
        for i, o in enumerate(row):
            if o.embedding is None:
                raise ValueError(
                    f"agent {o.agent} round {o.round} has no analysis embedding; TodyComm needs the "
                    "executor to embed analyses (method.needs_embeddings is True)"
                )
            if len(o.embedding) != emb_dim:
                raise ValueError(
                    f"analysis embedding has dimension {len(o.embedding)} but TodyComm was built for "
                    f"{emb_dim}; the executor's embedder and the method's embedder/emb_dim disagree"
                )
            out[a, i] = o.embedding
    return out


def _unit(x: np.ndarray) -> np.ndarray:
    """Row-normalise along the last axis; zero vectors stay zero (their cosine is then 0)."""
    n = np.linalg.norm(x, axis=-1, keepdims=True)
    return x / np.where(n > 0, n, 1.0)


def build_features(
    prev: Sequence[Sequence[AgentOutput]],
    first: Sequence[Sequence[AgentOutput]],
    edges: Sequence[Sequence[tuple[int, int]]] | None,
    credits: np.ndarray | None,
    kinds: Sequence[str],
    emb_dim: int,
    features: str = "full",
) -> np.ndarray:
    """Node features f^t for a batch: a (Q, N, feature_dim) float32 array.

    prev[q][i] = o_i^{t-1}, first[q][i] = o_i^1, edges[q] = round t-1's (sender, receiver) edges
    (None or [] for t-1 = 1), credits[q, i] = c_i^{t-1} (None when round t-1 had none: equal
    weights), kinds[q] = "mc" | "numeric". Why batched: the GRU runs once per round over all
    Q*N agents, so features are produced in that shape.
    """
    q_n, n = len(prev), len(prev[0])
    if len(first) != q_n or len(kinds) != q_n:
        raise ValueError("prev, first and kinds must have one entry per question")
    ans = [[o.answer for o in row] for row in prev]
    ans1 = [[o.answer for o in row] for row in first]
    sol = np.stack([[encode_solution(a, k) for a in row] for row, k in zip(ans, kinds, strict=True)])
    ana = _embeddings(prev, emb_dim)
    ana1 = _embeddings(first, emb_dim)
    u_ana, u_ana1 = _unit(ana), _unit(ana1)

    # A[q, j, i] = 1 when j sends to i in round t-1; E[q, j, k] = answers of j and k agree (diag 1).
    adj = np.zeros((q_n, n, n), dtype=np.float32)
    if edges is not None:
        for q, es in enumerate(edges):
            for j, i in es or ():
                if j == i:
                    raise ValueError(f"self-loop ({j}, {i}) in round graph")
                adj[q, j, i] = 1.0
    agree = np.zeros((q_n, n, n), dtype=np.float32)
    for q in range(q_n):
        for j in range(n):
            agree[q, j, j] = 1.0
            for k in range(j + 1, n):
                agree[q, j, k] = agree[q, k, j] = float(same_answer(ans[q][j], ans[q][k], kinds[q]))

    c = np.ones((q_n, n), dtype=np.float32) if credits is None else np.asarray(credits, dtype=np.float32)
    if c.shape != (q_n, n):
        raise ValueError(f"credits have shape {c.shape}, expected {(q_n, n)}")
    deg = adj.sum(axis=1)  # (Q, N_receivers)
    has = (deg > 0).astype(np.float32)
    raw_w = adj * c[:, :, None]
    wsum = raw_w.sum(axis=1, keepdims=True)
    equal_w = adj / np.where(deg > 0, deg, 1.0)[:, None, :]
    w = np.where(wsum > 0, raw_w / np.where(wsum > 0, wsum, 1.0), equal_w)  # w[q, j, i]

    nbr_sol = np.einsum("qji,qjs->qis", w, sol)
    nbr_ana = np.einsum("qji,qjd->qid", w, ana)

    counts = np.einsum("qjk,qki->qji", agree, adj) * adj  # plurality group size of each neighbour j
    share = counts.max(axis=1) / np.where(deg > 0, deg, 1.0)
    sol_disp = np.where(deg > 0, 1.0 - share, 0.0)
    centroid = np.einsum("qji,qjd->qid", adj, ana) / np.where(deg > 0, deg, 1.0)[:, :, None]
    cos_jc = np.einsum("qjd,qid->qji", u_ana, _unit(centroid))
    ana_disp = np.where(deg > 0, ((1.0 - cos_jc) * adj).sum(axis=1) / np.where(deg > 0, deg, 1.0), 0.0)

    sol_per = np.zeros((q_n, n), dtype=np.float32)
    for q in range(q_n):
        for i in range(n):
            sol_per[q, i] = float(same_answer(ans[q][i], ans1[q][i], kinds[q]))
    ana_per = (u_ana * u_ana1).sum(-1)
    sol_agree = (w * agree).sum(axis=1) * has
    ana_agree = (u_ana * _unit(nbr_ana)).sum(-1) * has
    sol_dist = np.linalg.norm(sol - nbr_sol, axis=-1) * has
    ana_dist = np.linalg.norm(ana - nbr_ana, axis=-1) * has

    cols = {
        "sol": sol,
        "ana": ana,
        "sol_per": sol_per[..., None],
        "ana_per": ana_per[..., None],
        "nbr_sol": nbr_sol,
        "nbr_ana": nbr_ana,
        "has_nbr": has[..., None],
        "sol_disp": sol_disp[..., None],
        "ana_disp": ana_disp[..., None],
        "sol_agree": sol_agree[..., None],
        "ana_agree": ana_agree[..., None],
        "sol_dist": sol_dist[..., None],
        "ana_dist": ana_dist[..., None],
    }
    out = np.concatenate([cols[name] for name, _ in _blocks(emb_dim, features)], axis=-1)
    return out.astype(np.float32)
