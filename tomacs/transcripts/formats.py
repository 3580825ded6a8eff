"""The transcript formats behind one loader: adding a format is one decorated function.

    @transcript_format("my-logs", detect=lambda p: p.suffix == ".log")
    def read_my_logs(path: Path) -> Iterable[Debate]:
        ...

`load_debates` picks the first format whose `detect` accepts a path (in registration order: the
native schema first), or the one named by `fmt=`. Every reader returns checked debates
(`check_debate`), so a fitter never sees a debate that breaks the schema's rules.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tomacs.transcripts.schema import Debate, TranscriptError

Reader = Callable[[Path], Iterable[Debate]]
Detect = Callable[[Path], bool]


@dataclass(frozen=True)
class TranscriptFormat:
    name: str
    read: Reader
    detect: Detect
    help: str


_FORMATS: dict[str, TranscriptFormat] = {}
_BUILTINS = (
    "tomacs.transcripts.native",
    "tomacs.transcripts.episodes",
    "tomacs.transcripts.mad_follower",
    "tomacs.transcripts.multi_agent_attack",
)


def transcript_format(name: str, detect: Detect, help: str = "") -> Callable[[Reader], Reader]:
    """Register `reader(path) -> debates` under `name`; `detect(path)` says whether a path (file
    or directory) is in this format, and must be cheap (it runs on every path not yet claimed)."""

    def deco(fn: Reader) -> Reader:
        if name in _FORMATS:
            raise ValueError(f"transcript format '{name}' registered twice")
        doc = help or (fn.__doc__ or "").strip().split("\n")[0]
        _FORMATS[name] = TranscriptFormat(name, fn, detect, doc)
        return fn

    return deco


def _ensure_builtins() -> None:
    for mod in _BUILTINS:
        importlib.import_module(mod)


def known_formats() -> dict[str, TranscriptFormat]:
    """Name -> format, in detection order."""
    _ensure_builtins()
    return dict(_FORMATS)


def detect_format(path: str | Path) -> str:
    """The name of the first format that claims `path`; a one-line error listing them otherwise."""
    p = Path(path)
    if not p.exists():
        raise TranscriptError(f"{p}: no such file or directory")
    for f in known_formats().values():
        if f.detect(p):
            return f.name
    raise TranscriptError(
        f"{p}: not a known transcript format; known: {', '.join(known_formats())} (--format chooses one)"
    )


def load_debates(paths: Sequence[str | Path] | str | Path, fmt: str | None = None) -> list[Debate]:
    """Every debate under `paths` (files or directories), each path in its detected format or in
    `fmt`. A debate id repeated across paths is an error: a fitter would count it twice (give the
    sources distinct ids, e.g. by converting them one at a time)."""
    if isinstance(paths, (str, Path)):
        paths = [paths]
    formats = known_formats()
    if fmt is not None and fmt not in formats:
        raise TranscriptError(f"unknown transcript format '{fmt}'; known: {', '.join(formats)}")
    out: list[Debate] = []
    seen: dict[str, Path] = {}
    for path in paths:
        p = Path(path)
        name = fmt or detect_format(p)
        if not p.exists():
            raise TranscriptError(f"{p}: no such file or directory")
        for d in formats[name].read(p):
            if d.id in seen:
                raise TranscriptError(f"{p}: debate {d.id!r}: field 'id': repeated (also in {seen[d.id]})")
            seen[d.id] = p
            out.append(d)
    return out
