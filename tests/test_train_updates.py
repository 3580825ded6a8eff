"""How REINFORCE's gradient is used (issue 40): the learning-rate schedule (`train.lr_schedule`),
gradient clipping (`train.grad_clip`) and several clipped steps per batch of episodes
(`method.updates`, `method.update_clip`). Hand computations, the equality of the first reused step's
gradient with Eq. 7's, and a tiny run that takes the steps it is told to."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from tests.test_todycomm import ANSWERS, _history, _one_thread, _questions  # noqa: F401 (autouse fixture)
from tomacs.config import ConfigError, compose, validate
from tomacs.job.files import TRAIN_KEYS_ADDED
from tomacs.launch.run import run_job
from tomacs.methods.base import MethodContext
from tomacs.methods.learned import clipped_surrogate_loss, reinforce_loss
from tomacs.methods.todycomm import TodyComm
from tomacs.training.reinforce import descend, scheduled_lr


def test_cosine_schedule_by_hand() -> None:
    assert [scheduled_lr(1.0, "constant", i, 5) for i in range(5)] == [1.0] * 5
    cos = [scheduled_lr(2.0, "cosine", i, 5) for i in range(5)]
    # 2 * (1 + cos(pi * i / 4)) / 2 for i = 0..4
    assert cos == pytest.approx([2.0, 1.0 + math.sqrt(0.5), 1.0, 1.0 - math.sqrt(0.5), 0.0])
    assert scheduled_lr(2.0, "cosine", 9, 5) == pytest.approx(0.0)  # past the end: stays at 0
    assert scheduled_lr(3.0, "cosine", 0, 1) == 3.0  # a one-step job has no schedule
    with pytest.raises(ValueError, match="valid: constant, cosine"):
        scheduled_lr(1.0, "step", 0, 5)


def test_clipped_surrogate_by_hand() -> None:
    new = torch.log(torch.tensor([1.5, 0.5, 1.1, 0.7]))
    old = torch.zeros(4)
    a = np.array([1.0, 1.0, -2.0, -1.0])
    # r = 1.5, 0.5, 1.1, 0.7; eps 0.2: min(rA, clip(r)A) = 1.2, 0.5, -2.2, -0.8
    assert float(clipped_surrogate_loss(new, old, a, 0.2)) == pytest.approx(-(1.2 + 0.5 - 2.2 - 0.8) / 4)


def test_surrogate_gradient_at_the_sampling_policy_is_reinforce() -> None:
    logp = torch.tensor([-1.0, -2.0, -0.5], requires_grad=True)
    u, b = np.array([1.0, 0.0, 1.0]), 2.0 / 3.0
    (g1,) = torch.autograd.grad(reinforce_loss(logp, u, b), logp)
    (g2,) = torch.autograd.grad(clipped_surrogate_loss(logp, logp.detach(), u - b, 0.2), logp)
    assert torch.allclose(g1, g2)


def _method(**params: object) -> TodyComm:
    ctx = MethodContext(n_agents=4, rounds=3, roles=[f"r{i}" for i in range(4)], seed=0)
    # Eq. 7's paper form; the exact decision's first reused step: tests/test_todycomm_expected.py
    return TodyComm(
        ctx, **{"embedder": "hashing", "emb_dim": 16, "gamma": 0.5, "decision_credit": "episode", **params}
    )


def _train_batch(m: TodyComm, seed: int = 3) -> dict:
    hist = _history(ANSWERS * 3, 3)
    state = m.begin(_questions(len(hist)), train=True, rng=np.random.default_rng(seed))
    for t in (2, 3):
        m.act(state, t, [h[: t - 1] for h in hist])
    m.decide(state, hist)
    return state


@pytest.mark.parametrize("comm", ["learned", "debate"])
def test_first_reused_step_has_eq7s_gradient(comm: str) -> None:
    """The replay from the stored inputs reproduces the episode's log-probs, so at unchanged weights the
    clipped surrogate's gradient is Eq. 7's (normalize=none: the running standardiser moves during the
    episode, which is why a replay does not update it)."""
    m = _method(normalize="none", comm=comm)
    state = _train_batch(m)
    utilities = [1.0, 0.0, 1.0] * 3
    params = m.parameters()
    g_eq7 = torch.autograd.grad(m.loss(state, [], utilities), params)
    g_reuse = torch.autograd.grad(m.reuse_loss(state, 0.2), params)
    for a, b in zip(g_eq7, g_reuse, strict=True):
        assert torch.allclose(a, b, atol=1e-6)
    assert any(float(g.abs().sum()) > 0 for g in g_reuse)


def test_reuse_needs_the_batch_scored_first() -> None:
    m = _method()
    with pytest.raises(RuntimeError, match="follows loss"):
        m.reuse_loss(_train_batch(m), 0.2)


def test_a_term_past_the_clip_gives_no_gradient() -> None:
    """PPO's trust region by hand: r = 1.5 with A > 0 and r = 0.5 with A < 0 are clipped (no gradient);
    r = 1.1 inside the clip keeps d/dlog r of -rA/3 = -1.1/3."""
    new = torch.log(torch.tensor([1.5, 0.5, 1.1])).requires_grad_()
    (g,) = torch.autograd.grad(
        clipped_surrogate_loss(new, torch.zeros(3), np.array([1.0, -1.0, 1.0]), 0.2), new
    )
    assert g.tolist() == pytest.approx([0.0, 0.0, -1.1 / 3])


def test_descend_clips_the_global_norm() -> None:
    w = torch.nn.Parameter(torch.tensor([3.0, 4.0]))
    opt = torch.optim.SGD([w], lr=1.0)
    descend(opt, (w * torch.tensor([3.0, 4.0])).sum(), clip=1.0)  # gradient (3, 4), norm 5 -> (0.6, 0.8)
    assert w.detach().tolist() == pytest.approx([2.4, 3.2])


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("train.lr_schedule=step", "train.lr_schedule must be one of constant, cosine"),
        ("train.grad_clip=0", "train.grad_clip must be > 0 or null"),
    ],
)
def test_bad_settings_are_one_line_errors(override: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        validate(compose([override]))


@pytest.mark.parametrize(
    ("override", "word"), [("method.updates=0", "updates"), ("method.update_clip=1.5", "update_clip")]
)
def test_bad_method_steps_are_one_line_errors(override: str, word: str) -> None:
    with pytest.raises(ConfigError, match=word):
        validate(compose(["method=todycomm", override]))


def test_the_paper_options_are_the_defaults() -> None:
    # an old run without a key ran as TRAIN_KEYS_ADDED says; today's budgets differ only where they chose to:
    # TodyComm's budget tests the last epoch, as the paper reports it (§5 names no validation set)
    paper_differs = {"select": "last"}
    for budget, differs in (("default", {}), ("paper", paper_differs)):
        train = compose([f"train={budget}"]).train
        assert {k: train[k] for k in TRAIN_KEYS_ADDED} == {**TRAIN_KEYS_ADDED, **differs}
    assert compose(["method=todycomm"]).train.select == "last"
    assert compose(["method=gdesigner"]).train.select == "best"


def _tiny(tmp_path: Path, name: str, *extra: str) -> dict:
    cfg = compose(
        [
            "method=todycomm",
            "embedder=hashing",
            "attack=gt50",
            "train.size=8",
            "train.val_size=0",
            "train.batch_size=4",
            "train.epochs=2",
            "eval.size=4",
            "seed=0",
            *extra,
        ]
    )
    return run_job(cfg, "train", tmp_path / name)


def test_a_run_takes_the_steps_and_rates_it_is_told(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rates: list[float] = []
    steps = {"n": 0}
    real_step = torch.optim.Adam.step

    def counting_step(self, *a, **kw):  # type: ignore[no-untyped-def]
        steps["n"] += 1
        rates.append(self.param_groups[0]["lr"])
        return real_step(self, *a, **kw)

    monkeypatch.setattr(torch.optim.Adam, "step", counting_step)
    res = _tiny(tmp_path, "u3", "method.updates=3", "train.lr_schedule=cosine", "train.lr=1e-3")
    assert res["train"]["iterations"] == 4  # 2 epochs x 8 questions / 4 per batch
    assert steps["n"] == 12  # 3 optimiser steps per batch
    # each batch's steps share its rate, which follows the cosine over the 4 iterations
    assert rates[::3] == pytest.approx([scheduled_lr(1e-3, "cosine", i, 4) for i in range(4)])
    assert rates == pytest.approx([r for r in rates[::3] for _ in range(3)])


def test_a_method_that_cannot_reuse_says_so(tmp_path: Path) -> None:
    with pytest.raises((ValueError, ConfigError), match="one gradient step per batch"):
        cfg = compose(["method=gdesigner", "embedder=hashing", "train.size=4", "method.updates=2"])
        run_job(cfg, "train", tmp_path / "g")


def test_an_old_run_without_the_key_took_one_step(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run directory from before `method.updates` is settled with the one step it took, whatever the
    method's default is (here made 4), so resuming and skipping do not take it for a run of that default."""
    from omegaconf import OmegaConf

    import tomacs.methods.registry as registry
    from tomacs.job.files import _settled

    real = registry.method_defaults
    monkeypatch.setattr(registry, "method_defaults", lambda name: {**(real(name) or {}), "updates": 4})
    cfg = OmegaConf.to_container(compose(["method=todycomm"]), resolve=True)
    assert isinstance(cfg, dict)
    del cfg["method"]["updates"], cfg["method"]["update_clip"]
    settled = _settled(cfg)
    assert settled["method"]["updates"] == 1
    assert settled["method"]["update_clip"] == 0.2  # a key without an exception takes today's default


