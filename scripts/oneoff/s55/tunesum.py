# ruff: noqa: E501, E741
# One-off script of the 2026-11-29 session (issue 40 logs); run from the repository root over outputs/s55.
import json
import statistics as st


def m(d):
    r = json.load(open(f"outputs/s55/{d}/results.json"))
    return r["metrics"]["acc"] * 100, r["metrics"]["adacc"] * 100, r


rows = []
for b in ["arc_c", "synthetic"]:
    for a in ["eq50", "gt50"]:
        for s in [0, 1]:
            t = f"m_{b}_eq50_s0_r0" if (s == 0 and a == "eq50") else f"u_{b}_{a}_s{s}"
            acc, ad, r = m(t)
            la, ld, _ = m(f"v_{b}_{a}_s{s}_last")
            v = r["train"]["validation"]
            rows.append((acc, ad, la, ld))
            print(
                f"{b} {a} s{s}: best.pt (epoch {v['best']['epoch']}) {acc:.1f} / {ad:.1f} | last {la:.1f} / {ld:.1f}"
            )
print(
    "mean best",
    round(st.mean(x[0] for x in rows), 1),
    round(st.mean(x[1] for x in rows), 1),
    "last",
    round(st.mean(x[2] for x in rows), 1),
    round(st.mean(x[3] for x in rows), 1),
)
