"""Issue 38, stop 81: length alone as an adversary detector (AUC of a reply's words, adversary longer) by the
kind of question (MAD-Follower's answer scale or not), acting rounds; the real held-out fold beside
simulated runs, with mean words and the log-length SD per role.

Usage: .venv/bin/python lenauc.py MODEL REAL_SOURCE k/K SIM_RUN...
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import numpy as np
from sklearn.metrics import roc_auc_score

from tomacs.analysis.texts import replies_of
from tomacs.sim.text_model import _scale_text, scale_answers
from tomacs.transcripts import load_debates
from tomacs.transcripts.schema import Debate
from tomacs.transcripts.split import parse_fold, select_debates


def table(debates: Sequence[Debate], scale: set[str], real: bool) -> str:
    kind = {d.question_key: any(_scale_text(o) in scale for o in d.options or ()) for d in debates}
    groups: dict[str, tuple[list[int], list[int]]] = {}
    for r in replies_of(debates, real):
        if not r.acting:
            continue
        for k in ("all", "scale" if kind[r.question] else "other"):
            words, labels = groups.setdefault(k, ([], []))
            words.append(len(r.text.split()))
            labels.append(int(r.adversarial))
    out = []
    for k, (w_list, y_list) in sorted(groups.items()):
        w, y = np.array(w_list), np.array(y_list)
        out.append(
            f"{k}: auc {roc_auc_score(y, w):.3f} hon {w[y == 0].mean():.0f} adv {w[y == 1].mean():.0f} "
            f"sd(log) hon {np.log(w[y == 0]).std():.2f} adv {np.log(w[y == 1]).std():.2f} n {len(w)}"
        )
    return " | ".join(out)


def main(model: str, real: str, fold: str, runs: list[str]) -> None:
    every = select_debates(load_debates([real]), model)
    scale = scale_answers(every)
    print("real", table(select_debates(every, None, held_out=True, fold=parse_fold(fold)), scale, True))
    for run in runs:
        print(run.rstrip("/").split("/")[-1], table(load_debates([run]), scale, False))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:])
