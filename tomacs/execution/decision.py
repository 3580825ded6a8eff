"""How the final answer is taken from the agents' last outputs: one strategy object per rule.

A method says *who* decides and with what weight (its `DecisionGraph`: voters, weights, mode); the
rule named by the graph's mode says *how*. The executor holds one object per rule, built once, and
never branches on the rule itself, so a new aggregation is a class here, not an executor edit:

* `Vote` — plurality over the voters' parsed answers, weighted when the graph carries weights
  (TodyComm's credit-weighted vote, the CrS-weighted vote); ties by a seeded draw.
* `DecisionAgent` — an LLM decision agent reads the voters' analyses (the TodyComm comparison rule
  at >= 50 % adversaries); told the voters' credibility it is the CrS coordinator (§4b). An
  unparseable reply falls back to the vote, and the episode says so.
* `Centroid` — the CrS-weighted embedding centroid (credibility-scoring §4a).

Which rule a baseline's graphs name (`decision=auto`) is settled once, by
`tomacs.methods.base.resolve_decision` (TodyComm decides by its own credit-weighted vote,
`TodyComm.decision_mode`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from tomacs.agents.prompts import crs_coordinator_messages, decision_messages
from tomacs.backbones.base import Backbone, GenerationRequest
from tomacs.benchmarks.parsing import parse_answer
from tomacs.seeding import episode_seed, paired_seed
from tomacs.types import AdversaryPlan, AgentOutput, DecisionGraph, Episode, Message, Question, RoundGraph
from tomacs.voting import vote_leaders


@dataclass
class Ballot:
    """What a rule reads for one question: the voters' final outputs, their weights, and what a
    coordinator was told of their credibility (None: nothing)."""

    question: Question
    final: list[AgentOutput]
    voters: list[int]
    weights: Sequence[float] | None
    told: Sequence[float] | None
    rng: np.random.Generator
    phase: str
    sample_index: int


class RunView(Protocol):
    """The run settings a rule reads (`tomacs.execution.executor.ExecutorConfig` has them)."""

    @property
    def roles(self) -> list[str]: ...
    @property
    def rounds(self) -> int: ...
    @property
    def seed(self) -> int: ...
    @property
    def eval_seed(self) -> int | None: ...


class DecisionHost(Protocol):
    """What the rules and the decision orders need from the executor that calls them: the run's
    settings, the backbone a decision agent asks, and the one-question decision an order
    (`Concurrent`, credibility's `CrsDecider`) calls back. `tomacs.execution.executor.Executor` is one; the
    decision modules name this protocol instead of importing it, so the call back is explicit and
    the import graph stays one-way (the executor imports this module)."""

    @property
    def cfg(self) -> RunView: ...
    @property
    def backbone(self) -> Backbone: ...

    async def decide_one(
        self,
        p: Pending,
        phase: str,
        sample_index: int,
        on_call: Callable[[int], None] | None,
        decision: DecisionGraph | None = None,
    ) -> Episode: ...


class Rule(Protocol):
    async def answer(
        self, ex: DecisionHost, ballot: Ballot, episode: Episode, on_call: Callable[[int], None] | None
    ) -> str | None: ...


def weighted_vote(
    answers: Sequence[str | None], weights: Sequence[float] | None, rng: np.random.Generator
) -> str | None:
    """Weighted plurality over parsed answers (`vote_leaders`); ties are broken by a seeded draw,
    never by list order (list order would favour low agent indices)."""
    tied = vote_leaders(answers, weights)
    if not tied:
        return None
    if len(tied) == 1:
        return tied[0]
    return tied[int(rng.integers(len(tied)))]


class Vote:
    async def answer(
        self, ex: DecisionHost, b: Ballot, episode: Episode, on_call: Callable[[int], None] | None
    ) -> str | None:
        return weighted_vote([b.final[v].answer for v in b.voters], b.weights, b.rng)


class DecisionAgent:
    async def answer(
        self, ex: DecisionHost, b: Ballot, episode: Episode, on_call: Callable[[int], None] | None
    ) -> str | None:
        q, final, cfg = b.question, b.final, ex.cfg
        outputs = [(cfg.roles[v], final[v].text) for v in b.voters]
        incoming = [
            Message(
                sender=v,
                role=cfg.roles[v],
                text=final[v].text,
                answer=final[v].answer,
                persuasive=final[v].behaviour == "adversarial",
                weight=1.0 if b.told is None or b.weights is None else float(b.weights[k]),
            )
            for k, v in enumerate(b.voters)
        ]
        messages = (
            decision_messages(q, outputs) if b.told is None else crs_coordinator_messages(q, outputs, b.told)
        )
        req = GenerationRequest(
            messages=messages,
            question=q,
            kind="decision",
            agent=-1,
            role="Decision Maker",
            round=cfg.rounds + 1,
            behaviour="honest",
            target=None,
            previous_answer=None,
            incoming=incoming,
            seed_key=f"{episode_seed(cfg.seed, cfg.eval_seed, b.phase)}/{b.phase}/{q.id}/decision",
            sample_index=b.sample_index,
            seed=paired_seed(cfg.eval_seed, b.phase),
        )
        (rep,) = await ex.backbone.generate([req])
        if on_call is not None:
            on_call(1)
        answer = parse_answer(q, rep.text)
        episode.decision_output = AgentOutput(
            agent=-1,
            round=cfg.rounds + 1,
            text=rep.text,
            answer=answer,
            participated=True,
            behaviour="honest",
            prompt_tokens=rep.prompt_tokens,
            completion_tokens=rep.completion_tokens,
            cached=rep.cached,
        )
        episode.decision_tokens = (rep.prompt_tokens, rep.completion_tokens)
        if answer is None:  # an unparseable judge falls back to the plain vote, and says so
            weights = b.weights if b.told is not None else None
            answer = weighted_vote([final[v].answer for v in b.voters], weights, b.rng)
            episode.extra["decision_fallback"] = "vote"
        return answer


class Centroid:
    async def answer(
        self, ex: DecisionHost, b: Ballot, episode: Episode, on_call: Callable[[int], None] | None
    ) -> str | None:
        from tomacs.execution.centroid import centroid_choice

        final = b.final
        live = [v for v in b.voters if final[v].answer is not None and final[v].embedding is not None]
        if not live:
            return None
        w = [1.0] * len(live) if b.weights is None else [float(b.weights[b.voters.index(v)]) for v in live]
        emb = np.asarray([final[v].embedding for v in live], dtype=float)
        return final[live[centroid_choice(emb, w, b.rng)]].answer


@dataclass
class Pending:
    """One question of a batch after its last round: what its decision is taken from."""

    question: Question
    plan: AdversaryPlan  # for the episode record, never read by a rule
    history: list[list[AgentOutput]]
    graphs: list[RoundGraph | None]
    decision: DecisionGraph


class DecisionOrder(Protocol):
    """How a batch's decisions are taken: all at once (`Concurrent`) or, under credibility, one
    question after another in stream order (`tomacs.credibility.decider.CrsDecider`)."""

    async def decide_batch(
        self,
        ex: DecisionHost,
        pending: list[Pending],
        phase: str,
        sample_index: int,
        on_call: Callable[[int], None] | None,
    ) -> list[Episode]: ...


class Concurrent:
    """Every question's decision at once: nothing carries from one question to the next."""

    async def decide_batch(
        self,
        ex: DecisionHost,
        pending: list[Pending],
        phase: str,
        sample_index: int,
        on_call: Callable[[int], None] | None,
    ) -> list[Episode]:
        return list(await asyncio.gather(*[ex.decide_one(p, phase, sample_index, on_call) for p in pending]))


def rules() -> dict[str, Rule]:
    """The rule object of each decision mode a `DecisionGraph` may name."""
    return {"vote": Vote(), "llm": DecisionAgent(), "centroid": Centroid()}


def ballot_weights(
    decision: DecisionGraph, voters: list[int]
) -> tuple[Sequence[float] | None, Sequence[float] | None]:
    """(weights, told) of a decision graph for the voters that survived validation: a method's
    weights or told scores no longer line up once an out-of-range voter was dropped."""
    same = voters == decision.voters
    if decision.weights is not None and len(decision.weights) != len(decision.voters):
        raise RuntimeError("decision weights must match voters")
    told = decision.credibility if decision.credibility is not None and same else None
    weights = decision.weights if decision.weights is not None and same else None
    return weights, told
