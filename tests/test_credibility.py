"""Credibility scoring: Shapley values, the update rule, aggregation, the judge, topologies, runs."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tomacs.backbones.base import GenerationReply
from tomacs.config import compose
from tomacs.credibility.decider import CrsConfig, CrsDecider
from tomacs.credibility.judge import fallback_contributions, parse_contributions, simulated_judge
from tomacs.credibility.scores import CredibilityState, update_scores
from tomacs.credibility.shapley import exact_shapley, monte_carlo_shapley, shapley
from tomacs.credibility.stream import separation_query
from tomacs.execution.centroid import centroid_choice, weighted_centroid
from tomacs.graphs import find_cycle
from tomacs.launch.run import run_job
from tomacs.methods.crs import credibility_chain, sia_edges
from tomacs.types import AdversaryPlan, AgentOutput, DecisionGraph, Episode, Question


# -- Shapley ----------------------------------------------------------------------------------
def glove(s: frozenset[int]) -> float:
    """Player 0 holds a left glove, players 1 and 2 right gloves; a pair is worth 1."""
    return 1.0 if 0 in s and (1 in s or 2 in s) else 0.0


def test_glove_game_hand_computed() -> None:
    # phi_0 = 2/3, phi_1 = phi_2 = 1/6 (textbook glove game)
    np.testing.assert_allclose(exact_shapley(glove, 3), [2 / 3, 1 / 6, 1 / 6], atol=1e-12)


def test_additive_game_gives_each_its_own_worth() -> None:
    w = [0.3, -0.2, 1.5, 0.0]
    np.testing.assert_allclose(exact_shapley(lambda s: sum(w[i] for i in s), 4), w, atol=1e-12)


def majority(weights: list[float], quota: float) -> Any:
    return lambda s: 1.0 if sum(weights[i] for i in s) >= quota else 0.0


@pytest.mark.parametrize("n", [1, 2, 5, 7])
def test_efficiency_symmetry_null_player(n: int) -> None:
    rng = np.random.default_rng(n)
    w = list(rng.integers(1, 4, size=n).astype(float))
    w[-1] = 0.0  # a null player: never changes any coalition's value
    if n >= 3:
        w[1] = w[0]  # symmetric players 0 and 1
    v = majority(w, quota=max(1.0, sum(w) / 2))
    phi = exact_shapley(v, n)
    assert math.isclose(phi.sum(), v(frozenset(range(n))) - v(frozenset()), abs_tol=1e-12)
    assert abs(phi[-1]) < 1e-12
    if n >= 3:
        assert math.isclose(phi[0], phi[1], abs_tol=1e-12)


def test_monte_carlo_converges_to_exact_on_six_players() -> None:
    v = majority([4, 3, 2, 1, 1, 1], quota=7)
    exact = exact_shapley(v, 6)
    mc = monte_carlo_shapley(v, 6, samples=4000, rng=np.random.default_rng(0))
    assert np.max(np.abs(mc - exact)) < 0.02
    assert math.isclose(mc.sum(), 1.0, abs_tol=1e-9)  # every permutation walk is efficient
    rough = monte_carlo_shapley(v, 6, samples=2, rng=np.random.default_rng(0))
    assert np.max(np.abs(rough - exact)) > 0.02  # the tolerance above is not vacuous


def test_shapley_switches_to_monte_carlo_beyond_exact_max() -> None:
    calls: list[frozenset[int]] = []

    def v(s: frozenset[int]) -> float:
        calls.append(s)
        return float(len(s) >= 6)

    shapley(v, 12, exact_max=10, samples=10, rng=np.random.default_rng(1))
    assert len(set(calls)) < 2**12 // 4  # sampled, not enumerated
    np.testing.assert_allclose(shapley(glove, 3, exact_max=10), exact_shapley(glove, 3))


# -- update rule --------------------------------------------------------------------------------
def test_update_rule_hand_computed_sequence() -> None:
    s = update_scores([0.5, 0.5], [0.75, 0.25], reward=1.0, eta=0.5)
    np.testing.assert_allclose(s, [0.6875, 0.5625])
    s = update_scores(s, [1.0, 0.0], reward=-1.0, eta=0.5)
    np.testing.assert_allclose(s, [0.34375, 0.5625])
    np.testing.assert_allclose(update_scores([0.9], [1.0], 1.0, 0.5), [1.0])  # clipped above
    np.testing.assert_allclose(update_scores([0.9], [1.0], -1.0, 3.0), [0.0])  # clipped below
    with pytest.raises(ValueError, match="reward"):
        update_scores([0.5], [1.0], 2.0, 0.5)


def test_state_round_trip_and_validation() -> None:
    st = CredibilityState(3, eta=0.5)
    st.update([0.5, 0.5, 0.0], 1.0)
    again = CredibilityState(3)
    again.load(json.loads(json.dumps(st.to_dict())))
    np.testing.assert_allclose(again.scores, st.scores)
    assert again.updates == 1
    with pytest.raises(ValueError, match="agents"):
        CredibilityState(2).load(st.to_dict())
    with pytest.raises(ValueError, match="init"):
        CredibilityState(2, init=1.5)


def test_separation_query() -> None:
    traj = [[0.5, 0.5, 0.5], [0.45, 0.5, 0.55], [0.5, 0.45, 0.65], [0.3, 0.4, 0.6]]
    # adversary 0, honest 1 and 2. Strictly below every honest agent: after queries 2 and 4, not 3,
    # so for good from 4. Below the honest mean: after 2, 3 and 4 (not 1), so from 2.
    assert separation_query(traj, [0], strict=True) == 4
    assert separation_query(traj, [0], strict=False) == 2
    assert separation_query(traj[:3], [0], strict=True) is None


# -- aggregation --------------------------------------------------------------------------------
E = np.array([[1.0, 0.0], [0.0, 1.0], [0.8, 0.6]])


@pytest.mark.parametrize(
    ("weights", "expected"),
    [([1, 0, 0], 0), ([0, 1, 0.5], 1), ([0, 0.2, 1], 2), ([0, 0, 0], 2), ([1, 1, 1], 2)],
)
def test_centroid_picks_the_hand_computed_output(weights: list[float], expected: int) -> None:
    assert centroid_choice(E, weights, np.random.default_rng(0)) == expected


def test_weighted_centroid_formula() -> None:
    np.testing.assert_allclose(weighted_centroid(E, [0, 1, 0.5]), np.array([0.4, 1.3]) / 3)


# -- judge --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"contributions": [0.5, 0.25, 0.25]}', [0.5, 0.25, 0.25]),
        ('Here:\n```json\n{"contributions": [0.2, 0.3, 0.52]}\n```', [x / 1.02 for x in (0.2, 0.3, 0.52)]),
        ("[1, 0, 0]", [1, 0, 0]),
        ('{"contributions": [0.5, 0.5]}', None),  # wrong length
        ('{"contributions": [0.7, -0.2, 0.5]}', None),  # negative
        ('{"contributions": [0.2, 0.2, 0.1]}', None),  # does not sum to 1
        ('{"contributions": ["a", 0.5, 0.5]}', None),
        ("Agent 1 did most of the work.", None),
        ("", None),
    ],
)
def test_parse_contributions(text: str, expected: list[float] | None) -> None:
    got = parse_contributions(text, 3)
    if expected is None:
        assert got is None
    else:
        assert got is not None
        np.testing.assert_allclose(got, expected)


def test_fallback_and_simulated_judge() -> None:
    np.testing.assert_allclose(fallback_contributions(["A", "B", "A", None], "A"), [0.5, 0, 0.5, 0])
    np.testing.assert_allclose(fallback_contributions(["A", "B"], "C"), [0.5, 0.5])
    exact = np.array([0.5, 0.5, 0.0])
    ok, erred = simulated_judge(exact, 0.0, np.random.default_rng(0))
    assert not erred and np.allclose(ok, exact)
    bad, erred = simulated_judge(exact, 1.0, np.random.default_rng(0))
    assert erred and math.isclose(bad.sum(), 1.0) and not np.allclose(bad, exact)


Q = Question(id="q", text="?", options=("a", "b", "c", "d"), answer="A", benchmark="t", kind="mc")


def episode(answers: list[str], final: str) -> Episode:
    outs = [
        AgentOutput(agent=i, round=1, text=f"Answer: {a}", answer=a, participated=True, behaviour="honest")
        for i, a in enumerate(answers)
    ]
    ep = Episode(
        question=Q,
        plan=AdversaryPlan(adversaries=(), onsets={}, target=None),
        rounds=[outs],
        graphs=[None],
        decision=DecisionGraph(voters=list(range(len(answers))), weights=None, mode="vote"),
    )
    ep.final_answer, ep.correct = final, final == Q.answer
    return ep


class ScriptedJudge:
    def __init__(self, text: str) -> None:
        self.text = text
        self.calls = 0

    async def generate(self, requests: list[Any]) -> list[GenerationReply]:
        self.calls += len(requests)
        assert requests[0].kind == "judge" and "Dialogue log" in requests[0].messages[-1]["content"]
        return [GenerationReply(text=self.text, prompt_tokens=10, completion_tokens=5) for _ in requests]


@pytest.mark.parametrize(
    ("reply", "source", "csc"),
    [
        ('{"contributions": [0.6, 0.4, 0.0]}', "judge", [0.6, 0.4, 0.0]),
        ("I think agent 0 was best.", "judge_fallback", [0.5, 0.5, 0.0]),
    ],
)
def test_llm_judge_and_its_counted_fallback(reply: str, source: str, csc: list[float]) -> None:
    judge = ScriptedJudge(reply)
    d = CrsDecider(CrsConfig(contribution="judge", eta=1.0), 3, ["r"] * 3, 0, judge, simulated=False)
    ep = episode(["A", "A", "B"], "A")
    asyncio.run(d.learn(ep, "eval", 0))
    assert judge.calls == 1 and ep.extra["crs"]["source"] == source
    np.testing.assert_allclose(ep.extra["crs"]["csc"], csc)
    np.testing.assert_allclose(d.state.scores, 0.5 * (1 + np.array(csc)))  # r = +1, eta = 1
    assert d.counters["judge_fallbacks"] == (source == "judge_fallback")


def test_shapley_contributions_of_the_output_game() -> None:
    """Equal scores, answers A A B, final A (correct). v(S) = P(S's vote elects A), ties broken
    uniformly: v(0) = v(1) = 1, v(2) = 0, v(01) = 1, v(02) = v(12) = 1/2, v(012) = 1.
    phi_0 = 1/3 [v(0)] + 1/6 [v(01)-v(1)] + 1/6 [v(02)-v(2)] + 1/3 [v(012)-v(12)] = 1/3+0+1/12+1/6 = 7/12,
    phi_1 = 7/12 by symmetry, phi_2 = 1 - 7/6 = -1/6."""
    d = CrsDecider(CrsConfig(eta=0.5), 3, ["r"] * 3, 0, None, simulated=True)
    ep = episode(["A", "A", "B"], "A")
    asyncio.run(d.learn(ep, "eval", 0))
    np.testing.assert_allclose(ep.extra["crs"]["csc"], [7 / 12, 7 / 12, -1 / 6], atol=1e-7)
    assert d.state.scores[0] > 0.5 and d.state.scores[2] <= 0.5
    wrong = episode(["B", "B", "A"], "B")
    asyncio.run(d.learn(wrong, "eval", 0))  # wrong answer: its supporters lose credibility
    assert wrong.extra["crs"]["reward"] == -1.0
    assert d.state.scores[0] < ep.extra["crs"]["after"][0]


def test_decayed_scores_still_weigh_relative_to_each_other() -> None:
    """After a long losing stream scores can be ~1e-30; the vote must still follow the larger one
    (absolute tolerances would call every answer tied)."""
    d = CrsDecider(CrsConfig(), 3, ["r"] * 3, 0, None, simulated=True)
    d.state.scores = np.array([1e-30, 1e-31, 1e-31])
    dec = d.decision_graph(DecisionGraph(voters=[0, 1, 2]))
    np.testing.assert_allclose(dec.weights, [1.0, 0.1, 0.1])
    assert dec.credibility == [1e-30, 1e-31, 1e-31]
    d.state.scores = np.zeros(3)
    assert d.decision_graph(DecisionGraph(voters=[0, 1, 2])).weights == [1.0, 1.0, 1.0]


# -- topologies ---------------------------------------------------------------------------------
def test_sia_graphs_are_dags_with_at_most_m_links() -> None:
    for seed in range(50):
        edges = sia_edges(5, 6, np.random.default_rng(seed))
        assert find_cycle(list(range(5)), edges) is None and 1 <= len(edges) <= 6
        assert len({frozenset(e) for e in edges}) == len(edges)  # one direction per pair
    assert sia_edges(5, 6, np.random.default_rng(3)) == sia_edges(5, 6, np.random.default_rng(3))


def test_credibility_chain_orders_by_scores() -> None:
    assert credibility_chain(np.array([0.1, 0.9, 0.5, 0.5])) == [(1, 2), (2, 3), (3, 0)]


# -- runs on the simulator ----------------------------------------------------------------------
def crs_run(tmp_path: Path, *extra: str, size: int = 40) -> dict[str, Any]:
    cfg = compose(
        [
            "method=crs",
            "agents=5",
            "rounds=2",
            "attack=crs3of5",
            f"eval.size={size}",
            "eval.batch_size=4",
            *extra,
        ]
    )
    return run_job(cfg, "evaluate", tmp_path)


def test_adversaries_fall_below_honest_agents_on_a_seeded_stream(tmp_path: Path) -> None:
    res = crs_run(tmp_path / "a", "crs.contribution=judge", "crs.judge_error_rate=0.2")
    adv = res["credibility"]["persistent_adversaries"]
    scores = np.array(res["credibility"]["scores"])
    honest = [i for i in range(5) if i not in adv]
    assert len(adv) == 3 and scores[adv].max() < scores[honest].min()
    assert res["metrics"]["crs_separation_query"] is not None
    assert res["metrics"]["crs_contribution_sources"].get("judge_sim_error", 0) > 0
    # with eta = 0 nothing is learned: every score stays at its default, and accuracy drops
    frozen = crs_run(tmp_path / "b", "crs.eta=0")
    assert frozen["credibility"]["scores"] == [0.5] * 5
    assert frozen["metrics"]["acc"] < res["metrics"]["acc"]


def test_credibility_resumes_with_the_query_stream(tmp_path: Path) -> None:
    full = crs_run(tmp_path / "full", "method.topology=chain", size=12)
    part = tmp_path / "part"
    crs_run(part, "method.topology=chain", size=12)
    lines = (part / "episodes.jsonl").read_text().splitlines()
    (part / "episodes.jsonl").write_text("\n".join(lines[:5]) + "\n")
    (part / "results.json").unlink()
    res = crs_run(part, "method.topology=chain", size=12)
    assert res["metrics"]["resumed_questions"] == 5
    assert res["credibility"]["scores"] == full["credibility"]["scores"]
    assert res["metrics"]["acc"] == full["metrics"]["acc"]


def test_decision_crs_works_with_other_methods(tmp_path: Path) -> None:
    res = run_job(
        compose(["method=random", "attack=gt50", "decision=crs", "eval.size=8", "eval.batch_size=4"]),
        "evaluate",
        tmp_path,
    )
    assert res["decision"] == "crs" and res["metrics"]["crs_updates"] == 8
    ep = json.loads((tmp_path / "episodes.jsonl").read_text().splitlines()[0])
    assert ep["decision"]["credibility"] == [0.5] * 6 and ep["decision"]["weights"] == [1.0] * 6
    assert len(ep["crs"]["after"]) == 6
