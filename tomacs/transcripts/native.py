"""The native format: `tomacs.debate/1` JSON Lines, as `tomacs transcripts convert` writes it."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from tomacs.transcripts.formats import transcript_format
from tomacs.transcripts.jsonl import read_debates
from tomacs.transcripts.schema import SCHEMA, Debate

_BROKEN = object()


def first_object(path: Path) -> object:
    """The first non-blank line's JSON; `_BROKEN` when it is not JSON or not text."""
    try:
        with path.open("rb") as f:
            for raw in f:
                if raw.strip():
                    return json.loads(raw)
    except (OSError, ValueError):
        return _BROKEN
    return None


def is_native(path: Path) -> bool:
    """A file whose first line says the schema; also a .jsonl whose first line is not JSON at all,
    so that a broken file gets the reader's error naming its line, not "unknown format"."""
    if path.is_dir():
        return False
    first = first_object(path)
    if first is _BROKEN:
        return path.suffix == ".jsonl"
    return isinstance(first, dict) and first.get("schema") == SCHEMA


@transcript_format("native", detect=is_native, help=f"{SCHEMA} JSON Lines (docs/transcripts.md)")
def read_native(path: Path) -> Iterable[Debate]:
    if path.is_dir():
        files = sorted(path.glob("*.jsonl"))
        return [d for f in files for d in read_debates(f)]
    return read_debates(path)
