"""The learned methods' networks, as top-level `nn.Module` classes (PyTorch Geometric's style).

Why one module: the layers the papers share (the SAGE encoder of EIB-Learner and CARD) are written
once, and a reader finds the networks of the single-file methods, each with the equation it
implements, in one place (a method with a package of its own keeps its network there: G-Safeguard's
is `tomacs.methods.gsafeguard.net`). Only a learned method imports this module, when it builds its
network: torch (and torch geometric, imported by the layers that need it) stay out of a static
method's run.

Each network is constructed by its method inside `LearnedMethod.seeded`, so its initial weights
depend only on the run's seed; the order in which parameters are created here is part of that
contract (changing it changes every trained number).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import nn

__all__ = [
    "CARDNet",
    "CreditNet",
    "EIBNet",
    "EdgeLogits",
    "RunningNorm",
    "SAGEEncoder",
    "VGAEDesigner",
]


class SAGEEncoder(nn.Module):
    """`layers` message-passing layers m_i <- W_1 m_i + W_2 mean_{j in N(i)} m_j (SAGEConv), ReLU
    between them, linear last layer.

    EIB-Learner Eq. 8 (its separate self term is MP(m_i, {m_j}); a GCN would average every node of
    the complete view to the same vector) and CARD Eq. 7-8 (the encoders phi_p, phi_c).
    """

    def __init__(self, in_dim: int, hidden: int, out_dim: int, layers: int) -> None:
        from torch_geometric.nn import SAGEConv

        super().__init__()
        dims = [in_dim] + [hidden] * (layers - 1) + [out_dim]
        self.convs = nn.ModuleList(SAGEConv(a, b) for a, b in zip(dims, dims[1:], strict=False))

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        for k, conv in enumerate(self.convs):
            x = conv(x, edge_index)
            if k < len(self.convs) - 1:
                x = torch.relu(x)
        return x


# -- TodyComm (Alg. 1) -----------------------------------------------------------------------------
class RunningNorm(nn.Module):
    """Per-feature standardisation of TodyComm's f_i^t with statistics of training inputs only.

    Why: f_i^t concatenates blocks on very different scales (unit-norm embeddings whose per-dim std
    is ~0.05, one-hot answers, distances up to ~1.4, flags), so at the paper's lr the GRU barely
    moves in 24 Adam steps (issue 12: credits stayed at 0.46-0.52). Statistics are a pooled
    mean/variance (Chan et al.'s parallel update, float64) over every (question, agent, round)
    row of the training batches (`update`, called by TodyComm only for batches begun with
    train=True); evaluation uses them frozen, so a test batch never changes how the next one is
    scored, whatever mode the module is in. A dimension whose training std is below `min_std`
    (constant in training, e.g. letter slots a benchmark never uses) maps to 0: it carried no signal
    the policy could have learned a weight for. Outputs are clipped to +-clip so an unseen value at
    test time cannot saturate the GRU. The buffers live in the state_dict (saved with checkpoints).
    """

    count: torch.Tensor  # buffers (register_buffer): typed here, as nn.Module's attributes are not
    mean: torch.Tensor
    m2: torch.Tensor

    def __init__(self, dim: int, clip: float, min_std: float = 1e-6) -> None:
        super().__init__()
        self.dim = int(dim)
        self.clip = float(clip)
        self.min_std = float(min_std)
        self.register_buffer("count", torch.zeros((), dtype=torch.float64))
        self.register_buffer("mean", torch.zeros(dim, dtype=torch.float64))
        self.register_buffer("m2", torch.zeros(dim, dtype=torch.float64))

    def update(self, x: torch.Tensor) -> None:
        x = x.detach().to(torch.float64).reshape(-1, self.dim)
        nb = float(x.shape[0])
        if nb == 0:
            return
        mb = x.mean(0)
        m2b = ((x - mb) ** 2).sum(0)
        na = float(self.count)
        tot = na + nb
        delta = mb - self.mean
        self.mean += delta * (nb / tot)
        self.m2 += m2b + delta**2 * (na * nb / tot)
        self.count += nb

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if float(self.count) < 2:
            return x
        std = (self.m2 / self.count).sqrt()
        live = std > self.min_std
        z = (x.to(torch.float64) - self.mean) / torch.where(live, std, torch.ones_like(std))
        z = torch.where(live, z, torch.zeros_like(z)).clamp(-self.clip, self.clip)
        return z.to(x.dtype)


class CreditNet(nn.Module):
    """TodyComm Alg. 1: one GRU cell shared by all agents, then an MLP to the credit logit
    (c_i^t = sigmoid(logit), kept as a logit so log-probs stay finite).

    `normalize` sits in front of the GRU: "none" is the paper's literal form (raw f_i^t),
    "running" the `RunningNorm` standardiser, "layernorm" a LayerNorm over the feature vector.

    `emb_proj` > 0 (ours, off by default; issue 28) maps each analysis-embedding vector of f_i^t
    (the columns `emb_cols`, one row of indices per vector: own and neighbours') through one shared
    learned linear map to `emb_proj` dimensions after the normaliser, and the GRU reads those beside
    the other features. Why: with MiniLM the two 384-d vectors are 768 of 803 inputs and carry 97 %
    of the GRU's input variance at init (a third of its candidate units saturate); a narrow learned
    read-out of the embedding is what the GRU's input weights would have to learn anyway. The
    projection is created last, so the default network's seeded initial weights are unchanged.
    """

    def __init__(
        self,
        in_dim: int,
        hidden: int,
        mlp_hidden: int,
        normalize: str = "none",
        clip: float = 5.0,
        emb_cols: Sequence[Sequence[int]] = (),
        emb_proj: int = 0,
    ):
        super().__init__()
        if normalize == "running":
            self.norm: nn.Module = RunningNorm(in_dim, clip)
        elif normalize == "layernorm":
            self.norm = nn.LayerNorm(in_dim)
        else:
            self.norm = nn.Identity()
        self.emb_proj = int(emb_proj)
        gru_in = in_dim
        if self.emb_proj > 0:
            idx = torch.as_tensor(emb_cols, dtype=torch.long)
            if idx.ndim != 2 or idx.numel() == 0:
                raise ValueError("emb_proj needs emb_cols: one row of column indices per embedding vector")
            rest = torch.as_tensor(sorted(set(range(in_dim)) - set(idx.flatten().tolist())), dtype=torch.long)
            self.register_buffer("emb_idx", idx, persistent=False)
            self.register_buffer("rest_idx", rest, persistent=False)
            gru_in = len(rest) + idx.shape[0] * self.emb_proj
        self.gru = nn.GRUCell(gru_in, hidden)
        self.mlp = nn.Sequential(nn.Linear(hidden, mlp_hidden), nn.ReLU(), nn.Linear(mlp_hidden, 1))
        if self.emb_proj > 0:
            self.proj = nn.Linear(int(idx.shape[1]), self.emb_proj, bias=False)

    def forward(
        self, f: torch.Tensor, h: torch.Tensor, update_stats: bool = False
    ) -> tuple[torch.Tensor, torch.Tensor]:
        if update_stats and isinstance(self.norm, RunningNorm):
            self.norm.update(f)
        z = self.norm(f)
        if self.emb_proj > 0:
            e = self.proj(z[:, self.emb_idx])  # (rows, vectors, emb_proj)
            z = torch.cat([z[:, self.rest_idx], e.flatten(1)], dim=1)
        h_new = self.gru(z, h)
        return self.mlp(h_new).squeeze(-1), h_new


# -- EIB-Learner (Eq. 8-10) --------------------------------------------------------------------------
class EIBNet(nn.Module):
    """EIB-Learner: a sparse-view and a dense-view SAGE encoder (Eq. 8) and the query gate of
    Eq. 10, alpha = softmax(W2 ReLU(W1 Q + b1)) over (dense, sparse)."""

    def __init__(self, in_dim: int, q_dim: int, hidden: int, out_dim: int, layers: int, gate_hidden: int):
        super().__init__()
        self.sparse = SAGEEncoder(in_dim, hidden, out_dim, layers)
        self.dense = SAGEEncoder(in_dim, hidden, out_dim, layers)
        self.gate = nn.Sequential(nn.Linear(q_dim, gate_hidden), nn.ReLU(), nn.Linear(gate_hidden, 2))


# -- CARD (Eq. 7-9) ------------------------------------------------------------------------------------
class CARDNet(nn.Module):
    """CARD: profile and condition encoders phi_p, phi_c (Eq. 7-8) and the pair decoder psi of
    Eq. 9, S_ij = sigmoid(MLP[h_i^p, h_i^c, h_j^p, h_j^c, h_Q])."""

    def __init__(self, p_dim: int, c_dim: int, hidden: int, out_dim: int, layers: int, dec_hidden: int):
        super().__init__()
        self.profile = SAGEEncoder(p_dim, hidden, out_dim, layers)
        self.condition = SAGEEncoder(c_dim, hidden, out_dim, layers)
        self.decoder = nn.Sequential(nn.Linear(6 * out_dim, dec_hidden), nn.ReLU(), nn.Linear(dec_hidden, 1))
        # Zero output bias: S starts near 0.5, so at tau = 0.5 an untrained model decodes about half
        # the pairs (the median of its own Bernoulli(S) training samples) instead of a graph that
        # the random sign of one bias makes empty or complete.
        last = self.decoder[-1]
        assert isinstance(last, nn.Linear)
        nn.init.zeros_(last.bias)


# -- G-Designer (Eq. 10-13) ------------------------------------------------------------------------------
class VGAEDesigner(nn.Module):
    """G-Designer's VGAE: mu = GCN_mu(X, A), log sigma = GCN_sigma(X, A) over a shared first GCN
    layer (Eq. 10), and the edge decoder varpi_ij = FFN_d([h_i, h_j, h_task]) (Eq. 12)."""

    def __init__(self, in_dim: int, hidden: int, latent: int, dec_hidden: int) -> None:
        from torch_geometric.nn import GCNConv

        super().__init__()
        self.gcn1 = GCNConv(in_dim, hidden)
        self.gcn_mu = GCNConv(hidden, latent)
        self.gcn_logsigma = GCNConv(hidden, latent)
        self.decoder = nn.Sequential(nn.Linear(3 * latent, dec_hidden), nn.ReLU(), nn.Linear(dec_hidden, 1))

    def encode(self, x: torch.Tensor, edge_index: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = torch.relu(self.gcn1(x, edge_index))
        return self.gcn_mu(h, edge_index), self.gcn_logsigma(h, edge_index)

    def decode(self, h: torch.Tensor, n: int) -> torch.Tensor:
        """h: (Q, N+1, L), task node last -> logits varpi (Q, N, N)."""
        ha = h[:, :n]
        ht = h[:, n:].expand(-1, n, -1)
        q, _, d = ha.shape
        hi = ha.unsqueeze(2).expand(q, n, n, d)
        hj = ha.unsqueeze(1).expand(q, n, n, d)
        htask = ht.unsqueeze(2).expand(q, n, n, d)
        return self.decoder(torch.cat([hi, hj, htask], dim=-1)).squeeze(-1)


# -- AgentPrune ----------------------------------------------------------------------------------------
class EdgeLogits(nn.Module):
    """AgentPrune: one learnable logit per candidate spatial and temporal edge (N x N each), all
    initialised at `logit0`, with the pruning masks as buffers (saved in checkpoints)."""

    def __init__(self, n: int, logit0: float, candidates: np.ndarray | torch.Tensor) -> None:
        super().__init__()
        self.spatial = nn.Parameter(torch.full((n, n), logit0))
        self.temporal = nn.Parameter(torch.full((n, n), logit0))
        self.register_buffer("spatial_mask", torch.as_tensor(candidates, dtype=torch.float32).clone())
        self.register_buffer("temporal_mask", torch.as_tensor(candidates, dtype=torch.float32).clone())
