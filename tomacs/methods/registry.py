"""Method names -> classes. Imports are lazy so a static run never imports torch."""

from __future__ import annotations

import importlib
from typing import Any

from tomacs.methods.base import Method, MethodContext

_STATIC = ("complete", "random", "chain", "star", "layered", "none", "debate")
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


def method_class(name: str) -> type[Method]:
    """The class of method `name` (imports its module; its `Settings` is the method's schema)."""
    if name in _STATIC:
        from tomacs.methods.static import STATIC_METHODS

        return STATIC_METHODS[name]
    if name in _LEARNED:
        mod, cls = _LEARNED[name]
        return getattr(importlib.import_module(mod), cls)  # type: ignore[no-any-return]
    raise ValueError(f"unknown method '{name}'; valid: {', '.join(method_names())}")


def build_method(name: str, ctx: MethodContext, params: dict[str, Any]) -> Method:
    return method_class(name)(ctx, **params)


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
