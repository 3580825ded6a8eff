"""DAG utilities shared by the executor and every topology method.

Every method's round graph goes through the same few functions here, so that a comparison
between methods is never a comparison between different cycle checks, budget rules or edge
orders. Everything is pure Python/numpy and deterministic given its inputs (and, for
`random_dag`, the generator it is handed), because graphs are written to `episodes.jsonl`
and must be reproducible from a seed.

Edges are `(sender, receiver)` pairs of agent indices. Edge lists are ordered: the order is
the priority in which edges were chosen, which `apply_budget` relies on.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from itertools import pairwise
from math import isfinite

import numpy as np

Edge = tuple[int, int]

__all__ = [
    "Edge",
    "all_pairs",
    "apply_budget",
    "apply_mask",
    "chain",
    "complete_dag",
    "constrain",
    "constrain_round",
    "creates_cycle",
    "credit_ranked_dag",
    "dag_by_priority",
    "empty",
    "find_cycle",
    "layered",
    "random_dag",
    "random_pairs",
    "reachable_filter",
    "sequential_dag",
    "star",
    "topological_levels",
]


# -- structure ---------------------------------------------------------------------------------
def _successors(nodes: Iterable[int], edges: Iterable[Edge], strict: bool = True) -> dict[int, list[int]]:
    """Successor lists; with `strict`, an edge touching a node outside `nodes` is an error.

    A stray endpoint would mean an agent receives from a non-participant, i.e. a call that the
    executor never scheduled, so it is reported rather than silently dropped.
    """
    succ: dict[int, list[int]] = {int(v): [] for v in nodes}
    seen: set[Edge] = set()
    for i, j in edges:
        i, j = int(i), int(j)
        if i not in succ or j not in succ:
            if strict:
                raise ValueError(f"edge ({i}, {j}) has an endpoint outside the nodes {sorted(succ)}")
            succ.setdefault(i, [])
            succ.setdefault(j, [])
        if (i, j) not in seen:
            seen.add((i, j))
            succ[i].append(j)
    return succ


def find_cycle(nodes: Sequence[int], edges: Sequence[Edge]) -> list[int] | None:
    """One directed cycle as a node list (first node repeated at the end), or None for a DAG.

    Returning the cycle itself, not just a flag, lets errors name the offending agents.
    """
    succ = _successors(nodes, edges, strict=False)
    white, grey, black = 0, 1, 2
    colour = dict.fromkeys(succ, white)
    parent: dict[int, int] = {}
    for root in sorted(succ):
        if colour[root] != white:
            continue
        colour[root] = grey
        stack: list[tuple[int, Iterator[int]]] = [(root, iter(succ[root]))]
        while stack:
            v, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                colour[v] = black
                stack.pop()
                continue
            if colour[nxt] == grey:  # back edge v -> nxt closes a cycle
                cycle = [v]
                while cycle[-1] != nxt:
                    cycle.append(parent[cycle[-1]])
                cycle.reverse()
                return [*cycle, nxt]
            if colour[nxt] == white:
                colour[nxt] = grey
                parent[nxt] = v
                stack.append((nxt, iter(succ[nxt])))
    return None


def creates_cycle(graph: Mapping[int, Collection[int]] | Sequence[Edge], i: int, j: int) -> bool:
    """Would adding i -> j close a directed cycle, i.e. is i reachable from j (or i == j)?

    `graph` is either a successor mapping (what an incremental builder keeps, so each check is
    one DFS from j with no rebuild) or an edge list. The graph is assumed to be a DAG already.
    """
    if i == j:
        return True
    succ: Mapping[int, Collection[int]]
    succ = graph if isinstance(graph, Mapping) else _successors((), graph, strict=False)
    stack = [j]
    seen = {j}
    while stack:
        v = stack.pop()
        for w in succ.get(v, ()):
            if w == i:
                return True
            if w not in seen:
                seen.add(w)
                stack.append(w)
    return False


def topological_levels(nodes: Sequence[int], edges: Sequence[Edge]) -> list[list[int]]:
    """Group nodes into levels that can run concurrently (Alg. 3's topological order).

    A node's level is the length of the longest path reaching it, so every sender finishes in an
    earlier level than each of its receivers and each level is as wide as possible. Nodes within
    a level are sorted so that execution order (and hence logs and cache keys) is deterministic.
    """
    succ = _successors(nodes, edges, strict=True)
    indeg = dict.fromkeys(succ, 0)
    for v in succ:
        for w in succ[v]:
            indeg[w] += 1
    level = sorted(v for v, d in indeg.items() if d == 0)
    levels: list[list[int]] = []
    placed = 0
    while level:
        levels.append(level)
        placed += len(level)
        nxt = []
        for v in level:
            for w in succ[v]:
                indeg[w] -= 1
                if indeg[w] == 0:
                    nxt.append(w)
        level = sorted(nxt)
    if placed != len(succ):
        cycle = find_cycle(list(succ), [(v, w) for v in succ for w in succ[v]])
        shown = " -> ".join(map(str, cycle or []))
        raise ValueError(f"communication graph is not a DAG: cycle {shown}")
    return levels


# -- constraints -------------------------------------------------------------------------------
def _check_budget(name: str, budget: int | None) -> int | None:
    if budget is None:
        return None
    if int(budget) != budget or budget < 0:
        raise ValueError(f"{name} must be a non-negative integer or None, got {budget!r}")
    return int(budget)


def apply_mask(edges: Iterable[Edge], mask: np.ndarray | None) -> list[Edge]:
    """Drop edges the run's edge mask forbids (mask[i, j] == 0), keeping the order of the rest."""
    out = [(int(i), int(j)) for i, j in edges]
    if mask is None:
        return out
    m = np.asarray(mask)
    return [(i, j) for i, j in out if m[i, j] != 0]


def apply_budget(edges: Iterable[Edge], in_budget: int | None, out_budget: int | None) -> list[Edge]:
    """Keep edges greedily, in the given order, while node-wise in/out-degree budgets allow.

    The given order is the priority: an edge over budget is skipped (not a stop), so later edges
    between other agents can still use their budget. This is the same rule Alg. 4 applies while
    building, so a static topology and TodyComm face identical budget semantics.
    """
    b_in = _check_budget("in_budget", in_budget)
    b_out = _check_budget("out_budget", out_budget)
    d_in: dict[int, int] = {}
    d_out: dict[int, int] = {}
    kept: list[Edge] = []
    for i, j in edges:
        i, j = int(i), int(j)
        if b_out is not None and d_out.get(i, 0) >= b_out:
            continue
        if b_in is not None and d_in.get(j, 0) >= b_in:
            continue
        kept.append((i, j))
        d_out[i] = d_out.get(i, 0) + 1
        d_in[j] = d_in.get(j, 0) + 1
    return kept


def constrain(
    edges: Iterable[Edge],
    mask: np.ndarray | None = None,
    in_budget: int | None = None,
    out_budget: int | None = None,
) -> list[Edge]:
    """Mask first, then budgets: a forbidden edge must not use up a node's budget."""
    return apply_budget(apply_mask(edges, mask), in_budget, out_budget)


def constrain_round(
    spatial: Iterable[Edge],
    temporal: Iterable[Edge],
    mask: np.ndarray | None = None,
    in_budget: int | None = None,
    out_budget: int | None = None,
) -> tuple[list[Edge], list[Edge]]:
    """`constrain` for a round with both edge kinds: (kept spatial edges, kept temporal edges).

    A temporal message is a message like any other: the receiver reads it in this round's prompt
    and the sender's text travels along it, so both kinds share one node-wise in/out budget per
    round (TodyComm Table 3 counts messages per round). Spatial edges have priority and are
    visited first, so the spatial result equals `constrain(spatial, ...)` and a run without
    temporal edges keeps its numbers; temporal edges then use what budget is left. The mask
    forbids a pair in both kinds.
    """
    tagged = [(e, False) for e in apply_mask(spatial, mask)] + [(e, True) for e in apply_mask(temporal, mask)]
    b_in = _check_budget("in_budget", in_budget)
    b_out = _check_budget("out_budget", out_budget)
    d_in: dict[int, int] = {}
    d_out: dict[int, int] = {}
    kept: tuple[list[Edge], list[Edge]] = ([], [])
    for (i, j), is_temporal in tagged:
        if b_out is not None and d_out.get(i, 0) >= b_out:
            continue
        if b_in is not None and d_in.get(j, 0) >= b_in:
            continue
        kept[int(is_temporal)].append((i, j))
        d_out[i] = d_out.get(i, 0) + 1
        d_in[j] = d_in.get(j, 0) + 1
    return kept


def all_pairs(n: int) -> list[Edge]:
    """Every ordered pair i -> j, i != j, in row-major order: a full temporal mask.

    Self pairs are left out because an agent always reads its own previous output (see
    `RoundGraph.temporal_edges`); the order is the budget priority (lower senders first).
    """
    return [(i, j) for i in range(n) for j in range(n) if i != j]


def random_pairs(n: int, p: float, rng: np.random.Generator) -> list[Edge]:
    """Each ordered pair i -> j (i != j) independently with probability p: a random temporal mask.

    One draw per pair whatever p is, so later draws from `rng` do not depend on p or outcomes.
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"edge probability must be in [0, 1], got {p}")
    pairs = all_pairs(n)
    u = rng.random(len(pairs))
    return [e for e, x in zip(pairs, u, strict=True) if x < p]


def reachable_filter(temporal: Iterable[Edge], spatial: Sequence[Edge]) -> list[Edge]:
    """Drop temporal i -> j when i == j or j reaches i along the spatial edges.

    This is what the G-Designer/AgentPrune public code effectively builds for a *fixed* temporal
    mask: `construct_temporal_connection` adds a fixed temporal edge only if `check_cycle` on the
    spatial successors passes, so its FullConnected baseline keeps temporal edges only from
    earlier to later agents of the spatial DAG, and no self edges.
    """
    succ = _successors((), spatial, strict=False)
    return [(int(i), int(j)) for i, j in temporal if not creates_cycle(succ, int(i), int(j))]


# -- Algorithm 4 -------------------------------------------------------------------------------
def credit_ranked_dag(
    credits: Sequence[float],
    participation: Sequence[int | bool],
    mask: np.ndarray | None = None,
    out_budget: int | None = None,
    in_budget: int | None = None,
    rank: bool = True,
) -> list[Edge]:
    """TodyComm's inter-agent graph construction, exactly Algorithm 4 of the paper.

    `credits` and `participation` are per agent (length N); `participation` is the 0/1 sample
    a^t. Participants are ranked by descending credit, ties by agent index so that equal credits
    (e.g. an untrained policy) still give one reproducible graph. Senders and receivers are
    both visited in rank order, so high-credit agents spend their budget first and speak to
    other high-credit agents first. A candidate i -> j is skipped when i == j, mask[i, j] == 0,
    out-degree(i) >= B_out or in-degree(j) >= B_in, or when it would close a cycle; the cycle
    check (not the rank order) is what keeps the result a DAG, so a masked forward pair can let
    a backward edge through. `rank=False` visits participants by ascending index instead (the
    "w/o ranking" ablation of Table 5). Edges are returned in the order they were added.
    """
    c = [float(x) for x in credits]
    a = list(participation)
    n = len(c)
    if len(a) != n:
        raise ValueError(f"participation has length {len(a)} but there are {n} credits")
    if any(not isfinite(x) for x in c):
        raise ValueError(f"credits must be finite, got {c}")
    if any(int(x) not in (0, 1) or int(x) != x for x in a):
        raise ValueError(f"participation must be a 0/1 indicator per agent, got {a}")
    if mask is not None:
        mask = np.asarray(mask)
        if mask.shape != (n, n):
            raise ValueError(f"mask has shape {mask.shape}, expected {(n, n)}")
    b_in = _check_budget("in_budget", in_budget)
    b_out = _check_budget("out_budget", out_budget)

    nodes = [i for i in range(n) if a[i]]
    order = sorted(nodes, key=lambda i: (-c[i], i)) if rank else nodes
    succ: dict[int, list[int]] = {i: [] for i in order}
    d_out = dict.fromkeys(order, 0)
    d_in = dict.fromkeys(order, 0)
    edges: list[Edge] = []
    for i in order:
        for j in order:
            if i == j:
                continue
            if mask is not None and mask[i, j] == 0:
                continue
            if (b_out is not None and d_out[i] >= b_out) or (b_in is not None and d_in[j] >= b_in):
                continue
            if creates_cycle(succ, i, j):
                continue
            edges.append((i, j))
            succ[i].append(j)
            d_out[i] += 1
            d_in[j] += 1
    return edges


# -- static topologies -------------------------------------------------------------------------
# Every builder only emits edges from earlier to later positions of `order`, so its output is a
# DAG by construction whatever the order; masks and budgets are applied afterwards (`constrain`).
def _order(order: Sequence[int]) -> list[int]:
    o = [int(v) for v in order]
    if len(set(o)) != len(o):
        raise ValueError(f"order must not repeat agents, got {o}")
    return o


def complete_dag(order: Sequence[int]) -> list[Edge]:
    """Every earlier -> later pair: the densest DAG over the order (the Complete Graph baseline)."""
    o = _order(order)
    return [(o[a], o[b]) for a in range(len(o)) for b in range(a + 1, len(o))]


def chain(order: Sequence[int]) -> list[Edge]:
    """Each agent tells only the next one: the sparsest connected DAG."""
    o = _order(order)
    return [(o[k], o[k + 1]) for k in range(len(o) - 1)]


def star(order: Sequence[int]) -> list[Edge]:
    """order[0] is the hub and sends to everyone else; spokes do not talk to each other."""
    o = _order(order)
    return [(o[0], v) for v in o[1:]]


def layered(order: Sequence[int], n_layers: int) -> list[Edge]:
    """Split the order into `n_layers` consecutive, near-equal layers; each layer sends to the next.

    More layers than agents collapses to one agent per layer (a chain), so the topology is
    defined for every N; earlier layers get the extra agent when N does not divide evenly.
    """
    o = _order(order)
    if n_layers < 1:
        raise ValueError(f"n_layers must be >= 1, got {n_layers}")
    groups = [list(map(int, g)) for g in np.array_split(np.array(o, dtype=np.int64), n_layers) if len(g)]
    return [(i, j) for a, b in pairwise(groups) for i in a for j in b]


def random_dag(order: Sequence[int], p: float, rng: np.random.Generator) -> list[Edge]:
    """Each earlier -> later pair independently with probability p (the Random Graph baseline).

    One uniform draw per pair, in `complete_dag` order, whatever p is, so the number of draws
    (and hence every later draw from the same generator) does not depend on p or on the outcome.
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"edge probability must be in [0, 1], got {p}")
    pairs = complete_dag(order)
    u = rng.random(len(pairs))
    return [e for e, x in zip(pairs, u, strict=True) if x < p]


