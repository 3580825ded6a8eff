"""Several episodes per training question (`train.samples`) and the per-question REINFORCE baseline
(`method.baseline=per_question`, issue 40): hand-computed baselines, the loss they give, and a tiny
run whose batches really hold each question's episodes together."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from tomacs.config import ConfigError, compose
from tomacs.launch.run import run_job
from tomacs.methods.learned import per_question_baseline, reinforce_loss


def test_leave_one_out_baseline_by_hand() -> None:
    u = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 0.0])
    keys = ["a", "a", "b", "c", "c", "c"]
    # a: the other episode's utility; b alone: the fallback; c: mean of the other two
    assert per_question_baseline(u, keys, 0.5).tolist() == [0.0, 1.0, 0.5, 0.0, 0.5, 0.5]
    with pytest.raises(ValueError, match="2 question keys for 6 utilities"):
        per_question_baseline(u, ["a", "b"], 0.0)


def test_reinforce_loss_takes_one_baseline_per_episode() -> None:
    logp = torch.tensor([-1.0, -2.0, -0.5], requires_grad=True)
    u = np.array([1.0, 0.0, 1.0])
    b = np.array([0.0, 1.0, 0.5])
    loss = reinforce_loss(logp, u, b)
    # -mean(logp * (u - b)) = -((-1)(1) + (-2)(-1) + (-0.5)(0.5)) / 3 = -(−1 + 2 − 0.25) / 3
    assert float(loss.detach()) == pytest.approx(-0.75 / 3)
    assert float(reinforce_loss(logp, u, 0.5).detach()) == pytest.approx(-((-0.5) + 1.0 + (-0.25)) / 3)


def test_samples_must_be_positive() -> None:
    with pytest.raises(ConfigError, match="train.samples must be >= 1"):
        from tomacs.config import validate

        validate(compose(["train.samples=0"]))


def test_each_question_is_run_samples_times_in_one_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tomacs.methods.todycomm import TodyComm

    batches: list[list[str]] = []
    baselines: list[np.ndarray] = []
    loss, value = TodyComm.loss, TodyComm.baseline_value

    def recording_loss(self, state, episodes, utilities):  # type: ignore[no-untyped-def]
        batches.append([q.id for q in state["questions"]])
        return loss(self, state, episodes, utilities)

    def recording_value(self, u, keys=None):  # type: ignore[no-untyped-def]
        baselines.append(np.asarray(value(self, u, keys)))
        return baselines[-1]

    monkeypatch.setattr(TodyComm, "loss", recording_loss)
    monkeypatch.setattr(TodyComm, "baseline_value", recording_value)
    cfg = compose(
        [
            "method=todycomm",
            "method.baseline=per_question",
            "embedder=hashing",
            "attack=gt50",
            "train.size=8",
            "train.val_size=0",
            "train.batch_size=4",
            "train.samples=3",
            "train.epochs=1",
            "eval.size=4",
            "seed=0",
        ]
    )
    res = run_job(cfg, "train", tmp_path / "run")
    assert res["train"]["iterations"] == 2  # 8 questions, 4 per batch: the samples add episodes, not steps
    assert len(batches) == 2 and all(len(b) == 12 for b in batches)
    for b in batches:  # a question's 3 episodes side by side, 4 questions per batch
        assert [b[i] for i in range(0, 12, 3)] == [b[i + 2] for i in range(0, 12, 3)]
        assert len(set(b)) == 4
    assert len({q for b in batches for q in b}) == 8
    assert all(bl.shape == (12,) for bl in baselines)  # one leave-one-out baseline per episode