# -- train.select: which end of training is tested (best.pt, ours; the last epoch, the paper's) -------------
def test_select_is_checked_in_one_line() -> None:
    with pytest.raises(ConfigError, match="train.select must be one of best, last"):
        validate(compose(["method=todycomm", "train.select=middle"]))


@pytest.mark.parametrize("select", ["best", "last"])
def test_the_job_tests_the_weights_select_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, select: str
) -> None:
    import tomacs.training.reinforce as reinforce

    # every epoch scores the same: best.pt stays epoch 1 (a tie keeps the earlier), unlike the last epoch
    monkeypatch.setattr(reinforce, "selection_score", lambda acc, adacc: 0.0)
    common = ["method=todycomm", "embedder=hashing", "attack=gt50", "train.size=16", "train.val_size=4"]
    common += ["train.batch_size=4", "eval.size=24", "seed=0"]
    job = run_job(compose([*common, "train.epochs=2", f"train.select={select}"]), "train", tmp_path / "job")
    assert job["train"]["tested"] == select
    assert (
        job["train"]["validation"]["best"]["epoch"] == 1 and job["train"]["validation"]["last"]["epoch"] == 2
    )
    nets = {
        n: torch.load(tmp_path / "job" / f"{n}.pt", weights_only=False)["method"]["net"]
        for n in ("best", "checkpoint")
    }
    assert not all(torch.equal(nets["best"][k], nets["checkpoint"][k]) for k in nets["best"])
    scores = {}
    for name in ("best", "checkpoint"):
        ck = tmp_path / "job" / f"{name}.pt"
        res = run_job(compose([*common, f"checkpoint={ck}"]), "evaluate", tmp_path / f"eval_{name}")
        scores[name] = (res["metrics"]["acc"], res["metrics"]["adacc"], res["metrics"]["participation_rate"])
    assert scores["best"] != scores["checkpoint"]  # the two ends are told apart on these episodes
    tested = scores["best" if select == "best" else "checkpoint"]
    assert (job["metrics"]["acc"], job["metrics"]["adacc"], job["metrics"]["participation_rate"]) == tested
