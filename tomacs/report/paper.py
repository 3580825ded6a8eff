"""The TodyComm paper's published numbers (extracted by tomacs.report.paper_numbers: `make paper-numbers`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import NotRequired, TypedDict

DATA = Path(__file__).with_name("paper_numbers.json")
PAPER_BACKBONE = "gpt-4.1-nano"
# the method the paper proposes: the row its claims are about (`tomacs check-targets`), a row key of
# paper_numbers.json like every other method name here
PAPER_METHOD = "todycomm"
# the paper as a reader can find it (the repository's copy of its text is not shipped with tomacs)
PAPER_TITLE = (
    "Fan et al., TodyComm: Task-Oriented Dynamic Communication for Multi-Round LLM-based Multi-Agent System"
)


class PaperRecord(TypedDict):
    """One published number of paper_numbers.json (written by tomacs.report.paper_numbers)."""

    paper: str
    table: str  # "Table 2", ...
    method: str
    benchmark: str
    attack: str
    metric: str  # acc | adacc | token
    value: float  # in the paper's units (Acc / ADAcc in %)
    source: str  # where in the paper the number stands
    std: NotRequired[float]
    implied: NotRequired[bool]  # derived from the text: no table prints it
    improvement: NotRequired[float]  # an implied one: the lead over it that the text states


@cache
def records() -> tuple[PaperRecord, ...]:
    return tuple(json.loads(DATA.read_text())["records"])


def lookup(method: str, benchmark: str, attack: str, metric: str) -> PaperRecord | None:
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


# The agents N and rounds T of each paper table's experiments: a number of ours is set beside the
# paper's only when our job ran with the same N and T (other settings, e.g. the test-set size, are
# named in the report's setting column).
PAPER_SETTINGS: dict[str, dict[str, int]] = {
    "Table 2": {"agents": 6, "rounds": 4},
    "Table 9": {"agents": 6, "rounds": 4},
    "Table 10": {"agents": 6, "rounds": 4},
    "App. E.4": {"agents": 6, "rounds": 4},
    "Table 7": {"agents": 2, "rounds": 2},
    "Table 8": {"agents": 7, "rounds": 2},
}


def comparable(record: Mapping[str, object], settings: Mapping[str, object]) -> bool:
    """Whether our experiment with these settings (decoded values) is the paper record's setting."""
    want = PAPER_SETTINGS.get(str(record.get("table")), {})
    return all(settings.get(k) is None or settings.get(k) == v for k, v in want.items())
