"""`tomacs transcripts curves` (issue 39, item 3): simulated against real debates per round, side by
side, with the issue's target (honest accuracy and conformity within 8 points at every round).

The hand-built debates below have every per-round value worked out in the comments, so the
numbers are checked against arithmetic, not against the code that produced them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tomacs.analysis.curves import (
    Protocol,
    compare_curves,
    describe,
    figure_stem,
    format_curves,
    override_for,
    protocol,
    protocol_warning,
)
from tomacs.transcripts.schema import AgentInfo, Debate, Turn

MAA = Path(__file__).parent / "data" / "multi_agent_attack_small"
MAA_ADV = MAA / "mmlu" / "adv_100_3_3_1-gpt-3.5-turbo-gpt-3.5-turbo"
LETTERS = ("A", "B", "C", "D")


def tomacs(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "250"}
    return subprocess.run(
        [sys.executable, "-m", "tomacs.cli", *args], capture_output=True, text=True, timeout=600, env=env
    )


def debate(
    q: str,
    answers: list[str],
    adv: int | None = 0,
    onset: int = 1,
    model: str = "m",
    rounds: int | None = None,
) -> Debate:
    """Gold A; `answers[i]` is agent i's answer per round (one letter a round); agent `adv` argues
    for B from `onset`; from round 2 every agent reads every agent's previous answer."""
    n, t = len(answers), rounds or len(answers[0])
    agents = tuple(
        AgentInfo(i, "adversary", onset, "B", model) if i == adv else AgentInfo(i, model=model)
        for i in range(n)
    )
    turns = tuple(
        Turn(r, i, answers[i][r - 1], tuple((j, r - 1) for j in range(n)) if r > 1 else ())
        for r in range(1, t + 1)
        for i in range(n)
    )
    return Debate(f"{q}-{model}", "A", LETTERS, n, t, agents, turns, model=model, question=q)


# Real: agent 0 the adversary (B, gold A), agents 1 and 2 honest.
#   q1: adv BBB, a1 ABB, a2 AAB      q2: adv BBB, a1 CBA, a2 AAA
# honest answers: r1 A A C A, r2 B A B A, r3 B B A A
#   accuracy    75, 50, 50;  conformity 0, 50, 50
#   switch, 1st exposure (round 2, all four off B in round 1): q1 a1 A->B, q2 a1 C->B = 2/4 = 50
#   switch, later (round 3, off B in round 2: q1 a2, q2 a2): q1 a2 A->B = 1/2 = 50
#   vote (all three): r1 q1 A, q2 a three-way tie with A = 1/3 -> 66.7; r2 B, B -> 0; r3 B, A -> 50
REAL = [debate("q1", ["BBB", "ABB", "AAB"]), debate("q2", ["BBB", "CBA", "AAA"])]
# Sim: q1: adv BBB, a1 AAA, a2 AAB      q2: adv BBB, a1 CBB, a2 AAA
# honest answers: r1 A A C A, r2 A A B A, r3 A B B A
#   accuracy    75, 75, 50;  conformity 0, 25, 50  -> round 2 is 25 points off on both
#   switch, 1st: q2 a1 C->B = 1/4 = 25;  switch, later (q1 a1, q1 a2, q2 a2 off B): q1 a2 = 1/3
#   vote: r1 66.7; r2 q1 A, q2 B -> 50; r3 q1 B, q2 B -> 0
SIM = [
    debate("q1", ["BBB", "AAA", "AAB"], model="sim:p"),
    debate("q2", ["BBB", "CBB", "AAA"], model="sim:p"),
]


def cell(res: dict, stat: str, rnd: int) -> dict:
    hits = [c for c in res["cells"] if c["stat"] == stat and c["round"] == rnd]
    assert len(hits) == 1, (stat, rnd, res["cells"])
    return hits[0]


