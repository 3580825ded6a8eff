"""Typed method settings: one dataclass per method is the only place its keys, types, defaults and
valid values are written.

Why: the defaults used to live twice (a `DEFAULTS` dict in the method file and
conf/method/<name>.yaml) and the checks a third time (by hand in each `__init__`), and modules
outside a method read `cfg.method.*` raw. Now a method's `Settings` dataclass is registered as a
Hydra structured config (group `schema/method`), its yaml extends it through the defaults list and
keeps only what differs, and every reader gets the validated object: `method_settings(cfg)` from a
config (tomacs.methods.registry, which finds a schema by method name: this module imports no method,
so the static topologies can use it without an import circle), `method.settings` from a built
method. Validation runs in `__post_init__`, so a
constructor call, a composed config and an old run directory's config.yaml are checked alike.

Fields declare their checks with `choice(...)` and `bounded(...)`; cross-field rules go in a
subclass's `check()`. A failure is one line naming the key, what it must be and what it got.
"""

from __future__ import annotations

import dataclasses
import difflib
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Self, TypeVar

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

__all__ = [
    "LearnedSettings",
    "MethodSettings",
    "OpenSettings",
    "SettingsError",
    "bookkeeping",
    "bookkeeping_fields",
    "bool_fields",
    "bounded",
    "choice",
    "listed",
]


class SettingsError(ValueError):
    """A setting with a bad value; `detail` names the key without the method (for `method.<key>`)."""

    def __init__(self, owner: str, key: str, value: Any, want: str) -> None:
        self.owner, self.key, self.value, self.want = owner, key, value, want
        self.detail = f"{key} must be {want}, got {value!r}"
        super().__init__(f"{owner}: {self.detail}")


_T = TypeVar("_T")
_Num = TypeVar("_Num", int, float, None)  # None: a field unset by default


def choice(default: str, options: tuple[str, ...]) -> str:
    """A string field that must be one of `options`."""
    return field(default=default, metadata={"choices": tuple(options)})


def bounded(
    default: _Num,
    low: float | None = None,
    high: float | None = None,
    open_low: bool = False,
    open_high: bool = True,
) -> _Num:
    """A number field in [low, high) by default; `open_low`/`open_high` say which ends are excluded."""
    return field(default=default, metadata={"range": (low, high, open_low, open_high)})


def bookkeeping(default: _T | None = None) -> _T | None:
    """A field that says where something is kept, not what runs (a file whose content the other settings
    fix): a report never tells runs apart by it (`tomacs.report.settings`)."""
    return field(default=default, metadata={"bookkeeping": True})


def listed(*values: _T) -> list[_T]:
    """A list field with a default (dataclasses need a factory for mutable defaults)."""
    return field(default_factory=lambda: list(values))


def _bound_text(low: float | None, high: float | None, open_low: bool, open_high: bool) -> str:
    if high is None:
        return f">{'' if open_low else '='} {low:g}"
    if low is None:
        return f"<{'' if open_high else '='} {high:g}"
    return f"in {'(' if open_low else '['}{low:g}, {high:g}{')' if open_high else ']'}"


def _in_range(v: float, low: float | None, high: float | None, open_low: bool, open_high: bool) -> bool:
    bad = low is not None and (v <= low if open_low else v < low)
    return not (bad or (high is not None and (v >= high if open_high else v > high)))


_KIND_TEXT = {int: "an integer", float: "a number", bool: "true or false", str: "a string"}


def _unwrap(hint: Any) -> tuple[Any, bool]:
    """(the type inside an Optional, whether None is allowed)."""
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        return args[0], len(args) < len(typing.get_args(hint))
    return hint, False


def _convert(kind: Any, value: Any) -> tuple[bool, Any]:
    """(whether `value` is of `kind`, the value as stored): ints pass for floats, never bools."""
    if kind is bool:
        return isinstance(value, bool), value
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool), value
    if kind is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        return ok, float(value) if ok else value
    if kind is str:
        return isinstance(value, str), value
    if typing.get_origin(kind) is list:
        (item,) = typing.get_args(kind)
        if not isinstance(value, list | tuple):
            return False, value
        conv = [_convert(item, v) for v in value]
        return all(ok for ok, _ in conv), [v for _, v in conv]
    return True, value


