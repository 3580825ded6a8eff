"""The contract every registered method keeps, checked once for all of them (issue 16).

Every method: each round graph is a DAG over the run's agents that respects the run's edge mask and
node-wise degree budgets (Table 3's b1: at most one message in and one out per agent per round,
spatial and temporal messages together), and the same seed gives the same graphs. Every learned
method also: its checkpoint round-trips (same weights, same graphs; a checkpoint of another
architecture is a one-line error), the log-probability it trains on equals a hand computation from
what it sampled (a supervised detector: its loss equals the hand BCE of its logits and labels), and
a real job (`run_job` on the simulator) trains, checkpoints and evaluates.

A new method is covered by registering it (`tomacs.methods.registry`); a learned one also adds its
hand log-probability to `HAND_LOG_PROB` (a supervised one: its tiny-data overrides to `JOB_EXTRA`;
the tests fail until it does).
"""

from __future__ import annotations

import io
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from test_graphs import replay_log_lik
from test_todycomm import _one_thread  # noqa: F401 (autouse fixture: one torch thread)

from tomacs.config import compose, to_container
from tomacs.embedding.embedders import HashingEmbedder
from tomacs.graphs import find_cycle
from tomacs.launch.run import run_job
from tomacs.methods.base import Method, MethodContext
from tomacs.methods.gsafeguard import detector_pairs, graph_sample
from tomacs.methods.learned import LearnedMethod
from tomacs.methods.registry import METHODS, build_method, is_trainable, method_names
from tomacs.types import AgentOutput, Question

N, T = 5, 3
ROLES = ["Knowledgeable Expert", "Critic", "Mathematician", "Psychologist", "Historian"]
LEARNED = [m for m in method_names() if is_trainable(m)]
# how a method learns is its class's `trainer` ("module:attr" of a tomacs.training.core.Trainer), which
# tomacs.launch.run reads to pick the trainer: REINFORCE unless the method names its own (a supervised one)
REINFORCE = [m for m in LEARNED if METHODS.get(m).trainer == LearnedMethod.trainer]
SUPERVISED = [m for m in LEARNED if m not in REINFORCE]
# The Tables 7-8 protocol: its receiver reads all N-1 senders by definition, so no budget applies.
BUDGET_EXEMPT = {"receiver"}
MASK = np.ones((N, N), dtype=int)
MASK[0, 1] = MASK[3, 2] = 0  # two forbidden pairs every method must avoid
EMB = HashingEmbedder(dim=64)


def _ctx(seed: int = 0, budget: int | None = 1, mask: np.ndarray | None = MASK) -> MethodContext:
    ctx = MethodContext(
        n_agents=N, rounds=T, roles=ROLES, seed=seed, in_budget=budget, out_budget=budget, mask=mask
    )
    ctx.extra.update(embedder="hashing", embed_dim=64, conditions=[{"backbone": "sim"} for _ in range(N)])
    return ctx


def _build(name: str, seed: int = 0, **kw: Any) -> Method:
    """The method as a run builds it: its shipped config (conf/method/<name>.yaml), hashing embedder."""
    params = to_container(compose([f"method={name}"]).method)
    params.pop("name")
    return build_method(name, _ctx(seed, **kw), params)


def _questions(k: int = 3) -> list[Question]:
    return [
        Question(f"q{i}", f"Which statement about topic {i} holds?", ("w", "x", "y", "z"), "A", "t", "mc")
        for i in range(k)
    ]


def _history(k: int) -> list[list[list[AgentOutput]]]:
    """history[q][t-1][i]: agent i answers a fixed letter with a fixed text in every round."""
    letters = "ABCDA"
    texts = [f"thinking about option {a} step by step, the answer is {a}" for a in letters]
    embs = EMB.embed(texts)
    return [
        [
            [
                AgentOutput(i, t, texts[i], letters[(i + q) % 5], True, "honest", embedding=embs[i].tolist())
                for i in range(N)
            ]
            for t in range(1, T + 1)
        ]
        for q in range(k)
    ]


def _episode(m: Method, train: bool, k: int = 3) -> tuple[Any, list[list[Any]], list[Any]]:
    qs, hist = _questions(k), _history(k)
    state = m.begin(qs, train, np.random.default_rng(0))
    graphs = [m.act(state, t, [h[: t - 1] for h in hist]) for t in range(2, T + 1)]
    return state, graphs, m.decide(state, hist)


def _as_lists(graphs: list[list[Any]]) -> list[Any]:
    return [[(sorted(g.nodes), list(g.edges), list(g.temporal_edges)) for g in rnd] for rnd in graphs]


# -- every method ----------------------------------------------------------------------------------
EPISODES = [(m, False) for m in method_names()] + [(m, True) for m in LEARNED]


