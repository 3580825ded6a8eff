"""Static baselines as Methods: graphs per query, fixed over rounds, seeded, constrained."""

from __future__ import annotations

import numpy as np
import pytest

from tomacs.graphs import complete_dag, find_cycle
from tomacs.methods.base import Method, MethodContext
from tomacs.methods.static import STATIC_METHODS, RandomGraph
from tomacs.types import Question, RoundGraph

NAMES = ["complete", "random", "chain", "star", "layered", "none", "debate"]


def _ctx(n: int = 6, seed: int = 0, **kw) -> MethodContext:
    return MethodContext(n_agents=n, rounds=4, roles=[f"r{i}" for i in range(n)], seed=seed, **kw)


def _questions(k: int) -> list[Question]:
    return [
        Question(id=f"q{i}", text="?", options=("a", "b"), answer="A", benchmark="t", kind="mc")
        for i in range(k)
    ]


def _run(method: Method, k: int, seed: int, rounds: int = 4) -> list[list[RoundGraph]]:
    """graphs[t-2][q] for t = 2..rounds."""
    state = method.begin(_questions(k), train=False, rng=np.random.default_rng(seed))
    return [method.act(state, t, [[] for _ in range(k)]) for t in range(2, rounds + 1)]


def _edges(graphs: list[list[RoundGraph]]) -> list[list[list[tuple[int, int]]]]:
    return [[g.edges for g in rnd] for rnd in graphs]


def test_registry() -> None:
    assert sorted(STATIC_METHODS) == sorted(NAMES)
    for name, cls in STATIC_METHODS.items():
        assert issubclass(cls, Method) and cls.name == name and not cls.trainable


def test_fixed_order_graphs_by_hand() -> None:
    ctx = _ctx(4)
    first = {name: _run(cls(ctx), 1, 0, rounds=2)[0][0].edges for name, cls in STATIC_METHODS.items()}
    assert first["complete"] == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    assert first["chain"] == [(0, 1), (1, 2), (2, 3)]
    assert first["star"] == [(0, 1), (0, 2), (0, 3)]
    assert first["layered"] == [(0, 2), (1, 2), (2, 3)]  # layers [0,1] [2] [3]
    assert first["none"] == []


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("order", ["fixed", "shuffle"])
def test_all_agents_participate_and_graph_fixed_over_rounds(name: str, order: str) -> None:
    n, k = 6, 5
    graphs = _run(STATIC_METHODS[name](_ctx(n), order=order), k, seed=3)
    for rnd in graphs:
        assert len(rnd) == k
        for g in rnd:
            assert isinstance(g, RoundGraph)
            assert g.nodes == list(range(n))
            assert g.credits is None
            assert find_cycle(g.nodes, g.edges) is None
    for q in range(k):
        assert all(rnd[q].edges == graphs[0][q].edges for rnd in graphs)
    # fresh objects each round, so mutating one round's graph cannot leak into the next
    assert graphs[0][0] is not graphs[1][0] and graphs[0][0].edges is not graphs[1][0].edges


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("n", range(2, 21))
def test_every_static_method_is_a_dag(name: str, n: int) -> None:
    for order in ("fixed", "shuffle"):
        for rnd in _run(STATIC_METHODS[name](_ctx(n), order=order), 3, seed=n):
            for g in rnd:
                assert find_cycle(g.nodes, g.edges) is None


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("b_in,b_out", [(1, 1), (2, 2), (1, None), (None, 2), (0, 3)])
def test_budgets_respected(name: str, b_in: int | None, b_out: int | None) -> None:
    n = 8
    for order in ("fixed", "shuffle"):
        method = STATIC_METHODS[name](_ctx(n, in_budget=b_in, out_budget=b_out), order=order)
        for rnd in _run(method, 4, seed=11):
            for g in rnd:
                for v in range(n):
                    assert b_out is None or sum(1 for e in g.edges if e[0] == v) <= b_out
                    assert b_in is None or sum(1 for e in g.edges if e[1] == v) <= b_in


def test_budget_priority_follows_topology_order() -> None:
    graphs = _run(STATIC_METHODS["star"](_ctx(5, out_budget=2)), 1, 0, rounds=2)
    assert graphs[0][0].edges == [(0, 1), (0, 2)]
    graphs = _run(STATIC_METHODS["complete"](_ctx(4, in_budget=1, out_budget=1)), 1, 0, rounds=2)
    assert graphs[0][0].edges == [(0, 1), (1, 2), (2, 3)]


