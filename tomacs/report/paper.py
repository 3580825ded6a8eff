"""The TodyComm paper's published numbers (extracted by scripts/extract_paper_numbers.py)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

DATA = Path(__file__).with_name("paper_numbers.json")
PAPER_BACKBONE = "gpt-4.1-nano"


@cache
def records() -> tuple[dict[str, Any], ...]:
    return tuple(json.loads(DATA.read_text())["records"])


def lookup(method: str, benchmark: str, attack: str, metric: str) -> dict[str, Any] | None:
    """The paper's record for a cell, or None (the paper has no such cell)."""
    for r in records():
        if (r["method"], r["benchmark"], r["attack"], r["metric"]) == (method, benchmark, attack, metric):
            return r
    return None


def paper_methods(table: str = "Table 2") -> list[str]:
    seen: list[str] = []
    for r in records():
        if r["table"] == table and r["method"] not in seen:
            seen.append(r["method"])
    return seen
