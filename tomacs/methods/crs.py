"""The credibility-scoring paper's topologies (credibility-scoring §6, Appendix E.A).

* `saa` - Standalone Agent Architecture: no communication; agents answer once (round 1) and later
  rounds have no participants, so they cost nothing. Pair with `crs.aggregation=centroid`.
* `sia` - Stochastic Interaction Architecture: per query, `links` undirected pairs drawn with
  replacement from the C(N,2) pairs (m = 6 for N = 5 in the paper), the same for every round of
  the query. Our executor needs a DAG, so each link is oriented from the earlier to the later agent
  of a random permutation drawn for the query (docs/deviations.md).
* `chain` - credibility-ordered chain: agents sorted by their current credibility, descending
  (ties by index), each speaking to the next. The scores are those at the start of the batch
  (`eval.batch_size=1` for a strict per-query order).

The graphs depend only on (seed, question id) and the scores, never on batching. Use with
`decision=crs` (what `decision=auto` means for this method): without it scores never move.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Any, cast

import numpy as np

from tomacs.graphs import Edge, constrain
from tomacs.methods.base import BatchState, History, Method, MethodContext
from tomacs.methods.settings import MethodSettings, bounded, choice
from tomacs.seeding import stable_seed
from tomacs.types import Question, RoundGraph

TOPOLOGIES = ("saa", "sia", "chain")


def sia_edges(n: int, links: int, rng: np.random.Generator) -> list[Edge]:
    """`links` undirected pairs drawn with replacement, oriented along a random permutation."""
    pairs = list(combinations(range(n), 2))
    if not pairs or links <= 0:
        return []
    drawn = {pairs[int(i)] for i in rng.integers(len(pairs), size=links)}
    rank = {int(v): k for k, v in enumerate(rng.permutation(n))}
    edges = [(a, b) if rank[a] < rank[b] else (b, a) for a, b in drawn]
    return sorted(edges, key=lambda e: (rank[e[0]], rank[e[1]]))


def credibility_chain(scores: np.ndarray) -> list[Edge]:
    """Agents by credibility, descending, ties by index; each speaks to the next."""
    order = sorted(range(len(scores)), key=lambda i: (-float(scores[i]), i))
    return [(order[k], order[k + 1]) for k in range(len(order) - 1)]


@dataclass
class CrsSettings(MethodSettings):
    """conf/method/crs.yaml extends this."""

    name: str = "crs"
    # saa (no communication, use crs.aggregation=centroid) | sia | chain (CrS-ordered)
    topology: str = choice("sia", TOPOLOGIES)
    # SIA: undirected links per query, drawn with replacement (App. E.A.2: m = 6 for N = 5)
    links: int = bounded(6, 0.0)


class CredibilityTopology(Method):
    Settings = CrsSettings

    def __init__(self, ctx: MethodContext, **params: Any) -> None:
        self.settings = self.Settings.from_params(params)  # checked: one line naming a bad key
        super().__init__(ctx, **self.settings.params())
        self.topology, self.links = self.settings.topology, self.settings.links

    def begin(self, questions: list[Question], train: bool, rng: np.random.Generator) -> BatchState:
        state = super().begin(questions, train, rng)
        state["edges"] = None  # drawn at the first act, once the executor has put the scores in
        return state

    def _edges(self, state: BatchState) -> list[list[Edge]]:
        if state["edges"] is None:
            n = self.ctx.n_agents
            out: list[list[Edge]] = []
            for q in cast("list[Question]", state["questions"]):  # Method.begin's record
                if self.topology == "saa":
                    edges: list[Edge] = []
                elif self.topology == "sia":
                    r = np.random.default_rng(stable_seed(self.ctx.seed, "crs-sia", q.id))
                    edges = sia_edges(n, self.links, r)
                else:
                    scores = state.get("credibility")
                    edges = credibility_chain(np.full(n, 0.5) if scores is None else np.asarray(scores))
                out.append(constrain(edges, self.ctx.mask, self.ctx.in_budget, self.ctx.out_budget))
            state["edges"] = out
        return cast("list[list[Edge]]", state["edges"])

    def act(self, state: BatchState, t: int, history: History) -> list[RoundGraph]:
        nodes = [] if self.topology == "saa" else list(range(self.ctx.n_agents))
        return [RoundGraph(nodes=list(nodes), edges=list(e)) for e in self._edges(state)]
