"""Method names -> classes (`METHODS`, a `tomacs.registry.Registry`). Entries are "module:class"
strings imported on first use, so a static run never imports torch; a new method adds one line here.
What a method plugs in besides its class (its CLI commands, its report sections) it names itself, as
"module:attr" strings on the class (`tomacs.methods.base.Method`); `method_extras` collects them for the
CLI and the report, which never name a method.

A method's settings are found by its name here too (`method_settings(spec)`, `settings_class`): the
schema is the class's `Settings` (tomacs.methods.settings), and a name leads to its class only here,
so tomacs.methods.settings imports no method and no import circle forms."""

from __future__ import annotations

from collections.abc import Mapping

from tomacs.methods.base import Method, MethodContext
from tomacs.methods.settings import MethodSettings, OpenSettings, bookkeeping_fields, bool_fields
from tomacs.methods.static import STATIC_METHODS
from tomacs.registry import Registry, load_target
from tomacs.runspec.spec import Params, RunSpec

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


def build_method(name: str, ctx: MethodContext, params: Mapping[str, object]) -> Method:
    return method_class(name)(ctx, **params)


def method_extras(kind: str) -> list[object]:
    """Every registered method's extras of one kind ("commands", "report_sections": a tuple of
    "module:attr" strings on its class), loaded, in the order of the method names then as listed.
    Imports every method module (no torch: tests/test_light_imports.py) and the extras named."""
    if kind not in ("commands", "report_sections"):
        raise ValueError(f"unknown kind of method extras '{kind}'; valid: commands, report_sections")
    return [load_target(t) for name in METHODS.names() for t in getattr(METHODS.get(name), kind)]


def is_trainable(name: str) -> bool:
    """Whether the method learns parameters, known before building it (which may load an embedder)."""
    return name in METHODS and bool(METHODS.get(name).trainable)


# -- settings by method name (tomacs.methods.settings holds the schema machinery) -------------------
def settings_class(name: str) -> type[MethodSettings]:
    """The schema of method `name` (OpenSettings for a method that declares none)."""
    return getattr(method_class(name), "Settings", None) or OpenSettings


def method_settings(config: RunSpec | Mapping[str, object]) -> MethodSettings:
    """The validated settings of a config's method (a run spec, a composed config, or an old run
    directory's config.yaml): what everything outside the method reads instead of `method.*`."""
    node = config.method if isinstance(config, RunSpec) else config["method"]
    if not isinstance(node, Mapping):
        raise ValueError(f"the config's method is {node!r}, not a mapping of its settings")
    params = (node if isinstance(node, Params) else Params(node)).plain()
    return settings_class(str(params.get("name"))).from_params(params)


def bool_keys(name: str) -> dict[str, object]:
    """The true/false keys of method `name`'s schema and their defaults (tomacs.config holds
    overrides of these keys to true/false)."""
    return bool_fields(settings_class(name))


def method_defaults(name: str) -> dict[str, object] | None:
    """A method's shipped defaults (its schema's), or None for a method that declares no schema."""
    cls = settings_class(name)
    return None if cls is OpenSettings else cls().params()


def bookkeeping_keys() -> list[str]:
    """The method keys, of every registered method, that say where a run keeps something rather than
    what it runs (declared with `tomacs.methods.settings.bookkeeping`), sorted."""
    return sorted({k for n in method_names() for k in bookkeeping_fields(settings_class(n))})
