"""best.pt against the last epoch on the test questions, the 18 table runs of 2026-11-29 (outputs/s54 jobs;
the last epochs of the target cells from outputs/s55/e_*_checkpoint_own, of lt50 from outputs/s56)."""

import json
import statistics as st
from pathlib import Path

OUT = Path("outputs")


def m(p: Path) -> tuple[float, float]:
    r = json.loads((p / "results.json").read_text())["metrics"]
    return 100 * r["acc"], 100 * r["adacc"]


rows = {}
for b in ("mmlu", "openbookqa"):
    for a in ("eq50", "gt50", "lt50"):
        for s in (0, 1, 2):
            run = OUT / "s54" / f"t_{b}_{a}_s{s}"
            val = json.loads((run / "results.json").read_text())["train"]["validation"]
            best = m(run)
            if val["best"]["epoch"] == val["last"]["epoch"]:
                last = best
            elif a == "lt50":
                last = m(OUT / "s56" / f"e_{b}_{a}_s{s}_last")
            else:
                last = m(OUT / "s55" / f"e_{b}_{a}_s{s}_checkpoint_own")
            rows[(b, a, s)] = (best, last)
diff = [(k, v) for k, v in rows.items() if v[0] != v[1]]
print(f"{len(diff)} of {len(rows)} runs differ")
for k, (bb, ll) in diff:
    print(
        k,
        f"{bb[0]:.1f} / {bb[1]:.1f} -> {ll[0]:.1f} / {ll[1]:.1f}",
        f"({ll[0] - bb[0]:+.1f}, {ll[1] - bb[1]:+.1f})",
    )
print("cell | best.pt | last epoch")
for b in ("mmlu", "openbookqa"):
    for a in ("eq50", "gt50", "lt50"):
        out = []
        for i in (0, 1):
            acc = [rows[(b, a, s)][i][0] for s in (0, 1, 2)]
            ad = [rows[(b, a, s)][i][1] for s in (0, 1, 2)]
            out.append(f"{st.mean(acc):.1f} ± {st.stdev(acc):.1f} / {st.mean(ad):.1f} ± {st.stdev(ad):.1f}")
        print(b, a, "|", " | ".join(out))
for i, n in ((0, "best.pt"), (1, "last")):
    acc = st.mean(v[i][0] for v in rows.values())
    ad = st.mean(v[i][1] for v in rows.values())
    print(f"six-cell mean, {n}: {acc:.1f} / {ad:.1f}")
