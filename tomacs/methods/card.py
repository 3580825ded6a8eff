"""CARD: a conditional graph designer whose edges depend on each agent's runtime condition.

Paper map (shared/papers/card.txt):
  * §4 Agent repr.   profile channel X_p: the embedded role profile of each agent; condition channel
    X_c: T_c(C_i), a verbalised condition ("runs on <backbone>, relative capability .., relative
    cost ..") embedded by the same text encoder, plus (ours, `condition_numeric`) the raw
    [capability, cost] so magnitudes reach the encoder even through a hashing embedder.
  * Alg. 1 l. 9-11   the query is a virtual node; the anchor A is fully connected + task node.
  * Eq. 7-8          two graph encoders phi_p, phi_c (`gnn_layers` SAGEConv layers each) over A.
  * Eq. 9            decoder psi: S_ij = sigmoid(MLP[h_i^p, h_i^c, h_j^p, h_j^c, h_Q]) for every
    ordered pair (directed, as the paper's S), h_Q the query node's states in both channels.
  * Eq. 10           inference: E = {(i, j) | S_ij > tau}.
  * Eq. 11-12        loss = -u + beta * sum_ij Cost_ij p_ij. u is not differentiable (black-box LLMs),
    so -u enters as REINFORCE on a Bernoulli(S) sample in training (as the issue asks; the paper does
    not say how it differentiates u). Cost_ij is the per-call cost of the agent that pays for the
    message (`edge_cost`: receiver j by default, since j reads the extra tokens), summed over the
    pairs the run's mask allows; the regulariser backpropagates through the soft S (§4 "training
    backpropagates through S").
  * Eq. 13           runtime adaptation: `set_conditions` (or a run's `conditions=`) changes X_c and
    the next `begin`/`decode` re-decodes the graph with the same parameters.

The DAG is made by `tomacs.graphs.sequential_dag`: pairs by decreasing S_ij (ties by index),
skipping pairs the mask, a budget or the cycle rule excludes; the rest are kept iff S_ij > tau
(inference) or by their Bernoulli draw (training). Log-probabilities are exact for that process.
The decision is the base class's (TodyComm's fairness rule for baselines).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from tomacs.agents.roles import role_profile
from tomacs.graphs import sequential_dag
from tomacs.methods.base import MethodContext
from tomacs.methods.learned import (
    LearnedMethod,
    decisions_log_prob,
    question_text,
    reinforce_loss,
    torch_module,
)
from tomacs.methods.settings import LearnedSettings, bounded, choice
from tomacs.types import AgentCondition, Episode, Question

if TYPE_CHECKING:
    import torch

__all__ = ["CARD", "CARDSettings", "condition_text", "edge_costs", "normalise_conditions"]

BASELINES = ("none", "batch_mean")
EDGE_COSTS = ("receiver", "sender", "mean")
CONDITION_KEYS = ("capability", "cost", "backbone")


@dataclass
class CARDSettings(LearnedSettings):
    """CARD's keys (conf/method/card.yaml extends this). Texts are embedded with the run's `embedder`
    (default MiniLM as in G-Designer §5; the paper names no encoder); lr: null = top-level train.lr
    (the paper reports no learning rate)."""

    name: str = "card"
    # layers of phi_p and phi_c, Eq. 7-8 (ours; G-Designer, which CARD extends, uses a 2-layer GCN)
    gnn_layers: int = bounded(2, 1.0)
    hidden_size: int = 32  # hidden width of both encoders (ours; the paper does not report it)
    out_dim: int = 16  # width of h^p, h^c (ours)
    decoder_hidden: int = 32  # hidden width of the decoder psi, Eq. 9 (ours)
    # tau of Eq. 10 (paper: "user-specified or validation-selected"; value ours)
    threshold: float = bounded(0.5, 0.0, 1.0, open_low=True)
    beta: float = bounded(0.01, 0.0)  # beta of Eq. 11 (paper gives no value; ours)
    # Cost_ij of Eq. 12: receiver (j reads the message, ours) | sender | mean
    edge_cost: str = choice("receiver", EDGE_COSTS)
    condition_numeric: bool = True  # ours: append raw [capability, cost] to the embedded condition T_c (§4)
    baseline: str = choice("none", BASELINES)  # REINFORCE baseline for -u of Eq. 11: none | batch_mean (ours)


_torch = torch_module


def normalise_conditions(conditions: Sequence[Mapping[str, object]] | None, n: int) -> list[AgentCondition]:
    """Fill missing keys with the defaults of `tomacs.job.components.agent_conditions` and check values, so a
    condition set by hand at runtime is read exactly like one from a config."""
    if conditions is None:
        conditions = [{} for _ in range(n)]
    if len(conditions) != n:
        raise ValueError(f"need one condition per agent ({n}), got {len(conditions)}")
    out: list[AgentCondition] = []
    for i, c in enumerate(conditions):
        extra = set(c) - set(CONDITION_KEYS)
        if extra:
            raise ValueError(f"conditions[{i}] has unknown keys {sorted(extra)}; valid: {CONDITION_KEYS}")
        given: dict[str, Any] = {"capability": 1.0, "cost": 1.0, "backbone": "sim", **c}
        d = AgentCondition(
            capability=float(given["capability"]), cost=float(given["cost"]), backbone=str(given["backbone"])
        )
        if d["capability"] <= 0 or d["cost"] < 0:
            raise ValueError(f"conditions[{i}]: capability must be > 0 and cost >= 0, got {d}")
        out.append(d)
    return out


def condition_text(c: AgentCondition) -> str:
    """T_c of §4: the verbalised runtime condition of one agent (cf. the model template, App. F)."""
    return (
        f"This agent runs on the {c['backbone']} model. Its relative capability is {c['capability']:.2f} "
        f"and its relative cost per call is {c['cost']:.2f}."
    )


def edge_costs(conditions: Sequence[AgentCondition], mode: str, mask: np.ndarray | None = None) -> np.ndarray:
    """Cost_ij of Eq. 12 for every ordered pair (0 on the diagonal and on masked pairs)."""
    cost = np.array([c["cost"] for c in conditions], dtype=np.float64)
    n = cost.size
    if mode == "receiver":
        m = np.tile(cost[None, :], (n, 1))
    elif mode == "sender":
        m = np.tile(cost[:, None], (1, n))
    elif mode == "mean":
        m = 0.5 * (cost[:, None] + cost[None, :])
    else:
        raise ValueError(f"edge_cost must be one of {EDGE_COSTS}, got {mode!r}")
    np.fill_diagonal(m, 0.0)
    if mask is not None:
        m = m * (np.asarray(mask) != 0)
    return m


class CARD(LearnedMethod):
    """CARD baseline. Config keys: `CARDSettings`."""

    Settings = CARDSettings
    settings: CARDSettings

    def __init__(self, ctx: MethodContext, **params: Any) -> None:
        super().__init__(ctx, **params)
        s = self.settings
        self.baseline, self.edge_cost = s.baseline, s.edge_cost
        self.threshold, self.beta = s.threshold, s.beta
        self.numeric = s.condition_numeric
        self.c_dim = self.emb_dim + (2 if self.numeric else 0)
        self.meta = {
            "emb_dim": self.emb_dim,
            "condition_numeric": self.numeric,
            "gnn_layers": s.gnn_layers,
            "hidden_size": s.hidden_size,
            "out_dim": s.out_dim,
            "decoder_hidden": s.decoder_hidden,
            "n_agents": ctx.n_agents,
        }
        # conditions live in ctx.extra so `begin` always reads the current ones (Eq. 13)
        ctx.extra["conditions"] = normalise_conditions(ctx.extra.get("conditions"), ctx.n_agents)
        torch = _torch()
        from tomacs.methods.nets import CARDNet

        self.net = self.seeded(
            CARDNet,
            self.emb_dim,
            self.c_dim,
            self.meta["hidden_size"],
            self.meta["out_dim"],
            self.meta["gnn_layers"],
            self.meta["decoder_hidden"],
        )
        n = ctx.n_agents
        # anchor A (Alg. 1 l. 10): agents fully connected, plus the task node n linked both ways to all
        pairs = [(i, j) for i in range(n + 1) for j in range(n + 1) if i != j]
        self._anchor = torch.as_tensor([[a for a, _ in pairs], [b for _, b in pairs]], dtype=torch.long)
        self.to(ctx.device)

    # -- plumbing --------------------------------------------------------------------------------
    def moved(self, device: torch.device) -> None:
        self._anchor = self._anchor.to(device)

    @property
    def conditions(self) -> list[AgentCondition]:
        return [c.copy() for c in self.ctx.extra["conditions"]]

    def set_conditions(self, conditions: Sequence[Mapping[str, object]]) -> None:
        """Runtime adaptation (Eq. 13): new conditions take effect at the next begin/decode, with no
        parameter update."""
        self.ctx.extra["conditions"] = normalise_conditions(conditions, self.ctx.n_agents)

    # -- forward (Eq. 7-9) -----------------------------------------------------------------------
    def _condition_features(self, conditions: Sequence[AgentCondition]) -> torch.Tensor:
        torch = _torch()
        x = torch.as_tensor(self.embedder.embed([condition_text(c) for c in conditions]), device=self.device)
        if self.numeric:
            num = torch.as_tensor(
                [[c["capability"], c["cost"]] for c in conditions], dtype=x.dtype, device=self.device
            )
            x = torch.cat([x, num], dim=-1)
        return x

    def forward(
        self, questions: list[Question], conditions: Sequence[Mapping[str, object]] | None = None
    ) -> torch.Tensor:
        """S of Eq. 9 for every question: (Q, N, N) link probabilities, diagonal meaningless."""
        torch = _torch()
        n, b = self.ctx.n_agents, len(questions)
        conds = normalise_conditions(conditions, n) if conditions is not None else self.conditions
        xp = torch.as_tensor(
            self.embedder.embed([role_profile(r) for r in self.ctx.roles]), device=self.device
        )
        xc = self._condition_features(conds)
        qe = torch.as_tensor(self.embedder.embed([question_text(q) for q in questions]), device=self.device)
        pad = torch.zeros(b, self.c_dim - self.emb_dim, dtype=qe.dtype, device=self.device)
        # per question: N agent rows + the task node (its query embedding in both channels)
        xp_b = torch.cat([xp.unsqueeze(0).expand(b, n, -1), qe.unsqueeze(1)], dim=1).reshape(b * (n + 1), -1)
        qc = torch.cat([qe, pad], dim=-1).unsqueeze(1)
        xc_b = torch.cat([xc.unsqueeze(0).expand(b, n, -1), qc], dim=1).reshape(b * (n + 1), -1)
        ei = torch.cat([self._anchor + k * (n + 1) for k in range(b)], dim=1)
        hp = self.net.profile(xp_b, ei).view(b, n + 1, -1)
        hc = self.net.condition(xc_b, ei).view(b, n + 1, -1)
        h = torch.cat([hp, hc], dim=-1)  # (Q, N+1, 2d)
        agents, hq = h[:, :n], h[:, n]
        d2 = agents.shape[-1]
        pair = torch.cat(
            [
                agents.unsqueeze(2).expand(b, n, n, d2),  # sender i
                agents.unsqueeze(1).expand(b, n, n, d2),  # receiver j
                hq[:, None, None, :].expand(b, n, n, d2),
            ],
            dim=-1,
        )
        return torch.sigmoid(self.net.decoder(pair).squeeze(-1))

    def decode(
        self, questions: list[Question], conditions: Sequence[Mapping[str, object]] | None = None
    ) -> tuple[np.ndarray, list[list[tuple[int, int]]]]:
        """Inference graphs (Eq. 10) under the given or current conditions, without gradients."""
        torch = _torch()
        ctx = self.ctx
        with torch.no_grad():
            s = self.forward(questions, conditions).cpu().numpy().astype(np.float64)
        graphs = [
            sequential_dag(s[k], ctx.mask, ctx.in_budget, ctx.out_budget, threshold=self.threshold)[0]
            for k in range(len(questions))
        ]
        return s, graphs

    # -- episode ---------------------------------------------------------------------------------
    def begin(self, questions: list[Question], train: bool, rng: np.random.Generator) -> dict[str, object]:
        """Decode each query's DAG once under the current conditions: sampled in training, thresholded
        otherwise."""
        torch = _torch()
        ctx = self.ctx
        conds = self.conditions
        with torch.set_grad_enabled(bool(train)):
            s = self.forward(questions, conds)
        s_np = s.detach().cpu().numpy().astype(np.float64)
        edges, logps = [], []
        rngs = self.question_rngs(questions, bool(train)) if train else None
        for k in range(len(questions)):
            if rngs is not None:
                u = rngs[k].random(s_np[k].shape)
                e, dec = sequential_dag(s_np[k], ctx.mask, ctx.in_budget, ctx.out_budget, uniforms=u)
                logps.append(decisions_log_prob(s[k], dec))
            else:
                e, _ = sequential_dag(
                    s_np[k], ctx.mask, ctx.in_budget, ctx.out_budget, threshold=self.threshold
                )
            edges.append(e)
        state: dict[str, Any] = {
            "questions": questions,
            "train": bool(train),
            "rng": rng,
            "edges": edges,
            "probs": s_np,
            "conditions": conds,
            "logp": torch.stack(logps) if logps else None,
        }
        if train:
            cost = torch.as_tensor(
                edge_costs(conds, self.edge_cost, ctx.mask), dtype=s.dtype, device=s.device
            )
            state["reg"] = (s * cost).sum(dim=(1, 2))  # Eq. 12 per question
        return state

    # -- learning --------------------------------------------------------------------------------
    def loss(self, state: dict[str, Any], episodes: list[Episode], utilities: list[float]) -> torch.Tensor:
        """Eq. 11: REINFORCE for -u plus beta * Eq. 12, averaged over the batch."""
        u = self.utilities(state, utilities)
        return reinforce_loss(state["logp"], u, self.baseline_value(u)) + self.beta * state["reg"].mean()
