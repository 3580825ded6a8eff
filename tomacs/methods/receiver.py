"""The protocol of TodyComm Tables 7-8, run through the executor: one receiver, N-1 senders.

Why a method: the adversary-impact tables measure how a single agent's answer changes when it
reads k adversarial and N-1-k honest senders. Running that protocol with the real executor (real
prompts, the same backbone, parsing and metrics) measures it on any backbone, rather than
reading it off the simulator's calibration. Round 1: everyone answers alone; round 2: the
senders answer again (alone) and the receiver (the last agent) reads them all (or, with
`listen: false`, answers again alone); the "team" answer is the receiver's. Use with
`attack=receiver` (the receiver is never an adversary; adversaries act from round 1), `rounds=2`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tomacs.methods.base import BatchState, History, Method, MethodContext
from tomacs.methods.settings import MethodSettings
from tomacs.types import DecisionGraph, RoundGraph


@dataclass
class ReceiverSettings(MethodSettings):
    """conf/method/receiver.yaml extends this."""

    name: str = "receiver"
    listen: bool = True  # false: the receiver answers alone in round 2 too (Table 7 "Vanilla")


class Receiver(Method):
    Settings = ReceiverSettings

    def __init__(self, ctx: MethodContext, **params: Any) -> None:
        self.settings = self.Settings.from_params(params)  # checked: one line naming a bad key
        super().__init__(ctx, **self.settings.params())
        self.listen = self.settings.listen

    def act(self, state: BatchState, t: int, history: History) -> list[RoundGraph]:
        r = self.ctx.n_agents - 1
        if not self.listen:
            return [RoundGraph(nodes=[r], edges=[]) for _ in history]
        # senders speak again in round 2 (a message comes from a participant of the round; an honest
        # sender with no incoming message keeps its view), then the receiver reads all of them
        return [RoundGraph(nodes=list(range(r + 1)), edges=[(i, r) for i in range(r)]) for _ in history]

    def decide(self, state: BatchState, history: History) -> list[DecisionGraph]:
        r = self.ctx.n_agents - 1
        return [DecisionGraph(voters=[r], weights=None, mode="vote") for _ in history]
