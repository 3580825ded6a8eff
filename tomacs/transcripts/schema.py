"""The debate transcript schema (`tomacs.debate/1`, documented in docs/transcripts.md).

Why a schema of its own: the simulator is fitted to how real agents move from round to round, and
that needs only who answered what, in which role, after reading whom. Episodes from tomacs' own
real backbones, published transcripts and a user's own logs all reduce to this, so one fitter
reads them all; texts and question wording are optional because many sources do not keep them.
"""

from __future__ import annotations

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
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

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
