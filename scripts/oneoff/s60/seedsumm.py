# ruff: noqa: E501
# One-off script of the stop-60 session (issue 40): issue 40's target cells over seeds 0-5 (stop 59's seeds 0-2
# in outputs/s59/tg01_*, this stop's 3-5 in outputs/s60/tg01_*). Test Acc / ADAcc per seed, on each seed's own
# episodes and paired on evaluation seed 0's (seed 0's own run; outputs/s59/pe_* and outputs/s60/pe_*), with the
# seed std of Acc and its 95 % chi-square interval.
# Usage: python scripts/oneoff/s60/seedsumm.py
import json
import statistics as st

from scipy.stats import chi2


def acc(path):
    try:
        m = json.load(open(f"{path}/results.json"))["metrics"]
    except FileNotFoundError:
        return None
    return 100 * m["acc"], 100 * m["adacc"]


def where(s):
    return "s59" if s < 3 else "s60"


def interval(sd, n):
    return sd * ((n - 1) / chi2.ppf(0.975, n - 1)) ** 0.5, sd * ((n - 1) / chi2.ppf(0.025, n - 1)) ** 0.5


for b in ("mmlu", "openbookqa"):
    for a in ("eq50", "gt50"):
        own = [acc(f"outputs/{where(s)}/tg01_{b}_{a}_s{s}") for s in range(6)]
        paired = [own[0]] + [acc(f"outputs/{where(s)}/pe_{b}_{a}_s{s}") for s in range(1, 6)]
        print(f"{b} {a}")
        for name, xs in (("own", own), ("paired", paired)):
            have = [x for x in xs if x is not None]
            line = ", ".join("-" if x is None else f"{x[0]:.1f} / {x[1]:.1f}" for x in xs)
            accs = [x[0] for x in have]
            sd = st.stdev(accs) if len(accs) > 1 else float("nan")
            lo, hi = interval(sd, len(accs)) if len(accs) > 1 else (float("nan"),) * 2
            sd03 = st.stdev(accs[:3]) if len(accs) >= 3 else float("nan")
            sd36 = st.stdev(accs[3:]) if len(accs) == 6 else float("nan")
            print(
                f"  {name:6s}: {line} | n {len(accs)} mean {st.mean(accs):.1f} / {st.mean(x[1] for x in have):.1f}, std {sd:.1f} (95 % {lo:.1f}-{hi:.1f}); seeds 0-2 {sd03:.1f}, 3-5 {sd36:.1f}"
            )
