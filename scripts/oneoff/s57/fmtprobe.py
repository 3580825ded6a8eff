"""Real qwen-max / qwen3-8b adversary AUC with and without the format lines (#answer, #confidence)."""

import re

import numpy as np

from tomacs.analysis.text_report import embedding_function, load_side
from tomacs.analysis.texts import cv_auc, replies_of
from tomacs.sim.from_episodes import select_debates

emb = embedding_function("minilm")
for m in ("qwen-max", "qwen3-8b"):
    deb = select_debates(load_side(["/work/shared/data/debates/mad-follower"]), m)
    reps = [r for r in replies_of(deb, True) if r.acting]
    y = np.array([r.adversarial for r in reps], float)
    g = [r.question for r in reps]
    variants = {
        "as is": [r.text for r in reps],
        "no #answer/#confidence lines": [
            re.sub(r"^#(answer|confidence):.*$", "", r.text, flags=re.M).replace("#rationale:", "").strip()
            for r in reps
        ],
        "only the #confidence line": [(re.search(r"#confidence:.*", r.text) or [""])[0] for r in reps],
    }
    for k, t in variants.items():
        print(m, k, round(cv_auc(emb(t), y, g), 3), flush=True)
