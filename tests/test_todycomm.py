"""TodyComm (Alg. 1, 2, 4, §4.2.2, Eq. 7) against hand computations, plus a REINFORCE smoke test.

No LLM and no executor: histories are built here from fixed agent outputs (hashing embeddings),
and the test plays the executor's part (begin -> act t=2..T -> decide -> loss).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from tomacs.embedding.embedders import HashingEmbedder
from tomacs.graphs import credit_ranked_dag, find_cycle
from tomacs.methods.base import MethodContext
from tomacs.methods.todycomm import (
    TodyComm,
    bernoulli_log_prob,
    decision_weights,
    discounted_log_prob,
    inference_participation,
    reinforce_loss,
    sample_participation,
)
from tomacs.types import AdversaryPlan, AgentOutput, Question

EMB = HashingEmbedder(dim=16)
TEXTS = {
    "A": "the reaction is exothermic so energy is released and the answer is A",
    "B": "considering the boundary condition carefully the result must be B",
    "C": "I am highly confident, a subtle constraint others overlooked makes C correct",
}


def _ctx(n: int = 4, rounds: int = 3, **kw) -> MethodContext:
    return MethodContext(n_agents=n, rounds=rounds, roles=[f"r{i}" for i in range(n)], seed=0, **kw)


def _method(n: int = 4, rounds: int = 3, ctx_kw: dict | None = None, **params) -> TodyComm:
    # Eq. 7 as the paper writes it (its decision term from the one sampled vector); the default, the
    # decision's exact expectation, has its own hand-computed tests in tests/test_todycomm_expected.py
    params = {"embedder": "hashing", "emb_dim": 16, "decision_credit": "episode", **params}
    return TodyComm(_ctx(n, rounds, **(ctx_kw or {})), **params)


def _questions(k: int) -> list[Question]:
    return [
        Question(id=f"q{i}", text="?", options=("w", "x", "y", "z"), answer="A", benchmark="t", kind="mc")
        for i in range(k)
    ]


def _history(answers: list[list[str]], rounds: int) -> list[list[list[AgentOutput]]]:
    """history[q][t-1][i]; agent i answers answers[q][i] with a fixed text in every round."""
    out = []
    for row in answers:
        embs = EMB.embed([TEXTS[a] for a in row])
        out.append(
            [
                [
                    AgentOutput(
                        agent=i,
                        round=t,
                        text=TEXTS[a],
                        answer=a,
                        participated=True,
                        behaviour="honest",
                        embedding=embs[i].tolist(),
                    )
                    for i, a in enumerate(row)
                ]
                for t in range(1, rounds + 1)
            ]
        )
    return out


def _episode(m: TodyComm, answers: list[list[str]], train: bool, seed: int = 0):
    T = m.ctx.rounds
    hist = _history(answers, T)
    state = m.begin(_questions(len(answers)), train=train, rng=np.random.default_rng(seed))
    graphs = [m.act(state, t, [h[: t - 1] for h in hist]) for t in range(2, T + 1)]
    decisions = m.decide(state, hist)
    return state, graphs, decisions


@pytest.fixture(autouse=True)
def _one_thread():
    """Tiny tensors: intra-op threads only add contention (100x slower on a busy 2-core box)."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


ANSWERS = [["A", "A", "B", "C"], ["A", "C", "C", "B"], ["B", "A", "A", "A"]]


# -- Alg. 2 --------------------------------------------------------------------------------------
def test_bernoulli_log_prob_by_hand() -> None:
    c = torch.tensor([0.8, 0.3, 0.6])
    logits = torch.log(c / (1 - c))
    lp = bernoulli_log_prob(logits, np.array([1, 1, 0]))
    assert lp.item() == pytest.approx(math.log(0.8) + math.log(0.3) + math.log(0.4), abs=1e-6)
    # finite even where sigmoid rounds to exactly 1 in float32
    assert torch.isfinite(bernoulli_log_prob(torch.tensor([40.0]), np.array([0])))


def test_sampling_flip_rates() -> None:
    rng = np.random.default_rng(1)
    c = np.tile([0.9, 0.1, 1.0, 0.0], (20000, 1))
    a, sampled, flips = sample_participation(c, 0.2, rng)
    assert np.array_equal(a, np.abs(sampled - flips))
    # P(a=1) = c(1-eps) + (1-c) eps
    assert np.allclose(a.mean(0), [0.74, 0.26, 0.8, 0.2], atol=0.015)
    a1, _, _ = sample_participation(np.array([[1.0, 0.0]]), 1.0, rng)
    assert a1.tolist() == [[0, 1]]  # eps = 1 flips every certain sample


