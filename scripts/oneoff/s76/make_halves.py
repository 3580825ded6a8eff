"""Issue 38, stop 76: maa-qwen14's profile with each text bank cut to every other entry (A: even, B: odd),
written to /tmp/s76/profiles for `halves.sh` (TOMACS_PROFILES)."""

from __future__ import annotations

from pathlib import Path

import yaml

BANKS = ("openers", "general", "closers", "discuss", "discuss_changed", "answering")
src = Path("conf/profiles/maa-qwen14.yaml")
out = Path("/tmp/s76/profiles")
out.mkdir(parents=True, exist_ok=True)
for half, start in (("A", 0), ("B", 1)):
    doc = yaml.safe_load(src.read_text())
    doc["name"] = f"maa-qwen14-{half}"
    for by in doc["text"]["phases"].values():
        for pt in by.values():
            for k in BANKS:
                if len(pt.get(k, [])) >= 2:
                    pt[k] = pt[k][start::2]
    (out / f"maa-qwen14-{half}.yaml").write_text(
        yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=110)
    )
