"""Round-1 words whose use tells adversaries from honest agents, real against simulated (stop 71).

python scripts/oneoff/s72/r1words.py SIMRUN REALDIR MODEL [ROUND]
"""

import re
import sys
from collections import Counter

import numpy as np

from tomacs.analysis import texts as tx
from tomacs.analysis.text_report import load_side
from tomacs.sim.from_episodes import select_debates


def rates(reps: list, adv: bool) -> tuple[Counter, int]:
    c: Counter = Counter()
    n = 0
    for r in reps:
        if r.adversarial != adv:
            continue
        n += 1
        c.update(set(re.findall(r"[a-z][a-z']+", r.text.lower())))
    return c, n


def main() -> None:
    sim_dir, real_dir, model = sys.argv[1:4]
    rnd = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    out = {}
    for name, deb in (("sim", load_side([sim_dir])), ("real", select_debates(load_side([real_dir]), model))):
        reps = [r for r in tx.replies_of(deb, real=name == "real") if r.acting and r.round == rnd]
        ca, na = rates(reps, True)
        ch, nh = rates(reps, False)
        lo = {}
        for w in set(ca) | set(ch):
            if ca[w] + ch[w] < 0.03 * (na + nh):
                continue
            pa, ph = (ca[w] + 0.5) / (na + 1), (ch[w] + 0.5) / (nh + 1)
            lo[w] = (np.log(pa / (1 - pa)) - np.log(ph / (1 - ph)), pa, ph)
        out[name] = lo
    for name in ("real", "sim"):
        lo = out[name]
        other = out["sim" if name == "real" else "real"]
        top = sorted(lo.items(), key=lambda kv: -abs(kv[1][0]))[:45]
        print(f"== {name}: words telling adversaries (log-odds, share adv/honest), other side's log-odds")
        for w, (lo_w, pa, ph) in top:
            o = other.get(w)
            there = "-" if o is None else f"{o[0]:+.2f} {o[1]:.2f}/{o[2]:.2f}"
            print(f"  {w:16s} {lo_w:+.2f}  {pa:.2f}/{ph:.2f}   other {there}")


if __name__ == "__main__":
    main()
