"""G-Designer (Zhang et al., 2025b; shared/papers/g-designer.txt), a query-conditioned topology baseline.

Paper map (the paper's version; the authors' code drops the variational encoder and Eq. 14's terms):
  * §4.1 Eq. 7   node features x_i = NodeEncoder(T(Base_i), Role_i, T(Plugin_i)): the embedding of
    the agent's role profile, backbone name and tools ("none" here: no agent has plugins).
  * §4.1 Eq. 8   a task virtual node x_task = NodeEncoder(Q), bidirectionally linked to every agent,
    plus an anchor topology over the agents (a chain by default, §5.1).
  * §4.2 Eq. 10  VGAE encoder: mu = GCN_mu(X, A), log sigma = GCN_sigma(X, A), two GCN layers (the
    first shared, as in Kipf & Welling's VGAE), h = mu + sigma * eps; KL(q(h) || N(0, I)).
  * §4.2 Eq. 12-13  edge decoder: varpi_ij = FFN_d([h_i, h_j, h_task]), p_ij = sigmoid(varpi_ij);
    the Eq. 13 relaxed sample thresholded at 0.5 is exactly Bernoulli(p_ij), which we draw directly.
  * §4.2 Eq. 14  regularisers on the probability matrix P (we take S~ = P, see docs/deviations.md):
    anchor 1/2 ||A_anchor - P||_F^2 and sparsity zeta ||P||_* with zeta = 0.1 (§5.1).
  * §4.3 Eq. 16-17  REINFORCE on the utility with log P(G) = sum of the sampled edges' log-likelihoods.

One graph is drawn per query (it depends on the query embedding) and used in every round t = 2..T.
The sampled graph is made a DAG by keeping edges in descending probability order and skipping any
that would close a cycle (`tomacs.graphs.dag_by_priority`), then the run's mask and budgets apply
(`constrain`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from tomacs.agents.roles import role_profile
from tomacs.graphs import Edge, chain, complete_dag, constrain, dag_by_priority, empty, star
from tomacs.methods.base import MethodContext
from tomacs.methods.learned import (
    LearnedMethod,
    bernoulli_matrix_log_prob,
    nuclear_norm,
    reinforce_loss,
    torch_module,
)
from tomacs.methods.settings import LearnedSettings, choice
from tomacs.types import Episode, Question

if TYPE_CHECKING:
    import torch

__all__ = [
    "ANCHORS",
    "GDesigner",
    "GDesignerSettings",
    "agent_text",
    "anchor_adjacency",
    "anchor_loss",
    "kl_normal",
    "query_text",
]

ANCHORS = ("chain", "star", "complete", "none")
BASELINES = ("none", "batch_mean")
INFERENCE = ("sample", "threshold")


@dataclass
class GDesignerSettings(LearnedSettings):
    """G-Designer's keys (conf/method/gdesigner.yaml extends this). Texts are embedded with the run's
    `embedder` (default MiniLM: NodeEncoder all-MiniLM-L6-v2, D = 384, §5.1); lr: null = top-level
    train.lr (the paper gives no learning rate)."""

    name: str = "gdesigner"
    # anchor topology A_anchor: chain (§5.1 "a simple chain structure") | star | complete | none
    anchor: str = choice("chain", ANCHORS)
    hidden_size: int = 64  # first (shared) GCN layer width of the two-layer encoder (§4.2: not given; ours)
    latent_size: int = 32  # latent h_i size, GCN_mu / GCN_sigma output (ours; paper does not give it)
    decoder_hidden: int = 64  # hidden width of FFN_d in Eq. 13 (ours; paper does not give it)
    anchor_weight: float = 0.5  # Eq. 14 anchor term 1/2 ||A_anchor - S~||_F^2 (the 1/2 of Eq. 14)
    sparse_weight: float = 0.1  # zeta of Eq. 14, sparsity ||S~||_* (§5.1: zeta = 1e-1)
    kl_weight: float = 1.0  # weight of the VGAE KL(q(h) || N(0, I)) of Eq. 10 (ours; paper gives none)
    # REINFORCE reward baseline: none (Eq. 17, raw u) | batch_mean (ours, lower variance)
    baseline: str = choice("batch_mean", BASELINES)
    # test-time graph: sample (Eq. 13 at fixed parameters, seeded per question) | threshold
    inference: str = choice("sample", INFERENCE)
    threshold: float = 0.5  # inference=threshold only: keep edges with p >= 0.5


_torch = torch_module


# -- pure helpers (unit-tested by hand) ---------------------------------------------------------
def anchor_adjacency(kind: str, n: int) -> np.ndarray:
    """N x N 0/1 anchor topology over agents 0..N-1 (§4.1; the paper's experiments use a chain)."""
    builders = {"chain": chain, "star": star, "complete": complete_dag, "none": lambda order: empty()}
    if kind not in builders:
        raise ValueError(f"anchor must be one of {ANCHORS}, got {kind!r}")
    a = np.zeros((n, n), dtype=np.float32)
    for i, j in builders[kind](list(range(n))):
        a[i, j] = 1.0
    return a


def kl_normal(mu: torch.Tensor, logsigma: torch.Tensor) -> torch.Tensor:
    """KL(N(mu, sigma^2) || N(0, I)) summed over the latent axis, averaged over the other axes.

    = 1/2 sum_d (mu^2 + sigma^2 - 1 - 2 log sigma), the VGAE prior term (Kipf & Welling, 2016).
    """
    return 0.5 * (mu.pow(2) + (2.0 * logsigma).exp() - 1.0 - 2.0 * logsigma).sum(-1).mean()


def anchor_loss(p: torch.Tensor, anchor: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """1/2 ||A_anchor - P||_F^2 over candidate pairs (Eq. 14's anchor term with S~ = P)."""
    return 0.5 * ((anchor - p).pow(2) * mask).sum(dim=(-2, -1))


def agent_text(role: str, backbone: str, tools: str = "none") -> str:
    """Eq. 7's NodeEncoder input: T(Base_i), Role_i and T(Plugin_i) as one text."""
    return f"{role_profile(role)} Backbone: {backbone}. Tools: {tools}."


def query_text(q: Question) -> str:
    """Eq. 8's task node input: the query as the agents see it (options included)."""
    if q.options:
        opts = " ".join(f"{lab}. {o}" for lab, o in zip(q.labels, q.options, strict=True))
        return f"{q.text} {opts}"
    return q.text


# -- the method ----------------------------------------------------------------------------------
class GDesigner(LearnedMethod):
    """VGAE over agents + task node decodes one DAG per query. Keys: `GDesignerSettings`."""

    Settings = GDesignerSettings
    settings: GDesignerSettings

    def __init__(self, ctx: MethodContext, **params: Any) -> None:
        super().__init__(ctx, **params)
        s = self.settings
        self.baseline, self.inference = s.baseline, s.inference
        n = ctx.n_agents
        self.anchor_kind = s.anchor
        self.anchor = anchor_adjacency(self.anchor_kind, n)
        self.anchor_weight, self.sparse_weight, self.kl_weight = s.anchor_weight, s.sparse_weight, s.kl_weight
        self.threshold = s.threshold
        self.hidden, self.latent, self.dec_hidden = s.hidden_size, s.latent_size, s.decoder_hidden
        cand = 1.0 - np.eye(n)
        if ctx.mask is not None:
            cand = cand * (np.asarray(ctx.mask) != 0)
        self.candidates = cand.astype(np.float32)
        # Directed anchor edges among agents plus task <-> every agent (Eq. 8), as a GCN edge_index.
        task = n
        pairs = [(int(i), int(j)) for i, j in zip(*np.nonzero(self.anchor), strict=True)]
        pairs += [(i, task) for i in range(n)] + [(task, i) for i in range(n)]
        self._edge_pairs = pairs
        self.meta = {
            "n_agents": n,
            "emb_dim": self.emb_dim,
            "hidden_size": self.hidden,
            "latent_size": self.latent,
            "decoder_hidden": self.dec_hidden,
            "anchor": self.anchor_kind,
        }
        from tomacs.methods.nets import VGAEDesigner

        self.net = self.seeded(VGAEDesigner, self.emb_dim, self.hidden, self.latent, self.dec_hidden)
        self.net = self.net.to(self.device)
        self._agent_x: np.ndarray | None = None

    # -- features ----------------------------------------------------------------------------------
    def _embed(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self.embedder.embed(texts), dtype=np.float32)

    def agent_features(self) -> np.ndarray:
        """X_agent (N x D), computed once: profiles do not change during a run."""
        if self._agent_x is None:
            conds = self.ctx.extra.get("conditions") or [{} for _ in range(self.ctx.n_agents)]
            texts = [
                agent_text(role, str(c.get("backbone") or "unknown"))
                for role, c in zip(self.ctx.roles, conds, strict=True)
            ]
            self._agent_x = self._embed(texts)
        return self._agent_x

    def _edge_index(self, q: int) -> Any:
        torch = _torch()
        n1 = self.ctx.n_agents + 1
        base = torch.as_tensor(self._edge_pairs, dtype=torch.long).t()
        ei = torch.cat([base + k * n1 for k in range(q)], dim=1)
        return ei.to(self.device)

    def forward(self, questions: list[Question], noise: torch.Tensor | None) -> dict[str, torch.Tensor]:
        """Encode every query's network in one disjoint batch; returns logits (Q, N, N), mu, logsigma.

        `noise` (Q, N+1, L) is the reparameterisation eps; None decodes from mu (inference).
        """
        torch = _torch()
        n, qn = self.ctx.n_agents, len(questions)
        xa = self.agent_features()
        xt = self._embed([query_text(q) for q in questions])
        x = np.concatenate([np.broadcast_to(xa, (qn, n, xa.shape[1])), xt[:, None, :]], axis=1)
        xs = torch.as_tensor(x.reshape(qn * (n + 1), -1), device=self.device)
        mu, logsigma = self.net.encode(xs, self._edge_index(qn))
        mu = mu.view(qn, n + 1, -1)
        logsigma = logsigma.view(qn, n + 1, -1)
        h = mu if noise is None else mu + logsigma.exp() * noise.to(self.device)
        return {"logits": self.net.decode(h, n), "mu": mu, "logsigma": logsigma}

    def _graph(self, chosen: np.ndarray, probs: np.ndarray) -> list[Edge]:
        edges = dag_by_priority(chosen, probs)
        return constrain(edges, self.ctx.mask, self.ctx.in_budget, self.ctx.out_budget)

    # -- episode ---------------------------------------------------------------------------------
    def begin(self, questions: list[Question], train: bool, rng: np.random.Generator) -> dict[str, object]:
        """Design every query's graph now: one draw per query from its own (seed, id, visit) generator."""
        torch = _torch()
        n = self.ctx.n_agents
        seeds = self.question_seeds(questions, bool(train))
        noise = None
        if train:
            gens = [torch.Generator().manual_seed(s) for s in seeds]
            noise = torch.stack([torch.randn(n + 1, self.latent, generator=g) for g in gens])
        with torch.set_grad_enabled(bool(train)):
            out = self.forward(questions, noise)
        probs = torch.sigmoid(out["logits"]).detach().cpu().numpy().astype(np.float64)
        cand = self.candidates[None] > 0
        if train or self.inference == "sample":
            u = np.stack([np.random.default_rng(s).random((n, n)) for s in seeds])
            chosen = (u < probs) & cand
        else:
            chosen = (probs >= self.threshold) & cand
        edges = [self._graph(chosen[k], probs[k]) for k in range(len(questions))]
        state: dict[str, Any] = {
            "questions": questions,
            "train": bool(train),
            "edges": edges,
            "probs": probs,
            "chosen": chosen,
        }
        if train:
            state["out"] = out
            state["noise"] = noise
            state["logp"] = bernoulli_matrix_log_prob(
                out["logits"], chosen.astype(np.float32), torch.as_tensor(self.candidates, device=self.device)
            )
        return state

    # -- learning --------------------------------------------------------------------------------
    def regularisers(self, out: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """Per-batch means of the anchor, sparsity (nuclear norm) and KL terms, unweighted."""
        torch = _torch()
        mask = torch.as_tensor(self.candidates, device=self.device)
        anchor = torch.as_tensor(self.anchor, device=self.device)
        p = torch.sigmoid(out["logits"]) * mask
        return {
            "anchor": anchor_loss(p, anchor, mask).mean(),
            "sparse": nuclear_norm(p).mean(),
            "kl": kl_normal(out["mu"], out["logsigma"]),
        }

    def loss(self, state: dict[str, Any], episodes: list[Episode], utilities: list[float]) -> torch.Tensor:
        """L = L_utility (Eq. 17) + anchor_weight * anchor + sparse_weight * ||P||_* + kl_weight * KL."""
        u = self.utilities(state, utilities)
        reg = self.regularisers(state["out"])
        # u - b is formed in float64 before the cast to the log-probs' dtype (as before issue 16)
        return (
            reinforce_loss(state["logp"], u - self.baseline_value(u))
            + self.anchor_weight * reg["anchor"]
            + self.sparse_weight * reg["sparse"]
            + self.kl_weight * reg["kl"]
        )
