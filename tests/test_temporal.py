"""Temporal messages: a receiver reads a sender's previous-round output (debate-style edges).

Checked end to end through the one executor with a scripted backbone whose answers change every
round, so a message that carried the sender's current output instead would fail the tests.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tomacs.agents.adversary import AdversarySchedule
from tomacs.agents.prompts import agent_messages, format_message
from tomacs.backbones.base import GenerationReply, GenerationRequest
from tomacs.config import compose
from tomacs.execution.executor import Executor, ExecutorConfig
from tomacs.graphs import all_pairs, complete_dag, constrain, constrain_round, random_pairs, reachable_filter
from tomacs.launch.run import run_job
from tomacs.methods.base import Method, MethodContext
from tomacs.methods.registry import build_method
from tomacs.methods.static import STATIC_METHODS
from tomacs.metrics import summarize
from tomacs.serialize import episode_from_dict
from tomacs.sim.backbone import SimBackbone
from tomacs.types import DecisionGraph, Message, Question, RoundGraph

Q = Question(
    id="q1", text="Which letter?", options=("a", "b", "c", "d"), answer="B", benchmark="t", kind="mc"
)
ROUND_ANSWER = {1: "A", 2: "B", 3: "C", 4: "D"}  # honest answers change every round


class ByRound:
    """Honest agents answer a round-dependent letter; adversaries their target."""

    name = "by-round"

    def __init__(self) -> None:
        self.requests: list[GenerationRequest] = []

    async def generate(self, requests: list[GenerationRequest]) -> list[GenerationReply]:
        out = []
        for r in requests:
            self.requests.append(r)
            ans = r.target if r.behaviour == "adversarial" else ROUND_ANSWER.get(r.round, "A")
            out.append(
                GenerationReply(
                    text=f"agent {r.agent} says so in round {r.round}.\nAnswer: {ans}",
                    prompt_tokens=1,
                    completion_tokens=1,
                )
            )
        return out

    def stats(self) -> dict:
        return {}

    async def aclose(self) -> None:
        return None


class Fixed(Method):
    name = "fixed"

    def __init__(self, ctx: MethodContext, nodes: list[int], edges: list, temporal: list) -> None:
        super().__init__(ctx)
        self.nodes, self.edges, self.temporal = nodes, edges, temporal

    def act(self, state, t, history):  # noqa: ANN001
        return [
            RoundGraph(list(self.nodes), list(self.edges), temporal_edges=list(self.temporal))
            for _ in history
        ]

    def decide(self, state, history):  # noqa: ANN001
        return [DecisionGraph(voters=list(range(self.ctx.n_agents))) for _ in history]


def make(n: int = 3, rounds: int = 3, count: int = 0, onsets: tuple[int, ...] = (3,)):  # noqa: ANN201
    roles = [f"role{i}" for i in range(n)]
    bb = ByRound()
    sched = AdversarySchedule(n_agents=n, rounds=rounds, count=count, rate=None, onset_rounds=onsets)
    ex = Executor(ExecutorConfig(n, rounds, roles, seed=3), bb, sched)
    return ex, bb, MethodContext(n_agents=n, rounds=rounds, roles=roles, seed=3)


def reqs(bb: ByRound, agent: int, t: int) -> GenerationRequest:
    (r,) = [r for r in bb.requests if r.kind == "agent" and r.agent == agent and r.round == t]
    return r


# -- executor -----------------------------------------------------------------------------------
def test_receiver_gets_exactly_the_senders_previous_round_text() -> None:
    ex, bb, ctx = make(n=3, rounds=3)
    (ep,), _ = ex.run_batch([Q], Fixed(ctx, [0, 1, 2], [(0, 1)], [(2, 1)]), train=False, phase="eval")
    for t in (2, 3):
        r = reqs(bb, 1, t)
        spatial = [m for m in r.incoming if not m.temporal]
        temporal = [m for m in r.incoming if m.temporal]
        assert [m.sender for m in spatial] == [0] and [m.sender for m in temporal] == [2]
        before = ep.rounds[t - 2][2]  # o_2^{t-1}
        assert before.round == t - 1 and before.answer == ROUND_ANSWER[t - 1]
        assert temporal[0].text == format_message("role2", before.text, previous_round=True)
        assert temporal[0].answer == ROUND_ANSWER[t - 1] != ep.rounds[t - 1][2].answer
        assert spatial[0].answer == ep.rounds[t - 1][0].answer == ROUND_ANSWER[t]  # spatial: current
        prompt = r.messages[1]["content"]
        assert f"agent 2 says so in round {t - 1}." in prompt
        assert f"agent 2 says so in round {t}." not in prompt
        assert "Messages from other agents in the previous round:" in prompt
        assert "--- Message from role2 (previous round) ---" in prompt
        assert prompt.index("--- Message from role0 ---") < prompt.index("(previous round) ---")
    # receivers without temporal edges see none, and their prompts carry no previous-round section
    assert reqs(bb, 0, 2).incoming == [] and "previous round" not in reqs(bb, 0, 2).messages[1]["content"]
    assert ep.graphs[1] is not None and ep.graphs[1].temporal_edges == [(2, 1)]


def test_temporal_edges_may_form_cycles_and_senders_may_sit_out() -> None:
    ex, bb, ctx = make(n=3, rounds=3)
    # 0 <-> 1 both ways in time (a cycle only if they were spatial); 2 sits out rounds 2-3
    m = Fixed(ctx, [0, 1], [], [(0, 1), (1, 0), (2, 0)])
    (ep,), _ = ex.run_batch([Q], m, train=False, phase="eval")
    r = reqs(bb, 0, 3)
    assert [(m.sender, m.temporal) for m in r.incoming] == [(1, True), (2, True)]
    carried = ep.rounds[1][2]
    assert not carried.participated and carried.text == ep.rounds[0][2].text
    assert r.incoming[1].answer == ROUND_ANSWER[1]  # a sitting-out sender delivers its carried output


def test_persuasive_follows_the_round_that_produced_the_message() -> None:
    ex, bb, ctx = make(n=4, rounds=4, count=1, onsets=(3,))
    m = Fixed(ctx, [0, 1, 2, 3], [], all_pairs(4))
    (ep,), _ = ex.run_batch([Q], m, train=False, phase="eval")
    (adv,) = ep.plan.adversaries
    honest = next(i for i in range(4) if i != adv)
    by_round = {t: next(x for x in reqs(bb, honest, t).incoming if x.sender == adv) for t in (3, 4)}
    assert not by_round[3].persuasive  # round 2 output: still honest
    assert by_round[4].persuasive and by_round[4].answer == ep.plan.target  # round 3: adversarial
    assert "Please prioritize my answer" in by_round[4].text


@pytest.mark.parametrize(
    ("nodes", "temporal", "match"),
    [
        ([0, 1, 2], [(1, 1)], "self edge"),
        ([0, 1, 2], [(0, 3)], "outside"),
        ([0, 1, 2], [(-1, 0)], "outside"),
        ([0, 1], [(0, 2)], "does not take part"),
    ],
)
def test_bad_temporal_edges_are_errors(nodes: list[int], temporal: list, match: str) -> None:
    ex, _, ctx = make(n=3, rounds=2)
    with pytest.raises(RuntimeError, match=match):
        ex.run_batch([Q], Fixed(ctx, nodes, [], temporal), train=False, phase="eval")


def test_prompt_without_temporal_messages_is_unchanged_and_labels_them_otherwise() -> None:
    cur = Message(sender=0, role="Critic", text="I think A.\nAnswer: A", answer="A", persuasive=False)
    old = Message(
        sender=1, role="Critic", text="I thought C.\nAnswer: C", answer="C", persuasive=False, temporal=True
    )
    base = agent_messages(Q, "Critic", 2, [cur], "mine\nAnswer: B")[1]["content"]
    both = agent_messages(Q, "Critic", 2, [cur, old], "mine\nAnswer: B")[1]["content"]
    assert "previous round" not in base
    assert (
        both.replace(
            "\n\nMessages from other agents in the previous round:\n"
            "--- Message from Critic (previous round) ---\nI thought C.\nAnswer: C",
            "",
        )
        == base
    )
    only = agent_messages(Q, "Critic", 2, [old], None)[1]["content"]
    assert "Messages from other agents:\n" not in only and "(previous round) ---\nI thought C." in only
    text = format_message("Critic", "x", previous_round=True)
    assert format_message("Critic", text, previous_round=True) == text  # idempotent


# -- static topologies --------------------------------------------------------------------------
def _ctx(n: int = 4, **kw: object) -> MethodContext:
    return MethodContext(n_agents=n, rounds=4, roles=[f"r{i}" for i in range(n)], seed=0, **kw)  # type: ignore[arg-type]


def _graphs(method: Method, k: int = 3) -> list[list[RoundGraph]]:
    qs = [Question(f"q{i}", "?", ("a", "b"), "A", "t", "mc") for i in range(k)]
    state = method.begin(qs, train=False, rng=np.random.default_rng(0))
    return [method.act(state, t, [[] for _ in qs]) for t in range(2, 5)]


def test_debate_topology_shape() -> None:
    m = build_method("debate", _ctx(4), {"name": "debate", "temporal": "full"})
    for rnd in _graphs(m):
        for g in rnd:
            assert g.nodes == [0, 1, 2, 3] and g.edges == []
            assert sorted(g.temporal_edges) == [(i, j) for i in range(4) for j in range(4) if i != j]
    with pytest.raises(ValueError, match="temporal"):
        STATIC_METHODS["debate"](_ctx(4), temporal="none")


def test_debate_through_the_executor() -> None:
    ex, bb, ctx = make(n=4, rounds=3)
    m = STATIC_METHODS["debate"](ctx)
    ex.run_batch([Q], m, train=False, phase="eval")
    assert all(r.incoming == [] for r in bb.requests if r.round == 1)
    for i in range(4):
        inc = reqs(bb, i, 2).incoming
        assert sorted(x.sender for x in inc) == [j for j in range(4) if j != i]
        assert all(x.temporal and x.answer == ROUND_ANSWER[1] for x in inc)


def test_complete_temporal_mask_shape_and_code_rule() -> None:
    (g,) = _graphs(STATIC_METHODS["complete"](_ctx(4)), k=1)[0]
    assert g.edges == complete_dag(range(4)) and g.temporal_edges == []  # default unchanged
    (g,) = _graphs(STATIC_METHODS["complete"](_ctx(4), temporal="full"), k=1)[0]
    assert g.edges == complete_dag(range(4))
    assert g.temporal_edges == [(i, j) for i in range(4) for j in range(4) if i != j]
    (g,) = _graphs(STATIC_METHODS["complete"](_ctx(4), temporal="full", temporal_rule="code"), k=1)[0]
    assert g.temporal_edges == [(i, j) for i in range(4) for j in range(4) if i < j]
    with pytest.raises(ValueError, match="temporal"):
        STATIC_METHODS["complete"](_ctx(4), temporal="random")
    with pytest.raises(ValueError, match="temporal_rule"):
        STATIC_METHODS["complete"](_ctx(4), temporal="full", temporal_rule="dag")


def test_random_temporal_mask_leaves_spatial_draws_alone() -> None:
    base = _graphs(STATIC_METHODS["random"](_ctx(6)), k=40)
    temp = _graphs(STATIC_METHODS["random"](_ctx(6), temporal="random"), k=40)
    assert [[g.edges for g in r] for r in base] == [[g.edges for g in r] for r in temp]
    counts = [len(g.temporal_edges) for g in temp[0]]
    assert all(i != j for g in temp[0] for i, j in g.temporal_edges)
    assert 0.4 < np.mean(counts) / 30 < 0.6  # p = 0.5 over 30 ordered pairs
    assert len({tuple(g.temporal_edges) for g in temp[0]}) > 30  # drawn per question


# -- budgets --------------------------------------------------------------------------------------
def test_constrain_round_shares_the_budget_spatial_first() -> None:
    spatial = complete_dag(range(4))
    s, t = constrain_round(spatial, all_pairs(4), None, 1, 1)
    assert s == constrain(spatial, None, 1, 1) == [(0, 1), (1, 2), (2, 3)]
    assert t == [(3, 0)]  # only agent 3 has out-budget and only agent 0 in-budget left
    s, t = constrain_round(spatial, [], None, 1, 1)
    assert s == constrain(spatial, None, 1, 1) and t == []
    mask = np.ones((4, 4))
    mask[3, 0] = 0
    assert constrain_round(spatial, all_pairs(4), mask, 1, 1)[1] == []  # the mask forbids both kinds
    s, t = constrain_round([], all_pairs(3), None, None, None)
    assert s == [] and t == all_pairs(3)


@pytest.mark.parametrize("budget", [1, 2])
def test_static_temporal_edges_respect_budgets(budget: int) -> None:
    for name, params in [
        ("complete", {"temporal": "full"}),
        ("random", {"temporal": "random"}),
        ("debate", {}),
    ]:
        rnd = _graphs(STATIC_METHODS[name](_ctx(6, in_budget=budget, out_budget=budget), **params), k=10)
        plain = _graphs(STATIC_METHODS[name](_ctx(6, in_budget=budget, out_budget=budget)), k=10)
        for g, p in zip(rnd[0], plain[0], strict=True):
            both = g.edges + g.temporal_edges
            assert max(np.bincount([i for i, _ in both], minlength=6)) <= budget
            assert max(np.bincount([j for _, j in both], minlength=6)) <= budget
            if name != "debate":
                assert g.edges == p.edges  # spatial edges keep their priority
        assert any(g.temporal_edges for g in rnd[0])


def test_reachable_filter_is_the_public_code_cycle_check() -> None:
    spatial = [(0, 1), (1, 2)]
    kept = reachable_filter([(0, 2), (2, 0), (1, 0), (0, 0), (2, 1), (1, 2)], spatial)
    assert kept == [(0, 2), (1, 2)]  # j -> ... -> i spatially, or i == j, is dropped
    assert random_pairs(3, 1.0, np.random.default_rng(0)) == all_pairs(3)


# -- simulator --------------------------------------------------------------------------------------
def _sim_request(incoming: list[Message]) -> GenerationRequest:
    q = Question("s1", "Which?", ("w", "x", "y", "z"), "A", "mmlu", "mc")
    return GenerationRequest(
        messages=[{"role": "user", "content": "?"}],
        question=q,
        kind="agent",
        agent=0,
        role="Critic",
        round=3,
        behaviour="honest",
        target=None,
        previous_answer="A",
        incoming=incoming,
        seed_key="k",
        sample_index=0,
    )


def test_sim_treats_a_temporal_message_like_a_spatial_one() -> None:
    sim = SimBackbone("mmlu", seed=0)

    def msgs(temporal: bool) -> list[Message]:
        return [
            Message(j, "Critic", "Answer: C", "C", persuasive=True, temporal=temporal) for j in range(1, 5)
        ]

    answers = {}
    for kind, incoming in [("none", []), ("spatial", msgs(False)), ("temporal", msgs(True))]:
        answers[kind] = [
            sim.decide_answer(_sim_request(incoming), np.random.default_rng(s)) for s in range(300)
        ]
    assert answers["temporal"] == answers["spatial"]  # same model, same draws
    assert answers["temporal"].count("C") > answers["none"].count("C") + 50  # and it does move answers
    assert (
        sim.generate_one(_sim_request(msgs(True)))
        .text.rstrip()
        .endswith(("Answer: A", "Answer: B", "Answer: C", "Answer: D"))
    )


# -- records --------------------------------------------------------------------------------------
def test_episode_round_trip_keeps_temporal_edges_and_metrics_count_them() -> None:
    ex, _, ctx = make(n=3, rounds=3)
    (ep,), _ = ex.run_batch([Q], Fixed(ctx, [0, 1, 2], [(0, 1)], [(2, 1), (1, 0)]), train=False, phase="eval")
    d = json.loads(json.dumps(ep.to_dict()))
    assert d["graphs"][1]["temporal_edges"] == [[2, 1], [1, 0]]
    back = episode_from_dict(d)
    assert [g.temporal_edges if g else None for g in back.graphs] == [
        None,
        [(2, 1), (1, 0)],
        [(2, 1), (1, 0)],
    ]
    assert back.to_dict() == d
    del d["graphs"][1]["temporal_edges"]  # files written before temporal edges existed
    assert episode_from_dict(d).graphs[1].temporal_edges == []
    m = summarize([ep], n_agents=3, rounds=3)
    assert m["edges_per_round"] == 1.0 and m["temporal_edges_per_round"] == 2.0


def test_debate_job_writes_temporal_edges(tmp_path: Path) -> None:
    cfg = compose(["method=debate", "eval.size=4", "attack=lt50"])
    res = run_job(cfg, "evaluate", tmp_path)
    assert res["metrics"]["temporal_edges_per_round"] == 30.0 and res["metrics"]["edges_per_round"] == 0.0
    first = json.loads((tmp_path / "episodes.jsonl").read_text().splitlines()[0])
    assert len(first["graphs"][1]["temporal_edges"]) == 30 and first["graphs"][1]["edges"] == []


def test_propagation_degree_counts_temporal_neighbours() -> None:
    from tomacs.analysis.propagation import graph_degrees

    g = RoundGraph([0, 1, 2], [(0, 1)], temporal_edges=[(2, 0), (1, 0)])
    assert graph_degrees(g, 3) == ([2, 1, 1], [1, 1, 1])
