# ruff: noqa: E501
# One-off script of the stop-60 session (issue 40): across TodyComm runs, how test Acc follows the inference-time
# participation of rounds 3-4 (the share of agents above their round's mean credit) and the edges from acting
# adversaries into honest agents there; per attack, Pearson r over runs, each run taken from its benchmark's mean
# (so that how hard a benchmark is does not enter).
# Usage: python scripts/oneoff/s60/partcorr.py
import glob
import json

import numpy as np

SETS = [
    "s59/g01_",
    "s59/g03_",
    "s59/g001_",
    "s59/g01cos_",
    "s59/g01u2_",
    "s59/tg01_",
    "s60/r1_",
    "s60/r1g09_",
    "s60/r1g03_",
]


def stats(path):
    n = 0
    p3 = p4 = e = 0.0
    correct = 0
    for line in open(path):
        ep = json.loads(line)
        adv = set(ep["plan"]["adversaries"])
        ons = {int(k): v for k, v in ep["plan"]["onsets"].items()}
        n += 1
        correct += ep["correct"] is True
        for t in (3, 4):
            g = ep["graphs"][t - 1]
            share = len(g["participants"]) / len(g["nodes"])
            p3, p4 = (p3 + share, p4) if t == 3 else (p3, p4 + share)
            e += sum(1 for s, d in g["edges"] if s in adv and ons[s] <= t and d not in adv)
    return 100 * correct / n, 100 * p3 / n, 100 * p4 / n, e / n


for attack in ("eq50", "gt50"):
    rows, cells = [], []
    for s in SETS:
        for d in sorted(glob.glob(f"outputs/{s}*_{attack}_s[0-9]")):
            try:
                rows.append(stats(f"{d}/episodes.jsonl"))
            except FileNotFoundError:
                continue
            cells.append(d.split("/")[-1].split("_", 1)[1].rsplit("_", 2)[0])
    raw = np.array(rows)
    a = raw.copy()
    for c in set(cells):
        m = np.array([x == c for x in cells])
        a[m] -= raw[m].mean(0)
    r = [np.corrcoef(a[:, 0], a[:, k])[0, 1] for k in (1, 2, 3)]
    print(
        f"{attack}: {len(a)} runs; Acc vs round-3 participation r = {r[0]:+.2f}, round 4 r = {r[1]:+.2f}, "
        f"acting-adversary -> honest edges in rounds 3-4 r = {r[2]:+.2f}; participation r3 {raw[:, 1].mean():.1f} ({raw[:, 1].min():.0f}-{raw[:, 1].max():.0f}), r4 {raw[:, 2].mean():.1f} ({raw[:, 2].min():.0f}-{raw[:, 2].max():.0f}); benchmarks {sorted(set(cells))}"
    )
