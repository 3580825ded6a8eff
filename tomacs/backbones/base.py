"""The one interface between the executor and anything that answers prompts.

A request carries both the chat messages and the structure that produced them. A real LLM
backbone reads only `messages`; the simulator reads only the structure. Because the same code
builds both, prompts and token counts are identical whichever backbone runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from tomacs.types import Behaviour, Message, Question

RequestKind = Literal["agent", "decision"]


@dataclass
class GenerationRequest:
    messages: list[dict[str, str]]
    question: Question
    kind: RequestKind
    agent: int  # -1 for the decision agent
    role: str
    round: int  # 1..T for agents, T+1 for the decision agent
    behaviour: Behaviour
    target: str | None  # the adversarial target answer (adversarial requests only)
    previous_answer: str | None  # the agent's own parsed answer from its last participation
    incoming: list[Message]  # neighbour messages (agents) or voters' final outputs (decision)
    seed_key: str  # stable key "<seed>/<question id>/<agent>/<round>" for deterministic sampling
    sample_index: int = 0
    capability: float | None = None  # per-agent condition (CARD); None = profile default
    first_answer: str | None = None  # the agent's own parsed round-1 answer (None in round 1)
    extra: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None  # a simulator's sampling seed for this draw (paired evaluation); None = its own


@dataclass
class GenerationReply:
    text: str
    prompt_tokens: int
    completion_tokens: int
    cached: bool = False
    cost_usd: float = 0.0
    tokens_estimated: bool = False  # True when counted locally because the server gave none
    retries: int = 0


class Backbone(Protocol):
    """Anything that turns requests into replies. `name` is written into every result."""

    name: str

    async def generate(self, requests: list[GenerationRequest]) -> list[GenerationReply]: ...

    def stats(self) -> dict[str, Any]:
        """Counters for results.json: calls, cache hits/misses, retries, cost."""
        ...

    async def aclose(self) -> None: ...
