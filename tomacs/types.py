"""Records shared by every part of tomacs.

They are plain dataclasses so that one executor, every method and every backbone speak the same
language, and so that an episode can be written to JSON and read back without the objects that
made it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal, TypedDict

QuestionKind = Literal["mc", "numeric"]
Behaviour = Literal["honest", "adversarial"]
LETTERS = "ABCDEFGHIJ"


class AgentCondition(TypedDict):
    """One agent's runtime condition (CARD; a run's `conditions=`): its capability (a competence
    multiplier the simulator honours), its cost per call (relative) and its backbone's label."""

    capability: float
    cost: float
    backbone: str | None


@dataclass(frozen=True)
class Question:
    """One benchmark item.

    `answer` is normalised: a letter ("A".."J") for multiple choice, a canonical number string
    ("42", "-3.5") for numeric questions. `options` is None for numeric questions.
    """

    id: str
    text: str
    options: tuple[str, ...] | None
    answer: str
    benchmark: str
    kind: QuestionKind
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def labels(self) -> tuple[str, ...]:
        """Option labels in order (letters); empty for numeric questions."""
        return tuple(LETTERS[i] for i in range(len(self.options or ())))

    def to_dict(self) -> dict[str, object]:
        d = asdict(self)
        d["options"] = list(self.options) if self.options is not None else None
        return d


@dataclass(frozen=True)
class Message:
    """What a receiver sees from one in-neighbour in a round (f_m of the paper, plus structure).

    `persuasive` is True when the sender appended the adversarial persuasive suffix; the text
    carries it too. The simulator reads the structure, a real LLM reads `text`. `temporal` marks
    a message carrying the sender's previous-round output (a temporal edge) rather than its
    current-round one, so the prompt can label it and a real LLM can tell the two apart.
    """

    sender: int
    role: str
    text: str
    answer: str | None
    persuasive: bool
    weight: float = 1.0  # credibility a coordinator is told to give this sender (1 = none told)
    temporal: bool = False  # True: the sender's round t-1 output, delivered along a temporal edge


@dataclass
class AgentOutput:
    """o_i^t: one agent's output at one round.

    When an agent does not take part in round t it makes no call; the executor then carries its
    last output forward with `participated=False` and zero tokens, so features and decisions
    always see N outputs per round.
    """

    agent: int
    round: int
    text: str
    answer: str | None
    participated: bool
    behaviour: Behaviour
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False
    embedding: list[float] | None = None

    def to_dict(self, with_embedding: bool = False) -> dict[str, object]:
        d = asdict(self)
        if not with_embedding:
            d.pop("embedding")
        return d


@dataclass
class RoundGraph:
    """The communication graph of one round t in 2..T.

    `nodes` are the agents that make a call this round, `edges` are spatial (sender, receiver)
    pairs among them: the receiver reads the sender's round-t output, so they must form a DAG.
    `temporal_edges` are (sender, receiver) pairs along which the receiver reads the sender's
    round t-1 output (debate-style, as the G-Designer/AgentPrune line of work's temporal masks):
    round t-1 is finished, so they need not be acyclic and the sender need not take part in round
    t; the receiver must. A self temporal edge (i, i) is invalid: an agent always reads its own
    previous output (docs/deviations.md). `credits` holds one value per agent (all N) when the
    method has them. `participants`, when set, are the agents the method selected to communicate
    (TodyComm's a_i^t = 1) where that differs from `nodes`: with `isolated=answer` every agent
    answers, non-participants alone.
    """

    nodes: list[int]
    edges: list[tuple[int, int]]
    credits: list[float] | None = None
    temporal_edges: list[tuple[int, int]] = field(default_factory=list)
    participants: list[int] | None = None

    def to_dict(self) -> dict[str, object]:
        d: dict[str, Any] = {
            "nodes": list(self.nodes),
            "edges": [list(e) for e in self.edges],
            "temporal_edges": [list(e) for e in self.temporal_edges],
            "credits": None if self.credits is None else [round(float(c), 6) for c in self.credits],
        }
        if self.participants is not None:
            d["participants"] = list(self.participants)
        return d