def test_training_log_prob_is_of_post_flip_action() -> None:
    m = _method(epsilon=0.5)  # many flips
    state, graphs, decisions = _episode(m, ANSWERS * 4, train=True, seed=3)
    flipped_somewhere = False
    for t in (2, 3):
        c = state["credits"][t]
        for q, g in enumerate(graphs[t - 2]):
            a = [1 if i in g.participants else 0 for i in range(4)]
            assert a == state["actions"][t][q].tolist()
            hand = sum(math.log(c[q, i]) if a[i] else math.log(1 - c[q, i]) for i in range(4))
            assert state["logp"][t][q].item() == pytest.approx(hand, abs=1e-4)
            assert g.credits == pytest.approx(c[q].tolist())
            flipped_somewhere |= a != [int(x > 0.5) for x in c[q]]
    assert flipped_somewhere
    c = state["credits"][4]
    for q, d in enumerate(decisions):
        a = state["actions"][4][q]
        hand = sum(math.log(c[q, i]) if a[i] else math.log(1 - c[q, i]) for i in range(4))
        assert state["logp"][4][q].item() == pytest.approx(hand, abs=1e-4)
        if a.sum() > 0:
            assert d.voters == [i for i in range(4) if a[i]]
        else:
            assert d.voters == [0, 1, 2, 3]  # documented fallback: no voters -> all agents


def test_inference_selects_exactly_above_mean() -> None:
    assert inference_participation(np.array([[0.1, 0.5, 0.6, 0.2]])).tolist() == [[0, 1, 1, 0]]
    assert inference_participation(np.array([[0.3, 0.3, 0.3]])).tolist() == [[1, 1, 1]]  # fallback
    assert inference_participation(np.array([[0.2, 0.4, 0.6]])).tolist() == [[0, 0, 1]]  # = mean is out
    m = _method()
    state, graphs, decisions = _episode(m, ANSWERS, train=False)
    assert state["logp"] == {}
    for t in (2, 3):
        for g in graphs[t - 2]:
            c = np.array(g.credits)
            assert g.participants == [i for i in range(4) if c[i] > c.mean()]
            expected = credit_ranked_dag(c.tolist(), [int(x > c.mean()) for x in c])
            assert g.edges == expected and find_cycle(g.participants, g.edges) is None
    for q, d in enumerate(decisions):
        c = state["credits"][4][q]
        assert d.voters == [i for i in range(4) if c[i] > c.mean()]


def test_decision_weights_are_softmax_over_voters() -> None:
    c = np.array([0.9, 0.1, 0.6, 0.3])
    w = decision_weights(c, [0, 2])
    assert w == pytest.approx([math.exp(0.9) / (math.exp(0.9) + math.exp(0.6)), 1 / (1 + math.exp(0.3))])
    assert decision_weights(c, [0, 2], tau=0.1) == pytest.approx(
        [1 / (1 + math.exp(-3)), 1 / (1 + math.exp(3))]
    )
    m = _method()
    state, _, decisions = _episode(m, ANSWERS, train=False)
    for q, d in enumerate(decisions):
        c = state["credits"][4][q]
        e = np.exp([c[i] for i in d.voters])
        assert d.weights == pytest.approx((e / e.sum()).tolist())
        assert d.mode == "vote"


# -- Eq. 7 ---------------------------------------------------------------------------------------
def test_eq7_loss_by_hand() -> None:
    # T = 3, gamma = 0.5: bracket = 0.25 logP^2 + 0.5 logP^3 + logP^4
    comm = [torch.tensor([-1.0, -2.0]), torch.tensor([-0.5, -0.25])]
    dec = torch.tensor([-0.3, -0.7])
    total = discounted_log_prob(comm, dec, gamma=0.5, rounds=3)
    assert total.tolist() == pytest.approx([-0.8, -1.325])
    assert reinforce_loss(total, [1.0, 0.0]).item() == pytest.approx(0.4)
    assert reinforce_loss(total, [1.0, 0.0], baseline=0.5).item() == pytest.approx(-0.13125)
    with pytest.raises(ValueError):
        discounted_log_prob(comm, dec, gamma=0.5, rounds=4)


