"""EIB-Learner (Eq. 7-11, Alg. 1) against hand computations, plus one end-to-end run.

The DAG sampler `sequential_dag` is shared with CARD, so its hand-checked cases live here.
"""

from __future__ import annotations

import io
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from tomacs.config import compose
from tomacs.graphs import constrain, creates_cycle, has_cycle
from tomacs.methods.base import MethodContext
from tomacs.methods.eib import DEFAULTS, EIBLearner, decisions_log_prob, sequential_dag
from tomacs.run import run_job
from tomacs.types import Question

ROLES = ["Knowledgeable Expert", "Critic", "Mathematician", "Psychologist", "Historian", "Doctor"]


def _ctx(n: int = 6, seed: int = 0, **kw) -> MethodContext:
    return MethodContext(n_agents=n, rounds=3, roles=ROLES[:n], seed=seed, **kw)


def _method(n: int = 6, seed: int = 0, ctx_kw: dict | None = None, **params) -> EIBLearner:
    return EIBLearner(_ctx(n, seed, **(ctx_kw or {})), embedder="hashing", **params)


def _questions(k: int, start: int = 0) -> list[Question]:
    return [
        Question(
            id=f"q{i}",
            text=f"Which statement about topic {i} is correct?",
            options=("alpha", "beta", "gamma", "delta"),
            answer="A",
            benchmark="t",
            kind="mc",
        )
        for i in range(start, start + k)
    ]


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


# -- the shared DAG sampler ----------------------------------------------------------------------
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
        assert not has_cycle(list(range(n)), edges)
        assert constrain(edges, mask, in_b, out_b) == edges
        assert [(i, j) for i, j, k in dec if k] == edges
        assert replay_log_lik(p, edges, mask, in_b, out_b) == pytest.approx(
            float(decisions_log_prob(torch.tensor(p), dec)), abs=1e-9
        )


# -- the method ----------------------------------------------------------------------------------
def test_sampled_graphs_are_dags_and_log_prob_is_exact() -> None:
    m = _method()
    qs = _questions(5)
    state = m.begin(qs, True, np.random.default_rng(0))
    assert state["logp"].shape == (5,)
    for k, edges in enumerate(state["edges"]):
        assert not has_cycle(list(range(6)), edges)
        lp = float(state["logp"][k].detach())
        assert lp == pytest.approx(replay_log_lik(state["probs"][k], edges), abs=1e-4)
    graphs = [m.act(state, t, [[] for _ in qs]) for t in (2, 3)]
    assert [g.edges for g in graphs[0]] == [g.edges for g in graphs[1]] == state["edges"]


def test_mask_and_budgets_are_respected() -> None:
    mask = np.ones((6, 6), dtype=int)
    mask[0, :] = 0
    m = _method(ctx_kw={"mask": mask, "in_budget": 1, "out_budget": 2})
    state = m.begin(_questions(6), True, np.random.default_rng(0))
    for k, edges in enumerate(state["edges"]):
        assert all(i != 0 for i, _ in edges)
        assert constrain(edges, mask, 1, 2) == edges
        lp = float(state["logp"][k].detach())
        assert lp == pytest.approx(replay_log_lik(state["probs"][k], edges, mask, 1, 2), abs=1e-4)


def test_fusion_weights_sum_to_one_and_mix_the_views() -> None:
    m = _method()
    with torch.no_grad():
        out = m.forward(_questions(4))
    alpha = out["alpha"]
    assert alpha.shape == (4, 2)
    assert torch.allclose(alpha.sum(-1), torch.ones(4))
    assert bool((alpha > 0).all())
    mix = alpha[:, 0, None, None] * out["dense"] + alpha[:, 1, None, None] * out["sparse"]
    assert torch.allclose(out["probs"], mix)
    # Eq. 9: the inner-product decoder is symmetric
    assert torch.allclose(out["dense"], out["dense"].transpose(1, 2))


def test_ablations_pick_one_view() -> None:
    qs = _questions(2)
    full = _method().forward(qs)
    assert torch.allclose(_method(ablation="no_dense").forward(qs)["probs"], full["sparse"])
    assert torch.allclose(_method(ablation="no_sparse").forward(qs)["probs"], full["dense"])


