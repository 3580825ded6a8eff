"""G-Safeguard's network (its public code's MyGAT / GATwithEdgeConv), as top-level `nn.Module` classes
like the other methods' (`tomacs.methods.nets`). Only the method imports this module, when it builds its
network, so torch and torch geometric stay out of a static method's run.

The network is constructed by the method inside `LearnedMethod.seeded`, so its initial weights depend only
on the run's seed; the order in which parameters are created here is part of that contract (changing it
changes every trained number).
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["EdgeGATLayer", "GSafeguardNet"]


class EdgeGATLayer(nn.Module):
    """A GAT layer whose messages carry the edge's features and which hands the edge features on.

    For every edge j -> i with features e_ji (the public code's GATwithEdgeConv):
      alpha_ji = softmax_j LeakyReLU(a_src.W x_j + a_dst.W x_i + a_edge.W_a e_ji)   (per head)
      h_i      = sum_j alpha_ji (W x_j + W_e e_ji) + b
      e'_ji    = W_e e_ji                                                          (the edge update)
    The attention and the node part are torch-geometric's GATConv (edge_dim, no self loops, as the
    public layer); only the edge term of the message and the updated edge features are added here.
    Why no self loops: the public layer has none, so a node's representation comes from its
    in-edges only (G-Safeguard's edges into node i carry i's own utterances, see
    `tomacs.methods.gsafeguard`).
    """

    def __init__(self, in_dim: int, head_dim: int, heads: int, edge_dim: int) -> None:
        from torch_geometric.nn import GATConv

        super().__init__()
        self.heads, self.head_dim = int(heads), int(head_dim)
        self.gat = GATConv(
            in_dim, head_dim, heads=heads, concat=True, edge_dim=edge_dim, add_self_loops=False
        )
        self.edge_lin = nn.Linear(edge_dim, heads * head_dim, bias=False)

    def forward(
        self, x: torch.Tensor, edge_index: torch.Tensor, edge_attr: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        out, (_, alpha) = self.gat(x, edge_index, edge_attr=edge_attr, return_attention_weights=True)
        e_new = self.edge_lin(edge_attr)
        msg = alpha.unsqueeze(-1) * e_new.view(-1, self.heads, self.head_dim)
        agg = torch.zeros(x.shape[0], self.heads, self.head_dim, dtype=msg.dtype, device=msg.device)
        agg.index_add_(0, edge_index[1], msg)
        return out + agg.view(x.shape[0], -1), e_new


class GSafeguardNet(nn.Module):
    """G-Safeguard's detector: edge sequences (E, turns, d) mean-pooled over turns, `layers`
    EdgeGATLayers (ReLU and dropout on the node features after each, the edge features passed on
    as the layer leaves them), a linear head -> one logit per agent (adversarial when
    sigmoid(logit) >= 0.5)."""

    def __init__(self, emb_dim: int, hidden: int, heads: int, layers: int, dropout: float) -> None:
        super().__init__()
        head_dim = hidden // heads
        width = head_dim * heads  # the public code rounds the hidden size down to a multiple of heads
        self.dropout = float(dropout)
        dims = [emb_dim] + [width] * layers
        self.convs = nn.ModuleList(
            EdgeGATLayer(dims[k], head_dim, heads, edge_dim=dims[k]) for k in range(layers)
        )
        self.head = nn.Linear(width, 1)

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor, edge_seq: torch.Tensor) -> torch.Tensor:
        e = edge_seq.mean(dim=1)
        for conv in self.convs:
            x, e = conv(x, edge_index, e)
            x = torch.nn.functional.dropout(torch.relu(x), p=self.dropout, training=self.training)
        return self.head(x).squeeze(-1)
