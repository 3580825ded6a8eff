"""CARD (Eq. 7-13, Alg. 1) against hand computations, runtime re-decoding, and a run with conditions."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from test_graphs import replay_log_lik

from tomacs.config import compose
from tomacs.graphs import find_cycle
from tomacs.launch.run import run_job
from tomacs.methods.base import MethodContext
from tomacs.methods.card import CARD, CARDSettings, condition_text, edge_costs, normalise_conditions
from tomacs.types import Question

ROLES = ["Knowledgeable Expert", "Critic", "Mathematician", "Psychologist", "Historian", "Doctor"]


def _method(n: int = 6, seed: int = 0, conditions=None, ctx_kw: dict | None = None, **params) -> CARD:
    ctx = MethodContext(n_agents=n, rounds=3, roles=ROLES[:n], seed=seed, **(ctx_kw or {}))
    if conditions is not None:
        ctx.extra["conditions"] = conditions
    return CARD(ctx, embedder="hashing", **params)


def _questions(k: int) -> list[Question]:
    return [
        Question(
            id=f"q{i}",
            text=f"Which statement about topic {i} is correct?",
            options=("alpha", "beta", "gamma", "delta"),
            answer="A",
            benchmark="t",
            kind="mc",
        )
        for i in range(k)
    ]


def _params(m: CARD) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in m.net.state_dict().items()}


def test_conditions_are_normalised_and_verbalised() -> None:
    conds = normalise_conditions([{"capability": 0.5, "cost": 2}, {}], 2)
    assert conds[0] == {"capability": 0.5, "cost": 2.0, "backbone": "sim"}
    assert conds[1] == {"capability": 1.0, "cost": 1.0, "backbone": "sim"}
    assert "0.50" in condition_text(conds[0]) and "2.00" in condition_text(conds[0])
    with pytest.raises(ValueError, match="unknown keys"):
        normalise_conditions([{"speed": 1}], 1)
    with pytest.raises(ValueError, match="one condition per agent"):
        normalise_conditions([{}], 2)


def test_edge_costs_by_hand() -> None:
    conds = normalise_conditions([{"cost": 1.0}, {"cost": 2.0}, {"cost": 4.0}], 3)
    rec = edge_costs(conds, "receiver")
    np.testing.assert_allclose(rec, [[0, 2, 4], [1, 0, 4], [1, 2, 0]])
    np.testing.assert_allclose(edge_costs(conds, "sender"), [[0, 1, 1], [2, 0, 2], [4, 4, 0]])
    np.testing.assert_allclose(edge_costs(conds, "mean"), [[0, 1.5, 2.5], [1.5, 0, 3], [2.5, 3, 0]])
    mask = np.array([[1, 0, 1], [1, 1, 1], [1, 1, 1]])
    assert edge_costs(conds, "receiver", mask)[0, 1] == 0.0


def test_eq12_cost_regulariser_by_hand() -> None:
    conds = [{"cost": 3.0}, {}, {}, {"cost": 0.5}, {}, {}]
    m = _method(conditions=conds, ctx_kw={"in_budget": 2})
    state = m.begin(_questions(5), True, np.random.default_rng(0))
    cost = edge_costs(normalise_conditions(conds, 6), "receiver")
    for k in range(5):
        # Eq. 12 by hand: sum over i != j of Cost_ij * p_ij
        assert float(state["reg"][k].detach()) == pytest.approx(
            float((cost * state["probs"][k]).sum()), rel=1e-5
        )


def test_inference_thresholds_at_tau() -> None:
    m = _method(threshold=0.45)
    state = m.begin(_questions(3), False, None)
    assert state["logp"] is None
    for k, edges in enumerate(state["edges"]):
        assert all(state["probs"][k][e] > 0.45 for e in edges)
        assert find_cycle(list(range(6)), edges) is None
    probs, graphs = m.decode(_questions(3))
    assert graphs == state["edges"]
    np.testing.assert_allclose(probs, state["probs"])


def test_condition_change_redecodes_a_new_graph_without_parameter_update() -> None:
    m = _method()
    q = _questions(1)
    before = _params(m)
    p_old, g_old = m.decode(q)
    new = m.conditions
    new[2] = {"capability": 0.3, "cost": 4.0, "backbone": "gpt-4o-mini"}
    p_new, _ = m.decode(q, new)
    assert np.abs(p_new - p_old).max() > 1e-4  # the condition channel reaches the decoder
    # a tau between the old and new probability of the pair that moved most: that edge flips
    off = ~np.eye(6, dtype=bool)[None]
    delta = np.where(off, np.abs(p_new - p_old), 0)
    i, j = np.unravel_index(int(delta[0].argmax()), (6, 6))
    m.threshold = float((p_old[0, i, j] + p_new[0, i, j]) / 2)
    _, g_old = m.decode(q)
    m.set_conditions(new)  # runtime adaptation, Eq. 13
    state = m.begin(q, False, None)  # begin reads the current conditions
    assert state["conditions"][2]["cost"] == 4.0
    assert state["edges"] != g_old
    assert state["edges"] == m.decode(q)[1]
    after = _params(m)
    assert all(torch.equal(before[k], after[k]) for k in before)


def test_reinforce_step_moves_probability_toward_rewarded_sample() -> None:
    m = _method(beta=0.0)
    q = _questions(1)
    state = m.begin(q, True, np.random.default_rng(0))
    edges = state["edges"][0]
    old_ll = replay_log_lik(state["probs"][0], edges)
    opt = torch.optim.SGD(m.parameters(), lr=0.05)
    opt.zero_grad()
    m.loss(state, [], [1.0]).backward()
    opt.step()
    new_p = m.decode(q)[0][0]
    assert replay_log_lik(new_p, edges) > old_ll + 1e-3
    delta = new_p - state["probs"][0]
    others = [delta[i, j] for i in range(6) for j in range(6) if i != j and (i, j) not in edges]
    assert np.mean([delta[e] for e in edges]) > np.mean(others)  # kept edges gain relative to the rest


def test_cost_regulariser_lowers_expensive_edges() -> None:
    """With no reward the loss is beta * Eq. 12 alone: descent must lower sum Cost_ij p_ij, and an
    agent whose cost is 10x the others loses incoming probability fastest (receiver cost)."""
    conds = [{"cost": 10.0}, {}, {}, {}, {}, {}]
    m = _method(conditions=conds, beta=1.0)
    opt = torch.optim.SGD(m.parameters(), lr=1e-3)  # small steps: stay clear of saturation
    q = _questions(2)
    p0 = m.decode(q)[0]
    first = None
    for _ in range(5):
        state = m.begin(q, True, None)
        loss = m.loss(state, [], [0.0, 0.0])
        first = float(loss.detach()) if first is None else first
        opt.zero_grad()
        loss.backward()
        opt.step()
    p1 = m.decode(q)[0]
    assert float(m.loss(m.begin(q, True, None), [], [0.0, 0.0]).detach()) < first
    into0 = (p1[:, 1:, 0] - p0[:, 1:, 0]).mean()
    into_others = (p1[:, 1:, 1:] - p0[:, 1:, 1:]).mean()
    assert into0 < 0 and into0 < into_others


def test_every_parameter_gets_a_gradient() -> None:
    m = _method(conditions=[{"capability": 0.5, "cost": 2.0}, {}, {}, {}, {}, {}])
    state = m.begin(_questions(4), True, np.random.default_rng(0))
    m.loss(state, [], [1.0, 0.0, 1.0, 1.0]).backward()
    for name, p in m.net.named_parameters():
        assert p.grad is not None and float(p.grad.abs().sum()) > 0, name


COMMON = [
    "method=card",
    "embedder=hashing",
    "train.size=8",
    "train.val_size=0",
    "train.batch_size=4",
    "train.epochs=1",
    "eval.size=4",
    "attack=gt50",
]


def test_shipped_config_is_the_schema() -> None:
    cfg = compose(["method=card"])
    assert dict(cfg.method) == CARDSettings().params()
    assert cfg.method.lr is None


def test_end_to_end_with_conditions(tmp_path: Path) -> None:
    over = "conditions=[{capability:0.5,cost:2.0},{},{},{},{},{}]"
    res = run_job(compose([*COMMON, over]), "train", tmp_path)
    assert res["method"] == "card"
    assert res["config"]["conditions"][0] == {"capability": 0.5, "cost": 2.0}
    assert res["test_questions"] == 4
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["metrics"]["acc"] == res["metrics"]["acc"]
