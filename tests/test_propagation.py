"""CAPE/TCTE (eib-learner Eqs. 5-6) on a scripted backbone with hand-computed values, and end to end."""

from __future__ import annotations

import io
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from tomacs.agents.adversary import AdversarySchedule
from tomacs.analysis.propagation import (
    episode_degrees,
    forced_text,
    make_force,
    measure_propagation,
    propagation_table,
    wrong_target,
)
from tomacs.backbones.base import GenerationReply, GenerationRequest
from tomacs.benchmarks.parsing import parse_answer
from tomacs.execution.executor import Executor, ExecutorConfig
from tomacs.methods.base import Method, MethodContext
from tomacs.types import DecisionGraph, Question, RoundGraph

OPTS = ("a", "b", "c", "d")
Q1 = Question(id="q1", text="Which letter?", options=OPTS, answer="B", benchmark="t", kind="mc")
Q2 = Question(id="q2", text="Which other letter?", options=OPTS, answer="B", benchmark="t", kind="mc")
ROLES = ["Critic", "Mathematician", "Doctor"]


class MajorityCopy:
    """Round 1: the scripted first answer of the question; later: the majority of the incoming
    answers, or the own previous answer when nothing comes in (ties cannot occur in a chain)."""

    name = "majority-copy"

    def __init__(self, first: dict[str, str]) -> None:
        self.first = first
        self.requests: list[GenerationRequest] = []

    async def generate(self, requests: list[GenerationRequest]) -> list[GenerationReply]:
        out = []
        for r in requests:
            self.requests.append(r)
            votes = [m.answer for m in r.incoming if m.answer is not None]
            if r.round == 1:
                ans = self.first[r.question.id]
            elif votes:
                ans = max(sorted(set(votes)), key=votes.count)
            else:
                ans = r.previous_answer
            out.append(
                GenerationReply(text=f"agent {r.agent}.\nAnswer: {ans}", prompt_tokens=1, completion_tokens=1)
            )
        return out

    def stats(self) -> dict:
        return {}

    async def aclose(self) -> None:
        return None


class Chain3(Method):
    """0 -> 1 -> 2 in every round; all three vote."""

    name = "chain3"

    def act(self, state, t, history):  # noqa: ANN001
        return [RoundGraph(nodes=[0, 1, 2], edges=[(0, 1), (1, 2)]) for _ in history]

    def decide(self, state, history):  # noqa: ANN001
        return [DecisionGraph(voters=[0, 1, 2]) for _ in history]


def make(rounds: int = 2) -> tuple[Executor, MajorityCopy, Chain3]:
    # q1: everyone starts right (B); q2: everyone starts wrong (C)
    bb = MajorityCopy({"q1": "B", "q2": "C"})
    sched = AdversarySchedule(n_agents=3, rounds=rounds, count=0, rate=None)
    ex = Executor(ExecutorConfig(3, rounds, ROLES, seed=3), bb, sched)
    ctx = MethodContext(n_agents=3, rounds=rounds, roles=ROLES, seed=3)
    return ex, bb, Chain3(ctx)


def test_cape_tcte_hand_computed_on_a_chain() -> None:
    ex, _, m = make()
    res = measure_propagation(ex, m, [Q1, Q2])
    # Baseline: q1 all B -> vote B, correct; q2 all C -> vote C, wrong. y_orig = (1, 0).
    assert res["baseline"]["correct"] == 1
    # Round 2 on 0 -> 1 -> 2 (1 copies 0, 2 copies 1), vote over (0, 1, 2):
    #   force 0 := X: (X, X, X) -> X      -> flips q1 (wrong) / q2 (right)
    #   force 1 := X: (B|C, X, X) -> X    -> flips
    #   force 2 := X: (B, B, X) -> B      -> never flips (2 is outvoted)
    # wrong: flips only on q1 (q2 stays wrong); right: only on q2 (q1 stays right).
    # CAPE per agent, all questions = (1/2, 1/2, 0); paper set (one question) = (1, 1, 0).
    for mode in ("wrong", "right"):
        assert [a[mode]["cape_all"] for a in res["agents"]] == [0.5, 0.5, 0.0]
        assert [a[mode]["cape_paper"] for a in res["agents"]] == [1.0, 1.0, 0.0]
        assert [a[mode]["n_paper"] for a in res["agents"]] == [1, 1, 1]
    # degrees on the chain: d = (1, 2, 1); out-degrees (1, 1, 0) -> floored at 1: (1, 1, 1)
    assert [a["degree"] for a in res["agents"]] == [1.0, 2.0, 1.0]
    assert [a["out_degree"] for a in res["agents"]] == [1.0, 1.0, 0.0]
    # Eq. 6 on the flipped question: TCTE = 1/3 (1/sqrt(1) + 1/sqrt(2) + 0) = 0.569036
    # on the unflipped one 0, so over both questions 0.284518; out-degree: 1/3 (1 + 1 + 0) = 2/3
    tcte_paper = (1 + 1 / math.sqrt(2)) / 3
    for mode in ("wrong", "right"):
        t = res["tcte"][mode]
        assert t["paper"] == pytest.approx(tcte_paper) and t["paper"] == pytest.approx(0.569036, abs=1e-6)
        assert t["all"] == pytest.approx(tcte_paper / 2)
        assert t["out_paper"] == pytest.approx(2 / 3)
        assert [a[mode]["cape_norm_paper"] for a in res["agents"]] == pytest.approx(
            [1.0, 1 / math.sqrt(2), 0.0]
        )
    assert (
        res["agents"][0]["wrong"]["flips_to_wrong"] == 1 and res["agents"][0]["right"]["flips_to_right"] == 1
    )
    assert res["questions"][0]["cf_correct"]["wrong"] == [False, False, True]
    con = Console(record=True, width=140, file=io.StringIO())
    con.print(propagation_table(res))
    shown = con.export_text()
    assert "TCTE" in shown and "0.569" in shown