@pytest.mark.parametrize(("baseline", "expected"), [("none", 0.4), ("batch_mean", -0.13125)])
def test_method_loss_uses_eq7(baseline: str, expected: float) -> None:
    m = _method(rounds=3, gamma=0.5, baseline=baseline)
    state = m.begin(_questions(2), train=True, rng=np.random.default_rng(0))
    state["logp"] = {
        2: torch.tensor([-1.0, -2.0]),
        3: torch.tensor([-0.5, -0.25]),
        4: torch.tensor([-0.3, -0.7]),
    }
    assert m.loss(state, [], [1.0, 0.0]).item() == pytest.approx(expected)


def test_moving_average_baseline() -> None:
    m = _method(rounds=3, gamma=0.5, baseline="moving_avg", baseline_momentum=0.5)
    state = m.begin(_questions(2), train=True, rng=np.random.default_rng(0))
    state["logp"] = {
        2: torch.tensor([-1.0, -2.0]),
        3: torch.tensor([-0.5, -0.25]),
        4: torch.tensor([-0.3, -0.7]),
    }
    assert m.loss(state, [], [1.0, 0.0]).item() == pytest.approx(-0.13125)  # first batch: b = 0.5
    # second batch u = (1, 1): b = previous average 0.5, then average -> 0.75
    assert m.loss(state, [], [1.0, 1.0]).item() == pytest.approx(-(-0.8 * 0.5 - 1.325 * 0.5) / 2)
    assert m._ma == pytest.approx(0.75)
    assert m.state_dict()["baseline_ma"] == pytest.approx(0.75)


def test_gradients_reach_gru_and_mlp_only() -> None:
    m = _method()
    state, _, _ = _episode(m, ANSWERS * 3, train=True, seed=5)
    named = dict(m.net.named_parameters())
    assert all(k.startswith(("gru.", "mlp.")) for k in named)
    assert {id(p) for p in m.parameters()} == {id(p) for p in named.values()}
    loss = m.loss(state, [], [1.0, 0.0, 1.0] * 3)
    loss.backward()
    for k, p in named.items():
        assert p.grad is not None and p.grad.abs().sum().item() > 0, k
    assert not state["h"].requires_grad or state["h"].grad_fn is not None  # a function of the params
    assert not any(isinstance(v, torch.Tensor) for v in state["credits"].values())  # detached records


def test_inference_builds_no_graph() -> None:
    m = _method()
    state, _, _ = _episode(m, ANSWERS, train=False)
    assert not state["h"].requires_grad
    with pytest.raises(RuntimeError, match="train=True"):
        m.loss(state, [], [1.0] * 3)


def test_rounds_must_come_in_order() -> None:
    m = _method()
    hist = _history(ANSWERS, 3)
    state = m.begin(_questions(3), train=False, rng=np.random.default_rng(0))
    with pytest.raises(RuntimeError, match="in order"):
        m.act(state, 3, hist)
    with pytest.raises(ValueError, match="needs outputs of round"):
        m.act(state, 2, [[] for _ in hist])


# -- Alg. 4 wiring, budgets, ablations -------------------------------------------------------------
def test_mask_and_budgets_are_passed_through() -> None:
    mask = np.ones((4, 4), dtype=int)
    mask[:, 3] = 0
    m = _method(ctx_kw={"mask": mask, "in_budget": 1, "out_budget": 1}, epsilon=0.0)
    _, graphs, _ = _episode(m, ANSWERS * 4, train=True, seed=2)
    for rnd in graphs:
        for g in rnd:
            assert all(j != 3 for _, j in g.edges)
            assert g.edges == credit_ranked_dag(
                g.credits, [int(i in g.participants) for i in range(4)], mask=mask, out_budget=1, in_budget=1
            )


def test_ablation_no_ranking_uses_fixed_order() -> None:
    m = _method(ablation="no_ranking")
    _, graphs, _ = _episode(m, ANSWERS * 4, train=True, seed=2)
    for rnd in graphs:
        for g in rnd:
            part = [int(i in g.participants) for i in range(4)]
            assert g.edges == credit_ranked_dag(g.credits, part, rank=False)
            assert all(i < j for i, j in g.edges)  # fixed order, no mask: forward edges only


def test_ablation_no_removal_keeps_everyone_at_inference() -> None:
    m = _method(ablation="no_removal")
    state, graphs, decisions = _episode(m, ANSWERS, train=False)
    for rnd in graphs:
        for g in rnd:
            assert g.participants == [0, 1, 2, 3]
            assert g.edges == credit_ranked_dag(g.credits, [1, 1, 1, 1])  # credits still order the DAG
    for q, d in enumerate(decisions):
        assert d.voters == [0, 1, 2, 3]
        assert d.weights == pytest.approx(decision_weights(state["credits"][4][q], [0, 1, 2, 3]))
    # training is unchanged (removal applied, so the credits learn): log-probs exist
    state, _, _ = _episode(m, ANSWERS, train=True)
    assert set(state["logp"]) == {2, 3, 4}