def test_mask_enforced_before_budget() -> None:
    mask = np.ones((4, 4), dtype=int)
    mask[0, 1] = 0
    mask[2, 3] = 0
    graphs = _run(STATIC_METHODS["complete"](_ctx(4, mask=mask, out_budget=1)), 1, 0, rounds=2)
    # 0->1 masked, so 0 spends its one slot on 0->2; 1->2; 2->3 masked, 2 has nothing else
    assert graphs[0][0].edges == [(0, 2), (1, 2)]
    with pytest.raises(ValueError):
        STATIC_METHODS["chain"](_ctx(3, mask=np.ones((4, 4))))


def test_random_is_seeded() -> None:
    m = RandomGraph(_ctx(6, seed=5), edge_prob=0.5)
    assert _edges(_run(m, 8, seed=5)) == _edges(_run(RandomGraph(_ctx(6, seed=5), edge_prob=0.5), 8, seed=9))
    assert _edges(_run(m, 8, seed=5)) != _edges(_run(RandomGraph(_ctx(6, seed=6), edge_prob=0.5), 8, seed=5))
    # different queries of one batch get different graphs
    qs = _run(m, 8, seed=5)[0]
    assert len({tuple(g.edges) for g in qs}) > 1


def test_random_graph_of_a_query_does_not_depend_on_its_batch() -> None:
    m = RandomGraph(_ctx(6, seed=2), edge_prob=0.5)
    qs = _questions(8)
    whole = m.act(m.begin(qs, train=False, rng=np.random.default_rng(0)), 2, [[] for _ in qs])
    tail = m.act(m.begin(qs[5:], train=False, rng=np.random.default_rng(1)), 2, [[] for _ in qs[5:]])
    assert [g.edges for g in whole[5:]] == [g.edges for g in tail]


def test_random_edge_frequency_matches_p() -> None:
    n, k = 6, 3000
    for p in (0.2, 0.5, 0.8):
        graphs = _run(RandomGraph(_ctx(n), edge_prob=p), k, seed=1, rounds=2)[0]
        pairs = set(complete_dag(range(n)))
        assert all(set(g.edges) <= pairs for g in graphs)
        freq = sum(len(g.edges) for g in graphs) / (k * len(pairs))
        assert abs(freq - p) < 0.015, (p, freq)


def test_random_per_round_resamples() -> None:
    graphs = _run(RandomGraph(_ctx(6), edge_prob=0.5, per_round=True), 6, seed=2)
    assert any(graphs[0][q].edges != graphs[1][q].edges for q in range(6))


def test_shuffle_order_is_seeded_and_varies() -> None:
    m = STATIC_METHODS["chain"](_ctx(6), order="shuffle")
    a, b = _edges(_run(m, 10, seed=4)), _edges(_run(m, 10, seed=4))
    assert a == b
    heads = {g[0][0] for g in a[0]}  # chain heads differ across queries
    assert len(heads) > 1
    for edges in a[0]:  # every shuffled chain still visits all agents once
        assert len(edges) == 5 and len({i for i, _ in edges} | {j for _, j in edges}) == 6


def test_bad_params_rejected() -> None:
    with pytest.raises(ValueError):
        STATIC_METHODS["chain"](_ctx(), order="sorted")
    with pytest.raises(ValueError):
        RandomGraph(_ctx(), edge_prob=1.2)
    with pytest.raises(ValueError):
        STATIC_METHODS["layered"](_ctx(), layers=0)


def test_decide_uses_fairness_rule() -> None:
    m = STATIC_METHODS["complete"](_ctx(6, n_adversaries=2))
    state = m.begin(_questions(2), train=False, rng=np.random.default_rng(0))
    d = m.decide(state, [[], []])
    assert [x.mode for x in d] == ["vote", "vote"] and d[0].voters == list(range(6))
    m = STATIC_METHODS["complete"](_ctx(6, n_adversaries=3))
    assert m.decide(m.begin(_questions(1), False, np.random.default_rng(0)), [[]])[0].mode == "llm"