def empty() -> list[Edge]:
    """No communication: agents only revise on their own previous output."""
    return []


# -- samplers of the learned methods: an edge-probability matrix -> a DAG ------------------------
def sequential_dag(
    probs: np.ndarray,
    mask: np.ndarray | None = None,
    in_budget: int | None = None,
    out_budget: int | None = None,
    uniforms: np.ndarray | None = None,
    threshold: float | None = None,
) -> tuple[list[Edge], list[tuple[int, int, int]]]:
    """A constrained DAG decided pair by pair (EIB-Learner, CARD), with an exact log-likelihood.

    Ordered pairs (i, j), i != j, are visited by decreasing probability (ties: smaller i, then
    smaller j). A pair is skipped (never drawn, absent from the log-probability) when the mask
    forbids it, a node's in/out budget is used up, or i -> j would close a cycle; otherwise it is
    kept iff uniforms[i, j] < probs[i, j] (a Bernoulli draw) or, without uniforms, iff
    probs[i, j] > threshold. Returns (edges in the order they were kept, decisions) where
    decisions lists (i, j, kept) for every pair that was actually decided.
    """
    p = np.asarray(probs, dtype=np.float64)
    n = p.shape[0]
    if p.shape != (n, n):
        raise ValueError(f"probs must be square, got shape {p.shape}")
    if (uniforms is None) == (threshold is None):
        raise ValueError("give exactly one of uniforms (sampling) or threshold (deterministic)")
    m = None if mask is None else np.asarray(mask)
    pairs = sorted(((i, j) for i in range(n) for j in range(n) if i != j), key=lambda e: (-p[e], e[0], e[1]))
    succ: dict[int, list[int]] = {}
    d_in: dict[int, int] = {}
    d_out: dict[int, int] = {}
    edges: list[Edge] = []
    decisions: list[tuple[int, int, int]] = []
    for i, j in pairs:
        if m is not None and m[i, j] == 0:
            continue
        if out_budget is not None and d_out.get(i, 0) >= out_budget:
            continue
        if in_budget is not None and d_in.get(j, 0) >= in_budget:
            continue
        if creates_cycle(succ, i, j):
            continue
        keep = bool(uniforms[i, j] < p[i, j]) if uniforms is not None else bool(p[i, j] > threshold)
        decisions.append((i, j, int(keep)))
        if keep:
            edges.append((i, j))
            succ.setdefault(i, []).append(j)
            d_out[i] = d_out.get(i, 0) + 1
            d_in[j] = d_in.get(j, 0) + 1
    # A no-op by construction; kept so every method's graph passes the same constraint code.
    return constrain(edges, m, in_budget, out_budget), decisions


