"""G-Safeguard (Wang et al., ACL 2025): a supervised GNN adversary detector that prunes what the
agents it flags say (TodyComm App. E.4 compares its ADAcc with TodyComm's).

Reference: the public code (github.com/wslong20/G-safeguard, MA/ and PI/: gen_graph.py,
gen_training_dataset.py, model.py, train.py, main_defense_for_different_topology.py), re-implemented;
every departure is in docs/deviations.md ("G-Safeguard").

Everything G-Safeguard is lives in this package, and the method names what it plugs in (its `trainer`,
`commands`, `report_sections`: "module:attr" strings, `tomacs.methods.base.Method`):
* this module: the method (graphs only: it never reads an adversary plan), its settings, the detector's
  input (`GraphSample`);
* `net.py`: the detector network (torch);
* `data.py`: the labelled conversations, generated through the executor;
* `trainer.py`: the supervised trainer on them (a `tomacs.training.core.Trainer`);
* `cli.py`: `tomacs gsafeguard-data`; `report.py`: its report section (TodyComm's Fig. 4, the ADAcc gap).
The last four plug into the floors above `methods/` (tests/test_import_layers.py places them on their own
top floor), so this module never imports them.

* Graph (`graph_sample`): one node per agent; an edge s -> r carries the per-turn embedding
  sequence of its *destination* r (the public code's `edge_attr = embeddings[edge_index[1]]`), so
  the edges into r hold r's own utterances; node input x_r = the mean of r's in-edges' turn-0
  features = r's own turn-0 embedding, the public code's test-time rule (it groups by source in
  training, which feeds a node its out-neighbours' texts instead). We use r's own turn-0
  embedding in training and at run time alike, also for an agent without in-edges (the public
  mean would be a zero vector there).
* Model (`tomacs.methods.gsafeguard.net.GSafeguardNet`): turns mean-pooled, 2 GAT layers that also update
  the edge features, a linear head -> one logit per agent; trained with BCE-with-logits on the labels
  of generated conversations (`tomacs.extras.gsafeguard.data`, `.trainer`). The labels
  are the adversary plans of those conversations: the one thing TodyComm never gets.
* Defence at run time (`act`, `decide`): after every round the detector re-reads all utterances so
  far; an agent scoring >= `threshold` is flagged for the rest of the episode and its outgoing
  messages (spatial and temporal) are cut from the next round on. The communication graph is a
  static baseline's (`base`, the complete DAG by default, so the only difference from
  `method=complete` is the defence); cutting edges keeps it within the run's mask and budgets.
  The decision is taken by the unflagged agents under the baselines' rule (decision=auto: a vote
  below 50 % adversaries, the LLM decision agent at or above); flagged = predicted adversarial,
  so ADAcc is computed exactly as TodyComm's. The method never sees an adversary plan at run time.
* `detect_graph`: which pairs the detector reads. `mask` (default) = every ordered pair the run
  allows (the complete directed utterance graph, density 1.0 of the training graphs), so each
  agent is judged on its own utterances; `comm` = the pairs of the base topology (the public
  code's choice, where topology and detector graph are one), under which an agent nobody sends
  to (agent 0 of a complete DAG) has no in-edge and cannot be told apart.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np

from tomacs.graphs import Edge
from tomacs.methods.base import BatchState, History, MethodContext
from tomacs.methods.learned import LearnedMethod, torch_module
from tomacs.methods.settings import LearnedSettings, bookkeeping, bounded, choice, listed
from tomacs.methods.static import STATIC_METHODS
from tomacs.types import AgentOutput, DecisionGraph, Episode, Question, RoundGraph

if TYPE_CHECKING:
    import torch

__all__ = [
    "GSafeguard",
    "GSafeguardSettings",
    "GraphSample",
    "collate",
    "cut_flagged",
    "detector_pairs",
    "graph_sample",
]

BASES = tuple(STATIC_METHODS)
DETECT_GRAPHS = ("mask", "comm")
REGIMES = ("static", "dynamic")


@dataclass
class GSafeguardSettings(LearnedSettings):
    """G-Safeguard's keys (conf/method/gsafeguard.yaml extends this); "public code" is
    github.com/wslong20/G-safeguard. Texts are embedded with the run's `embedder` (default MiniLM: the
    public code embeds with all-MiniLM-L6-v2)."""

    name: str = "gsafeguard"
    hidden_size: int = 256  # GAT width (public code: 1024; smaller here so CPU training stays short)
    heads: int = bounded(8, 1.0)  # attention heads (public code: 8)
    layers: int = bounded(2, 1.0)  # GAT layers that also update edge features (public code: 2)
    dropout: float = bounded(0.2, 0.0, 1.0)  # on node features after each layer (public code: 0.2)
    # flag an agent when sigmoid(logit) >= threshold (public code: 0.5)
    threshold: float = bounded(0.5, 0.0, 1.0, open_low=True)
    base: str = choice("complete", BASES)  # communication topology the defence prunes
    # detector graph: mask (every allowed ordered pair) | comm (the base topology's pairs, public code)
    detect_graph: str = choice("mask", DETECT_GRAPHS)
    # training (tomacs.extras.gsafeguard.trainer; the public train.py / README); train.epochs,
    # batch_size, lr, patience do not apply
    epochs: int = bounded(50, 1.0)  # README: python train.py --epochs 50
    batch_size: int = bounded(32, 1.0)  # conversations per step (public code: 32)
    lr: float | None = 1e-3  # Adam learning rate (public code: 0.001); null = top-level train.lr
    weight_decay: float = bounded(2e-4, 0.0)  # Adam weight decay (public code: 0.0002)
    # CosineAnnealingLR(T_max=10, eta_min=1e-5) as in the public train.py
    cosine_tmax: int = bounded(10, 1.0)
    eta_min: float = bounded(1e-5, 0.0)
    # held-out conversations that pick the best epoch (public code: the last 20 %)
    val_fraction: float = bounded(0.2, 0.0, 1.0)
    # the labelled conversations (tomacs.extras.gsafeguard.data; the public gen_graph.py scripts), made on
    # the run's backbone. data: a conversation file to read or (re)generate; null = gsafeguard_data.jsonl
    # in the run dir
    data: str | None = bookkeeping(None)
    # static: attackers from turn 1 (public code) | dynamic: from the run's attack.onset_rounds
    regime: str = choice("static", REGIMES)
    data_agents: int = bounded(8, 2.0)  # agents per generated conversation (public code: 8)
    data_rounds: int = bounded(4, 1.0)  # one initial turn + 3 re-generation turns (public code)
    # edge densities of the random directed graphs (public scripts)
    densities: list[float] = listed(0.2, 0.4, 0.6, 0.8, 1.0)
    counts: list[int] = listed(1, 2, 3, 4)  # attackers per conversation (public scripts)
    samples: int = bounded(40, 1.0)  # conversations per (density, count) setting (public scripts): 800 in all

    def check(self) -> None:
        if self.hidden_size < self.heads:
            raise self.fail("hidden_size", f">= heads ({self.heads})")
        if not self.densities or any(not 0.0 <= d <= 1.0 for d in self.densities):
            raise self.fail("densities", "a non-empty list in [0, 1]")
        n = self.data_agents
        if not self.counts or any(not 1 <= c < n for c in self.counts):
            raise self.fail("counts", f"a non-empty list of adversary counts in 1..data_agents-1={n - 1}")


@dataclass(frozen=True)
class GraphSample:
    """One conversation as the detector reads it: `seq[i, t]` is agent i's turn-t embedding,
    `edges` the (2, E) detector edges (sender row 0, receiver row 1), `y[i]` agent i's label
    (1 = adversarial; None at run time)."""

    seq: np.ndarray
    edges: np.ndarray
    y: np.ndarray | None = None


def graph_sample(seq: np.ndarray, pairs: Sequence[Edge], labels: Sequence[int] | None = None) -> GraphSample:
    """Agent i is node i, so its label, its logit and its utterances share the index i."""
    s = np.asarray(seq, dtype=np.float32)
    if s.ndim != 3:
        raise ValueError(f"seq must be (agents, turns, dim), got shape {s.shape}")
    e = np.asarray(sorted({(int(a), int(b)) for a, b in pairs}), dtype=np.int64).reshape(-1, 2).T
    if e.size and (e.min() < 0 or e.max() >= s.shape[0] or (e[0] == e[1]).any()):
        raise ValueError(f"detector edges must join two different agents of 0..{s.shape[0] - 1}")
    y = None if labels is None else np.asarray(labels, dtype=np.float32)
    if y is not None and y.shape != (s.shape[0],):
        raise ValueError(f"{y.shape[0]} labels for {s.shape[0]} agents")
    return GraphSample(s, e, y)


def collate(
    samples: Sequence[GraphSample], device: torch.device | str
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """Disjoint union of a batch: (x, edge_index, edge_seq, y). x_i is agent i's own turn-0
    embedding, the edge s -> r carries r's sequence (see the module docstring); y is None unless
    every sample has labels."""
    torch = torch_module()
    turns = {s.seq.shape[1] for s in samples}
    if len(turns) != 1:
        raise ValueError(f"a batch mixes conversations of {sorted(turns)} turns")
    seqs, edges, offset = [], [], 0
    for s in samples:
        seqs.append(s.seq)
        edges.append(s.edges + offset)
        offset += s.seq.shape[0]
    seq = torch.as_tensor(np.concatenate(seqs), device=device)
    edge_index = torch.as_tensor(np.concatenate(edges, axis=1), device=device)
    x = seq[:, 0, :]
    edge_seq = seq[edge_index[1]]
    y = None
    if all(s.y is not None for s in samples):
        y = torch.as_tensor(np.concatenate([s.y for s in samples]), device=device)
    return x, edge_index, edge_seq, y


def detector_pairs(n: int, mask: np.ndarray | None) -> list[Edge]:
    """`detect_graph=mask`: every ordered pair of different agents the run's mask allows."""
    return [(i, j) for i in range(n) for j in range(n) if i != j and (mask is None or mask[i, j])]


