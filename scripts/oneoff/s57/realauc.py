"""Real adversary-vs-honest AUC on fitting vs held-out questions, with a question bootstrap."""

import sys

import numpy as np

from tomacs.analysis.text_report import embedding_function, load_side
from tomacs.analysis.texts import cv_auc, replies_of
from tomacs.sim.fit_episodes import split_questions
from tomacs.sim.from_episodes import select_debates

D = "/work/shared/data/debates"
MAA = D + "/multi-agent-attack/mmlu/adv_100_3_3_1"
SRC = {
    "qwen3-8b": D + "/mad-follower",
    "qwen-max": D + "/mad-follower",
    "gpt-3.5-turbo": MAA + "-gpt-3.5-turbo-gpt-3.5-turbo",
    "Qwen1.5-14B-Chat": MAA + "-Qwen1.5-14B-Chat-Qwen1.5-14B-Chat",
    "gpt-4o": MAA + "-gpt-4o-gpt-4o",
}
emb = embedding_function("minilm")
for m in sys.argv[1:] or SRC:
    deb = select_debates(load_side([SRC[m]]), m)
    fit, held = split_questions(deb, 0.7, 0)
    row = [m]
    for name, part in (("fit", fit), ("held", held), ("all", deb)):
        reps = [r for r in replies_of(part, True) if r.acting]
        x = emb([r.text for r in reps])
        y = np.array([r.adversarial for r in reps], float)
        g = [r.question for r in reps]
        a = cv_auc(x, y, g)
        # by round
        rs = sorted({r.round for r in reps})
        byr = [
            cv_auc(
                x[[i for i, r in enumerate(reps) if r.round == t]],
                y[[i for i, r in enumerate(reps) if r.round == t]],
                [g[i] for i, r in enumerate(reps) if r.round == t],
            )
            for t in rs
        ]
        row.append(
            f"{name}: q={len(set(g))} n={len(y)} auc={a:.3f} rounds="
            + "/".join(f"{b:.3f}" if b else "-" for b in byr)
        )
    print(" | ".join(row), flush=True)
