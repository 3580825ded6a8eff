"""Stop 62: TodyComm and Complete on each run's own test episodes with eval.draws=4 (pooled.sh, table.sh):
per cell, mean and seed std of pooled Acc/ADAcc beside the first draw's (the training run's own test), and
the lead."""

import json
import statistics as st
import sys
from pathlib import Path

OUT = Path("/work/main/outputs/s62")
CELLS = [(b, a) for b in ("mmlu", "openbookqa", "arc_c", "gsm8k", "medqa") for a in ("lt50", "eq50", "gt50")]


def load(method: str, bench: str, attack: str, seed: int) -> dict | None:
    f = OUT / f"pool_{method}_{bench}_{attack}_s{seed}" / "results.json"
    return json.loads(f.read_text())["metrics"] if f.is_file() else None


def ms(xs: list[float]) -> str:
    return f"{st.mean(xs):5.1f} ± {st.stdev(xs):3.1f}" if len(xs) > 1 else "—"


seeds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
print("cell | n | TodyComm Acc pooled | first draw | ADAcc pooled | first draw | Complete Acc pooled | lead")
for bench, attack in CELLS:
    t = [m for s in range(seeds) if (m := load("todycomm", bench, attack, s))]
    c = [m for s in range(seeds) if (m := load("complete", bench, attack, s))]
    if len(t) < 2:
        continue
    acc = [100 * m["acc"] for m in t]
    acc0 = [100 * m["by_draw"][0]["acc"] for m in t]
    ad = [100 * m["adacc"] for m in t]
    ad0 = [100 * m["by_draw"][0]["adacc"] for m in t]
    cacc = [100 * m["acc"] for m in c]
    lead = f"{st.mean(acc) - st.mean(cacc):5.1f}" if cacc else "—"
    print(
        f"{bench} {attack} | {len(t)} | {ms(acc)} | {ms(acc0)} | {ms(ad)} | {ms(ad0)} | {ms(cacc)} | {lead}"
        f" | within-policy draw std {st.mean(100 * m['acc_draw_std'] for m in t):.1f}"
    )
