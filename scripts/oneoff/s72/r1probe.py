"""Round-1 probe diagnostics (stop 71): where a probe trained on simulated round-1 replies loses against real.

python scripts/oneoff/s72/r1probe.py SIMRUN REALDIR MODEL [ROUND]
"""

import sys

import numpy as np

from tomacs.analysis import texts as tx
from tomacs.analysis.text_report import embedding_function, load_side
from tomacs.sim.fit_episodes import split_questions
from tomacs.sim.from_episodes import select_debates


def main() -> None:
    sim_dir, real_dir, model = sys.argv[1:4]
    rnd = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    sim = load_side([sim_dir])
    real_fit, real = split_questions(select_debates(load_side([real_dir]), model), 0.7, 0)
    emb = embedding_function("minilm")
    sides = {}
    for name, deb in (("sim", sim), ("fit", real_fit), ("held", real)):
        reps = [r for r in tx.replies_of(deb, real=name != "sim") if r.acting and r.round == rnd]
        x = emb([r.text for r in reps])
        y = np.array([r.adversarial for r in reps], dtype=float)
        g = [r.question for r in reps]
        sides[name] = (reps, x, y, g)
        print(name, len(reps), int(y.sum()))
    for a in ("sim", "fit"):
        for b in ("sim", "fit", "held"):
            xa, ya, ga = sides[a][1:4]
            xb, yb, gb = sides[b][1:4]
            if a == b:
                auc = tx.cv_auc(xa, ya, ga)
            else:
                auc = tx.transfer_auc(xa, ya, ga, xb, yb, gb)
            print(f"probe {a} -> {b}: {auc:.3f}")
    # style d by side at this round
    for name in ("sim", "fit", "held"):
        reps = sides[name][0]
        st = [tx.style_of(r.text) for r in reps]
        keys = list(st[0])
        y = sides[name][2]
        row = []
        for k in keys:
            v = np.array([s[k] for s in st])
            d = tx._cohen_d(v[y == 1], v[y == 0])
            dd = d if d is None else round(d, 2)
            row.append(f"{k}={np.mean(v[y == 0]):.2f}/{np.mean(v[y == 1]):.2f}(d{dd})")
        print(name, " ".join(row))
    # on-target-only honest vs adversaries, per side
    for name in ("sim", "fit", "held"):
        reps, x, y, g = sides[name]
        ot = np.array([r.on_target for r in reps])
        print(name, "honest on target", int(((y == 0) & ot).sum()), "of", int((y == 0).sum()))


if __name__ == "__main__":
    main()
