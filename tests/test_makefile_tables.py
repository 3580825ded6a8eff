"""The Makefile's TABLES names every paper table of conf/table/ (`make smoke-tables` iterates it)."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_tables_lists_every_table_config() -> None:
    make = (REPO / "Makefile").read_text()
    (line,) = re.findall(r"^TABLES := (.+)$", make, flags=re.M)
    shipped = sorted(p.stem for p in (REPO / "conf" / "table").glob("*.yaml"))
    assert sorted(line.split()) == shipped
