"""A method for tests of what the simulator writes when every agent reads every other.

Why here: the simulator's text tests (repeats, topic words) run the executor along a debate's graph, in which
every agent reads every other's reply of the round before and all vote: one definition for them all."""

from __future__ import annotations

from typing import Any

from tomacs.methods.base import Method
from tomacs.types import DecisionGraph, RoundGraph


class ReadEveryone(Method):
    """Round 1 alone; from round 2 every agent reads every other's previous reply; every agent votes."""

    name = "read-everyone-test"

    def act(self, state: Any, t: int, history: list[Any]) -> list[RoundGraph]:
        n = self.ctx.n_agents
        pairs = [(i, j) for i in range(n) for j in range(n) if i != j] if t >= 2 else []
        return [RoundGraph(nodes=list(range(n)), edges=[], temporal_edges=pairs) for _ in history]

    def decide(self, state: Any, history: list[Any]) -> list[DecisionGraph]:
        return [DecisionGraph(voters=list(range(self.ctx.n_agents)), mode="vote") for _ in history]
