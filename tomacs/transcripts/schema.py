"""The debate transcript schema (`tomacs.debate/1`, documented in docs/transcripts.md).

Why a schema of its own: the simulator is fitted to how real agents move from round to round, and
that needs only who answered what, in which role, after reading whom. Episodes from tomacs' own
real backbones, published transcripts and a user's own logs all reduce to this, so one fitter
reads them all; texts and question wording are optional because many sources do not keep them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

SCHEMA = "tomacs.debate/1"
Role = Literal["honest", "adversary"]


@dataclass(frozen=True)
class AgentInfo:
    """One debater. An adversary argues for `target` from round `onset` (1-based) on; before its
    onset it answers as an honest agent would (TodyComm's dynamic adversaries, MAD-Follower's
    follower with onset 2)."""

    agent: int
    role: Role = "honest"
    onset: int | None = None
    target: str | None = None
    model: str | None = None


@dataclass(frozen=True)
class Turn:
    """What one agent answered in one round (1-based) and what it had read before answering.

    `read` lists (agent, round) pairs: an agent reading the others' previous answers in round 3
    has (j, 2) for each other j; a same-round (spatial) message is (j, 3). `answer` is an option
    letter, or None when the reply could not be parsed."""

    round: int
    agent: int
    answer: str | None
    read: tuple[tuple[int, int], ...] = ()
    text: str | None = None


@dataclass(frozen=True)
class Debate:
    """One question debated by `n_agents` agents for `n_rounds` rounds."""

    id: str
    gold: str
    letters: tuple[str, ...]
    n_agents: int
    n_rounds: int
    agents: tuple[AgentInfo, ...]
    turns: tuple[Turn, ...]
    source: str = ""
    model: str | None = None
    question: str | None = None
    options: tuple[str, ...] | None = None
    # the question's own id where several debates share a question (runs, samples): a held-out
    # split by question keeps them together; None = `id` is the question
    question_id: str | None = None
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def question_key(self) -> str:
        """The question of this debate, the one definition every split, shared latent and
        bootstrap by question uses. Its wording comes first because ids are per source (a tomacs
        run and a published transcript of the same MMLU item share only the text); without wording,
        `question_id` groups the repeats of a question, and only without both is the debate its own
        question."""
        if self.question:
            return "q:" + re.sub(r"\s+", " ", self.question.strip().lower())
        return "id:" + (self.question_id or self.id)

    def turn(self, agent: int, round: int) -> Turn | None:
        """The turn of `agent` in `round`, or None when the transcript lacks it."""
        for t in self.turns:
            if t.agent == agent and t.round == round:
                return t
        return None

    def is_adversarial(self, agent: int, round: int) -> bool:
        """Whether `agent` acts as an adversary in `round` (from its onset on)."""
        a = self.agents[agent]
        return a.role == "adversary" and a.onset is not None and round >= a.onset


class TranscriptError(ValueError):
    """A transcript is malformed; the message is one line naming the file, line, debate and field
    (`<file>:<line>: debate '<id>': field '<field>': <problem>`, the benchmark files' form)."""


def fail(where: str, debate: str | None, field_name: str, problem: str) -> TranscriptError:
    """The one-line error, built in one place so every importer words it the same way."""
    who = f"debate {debate!r}" if debate is not None else "debate '?'"
    return TranscriptError(f"{where}: {who}: field '{field_name}': {problem}")


def check_debate(d: Debate, where: str) -> Debate:
    """Every rule a fitter relies on, for debates from any importer: indices in range, letters in
    the letter set, one turn per (agent, round), reads of earlier or same-round outputs only."""

    def bad(field_name: str, problem: str) -> TranscriptError:
        return fail(where, d.id, field_name, problem)

    letters = d.letters
    shown = "-".join((letters[0], letters[-1])) if letters else "(none)"
    if not letters or len(set(letters)) != len(letters) or not all(isinstance(x, str) and x for x in letters):
        raise bad("letters", f"{list(letters)!r} must be distinct non-empty strings")
    if d.gold not in letters:
        raise bad("gold", f"{d.gold!r} is not one of the letters {shown}")
    if d.options is not None and len(d.options) != len(letters):
        raise bad("options", f"{len(d.options)} options for {len(letters)} letters")
    if d.n_agents < 1:
        raise bad("n_agents", f"{d.n_agents} must be at least 1")
    if d.n_rounds < 1:
        raise bad("n_rounds", f"{d.n_rounds} must be at least 1")
    if len(d.agents) != d.n_agents:
        raise bad("agents", f"{len(d.agents)} agents listed for n_agents={d.n_agents}")
    for i, a in enumerate(d.agents):
        if a.agent != i:
            raise bad(f"agents[{i}].agent", f"{a.agent} must equal its position {i} in the list")
        if a.role not in ("honest", "adversary"):
            raise bad(f"agents[{i}].role", f"{a.role!r} is not one of honest, adversary")
        if a.role == "adversary":
            if a.onset is None or a.onset < 1:
                raise bad(f"agents[{i}].onset", f"{a.onset!r}: an adversary needs an onset round >= 1")
            if a.target is not None and a.target not in letters:  # None: the source gave no valid target
                raise bad(f"agents[{i}].target", f"{a.target!r} is not one of the letters {shown}")
        elif a.onset is not None or a.target is not None:
            raise bad(f"agents[{i}].onset", "an honest agent has no onset or target (role: adversary?)")
    seen: set[tuple[int, int]] = set()
    for k, t in enumerate(d.turns):
        at = f"turns[{k}]"
        if not 1 <= t.round <= d.n_rounds:
            raise bad(f"{at}.round", f"{t.round} is outside 1..{d.n_rounds}")
        if not 0 <= t.agent < d.n_agents:
            raise bad(f"{at}.agent", f"{t.agent} is outside 0..{d.n_agents - 1}")
        if (t.agent, t.round) in seen:
            raise bad(f"{at}", f"a second turn of agent {t.agent} in round {t.round}")
        seen.add((t.agent, t.round))
        if t.answer is not None and t.answer not in letters:
            raise bad(f"{at}.answer", f"{t.answer!r} is not one of the letters {shown} (null: unparsed)")
        for m, (j, s) in enumerate(t.read):
            if not 0 <= j < d.n_agents:
                raise bad(f"{at}.read[{m}]", f"agent {j} is outside 0..{d.n_agents - 1}")
            if not 1 <= s <= t.round or (s == t.round and j == t.agent):
                raise bad(
                    f"{at}.read[{m}]",
                    f"({j}, {s}): a turn reads earlier rounds or others' same-round outputs",
                )
    return d