@pytest.mark.parametrize(("name", "train"), EPISODES)
def test_round_graphs_are_dags_within_mask_and_budget(name: str, train: bool) -> None:
    exempt = name in BUDGET_EXEMPT
    m = _build(name, budget=None if exempt else 1, mask=None if exempt else MASK)
    _, graphs, decisions = _episode(m, train)
    for rnd in graphs:
        assert len(rnd) == 3  # one graph per question of the batch
        for g in rnd:
            edges = [tuple(e) for e in g.edges]
            every = edges + [tuple(e) for e in g.temporal_edges]
            assert all(0 <= i < N and 0 <= j < N and i != j for i, j in every), every
            assert find_cycle(list(range(N)), edges) is None, edges
            if exempt:
                continue
            assert all(MASK[i, j] for i, j in every), every
            for node in range(N):
                assert sum(i == node for i, _ in every) <= 1, (node, every)
                assert sum(j == node for _, j in every) <= 1, (node, every)
    for d in decisions:
        assert d.voters and all(0 <= v < N for v in d.voters)
        assert d.weights is None or (len(d.weights) == len(d.voters) and math.isclose(sum(d.weights), 1.0))


@pytest.mark.parametrize("name", method_names())
def test_same_seed_same_graphs(name: str) -> None:
    a, b = _build(name), _build(name)
    assert _as_lists(_episode(a, False)[1]) == _as_lists(_episode(b, False)[1])
    assert _as_lists(_episode(a, False)[1]) == _as_lists(_episode(b, False)[1])  # evaluation repeats
    if is_trainable(name):
        assert _as_lists(_episode(a, True)[1]) == _as_lists(_episode(b, True)[1])


# -- learned methods -------------------------------------------------------------------------------
def _labelled(k: int = 3) -> list[Any]:
    """Labelled detector samples of the fixed history (agent i adversarial iff i is odd)."""
    seq = np.asarray([[o.embedding for o in rnd] for rnd in _history(1)[0]], dtype=np.float32).transpose(
        1, 0, 2
    )
    return [graph_sample(seq, detector_pairs(N, MASK), [i % 2 for i in range(N)]) for _ in range(k)]


def _train_step(m: Method) -> None:
    opt = torch.optim.Adam(m.parameters(), lr=0.05)
    if m.trainer != LearnedMethod.trainer:  # a supervised detector
        loss = m.labelled_loss(_labelled())[0]  # type: ignore[attr-defined]
    else:
        state, _, _ = _episode(m, True)
        loss = m.loss(state, [], [1.0, 0.0, 1.0])
    loss.backward()
    opt.step()
    m.on_iteration_end(0)


@pytest.mark.parametrize("name", LEARNED)
def test_checkpoint_round_trip(name: str) -> None:
    a = _build(name)
    _train_step(a)
    buf = io.BytesIO()
    torch.save(a.state_dict(), buf)
    buf.seek(0)
    b = _build(name, seed=1)  # other initial weights: everything must come from the checkpoint
    b.load_state_dict(torch.load(buf, weights_only=False))
    sa, sb = a.state_dict(), b.state_dict()
    assert sa["net"].keys() == sb["net"].keys()
    for k in sa["net"]:
        torch.testing.assert_close(sa["net"][k], sb["net"][k], rtol=0, atol=0)
    b.ctx.seed = a.ctx.seed  # the run seed keys the draws
    assert _as_lists(_episode(a, False)[1]) == _as_lists(_episode(b, False)[1])
    # training visits come back too: the next training draw of a question is the same
    assert _as_lists(_episode(a, True)[1]) == _as_lists(_episode(b, True)[1])


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU error")
@pytest.mark.parametrize("name", LEARNED)
def test_cuda_without_gpu_is_a_clear_error(name: str) -> None:
    with pytest.raises(RuntimeError, match="no CUDA GPU"):
        _build(name).to("cuda")


@pytest.mark.parametrize("name", LEARNED)
def test_checkpoint_of_another_architecture_is_a_one_line_error(name: str) -> None:
    a = _build(name)
    params = to_container(compose([f"method={name}"]).method)
    params.pop("name")
    if "hidden_size" in params:
        b = build_method(name, _ctx(), {**params, "hidden_size": 8})
    else:  # AgentPrune's architecture is its N x N logits
        other = MethodContext(n_agents=N - 1, rounds=T, roles=ROLES[:-1], seed=0)
        b = build_method(name, other, params)
    with pytest.raises(ValueError) as err:
        b.load_state_dict(a.state_dict())
    msg = str(err.value)
    assert "does not fit" in msg and "\n" not in msg, msg


def _bernoulli(p: np.ndarray, a: np.ndarray) -> float:
    return float(np.sum(np.where(a > 0, np.log(p), np.log1p(-p))))


def _hand_todycomm(m: Any, state: dict[str, Any]) -> list[tuple[float, float]]:
    # Alg. 2: the post-flip actions under Bernoulli(c), c the round's credits
    return [
        (float(state["logp"][t][q].detach()), _bernoulli(state["credits"][t][q], state["actions"][t][q]))
        for t in range(2, T + 2)
        for q in range(3)
    ]


