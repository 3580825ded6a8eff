"""The gap between the simulated and the real adversary AUC, with its interval (issue 38's target: within
0.05). Hand cases: scores whose resampled AUC is known, so the interval's ends are known."""

from __future__ import annotations

import numpy as np
import pytest

from tomacs.analysis.texts import (
    GAP_TARGET,
    Side,
    adversary_gap,
    auc_interval,
    gap_interval,
    gap_verdict,
    resampled_aucs,
)


def _perfect(n_questions: int = 6) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """One adversary and one honest reply per question, the adversary always scored higher: every
    resample of the questions has AUC 1."""
    y = np.array([1.0, 0.0] * n_questions)
    return y, y.copy(), [f"q{i // 2}" for i in range(2 * n_questions)]


def _one_misordered() -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Eight questions; in q7 the honest reply outscores the adversary (AUC 63/64 on the whole)."""
    y = np.array([1.0, 0.0] * 8)
    s = np.array([v for q in range(8) for v in ((100.0 + q, q) if q < 7 else (50.0, 60.0))])
    return y, s, [f"q{i // 2}" for i in range(16)]


def test_a_perfect_real_side_puts_the_interval_at_the_simulated_draws_minus_one() -> None:
    """Every real resample scores 1, so a gap is a simulated draw minus 1: -0.2 or -0.1, each drawn about
    half the time, so the 2.5th and 97.5th percentiles are exactly those two."""
    y, s, g = _perfect()
    assert set(resampled_aucs(y, s, g, n=200) or []) == {1.0}
    assert gap_interval([0.8, 0.9], y, s, g, n=400) == pytest.approx((-0.2, -0.1))
    assert gap_interval([0.95], y, s, g, n=100) == pytest.approx((-0.05, -0.05))


def test_one_simulated_value_mirrors_the_real_interval() -> None:
    """With one simulated AUC c, the gap's interval is c minus the real interval, ends swapped: the same
    resamples (same seed), and a percentile of c - v is c minus the mirrored percentile of v."""
    y, s, g = _one_misordered()
    lo, hi = auc_interval(y, s, g, n=400, seed=3) or (0.0, 0.0)
    assert lo < 63 / 64 < hi == 1.0  # the real side has a spread
    got = gap_interval([0.9], y, s, g, n=400, seed=3)
    assert got == pytest.approx((0.9 - hi, 0.9 - lo))


def test_no_interval_without_both_classes_or_a_simulated_value() -> None:
    y, s, g = _perfect(3)  # 3 adversaries: under the 5 an AUC needs
    assert resampled_aucs(y, s, g) is None and gap_interval([0.8], y, s, g) is None
    y, s, g = _perfect()
    assert gap_interval([], y, s, g) is None


@pytest.mark.parametrize(
    ("gap", "ci", "verdict"),
    [
        (0.02, (-0.01, 0.04), "within the target, the whole interval too"),
        (0.04, (0.00, 0.09), "within the target; the interval reaches beyond it"),
        (-0.04, (-0.08, 0.01), "within the target; the interval reaches beyond it"),
        (0.07, (0.02, 0.13), "beyond the target; the interval reaches within it"),
        (-0.085, (-0.17, -0.01), "beyond the target; the interval reaches within it"),
        (0.12, (0.06, 0.18), "beyond the target, the whole interval too"),
        (-0.12, (-0.18, -0.06), "beyond the target, the whole interval too"),
        (0.05, None, "within the target"),  # the target's edge counts as within
        (-0.051, None, "beyond the target"),
    ],
)
def test_gap_verdict(gap: float, ci: tuple[float, float] | None, verdict: str) -> None:
    assert GAP_TARGET == 0.05  # issue 38's number; the cases above are written around it
    assert gap_verdict(gap, ci) == verdict


def _side(y: np.ndarray, g: list[str]) -> Side:
    return Side([], np.zeros((len(y), 1)), y, g)


def test_the_gap_takes_the_matched_draws_and_falls_back_to_the_simulated_resamples() -> None:
    """Matched: the gap is the draws' mean minus the real AUC, its spread the draws'. Not matched (a
    simulated side no larger than the real one): its whole AUC and its own resamples."""
    ry, rs, rg = _perfect()
    real = _side(ry, rg)
    res = {
        "real_adversary_auc": 1.0,
        "sim_adversary_auc": 0.7,
        "sim_adversary_auc_matched": 0.85,
        "sim_adversary_auc_matched_draws": [0.8, 0.9],
    }
    called: list[str] = []

    def sim_scores() -> np.ndarray:
        called.append("sim")
        return np.zeros(0)

    got = adversary_gap(res, _side(np.zeros(0), []), sim_scores, real, lambda: rs, seed=0)
    assert got["adversary_gap"] == pytest.approx(-0.15)
    assert got["adversary_gap_ci"] == pytest.approx((-0.2, -0.1))
    assert got["adversary_gap_verdict"] == "beyond the target, the whole interval too"
    assert not called  # the draws carry the simulated spread; its scores are not needed
    # not matched: the simulated side's own resamples (misordered in one question of eight)
    sy, ss, sg = _one_misordered()
    res = {"real_adversary_auc": 1.0, "sim_adversary_auc": 63 / 64, "sim_adversary_auc_matched": None}
    got = adversary_gap(res, _side(sy, sg), lambda: ss, real, lambda: rs, seed=0)
    lo, hi = auc_interval(sy, ss, sg, seed=0) or (0.0, 0.0)
    assert got["adversary_gap"] == pytest.approx(63 / 64 - 1.0)
    ci = got["adversary_gap_ci"]
    assert ci is not None and ci[0] == pytest.approx(lo - 1.0, abs=0.02) and ci[1] == pytest.approx(0.0)
    # a side without an AUC has no gap
    none = adversary_gap({**res, "real_adversary_auc": None}, _side(sy, sg), lambda: ss, real, lambda: rs, 0)
    assert none == {"adversary_gap": None, "adversary_gap_ci": None, "adversary_gap_verdict": None}
