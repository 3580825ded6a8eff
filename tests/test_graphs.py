"""DAG utilities and Algorithm 4, mostly on graphs worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from tomacs.graphs import (
    apply_budget,
    apply_mask,
    chain,
    complete_dag,
    constrain,
    creates_cycle,
    credit_ranked_dag,
    dag_by_priority,
    empty,
    find_cycle,
    layered,
    random_dag,
    sequential_dag,
    star,
    topological_levels,
)
from tomacs.methods.learned import decisions_log_prob


# -- topological levels ------------------------------------------------------------------------
def test_levels_diamond() -> None:
    edges = [(0, 1), (0, 2), (1, 3), (2, 3)]
    assert topological_levels([0, 1, 2, 3], edges) == [[0], [1, 2], [3]]


def test_levels_use_longest_path() -> None:
    # 3 is reachable directly from 0 but also via 0 -> 1 -> 2, so it must wait for level 3.
    edges = [(0, 3), (0, 1), (1, 2), (2, 3)]
    assert topological_levels([0, 1, 2, 3], edges) == [[0], [1], [2], [3]]


def test_levels_isolated_nodes_and_sorting() -> None:
    assert topological_levels([5, 2, 9], []) == [[2, 5, 9]]
    assert topological_levels([4, 1, 3, 0], [(4, 0), (3, 1)]) == [[3, 4], [0, 1]]


def test_levels_empty_graph() -> None:
    assert topological_levels([], []) == []


def test_levels_reject_cycle_and_name_it() -> None:
    with pytest.raises(ValueError, match=r"cycle 1 -> 2 -> 3 -> 1"):
        topological_levels([0, 1, 2, 3], [(0, 1), (1, 2), (2, 3), (3, 1)])
    with pytest.raises(ValueError, match="cycle"):
        topological_levels([0, 1], [(1, 1)])


def test_levels_reject_edge_outside_nodes() -> None:
    with pytest.raises(ValueError, match="outside"):
        topological_levels([0, 1], [(0, 2)])


def test_levels_ignore_duplicate_edges() -> None:
    assert topological_levels([0, 1], [(0, 1), (0, 1)]) == [[0], [1]]


# -- cycles ------------------------------------------------------------------------------------
def test_find_cycle_is_none_exactly_for_a_dag() -> None:
    assert find_cycle([0, 1, 2], [(0, 1), (1, 2), (0, 2)]) is None
    assert find_cycle([0, 1, 2], [(0, 1), (1, 2), (2, 0)]) == [0, 1, 2, 0]
    assert find_cycle([0, 1], [(0, 0)]) == [0, 0]  # a self-loop is a cycle
    assert find_cycle([0, 1, 2], []) is None
    assert find_cycle([0, 1, 2, 3], [(0, 1), (2, 3), (3, 2)]) == [2, 3, 2]


def test_find_cycle_returns_closed_walk() -> None:
    cyc = find_cycle([0, 1, 2, 3], [(0, 1), (1, 2), (2, 3), (3, 1)])
    assert cyc is not None and cyc[0] == cyc[-1]
    assert set(cyc) == {1, 2, 3}
    assert find_cycle([0, 1], [(0, 1)]) is None


def test_creates_cycle() -> None:
    edges = [(0, 1), (1, 2)]
    assert creates_cycle(edges, 2, 0)  # 0 -> 1 -> 2 already reaches 2
    assert creates_cycle(edges, 1, 0)
    assert not creates_cycle(edges, 0, 2)
    assert not creates_cycle(edges, 3, 0)  # unseen node
    assert creates_cycle(edges, 1, 1)
    succ = {0: [1], 1: [2], 2: [], 3: []}
    assert creates_cycle(succ, 2, 0)
    assert not creates_cycle(succ, 2, 3)


# -- Algorithm 4 -------------------------------------------------------------------------------
def test_alg4_orders_by_credit() -> None:
    # rank: 1 (0.9), 2 (0.5), 0 (0.2). Sender 1 -> 2, 1 -> 0; sender 2: 2 -> 1 closes a cycle,
    # 2 -> 0 is fine; sender 0: both receivers would close cycles.
    assert credit_ranked_dag([0.2, 0.9, 0.5], [1, 1, 1]) == [(1, 2), (1, 0), (2, 0)]


def test_alg4_ties_broken_by_index() -> None:
    assert credit_ranked_dag([0.5, 0.5, 0.5], [1, 1, 1]) == [(0, 1), (0, 2), (1, 2)]
    assert credit_ranked_dag([0.1, 0.7, 0.7], [1, 1, 1]) == [(1, 2), (1, 0), (2, 0)]


def test_alg4_without_ranking_uses_index_order() -> None:
    assert credit_ranked_dag([0.2, 0.9, 0.5], [1, 1, 1], rank=False) == [(0, 1), (0, 2), (1, 2)]


def test_alg4_unconstrained_is_complete_dag_over_rank() -> None:
    credits = [0.1, 0.4, 0.3, 0.2]  # rank 1, 2, 3, 0
    assert credit_ranked_dag(credits, [1, 1, 1, 1]) == complete_dag([1, 2, 3, 0])


def test_alg4_budget_one() -> None:
    # rank 1, 2, 3, 0 with B_out = B_in = 1:
    # s=1: 1->2 added; 1->3, 1->0 out-budget full.  s=2: 2->1 cycle; 2->3 added; 2->0 out full.
    # s=3: 3->1 cycle (1->2->3); 3->2 in full; 3->0 added.  s=0: 0->1 cycle; 0->2, 0->3 in full.
    got = credit_ranked_dag([0.1, 0.4, 0.3, 0.2], [1, 1, 1, 1], out_budget=1, in_budget=1)
    assert got == [(1, 2), (2, 3), (3, 0)]


def test_alg4_budget_two() -> None:
    # s=1: 1->2, 1->3 (out full).  s=2: 2->1 cycle; 2->3 (in(3)=2); 2->0 (out(2)=2).
    # s=3: 3->1 cycle; 3->2 cycle; 3->0 (in(0)=2).  s=0: 0->1 cycle; 0->2 cycle; 0->3 in full.
    got = credit_ranked_dag([0.1, 0.4, 0.3, 0.2], [1, 1, 1, 1], out_budget=2, in_budget=2)
    assert got == [(1, 2), (1, 3), (2, 3), (2, 0), (3, 0)]


def test_alg4_only_out_or_only_in_budget() -> None:
    # rank 0, 1, 2
    assert credit_ranked_dag([0.9, 0.5, 0.2], [1, 1, 1], out_budget=1) == [(0, 1), (1, 2)]
    assert credit_ranked_dag([0.9, 0.5, 0.2], [1, 1, 1], in_budget=1) == [(0, 1), (0, 2)]
    assert credit_ranked_dag([0.9, 0.5, 0.2], [1, 1, 1], out_budget=0) == []


def test_alg4_mask_removes_pairs() -> None:
    mask = np.ones((3, 3), dtype=int)
    mask[1, 0] = 0
    # rank 1, 2, 0: 1->0 is masked, so 1->2, 2->0 remain.
    assert credit_ranked_dag([0.2, 0.9, 0.5], [1, 1, 1], mask=mask) == [(1, 2), (2, 0)]


def test_alg4_mask_lets_backward_edge_through() -> None:
    # rank 0, 1, 2. 0 may not send to anyone, so 1->0 does not close a cycle and is added,
    # then 1->2, and 2->0 as well; 2->1 would close 1->2->1.
    mask = np.ones((3, 3), dtype=int)
    mask[0, :] = 0
    assert credit_ranked_dag([0.9, 0.5, 0.2], [1, 1, 1], mask=mask) == [(1, 0), (1, 2), (2, 0)]


def test_alg4_mask_and_budget_backward_edge() -> None:
    # rank 0, 1, 2, B=1, 0->1 masked. s=0: 0->2 added. s=1: 1->0 added (no path 0 ~> 1);
    # 1->2 out full. s=2: 2->0 in full; 2->1 would close 1->0->2->1.
    mask = np.ones((3, 3), dtype=int)
    mask[0, 1] = 0
    got = credit_ranked_dag([0.9, 0.5, 0.2], [1, 1, 1], mask=mask, out_budget=1, in_budget=1)
    assert got == [(0, 2), (1, 0)]


def test_alg4_non_participants_never_appear() -> None:
    got = credit_ranked_dag([0.99, 0.1, 0.5, 0.3], [0, 1, 1, 1])
    assert got == [(2, 3), (2, 1), (3, 1)]
    assert credit_ranked_dag([0.3, 0.2], [1, 0]) == []
    assert credit_ranked_dag([0.3, 0.2], [False, False]) == []


def test_alg4_accepts_numpy_inputs_and_is_deterministic() -> None:
    rng = np.random.default_rng(0)
    c = rng.random(8)
    a = rng.random(8) < 0.7
    first = credit_ranked_dag(c, a)
    assert first == credit_ranked_dag(list(c), [int(x) for x in a])
    assert first == credit_ranked_dag(c.copy(), a.copy())
    assert all(isinstance(i, int) and isinstance(j, int) for i, j in first)


def test_alg4_rejects_bad_input() -> None:
    with pytest.raises(ValueError):
        credit_ranked_dag([0.1, 0.2], [1])
    with pytest.raises(ValueError):
        credit_ranked_dag([0.1, 0.2], [0, 2])  # an index list, not an indicator
    with pytest.raises(ValueError):
        credit_ranked_dag([0.1, float("nan")], [1, 1])
    with pytest.raises(ValueError):
        credit_ranked_dag([0.1, 0.2], [1, 1], mask=np.ones((3, 3)))
    with pytest.raises(ValueError):
        credit_ranked_dag([0.1, 0.2], [1, 1], in_budget=-1)


def _reachable(edges: list[tuple[int, int]], src: int, dst: int) -> bool:
    return creates_cycle(edges, dst, src) if src != dst else True


@pytest.mark.parametrize("seed", range(300))
def test_alg4_properties_random(seed: int) -> None:
    """DAG, constraints, and maximality: every missing pair is blocked by one of Alg. 4's rules.

    Degrees and reachability only grow while building, so a pair rejected at its turn is still
    rejected by the final graph; conversely any pair passing every rule at the end would have
    been added. This pins Alg. 4 down without re-implementing it.
    """
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 13))
    credits = rng.random(n) if seed % 3 else rng.integers(0, 3, n).astype(float)  # ties too
    part = (rng.random(n) < rng.uniform(0.3, 1.0)).astype(int)
    mask = (rng.random((n, n)) < rng.uniform(0.4, 1.0)).astype(int) if seed % 2 else None
    b_out = None if rng.random() < 0.3 else int(rng.integers(0, 4))
    b_in = None if rng.random() < 0.3 else int(rng.integers(0, 4))
    rank = bool(seed % 5)
    edges = credit_ranked_dag(credits, part, mask=mask, out_budget=b_out, in_budget=b_in, rank=rank)

    nodes = [i for i in range(n) if part[i]]
    assert find_cycle(nodes, edges) is None
    assert len(set(edges)) == len(edges)
    d_out = {i: sum(1 for e in edges if e[0] == i) for i in nodes}
    d_in = {j: sum(1 for e in edges if e[1] == j) for j in nodes}
    for i, j in edges:
        assert i != j and part[i] and part[j]
        assert mask is None or mask[i, j] == 1
    assert b_out is None or max(d_out.values(), default=0) <= b_out
    assert b_in is None or max(d_in.values(), default=0) <= b_in
    present = set(edges)
    for i in nodes:
        for j in nodes:
            if i == j or (i, j) in present:
                continue
            blocked = (
                (mask is not None and mask[i, j] == 0)
                or (b_out is not None and d_out[i] >= b_out)
                or (b_in is not None and d_in[j] >= b_in)
                or _reachable(edges, j, i)
            )
            assert blocked, f"pair {(i, j)} passes every rule but was not added"
    # senders appear in rank order: an edge's sender never ranks after a later edge's sender
    order = sorted(nodes, key=lambda k: (-credits[k], k)) if rank else nodes
    pos = {v: k for k, v in enumerate(order)}
    assert [pos[i] for i, _ in edges] == sorted(pos[i] for i, _ in edges)
    assert edges == credit_ranked_dag(credits, part, mask=mask, out_budget=b_out, in_budget=b_in, rank=rank)


# -- masks and budgets -------------------------------------------------------------------------
def test_apply_budget_keeps_order_and_skips() -> None:
    edges = [(0, 1), (0, 2), (1, 2), (0, 3), (2, 3), (1, 3)]
    # out<=1: (0,1) ok; (0,2) skip; (1,2) ok; (0,3) skip; (2,3) ok; (1,3) skip
    assert apply_budget(edges, None, 1) == [(0, 1), (1, 2), (2, 3)]
    # in<=1: (0,1); (0,2); (1,2) skip; (0,3); (2,3) skip; (1,3) skip
    assert apply_budget(edges, 1, None) == [(0, 1), (0, 2), (0, 3)]
    # in<=1 and out<=2: (0,1),(0,2); (1,2) in full; (0,3) out full; (2,3) ok; (1,3) in full
    assert apply_budget(edges, 1, 2) == [(0, 1), (0, 2), (2, 3)]
    assert apply_budget(edges, None, None) == edges
    assert apply_budget(edges, 0, None) == []


def test_mask_applied_before_budget() -> None:
    mask = np.ones((3, 3), dtype=int)
    mask[0, 1] = 0
    assert apply_mask([(0, 1), (0, 2)], mask) == [(0, 2)]
    # the masked 0->1 must not use up 0's single out slot
    assert constrain([(0, 1), (0, 2)], mask, None, 1) == [(0, 2)]


# -- static topologies -------------------------------------------------------------------------
def test_static_builders_by_hand() -> None:
    o = [2, 0, 3, 1]
    assert complete_dag(o) == [(2, 0), (2, 3), (2, 1), (0, 3), (0, 1), (3, 1)]
    assert chain(o) == [(2, 0), (0, 3), (3, 1)]
    assert star(o) == [(2, 0), (2, 3), (2, 1)]
    assert layered(o, 2) == [(2, 3), (2, 1), (0, 3), (0, 1)]
    assert layered([0, 1, 2, 3, 4], 3) == [(0, 2), (0, 3), (1, 2), (1, 3), (2, 4), (3, 4)]
    assert layered(o, 1) == []
    assert layered(o, 10) == chain(o)
    assert empty() == []
    assert chain([7]) == [] and star([7]) == [] and complete_dag([]) == []


def test_builders_reject_repeated_agents() -> None:
    with pytest.raises(ValueError):
        chain([0, 1, 0])
    with pytest.raises(ValueError):
        layered([0, 1], 0)


@pytest.mark.parametrize("n", range(2, 21))
def test_every_static_topology_is_a_dag(n: int) -> None:
    rng = np.random.default_rng(n)
    order = [int(v) for v in rng.permutation(n)]
    nodes = list(range(n))
    builds = {
        "complete": complete_dag(order),
        "chain": chain(order),
        "star": star(order),
        "layered2": layered(order, 2),
        "layered3": layered(order, 3),
        "random": random_dag(order, 0.5, rng),
        "random1": random_dag(order, 1.0, rng),
    }
    for name, edges in builds.items():
        assert find_cycle(nodes, edges) is None, name
        assert sum(len(lv) for lv in topological_levels(nodes, edges)) == n
    assert len(builds["complete"]) == n * (n - 1) // 2
    assert builds["random1"] == builds["complete"]
    assert len(builds["chain"]) == n - 1
    assert len(topological_levels(nodes, builds["chain"])) == n
    assert len(topological_levels(nodes, builds["complete"])) == n
    assert len(topological_levels(nodes, builds["star"])) == 2
    assert len(topological_levels(nodes, builds["layered3"])) == min(3, n)


def test_random_dag_seeded_and_frequency() -> None:
    order = list(range(6))
    a = random_dag(order, 0.3, np.random.default_rng(1))
    assert a == random_dag(order, 0.3, np.random.default_rng(1))
    draws = [random_dag(order, 0.3, np.random.default_rng(s)) for s in range(2000)]
    freq = sum(len(d) for d in draws) / (2000 * 15)
    assert abs(freq - 0.3) < 0.015
    assert random_dag(order, 0.0, np.random.default_rng(0)) == []
    with pytest.raises(ValueError):
        random_dag(order, 1.5, np.random.default_rng(0))


# -- the samplers of the learned methods (EIB-Learner, CARD; AgentPrune, G-Designer) ------------
def replay_log_lik(
    probs: np.ndarray, edges: list[tuple[int, int]], mask=None, in_b=None, out_b=None
) -> float:
    """Independent log-likelihood of a graph under the sequential rule: visit pairs by decreasing
    probability, skip the ones mask/budget/cycle exclude given the edges kept so far, and score the
    rest as kept iff they are in the graph. (The graph alone determines every decision.)"""
    n = probs.shape[0]
    kept = set(edges)
    order = sorted(((i, j) for i in range(n) for j in range(n) if i != j), key=lambda e: (-probs[e], e))
    have: list[tuple[int, int]] = []
    total = 0.0
    for i, j in order:
        if mask is not None and mask[i, j] == 0:
            continue
        if out_b is not None and sum(a == i for a, _ in have) >= out_b:
            continue
        if in_b is not None and sum(b == j for _, b in have) >= in_b:
            continue
        if creates_cycle(have, i, j):
            continue
        p = min(max(probs[i, j], 1e-6), 1 - 1e-6)
        if (i, j) in kept:
            total += math.log(p)
            have.append((i, j))
        else:
            total += math.log(1 - p)
    assert set(have) == kept, "the graph holds an edge the sequential rule could not have kept"
    return total


def test_sequential_dag_hand_example() -> None:
    p = np.array([[0.0, 0.9, 0.2], [0.8, 0.0, 0.6], [0.3, 0.1, 0.0]])
    u = np.full((3, 3), 0.5)
    u[1, 2], u[2, 0], u[2, 1] = 0.7, 0.1, 0.05
    # order: (0,1).9 keep | (1,0).8 cycle-skip | (1,2).6 u=.7 reject | (2,0).3 keep | (0,2).2 cycle-skip
    # | (2,1).1 u=.05 keep
    edges, dec = sequential_dag(p, uniforms=u)
    assert edges == [(0, 1), (2, 0), (2, 1)]
    assert dec == [(0, 1, 1), (1, 2, 0), (2, 0, 1), (2, 1, 1)]
    lp = decisions_log_prob(torch.tensor(p), dec)
    assert float(lp) == pytest.approx(math.log(0.9) + math.log(0.4) + math.log(0.3) + math.log(0.1))
    # threshold 0.5: (0,1) keep | (1,0) cycle | (1,2) keep | (2,0) cycle | (0,2) .2 reject | (2,1) cycle
    edges_t, dec_t = sequential_dag(p, threshold=0.5)
    assert edges_t == [(0, 1), (1, 2)]
    assert dec_t == [(0, 1, 1), (1, 2, 1), (0, 2, 0)]
    with pytest.raises(ValueError, match="exactly one"):
        sequential_dag(p)


def test_sequential_dag_is_a_constrained_dag() -> None:
    rng = np.random.default_rng(1)
    for trial in range(200):
        n = int(rng.integers(2, 8))
        p = rng.random((n, n))
        mask = (rng.random((n, n)) < 0.7).astype(int) if trial % 2 else None
        in_b = int(rng.integers(1, 3)) if trial % 3 == 0 else None
        out_b = int(rng.integers(1, 3)) if trial % 5 == 0 else None
        edges, dec = sequential_dag(p, mask, in_b, out_b, uniforms=rng.random((n, n)))
        assert find_cycle(list(range(n)), edges) is None
        assert constrain(edges, mask, in_b, out_b) == edges
        assert [(i, j) for i, j, k in dec if k] == edges
        assert replay_log_lik(p, edges, mask, in_b, out_b) == pytest.approx(
            float(decisions_log_prob(torch.tensor(p), dec)), abs=1e-9
        )


def test_dag_by_priority_drops_the_least_probable_cycle_edge() -> None:
    chosen = np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]], dtype=bool)  # 0 -> 1 -> 2 -> 0
    probs = np.array([[0, 0.9, 0], [0, 0, 0.6], [0.7, 0, 0]])
    assert dag_by_priority(chosen, probs) == [(0, 1), (2, 0)]  # 1 -> 2 (0.6) would close the cycle


def test_graph_violation_accepts_what_constrain_round_builds() -> None:
    import numpy as np

    from tomacs.graphs import complete_dag, constrain_round, graph_violation

    n = 5
    mask = np.ones((n, n), dtype=int)
    mask[0, 3] = 0
    spatial, temporal = constrain_round(complete_dag(range(n)), [(4, 0), (3, 1)], mask, 1, 1)
    assert graph_violation(n, range(n), spatial, temporal, mask, 1, 1) is None
    # a participant list that leaves out an edge's endpoint is caught
    assert "do not take part" in graph_violation(n, [0, 1], [(0, 2)])
    assert graph_violation(n, [0, 7], []) == "names agent 7 outside 0..4"
