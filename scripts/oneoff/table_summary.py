"""One-off (issue 40, 2026-11-29): the target cells' test and validation figures, mean +- std over seeds.

    python scripts/oneoff/table_summary.py outputs/s54   # reads t_<benchmark>_<attack>_s<seed>/"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

root = Path(sys.argv[1])


def ms(xs: list[float]) -> str:
    a = 100 * np.asarray(xs)
    return f"{a.mean():.1f} ± {a.std(ddof=1):.1f}" if len(a) > 1 else f"{a.mean():.1f}"


for bench in ("mmlu", "openbookqa"):
    for attack in ("eq50", "gt50"):
        runs = sorted(root.glob(f"t_{bench}_{attack}_s*/results.json"))
        if not runs:
            continue
        res = [json.loads(p.read_text()) for p in runs]
        logs = [
            [json.loads(x) for x in (p.parent / "train_log.jsonl").read_text().splitlines() if '"val_acc"' in x]
            for p in runs
        ]
        acc, ad = [r["metrics"]["acc"] for r in res], [r["metrics"]["adacc"] for r in res]
        comp = [r["baselines"]["complete"]["acc"] for r in res]
        per = ", ".join(f"{100 * a:.1f} / {100 * d:.1f}" for a, d in zip(acc, ad, strict=True))
        print(f"{bench} {attack} (n={len(res)}): Acc {ms(acc)} / ADAcc {ms(ad)} | Complete {ms(comp)} | {per}")
        for e in range(max(len(x) for x in logs)):
            va = [x[e]["val_acc"] for x in logs if len(x) > e]
            vd = [x[e]["val_adacc"] for x in logs if len(x) > e]
            print(f"   val epoch {e + 1}: {ms(va)} / {ms(vd)}")
        for r in res:
            v = r["train"]["validation"]
            b, last = v["best"], v["last"]
            gap = (100 * (b["acc"] - last["acc"]), 100 * (b["adacc"] - last["adacc"]))
            print(f"   seed {r['seed']}: best e{b['epoch']} -> last e{last['epoch']}, gap {gap[0]:.1f} / {gap[1]:.1f}")
