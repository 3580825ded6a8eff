"""Issue 12 options of TodyComm: the input normaliser, participation semantics, the tie rule.

Hand-computed cases: the normaliser's statistics against numpy over the same rows, the tie rule on
credits written out by hand, and the graphs of both participation semantics on a fixed batch.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from test_todycomm import ANSWERS, _episode, _method, _one_thread, _questions  # noqa: F401 (autouse fixture)

from tomacs.methods.base import MethodContext
from tomacs.methods.nets import RunningNorm
from tomacs.methods.todycomm import TodyComm, inference_participation


# -- the running normaliser ---------------------------------------------------------------------------
def test_running_norm_statistics_match_numpy_over_all_training_rows() -> None:
    rng = np.random.default_rng(0)
    batches = [rng.normal(3.0, 2.0, size=(k, 4)) for k in (5, 1, 17)]
    for b in batches:
        b[:, 2] = 7.0  # a constant dimension
    norm = RunningNorm(4, clip=5.0)
    for b in batches:
        norm.update(torch.as_tensor(b, dtype=torch.float32))
    rows = np.concatenate(batches)
    assert float(norm.count) == len(rows)
    np.testing.assert_allclose(norm.mean.numpy(), rows.mean(0), rtol=1e-6)
    np.testing.assert_allclose((norm.m2 / norm.count).sqrt().numpy(), rows.std(0), rtol=1e-5, atol=1e-7)
    # forward never updates (whatever the module's mode); standardised output, constant dim -> 0
    norm.train(True)
    x = np.array([[3.0, 5.0, 7.0, 1.0], [100.0, -100.0, 8.0, 3.0]])
    before = norm.state_dict()
    z = norm(torch.as_tensor(x, dtype=torch.float32)).numpy()
    after = norm.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)
    std = rows.std(0)
    expected = (x - rows.mean(0)) / np.where(std > 0, std, 1.0)
    expected[:, 2] = 0.0
    expected = np.clip(expected, -5.0, 5.0)
    np.testing.assert_allclose(z, expected, rtol=1e-4, atol=1e-5)
    assert z[1, 0] == 5.0 and z[1, 1] == -5.0  # clipped


def test_running_norm_is_identity_before_any_statistics() -> None:
    norm = RunningNorm(3, clip=5.0)
    norm.train(False)
    x = torch.tensor([[1.0, 2.0, 3.0]])
    assert torch.equal(norm(x), x)


def test_normaliser_is_saved_and_restored_with_the_checkpoint() -> None:
    a = _method(normalize="running")
    _episode(a, ANSWERS * 2, train=True, seed=1)  # training forward passes fill the statistics
    assert float(a.net.norm.count) > 0
    a.train_mode(False)
    b = TodyComm(MethodContext(4, 3, ["r"] * 4, seed=9), embedder="hashing", emb_dim=16, normalize="running")
    b.train_mode(False)
    b.load_state_dict(a.state_dict())
    assert torch.equal(a.net.norm.mean, b.net.norm.mean) and torch.equal(a.net.norm.m2, b.net.norm.m2)
    sa, _, _ = _episode(a, ANSWERS, train=False)
    sb, _, _ = _episode(b, ANSWERS, train=False)
    for t in (2, 3, 4):
        np.testing.assert_array_equal(sa["credits"][t], sb["credits"][t])
    # evaluation did not move the statistics
    count = float(a.net.norm.count)
    _episode(a, ANSWERS, train=False)
    assert float(a.net.norm.count) == count
    plain = _method(normalize="none")
    with pytest.raises(ValueError, match="does not fit"):
        plain.load_state_dict(a.state_dict())


@pytest.mark.parametrize("normalize", ["none", "running", "layernorm"])
def test_every_normaliser_trains(normalize: str) -> None:
    m = _method(normalize=normalize)
    state, _, _ = _episode(m, ANSWERS * 3, train=True, seed=5)
    loss = m.loss(state, [], [1.0, 0.0, 1.0] * 3)
    loss.backward()
    assert all(p.grad is not None for p in m.parameters())
    with pytest.raises(ValueError, match="normalize"):
        _method(normalize="batchnorm")


# -- the tie rule ---------------------------------------------------------------------------------------
def test_tie_rule_by_hand() -> None:
    c = np.array([[0.501, 0.499, 0.500, 0.500], [0.9, 0.1, 0.8, 0.2]])
    # mean of row 0 = 0.5: the paper's rule keeps only agent 0; a tolerance of 0.01 keeps all
    np.testing.assert_array_equal(inference_participation(c), [[1, 0, 0, 0], [1, 0, 1, 0]])
    np.testing.assert_array_equal(inference_participation(c, tie_tol=0.01), [[1, 1, 1, 1], [1, 0, 1, 0]])
    # a tolerance never keeps an agent clearly below the mean (row 1: mean 0.5, 0.2 < 0.5 - 0.25)
    np.testing.assert_array_equal(inference_participation(c, tie_tol=0.25), [[1, 1, 1, 1], [1, 0, 1, 0]])
    np.testing.assert_array_equal(inference_participation(c, tie_tol=0.31), [[1, 1, 1, 1], [1, 0, 1, 1]])
    np.testing.assert_array_equal(inference_participation(c, tie_tol=0.41), [[1, 1, 1, 1], [1, 1, 1, 1]])
    with pytest.raises(ValueError, match="tie_tol"):
        _method(tie_tol=-0.1)


# -- participation semantics -------------------------------------------------------------------------------
def test_isolated_silent_vs_answer_graphs() -> None:
    silent = _method(isolated="silent", tie_tol=0.0)
    answer = _method(isolated="answer", tie_tol=0.0)
    answer.load_state_dict(silent.state_dict())
    _, gs, ds = _episode(silent, ANSWERS, train=False)
    _, ga, da = _episode(answer, ANSWERS, train=False)
    n = silent.ctx.n_agents
    for rs, ra in zip(gs, ga, strict=True):
        for s, a in zip(rs, ra, strict=True):
            assert s.participants == a.participants == s.nodes  # same policy, same a_i^t
            assert s.edges == a.edges  # messages only among participants in both
            assert a.nodes == list(range(n))  # answer: every agent calls, non-participants alone
            for u, v in a.edges:
                assert u in a.participants and v in a.participants
    assert [d.voters for d in ds] == [d.voters for d in da]  # the decision rule is the same


def test_isolated_answer_through_the_executor(tmp_path) -> None:
    """With isolated=answer every agent makes a call in every round; with silent, non-participants
    carry their output forward (participated=False) and make no call."""
    from tomacs.config import compose
    from tomacs.launch.run import run_job

    common = ["method=todycomm", "embedder=hashing", "attack=gt50", "eval.size=6", "train.size=0", "seed=0"]
    common.append("checkpoint=untrained")  # the policy's structure is under test, not its training
    res = {}
    for mode in ("silent", "answer"):
        res[mode] = run_job(
            compose([*common, f"method.isolated={mode}", "method.tie_tol=0"]), "evaluate", tmp_path / mode
        )
    import json

    def outputs(mode: str) -> list[dict]:
        lines = (tmp_path / mode / "episodes.jsonl").read_text().splitlines()
        return [json.loads(x) for x in lines]

    for ep in outputs("answer"):
        assert all(o["participated"] for r in ep["rounds"] for o in r)
        for g in ep["graphs"][1:]:
            assert g["nodes"] == list(range(6)) and set(g["participants"]) <= set(g["nodes"])
    silent_idle = sum(not o["participated"] for ep in outputs("silent") for r in ep["rounds"] for o in r)
    assert silent_idle > 0
    # one call per agent-round (+1 decision call only when the decision is an LLM)
    calls_answer = res["answer"]["metrics"]["llm_calls"]
    assert calls_answer >= 6 * 6 * 4 and calls_answer > res["silent"]["metrics"]["llm_calls"]


TINY = [
    "method=todycomm",
    "embedder=hashing",
    "attack=gt50",
    "train.size=16",
    "train.val_size=8",
    "train.batch_size=8",
    "eval.size=4",
    "seed=3",
]


@pytest.mark.slow
def test_resume_with_the_normaliser_is_identical_to_an_uninterrupted_run(tmp_path) -> None:
    from tomacs.config import compose
    from tomacs.launch.run import run_job

    cfg = [*TINY, "method.normalize=running"]
    run_job(compose([*cfg, "train.epochs=1"]), "train", tmp_path / "resumed")
    resumed = run_job(compose([*cfg, "train.epochs=2"]), "train", tmp_path / "resumed")
    straight = run_job(compose([*cfg, "train.epochs=2"]), "train", tmp_path / "straight")
    assert resumed["train"]["resumed_from_epoch"] == 1
    a = torch.load(tmp_path / "resumed" / "checkpoint.pt", weights_only=False)["method"]["net"]
    b = torch.load(tmp_path / "straight" / "checkpoint.pt", weights_only=False)["method"]["net"]
    assert {"norm.count", "norm.mean", "norm.m2"} <= set(a)
    assert float(a["norm.count"]) > 0
    for k in a:
        assert torch.equal(a[k], b[k]), k
    assert resumed["metrics"]["acc"] == straight["metrics"]["acc"]


@pytest.mark.slow
def test_early_stopping_on_validation(tmp_path) -> None:
    """lr = 0 and no normaliser: the policy never changes, so validation never improves after the
    first epoch and patience 1 stops training after the second of five epochs."""
    from tomacs.config import compose
    from tomacs.launch.run import run_job

    cfg = [*TINY, "method.normalize=none", "train.lr=0", "train.epochs=5", "train.patience=1"]
    res = run_job(compose(cfg), "train", tmp_path / "run")
    assert res["train"]["epochs_run"] == 2 and res["train"]["stopped_early"] is True
    assert res["train"]["iterations"] == 4  # 2 epochs x 16 questions / batch 8
    again = run_job(compose([*cfg, "train.epochs=6"]), "train", tmp_path / "run")  # resume: still stopped
    assert again["train"]["epochs_run"] == 2 and again["train"]["iterations"] == 4
    from tomacs.config import ConfigError

    with pytest.raises(ConfigError, match="patience"):
        run_job(compose([*TINY, "train.patience=0"]), "train", tmp_path / "bad")


def test_a_checkpoint_from_before_the_normaliser_names_the_setting_to_use() -> None:
    old = _method(normalize="none").state_dict()
    del old["meta"]["normalize"]  # written before the option existed: raw inputs
    with pytest.raises(ValueError, match="normalize.*method.<key>"):
        _method(normalize="running").load_state_dict(old)
    _method(normalize="none").load_state_dict(old)  # the matching setting loads it


# -- comm=debate (issue 38): the sources' graph in rounds 2..T, only the decision learned --------------
def test_comm_debate_rounds_are_the_debate_graph_and_record_it_for_the_features() -> None:
    m = _method(comm="debate")
    state, graphs, decisions = _episode(m, ANSWERS, train=True, seed=1)
    full = [(i, j) for i in range(4) for j in range(4) if i != j]
    for t, rnd in zip((2, 3), graphs, strict=True):
        for g in rnd:
            assert g.edges == [] and sorted(g.temporal_edges) == full
            assert g.nodes == g.participants == [0, 1, 2, 3]
            assert len(g.credits) == 4
        # what round t+1's features read as round t's graph: the reads, as replay installs them
        assert [sorted(e) for e in state["edges"][t]] == [full] * len(ANSWERS)
        assert (state["actions"][t] == 1).all()
    assert sorted(state["logp"]) == [4]  # no communication action was sampled
    assert len(decisions) == len(ANSWERS)


def test_comm_debate_respects_mask_and_budgets() -> None:
    mask = np.ones((4, 4), dtype=int)
    mask[:, 3] = 0  # nobody may send to agent 3
    m = _method(ctx_kw={"mask": mask, "in_budget": 2}, comm="debate")
    _, graphs, _ = _episode(m, ANSWERS, train=False)
    for g in graphs[0]:
        assert all(j != 3 for _, j in g.temporal_edges)
        assert all(sum(1 for _, j in g.temporal_edges if j == r) <= 2 for r in range(4))


def test_comm_debate_loss_is_the_decision_term_alone() -> None:
    m = _method(rounds=3, comm="debate", baseline="none")
    state = m.begin(_questions(2), train=True, rng=np.random.default_rng(0))
    state["logp"] = {4: torch.tensor([-0.3, -0.7])}
    # Eq. 7 without its communication terms: -mean(logP_dec * u) = 0.3 * 1 / 2
    assert m.loss(state, [], [1.0, 0.0]).item() == pytest.approx(0.15)
    learned = _method(rounds=3, baseline="none")
    s2 = learned.begin(_questions(2), train=True, rng=np.random.default_rng(0))
    s2["logp"] = {4: torch.tensor([-0.3, -0.7])}
    with pytest.raises(RuntimeError, match=r"rounds \[2, 3\]"):
        learned.loss(s2, [], [1.0, 0.0])


def test_comm_debate_gradient_reaches_every_round_through_the_gru() -> None:
    m = _method(comm="debate")
    state, _, _ = _episode(m, ANSWERS * 3, train=True, seed=5)
    m.loss(state, [], [1.0, 0.0, 1.0] * 3).backward()
    for k, p in m.net.named_parameters():
        assert p.grad is not None and p.grad.abs().sum().item() > 0, k


def test_comm_is_checked() -> None:
    with pytest.raises(ValueError, match="learned"):
        _method(comm="complete")