def test_per_round_values_match_the_hand_computed_ones() -> None:
    res = compare_curves(SIM, REAL, "m", reps=200)
    want = {
        "accuracy": ([0.75, 0.75, 0.5], [0.75, 0.5, 0.5]),
        "conformity": ([0.0, 0.25, 0.5], [0.0, 0.5, 0.5]),
        "vote_accuracy": ([2 / 3, 0.5, 0.0], [2 / 3, 0.0, 0.5]),
    }
    for stat, (sim, real) in want.items():
        for r in (1, 2, 3):
            c = cell(dict(res), stat, r)
            assert c["sim"] == pytest.approx(sim[r - 1]) and c["real"] == pytest.approx(real[r - 1]), (
                stat,
                r,
            )
    first, later = cell(dict(res), "switch_first", 2), cell(dict(res), "switch_later", 3)
    assert (first["sim"], first["real"], first["n_sim"], first["n_real"]) == (0.25, 0.5, 4, 4)
    assert later["sim"] == pytest.approx(1 / 3) and later["real"] == 0.5
    assert (later["n_sim"], later["n_real"]) == (3, 2)
    # a switch at the first exposure exists only in round 2 here, a later one only in round 3
    assert {c["round"] for c in res["cells"] if c["stat"] == "switch_first"} == {2}
    assert {c["round"] for c in res["cells"] if c["stat"] == "switch_later"} == {3}
    assert res["rounds"] == 3
    assert (res["sim"]["debates"], res["sim"]["questions"], res["sim"]["honest_answers"]) == (2, 2, 12)
    assert res["real"]["models"] == ["m"] and res["sim"]["models"] == ["sim:p"]


def test_moves_count_where_each_exposed_honest_agent_goes_by_hand() -> None:
    # exposed from round 2 on (the adversary is adversarial from round 1); (previous -> this round):
    # real q1 a1 A->B, B->B; q1 a2 A->A, A->B; q2 a1 C->B, B->A; q2 a2 A->A, A->A
    #   gold: 3 stay, 2 to the target; target: 1 to gold, 1 stays; other: 1 to the target
    # sim  q1 a1 A->A, A->A; q1 a2 A->A, A->B; q2 a1 C->B, B->B; q2 a2 A->A, A->A
    #   gold: 5 stay, 1 to the target; target: 1 stays; other: 1 to the target
    res = compare_curves(SIM, REAL, "m", reps=50)
    assert res["moves"]["classes"] == ["gold", "target", "other"]
    assert res["moves"]["real"] == [[3, 2, 0], [1, 1, 0], [0, 1, 0]]
    assert res["moves"]["sim"] == [[5, 1, 0], [0, 1, 0], [0, 1, 0]]
    text = format_curves(res)
    assert "from gold   (n 6 | 5): -> gold 83.3 | 60.0  -> target 16.7 | 40.0  -> other 0.0 | 0.0" in text
    assert "from other  (n 1 | 1): -> gold 0.0 | 0.0  -> target 100.0 | 100.0" in text
    # a side without an adversary's target has no moves to show
    calm = [debate("q3", ["AAA", "AAA", "ABA"], adv=None)]
    none = compare_curves(calm, calm, "m", reps=20)
    assert none["moves"]["real"] == [[0, 0, 0]] * 3 and "where exposed" not in format_curves(none)


def test_round_two_is_off_by_25_points_and_the_target_is_missed() -> None:
    res = compare_curves(SIM, REAL, "m", reps=200)
    acc2, conf2 = cell(dict(res), "accuracy", 2), cell(dict(res), "conformity", 2)
    assert acc2["gap_points"] == pytest.approx(25.0) and acc2["within"] is False
    assert conf2["gap_points"] == pytest.approx(-25.0) and conf2["within"] is False
    assert all(cell(dict(res), s, r)["within"] for s in ("accuracy", "conformity") for r in (1, 3))
    # the other statistics carry no 8-point verdict, only the interval's
    assert cell(dict(res), "vote_accuracy", 2)["within"] is None
    assert (res["target_cells"], res["target_within"], res["target_met"]) == (6, 4, False)
    # both questions have real round-2 accuracy 1/2: every resample gives 50, so 75 is outside
    assert (acc2["real_lo"], acc2["real_hi"], acc2["inside"]) == (0.5, 0.5, False)
    # real conformity 0 of 4 in round 1: the exact interval [0, 1 - 0.025 ** (1/4)] holds the sim's 0
    conf1 = cell(dict(res), "conformity", 1)
    assert conf1["real_interval"] == "clopper-pearson" and conf1["inside"] is True
    assert conf1["real_hi"] == pytest.approx(1 - 0.025**0.25)
    text = format_curves(res)
    assert "75.0 | 50.0 [50.0, 50.0] OFF 25.0 OUT" in text
    assert "25.0 | 50.0 [50.0, 50.0] OFF 25.0 OUT" in text
    assert "honest accuracy and conformity within 8 points at every round: no (4 of 6 cells)" in text
    assert "sim  2 debates, 2 questions, 12 honest answers (sim:p)" in text
    assert "warning" not in text


