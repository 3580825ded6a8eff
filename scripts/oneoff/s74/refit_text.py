"""Issue 38, stop 74: refit the shipped profiles' text models alone (a style word must be used in replies to
at least `COMMON_MIN` = 6 questions, was 3), everything else untouched.

As stop 73's add_frame.py (git show 574197b:scripts/oneoff/s73/add_frame.py): the text model is deterministic,
so this refits it on the same fitting questions (`provenance`: sources, models, split, split_seed) and
writes the file back with its header; the answer model and provenance are not touched. Prints which keys
changed per role and phase. Usage: python scripts/oneoff/s74/refit_text.py conf/profiles/NAME.yaml ...
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

from tomacs.sim import fit_episodes as fe
from tomacs.sim.from_episodes import read_debates
from tomacs.sim.text_model import fit_text_model


def main() -> None:
    for path in map(Path, sys.argv[1:]):
        raw = path.read_text(encoding="utf-8")
        header = "".join(ln for ln in raw.splitlines(keepends=True) if ln.startswith("#"))
        doc = yaml.safe_load(raw)
        prov = doc["provenance"]
        (model,) = prov["models"]
        debates = read_debates(prov["sources"], model)
        fit_d, _ = fe.split_questions(debates, prov["split"], prov["split_seed"])
        tm = fit_text_model(fit_d, seed=prov["split_seed"], source=doc["text"]["source"])
        assert tm is not None
        new, old = tm.to_dict(), doc["text"]
        if [new["source"], new["models"]] != [old["source"], old["models"]]:
            raise SystemExit(f"{path}: source or models differ")
        changed = {
            f"{r}/{p}": sorted(k for k in body if body[k] != old["phases"][r][p].get(k))
            for r, by in new["phases"].items()
            for p, body in by.items()
        }
        doc["text"] = new
        path.write_text(header + yaml.safe_dump(doc, sort_keys=False, allow_unicode=True), encoding="utf-8")
        print(path, changed)
        for r, by in new["phases"].items():
            for p, body in by.items():
                was = old["phases"][r][p]["generic_share"]
                print(f"  {r}/{p}: generic_share {was} -> {body['generic_share']}")


if __name__ == "__main__":
    main()