@dataclass
class MethodSettings:
    """The settings every method has: its name (fixed per schema: the yaml need not repeat it)."""

    name: str = ""

    def __post_init__(self) -> None:
        default = type(self).__dataclass_fields__["name"].default
        if default and self.name != default:
            raise SettingsError(str(default), "name", self.name, repr(default))
        for f in fields(self):
            setattr(self, f.name, self._checked(f, getattr(self, f.name)))
        self.check()

    def check(self) -> None:
        """Hook: rules that join several fields."""

    def fail(self, key: str, want: str) -> SettingsError:
        return SettingsError(self.name, key, getattr(self, key), want)

    def _checked(self, f: dataclasses.Field[Any], value: Any) -> Any:
        kind, optional = _unwrap(_hints(type(self))[f.name])
        if value is None and optional:
            return None
        want = _KIND_TEXT.get(kind, "a list of numbers" if typing.get_origin(kind) is list else str(kind))
        choices = f.metadata.get("choices")
        rng = f.metadata.get("range")
        if choices:
            want = f"one of {', '.join(choices)}"
        elif rng:
            want = f"{want} {_bound_text(*rng)}"
        want += " or null" if optional else ""
        ok, value = _convert(kind, value)
        if ok and choices:
            ok = value in choices
        if ok and rng:
            ok = _in_range(float(value), *rng)
        if not ok:
            raise SettingsError(self.name or str(_field_default(type(self), "name")), f.name, value, want)
        return value

    @classmethod
    def from_params(cls, params: Mapping[str, object]) -> Self:
        """Settings from keyword parameters (a constructor call, a config's method node); an unknown
        key is one line listing the valid ones."""
        valid = [f.name for f in fields(cls)]
        unknown = sorted(set(params) - set(valid))
        if unknown:
            close = difflib.get_close_matches(unknown[0], valid, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            owner = _field_default(cls, "name") or "method"
            raise ValueError(f"unknown {owner} parameters {unknown}{hint}; valid: {sorted(valid)}")
        # any values: __post_init__ checks each against its field (one line naming a bad one)
        values: dict[str, Any] = dict(params)
        return cls(**values)

    def params(self) -> dict[str, object]:
        """The settings as plain keyword parameters (name included)."""
        return dataclasses.asdict(self)


@dataclass
class LearnedSettings(MethodSettings):
    """What every learned method takes besides its own keys (its embedder is the run's one `embedder`
    key, tomacs.config.resolve_embedder, never a method setting)."""

    # null = top-level train.lr; read by the trainer, not by the method
    lr: float | None = None
    # gradient steps per batch of episodes (read by the trainer): 1 = one REINFORCE step (the papers');
    # >1 adds PPO-clipped steps on the same episodes, no extra LLM call (methods whose `reuses` is True);
    # null = the method's own choice (TodyComm's `resolve_updates`), else 1
    updates: int | None = bounded(1, 1)
    update_clip: float = bounded(0.2, 0.0, 1.0, open_low=True, open_high=True)  # updates > 1: the ratio clip


# A learned method's key whose default is not the behaviour runs had before it existed: their value then, for
# resuming, skipping and labelling a run whose file lacks the key (tomacs.job.files, tomacs.report.collect).
# TodyComm's `decision_credit` and `updates` became auto/null (the expected decision, 4 steps) in issue 40.
METHOD_KEYS_BEFORE: dict[str, object] = {"updates": 1, "decision_credit": "episode"}


@dataclass
class OpenSettings(MethodSettings):
    """A method without its own schema yet: its name, and its other keys unchecked in `extra`."""

    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_params(cls, params: Mapping[str, object]) -> Self:
        rest = {k: v for k, v in params.items() if k != "name"}
        return cls(name=str(params.get("name") or ""), extra=rest)

    def params(self) -> dict[str, object]:
        return {"name": self.name, **self.extra}


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, object]:
    """The resolved annotations of a schema, read once per class (a plain dict: mypy takes a
    non-frozen dataclass's class for unhashable, so functools.cache could not be checked)."""
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _field_default(cls: type, key: str) -> Any:
    f = cls.__dataclass_fields__.get(key)  # type: ignore[attr-defined]
    return None if f is None else f.default


def bool_fields(cls: type[DataclassInstance]) -> dict[str, object]:
    """The true/false keys of schema `cls` and their defaults: OmegaConf turns `yes`, `on` or any
    integer into a boolean, so `tomacs.config` holds overrides of these keys to true/false."""
    return {f.name: f.default for f in fields(cls) if _unwrap(_hints(cls)[f.name])[0] is bool}


def bookkeeping_fields(cls: type[MethodSettings]) -> list[str]:
    """The keys of schema `cls` declared with `bookkeeping(...)`."""
    return [f.name for f in fields(cls) if f.metadata.get("bookkeeping")]
