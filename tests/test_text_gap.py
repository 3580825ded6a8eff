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
    assert gap_interval([0.8, 0.9], resampled_aucs(y, s, g, n=400)) == pytest.approx((-0.2, -0.1))
    assert gap_interval([0.95], resampled_aucs(y, s, g, n=100)) == pytest.approx((-0.05, -0.05))


def test_one_simulated_value_mirrors_the_real_interval() -> None:
    """With one simulated AUC c, the gap's interval is c minus the real interval, ends swapped: the same
    resamples (same seed), and a percentile of c - v is c minus the mirrored percentile of v."""
    y, s, g = _one_misordered()
    lo, hi = auc_interval(y, s, g, n=400, seed=3) or (0.0, 0.0)
    assert lo < 63 / 64 < hi == 1.0  # the real side has a spread
    got = gap_interval([0.9], resampled_aucs(y, s, g, n=400, seed=3), seed=3)
    assert got == pytest.approx((0.9 - hi, 0.9 - lo))


def test_no_interval_without_both_classes_or_a_simulated_value() -> None:
    y, s, g = _perfect(3)  # 3 adversaries: under the 5 an AUC needs
    assert resampled_aucs(y, s, g) is None and gap_interval([0.8], resampled_aucs(y, s, g)) is None
    y, s, g = _perfect()
    assert gap_interval([], resampled_aucs(y, s, g)) is None


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
    # the interval's draws are kept (`transcripts pool` joins them): each a simulated draw minus 1
    assert len(got["adversary_gap_draws"]) == 1000 and set(got["adversary_gap_draws"]) == {-0.2, -0.1}
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
    assert none == {
        "adversary_gap": None,
        "adversary_gap_ci": None,
        "adversary_gap_verdict": None,
        "adversary_gap_draws": [],
    }


def test_real_sets_draw_whole_distinct_questions_and_summarise_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ten questions of three replies; sets of 4: each draw cross-validates 4 distinct whole questions (12
    replies), the draws differ, and the result is the draws' mean, SD and 2.5-97.5 % range."""
    import tomacs.analysis.texts as texts

    seen: list[dict[str, int]] = []
    values = [0.6, 0.7, 0.8] * 2

    def spy(x: np.ndarray, y: np.ndarray, groups: list[str], folds: int, seed: int) -> float:
        counts: dict[str, int] = {}
        for g in groups:
            counts[g] = counts.get(g, 0) + 1
        seen.append(counts)
        return values[len(seen) - 1]

    monkeypatch.setattr(texts, "cv_auc", spy)
    y = np.array([0.0, 0.0, 1.0] * 10)
    g = [f"q{i // 3}" for i in range(30)]
    got = texts.real_sets(np.zeros((30, 2)), y, g, 4, draws=6)
    assert len(seen) == 6 and all(len(c) == 4 and set(c.values()) == {3} for c in seen)
    assert len({tuple(sorted(c)) for c in seen}) > 1
    assert got["real_sets_auc"] == pytest.approx(0.7)
    assert got["real_sets_auc_sd"] == pytest.approx(np.sqrt(0.04 / 5))  # (4 x 0.1^2) / (6 - 1)
    assert got["real_sets_auc_range"] == pytest.approx([0.6, 0.8])
    assert (got["real_sets_questions"], got["real_sets_draws"]) == (4, 6)
    # no set to draw when the pool is no larger than a set, or a set is one question
    assert texts.real_sets(np.zeros((30, 2)), y, g, 10)["real_sets_auc"] is None
    assert texts.real_sets(np.zeros((30, 2)), y, g, 1)["real_sets_auc"] is None


def test_compare_holds_the_simulated_auc_against_real_sets_and_the_fitting_rounds() -> None:
    """With the fitting questions' real debates given, the comparison draws sets of as many questions as the
    real (held-out) side has from both, and prints the gap to their mean. An embedder that reads the
    adversary's words makes every set's AUC 1."""
    from tests.test_sim_text_model import _fit_debates
    from tomacs.analysis.text_report import format_comparison
    from tomacs.analysis.texts import compare

    def embed(texts: list[str]) -> np.ndarray:
        return np.array([[1.0 if "disagree" in t else 0.0, float(len(t) % 7)] for t in texts])

    debates = _fit_debates(16)
    sim, train, real = debates[:12], debates[:12], debates[12:]  # 4 held-out questions
    res = compare(sim, real, embed, real_train=train)
    assert (res["real_sets_questions"], res["real_sets_draws"]) == (4, 40)
    assert res["real_sets_auc"] == pytest.approx(1.0) and res["real_sets_auc_sd"] == pytest.approx(0.0)
    sim_auc = res["sim_adversary_auc_matched"] or res["sim_adversary_auc"]
    assert res["adversary_gap_sets"] == pytest.approx(sim_auc - 1.0)
    text = format_comparison({**res, "embedder": "test", "sim_label": "s", "real_label": "r"})
    assert "adversary vs honest, real, sets of 4 of all its questions" in text
    assert "gap, simulated minus that" in text
    # each round's real AUC on the fitting questions too (12 of them, one adversary reply each per round)
    assert [(r["round"], r["real_fit_adversary_auc"]) for r in res["by_round"]] == [(1, 1.0), (2, 1.0)]
    assert "sim adv-vs-honest   real, fitting" in text
    # without the fitting questions there is nothing to draw from
    alone = compare(sim, real, embed)
    assert alone["real_sets_auc"] is None and alone["adversary_gap_sets"] is None
    labels = {"embedder": "test", "sim_label": "s", "real_label": "r"}
    assert "sets of" not in format_comparison({**alone, **labels})
    assert all("real_fit_adversary_auc" not in r for r in alone["by_round"])
    assert "real, fitting" not in format_comparison({**alone, **labels})
