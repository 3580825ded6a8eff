"""Issue 38, stop 68: refit only the text model (`text`) of the five shipped profiles, from the same
fitting questions as `make profiles` (the provenance's sources, model, split and split seed), so that
they carry `topic_density` and `answer_rate`; the behavioural fit stays byte for byte as shipped
(`make profiles` refits it too and moves its optimum in the 4th decimal between runs).

Usage: TOMACS_DATA=... python refit_text.py conf/profiles/*.yaml
"""

from __future__ import annotations

import sys
from pathlib import Path

from tomacs.sim import fit_episodes as fe
from tomacs.sim.from_episodes import read_debates
from tomacs.sim.profiles import load_profile_file, save_profile
from tomacs.sim.text_model import fit_text_model


def main() -> None:
    for path in map(Path, sys.argv[1:]):
        profile, prov = load_profile_file(path)
        assert prov is not None, path
        paths = [str(p) for p in prov["sources"]]
        debates = read_debates(paths, prov["models"][0])
        fit_d, _ = fe.split_questions(debates, float(prov["split"]), int(prov["split_seed"]))
        tm = fit_text_model(fit_d, seed=int(prov["split_seed"]), source=", ".join(paths))
        save_profile(profile, prov, dest=path, text=tm)
        print(path, len(fit_d), "fitting debates")


if __name__ == "__main__":
    main()