def test_reinforce_step_moves_probability_toward_rewarded_sample() -> None:
    m = _method()
    q = _questions(1)
    state = m.begin(q, True, np.random.default_rng(0))
    edges = state["edges"][0]
    old_ll = replay_log_lik(state["probs"][0], edges)
    opt = torch.optim.SGD(m.parameters(), lr=0.05)
    opt.zero_grad()
    m.loss(state, [], [1.0]).backward()
    opt.step()
    with torch.no_grad():
        new_p = m.forward(q)["probs"][0].numpy().astype(np.float64)
    assert replay_log_lik(new_p, edges) > old_ll + 1e-3
    kept = [new_p[e] - state["probs"][0][e] for e in edges]
    assert np.mean(kept) > 0
    # an unrewarded sample (u = 0, no baseline) gives no gradient at all
    state0 = m.begin(q, True, np.random.default_rng(0))
    opt.zero_grad()
    m.loss(state0, [], [0.0]).backward()
    assert all(float(p.grad.abs().sum()) == 0.0 for p in m.parameters())


def test_every_parameter_gets_a_gradient() -> None:
    m = _method()
    state = m.begin(_questions(4), True, np.random.default_rng(0))
    m.loss(state, [], [1.0, 0.0, 1.0, 1.0]).backward()
    for name, p in m.net.named_parameters():
        assert p.grad is not None and float(p.grad.abs().sum()) > 0, name


def test_state_dict_round_trip_gives_identical_graphs() -> None:
    a = _method(seed=0)
    state = a.begin(_questions(4), True, np.random.default_rng(0))
    opt = torch.optim.Adam(a.parameters(), lr=0.01)
    a.loss(state, [], [1.0, 0.0, 1.0, 0.0]).backward()
    opt.step()
    buf = io.BytesIO()
    torch.save(a.state_dict(), buf)
    b = _method(seed=0)  # same run seed (it keys the draws); different weights, set below
    with torch.no_grad():
        for prm in b.parameters():
            prm.add_(0.3 * torch.randn_like(prm))
    qs = _questions(6)
    assert not np.allclose(a.begin(qs, False, None)["probs"], b.begin(qs, False, None)["probs"])
    buf.seek(0)
    b.load_state_dict(torch.load(buf, weights_only=False))
    sa, sb = a.begin(qs, False, None), b.begin(qs, False, None)
    assert sa["edges"] == sb["edges"]
    np.testing.assert_allclose(sa["probs"], sb["probs"])
    with pytest.raises(ValueError, match="does not fit"):
        _method(hidden_size=8).load_state_dict(a.state_dict())


def test_eval_graphs_do_not_depend_on_batching_and_training_resamples() -> None:
    m = _method()
    qs = _questions(4)
    whole = m.begin(qs, False, None)["edges"]
    parts = m.begin(qs[:2], False, None)["edges"] + m.begin(qs[2:], False, None)["edges"]
    assert whole == parts
    assert m.begin(qs, False, None)["edges"] == whole  # evaluation is reproducible
    t1 = m.begin(qs, True, None)["edges"]
    t2 = m.begin(qs, True, None)["edges"]
    assert t1 != t2  # a later epoch draws a fresh sample for the same questions


def test_to_device_and_threshold_inference() -> None:
    m = _method(inference="threshold", threshold=0.5).to("cpu")
    state = m.begin(_questions(2), False, None)
    for k, edges in enumerate(state["edges"]):
        assert all(state["probs"][k][e] > 0.5 for e in edges)
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="CUDA"):
            m.to("cuda")


def test_unknown_parameter_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown eib parameters"):
        _method(hiddn=3)


def test_yaml_matches_code_defaults() -> None:
    cfg = compose(["method=eib"])
    keys = {k: v for k, v in cfg.method.items() if k not in ("name", "lr")}
    assert keys == DEFAULTS
    assert cfg.method.lr is None


def test_end_to_end_train_and_evaluate(tmp_path: Path) -> None:
    cfg = compose(
        [
            "method=eib",
            "method.embedder=hashing",
            "train.size=8",
            "train.val_size=0",
            "train.batch_size=4",
            "train.epochs=1",
            "eval.size=4",
            "attack=gt50",
        ]
    )
    res = run_job(cfg, "train", tmp_path)
    assert res["method"] == "eib"
    assert res["train"]["iterations"] == 2
    assert res["test_questions"] == 4
    assert 0.0 <= res["metrics"]["acc"] <= 1.0
    assert (tmp_path / "checkpoint.pt").is_file()
    assert (tmp_path / "results.json").is_file()
