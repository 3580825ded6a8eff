"""Decision rules (tomacs/execution/decision.py) on hand-made ballots, and where `decision=auto`
becomes a rule."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import numpy as np
import pytest

from tomacs.backbones.base import GenerationReply, GenerationRequest
from tomacs.execution.decision import Ballot, Centroid, DecisionAgent, Vote
from tomacs.methods.base import Method, MethodContext, resolve_decision
from tomacs.types import AgentOutput, Episode, Question

Q = Question(id="q", text="Which letter?", options=("a", "b", "c", "d"), answer="B", benchmark="t", kind="mc")


@pytest.mark.parametrize(
    ("requested", "method", "adversaries", "want"),
    [
        ("auto", "complete", 0, ("auto", "vote")),
        ("auto", "complete", 2, ("auto", "vote")),  # 2 of 6: a minority votes
        ("auto", "complete", 3, ("auto", "llm")),  # 3 of 6: TodyComm's rule hands it to an LLM
        ("auto", "crs", 3, ("crs", "vote")),  # the credibility topologies decide with credibility
        ("llm", "complete", 0, ("llm", "llm")),
        ("crs", "complete", 4, ("crs", "vote")),
    ],
)
def test_resolve_decision(requested: str, method: str, adversaries: int, want: tuple[str, str]) -> None:
    assert resolve_decision(requested, method, 6, adversaries) == want


def test_resolve_decision_rejects_an_unknown_rule() -> None:
    with pytest.raises(ValueError, match="unknown decision 'majority'; valid: auto, vote, llm, crs"):
        resolve_decision("majority", "complete", 6, 0)


def test_a_baselines_rule_is_resolved_once_when_the_context_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    import tomacs.methods.base

    ctx = MethodContext(n_agents=6, rounds=4, roles=["r"] * 6, seed=0, n_adversaries=3)
    lt50 = MethodContext(n_agents=6, rounds=4, roles=["r"] * 6, seed=0, n_adversaries=2)
    assert (ctx.baseline_decision_mode, lt50.baseline_decision_mode) == ("llm", "vote")

    def no_more(*_: object) -> tuple[str, str]:
        raise AssertionError("resolve_decision called after build")

    monkeypatch.setattr(tomacs.methods.base, "resolve_decision", no_more)
    (graph,) = Method(ctx).decide(None, [[]])
    assert graph.mode == "llm" and graph.voters == list(range(6))
    with pytest.raises(AssertionError, match="after build"):  # a new context is a new build
        MethodContext(n_agents=6, rounds=4, roles=["r"] * 6, seed=0)
    monkeypatch.undo()
    with pytest.raises(ValueError, match="unknown decision 'majority'"):  # a typo fails at build
        MethodContext(n_agents=6, rounds=4, roles=["r"] * 6, seed=0, decision="majority")


def _out(
    agent: int, answer: str | None, emb: list[float] | None = None, adversarial: bool = False
) -> AgentOutput:
    text = f"Answer: {answer}" if answer else "no idea"
    behaviour = "adversarial" if adversarial else "honest"
    return AgentOutput(agent, 4, text, answer, True, behaviour, embedding=emb)


def _ballot(
    final: list[AgentOutput], weights: list[float] | None = None, told: list[float] | None = None
) -> Ballot:
    return Ballot(Q, final, list(range(len(final))), weights, told, np.random.default_rng(0), "eval", 0)


def _run(rule: object, ballot: Ballot, ex: object = None) -> tuple[str | None, Episode]:
    ep = Episode(question=Q, plan=None, rounds=[], graphs=[], decision=None)  # type: ignore[arg-type]
    return asyncio.run(rule.answer(ex, ballot, ep, None)), ep  # type: ignore[attr-defined]


def test_vote_counts_weights() -> None:
    final = [_out(0, "A"), _out(1, "B"), _out(2, "B")]
    assert _run(Vote(), _ballot(final))[0] == "B"
    assert _run(Vote(), _ballot(final, weights=[0.6, 0.2, 0.2]))[0] == "A"  # credit-weighted


def test_centroid_picks_the_output_nearest_the_weighted_centroid() -> None:
    final = [_out(0, "A", [1.0, 0.0]), _out(1, "B", [0.0, 1.0]), _out(2, "C", [0.1, 1.0])]
    # centroid (0.37, 0.67): cosine A 0.48, B 0.88, C 0.92
    assert _run(Centroid(), _ballot(final))[0] == "C"
    assert _run(Centroid(), _ballot(final, weights=[5.0, 0.1, 0.1]))[0] == "A"


class OneReply:
    def __init__(self, text: str) -> None:
        self.text, self.requests = text, []

    async def generate(self, requests: list[GenerationRequest]) -> list[GenerationReply]:
        self.requests += requests
        return [GenerationReply(text=self.text, prompt_tokens=7, completion_tokens=3)]


def _executor(reply: str) -> SimpleNamespace:
    return SimpleNamespace(
        cfg=SimpleNamespace(roles=["r0", "r1", "r2"], rounds=4, seed=1, eval_seed=None),
        backbone=OneReply(reply),
    )


def test_decision_agent_reads_the_voters_and_records_its_call() -> None:
    ex = _executor("I weigh the analyses.\nAnswer: C")
    final = [_out(0, "A"), _out(1, "B", adversarial=True), _out(2, "B")]
    answer, ep = _run(DecisionAgent(), _ballot(final), ex)
    assert answer == "C" and ep.decision_tokens == (7, 3)
    (req,) = ex.backbone.requests
    assert req.kind == "decision" and [m.persuasive for m in req.incoming] == [False, True, False]


def test_unparseable_decision_agent_falls_back_to_the_vote_and_says_so() -> None:
    ex = _executor("I cannot decide.")
    final = [_out(0, "A"), _out(1, "B"), _out(2, "B")]
    answer, ep = _run(DecisionAgent(), _ballot(final), ex)
    assert answer == "B" and ep.extra["decision_fallback"] == "vote"
