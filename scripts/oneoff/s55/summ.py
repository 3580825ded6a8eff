# ruff: noqa: E501, E741
# One-off script of the 2026-11-29 session (issue 40 logs); run from the repository root over outputs/s55.
import collections
import glob
import json
import statistics as st
import sys

comp = {
    ("arc_c", "eq50"): 72.2,
    ("arc_c", "gt50"): 61.4,
    ("synthetic", "eq50"): 44.5,
    ("synthetic", "gt50"): 34.7,
}
pre = sys.argv[1] if len(sys.argv) > 1 else "h"
rows = collections.defaultdict(list)
for f in sorted(glob.glob(f"outputs/s55/{pre}_*/results.json")):
    name = f.split("/")[2]
    parts = name.split("_")
    r = parts[-1]
    s = parts[-2]
    a = parts[-3]
    b = "_".join(parts[1:-3])
    res = json.load(open(f))
    m = res["metrics"]
    acc, ad = m["acc"], m["adacc"]
    acc = acc * 100 if acc <= 1 else acc
    ad = ad * 100 if ad <= 1 else ad
    v = res["train"].get("validation") or {}
    rows[(b, a, r)].append((acc, ad, v))
byr = collections.defaultdict(list)
for (b, a, r), xs in sorted(rows.items()):
    acc = st.mean(x[0] for x in xs)
    ad = st.mean(x[1] for x in xs)
    last = [
        (x[2]["best"]["acc"] - x[2]["last"]["acc"], x[2]["best"]["adacc"] - x[2]["last"]["adacc"])
        for x in xs
        if x[2]
    ]
    sc = ad + acc - comp.get((b, a), 0)
    byr[r].append(sc)
    print(
        f"{b:10s} {a} {r:4s} n={len(xs)} acc {acc:5.1f} ad {ad:5.1f} score {sc:6.1f} per-seed {[(round(x[0], 1), round(x[1], 1)) for x in xs]} best-last {last}"
    )
for r, v in byr.items():
    print(r, "cells", len(v), "tuning score", round(st.mean(v), 2))
