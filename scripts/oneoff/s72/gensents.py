"""Sentences of simulated replies the fit counts generic, and the generic share measured with the real side's
`common` stems too (stop 72).

python scripts/oneoff/s72/gensents.py SIMRUN REALDIR MODEL ROLE ROUND [N]
"""

import sys
from collections import Counter

import numpy as np

from tomacs.analysis.text_report import load_side
from tomacs.sim import text_model as tm
from tomacs.sim.from_episodes import select_debates


def shares(deb: list, common: set, role: str, rnd: int) -> tuple[float, list[str], Counter]:
    out, sents_g = [], []
    pos: Counter = Counter()
    for d in deb:
        vocab = tm._vocab(d)
        opts = tuple(d.options or ())
        for t in d.turns:
            if t.round != rnd or not t.text:
                continue
            if ("adversary" if d.is_adversarial(t.agent, t.round) else "honest") != role:
                continue
            text = tm._ANSWER_LINE.sub("", t.text)
            sents = tm.split_sentences(text)
            n = max(len(text.split()), 1)
            g = [i for i, s in enumerate(sents) if tm.generic_form(s, vocab, t.answer, common, opts)]
            out.append(sum(len(sents[i].split()) for i in g) / n)
            sents_g.extend(sents[i] for i in g)
            for i in g:
                pos["first" if i == 0 else "last" if i == len(sents) - 1 else "middle"] += 1
    return float(np.mean(out)), sents_g, pos


def main() -> None:
    sim_dir, real_dir, model, role, rnd = sys.argv[1:6]
    k = int(sys.argv[6]) if len(sys.argv) > 6 else 40
    sim = load_side([sim_dir])
    real = select_debates(load_side([real_dir]), model)
    cs, cr = tm.common_stems(sim), tm.common_stems(real)
    print("common stems: sim", len(cs), "real", len(cr), "both", len(cs & cr))
    a, sg, pos = shares(sim, cs, role, int(rnd))
    b, _, _ = shares(sim, cr, role, int(rnd))
    c, rg, rpos = shares(real, cr, role, int(rnd))
    print(f"generic share: sim (own common) {a:.3f}  sim (real common) {b:.3f}  real {c:.3f}")
    print("positions sim", dict(pos), "real", dict(rpos))
    rng = np.random.default_rng(0)
    for i in rng.choice(len(sg), min(k, len(sg)), replace=False):
        print("  SIM|", sg[int(i)])
    for i in rng.choice(len(rg), min(15, len(rg)), replace=False):
        print("  REAL|", rg[int(i)])


if __name__ == "__main__":
    main()