def cut_flagged(edges: Sequence[Edge], flagged: set[int]) -> list[Edge]:
    """G-Safeguard's remediation: a flagged agent's outgoing messages are dropped (it still answers
    and still reads the others)."""
    return [(int(s), int(r)) for s, r in edges if int(s) not in flagged]


class GSafeguard(LearnedMethod):
    """G-Safeguard. Config keys: `GSafeguardSettings`."""

    needs_embeddings = True  # the detector reads every utterance's embedding
    # supervised, on labelled conversations (not REINFORCE); its data command; its report section
    trainer = "tomacs.extras.gsafeguard.trainer:SUPERVISED"
    commands = ("tomacs.extras.gsafeguard.cli:register",)
    report_sections = ("tomacs.extras.gsafeguard.report:SECTION",)
    # replayed on recorded debates: the detector reads every pair of agents (detect_graph=mask), so the
    # recorded graph changes nothing it sees; an agent scoring >= threshold is flagged for good
    replays = True
    replay_reads = False
    Settings = GSafeguardSettings
    settings: GSafeguardSettings

    def __init__(self, ctx: MethodContext, **params: Any) -> None:
        super().__init__(ctx, **params)
        s = self.settings
        self.base_name, self.detect_graph, self.threshold = s.base, s.detect_graph, s.threshold
        self.emb_dim = int(ctx.extra.get("embed_dim") or self.emb_dim)
        self.meta = {
            "emb_dim": self.emb_dim,
            "hidden_size": s.hidden_size,
            "heads": s.heads,
            "layers": s.layers,
        }
        self.base = STATIC_METHODS[self.base_name](ctx)
        from tomacs.methods.gsafeguard.net import GSafeguardNet

        net = self.seeded(GSafeguardNet, self.emb_dim, s.hidden_size, s.heads, s.layers, s.dropout)
        self.net = net.to(self.device)

    # -- the detector ----------------------------------------------------------------------------
    def logits(self, samples: Sequence[GraphSample]) -> torch.Tensor:
        """One logit per agent of every sample, in sample order then agent order."""
        x, edge_index, edge_seq, _ = collate(samples, self.device)
        return self.net(x, edge_index, edge_seq)

    def labelled_loss(
        self, samples: Sequence[GraphSample]
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(BCE-with-logits averaged over the batch's agents, logits, labels): the public train.py's
        objective."""
        torch = torch_module()
        x, edge_index, edge_seq, y = collate(samples, self.device)
        if y is None:
            raise ValueError("labelled_loss needs labelled samples")
        logits = self.net(x, edge_index, edge_seq)
        return torch.nn.functional.binary_cross_entropy_with_logits(logits, y), logits, y

    def scores(self, samples: Sequence[GraphSample]) -> np.ndarray:
        """P(adversarial) per agent, (samples, agents), with the network in evaluation mode."""
        torch = torch_module()
        was = self.net.training
        self.net.eval()
        try:
            with torch.no_grad():
                p = torch.sigmoid(self.logits(samples)).cpu().numpy().astype(np.float64)
        finally:
            self.net.train(was)
        return p.reshape(len(samples), -1)

    # -- episode ---------------------------------------------------------------------------------
    def begin(self, questions: list[Question], train: bool, rng: np.random.Generator) -> dict[str, object]:
        """The base topology's graphs (one per question, as the static baseline draws them) and no
        agent flagged yet."""
        state = self.base.begin(questions, train, rng)
        state.update(flagged=[set() for _ in questions], scores={}, detected=0)
        return state

    def _pairs(self, state: dict[str, Any], q: int) -> list[Edge]:
        if self.detect_graph == "mask":
            return detector_pairs(self.ctx.n_agents, self.ctx.mask)
        return sorted({(int(s), int(r)) for s, r in [*state["edges"][q], *state["temporal"][q]]})

    def _embeddings(self, rounds: Sequence[Sequence[AgentOutput]]) -> np.ndarray:
        """(agents, turns, dim) of one question's utterances; embeds what the executor did not."""
        todo = [o for r in rounds for o in r if o.embedding is None]
        if todo:
            for o, v in zip(todo, self.embedder.embed([o.text for o in todo]), strict=True):
                o.embedding = [float(a) for a in v]
        seq = np.asarray([[o.embedding for o in r] for r in rounds], dtype=np.float32)
        return seq.transpose(1, 0, 2)

    def _detect(self, state: dict[str, Any], history: History, upto: int) -> np.ndarray:
        """Run the detector on rounds 1..upto of every question; flag (for good) who scores >=
        threshold. Returns the scores (questions, agents)."""
        if upto <= state["detected"]:
            return state["scores"][state["detected"]]
        for hq in history:
            if len(hq) < upto:
                raise ValueError(f"detection after round {upto} needs {upto} rounds; history has {len(hq)}")
        samples = [
            graph_sample(self._embeddings(hq[:upto]), self._pairs(state, q)) for q, hq in enumerate(history)
        ]
        p = self.scores(samples)
        for q in range(len(history)):
            state["flagged"][q] |= {i for i in range(self.ctx.n_agents) if p[q, i] >= self.threshold}
        state["scores"][upto], state["detected"] = p, upto
        return p

    def act(self, state: dict[str, Any], t: int, history: History) -> list[RoundGraph]:
        """Round t: detection after round t-1, then the base graph without the flagged agents'
        outgoing edges."""
        self.check_round(t)
        p = self._detect(state, history, t - 1)
        graphs = self.base.act(state, t, history)
        for q, g in enumerate(graphs):
            flagged = state["flagged"][q]
            g.edges = cut_flagged(g.edges, flagged)
            g.temporal_edges = cut_flagged(g.temporal_edges, flagged)
            g.credits = [float(1.0 - x) for x in p[q]]  # reliability = 1 - P(adversarial)
        return graphs

    def decide(self, state: dict[str, Any], history: History) -> list[DecisionGraph]:
        """Detection after round T; the unflagged agents decide under the baselines' rule (all
        agents when every one is flagged: nobody left is no decision)."""
        p = self._detect(state, history, self.ctx.rounds)
        n, mode = self.ctx.n_agents, self.decision_mode
        out = []
        for q in range(len(history)):
            voters = [i for i in range(n) if i not in state["flagged"][q]] or list(range(n))
            out.append(DecisionGraph(voters=voters, mode=mode, credits=[float(1.0 - x) for x in p[q]]))
        return out

    def loss(self, state: BatchState, episodes: list[Episode], utilities: list[float]) -> NoReturn:
        raise RuntimeError(
            "gsafeguard learns from labelled conversations (tomacs.extras.gsafeguard.trainer), "
            "not from task rewards; "
            "train it with `tomacs train method=gsafeguard`"
        )

    # -- replay on recorded debates (tomacs.analysis.replay) ----------------------------------------
    @classmethod
    def replay_refusal(cls, params: Mapping[str, object]) -> str | None:
        if params.get("detect_graph") == "comm":
            return (
                "method.detect_graph=comm: its detector reads the base topology's pairs, not the "
                "recorded graph; replay a detect_graph=mask run"
            )
        return None

    @classmethod
    def trained_shape(cls, params: Mapping[str, object], agents: int, rounds: int) -> str:
        """The detector learns from generated conversations of its own shape."""
        shape = f"{params['data_agents']}x{params['data_rounds']}"
        return f"trained on {shape} conversations, run {agents}x{rounds}"

    def replay_excluded(self, state: dict[str, Any], graphs: list[RoundGraph]) -> list[set[int]]:
        return [set(f) for f in state["flagged"]]  # flagged after detecting on rounds 1..t-1
