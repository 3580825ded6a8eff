"""AgentPrune: REINFORCE direction, pruning counts, checkpoints."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from tomacs.methods.agentprune import AgentPrune, magnitude_prune
from tomacs.methods.base import MethodContext
from tomacs.methods.learned import nuclear_norm
from tomacs.types import Question

ROLES = ["Knowledgeable Expert", "Critic", "Mathematician", "Psychologist", "Historian"]


def ctx(n: int = 4, rounds: int = 3, **kw: object) -> MethodContext:
    return MethodContext(n_agents=n, rounds=rounds, roles=ROLES[:n], seed=0, **kw)  # type: ignore[arg-type]


def qs(k: int) -> list[Question]:
    return [
        Question(f"q{i}", f"What is {i} + {i}?", ("1", "2", "3", "4"), "B", "synthetic", "mc")
        for i in range(k)
    ]


def method(n: int = 4, rounds: int = 3, c: MethodContext | None = None, **params: object) -> AgentPrune:
    return AgentPrune(c or ctx(n, rounds), **params)


def run_train_rounds(m: AgentPrune, questions: list[Question]) -> dict:
    state = m.begin(questions, True, np.random.default_rng(0))
    for t in range(2, m.ctx.rounds + 1):
        m.act(state, t, [[] for _ in questions])
    return state


def set_logits(m: AgentPrune, kind: str, values: np.ndarray) -> None:
    with torch.no_grad():
        getattr(m.net, kind).copy_(torch.as_tensor(values, dtype=torch.float32))


def test_reinforce_step_moves_probability_toward_the_rewarded_sample() -> None:
    m = method(n=4, rounds=2, baseline="none", lowrank_weight=0.0, l1_weight=0.0)
    state = run_train_rounds(m, qs(1))
    a = state["samples"][2]["spatial"][0]
    before = m.probs("spatial")
    opt = torch.optim.SGD(m.parameters(), lr=0.5)
    loss = m.loss(state, [None], [1.0])
    opt.zero_grad()
    loss.backward()
    opt.step()
    after = m.probs("spatial")
    off = ~np.eye(4, dtype=bool)
    assert a[off].any() and (~a[off]).any()  # the seeded sample has both kinds of edge
    assert np.all(after[a & off] > before[a & off])
    assert np.all(after[~a & off] < before[~a & off])
    # an unrewarded episode (u = 0, no baseline, no regulariser) gives no gradient at all
    state = run_train_rounds(m, qs(1))
    opt.zero_grad()
    m.loss(state, [None], [0.0]).backward()
    assert float(m.net.spatial.grad.abs().sum()) == 0.0


def test_every_trainable_parameter_gets_a_gradient() -> None:
    m = method(n=4, rounds=3, baseline="none")
    state = run_train_rounds(m, qs(3))
    loss = m.loss(state, [None] * 3, [1.0, 0.0, 1.0])
    assert loss.requires_grad
    loss.backward()
    names = {id(m.net.spatial): "spatial", id(m.net.temporal): "temporal"}
    assert len(m.parameters()) == 2
    for p in m.parameters():
        assert p.grad is not None and float(p.grad.abs().sum()) > 0, names[id(p)]
    # regulariser alone reaches both matrices too
    for p in m.parameters():
        p.grad = None
    m.regulariser().backward()
    for p in m.parameters():
        assert float(p.grad.abs().sum()) > 0


def test_regulariser_matches_hand_computation() -> None:
    m = method(n=2, rounds=2, lowrank_weight=0.1, l1_weight=0.01, temporal=False)
    set_logits(m, "spatial", np.array([[5.0, 0.0], [math.log(3.0), 5.0]]))  # off-diagonal p = 0.5, 0.75
    # P (.) M = [[0, .5], [.75, 0]]: singular values .75 and .5, nuclear norm 1.25, L1 1.25
    assert float(m.regulariser().detach()) == pytest.approx(0.1 * 1.25 + 0.01 * 1.25, abs=1e-6)
    assert float(nuclear_norm(torch.tensor([[1.0, 1.0], [1.0, 1.0]]))) == pytest.approx(2.0, abs=1e-6)


def test_magnitude_pruning_removes_the_expected_edges() -> None:
    m = method(n=4, rounds=3, prune_rate=0.25)
    logits = np.arange(16, dtype=np.float64).reshape(4, 4)
    set_logits(m, "spatial", logits)
    set_logits(m, "temporal", -logits)
    off = ~np.eye(4, dtype=bool)
    counts = []
    for it in range(3):
        m.on_iteration_end(it)
        counts.append(int(m.mask("spatial")[off].sum()))
    assert counts == [9, 7, 5]  # 12 - round(3) = 9, 9 - round(2.25) = 7, 7 - round(1.75) = 5
    kept = m.mask("spatial")
    # the 7 smallest off-diagonal spatial logits (1, 2, 3, 4, 6, 7, 8) are gone
    assert [int(v) for v in logits[off & (kept == 0)]] == [1, 2, 3, 4, 6, 7, 8]
    tk = m.mask("temporal")
    assert sorted(int(v) for v in -logits[off & (tk == 0)]) == [-14, -13, -12, -11, -9, -8, -7]
    assert m.pruned_log[0] == {"iteration": 0, "spatial": 3, "temporal": 3}
    # at least one edge per step, and pruned edges are never sampled again
    one = np.zeros((2, 2))
    msk = np.array([[0.0, 1.0], [1.0, 0.0]])
    assert magnitude_prune(one, msk, 0.1) == 1 and msk.sum() == 1
    state = run_train_rounds(m, qs(4))
    for t in (2, 3):
        assert not (state["samples"][t]["spatial"] & (kept == 0)[None]).any()


def test_prune_interval_and_cap() -> None:
    m = method(n=4, rounds=2, prune_rate=0.5, prune_interval=2, max_prune_fraction=0.5, temporal=False)
    m.on_iteration_end(0)
    assert m.mask("spatial").sum() == 12  # iteration 1 of 2: no pruning yet
    m.on_iteration_end(1)
    assert m.mask("spatial").sum() == 6
    m.on_iteration_end(3)
    assert m.mask("spatial").sum() == 6  # capped at half of the 12 candidates


def test_inference_graph_is_fixed_thresholded_and_pruned() -> None:
    m = method(n=3, rounds=4, prune_rate=0.25)
    sp = np.array([[0.0, 2.0, 1.0], [-1.0, 0.0, 0.5], [-3.0, -2.0, 0.0]])
    tp = np.array([[0.0, -1.0, -1.0], [-1.0, 0.0, -1.0], [0.1, -1.0, 0.0]])
    set_logits(m, "spatial", sp)
    set_logits(m, "temporal", tp)
    m.on_iteration_end(0)  # prunes 2 of 6 per matrix: spatial (2,0), (2,1); temporal (0,1), (0,2)
    m.train_mode(False)
    state = m.begin(qs(3), False, np.random.default_rng(0))
    g2 = m.act(state, 2, [[]] * 3)
    g3 = m.act(state, 3, [[]] * 3)
    g4 = m.act(state, 4, [[]] * 3)
    assert all(g.edges == [(0, 1), (0, 2), (1, 2)] for g in g2 + g3 + g4)
    # temporal 2 -> 0 (p = 0.52) is its own edge kind: it reads round t-1, so it may point
    # against the spatial DAG, and it is there from round 2 on (round 1 is a finished round)
    assert all(g.temporal_edges == [(2, 0)] for g in g2 + g3 + g4)
    set_logits(m, "spatial", np.array([[0.0, 2.0, -1.0], [-1.0, 0.0, -1.0], [-3.0, -2.0, 0.0]]))
    assert m.inference_graph(2) == ([(0, 1)], [(2, 0)])
    late = method(n=3, rounds=4, temporal_from_round=3)
    set_logits(late, "spatial", sp)
    set_logits(late, "temporal", tp)
    assert late.inference_graph(2) == ([(0, 1), (0, 2), (1, 2)], [])
    assert late.inference_graph(3)[1] == [(2, 0)]  # the only temporal logit above 0 (p = 0.52)


def test_samples_do_not_depend_on_batch_composition_and_state_dict_round_trips() -> None:
    m = method(n=4, rounds=3)
    rng = np.random.default_rng(3)
    set_logits(m, "spatial", rng.normal(0, 1, (4, 4)))
    set_logits(m, "temporal", rng.normal(0, 1, (4, 4)))
    m.on_iteration_end(0)
    questions = qs(3)
    sd = m.state_dict()
    together = run_train_rounds(m, questions)
    m2 = method(n=4, rounds=3)
    m2.load_state_dict(sd)
    alone = run_train_rounds(m2, [questions[1]])
    for t in (2, 3):
        assert together["edges"][t][1] == alone["edges"][t][0]
        torch.testing.assert_close(together["logp"][t][1], alone["logp"][t][0])
    # a second visit of the same question draws afresh
    again = run_train_rounds(m2, [questions[1]])
    assert any((again["samples"][t]["spatial"][0] != alone["samples"][t]["spatial"][0]).any() for t in (2, 3))
    m3 = method(n=4, rounds=3)
    m3.load_state_dict(m.state_dict())
    for t in (2, 3):
        assert m3.inference_graph(t) == m.inference_graph(t)  # spatial and temporal edges
    torch.testing.assert_close(m3.net.spatial_mask, m.net.spatial_mask)
    assert m3.visits == m.visits and m3.pruned_log == m.pruned_log
    with pytest.raises(ValueError, match="agents"):
        method(n=3, rounds=3).load_state_dict(sd)


def test_to_device_and_config_validation() -> None:
    m = method().to("cpu")
    assert m.net.spatial.device.type == "cpu"
    with pytest.raises(ValueError, match="unknown agentprune"):
        method(bogus=1)
    with pytest.raises(ValueError, match="prune_rate"):
        method(prune_rate=2.0)
