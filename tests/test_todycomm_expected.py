"""`method.decision_credit=expected` (issue 40): the decision's term is its exact expected utility over
every participation vector, votes recounted. Hand-computed expectations, the gradient against Eq. 7's
decision term averaged over all samples, the first reused step, and its refusals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from tests.test_todycomm_counterfactual import HALF, Q, _batch, _method
from tomacs.methods.base import MethodContext
from tomacs.methods.learned import bernoulli_log_prob
from tomacs.methods.todycomm import (
    TodyComm,
    expected_vote_utility,
    participation_vectors,
    vote_table,
)


def test_participation_vectors_are_every_vector_once() -> None:
    m = participation_vectors(3)
    assert m.shape == (8, 3)
    assert m[5].tolist() == [1, 0, 1]  # 5 = 0b101, agent 0 the lowest digit
    assert len({tuple(r) for r in m.tolist()}) == 8


def test_vote_table_by_hand() -> None:
    # rows 000 (no voters: everyone, A), 100 A, 010 A, 110 A, 001 B, 101 tie, 011 tie, 111 A
    table = vote_table(Q, ["A", "A", "B"], HALF, 1.0)
    assert table.tolist() == [1.0, 1.0, 1.0, 1.0, 0.0, 0.5, 0.5, 1.0]


def test_expected_utility_by_hand() -> None:
    table = torch.tensor(vote_table(Q, ["A", "A", "B"], HALF, 1.0)[None, :])
    # c = 0.5: every vector has probability 1/8 whatever eps: the table's mean, 6/8
    assert expected_vote_utility(torch.zeros(1, 3), table, 0.1).item() == pytest.approx(0.75)
    # c -> 1 for every agent, eps 0.1: p = 0.9 each; P(111) = 0.729, P(011) = P(101) = 0.081, P(110) = 0.081,
    # P(001) = 0.009, the three others 0.009 / 0.009 / 0.001 with U = 1
    big = torch.full((1, 3), 30.0)
    want = 0.729 + 0.081 * 0.5 * 2 + 0.081 + 0.009 * 0 + 0.009 + 0.009 + 0.001
    assert expected_vote_utility(big, table, 0.1).item() == pytest.approx(want, abs=1e-6)


def test_gradient_is_eq7s_decision_term_averaged_over_every_sample() -> None:
    # eps = 0: E[U] = sum_m P(m) U(m), and Eq. 7's decision term's expected gradient is
    # sum_m P(m) U(m) grad log P(m), with log P the Bernoulli log-prob that `bernoulli_log_prob` takes
    logits = torch.tensor([[0.3, -1.2, 0.8]], requires_grad=True)
    table = torch.tensor(vote_table(Q, ["A", "A", "B"], np.array([0.6, 0.2, 0.7]), 1.0)[None, :])
    (g,) = torch.autograd.grad(expected_vote_utility(logits, table, 0.0).sum(), logits)
    want = torch.zeros_like(logits)
    for k, mask in enumerate(participation_vectors(3)):
        lp = bernoulli_log_prob(logits, mask[None, :])
        (gl,) = torch.autograd.grad(lp.sum(), logits)
        want += torch.exp(lp.detach()).sum() * table[0, k] * gl
    assert torch.allclose(g, want, atol=1e-6)


def test_the_loss_by_hand_and_its_first_reused_step() -> None:
    m = _method(decision_credit="expected", normalize="none", baseline="batch_mean")
    state, episodes = _batch(m)
    loss = m.loss(state, episodes, [1.0, 0.0, 1.0, 1.0, 0.0, 0.0])
    T = 3
    ev = expected_vote_utility(state["decision_logits"], state["vote_table"], m.epsilon)
    comm = 0.25 * state["logp"][2] + 0.5 * state["logp"][3]  # gamma 0.5: gamma^2 on round 2, gamma on 3
    e = ev.detach().numpy()
    want = -ev.mean() - (comm * torch.as_tensor(e - e.mean())).mean()
    assert loss.item() == pytest.approx(want.item(), abs=1e-6)
    assert state["vote_table"].shape == (6, 2**4)
    assert T + 1 in state["logp"]  # the executor's sampled decision is still taken and logged
    params = m.parameters()
    g = torch.autograd.grad(m.loss(state, episodes, [1.0, 0.0, 1.0, 1.0, 0.0, 0.0]), params)
    g_reuse = torch.autograd.grad(m.reuse_loss(state, 0.2), params)
    for a, b in zip(g, g_reuse, strict=True):
        assert torch.allclose(a, b, atol=1e-6)


def test_a_moving_baseline_moves_once_per_batch_by_the_expected_utilities() -> None:
    # moving_avg: b is the earlier batches' average and moves by each draw; the communication terms' return is
    # the decision's expected utility, so the average must take those, once per batch (not u, not twice)
    m = _method(decision_credit="expected", baseline="moving_avg", baseline_momentum=0.5)
    state, episodes = _batch(m)
    m.loss(state, episodes, [1.0, 1.0, 1.0, 1.0, 1.0, 1.0])
    ev = expected_vote_utility(state["decision_logits"], state["vote_table"], m.epsilon).detach().numpy()
    assert m._ma == pytest.approx(float(ev.mean()))  # the first batch: its own mean, from the expectation
    assert ev.mean() < 1.0  # so the sampled u (all 1) would have given another value
    assert state["advantage"] == pytest.approx(ev - ev.mean())
    state, episodes = _batch(m)
    m.loss(state, episodes, [0.0] * 6)
    ev2 = expected_vote_utility(state["decision_logits"], state["vote_table"], m.epsilon).detach().numpy()
    assert m._ma == pytest.approx(0.5 * float(ev.mean()) + 0.5 * float(ev2.mean()))


def test_refusals_name_the_fix() -> None:
    ctx = MethodContext(n_agents=4, rounds=3, roles=[f"r{i}" for i in range(4)], seed=0, decision="llm")
    with pytest.raises(ValueError, match="decision_credit=expected recounts .* use decision=vote"):
        TodyComm(ctx, embedder="hashing", emb_dim=16, decision_credit="expected")
    big = MethodContext(n_agents=13, rounds=3, roles=[f"r{i}" for i in range(13)], seed=0)
    with pytest.raises(ValueError, match="N=13 agents is more than 12: use .*decision_credit=counterfactual"):
        TodyComm(big, embedder="hashing", emb_dim=16, decision_credit="expected")


@pytest.mark.parametrize("comm", ["learned", "debate"])
def test_a_tiny_run_trains_with_it_and_records_it(tmp_path: Path, comm: str) -> None:
    from tomacs.config import compose
    from tomacs.launch.run import run_job

    overrides = ["method=todycomm", "embedder=hashing", "attack=gt50", "train.size=8", "train.val_size=0"]
    overrides += ["train.batch_size=4", "train.epochs=1", "eval.size=4", "seed=0", f"method.comm={comm}"]
    cfg = compose([*overrides, "method.decision_credit=expected", "method.updates=2"])
    res = run_job(cfg, "train", tmp_path / "run")
    assert res["train"]["iterations"] == 2
    assert res["config"]["method"]["decision_credit"] == "expected"
    assert (res["train"]["decision_credit"], res["train"]["updates"]) == ("expected", 2)  # what ran
    assert res["config"]["method"]["gamma"] is None and res["train"]["gamma"] == 0.1  # null, and what it was


# -- TodyComm's defaults since issue 40: the expected decision, 4 steps, gamma 0.1, at the paper's budget --
@pytest.mark.parametrize(
    ("decision", "agents", "setting", "credit", "updates", "gamma"),
    [
        ("auto", 6, {}, "expected", 4, 0.1),  # the default
        ("vote", 12, {}, "expected", 4, 0.1),
        ("auto", 13, {}, "episode", 4, 0.1),  # 2^13 recounts: the paper's term, not an error, with 4 steps
        ("llm", 6, {}, "episode", 4, 0.1),  # not the credit-weighted vote: nothing to recount
        ("crs", 6, {}, "episode", 4, 0.1),
        ("auto", 6, {"decision_credit": "episode"}, "episode", 1, 0.9),  # the paper's step in one override
        ("auto", 6, {"decision_credit": "counterfactual"}, "counterfactual", 4, 0.1),
        ("auto", 6, {"decision_credit": "episode", "updates": 4}, "episode", 4, 0.9),
        ("auto", 6, {"updates": 2}, "expected", 2, 0.1),
        ("auto", 6, {"gamma": 0.9}, "expected", 4, 0.9),  # the discount of every run before 2026-11-29
        ("auto", 6, {"decision_credit": "episode", "gamma": 0.5}, "episode", 1, 0.5),
    ],
)
def test_the_default_decision_credit_steps_and_discount_resolve_by_the_run(
    decision: str, agents: int, setting: dict, credit: str, updates: int, gamma: float
) -> None:
    ctx = MethodContext(agents, 3, [f"r{i}" for i in range(agents)], seed=0, decision=decision)
    m = TodyComm(ctx, embedder="hashing", emb_dim=16, **setting)
    assert (m.decision_credit, m.updates, m.gamma) == (credit, updates, gamma)
    # the discount Eq. 7 applies: gamma^{T+1-t} on round t (T = 3), 1 on the decision
    assert [m._round_weight(t) for t in (2, 3, 4)] == pytest.approx([gamma**2, gamma, 1.0])


def test_todycomm_trains_at_the_papers_budget_unless_told_otherwise() -> None:
    from tomacs.config import compose

    assert compose(["method=todycomm"]).train.name == "paper"
    assert compose(["method=todycomm", "train=default"]).train.name == "default"
    assert compose(["train=default", "method=todycomm"]).train.name == "default"
    assert compose(["method=todycomm", "train.epochs=5"]).train.epochs == 5
    for other in ("gdesigner", "agentprune", "complete"):  # every other method keeps the shared default
        assert compose([f"method={other}"]).train.name == "default"


def test_a_result_file_without_the_keys_is_labelled_with_the_papers_step() -> None:
    """A run from before issue 40 recorded neither key and ran Eq. 7's step: the report must not give it
    today's default label."""
    from tomacs.report.collect import method_label

    old = {"method": "todycomm", "config": {"method": {"name": "todycomm", "epsilon": 0.1, "gamma": 0.9}}}
    today = {"name": "todycomm", "decision_credit": "auto", "updates": None}
    # its gamma 0.9 is recorded, and is not today's default (null: 0.1 where the decision term is expected)
    assert method_label(old) == "todycomm[decision_credit=episode,gamma=0.9,updates=1]"
    assert method_label({"method": "todycomm", "config": {"method": today}}) == "todycomm"
    # a block that only names the method (a hand-made file) records no settings: no era to read from it
    assert method_label({"method": "todycomm", "config": {"method": {"name": "todycomm"}}}) == "todycomm"
