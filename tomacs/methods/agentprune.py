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
    one of the full Bernoulli sample: the kept graph is a deterministic function of it
    (`tomacs.graphs.dag_by_priority`, shared with G-Designer).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from tomacs.graphs import Edge, constrain_round, dag_by_priority
from tomacs.methods.base import History, MethodContext
from tomacs.methods.learned import (
    LearnedMethod,
    bernoulli_matrix_log_prob,
    nuclear_norm,
    reinforce_loss,
    torch_module,
)
from tomacs.methods.settings import LearnedSettings, bounded, choice
from tomacs.types import Episode, Question, RoundGraph

if TYPE_CHECKING:
    import torch

__all__ = ["AgentPrune", "AgentPruneSettings", "magnitude_prune"]

BASELINES = ("none", "batch_mean")


@dataclass
class AgentPruneSettings(LearnedSettings):
    """AgentPrune's keys (conf/method/agentprune.yaml extends this). "code" marks a value from the
    authors' public code/README (yanweiyue/AgentPrune), "ours" one neither gives (docs/deviations.md).
    It reads no text, so the run's `embedder` does not apply; lr: the public code's --lr 0.1 (the
    paper's value is not available offline)."""

    name: str = "agentprune"
    lr: float | None = 0.1
    # initial edge probability of every candidate edge (code: initial_*_probability 0.5)
    init_prob: float = bounded(0.5, 0.0, 1.0, open_low=True)
    temporal: bool = True  # learn temporal edges too (code: --optimized_spatial --optimized_temporal)
    # first round with temporal edges (reading round t-1 outputs): our round 1 is a finished round (ours)
    temporal_from_round: int = 2
    # fraction of remaining edges pruned per pruning step (code/README: --pruning_rate 0.25)
    prune_rate: float = bounded(0.25, 0.0, 1.0, open_high=False)
    prune_interval: int = bounded(1, 1.0)  # prune every k iterations; TodyComm §5 "pruning interval to 1"
    # cap on the pruned share of candidate edges; null = no cap (schedule as published)
    max_prune_fraction: float | None = bounded(None, 0.0, 1.0, open_high=False)
    lowrank_weight: float = 0.1  # weight of the nuclear norm ||P||_* low-rank term (ours)
    l1_weight: float = 0.01  # weight of the L1 sparsity term sum(P) (ours)
    threshold: float = 0.5  # inference: fixed graph of unpruned edges with probability >= 0.5 (issue spec)
    # REINFORCE reward baseline: none (paper/code, raw u) | batch_mean (ours, lower variance)
    baseline: str = choice("batch_mean", BASELINES)


_torch = torch_module


# -- pure helpers (unit-tested by hand) ---------------------------------------------------------
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
class AgentPrune(LearnedMethod):
    """Learned spatial/temporal edge logits with magnitude pruning. Keys: `AgentPruneSettings`."""

    Settings = AgentPruneSettings
    settings: AgentPruneSettings

    def __init__(self, ctx: MethodContext, **params: Any) -> None:
        super().__init__(ctx, **params)
        s = self.settings
        init_prob = s.init_prob
        self.prune_rate, self.prune_interval = s.prune_rate, s.prune_interval
        self.max_prune_fraction = s.max_prune_fraction
        self.baseline = s.baseline
        self.lowrank_weight, self.l1_weight, self.threshold = s.lowrank_weight, s.l1_weight, s.threshold
        self.temporal, self.temporal_from = s.temporal, s.temporal_from_round
        n = ctx.n_agents
        # Candidate edges: off-diagonal pairs the run's mask allows (a forbidden edge is never learned).
        cand = 1.0 - np.eye(n)
        if ctx.mask is not None:
            cand = cand * (np.asarray(ctx.mask) != 0)
        self.candidates = cand.astype(np.float32)
        logit0 = math.log(init_prob / (1.0 - init_prob))
        self.meta = {"n_agents": n, "temporal": self.temporal}
        from tomacs.methods.nets import EdgeLogits

        self.net = self.seeded(EdgeLogits, n, logit0, cand).to(self.device)
        self.pruned_log: list[dict[str, int]] = []

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

    # -- episode ---------------------------------------------------------------------------------
    def begin(self, questions: list[Question], train: bool, rng: np.random.Generator) -> dict[str, object]:
        """One generator per question keyed by (seed, question id, training visit): batch-independent."""
        rngs = self.question_rngs(questions, bool(train))
        return {"questions": questions, "train": bool(train), "rngs": rngs, "logp": {}, "edges": {}}

    def act(self, state: dict[str, Any], t: int, history: History) -> list[RoundGraph]:
        self.check_round(t)
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
    def regulariser(self) -> torch.Tensor:
        """lowrank_weight * ||P (.) M||_* + l1_weight * ||P (.) M||_1 over spatial (and temporal) P."""
        torch = _torch()
        total = torch.zeros((), device=self.device)
        for k in self._kinds():
            p = torch.sigmoid(getattr(self.net, k)) * getattr(self.net, f"{k}_mask")
            total = total + self.lowrank_weight * nuclear_norm(p) + self.l1_weight * p.sum()
        return total

    def loss(self, state: dict[str, Any], episodes: list[Episode], utilities: list[float]) -> torch.Tensor:
        """-mean_q (u_q - b) sum_t log P(G_q^t) + regulariser (REINFORCE on utility)."""
        u = self.utilities(state, utilities)
        missing = [t for t in range(2, self.ctx.rounds + 1) if t not in state["logp"]]
        if missing:
            raise RuntimeError(f"no log-probs for rounds {missing}: call act for rounds 2..T first")
        total = sum(state["logp"][t] for t in range(2, self.ctx.rounds + 1))
        # u - b is formed in float64 before the cast to the log-probs' dtype (as before issue 16)
        return reinforce_loss(total, u - self.baseline_value(u)) + self.regulariser()

    def parameters(self) -> list[torch.nn.Parameter]:
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

    def extra_state(self) -> dict[str, object]:
        return {"pruned_log": list(self.pruned_log)}

    def load_extra_state(self, state: dict[str, Any]) -> None:
        self.pruned_log = list(state.get("pruned_log", []))