def test_within_the_tolerance_is_inclusive_and_a_side_against_itself_meets_the_target() -> None:
    res = compare_curves(SIM, REAL, "m", reps=200, tolerance=0.25)  # round 2 is exactly 25 off
    assert (res["target_within"], res["target_met"]) == (6, True)
    same = compare_curves(REAL, REAL, "m", reps=200)
    assert same["target_met"] and all(c["inside"] for c in same["cells"])
    assert all(c["gap_points"] == 0 for c in same["cells"])
    text = format_curves(same)
    assert "within 8 points at every round: yes (6 of 6 cells)" in text
    assert "75.0 | 75.0" in text and " ok in" in text


def test_a_small_simulated_side_gets_a_note_a_large_uniform_one_none() -> None:
    """Two simulated questions that disagree (q1's honest agents right in round 3, q2's split): the
    sim's own interval is tens of points wide, and the note names the widest target cell. Forty
    questions that all play alike have a zero-width interval: no note."""
    res = compare_curves(SIM, REAL, "m", reps=200)
    note = res["sim_precision_note"]
    assert note is not None and note.startswith("the simulated side has 2 questions")
    assert "benchmark.test_subset=null eval.size=2000" in note
    assert f"note: {note}" in format_curves(res)
    alike = [debate(f"q{i}", ["BBB", "AAA", "AAB"], model="sim:p") for i in range(40)]
    big = compare_curves(alike, REAL, "m", reps=200)
    assert big["sim_precision_note"] is None and "note:" not in format_curves(big)


def test_the_real_side_counts_only_the_honest_agents_of_its_model() -> None:
    other = debate("q3", ["BBB", "BBB", "BBB"], model="other")  # all on the target: would move every number
    res = compare_curves(SIM, [*REAL, other], "m", reps=200)
    assert cell(dict(res), "accuracy", 1)["real"] == 0.75 and res["real"]["questions"] == 3
    assert res["real"]["honest_answers"] == 12


def test_protocol_names_agents_rounds_adversaries_and_onsets() -> None:
    p = protocol(REAL)
    assert p == {"agents": [3], "rounds": [3], "adversaries": [1], "onsets": [1], "onset_sets": [[1]]}
    assert describe(p) == "agents=3 rounds=3, 1 adversary from round 1"
    assert override_for(p) == "agents=3 rounds=3 attack=maa"
    mad = Protocol(agents=[5], rounds=[3], adversaries=[2], onsets=[1, 2])  # onsets drawn, as attack=mad
    assert override_for(mad) == "agents=5 rounds=3 attack=mad"
    # MAD-Follower's own: an attacker from round 1 and a follower from round 2 in every debate
    source = Protocol(agents=[5], rounds=[3], adversaries=[2], onsets=[1, 2], onset_sets=[[1, 2]])
    assert override_for(source) == "agents=5 rounds=3 attack=mad attack.ordered_onsets=true"
    assert describe(source) == "agents=5 rounds=3, 2 adversaries, one from each of rounds 1/2"
    drawn = Protocol(
        agents=[5], rounds=[3], adversaries=[2], onsets=[1, 2], onset_sets=[[1, 1], [1, 2], [2, 2]]
    )
    w = protocol_warning(drawn, source)
    assert w is not None and "attack.ordered_onsets=true" in w
    odd = Protocol(agents=[4], rounds=[3], adversaries=[2], onsets=[3])  # no shipped attack runs it
    assert override_for(odd) == "agents=4 rounds=3 attack=maa attack.count=2 attack.onset_rounds=[3]"
    none = protocol([debate("q", ["AAA", "AAA", "AAA"], adv=None)])
    assert (
        describe(none) == "agents=3 rounds=3, no adversary"
        and override_for(none) == "agents=3 rounds=3 attack=none"
    )
    # where the adversary sits does not matter: the simulator draws it
    moved = [debate("q1", ["AAB", "BBB", "AAB"], adv=1)]
    assert protocol_warning(protocol(moved), p) is None


