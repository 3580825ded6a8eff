"""EIB-Learner: query-aware fusion of a sparse-view and a dense-view GNN edge model.

Paper map (shared/papers/eib-learner.txt):
  * Eq. 7            node feature x_i = NodeEncoder(T(Role_i), Q): the role profile embedding
    concatenated with the query embedding (the paper says both enter the feature; the concatenation
    lets the role embedding be cached across queries).
  * Eq. 8, §4.1      two GNNs with `gnn_layers` layers (K = 3 = number of rounds, §5.1): one over the
    chain (sparse view, error suppression, Finding 1), one over the complete graph (dense view,
    insight propagation, Finding 2). Message passing is over the undirected views; each layer is
    MP(m_i, {m_j}) = W_1 m_i + W_2 mean_j m_j (torch_geometric SAGEConv), which keeps Eq. 8's own
    term: with a GCN every node of the complete view would collapse to the same vector.
  * Eq. 9            inner-product decoders M_view = sigmoid(Z_view Z_view^T).
  * Alg. 1 / Eq. 10  alpha = softmax(W2 ReLU(W1 Q + b1)) over (dense, sparse);
    M_final = alpha_dense M_dense + alpha_sparse M_sparse.
  * §4.2             Bernoulli edge sampling from M_final (AgentPrune's strategy), training and
    inference alike; `inference=threshold` is an opt-in deterministic variant.
  * Eq. 11           REINFORCE: loss = -mean_q (u_q - b) log P(G_q), b = 0 in the paper (`baseline`).
    The paper has no information-bottleneck or sparsity regulariser: L_EIB-LEARNER of Alg. 1 is
    Eq. 11 alone, so none is added.
  * Table 2          ablations: no_dense, no_sparse, no_fusion (direct addition, clipped at 1).

DAG rule (`tomacs.graphs.sequential_dag`, shared with CARD): ordered pairs (i, j), i != j, are visited by
decreasing edge probability (ties: smaller i, then smaller j). A pair is skipped, i.e. never
drawn and absent from the log-probability, when the run's mask forbids it, a node's in/out budget
is used up, or i -> j would close a cycle; otherwise its Bernoulli draw (or threshold test) decides
it. The graph therefore is a DAG under the run's constraints by construction, and log P(G) is the
exact likelihood of the sampled graph under this sequential process. One graph per query, used for
every round 2..T; the decision is the base class's (TodyComm's fairness rule for baselines).

Seeding: each question's draw uses a generator keyed by (seed, method, phase, question id, and in
training the number of times this method has trained on that question), so batching never changes
a graph, while a question seen again in a later epoch gets a fresh sample.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from tomacs.agents.roles import role_profile
from tomacs.graphs import Edge, sequential_dag
from tomacs.methods.base import MethodContext
from tomacs.methods.learned import (
    LearnedMethod,
    decisions_log_prob,
    question_text,
    reinforce_loss,
    torch_module,
)
from tomacs.methods.settings import LearnedSettings, bounded, choice
from tomacs.types import Episode, Question

if TYPE_CHECKING:
    import torch

__all__ = ["EIBLearner", "EIBSettings"]

ABLATIONS = ("none", "no_dense", "no_sparse", "no_fusion")
BASELINES = ("none", "batch_mean")
INFERENCE = ("sample", "threshold")


@dataclass
class EIBSettings(LearnedSettings):
    """EIB-Learner's keys (conf/method/eib.yaml extends this). Texts are embedded with the run's
    `embedder` (default MiniLM, §5.1: NodeEncoder = all-MiniLM-L6-v2, D = 384); lr: null = top-level
    train.lr (the paper reports no learning rate)."""

    name: str = "eib"
    gnn_layers: int = bounded(3, 1.0)  # §5.1: "K = 3 ... also corresponds to the number of GNN layers used"
    hidden_size: int = 32  # hidden width of both GNN views (ours; the paper does not report it)
    out_dim: int = 16  # width of Z_view fed to the inner-product decoder, Eq. 9 (ours)
    gate_hidden: int = 32  # width of W1 in the gate alpha = softmax(W2 ReLU(W1 Q + b1)), Alg. 1 (ours)
    # §4.2: graphs are Bernoulli-sampled from M_final | threshold (ours, deterministic)
    inference: str = choice("sample", INFERENCE)
    # inference=threshold only: keep edges with M_final > threshold (ours)
    threshold: float = bounded(0.5, 0.0, 1.0, open_low=True)
    baseline: str = choice("none", BASELINES)  # Eq. 11: raw utility phi(O_m) (paper) | batch_mean (ours)
    # Table 2: none | no_dense | no_sparse | no_fusion (direct addition, clipped at 1)
    ablation: str = choice("none", ABLATIONS)


_torch = torch_module


def _undirected_index(pairs: list[Edge]) -> list[list[int]]:
    both = sorted({(a, b) for a, b in pairs} | {(b, a) for a, b in pairs})
    return [[a for a, _ in both], [b for _, b in both]]


def _batched_edge_index(base: Any, n_nodes: int, batch: int) -> Any:
    """Block-diagonal copy of one small graph's edge index for `batch` graphs."""
    torch = _torch()
    if base.numel() == 0:
        return base
    return torch.cat([base + k * n_nodes for k in range(batch)], dim=1)


