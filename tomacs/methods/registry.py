"""Method names -> classes. Imports are lazy so a static run never imports torch."""

from __future__ import annotations

import importlib
from typing import Any

from tomacs.methods.base import Method, MethodContext
from tomacs.methods.static import STATIC_METHODS as _STATIC

_LEARNED = {
    "todycomm": ("tomacs.methods.todycomm", "TodyComm"),
    "crs": ("tomacs.methods.crs", "CredibilityTopology"),  # not learned, but lazily imported alike
    "agentprune": ("tomacs.methods.agentprune", "AgentPrune"),
    "gdesigner": ("tomacs.methods.gdesigner", "GDesigner"),
    "eib": ("tomacs.methods.eib", "EIBLearner"),
    "card": ("tomacs.methods.card", "CARD"),
    "gsafeguard": ("tomacs.methods.gsafeguard", "GSafeguard"),
    "receiver": ("tomacs.methods.receiver", "Receiver"),
}


def method_names() -> list[str]:
    return sorted([*_STATIC, *_LEARNED])


def build_method(name: str, ctx: MethodContext, params: dict[str, Any]) -> Method:
    if name in _STATIC:
        return _STATIC[name](ctx, **params)
    if name in _LEARNED:
        mod, cls = _LEARNED[name]
        return getattr(importlib.import_module(mod), cls)(ctx, **params)
    raise ValueError(f"unknown method '{name}'; valid: {', '.join(method_names())}")


def is_trainable(name: str) -> bool:
    """Whether the method learns parameters, known before building it (which may load an embedder)."""
    if name not in _LEARNED:
        return False
    mod, cls = _LEARNED[name]
    return bool(getattr(importlib.import_module(mod), cls).trainable)


def trainer_kind(name: str) -> str | None:
    """How a learned method learns, known before building it: "reinforce" (task rewards through
    tomacs.training) or "supervised" (labelled conversations through tomacs.supervised); None for a
    method with nothing to learn."""
    if not is_trainable(name):
        return None
    mod, cls = _LEARNED[name]
    return str(getattr(importlib.import_module(mod), cls).trainer)