def test_a_protocol_mismatch_warns_with_both_protocols_and_the_fix_but_still_compares() -> None:
    late = [debate(d.question or "", ["BBB", "ABB", "AAB"], onset=2, model="sim:p") for d in REAL]
    res = compare_curves(late, REAL, "m", reps=200)
    w = res["protocol_warning"]
    assert w is not None
    assert "sim agents=3 rounds=3, 1 adversary from round 2" in w
    assert "real agents=3 rounds=3, 1 adversary from round 1" in w
    assert "run the sim with agents=3 rounds=3 attack=maa" in w
    assert format_curves(res).splitlines()[0] == f"warning: {w}"
    assert res["cells"]  # still compared
    # fewer rounds on one side: compared up to the shorter
    short = [debate("q1", ["BB", "AB", "AA"], model="sim:p"), debate("q2", ["BB", "CB", "AA"], model="sim:p")]
    res = compare_curves(short, REAL, "m", reps=200)
    assert res["rounds"] == 2 and {c["round"] for c in res["cells"]} == {1, 2}
    assert "sim agents=3 rounds=2" in str(res["protocol_warning"])
    assert "(compared up to round 2)" in str(res["protocol_warning"])
    # a real side of several protocols has no one override
    mixed = [*REAL, debate("q3", ["AAA", "AAA", "AAA"], adv=None)]
    w = protocol_warning(protocol(SIM), protocol(mixed))
    assert w is not None and "real agents=3 rounds=3, 0/1 adversaries from round 1" in w
    assert "the real side mixes protocols" in w


def test_an_empty_side_is_an_error() -> None:
    with pytest.raises(ValueError, match="no simulated debates in runs/x"):
        compare_curves([], REAL, sim_label="runs/x")
    with pytest.raises(ValueError, match="no real debates in real/y"):
        compare_curves(SIM, [], real_label="real/y")


def test_a_figure_suffix_on_the_plot_stem_is_dropped() -> None:
    assert figure_stem("out/gpt3.5.png") == Path("out/gpt3.5")
    assert figure_stem("out/gpt3.5") == Path("out/gpt3.5")


@pytest.mark.slow
def test_cli_curves_end_to_end(tmp_path: Path) -> None:
    """A tiny method=debate run in the source's protocol against the multi-agent-attack fixture."""
    run = tmp_path / "run"
    p = tomacs(
        "evaluate",
        "method=debate",
        "attack=maa",
        "agents=3",
        "rounds=3",
        "benchmark=synthetic",
        "eval.size=8",
        "embedder=hashing",
        f"hydra.run.dir={run}",
    )
    assert p.returncode == 0, p.stderr[-2000:]
    out, stem = tmp_path / "c" / "curves.json", tmp_path / "fig" / "curves"
    args = ["transcripts", "curves", "--sim", str(run), "--real", str(MAA_ADV), "--model", "gpt-3.5-turbo"]
    p = tomacs(*args, "--reps", "100", "--out", str(out), "--plot", str(stem))
    assert p.returncode == 0, p.stderr[-2000:]
    assert "warning" not in p.stdout  # the same protocol on both sides
    assert "protocol: sim agents=3 rounds=3, 1 adversary from round 1; real agents=3 rounds=3" in p.stdout
    assert "honest accuracy and conformity within 8 points at every round: " in p.stdout
    got = json.loads(out.read_text())
    assert got["rounds"] == 3 and got["real"]["debates"] == 3 and got["sim"]["debates"] == 8
    assert {(c["stat"], c["round"]) for c in got["cells"]} >= {
        (s, r) for s in ("accuracy", "conformity", "vote_accuracy") for r in (1, 2, 3)
    }
    acc1 = next(c for c in got["cells"] if c["stat"] == "accuracy" and c["round"] == 1)
    assert acc1["real"] == pytest.approx(5 / 6)  # the fixture's honest round-1 accuracy (stats: 83.3)
    assert got["target_cells"] == 6 and got["target_met"] == (got["target_within"] == 6)
    for suffix in (".png", ".pdf", ".svg", ".caption.txt"):
        assert Path(f"{stem}{suffix}").stat().st_size > 0, suffix
    assert str(MAA_ADV) in Path(f"{stem}.caption.txt").read_text()
    # the whole fixture mixes control debates (no adversary) in: one warning line, still compared
    p = tomacs("transcripts", "curves", "--sim", str(run), "--real", str(MAA), "--reps", "50")
    assert p.returncode == 0, p.stderr[-2000:]
    warn = [line for line in p.stdout.splitlines() if line.startswith("warning:")]
    assert len(warn) == 1 and "the real side mixes protocols" in warn[0]


def test_cli_curves_errors_are_one_line(tmp_path: Path) -> None:
    p = tomacs("transcripts", "curves", "--sim", str(tmp_path / "nope"), "--real", str(MAA))
    assert p.returncode != 0
    assert p.stderr.strip().count("\n") == 0 and "no such file or folder" in p.stderr
    p = tomacs("transcripts", "curves", "--sim", str(MAA), "--real", str(MAA), "--model", "gpt-9")
    assert p.returncode != 0
    assert p.stderr.strip().count("\n") == 0 and "no debate has honest agents of model 'gpt-9'" in p.stderr
