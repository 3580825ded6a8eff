"""Name -> plugin tables: the one way methods, benchmarks and backbones are plugged in.

Each kind keeps a `Registry` next to its base class, and its built-in entries are written there as
"module:attr" strings. A string is imported only when its name is asked for, so reading a table imports
no plugin (a static run never imports torch), and the base module never imports the modules that
subclass it (no import circle). This module imports nothing from tomacs, so any layer may use it.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Generic, TypeVar

T = TypeVar("T")

__all__ = ["Registry", "load_target"]


def load_target(target: str) -> object:
    """The object a "module:attr" string names (the module is imported)."""
    module, sep, attr = target.partition(":")
    if not sep or not module or not attr:
        raise ValueError(f"plugin target '{target}' must read 'module:attr', e.g. 'tomacs.methods.crs:CRS'")
    return getattr(importlib.import_module(module), attr)


class Registry(Generic[T]):
    """Plugins of one kind by name: built-ins as lazy "module:attr" strings, more added by `register`.

    `kind` names the plugin kind in the one-line error an unknown name raises, which lists the valid
    names so a typo in a sweep is fixed at once.
    """

    def __init__(self, kind: str, builtins: Mapping[str, str]) -> None:
        self.kind = kind
        self._targets: dict[str, str | T] = dict(builtins)
        self._loaded: dict[str, T] = {}

    def register(self, name: str, target: str | T) -> None:
        """Add a plugin: a "module:attr" string (imported when first asked for) or the object itself.
        Registering a name again with a different target is an error, not a silent replacement."""
        old = self._targets.get(name)
        if old is not None and old != target and self._loaded.get(name) is not target:
            raise ValueError(f"{self.kind} '{name}' registered twice")
        self._targets[name] = target

    def names(self) -> list[str]:
        """Every registered name, sorted."""
        return sorted(self._targets)

    def __contains__(self, name: object) -> bool:
        return name in self._targets

    def get(self, name: str) -> T:
        """The plugin registered as `name` (imported now if it was given as a string)."""
        if name in self._loaded:
            return self._loaded[name]
        if name not in self._targets:
            raise ValueError(f"unknown {self.kind} '{name}'; valid: {', '.join(self.names())}")
        target = self._targets[name]
        obj: T = load_target(target) if isinstance(target, str) else target  # type: ignore[assignment]
        self._loaded[name] = obj
        return obj

    def schemas(self) -> dict[str, type]:
        """Each plugin's settings schema (its class's `Settings` dataclass), by name; a plugin without
        one is left out. Imports every plugin: called once, when a config is first composed."""
        return {n: s for n in self.names() if (s := getattr(self.get(n), "Settings", None)) is not None}

    def store_schemas(self) -> None:
        """Store every schema in Hydra's ConfigStore as `schema/<kind>/<name>`: conf/<kind>/<option>.yaml
        extends it with `defaults: [/schema/<kind>/<name>@_here_, _self_]` and keeps only what differs."""
        from hydra.core.config_store import ConfigStore

        cs = ConfigStore.instance()
        for name, schema in self.schemas().items():
            cs.store(group=f"schema/{self.kind}", name=name, node=schema)
