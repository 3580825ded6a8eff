"""What the GNN topology learners (EIB-Learner, CARD) share: config parsing, lazy embedder,
per-question seeding, parameters/checkpoints, and the REINFORCE bookkeeping.

Why one base: these methods differ in how they score edges, not in how they are configured,
seeded, checkpointed or fed to the one trainer; keeping that plumbing in one place keeps their
files about their papers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from tomacs.embed import Embedder, embedder_dim, get_embedder
from tomacs.methods.base import Method, MethodContext
from tomacs.seeding import stable_seed
from tomacs.types import Question

IGNORED = {"name", "lr", "_target_"}  # read by the run/trainer, not by the method


def torch_module() -> Any:
    import torch

    return torch


class LearnedGraphMethod(Method):
    """Subclasses set `name`, `DEFAULTS`, build `self.net` and keep `self.meta` (architecture
    facts a checkpoint must match)."""

    trainable = True
    needs_embeddings = False  # they embed role profiles and queries themselves, not agent analyses
    DEFAULTS: Mapping[str, Any] = {}

    def __init__(self, ctx: MethodContext, **params: Any) -> None:
        unknown = set(params) - set(self.DEFAULTS) - IGNORED
        if unknown:
            valid = sorted(self.DEFAULTS)
            raise ValueError(f"unknown {self.name} parameters {sorted(unknown)}; valid: {valid}")
        cfg = {**self.DEFAULTS, **{k: v for k, v in params.items() if k in self.DEFAULTS}}
        super().__init__(ctx, **cfg)
        self.cfg = cfg
        if ctx.mask is not None and np.asarray(ctx.mask).shape != (ctx.n_agents, ctx.n_agents):
            raise ValueError(f"mask has shape {np.asarray(ctx.mask).shape}, expected N x N = {ctx.n_agents}")
        # the run's top-level `embedder` (ctx.extra) wins over the method's own default
        self.embedder_name = str(ctx.extra.get("embedder") or cfg["embedder"])
        self.emb_dim = embedder_dim(self.embedder_name)
        self.meta: dict[str, Any] = {}
        self.net: Any = None
        self._embedder: Embedder | None = None
        self._visits: dict[str, int] = {}
        self.device = torch_module().device(ctx.device)

    def check_choice(self, key: str, valid: tuple[str, ...]) -> str:
        if self.cfg[key] not in valid:
            raise ValueError(f"{self.name}: {key} must be one of {valid}, got {self.cfg[key]!r}")
        return str(self.cfg[key])

    def check_range(self, key: str, low: float, high: float | None = None, open_low: bool = False) -> float:
        v = float(self.cfg[key])
        too_low = v <= low if open_low else v < low
        if too_low or (high is not None and v >= high):
            bound = f"in ({low:g}, {high:g})" if high is not None else f">{'' if open_low else '='} {low:g}"
            raise ValueError(f"{self.name}: {key} must be {bound}, got {self.cfg[key]}")
        return v

    def seeded_net(self, build: Any, *args: Any) -> Any:
        """Build the network with initial weights seeded by ctx.seed, without touching global RNG."""
        torch = torch_module()
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(self.ctx.seed))
            return build(*args)

    def device_for(self, device: str) -> Any:
        torch = torch_module()
        dev = torch.device(device)
        if dev.type == "cuda" and not torch.cuda.is_available():
            raise RuntimeError(f"{self.name} was asked for device {device!r} but torch sees no CUDA GPU")
        self.device = dev
        self.net = self.net.to(dev)
        return dev

    @property
    def embedder(self) -> Embedder:
        """Built on first use so that constructing the method (and its tests) never loads MiniLM."""
        if self._embedder is None:
            self._embedder = get_embedder(self.embedder_name, str(self.device))
        return self._embedder

    def _question_rngs(self, questions: list[Question], train: bool) -> list[np.random.Generator]:
        """One generator per question keyed by (seed, method, question id, and in training how often
        that question was trained on): batching never changes a graph, and each epoch resamples."""
        rngs = []
        for q in questions:
            if train:
                k = self._visits.get(q.id, 0)
                self._visits[q.id] = k + 1
                seed = stable_seed(self.ctx.seed, self.name, "train", q.id, k)
            else:
                seed = stable_seed(self.ctx.seed, self.name, "eval", q.id)
            rngs.append(np.random.default_rng(seed))
        return rngs

    def utilities(self, state: dict[str, Any], utilities: list[float]) -> np.ndarray:
        if not state["train"] or state["logp"] is None:
            raise RuntimeError(
                f"{self.name}.loss needs a batch begun with train=True (log-probs are sampled)"
            )
        u = np.asarray(utilities, dtype=np.float64)
        if u.shape != (len(state["questions"]),):
            raise ValueError(f"{u.size} utilities for {len(state['questions'])} questions")
        return u

    def parameters(self) -> list[Any]:
        return list(self.net.parameters())

    def state_dict(self) -> dict[str, Any]:
        return {
            "net": {k: v.detach().cpu().clone() for k, v in self.net.state_dict().items()},
            "visits": dict(self._visits),
            "meta": dict(self.meta),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        meta = state.get("meta", {})
        diff = {k: (meta.get(k), v) for k, v in self.meta.items() if k in meta and meta[k] != v}
        if diff:
            raise ValueError(f"checkpoint does not fit this {self.name} (checkpoint, current): {diff}")
        self.net.load_state_dict(state["net"])
        self._visits = dict(state.get("visits", {}))

    def train_mode(self, train: bool) -> None:
        self.net.train(train)
