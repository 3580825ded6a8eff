"""Method names -> classes (`METHODS`, a `tomacs.registry.Registry`). Entries are "module:class"
strings imported on first use, so a static run never imports torch; a new method adds one line here."""

from __future__ import annotations

from typing import Any

from tomacs.methods.base import Method, MethodContext
from tomacs.methods.static import STATIC_METHODS
from tomacs.registry import Registry

METHODS: Registry[type[Method]] = Registry(
    "method",
    {
        "todycomm": "tomacs.methods.todycomm:TodyComm",
        "crs": "tomacs.methods.crs:CredibilityTopology",
        "agentprune": "tomacs.methods.agentprune:AgentPrune",
        "gdesigner": "tomacs.methods.gdesigner:GDesigner",
        "eib": "tomacs.methods.eib:EIBLearner",
        "card": "tomacs.methods.card:CARD",
        "gsafeguard": "tomacs.methods.gsafeguard:GSafeguard",
        "receiver": "tomacs.methods.receiver:Receiver",
    },
)
for _name, _cls in STATIC_METHODS.items():  # the static names are written once, in methods/static.py
    METHODS.register(_name, _cls)


def method_names() -> list[str]:
    return METHODS.names()


def method_class(name: str) -> type[Method]:
    """The class of method `name` (imports its module; its `Settings` is the method's schema)."""
    return METHODS.get(name)


def build_method(name: str, ctx: MethodContext, params: dict[str, Any]) -> Method:
    return method_class(name)(ctx, **params)


def is_trainable(name: str) -> bool:
    """Whether the method learns parameters, known before building it (which may load an embedder)."""
    return name in METHODS and bool(METHODS.get(name).trainable)