def test_from_round_two_keeps_round_one_free() -> None:
    # forcing only from round 2 changes nothing here (round 1 answers are never sent), so the same
    # flips as from round 1: the intervention is on the outputs that travel
    ex, _, m = make()
    res = measure_propagation(ex, m, [Q1, Q2], modes=("wrong",), from_round=2)
    assert [a["wrong"]["cape_all"] for a in res["agents"]] == [0.5, 0.5, 0.0]
    with pytest.raises(ValueError, match="from_round"):
        measure_propagation(ex, m, [Q1], from_round=3)


def test_forced_agent_makes_no_backbone_call_and_sends_its_answer() -> None:
    ex, bb, m = make()
    ex.run_batch([Q1, Q2], m, False, "eval")
    assert len(bb.requests) == 2 * 3 * 2  # baseline: 2 questions x 3 agents x 2 rounds
    bb.requests.clear()
    (ep1, ep2), _ = ex.run_batch([Q1, Q2], m, False, "eval", force={1: make_force(ex, 1, "wrong", 1)})
    assert len(bb.requests) == 2 * 2 * 2 and all(r.agent != 1 for r in bb.requests)
    x = wrong_target(Q1, ex.plan_for(Q1, "eval"), 3)
    assert x != "B"
    out = ep1.rounds[1][1]
    assert out.answer == x and out.prompt_tokens == 0 and out.behaviour == "honest"
    to2 = [r for r in bb.requests if r.agent == 2 and r.round == 2 and r.question.id == "q1"][0]
    assert [(msg.sender, msg.answer, msg.persuasive) for msg in to2.incoming] == [(1, x, False)]
    assert ep1.final_answer == x and not ep1.correct
    # from round 2 only: agent 1 still answers in round 1
    bb.requests.clear()
    ex.run_batch([Q1], m, False, "eval", force={1: make_force(ex, 1, "right", 2)})
    assert sorted((r.agent, r.round) for r in bb.requests) == [(0, 1), (0, 2), (1, 1), (2, 1), (2, 2)]


def test_sitting_out_agent_keeps_the_forced_output() -> None:
    ex, _, _ = make()

    class OnlyZero(Chain3):
        def act(self, state, t, history):  # noqa: ANN001
            return [RoundGraph(nodes=[0], edges=[]) for _ in history]

    m = OnlyZero(MethodContext(n_agents=3, rounds=2, roles=ROLES, seed=3))
    (ep,), _ = ex.run_batch([Q1], m, False, "eval", force={2: make_force(ex, 2, "wrong", 2)})
    r2 = ep.rounds[1][2]
    assert not r2.participated and r2.answer != "B" and ep.rounds[0][2].answer == "B"
    assert episode_degrees(ep, 3, 1) == ([0.0, 0.0, 0.0], [0.0, 0.0, 0.0])


def test_forced_text_parses_back_for_mc_and_numeric() -> None:
    qn = Question(
        id="n1",
        text="How many apples are 40 plus 2?",
        options=None,
        answer="42",
        benchmark="t",
        kind="numeric",
    )
    rng = np.random.default_rng(0)
    assert parse_answer(qn, forced_text(qn, "Mathematician", "41", rng)) == "41"
    assert parse_answer(Q1, forced_text(Q1, "Critic", "D", rng)) == "D"
    assert wrong_target(qn, ex_plan(), 0) != "42"


def ex_plan():  # noqa: ANN201
    from tomacs.types import AdversaryPlan

    return AdversaryPlan(adversaries=(), onsets={}, target=None)


@pytest.mark.slow
def test_cli_analyze_propagation_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "prop.json"
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "tomacs.cli",
            "analyze",
            "propagation",
            "method=chain",
            "eval.size=4",
            "agents=3",
            "rounds=2",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
    res = json.loads(out.read_text())
    assert res["backbone"] == "sim" and res["method"] == "chain" and res["n_questions"] == 4
    assert res["config"]["eval"]["size"] == 4 and len(res["agents"]) == 3
    for a in res["agents"]:
        for mode in ("wrong", "right"):
            assert 0.0 <= a[mode]["cape_all"] <= 1.0
            assert a[mode]["llm_calls"] == 4 * (3 * 2 - 2)  # the forced agent's 2 calls per question saved
    assert res["baseline"]["llm_calls"] == 4 * 3 * 2
    assert set(res["tcte"]) == {"wrong", "right"}
    assert "TCTE" in p.stdout
