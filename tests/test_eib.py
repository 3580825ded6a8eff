"""EIB-Learner (Eq. 7-11, Alg. 1) against hand computations.

The DAG sampler `sequential_dag` is tested in test_graphs.py; what every learned method must keep
(DAGs within budget, exact log-probs, checkpoints, a real job) in test_method_contract.py.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from test_graphs import replay_log_lik

from tomacs.config import compose
from tomacs.methods.base import MethodContext
from tomacs.methods.eib import EIBLearner, EIBSettings
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


# -- the shared DAG sampler ----------------------------------------------------------------------
# -- the method ----------------------------------------------------------------------------------
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


def test_shipped_config_is_the_schema() -> None:
    cfg = compose(["method=eib"])
    assert dict(cfg.method) == EIBSettings().params()
    assert cfg.method.lr is None
