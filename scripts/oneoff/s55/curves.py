# ruff: noqa: E501, E741
# One-off script of the 2026-11-29 session (issue 40 logs); run from the repository root over outputs/s55.
import collections
import glob
import json
import statistics as st
import sys

pat = sys.argv[1]
groups = collections.defaultdict(list)
for f in sorted(glob.glob(f"outputs/s55/{pat}/train_log.jsonl")):
    name = f.split("/")[2]
    tag = name.split("_")[-1]
    rows = [json.loads(l) for l in open(f) if l.strip()]
    val = [(r["val_acc"], r["val_adacc"]) for r in rows if r.get("val_acc") is not None]
    groups[tag].append(val)
for tag, runs in sorted(groups.items()):
    ep = len(runs[0])
    cells = []
    for e in range(ep):
        a = [r[e][0] * 100 for r in runs if len(r) > e]
        d = [r[e][1] * 100 for r in runs if len(r) > e]
        cells.append(f"{st.mean(a):.1f} / {st.mean(d):.1f}")
    print(tag, len(runs), " | ".join(cells))
