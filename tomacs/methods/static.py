"""Fixed-topology baselines: the yardsticks every learned method is measured against.

A static method fixes one communication DAG per query when the batch begins and reuses it for
every round t = 2..T, with all N agents taking part in every round. That is the "one graph per
query" setting of the Random/Complete Graph baselines in TodyComm (after Qian et al., 2025):
the topology never reacts to what agents say, which is exactly the property the dynamic methods
are tested against. The final decision uses the base class, i.e. TodyComm's fairness rule for
baselines (majority vote below 50% adversaries, LLM judge at or above).

Run constraints are applied by the same code for every method: edges forbidden by `ctx.mask`
are removed first (so they use no budget), then `apply_budget` keeps edges in the topology's
own order while node-wise in/out-degree budgets allow. The topology's order is therefore its
priority under a budget: e.g. a star hub with out-budget 1 reaches only order[1].

Agent order (`order` param): `fixed` uses agents 0..N-1, so roles keep their positions (agent 0
is the star hub and chain head); `shuffle` draws one permutation per query from a generator
keyed by (seed, method, question id), so positions vary across queries, are reproducible from the
seed, and do not depend on batching.

Temporal mask (`temporal` param): besides the spatial DAG (current-round outputs), a static method
can deliver previous-round outputs along temporal edges, as the G-Designer/AgentPrune code's
baselines do (their FullConnected has a full spatial and a full temporal mask, Random draws both):
`none` (the default: today's numbers), `full` (every j -> i, j != i), and for `random` also
`random` (each ordered pair with `edge_prob`, from its own generator so the spatial draws do not
move). `temporal_rule: code` keeps only the temporal edges that code's cycle check lets through
for a fixed mask (no j -> i where i reaches j spatially; see `graphs.reachable_filter`). Temporal
edges share the round's degree budget, after the spatial ones (`graphs.constrain_round`).
`debate` is the LLM-Debate topology (Du et al., 2023): no spatial edges and a full temporal mask.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from tomacs.graphs import (
    Edge,
    all_pairs,
    chain,
    complete_dag,
    constrain,
    constrain_round,
    empty,
    layered,
    random_dag,
    random_pairs,
    reachable_filter,
    star,
)
from tomacs.methods.base import BatchState, History, Method, MethodContext
from tomacs.methods.settings import MethodSettings, bounded, choice
from tomacs.seeding import stable_seed
from tomacs.types import Question, RoundGraph

ORDERS = ("fixed", "shuffle")
TEMPORAL_RULES = ("all", "code")


# -- settings (conf/method/<name>.yaml extends these) ----------------------------------------------
@dataclass
class StaticSettings(MethodSettings):
    """What every static topology takes: the agent order."""

    order: str = choice("fixed", ORDERS)  # fixed (agents 0..N-1) | shuffle (one seeded permutation per query)


@dataclass
class TemporalSettings(StaticSettings):
    """A topology that can also deliver previous-round outputs (temporal edges, docs/deviations.md)."""

    # none = the spatial DAG only (the default); full = every j -> i, j != i
    temporal: str = choice("none", ("none", "full"))
    # all | code (only the temporal edges the G-Designer/AgentPrune code's cycle check keeps)
    temporal_rule: str = choice("all", TEMPORAL_RULES)


@dataclass
class CompleteSettings(TemporalSettings):
    name: str = "complete"


@dataclass
class RandomSettings(TemporalSettings):
    name: str = "random"
    # random = each ordered pair with edge_prob (from its own generator)
    temporal: str = choice("none", ("none", "full", "random"))
    edge_prob: float = bounded(0.5, 0.0, 1.0, open_high=False)


@dataclass
class DebateSettings(TemporalSettings):
    name: str = "debate"
    temporal: str = choice("full", ("full",))  # the only temporal mask of this topology


@dataclass
class ChainSettings(StaticSettings):
    name: str = "chain"


@dataclass
class StarSettings(StaticSettings):
    name: str = "star"


@dataclass
class NoneSettings(StaticSettings):
    name: str = "none"


@dataclass
class LayeredSettings(StaticSettings):
    name: str = "layered"
    layers: int = bounded(3, 1.0)


class StaticMethod(Method):
    """One constrained DAG (plus temporal edges) per query, drawn at `begin`, reused every round."""

    Settings: type[StaticSettings] = StaticSettings

    def __init__(self, ctx: MethodContext, **params: Any) -> None:
        self.settings = self.Settings.from_params(params)  # checked: one line naming a bad key
        super().__init__(ctx, **self.settings.params())
        s = self.settings
        self.order_mode = s.order
        # a topology without the keys (chain, star, none, layered) has no temporal edges
        self.temporal = getattr(s, "temporal", "none")
        self.temporal_rule = getattr(s, "temporal_rule", "all")
        if ctx.mask is not None and np.asarray(ctx.mask).shape != (ctx.n_agents, ctx.n_agents):
            raise ValueError(f"mask has shape {np.asarray(ctx.mask).shape}, expected N x N = {ctx.n_agents}")

    def topology(self, order: list[int], rng: np.random.Generator) -> list[Edge]:
        """The unconstrained DAG over `order` (earlier -> later edges only)."""
        raise NotImplementedError

    def _order(self, rng: np.random.Generator) -> list[int]:
        n = self.ctx.n_agents
        if self.order_mode == "shuffle":
            return [int(v) for v in rng.permutation(n)]
        return list(range(n))

    def temporal_topology(self, rng: np.random.Generator) -> list[Edge]:
        """The unconstrained temporal edges (sender's round t-1 output -> receiver), never self."""
        if self.temporal == "full":
            return all_pairs(self.ctx.n_agents)
        return []

    def _graph(self, rng: np.random.Generator, t_rng: np.random.Generator) -> tuple[list[Edge], list[Edge]]:
        edges = self.topology(self._order(rng), rng)
        spatial = constrain(edges, self.ctx.mask, self.ctx.in_budget, self.ctx.out_budget)
        temporal = self.temporal_topology(t_rng)
        if not temporal:
            return spatial, []
        if self.temporal_rule == "code":
            temporal = reachable_filter(temporal, spatial)
        return constrain_round(spatial, temporal, self.ctx.mask, self.ctx.in_budget, self.ctx.out_budget)

    def _draw(self, state: BatchState) -> None:
        rngs = cast("list[np.random.Generator]", state["q_rngs"])  # `begin`'s, one per question
        t_rngs = cast("list[np.random.Generator]", state["t_rngs"])
        graphs = [self._graph(r, tr) for r, tr in zip(rngs, t_rngs, strict=True)]
        state["edges"] = [g[0] for g in graphs]
        state["temporal"] = [g[1] for g in graphs]

    def begin(self, questions: list[Question], train: bool, rng: np.random.Generator) -> BatchState:
        """Draw each query's graph up front, in question order, so draws do not depend on rounds."""
        state = super().begin(questions, train, rng)
        # One generator per question keyed by (seed, method, question id): a query's graph does not
        # depend on which batch it landed in, so resumed runs and other batch sizes agree.
        state["q_rngs"] = [
            np.random.default_rng(stable_seed(self.ctx.seed, "static-graph", self.name, q.id))
            for q in questions
        ]
        # Temporal draws get their own generators, so adding a temporal mask never moves a spatial one.
        state["t_rngs"] = [
            np.random.default_rng(stable_seed(self.ctx.seed, "static-temporal", self.name, q.id))
            for q in questions
        ]
        self._draw(state)
        return state

    def act(self, state: BatchState, t: int, history: History) -> list[RoundGraph]:
        nodes = list(range(self.ctx.n_agents))
        spatial = cast("list[list[Edge]]", state["edges"])  # `_draw`'s graphs, one per question
        temporal_edges = cast("list[list[Edge]]", state["temporal"])
        # Fresh objects each round: the executor may annotate or mutate what it is given.
        return [
            RoundGraph(nodes=list(nodes), edges=list(edges), temporal_edges=list(temporal))
            for edges, temporal in zip(spatial, temporal_edges, strict=True)
        ]


class CompleteGraph(StaticMethod):
    """Complete DAG: every agent hears every agent earlier in the order (the densest baseline)."""

    Settings = CompleteSettings

    def topology(self, order: list[int], rng: np.random.Generator) -> list[Edge]:
        return complete_dag(order)


class RandomGraph(StaticMethod):
    """Random Graph baseline: each earlier -> later pair kept with probability `edge_prob`.

    Following the baseline, the DAG is sampled once per query (at `begin`, from the question's
    seeded generator) and reused across all rounds. `per_round=True` instead resamples a fresh
    DAG for every query at every round, for studies of topology noise; it is not the baseline.
    """

    Settings = RandomSettings
    settings: RandomSettings

    def __init__(self, ctx: MethodContext, per_round: bool = False, **params: Any) -> None:
        super().__init__(ctx, **params)
        self.edge_prob = self.settings.edge_prob
        self.per_round = bool(per_round)  # a study option, not a config key

    def topology(self, order: list[int], rng: np.random.Generator) -> list[Edge]:
        return random_dag(order, self.edge_prob, rng)

    def temporal_topology(self, rng: np.random.Generator) -> list[Edge]:
        if self.temporal == "random":
            return random_pairs(self.ctx.n_agents, self.edge_prob, rng)
        return super().temporal_topology(rng)

    def act(self, state: BatchState, t: int, history: History) -> list[RoundGraph]:
        if self.per_round and t > 2:  # round 2 uses the graphs drawn at begin
            self._draw(state)
        return super().act(state, t, history)


class ChainGraph(StaticMethod):
    """Chain: each agent hears only its predecessor (the sparsest connected DAG)."""

    Settings = ChainSettings

    def topology(self, order: list[int], rng: np.random.Generator) -> list[Edge]:
        return chain(order)


class StarGraph(StaticMethod):
    """Star: the first agent of the order broadcasts to all others, who do not talk to each other."""

    Settings = StarSettings

    def topology(self, order: list[int], rng: np.random.Generator) -> list[Edge]:
        return star(order)


class LayeredGraph(StaticMethod):
    """Layered: `layers` consecutive groups of the order, each fully connected to the next."""

    Settings = LayeredSettings
    settings: LayeredSettings

    def __init__(self, ctx: MethodContext, **params: Any) -> None:
        super().__init__(ctx, **params)
        self.layers = self.settings.layers

    def topology(self, order: list[int], rng: np.random.Generator) -> list[Edge]:
        return layered(order, self.layers)


class NoCommunication(StaticMethod):
    """No edges: every agent still answers each round but only revisits its own previous output."""

    Settings = NoneSettings

    def topology(self, order: list[int], rng: np.random.Generator) -> list[Edge]:
        return empty()


class DebateGraph(StaticMethod):
    """LLM-Debate (Du et al., 2023): from round 2 on every agent reads every other agent's
    previous-round answer (temporal edges only, no spatial edges); round 1 everyone answers alone.

    It is the public code's `Debate` mode (empty spatial mask, full temporal mask). Under a degree
    budget the temporal edges are kept in row-major order (lower senders first)."""

    Settings = DebateSettings

    def topology(self, order: list[int], rng: np.random.Generator) -> list[Edge]:
        return empty()


# The one list of static method names (the registry and gsafeguard's `base` import it from here).
STATIC_METHODS: dict[str, type[Method]] = {
    cls.name: cls
    for cls in (
        CompleteGraph,
        RandomGraph,
        ChainGraph,
        StarGraph,
        LayeredGraph,
        NoCommunication,
        DebateGraph,
    )
}
