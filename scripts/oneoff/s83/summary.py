"""Stop 83's tables (issue 38): per run set, the mean over folds of the gap, transfer, two-sample AUC and the
style rows `restating` and `topic density` (simulated honest / adversary; real honest / adversary), from the
texts checks' JSON (`transcripts texts -o`).

Usage: python scripts/oneoff/s83/summary.py LABEL GLOB [LABEL GLOB ...]
"""

from __future__ import annotations

import glob
import json
import sys

import numpy as np


def main() -> None:
    args = sys.argv[1:]
    for label, pattern in zip(args[::2], args[1::2], strict=True):
        files = sorted(glob.glob(pattern))
        docs = [json.load(open(f)) for f in files]
        if not docs:
            print(f"{label}: no files for {pattern}")
            continue

        def mean(key: str, docs: list[dict] = docs) -> float:
            return float(np.mean([d[key] for d in docs]))

        rows = {}
        for stat in ("restating", "topic density"):
            vals = [r for d in docs for r in d["style"] if r["stat"] == stat]
            if len(vals) < len(docs):  # a check from before the row was printed
                rows[stat] = "-"
                continue
            rows[stat] = "/".join(
                f"{np.mean([v[k] for v in vals]):.2f}"
                for k in ("sim_honest", "sim_adversary", "real_honest", "real_adversary")
            )
        print(
            f"{label:28s} folds {len(docs)}  gap {mean('adversary_gap'):+.3f}  transfer {mean('transfer_auc'):.3f}"
            f"  two-sample {mean('two_sample_auc'):.3f}  restating {rows['restating']}"
            f"  density {rows['topic density']}"
        )


if __name__ == "__main__":
    main()
