"""Metrics on hand-built episodes whose values are computed by hand."""

from __future__ import annotations

import math

import pytest

from tomacs.metrics import adacc_counts, predicted_adversarial, summarize, unparsed_warning
from tomacs.types import AdversaryPlan, AgentOutput, DecisionGraph, Episode, Question, RoundGraph

N, T = 4, 2
Q = Question(id="q", text="?", options=("a", "b", "c", "d"), answer="A", benchmark="t", kind="mc")


def _episode(
    adversaries: dict[int, int],
    voters: list[int],
    *,
    weights: list[float] | None = None,
    correct: bool = True,
    tokens: tuple[int, int] = (100, 20),
    decision_tokens: tuple[int, int] = (0, 0),
    round2_participants: tuple[int, ...] = (0, 1, 2, 3),
    answer: str | None = "A",
    cached: bool = False,
) -> Episode:
    rounds = []
    for t in (1, 2):
        outs = []
        for i in range(N):
            took_part = t == 1 or i in round2_participants
            outs.append(
                AgentOutput(
                    agent=i,
                    round=t,
                    text="x",
                    answer=answer,
                    participated=took_part,
                    behaviour="honest",
                    prompt_tokens=tokens[0] if took_part else 0,
                    completion_tokens=tokens[1] if took_part else 0,
                    cached=cached and took_part,
                )
            )
        rounds.append(outs)
    plan = AdversaryPlan(adversaries=tuple(sorted(adversaries)), onsets=dict(adversaries), target="B")
    graph = RoundGraph(nodes=list(round2_participants), edges=[(0, 1), (1, 2)])
    return Episode(
        question=Q,
        plan=plan,
        rounds=rounds,
        graphs=[None, graph],
        decision=DecisionGraph(voters=voters, weights=weights),
        final_answer="A" if correct else "B",
        correct=correct,
        decision_tokens=decision_tokens,
    )


def test_oracle_detector_scores_one_and_baseline_is_one_minus_k_over_n() -> None:
    eps = [_episode({1: 2}, [0, 2, 3]), _episode({0: 2, 3: 1}, [1, 2])]
    m = summarize(eps, N, T)
    assert m["adacc"] == 1.0 and m["adacc_balanced"] == 1.0
    assert m["adacc_tpr"] == 1.0 and m["adacc_tnr"] == 1.0
    assert m["adacc_baseline"] == pytest.approx(((1 - 1 / 4) + (1 - 2 / 4)) / 2)  # 0.625


def test_all_reliable_detector_equals_the_baseline() -> None:
    eps = [_episode({1: 2}, [0, 1, 2, 3]), _episode({0: 2, 3: 1}, [0, 1, 2, 3])]
    m = summarize(eps, N, T)
    assert m["adacc"] == pytest.approx(m["adacc_baseline"]) == pytest.approx(0.625)
    assert m["adacc_tpr"] == 0.0 and m["adacc_tnr"] == 1.0
    assert m["adacc_balanced"] == 0.5


def test_mixed_detector_by_hand() -> None:
    # truth [0,1,0,0]; excluded {1,2}: TP=1 (agent 1), FP=1 (agent 2), TN=2
    # truth [1,0,0,1]; excluded {0}:   TP=1, FN=1 (agent 3), TN=2
    eps = [_episode({1: 2}, [0, 3]), _episode({0: 2, 3: 2}, [1, 2, 3])]
    c = adacc_counts(eps, N, T)
    assert (c.tp, c.fp, c.tn, c.fn) == (2, 1, 4, 1)
    m = summarize(eps, N, T)
    assert m["adacc"] == pytest.approx(6 / 8)
    assert m["adacc_tpr"] == pytest.approx(2 / 3) and m["adacc_tnr"] == pytest.approx(4 / 5)
    assert m["adacc_balanced"] == pytest.approx((2 / 3 + 4 / 5) / 2)


def test_onset_after_last_round_is_not_adversarial_and_zero_weight_voter_is_excluded() -> None:
    ep = _episode({2: T + 1}, [0, 1, 2, 3], weights=[1.0, 1.0, 0.0, 0.5])
    assert predicted_adversarial(ep, N) == [0, 0, 1, 0]
    m = summarize([ep], N, T)
    # nobody is adversarial (onset 3 > T=2): the excluded agent 2 is a false positive
    assert m["adacc"] == pytest.approx(3 / 4) and m["adacc_baseline"] == 1.0
    assert math.isnan(m["adacc_tpr"])  # no adversary anywhere: TPR undefined
    assert m["adacc_balanced"] == pytest.approx(m["adacc_tnr"]) == pytest.approx(3 / 4)


def test_missing_decision_graph_counts_everyone_as_participating() -> None:
    ep = _episode({1: 1}, [0])
    ep.decision = None
    assert predicted_adversarial(ep, N) == [0, 0, 0, 0]


