"""Issue 38 one-off (stop 58, reused in stop 64): per run and mean over seeds of the texts checks
(GLOB of *.texts.json)."""

import collections
import glob
import json
import sys

import numpy as np

KEYS = ("transfer_auc", "sim_adversary_auc", "sim_adversary_auc_matched", "real_adversary_auc")


def val(d: dict, k: str) -> float | None:
    return None if d.get(k) is None else round(d[k], 3)


def mean(ds: list, k: str) -> float | None:
    xs = [d[k] for d in ds if d.get(k) is not None]
    return round(float(np.mean(xs)), 3) if xs else None


rows = collections.defaultdict(list)
for f in sorted(glob.glob(sys.argv[1])):
    d = json.load(open(f))
    rows[f.split("/")[-1].split("_")[1]].append(d)
    rng = d.get("sim_adversary_auc_matched_range")
    print(
        f.split("/")[-1][:-11],
        *(f"{k} {val(d, k)}" for k in KEYS),
        "range",
        rng and [round(x, 3) for x in rng],
        "realfit",
        val(d, "real_fit_adversary_auc"),
        "realtrained",
        val(d, "real_trained_auc"),
        "n",
        d.get("matched_replies"),
    )
for p, ds in rows.items():
    print(
        "MEAN",
        p,
        len(ds),
        *(f"{k} {mean(ds, k)}" for k in KEYS),
        "realfit",
        mean(ds, "real_fit_adversary_auc"),
    )
