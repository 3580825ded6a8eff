"""AgentPrune (Zhang et al., 2025a, "Cut the Crap"), the pruning baseline of TodyComm's Table 2.

What the method is (the published algorithm, not the authors' code, see docs/deviations.md):
  * a learnable logit per candidate spatial edge i -> j (N x N, no self loops) and per candidate
    temporal edge (agent i's previous-round output to agent j), initialised at probability 0.5;
  * training samples every candidate edge from Bernoulli(sigmoid(logit)) afresh each round and
    optimises the expected utility with REINFORCE on the exact log-likelihood of the samples
    (TodyComm §5 compares against exactly this "stochastic sampling over context-independent edge
    weights");
  * a low-rank (nuclear norm) plus L1 sparsity regulariser on the edge-probability matrices;
  * magnitude pruning: every `prune_interval` iterations the `prune_rate` fraction of the remaining
    edges with the smallest logits is masked out for good (TodyComm §5: interval 1);
  * inference uses one fixed graph: unpruned edges with probability >= 0.5.

Mapping onto this executor (documented in docs/deviations.md):
  * every agent already sees its own previous output, so temporal self edges (i -> i) are implied
    and not learned; a temporal edge i -> j (i != j) is a `RoundGraph.temporal_edges` entry: j
    reads i's round t-1 output, as in the paper's spatial-temporal graph. Temporal edges exist from
    round `temporal_from_round` = 2 on: our round 1 (everyone alone) is a finished dialogue round
    whose outputs round 2 can read (AgentPrune's own first round has no previous round, hence no
    temporal edges).
  * spatial round graphs must be DAGs: sampled (or thresholded) spatial edges are kept in
    descending probability order, skipping any that would close a cycle (`dag_by_priority`).
    Temporal edges read a finished round and are kept as sampled. The run's mask and degree
    budgets then apply to both, spatial first (`constrain_round`). The log-probability stays the
    one of the full Bernoulli sample: the kept graph is a deterministic function of it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tomacs.graphs import Edge, constrain_round, creates_cycle
from tomacs.methods.base import History, Method, MethodContext
from tomacs.seeding import stable_seed
from tomacs.types import Question, RoundGraph

__all__ = [
    "AgentPrune",
    "bernoulli_matrix_log_prob",
    "dag_by_priority",
    "magnitude_prune",
    "nuclear_norm",
]

BASELINES = ("none", "batch_mean")
DEFAULTS: dict[str, Any] = {
    "init_prob": 0.5,
    "temporal": True,
    "temporal_from_round": 2,
    "prune_rate": 0.25,
    "prune_interval": 1,
    "max_prune_fraction": None,
    "lowrank_weight": 0.1,
    "l1_weight": 0.01,
    "threshold": 0.5,
    "baseline": "batch_mean",
    "embedder": "minilm",
}
_IGNORED = {"name", "lr", "_target_"}


def _torch() -> Any:
    import torch

    return torch


# -- pure helpers (unit-tested by hand) ---------------------------------------------------------
def bernoulli_matrix_log_prob(logits: Any, sample: Any, mask: Any) -> Any:
    """sum over candidate edges of log Bernoulli(sample | sigmoid(logit)); the last two axes are N x N.

    Written with logsigmoid so that probabilities rounding to 0 or 1 still give finite values, and
    as a masked sum over the full matrix so the result stays attached to every logit (a fully
    pruned matrix gives 0 with zero gradient, not a detached constant).
    """
    torch = _torch()
    a = torch.as_tensor(sample, dtype=logits.dtype, device=logits.device)
    m = torch.as_tensor(mask, dtype=logits.dtype, device=logits.device)
    ls = torch.nn.functional.logsigmoid
    return (m * (a * ls(logits) + (1.0 - a) * ls(-logits))).sum(dim=(-2, -1))


def nuclear_norm(p: Any) -> Any:
    """Sum of singular values of the last two axes: the convex surrogate of rank (low-rank prior)."""
    torch = _torch()
    return torch.linalg.svdvals(p).sum(-1)


def dag_by_priority(chosen: np.ndarray, probs: np.ndarray, edges: list[Edge] | None = None) -> list[Edge]:
    """Add the chosen edges in descending probability (ties: row-major index), skipping cycle closers.

    A sampled graph is generally cyclic; greedy insertion by probability is deterministic given the
    sample and keeps the edges the policy is most sure of. `edges` continues an existing DAG (the
    temporal edges are inserted after the spatial ones).
    """
    n = chosen.shape[0]
    out = list(edges or [])
    succ: dict[int, list[int]] = {i: [] for i in range(n)}
    for i, j in out:
        succ[i].append(j)
    present = set(out)
    idx = [(i, j) for i in range(n) for j in range(n) if i != j and chosen[i, j]]
    idx.sort(key=lambda e: (-float(probs[e]), e[0], e[1]))
    for i, j in idx:
        if (i, j) in present or creates_cycle(succ, i, j):
            continue
        out.append((i, j))
        succ[i].append(j)
        present.add((i, j))
    return out


def magnitude_prune(logits: np.ndarray, mask: np.ndarray, rate: float, max_pruned: int | None = None) -> int:
    """Mask out round(rate * remaining) (at least 1) unpruned edges with the smallest logits, in place.

    Returns how many were pruned. Ties break by row-major index so pruning is reproducible. With
    `max_pruned`, the number of zeros in `mask` (never-candidates included) never exceeds it.
    """
    flat_mask = mask.reshape(-1)
    remaining = np.flatnonzero(flat_mask > 0)
    if remaining.size == 0:
        return 0
    k = max(1, int(math.floor(rate * remaining.size + 0.5)))
    if max_pruned is not None:
        already = int(flat_mask.size - remaining.size)
        k = min(k, max(0, max_pruned - already))
    if k <= 0:
        return 0
    vals = logits.reshape(-1)[remaining]
    order = np.lexsort((remaining, vals))  # by logit, then by index
    flat_mask[remaining[order[:k]]] = 0.0
    return int(k)


# -- the method ----------------------------------------------------------------------------------
class AgentPrune(Method):
    """Learned spatial/temporal edge logits with magnitude pruning. Keys: conf/method/agentprune.yaml."""

    name = "agentprune"
    trainable = True
    needs_embeddings = False

    def __init__(self, ctx: MethodContext, **params: Any) -> None:
        unknown = set(params) - set(DEFAULTS) - _IGNORED
        if unknown:
            raise ValueError(f"unknown agentprune parameters {sorted(unknown)}; valid: {sorted(DEFAULTS)}")
        cfg = {**DEFAULTS, **{k: v for k, v in params.items() if k in DEFAULTS}}
        super().__init__(ctx, **cfg)
        if not 0.0 < float(cfg["init_prob"]) < 1.0:
            raise ValueError(f"init_prob must be in (0, 1), got {cfg['init_prob']}")
        if not 0.0 <= float(cfg["prune_rate"]) <= 1.0:
            raise ValueError(f"prune_rate must be in [0, 1], got {cfg['prune_rate']}")
        if int(cfg["prune_interval"]) < 1:
            raise ValueError(f"prune_interval must be >= 1, got {cfg['prune_interval']}")
        if cfg["baseline"] not in BASELINES:
            raise ValueError(f"baseline must be one of {BASELINES}, got {cfg['baseline']!r}")
        mpf = cfg["max_prune_fraction"]
        if mpf is not None and not 0.0 <= float(mpf) <= 1.0:
            raise ValueError(f"max_prune_fraction must be in [0, 1] or null, got {mpf}")
        n = ctx.n_agents
        if ctx.mask is not None and np.asarray(ctx.mask).shape != (n, n):
            raise ValueError(f"mask has shape {np.asarray(ctx.mask).shape}, expected N x N = {n}")
        self.prune_rate = float(cfg["prune_rate"])
        self.prune_interval = int(cfg["prune_interval"])
        self.max_prune_fraction = None if mpf is None else float(mpf)
        self.lowrank_weight = float(cfg["lowrank_weight"])
        self.l1_weight = float(cfg["l1_weight"])
        self.threshold = float(cfg["threshold"])
        self.temporal = bool(cfg["temporal"])
        self.temporal_from = int(cfg["temporal_from_round"])
        self.baseline = str(cfg["baseline"])
        # Candidate edges: off-diagonal pairs the run's mask allows (a forbidden edge is never learned).
        cand = 1.0 - np.eye(n)
        if ctx.mask is not None:
            cand = cand * (np.asarray(ctx.mask) != 0)
        self.candidates = cand.astype(np.float32)
        torch = _torch()
        logit0 = math.log(float(cfg["init_prob"]) / (1.0 - float(cfg["init_prob"])))

        class EdgeLogits(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.spatial = torch.nn.Parameter(torch.full((n, n), logit0))
                self.temporal = torch.nn.Parameter(torch.full((n, n), logit0))
                self.register_buffer("spatial_mask", torch.as_tensor(cand, dtype=torch.float32).clone())
                self.register_buffer("temporal_mask", torch.as_tensor(cand, dtype=torch.float32).clone())

        self.device = torch.device("cpu")
        self.net = EdgeLogits()
        self.visits: dict[str, int] = {}  # training visits per question id: fresh, batch-free draws
        self.pruned_log: list[dict[str, int]] = []

    def to(self, device: str) -> AgentPrune:
        torch = _torch()
        self.device = torch.device(device)
        self.net.to(self.device)
        return self

    # -- probabilities ------------------------------------------------------------------------
    def _kinds(self) -> list[str]:
        return ["spatial", "temporal"] if self.temporal else ["spatial"]

    def probs(self, kind: str = "spatial") -> np.ndarray:
        """Edge probabilities of one kind (N x N, unmasked)."""
        torch = _torch()
        with torch.no_grad():
            return torch.sigmoid(getattr(self.net, kind)).detach().cpu().numpy().astype(np.float64)

    def mask(self, kind: str = "spatial") -> np.ndarray:
        return getattr(self.net, f"{kind}_mask").detach().cpu().numpy().astype(np.float64)

    def _round_graph(
        self, t: int, chosen: dict[str, np.ndarray], p_spatial: np.ndarray
    ) -> tuple[list[Edge], list[Edge]]:
        """(spatial DAG, temporal edges) of round t from chosen 0/1 matrices, constrained."""
        spatial = dag_by_priority(chosen["spatial"], p_spatial)
        temporal: list[Edge] = []
        if "temporal" in chosen and t >= self.temporal_from:
            a = chosen["temporal"]
            n = a.shape[0]
            temporal = [(i, j) for i in range(n) for j in range(n) if i != j and a[i, j]]
        return constrain_round(spatial, temporal, self.ctx.mask, self.ctx.in_budget, self.ctx.out_budget)

    def inference_graph(self, t: int) -> tuple[list[Edge], list[Edge]]:
        """The fixed graph: unpruned edges with probability >= threshold (spatial made a DAG), constrained."""
        chosen = {}
        for kind in self._kinds():
            p, m = self.probs(kind), self.mask(kind)
            chosen[kind] = (p >= self.threshold) & (m > 0)
        return self._round_graph(t, chosen, self.probs("spatial"))

    def inference_edges(self, t: int) -> list[Edge]:
        """The spatial edges of the fixed inference graph of round t."""
        return self.inference_graph(t)[0]

    # -- episode ---------------------------------------------------------------------------------
    def begin(self, questions: list[Question], train: bool, rng: np.random.Generator) -> dict[str, Any]:
        """One generator per question keyed by (seed, question id, training visit): batch-independent."""
        rngs = []
        for q in questions:
            if train:
                v = self.visits.get(q.id, 0)
                self.visits[q.id] = v + 1
                rngs.append(np.random.default_rng(stable_seed(self.ctx.seed, self.name, "train", q.id, v)))
            else:
                rngs.append(np.random.default_rng(stable_seed(self.ctx.seed, self.name, "eval", q.id)))
        return {"questions": questions, "train": bool(train), "rngs": rngs, "logp": {}, "edges": {}}

    def act(self, state: dict[str, Any], t: int, history: History) -> list[RoundGraph]:
        if not 2 <= t <= self.ctx.rounds:
            raise ValueError(f"act is for rounds 2..{self.ctx.rounds}, got t={t}")
        nodes = list(range(self.ctx.n_agents))
        if not state["train"]:
            edges, temporal = self.inference_graph(t)
            state["edges"][t] = [list(edges) for _ in state["questions"]]
            state.setdefault("temporal", {})[t] = [list(temporal) for _ in state["questions"]]
            return [
                RoundGraph(nodes=list(nodes), edges=list(edges), temporal_edges=list(temporal))
                for _ in state["questions"]
            ]
        n = self.ctx.n_agents
        kinds = [k for k in self._kinds() if k == "spatial" or t >= self.temporal_from]
        # Fixed draw count per round and kind, so a question's samples never depend on the others.
        samples = {k: np.stack([r.random((n, n)) for r in state["rngs"]]) for k in kinds}
        logp = None
        graphs, edges_t, temporal_t = [], [], []
        chosen: dict[str, np.ndarray] = {}
        probs: dict[str, np.ndarray] = {}
        for k in kinds:
            logits = getattr(self.net, k)
            mask_t = getattr(self.net, f"{k}_mask")
            p = probs[k] = self.probs(k)
            a = (samples[k] < p[None]) & (self.mask(k)[None] > 0)
            chosen[k] = a
            lp = bernoulli_matrix_log_prob(logits.unsqueeze(0), a.astype(np.float32), mask_t.unsqueeze(0))
            logp = lp if logp is None else logp + lp
        for qi in range(len(state["questions"])):
            edges, temporal = self._round_graph(t, {k: chosen[k][qi] for k in kinds}, probs["spatial"])
            graphs.append(RoundGraph(nodes=list(nodes), edges=list(edges), temporal_edges=list(temporal)))
            edges_t.append(edges)
            temporal_t.append(temporal)
        state["logp"][t] = logp
        state["edges"][t] = edges_t
        state.setdefault("temporal", {})[t] = temporal_t
        state.setdefault("samples", {})[t] = chosen
        return graphs

    # -- learning --------------------------------------------------------------------------------
    def regulariser(self) -> Any:
        """lowrank_weight * ||P (.) M||_* + l1_weight * ||P (.) M||_1 over spatial (and temporal) P."""
        torch = _torch()
        total = torch.zeros((), device=self.device)
        for k in self._kinds():
            p = torch.sigmoid(getattr(self.net, k)) * getattr(self.net, f"{k}_mask")
            total = total + self.lowrank_weight * nuclear_norm(p) + self.l1_weight * p.sum()
        return total

    def loss(self, state: dict[str, Any], episodes: list[Any], utilities: list[float]) -> Any:
        """-mean_q (u_q - b) sum_t log P(G_q^t) + regulariser (REINFORCE on utility)."""
        if not state["train"]:
            raise RuntimeError("AgentPrune.loss needs a batch begun with train=True (log-probs are sampled)")
        missing = [t for t in range(2, self.ctx.rounds + 1) if t not in state["logp"]]
        if missing:
            raise RuntimeError(f"no log-probs for rounds {missing}: call act for rounds 2..T first")
        torch = _torch()
        u = np.asarray(utilities, dtype=np.float64)
        if u.shape != (len(state["questions"]),):
            raise ValueError(f"{u.size} utilities for {len(state['questions'])} questions")
        b = float(u.mean()) if self.baseline == "batch_mean" else 0.0
        total = sum(state["logp"][t] for t in range(2, self.ctx.rounds + 1))
        adv = torch.as_tensor(u - b, dtype=total.dtype, device=total.device)
        return -(total * adv).mean() + self.regulariser()

    def parameters(self) -> list[Any]:
        ps = [self.net.spatial]
        if self.temporal:
            ps.append(self.net.temporal)
        return ps

    def prune(self) -> dict[str, int]:
        """One magnitude-pruning step on every learned mask; returns how many edges each lost."""
        torch = _torch()
        out = {}
        n_cand = int(self.candidates.sum())
        never = int(self.candidates.size - n_cand)  # diagonal and run-masked pairs
        for k in self._kinds():
            m = self.mask(k)
            cap = None
            if self.max_prune_fraction is not None:
                cap = never + int(math.floor(self.max_prune_fraction * n_cand))
            logits = getattr(self.net, k).detach().cpu().numpy().astype(np.float64)
            out[k] = magnitude_prune(logits, m, self.prune_rate, cap)
            with torch.no_grad():
                getattr(self.net, f"{k}_mask").copy_(torch.as_tensor(m, dtype=torch.float32))
        return out

    def on_iteration_end(self, iteration: int) -> None:
        """Prune every `prune_interval` iterations (iteration is 0-based, as the trainer counts)."""
        if (iteration + 1) % self.prune_interval == 0:
            self.pruned_log.append({"iteration": int(iteration), **self.prune()})

    def state_dict(self) -> dict[str, Any]:
        return {
            "net": {k: v.detach().cpu().clone() for k, v in self.net.state_dict().items()},
            "visits": dict(self.visits),
            "pruned_log": list(self.pruned_log),
            "meta": {"n_agents": self.ctx.n_agents, "temporal": self.temporal},
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        meta = state.get("meta", {})
        if meta.get("n_agents", self.ctx.n_agents) != self.ctx.n_agents:
            raise ValueError(f"checkpoint is for {meta['n_agents']} agents, this run has {self.ctx.n_agents}")
        self.net.load_state_dict(state["net"])
        self.visits = dict(state.get("visits", {}))
        self.pruned_log = list(state.get("pruned_log", []))

    def train_mode(self, train: bool) -> None:
        self.net.train(train)
