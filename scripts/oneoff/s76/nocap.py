"""Issue 38, stop 76 what-if: maa-qwen14's text model refitted with no cap on its banks (BANK_MAX 300 ->
none), written as profile maa-qwen14-nocap to /tmp/s76/profiles; prints the bank sizes.

Usage (repository root): python scripts/oneoff/s76/nocap.py; then TOMACS_PROFILES=/tmp/s76/profiles."""

from __future__ import annotations

from pathlib import Path

import yaml

from tomacs.sim import fit_episodes as fe
from tomacs.sim import text_model
from tomacs.sim.from_episodes import read_debates

text_model.BANK_MAX = 10**9
src = Path("conf/profiles/maa-qwen14.yaml")
doc = yaml.safe_load(src.read_text())
prov = doc["provenance"]
(model,) = prov["models"]
fit_d, _ = fe.split_questions(read_debates(prov["sources"], model), prov["split"], prov["split_seed"])
tm = text_model.fit_text_model(fit_d, seed=prov["split_seed"], source=doc["text"]["source"])
assert tm is not None
doc["text"] = tm.to_dict()
doc["name"] = "maa-qwen14-nocap"
for r, by in doc["text"]["phases"].items():
    for p, pt in by.items():
        kinds = ("openers", "general", "closers", "discuss", "answering")
        print(r, p, {k: len(pt.get(k, [])) for k in kinds})
out = Path("/tmp/s76/profiles/maa-qwen14-nocap.yaml")
out.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=110))