def test_ablation_no_credits_uses_oracle_plans() -> None:
    m = _method(ablation="no_credits")
    plans = [
        AdversaryPlan(adversaries=(1, 3), onsets={1: 3, 3: 2}, target="C"),
        AdversaryPlan(adversaries=(), onsets={}, target=None),
        AdversaryPlan(adversaries=(0, 1, 2, 3), onsets={0: 2, 1: 2, 2: 2, 3: 2}, target="B"),
    ]
    hist = _history(ANSWERS, 3)
    state = m.begin(_questions(3), train=True, rng=np.random.default_rng(0), plans=plans)
    g2, g3 = m.act(state, 2, hist), m.act(state, 3, hist)
    assert [g.participants for g in g2] == [[0, 1, 2], [0, 1, 2, 3], []]  # agent 3 adversarial from round 2
    assert [g.participants for g in g3] == [[0, 2], [0, 1, 2, 3], []]  # agent 1 from round 3
    assert g3[0].credits == [1.0, 0.0, 1.0, 0.0] and g3[0].edges == [(0, 2)]
    d = m.decide(state, hist)
    assert d[0].voters == [0, 2] and d[0].weights == pytest.approx([0.5, 0.5])
    assert d[2].voters == [0, 1, 2, 3]  # nobody reliable: documented fallback to all
    assert m.loss(state, [], [1.0, 0.0, 0.0]) is None
    # plans can also be set by the executor after begin; without them it fails clearly
    state = m.begin(_questions(3), train=False, rng=np.random.default_rng(0))
    with pytest.raises(RuntimeError, match="plans"):
        m.act(state, 2, hist)
    state["plans"] = plans
    assert m.act(state, 2, hist)[0].participants == [0, 1, 2]


# -- persistence, config ---------------------------------------------------------------------------
def test_config_validation_and_defaults() -> None:
    with pytest.raises(ValueError, match="unknown todycomm parameters"):
        _method(epsilonn=0.2)
    with pytest.raises(ValueError, match="ablation"):
        _method(ablation="no_everything")
    with pytest.raises(ValueError, match="baseline"):
        _method(baseline="critic")
    m = TodyComm(_ctx(), name="todycomm", lr=None)  # keys the trainer reads are accepted
    assert m.emb_dim == 384 and m.name == "todycomm" and m.trainable and m.needs_embeddings
    assert TodyComm(_ctx(extra={"embed_dim": 16})).emb_dim == 16  # the run's embedder wins
    m.train_mode(False)
    assert not m.net.training


def test_shipped_config_is_the_schema() -> None:
    from tomacs.config import compose
    from tomacs.methods.todycomm import TodyCommSettings

    cfg = compose(["method=todycomm"])
    assert dict(cfg.method) == TodyCommSettings().params()
    assert cfg.method.name == "todycomm" and cfg.method.lr is None


# -- learning smoke --------------------------------------------------------------------------------
def test_reinforce_learns_to_exclude_a_bad_agent() -> None:
    """Reward 1 iff the 'bad' agent 3 takes part in no round and does not vote. A few hundred
    REINFORCE steps at the paper's learning rate (5e-4, Adam) must push its credit down until
    inference drops it everywhere."""
    m = _method(n=4, rounds=2)
    opt = torch.optim.Adam(m.parameters(), lr=5e-4)
    answers = [["A", "A", "B", "C"], ["B", "A", "A", "C"]] * 8
    bad = 3

    def bad_credit() -> float:
        state, _, _ = _episode(m, answers, train=False)
        return float(state["credits"][3][:, bad].mean())

    before = bad_credit()
    rng_seed = 0
    for _ in range(300):
        rng_seed += 1
        m.train_mode(True)
        state, graphs, decisions = _episode(m, answers, train=True, seed=rng_seed)
        u = [
            float(bad not in graphs[0][q].participants and bad not in decisions[q].voters)
            for q in range(len(answers))
        ]
        loss = m.loss(state, [], u)
        opt.zero_grad()
        loss.backward()
        opt.step()
    m.train_mode(False)
    after = bad_credit()
    assert after < 0.1 and before > 0.4
    state, graphs, decisions = _episode(m, answers, train=False)
    assert all(bad not in g.participants for g in graphs[0]) and all(bad not in d.voters for d in decisions)