# -- the method ------------------------------------------------------------------------------------
class EIBLearner(LearnedMethod):
    """EIB-Learner baseline. Config keys: `EIBSettings`."""

    Settings = EIBSettings
    settings: EIBSettings

    def __init__(self, ctx: MethodContext, **params: Any) -> None:
        super().__init__(ctx, **params)
        s = self.settings
        self.ablation, self.baseline, self.inference = s.ablation, s.baseline, s.inference
        self.threshold = s.threshold
        self.meta = {
            "emb_dim": self.emb_dim,
            "gnn_layers": s.gnn_layers,
            "hidden_size": s.hidden_size,
            "out_dim": s.out_dim,
            "gate_hidden": s.gate_hidden,
            "n_agents": ctx.n_agents,
        }
        torch = _torch()
        from tomacs.methods.nets import EIBNet

        self.net = self.seeded(
            EIBNet,
            2 * self.emb_dim,
            self.emb_dim,
            self.meta["hidden_size"],
            self.meta["out_dim"],
            self.meta["gnn_layers"],
            self.meta["gate_hidden"],
        )
        n = ctx.n_agents
        self._sparse_ei = torch.as_tensor(
            _undirected_index([(i, i + 1) for i in range(n - 1)]), dtype=torch.long
        )
        self._dense_ei = torch.as_tensor(
            _undirected_index([(i, j) for i in range(n) for j in range(i + 1, n)]), dtype=torch.long
        )
        self.to(ctx.device)

    # -- plumbing --------------------------------------------------------------------------------
    def moved(self, device: torch.device) -> None:
        self._sparse_ei = self._sparse_ei.to(device)
        self._dense_ei = self._dense_ei.to(device)

    # -- forward (Eq. 7-10) ------------------------------------------------------------------------
    def forward(self, questions: list[Question]) -> dict[str, torch.Tensor]:
        """Edge probabilities of every question: M_final (Q, N, N) plus the views and gate weights."""
        torch = _torch()
        n, b = self.ctx.n_agents, len(questions)
        roles = torch.as_tensor(
            self.embedder.embed([role_profile(r) for r in self.ctx.roles]), device=self.device
        )
        qe = torch.as_tensor(self.embedder.embed([question_text(q) for q in questions]), device=self.device)
        x = torch.cat([roles.unsqueeze(0).expand(b, n, -1), qe.unsqueeze(1).expand(b, n, -1)], dim=-1)
        x = x.reshape(b * n, -1)
        z_s = self.net.sparse(x, _batched_edge_index(self._sparse_ei, n, b)).view(b, n, -1)
        z_d = self.net.dense(x, _batched_edge_index(self._dense_ei, n, b)).view(b, n, -1)
        m_s = torch.sigmoid(z_s @ z_s.transpose(1, 2))
        m_d = torch.sigmoid(z_d @ z_d.transpose(1, 2))
        alpha = torch.softmax(self.net.gate(qe), dim=-1)  # (Q, 2): [dense, sparse]
        if self.ablation == "no_dense":
            m = m_s
        elif self.ablation == "no_sparse":
            m = m_d
        elif self.ablation == "no_fusion":
            m = (m_d + m_s).clamp(max=1.0)
        else:
            m = alpha[:, 0, None, None] * m_d + alpha[:, 1, None, None] * m_s
        return {"probs": m, "dense": m_d, "sparse": m_s, "alpha": alpha}

    # -- episode ---------------------------------------------------------------------------------
    def begin(self, questions: list[Question], train: bool, rng: np.random.Generator) -> dict[str, object]:
        """Decide each query's DAG once (Alg. 1): sampled in training, `inference` rule otherwise."""
        torch = _torch()
        ctx = self.ctx
        with torch.set_grad_enabled(bool(train)):
            out = self.forward(questions)
        probs = out["probs"]
        p_np = probs.detach().cpu().numpy().astype(np.float64)
        rngs = self.question_rngs(questions, bool(train))
        edges, logps = [], []
        for k, r in enumerate(rngs):
            uniforms = r.random(p_np[k].shape)
            if train or self.inference == "sample":
                e, dec = sequential_dag(p_np[k], ctx.mask, ctx.in_budget, ctx.out_budget, uniforms=uniforms)
            else:
                e, dec = sequential_dag(
                    p_np[k], ctx.mask, ctx.in_budget, ctx.out_budget, threshold=self.threshold
                )
            edges.append(e)
            if train:
                logps.append(decisions_log_prob(probs[k], dec))
        return {
            "questions": questions,
            "train": bool(train),
            "rng": rng,
            "edges": edges,
            "probs": p_np,
            "alpha": out["alpha"].detach().cpu().numpy(),
            "logp": torch.stack(logps) if logps else None,
        }

    # -- learning --------------------------------------------------------------------------------
    def loss(self, state: dict[str, Any], episodes: list[Episode], utilities: list[float]) -> torch.Tensor:
        """Eq. 11 over the batch (one sampled graph per query, M = 1)."""
        u = self.utilities(state, utilities)
        return reinforce_loss(state["logp"], u, self.baseline_value(u))