def _hand_agentprune(m: Any, state: dict[str, Any]) -> list[tuple[float, float]]:
    # every candidate (unpruned, unmasked) edge of every kind is one Bernoulli draw per round
    out = []
    for t in range(2, T + 1):
        for q in range(3):
            want = 0.0
            for kind, a in state["samples"][t].items():
                cand = m.mask(kind) > 0
                want += _bernoulli(m.probs(kind)[cand], a[q][cand])
            out.append((float(state["logp"][t][q].detach()), want))
    return out


def _hand_gdesigner(m: Any, state: dict[str, Any]) -> list[tuple[float, float]]:
    cand = m.candidates > 0
    return [
        (float(state["logp"][q].detach()), _bernoulli(state["probs"][q][cand], state["chosen"][q][cand]))
        for q in range(3)
    ]


def _hand_sequential(m: Any, state: dict[str, Any]) -> list[tuple[float, float]]:
    # EIB-Learner and CARD: tomacs.graphs.sequential_dag's process, replayed by hand
    budget = (m.ctx.mask, m.ctx.in_budget, m.ctx.out_budget)
    return [
        (float(state["logp"][q].detach()), replay_log_lik(state["probs"][q], state["edges"][q], *budget))
        for q in range(3)
    ]


HAND_LOG_PROB = {
    "todycomm": _hand_todycomm,
    "agentprune": _hand_agentprune,
    "gdesigner": _hand_gdesigner,
    "eib": _hand_sequential,
    "card": _hand_sequential,
}


@pytest.mark.parametrize("name", REINFORCE)
def test_log_prob_equals_the_hand_computation(name: str) -> None:
    assert name in HAND_LOG_PROB, f"learned method {name} has no hand log-probability in this test"
    m = _build(name)
    state, _, _ = _episode(m, True)
    pairs = HAND_LOG_PROB[name](m, state)
    assert pairs
    for got, want in pairs:
        assert got == pytest.approx(want, abs=1e-4)


@pytest.mark.parametrize("name", SUPERVISED)
def test_supervised_loss_equals_the_hand_bce(name: str) -> None:
    m = _build(name)
    samples = _labelled()
    loss, logits, y = m.labelled_loss(samples)  # type: ignore[attr-defined]
    z = logits.detach().numpy().astype(np.float64)
    p = 1.0 / (1.0 + np.exp(-z))
    labels = np.asarray([i % 2 for i in range(N)] * 3, dtype=np.float64)
    assert np.array_equal(y.numpy(), labels)  # agent i's label at node i of every sample
    want = -np.mean(labels * np.log(p) + (1 - labels) * np.log(1 - p))
    assert float(loss.detach()) == pytest.approx(want, abs=1e-5)


# Tiny labelled-data settings for a supervised method's real job (its conversations are generated
# by the job itself): 2 conversations, one to train on and one held out, one epoch.
JOB_EXTRA = {
    "gsafeguard": [
        "method.samples=1",
        "method.densities=[0.5]",
        "method.counts=[1,2]",
        "method.epochs=1",
        "method.hidden_size=16",
        "method.val_fraction=0.5",
    ]
}


@pytest.mark.parametrize("name", LEARNED)
def test_a_job_trains_checkpoints_and_evaluates_within_budget(name: str, tmp_path: Path) -> None:
    assert name in JOB_EXTRA or name in REINFORCE, f"supervised method {name} has no JOB_EXTRA"
    common = [
        "benchmark=synthetic",
        "embedder=hashing",
        f"method={name}",
        "budget=b1",
        "attack=gt50",
        "eval.size=3",
        "seed=0",
        *JOB_EXTRA.get(name, []),
    ]
    train = ["train.size=4", "train.val_size=0", "train.batch_size=4", "train.epochs=1"]
    res = run_job(compose([*common, *train]), "train", tmp_path / "train")
    assert res["method"] == name and res["train"]["iterations"] == 1
    assert res["config"]["embedder"] == "hashing" and "embedder" not in res["config"]["method"]
    ckpt = tmp_path / "train" / "checkpoint.pt"
    assert ckpt.is_file()
    again = run_job(compose([*common, f"checkpoint={ckpt}"]), "evaluate", tmp_path / "eval")
    assert again["metrics"]["acc"] == res["metrics"]["acc"]
    for line in (tmp_path / "eval" / "episodes.jsonl").read_text().splitlines():
        for g in json.loads(line)["graphs"][1:]:
            every = [tuple(e) for e in g["edges"] + g.get("temporal_edges", [])]
            assert find_cycle(list(range(int(res["agents"]))), [tuple(e) for e in g["edges"]]) is None
            for v in range(int(res["agents"])):
                assert sum(i == v for i, _ in every) <= 1 and sum(j == v for _, j in every) <= 1, every