DecisionMode = Literal["vote", "llm", "centroid"]


@dataclass
class DecisionGraph:
    """Which agents' final outputs reach the decision node, and how it aggregates them.

    `weights` (same length as `voters`) weight a vote; None means equal weights. With mode "llm"
    a decision agent reads the voters' final outputs instead of counting them; with mode
    "centroid" the output nearest the weighted embedding centroid wins (credibility scoring).
    `credibility` (same length as `voters`) are scores shown to a credibility-aware coordinator.
    `credits` (all N agents) are a credit method's decision-round credits c^{T+1}, kept for analysis.
    """

    voters: list[int]
    weights: list[float] | None = None
    mode: DecisionMode = "vote"
    credibility: list[float] | None = None
    credits: list[float] | None = None

    def to_dict(self) -> dict[str, object]:
        d: dict[str, Any] = {
            "voters": list(self.voters),
            "weights": None if self.weights is None else [round(float(w), 6) for w in self.weights],
            "mode": self.mode,
        }
        if self.credibility is not None:
            d["credibility"] = [round(float(w), 6) for w in self.credibility]
        if self.credits is not None:
            d["credits"] = [round(float(c), 6) for c in self.credits]
        return d


@dataclass(frozen=True)
class AdversaryPlan:
    """Who turns adversarial in one episode, from which round, and toward which wrong answer.

    An agent is adversarial at round t when t >= onsets[agent]; it is labelled adversarial for
    ADAcc when its onset <= T.
    """

    adversaries: tuple[int, ...]
    onsets: dict[int, int]
    target: str | None

    def behaviour(self, agent: int, t: int) -> Behaviour:
        onset = self.onsets.get(agent)
        return "adversarial" if onset is not None and t >= onset else "honest"

    def labels(self, n_agents: int, rounds: int) -> list[int]:
        """Ground-truth reliability labels for ADAcc: 1 = adversarial."""
        return [1 if self.onsets.get(i, rounds + 1) <= rounds else 0 for i in range(n_agents)]

    def to_dict(self) -> dict[str, object]:
        return {
            "adversaries": list(self.adversaries),
            "onsets": {str(k): v for k, v in self.onsets.items()},
            "target": self.target,
        }


@dataclass
class Episode:
    """The full trace of solving one question: every round's graph and outputs, the decision."""

    question: Question
    plan: AdversaryPlan
    rounds: list[list[AgentOutput]]  # rounds[t-1][i] = o_i^t, t = 1..T
    graphs: list[RoundGraph | None]  # graphs[t-1]; None for round 1 (no communication)
    decision: DecisionGraph | None = None
    decision_output: AgentOutput | None = None  # the LLM decision agent's reply, if any
    final_answer: str | None = None
    correct: bool = False
    decision_tokens: tuple[int, int] = (0, 0)  # (prompt, completion) of the decision call
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def n_agents(self) -> int:
        return len(self.rounds[0])

    def prompt_tokens(self) -> int:
        return sum(o.prompt_tokens for r in self.rounds for o in r) + self.decision_tokens[0]

    def completion_tokens(self) -> int:
        return sum(o.completion_tokens for r in self.rounds for o in r) + self.decision_tokens[1]

    def llm_calls(self) -> int:
        calls = sum(1 for r in self.rounds for o in r if o.participated)
        return calls + (1 if self.decision_output is not None else 0)

    def to_dict(self) -> dict[str, object]:
        return {
            "question": self.question.to_dict(),
            "plan": self.plan.to_dict(),
            "rounds": [[o.to_dict() for o in r] for r in self.rounds],
            "graphs": [None if g is None else g.to_dict() for g in self.graphs],
            "decision": None if self.decision is None else self.decision.to_dict(),
            "decision_output": None if self.decision_output is None else self.decision_output.to_dict(),
            "final_answer": self.final_answer,
            "correct": self.correct,
            "prompt_tokens": self.prompt_tokens(),
            "completion_tokens": self.completion_tokens(),
            "llm_calls": self.llm_calls(),
            **self.extra,
        }