def dag_by_priority(chosen: np.ndarray, probs: np.ndarray, edges: list[Edge] | None = None) -> list[Edge]:
    """Add the chosen edges in descending probability (ties: row-major index), skipping cycle closers.

    Why (AgentPrune, G-Designer): a sampled graph is generally cyclic; greedy insertion by
    probability is deterministic given the sample and keeps the edges the policy is most sure of.
    `edges` continues an existing DAG. The run's mask and budgets are applied afterwards.
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


def graph_violation(
    n: int,
    nodes: Sequence[int],
    edges: Sequence[Edge],
    temporal: Sequence[Edge] = (),
    mask: np.ndarray | None = None,
    in_budget: int | None = None,
    out_budget: int | None = None,
) -> str | None:
    """What is wrong with one round's graph under the run's constraints, or None.

    The executor asks this of every graph a method returns, so a method that forgets the mask or a
    degree budget (Table 3's settings) fails loudly instead of running a different experiment.
    Spatial edges must form a DAG over the round's participants; both edge kinds obey the mask
    and share one in/out budget per round, as `constrain_round` builds them."""
    members = {int(i) for i in nodes}
    bad = sorted(i for i in members if not 0 <= i < n)
    if bad:
        return f"names agent {bad[0]} outside 0..{n - 1}"
    for i, j in edges:
        if int(i) == int(j):
            return f"has a self edge ({i}, {j})"
        if int(i) not in members or int(j) not in members:
            return f"has edge ({i}, {j}) between agents that do not take part in the round"
    cycle = find_cycle(sorted(members), [(int(i), int(j)) for i, j in edges])
    if cycle:
        return f"is not a DAG (cycle {' -> '.join(map(str, cycle))})"
    m = None if mask is None else np.asarray(mask)
    d_in: dict[int, int] = {}
    d_out: dict[int, int] = {}
    for kind, es in (("", edges), ("temporal ", temporal)):
        for i, j in es:
            i, j = int(i), int(j)
            if not (0 <= i < n and 0 <= j < n):
                return f"has {kind}edge ({i}, {j}) outside 0..{n - 1}"
            if m is not None and m[i, j] == 0:
                return f"has {kind}edge ({i}, {j}), which the run's edge mask forbids"
            d_out[i] = d_out.get(i, 0) + 1
            d_in[j] = d_in.get(j, 0) + 1
    for what, degrees, budget in (("in", d_in, in_budget), ("out", d_out, out_budget)):
        if budget is None:
            continue
        over = sorted((a, d) for a, d in degrees.items() if d > budget)
        if over:
            agent, d = over[0]
            return f"gives agent {agent} {what}-degree {d} > budget {budget} (messages of both kinds count)"
    return None
