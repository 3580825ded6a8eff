"""The stored `sim` profiles reproduce TodyComm Tables 7-8 and Table 2's Complete rows (the cells they
are fitted to); `--check` prints them, and the held-out Random rows, from the stored fit."""

from __future__ import annotations

import pytest

from tomacs.sim.calibrate import (
    ATTACKS,
    GROUP_COMPLETE,
    GROUP_RANDOM,
    GROUP_T78,
    PAPER_TABLE2,
    PAPER_TABLE7,
    PAPER_TABLE8,
    TOLERANCE_POINTS,
    format_report,
    stored_rows,
)
from tomacs.sim.episodes import make_draws, table2_cells
from tomacs.sim.model import PROFILE_NAMES, load_profiles

# The documented state of the stored fit (docs/deviations.md, sim section): the Complete rows miss
# the ±4 target on 6 of 15 cells (largest: ARC-C lt50, -14.8; the four vote cells at lt50 are the
# structural misses). These guard against a worse refit.
KNOWN_MISS = 16.0
MIN_WITHIN_4 = 9


def test_paper_numbers_are_the_tables() -> None:
    # spot checks against shared/papers/todycomm.txt Tables 7 and 8
    assert PAPER_TABLE7["mmlu"] == (70.60, 37.25)
    assert PAPER_TABLE7["medqa"] == (65.17, 50.83)
    assert PAPER_TABLE8["gsm8k"] == (90.73, 70.93, 62.40, 50.03)
    assert PAPER_TABLE8["openbookqa"][3] == 53.50


def test_table2_numbers_are_the_extracted_paper_table() -> None:
    from tomacs.report.paper import lookup

    for method, per_bench in PAPER_TABLE2.items():
        for bench, cells in per_bench.items():
            for a in ATTACKS:
                assert cells[a] == lookup(method, bench, a, "acc")["value"], (method, bench, a)


def test_all_profiles_stored_and_vanilla_is_not_fitted() -> None:
    profs = load_profiles()
    assert set(PROFILE_NAMES) <= set(profs)
    for name in PROFILE_NAMES:
        assert profs[name].accuracy == pytest.approx(PAPER_TABLE7[name][0] / 100)


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    return stored_rows(trials=10000, seed=0, episodes=4000)


@pytest.mark.slow  # the module fixture `rows` simulates 10,000 trials per cell: ~20 s
def test_stored_profiles_match_tables_7_8_within_tolerance(rows: list[dict]) -> None:
    t78 = [r for r in rows if r["group"] == GROUP_T78]
    assert len(t78) == 6 * len(PROFILE_NAMES)
    bad = [r for r in t78 if abs(r["diff"]) > TOLERANCE_POINTS]
    assert not bad, format_report(rows)


@pytest.mark.slow  # the module fixture `rows` simulates 10,000 trials per cell: ~20 s
def test_stored_profiles_fit_table2_complete(rows: list[dict]) -> None:
    comp = [r for r in rows if r["group"] == GROUP_COMPLETE]
    assert len(comp) == 3 * len(PROFILE_NAMES)
    # every Complete cell within KNOWN_MISS points, and at least MIN_WITHIN_4 within the ±4 target
    assert max(abs(r["diff"]) for r in comp) <= KNOWN_MISS, format_report(rows)
    assert sum(abs(r["diff"]) <= 4.0 for r in comp) >= MIN_WITHIN_4, format_report(rows)


@pytest.mark.slow  # the module fixture `rows` simulates 10,000 trials per cell: ~20 s
def test_check_table_is_made_from_the_stored_fit(rows: list[dict]) -> None:
    profs = load_profiles()
    draws = make_draws(4000, 0 + 1)  # --check's debates: seed + 1, not the fit's draws
    for method, group in (("complete", GROUP_COMPLETE), ("random", GROUP_RANDOM)):
        for name in PROFILE_NAMES:
            got = table2_cells(profs[name], draws, graph=method)
            mine = {r["cell"]: r for r in rows if r["group"] == group and r["profile"] == name}
            for a in ATTACKS:
                r = mine[f"{method}/{a}"]
                assert r["simulated"] == pytest.approx(got[a], abs=0.006)
                assert r["paper"] == PAPER_TABLE2[method][name][a]
    text = format_report(rows)
    assert "Table 2 Random (held out)" in text and "Table 2 Complete (fitted)" in text
    assert text.index("Complete (fitted)") < text.index("Random (held out)")


def test_sampled_check_is_seeded() -> None:
    a = stored_rows(trials=200, seed=3, episodes=500)
    b = stored_rows(trials=200, seed=3, episodes=500)
    c = stored_rows(trials=200, seed=4, episodes=500)
    assert a == b
    assert [r["simulated"] for r in a] != [r["simulated"] for r in c]
