"""Credibility scores CrS in [0, 1], one per agent, and the paper's update rule (Eq. 2)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NotRequired, TypedDict

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["CredibilityState", "update_scores"]


def update_scores(scores: ArrayLike, csc: ArrayLike, reward: float, eta: float) -> np.ndarray:
    """CrS_t = CrS_{t-1} (1 + eta * CSc * r), clipped to [0, 1] (credibility-scoring Eq. 2, §5.B)."""
    s = np.asarray(scores, dtype=float)
    c = np.asarray(csc, dtype=float)
    if s.shape != c.shape:
        raise ValueError(f"{len(c)} contribution scores for {len(s)} agents")
    if not -1.0 <= reward <= 1.0:
        raise ValueError(f"reward must lie in [-1, 1], got {reward}")
    return np.clip(s * (1.0 + eta * c * reward), 0.0, 1.0)


class CredibilityRecord(TypedDict):
    """The scores as a checkpoint or log stores them (`CredibilityState.to_dict`)."""

    scores: list[float]  # one per agent
    updates: NotRequired[int]  # updates so far (0 where an older record lacks it)


@dataclass
class CredibilityState:
    """The scores carried across the stream of queries of a run (training and evaluation)."""

    n_agents: int
    eta: float = 0.5
    init: float = 0.5
    scores: np.ndarray = field(default_factory=lambda: np.empty(0))  # empty: `init` for every agent
    updates: int = 0

    def __post_init__(self) -> None:
        if not 0.0 <= self.init <= 1.0:
            raise ValueError(f"crs.init must lie in [0, 1], got {self.init}")
        if self.eta < 0:
            raise ValueError(f"crs.eta must be >= 0, got {self.eta}")
        if self.scores is None or np.size(self.scores) == 0:
            self.scores = np.full(self.n_agents, float(self.init))
        self.scores = np.asarray(self.scores, dtype=float)
        if self.scores.shape != (self.n_agents,):
            raise ValueError(f"{self.scores.shape} credibility scores for {self.n_agents} agents")

    def update(self, csc: ArrayLike, reward: float) -> np.ndarray:
        self.scores = update_scores(self.scores, csc, reward, self.eta)
        self.updates += 1
        return self.scores

    def to_dict(self) -> CredibilityRecord:
        return {"scores": [round(float(x), 8) for x in self.scores], "updates": self.updates}

    def load(self, d: CredibilityRecord) -> None:
        scores = np.asarray(d["scores"], dtype=float)
        if scores.shape != (self.n_agents,):
            raise ValueError(f"saved credibility has {scores.size} agents, this run has {self.n_agents}")
        self.scores, self.updates = scores, int(d.get("updates", 0))
