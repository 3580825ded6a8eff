"""TodyComm's `method.baseline=round1` (issue 40): a leave-one-out least-squares baseline on the share of
correct round-1 answers. Hand-computed fits, the property that makes it unbiased (an episode's own utility
never enters its baseline), and a tiny run whose baselines really follow round 1."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tomacs.benchmarks.parsing import is_correct
from tomacs.config import compose
from tomacs.launch.run import run_job
from tomacs.methods.learned import covariate_baseline


def test_leave_one_out_fit_by_hand() -> None:
    u = np.array([1.0, 0.0, 1.0, 0.0])
    x = np.array([1.0, 0.0, 0.5, 0.5])
    # leave out 0: (0,0), (.5,1), (.5,0) -> u = x, at x = 1: 1
    # leave out 1: (1,1), (.5,1), (.5,0) -> u = x, at x = 0: 0
    # leave out 2: (1,1), (0,0), (.5,0) -> u = x - 1/6, at .5: 1/3
    # leave out 3: (1,1), (0,0), (.5,1) -> u = x + 1/6, at .5: 2/3
    assert covariate_baseline(u, x) == pytest.approx([1.0, 0.0, 1 / 3, 2 / 3])


def test_an_episode_never_enters_its_own_baseline() -> None:
    rng = np.random.default_rng(0)
    u, x = rng.random(9), rng.random(9)
    before = covariate_baseline(u, x)
    for i in range(9):
        moved = u.copy()
        moved[i] += 5.0
        after = covariate_baseline(moved, x)
        assert after[i] == pytest.approx(before[i])
        assert not np.allclose(np.delete(after, i), np.delete(before, i))


def test_falls_back_to_the_leave_one_out_mean() -> None:
    u = np.array([1.0, 0.0, 1.0])
    # x does not vary: nothing to fit, the mean of the other two
    assert covariate_baseline(u, np.full(3, 0.5)).tolist() == [0.5, 1.0, 0.5]
    assert covariate_baseline(u[:2], np.array([0.0, 1.0])).tolist() == [0.0, 1.0]
    with pytest.raises(ValueError, match="2 covariates for 3 utilities"):
        covariate_baseline(u, np.array([0.0, 1.0]))


def test_a_run_fits_its_baseline_on_round_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tomacs.methods import todycomm as tc

    seen: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    fits: list[tuple[np.ndarray, np.ndarray]] = []
    loss, fit = tc.TodyComm.loss, tc.covariate_baseline

    def recording_fit(u, x):  # type: ignore[no-untyped-def]
        fits.append((np.asarray(u) - fit(u, x), np.asarray(x)))
        return fit(u, x)

    def recording_loss(self, state, episodes, utilities):  # type: ignore[no-untyped-def]
        out = loss(self, state, episodes, utilities)
        first = np.array([np.mean([is_correct(e.question, o.answer) for o in e.rounds[0]]) for e in episodes])
        seen.append((state["first_correct"], first, state["advantage"]))
        return out

    monkeypatch.setattr(tc.TodyComm, "loss", recording_loss)
    monkeypatch.setattr(tc, "covariate_baseline", recording_fit)
    cfg = compose(
        [
            "method=todycomm",
            "method.baseline=round1",
            "embedder=hashing",
            "attack=gt50",
            "train.size=16",
            "train.val_size=0",
            "train.batch_size=8",
            "train.epochs=1",
            "eval.size=4",
            "seed=0",
        ]
    )
    res = run_job(cfg, "train", tmp_path / "run")
    assert res["train"]["iterations"] == 2 and len(seen) == 2 and len(fits) == 2
    for (first_correct, from_episodes, advantage), (fitted_advantage, x) in zip(seen, fits, strict=True):
        assert first_correct.tolist() == pytest.approx(from_episodes.tolist())
        assert np.ptp(first_correct) > 0  # the covariate varies, so the fit is used, not the mean
        assert x.tolist() == first_correct.tolist()
        assert advantage.tolist() == pytest.approx(
            fitted_advantage.tolist()
        )  # the fit, not the mean
        assert abs(float(advantage.sum())) > 1e-9
    assert res["config"]["method"]["baseline"] == "round1"
