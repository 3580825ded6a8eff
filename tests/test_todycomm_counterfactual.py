"""`method.decision_credit=counterfactual` (issue 40): the decision's per-agent advantages recount the
credit-weighted vote with one agent's participation flipped. Hand-computed votes and advantages, the
loss they give, and a refusal where there is no vote to recount."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from tests.test_todycomm import ANSWERS, _history, _questions
from tomacs.methods.base import MethodContext
from tomacs.methods.todycomm import TodyComm, decision_advantages, vote_utility
from tomacs.types import AdversaryPlan, Episode, Question

Q = Question(id="q", text="?", options=("a", "b", "c", "d"), answer="A", benchmark="t", kind="mc")
HALF = np.array([0.5, 0.5, 0.5])


def test_vote_utility_by_hand() -> None:
    assert vote_utility(Q, ["A", "A", "B"], HALF, np.array([1, 1, 1]), 1.0) == 1.0
    assert vote_utility(Q, ["A", "A", "B"], HALF, np.array([0, 1, 1]), 1.0) == 0.5  # A-B tie: half the draws
    assert vote_utility(Q, ["A", "A", "B"], HALF, np.array([0, 0, 1]), 1.0) == 0.0
    assert (
        vote_utility(Q, ["A", "A", "B"], HALF, np.array([0, 0, 0]), 1.0) == 1.0
    )  # no voters: everyone votes
    assert vote_utility(Q, [None, None, "B"], HALF, np.array([1, 1, 0]), 1.0) == 0.0  # nothing parsed
    # weights softmax(c): e^0.9 / (e^0.9 + 2 e^0.1) = 0.527 for B against 0.473 for A
    assert vote_utility(Q, ["B", "A", "A"], np.array([0.9, 0.1, 0.1]), np.array([1, 1, 1]), 1.0) == 0.0
    # a lower temperature is the same vote; a higher one flattens the weights toward one vote each
    assert vote_utility(Q, ["B", "A", "A"], np.array([0.9, 0.1, 0.1]), np.array([1, 1, 1]), 10.0) == 1.0


def test_decision_advantages_by_hand() -> None:
    # eps 0.1, c 0.5: p = 0.5. Agent 0: U(in) = 1, U(out) = 0.5 (tie) -> base 0.75 -> 1 - 0.75 = 0.25.
    # Agent 2 (B): U(in) = U(out) = 1 -> 0: its vote changes nothing.
    adv = decision_advantages(Q, ["A", "A", "B"], HALF, np.array([1, 1, 1]), 1.0, 0.1, 1.0)
    assert adv.tolist() == pytest.approx([0.25, 0.25, 0.0])
    # c = (0.9, 0.9, 0.2), agent 2 left out and the answer wrong (u = 0) in a recount that would be right:
    c = np.array([0.9, 0.9, 0.2])
    adv = decision_advantages(Q, ["B", "B", "A"], c, np.array([1, 1, 0]), 0.0, 0.1, 1.0)
    assert adv[2] == pytest.approx(0.0)  # B wins with or without agent 2
    adv = decision_advantages(Q, ["A", "B", "A"], c, np.array([0, 1, 0]), 0.0, 0.1, 1.0)
    # agent 2 in: A 0.2's weight vs B 0.9's -> B, U = 0; out: B alone -> 0
    assert adv[2] == pytest.approx(0.0)
    p0 = 0.9 * 0.9 + 0.1 * 0.1
    # agent 0 in: A (c 0.9) vs B (c 0.9): tie -> U = 0.5; out: B -> 0; so A_0 = 0 - p0 * 0.5
    assert adv[0] == pytest.approx(-p0 * 0.5)


def _method(**params: object) -> TodyComm:
    ctx = MethodContext(n_agents=4, rounds=3, roles=[f"r{i}" for i in range(4)], seed=0)
    return TodyComm(ctx, **{"embedder": "hashing", "emb_dim": 16, "gamma": 0.5, **params})


def _batch(m: TodyComm) -> tuple[dict, list[Episode]]:
    answers = ANSWERS * 2
    hist = _history(answers, 3)
    qs = _questions(len(hist))
    state = m.begin(qs, train=True, rng=np.random.default_rng(3))
    for t in (2, 3):
        m.act(state, t, [h[: t - 1] for h in hist])
    m.decide(state, hist)
    plan = AdversaryPlan(adversaries=(), onsets={}, target=None)
    episodes = [
        Episode(question=q, plan=plan, rounds=h, graphs=[None] * 3) for q, h in zip(qs, hist, strict=True)
    ]
    return state, episodes


def test_counterfactual_loss_by_hand() -> None:
    m = _method(decision_credit="counterfactual", baseline="batch_mean", epsilon=0.1)
    state, episodes = _batch(m)
    u = np.array([1.0, 1.0, 0.0, 1.0, 0.0, 0.0])
    loss = m.loss(state, episodes, u.tolist())
    adv = np.stack(
        [
            decision_advantages(
                ep.question,
                [o.answer for o in ep.rounds[-1]],
                state["credits"][4][q],
                state["actions"][4][q],
                float(u[q]),
                0.1,
                1.0,
            )
            for q, ep in enumerate(episodes)
        ]
    )
    dec = -(state["logp_agents"].detach().numpy() * adv).sum(-1).mean()
    comm = 0.5**2 * state["logp"][2].detach().numpy() + 0.5 * state["logp"][3].detach().numpy()
    eq7_comm = -(comm * (u - u.mean())).mean()
    assert float(loss.detach()) == pytest.approx(dec + eq7_comm, rel=1e-5)
    # the per-agent terms sum to the decision's log-prob
    assert torch.allclose(state["logp_agents"].sum(-1), state["logp"][4])


def test_first_reused_step_matches_the_counterfactual_gradient() -> None:
    m = _method(decision_credit="counterfactual", normalize="none")
    state, episodes = _batch(m)
    params = m.parameters()
    g = torch.autograd.grad(m.loss(state, episodes, [1.0, 0.0, 1.0, 1.0, 0.0, 0.0]), params)
    g_reuse = torch.autograd.grad(m.reuse_loss(state, 0.2), params)
    for a, b in zip(g, g_reuse, strict=True):
        assert torch.allclose(a, b, atol=1e-6)


@pytest.mark.parametrize("decision", ["llm", "crs"])
def test_no_vote_to_recount_is_a_clear_error(decision: str) -> None:
    ctx = MethodContext(n_agents=4, rounds=3, roles=[f"r{i}" for i in range(4)], seed=0, decision=decision)
    with pytest.raises(ValueError, match=f"decision={decision} the decision is not that vote"):
        TodyComm(ctx, embedder="hashing", emb_dim=16, decision_credit="counterfactual")


def test_a_tiny_run_trains_with_it_and_records_it(tmp_path: Path) -> None:
    from tomacs.config import compose
    from tomacs.launch.run import run_job

    overrides = ["method=todycomm", "embedder=hashing", "attack=gt50", "train.size=8", "train.val_size=0"]
    overrides += ["train.batch_size=4", "train.epochs=1", "eval.size=4", "seed=0"]
    cfg = compose([*overrides, "method.decision_credit=counterfactual", "method.updates=2"])
    res = run_job(cfg, "train", tmp_path / "run")
    assert res["train"]["iterations"] == 2
    assert res["config"]["method"]["decision_credit"] == "counterfactual"
    assert res["config"]["method"]["updates"] == 2
