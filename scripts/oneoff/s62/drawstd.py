"""Stop 62: seed spread of TodyComm's test Acc/ADAcc at the four target cells when each policy is scored on
eval seed 0's plans under draws 0-3 of the simulated agents (draws.sh), against one draw."""

import json
import statistics as st
from pathlib import Path

OUT = Path("/work/main/outputs")


def draw0(bench: str, attack: str, seed: int) -> Path:
    if seed == 0:
        return OUT / "s59" / f"tg01_{bench}_{attack}_s0"
    return OUT / ("s59" if seed < 3 else "s60") / f"pe_{bench}_{attack}_s{seed}"


def metrics(run: Path) -> tuple[float, float]:
    r = json.loads((run / "results.json").read_text())
    assert r["eval_seed"] == 0, run
    return 100 * r["metrics"]["acc"], 100 * r["metrics"]["adacc"]


for bench, attack in (("mmlu", "gt50"), ("openbookqa", "gt50"), ("openbookqa", "eq50"), ("mmlu", "eq50")):
    rows = []
    for s in range(6):
        runs = [draw0(bench, attack, s)] + [OUT / "s62" / f"dw_{bench}_{attack}_s{s}_d{d}" for d in (1, 2, 3)]
        if not all((r / "results.json").is_file() for r in runs):
            continue
        rows.append([metrics(r) for r in runs])
    if not rows:
        continue
    acc = [[a for a, _ in r] for r in rows]
    ad = [[b for _, b in r] for r in rows]
    one = [a[0] for a in acc]
    mean4 = [st.mean(a) for a in acc]
    within = st.mean(st.stdev(a) for a in acc)
    print(f"{bench} {attack}: {len(rows)} seeds")
    for s, a in enumerate(acc):
        print("  seed", s, " ".join(f"{x:5.1f}" for x in a), f"| mean {st.mean(a):5.1f}")
    print(
        f"  Acc: one draw mean {st.mean(one):.1f} std {st.stdev(one):.1f}; 4-draw mean {st.mean(mean4):.1f} "
        f"std {st.stdev(mean4):.1f} (first 3 seeds {st.stdev(mean4[:3]):.1f}); "
        f"within-policy draw std {within:.1f}"
    )
    ad4 = [st.mean(b) for b in ad]
    print(
        f"  ADAcc: one draw {st.mean(b[0] for b in ad):.1f} std {st.stdev([b[0] for b in ad]):.1f}; "
        f"4-draw {st.mean(ad4):.1f} std {st.stdev(ad4):.1f}"
    )
