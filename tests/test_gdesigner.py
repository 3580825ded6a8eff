"""G-Designer: VGAE terms by hand, DAG repair, REINFORCE direction, checkpoints."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from tomacs.agents.roles import role_profile
from tomacs.graphs import find_cycle
from tomacs.methods.base import MethodContext
from tomacs.methods.gdesigner import GDesigner, agent_text, anchor_adjacency, anchor_loss, kl_normal
from tomacs.methods.learned import bernoulli_matrix_log_prob
from tomacs.types import Question

ROLES = ["Knowledgeable Expert", "Critic", "Mathematician", "Psychologist", "Historian"]


def ctx(n: int = 4, rounds: int = 3, seed: int = 0, **kw: object) -> MethodContext:
    c = MethodContext(n_agents=n, rounds=rounds, roles=ROLES[:n], seed=seed, **kw)  # type: ignore[arg-type]
    c.extra["conditions"] = [{"backbone": "sim"} for _ in range(n)]
    return c


def qs(k: int) -> list[Question]:
    return [
        Question(f"q{i}", f"Which number is {i} times two?", ("1", "2", "3", "4"), "B", "synthetic", "mc")
        for i in range(k)
    ]


def method(n: int = 4, rounds: int = 3, c: MethodContext | None = None, **params: object) -> GDesigner:
    return GDesigner(c or ctx(n, rounds), embedder="hashing", **params)


def hand_log_lik(probs: np.ndarray, chosen: np.ndarray) -> float:
    n = probs.shape[0]
    return sum(
        math.log(probs[i, j]) if chosen[i, j] else math.log(1.0 - probs[i, j])
        for i in range(n)
        for j in range(n)
        if i != j
    )


def test_kl_anchor_and_sparsity_terms_by_hand() -> None:
    mu = torch.tensor([[1.0, 0.0]])
    logsigma = torch.tensor([[0.0, math.log(2.0)]])
    # 1/2 [(1 + 1 - 1 - 0) + (0 + 4 - 1 - 2 log 2)] = 2 - log 2
    assert float(kl_normal(mu, logsigma)) == pytest.approx(2.0 - math.log(2.0), abs=1e-6)
    assert float(kl_normal(torch.zeros(3, 5), torch.zeros(3, 5))) == pytest.approx(0.0, abs=1e-7)
    p = torch.tensor([[0.0, 0.5], [0.25, 0.0]])
    mask = torch.tensor([[0.0, 1.0], [1.0, 0.0]])
    chain2 = torch.as_tensor(anchor_adjacency("chain", 2))
    assert float(anchor_loss(p, chain2, mask)) == pytest.approx(0.5 * (0.5**2 + 0.25**2), abs=1e-7)
    # the method's regularisers on a hand-made decoder output (N = 2): logits -> p = [[., .5], [.25, .]]
    m = method(n=2, rounds=2)
    out = {
        "logits": torch.tensor([[[3.0, 0.0], [math.log(1 / 3), -2.0]]]),
        "mu": mu.unsqueeze(0),
        "logsigma": logsigma.unsqueeze(0),
    }
    reg = m.regularisers(out)
    assert float(reg["anchor"]) == pytest.approx(0.15625, abs=1e-6)
    assert float(reg["sparse"]) == pytest.approx(0.75, abs=1e-6)  # singular values 0.5 and 0.25
    assert float(reg["kl"]) == pytest.approx(2.0 - math.log(2.0), abs=1e-6)


def test_anchor_topologies_and_node_text() -> None:
    assert anchor_adjacency("chain", 3).tolist() == [[0, 1, 0], [0, 0, 1], [0, 0, 0]]
    assert anchor_adjacency("star", 3).tolist() == [[0, 1, 1], [0, 0, 0], [0, 0, 0]]
    assert anchor_adjacency("none", 2).sum() == 0
    with pytest.raises(ValueError, match="anchor"):
        anchor_adjacency("ring", 3)
    text = agent_text("Critic", "gpt-4.1-nano")
    assert text.startswith(role_profile("Critic")) and "gpt-4.1-nano" in text and "Tools: none" in text
    m = method(n=3)
    x = m.agent_features()
    assert x.shape == (3, 64) and not np.allclose(x[0], x[1])  # distinct roles, distinct features
    # task node linked both ways to every agent, plus the directed chain anchor
    assert sorted(m._edge_pairs) == sorted([(0, 1), (1, 2), (0, 3), (1, 3), (2, 3), (3, 0), (3, 1), (3, 2)])


def test_graphs_are_dags_one_per_query_and_respect_constraints() -> None:
    mask = np.ones((5, 5))
    mask[1, 0] = 0
    m = method(c=ctx(5, 4, mask=mask, out_budget=2))
    with torch.no_grad():  # push probabilities up so that cycles are likely in the raw sample
        m.net.decoder[-1].bias.fill_(2.0)
    state = m.begin(qs(6), True, np.random.default_rng(0))
    g2 = m.act(state, 2, [[] for _ in range(6)])
    g4 = m.act(state, 4, [[] for _ in range(6)])
    raw_cyclic = 0
    for k, (a, b) in enumerate(zip(g2, g4, strict=True)):
        assert a.edges == b.edges  # the same graph in every round
        assert find_cycle(a.nodes, a.edges) is None and (1, 0) not in a.edges
        assert max(np.bincount([i for i, _ in a.edges] or [0], minlength=5)) <= 2
        raw = [(i, j) for i in range(5) for j in range(5) if state["chosen"][k][i, j]]
        raw_cyclic += find_cycle(list(range(5)), raw) is not None
    assert raw_cyclic > 0  # the repair had real work to do
    for g in m.act(m.begin(qs(3), False, np.random.default_rng(0)), 2, [[]] * 3):
        assert find_cycle(g.nodes, g.edges) is None


def test_reinforce_step_moves_probability_toward_the_rewarded_sample() -> None:
    m = method(n=4, baseline="none", anchor_weight=0.0, sparse_weight=0.0, kl_weight=0.0)
    q = qs(1)
    state = m.begin(q, True, np.random.default_rng(0))
    chosen, noise = state["chosen"][:1], state["noise"]
    mask = torch.as_tensor(m.candidates)
    before = float(state["logp"][0].detach())
    opt = torch.optim.Adam(m.parameters(), lr=1e-2)
    for _ in range(5):
        opt.zero_grad()
        m.loss(state, [None], [1.0]).backward()
        opt.step()
        # the same query, reparameterisation noise and sample, scored under the new parameters
        out = m.forward(q, noise)
        state = {**state, "out": out, "logp": bernoulli_matrix_log_prob(out["logits"], chosen, mask)}
    after = float(state["logp"][0].detach())
    assert after > before + 0.1, (before, after)
    p_before, p_after = state["probs"][0], torch.sigmoid(out["logits"][0]).detach().numpy()
    off = ~np.eye(4, dtype=bool)
    a = chosen[0]
    # on average the sampled edges gained probability and the unsampled ones lost it
    assert (p_after - p_before)[a & off].mean() > 0 > (p_after - p_before)[~a & off].mean()


def test_every_parameter_gets_a_gradient() -> None:
    m = method(n=4, baseline="none")
    state = m.begin(qs(3), True, np.random.default_rng(0))
    loss = m.loss(state, [None] * 3, [1.0, 0.0, 1.0])
    assert loss.requires_grad
    loss.backward()
    names = dict(m.net.named_parameters())
    assert {n.split(".")[0] for n in names} == {"gcn1", "gcn_mu", "gcn_logsigma", "decoder"}
    for name, p in names.items():
        assert p.grad is not None and float(p.grad.abs().sum()) > 0, name
    assert len(m.parameters()) == len(names)


def test_batch_independence_state_dict_and_inference_modes() -> None:
    questions = qs(3)
    m = method(n=4)
    sd = m.state_dict()
    together = m.begin(questions, True, np.random.default_rng(0))
    other = GDesigner(ctx(4, 3, seed=7), embedder="hashing")
    with pytest.raises(AssertionError):  # a different seed gives different initial weights
        torch.testing.assert_close(other.net.decoder[0].weight, m.net.decoder[0].weight)
    m2 = method(n=4)
    with torch.no_grad():
        for p in m2.net.parameters():
            p.add_(1.0)
    m2.load_state_dict(sd)
    alone = m2.begin([questions[2]], True, np.random.default_rng(1))
    assert together["edges"][2] == alone["edges"][0]
    torch.testing.assert_close(together["logp"][2], alone["logp"][0])
    # evaluation graphs are identical after a round trip, in both inference modes
    for mode in ("sample", "threshold"):
        a = method(n=4, inference=mode)
        with torch.no_grad():
            for p in a.net.parameters():
                p.add_(0.3 * torch.randn_like(p))
        b = method(n=4, inference=mode)  # same run seed, other weights until loaded
        with torch.no_grad():
            for p in b.net.parameters():
                p.sub_(0.5)
        b.load_state_dict(a.state_dict())
        a.train_mode(False)
        b.train_mode(False)
        ea = a.begin(questions, False, np.random.default_rng(0))["edges"]
        eb = b.begin(questions, False, np.random.default_rng(9))["edges"]
        assert ea == eb
        if mode == "threshold":
            pr = a.begin(questions, False, np.random.default_rng(0))["probs"]
            for k in range(3):
                assert {e for e in ea[k]} <= {
                    (i, j) for i in range(4) for j in range(4) if pr[k, i, j] >= 0.5
                }
    with pytest.raises(ValueError, match="does not fit"):
        GDesigner(ctx(4, 3), embedder="hashing", latent_size=8).load_state_dict(sd)


def test_to_device_and_config_validation() -> None:
    m = method().to("cpu")
    assert next(m.net.parameters()).device.type == "cpu"
    with pytest.raises(ValueError, match="unknown gdesigner"):
        method(bogus=1)
    with pytest.raises(ValueError, match="inference"):
        method(inference="argmax")