def test_token_arithmetic() -> None:
    # ep1: round 1 all 4 agents, round 2 only agents 0,1 -> 6 calls x (100 prompt, 20 completion),
    #      plus a decision call (50, 10): prompt 650, completion 130 -> per agent-round /8
    # ep2: 8 calls x (10, 5), no decision tokens: prompt 80, completion 40
    ep1 = _episode({}, [0, 1, 2, 3], decision_tokens=(50, 10), round2_participants=(0, 1))
    ep2 = _episode({}, [0, 1, 2, 3], tokens=(10, 5))
    m = summarize([ep1, ep2], N, T)
    assert m["token_prompt"] == pytest.approx((650 / 8 + 80 / 8) / 2)
    assert m["token_completion"] == pytest.approx((130 / 8 + 40 / 8) / 2)
    assert m["token"] == pytest.approx(m["token_prompt"] + m["token_completion"])
    assert m["tokens_total"] == 650 + 130 + 80 + 40
    assert m["llm_calls"] == 6 + 8  # no decision_output -> no decision call counted
    assert m["participation_rate"] == pytest.approx((2 / 4 + 4 / 4) / 2)
    assert m["edges_per_round"] == 2.0


def test_accuracy_unparsed_cache_and_cost() -> None:
    e1 = _episode({}, [0], correct=True, answer=None, cached=True)
    e2 = _episode({}, [0], correct=False)
    e2.final_answer = None
    e2.extra["cost_usd"] = 0.25
    m = summarize([e1, e2], N, T)
    assert m["acc"] == 0.5 and m["n_queries"] == 2
    assert m["unparsed_answers"] == 8 and m["unparsed_rate"] == pytest.approx(8 / 16)
    assert m["unparsed_final"] == 1
    assert m["cache_hits"] == 8
    assert m["cost_usd"] == 0.25 and m["cost_usd_per_query"] == 0.125


def test_unparsed_rates_per_agent_behaviour_and_decision() -> None:
    # agent 2 never answers in a readable form; agent 3 is an adversary and misses once in 4 calls;
    # agent 1 sits out round 2 of the first episode, so it has 3 calls
    e1 = _episode({3: 1}, [0, 1, 2], round2_participants=(0, 2, 3))
    e2 = _episode({3: 1}, [0, 1, 2])
    for ep in (e1, e2):
        for outs in ep.rounds:
            outs[2].answer = None
            outs[3].behaviour = "adversarial"
    e1.rounds[0][3].answer = None
    e1.decision_output = AgentOutput(
        agent=-1, round=3, text="A or B", answer=None, participated=True, behaviour="honest"
    )
    e2.decision_output = AgentOutput(
        agent=-1, round=3, text="Answer: A", answer="A", participated=True, behaviour="honest"
    )
    m = summarize([e1, e2], N, T)
    assert m["agent_outputs"] == 15 and m["unparsed_answers"] == 5
    assert m["unparsed_rate"] == pytest.approx(5 / 15)
    assert [m[f"unparsed_rate_agent{i}"] for i in range(N)] == [0.0, 0.0, 1.0, 0.25]
    assert m["unparsed_rate_honest"] == pytest.approx(4 / 11)
    assert m["unparsed_rate_adversarial"] == pytest.approx(1 / 4)
    assert m["unparsed_rate_decision"] == 0.5
    line = unparsed_warning(m, ["Expert", "Critic", "Doctor", "Historian"])
    assert line is not None
    assert "5 of 15 agent answers unparsed (33.3 %" in line
    assert "agent 2 (Doctor) 100.0 %" in line and "agent 3 (Historian) 25.0 %" in line
    assert "decision agent 50.0 %" in line and "agent 0" not in line and "agent 1" not in line


def test_unparsed_warning_threshold_is_five_percent() -> None:
    base = {"unparsed_answers": 1.0, "agent_outputs": 20.0, "unparsed_rate": 0.05}
    # exactly 5 % everywhere: no warning; one agent above it: warned even though the run is at 5 %
    assert (
        unparsed_warning({**base, "unparsed_rate_agent0": 0.05, "unparsed_rate_decision": float("nan")})
        is None
    )
    line = unparsed_warning({**base, "unparsed_rate_agent0": 0.0, "unparsed_rate_agent1": 0.1})
    assert line is not None and "agent 1 10.0 %" in line and "agent 0" not in line
    line = unparsed_warning({"unparsed_answers": 3.0, "agent_outputs": 40.0, "unparsed_rate": 0.075})
    assert (
        line is not None and "7.5 %" in line and "the run as a whole" in line
    )  # results from before per-agent keys
    assert math.isnan(summarize([_episode({}, [0])], N, T)["unparsed_rate_decision"])  # no LLM decision agent


def test_empty_and_invalid_inputs() -> None:
    m = summarize([], N, T)
    assert m["n_queries"] == 0 and math.isnan(m["acc"]) and math.isnan(m["adacc"])
    with pytest.raises(ValueError):
        summarize([], 0, T)
