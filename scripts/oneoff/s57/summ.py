"""Mean +/- SD over seeds of the texts JSONs written by texts.sh (outputs/s57/LABEL_PROFILE_sS.texts.json)."""

import json
import sys
from pathlib import Path

import numpy as np

OUT = Path("/work/main/outputs/s57")
PROFILES = ("mad-qwen3-8b", "maa-gpt35", "maa-qwen14", "maa-gpt4o", "mad-qwen-max")
KEYS = ("two_sample_auc", "sim_adversary_auc", "transfer_auc")


def ms(v: list[float]) -> str:
    return f"{np.mean(v):.3f} ± {np.std(v, ddof=1):.3f}" if len(v) > 1 else (f"{v[0]:.3f}" if v else "-")


for p in PROFILES:
    for label in sys.argv[1:] or ("before", "after"):
        res = [json.loads(f.read_text()) for f in sorted(OUT.glob(f"{label}_{p}_s*.texts.json"))]
        if not res:
            continue
        cols = [ms([r[k] for r in res]) for k in KEYS]
        rounds = "/".join(
            f"{np.mean([r['by_round'][i]['transfer_auc'] for r in res]):.3f}"
            for i in range(len(res[0]["by_round"]))
        )
        words = {s["stat"]: s for s in res[0]["style"]}["words"]
        r0 = res[0]
        real = f"{r0['real_adversary_auc']:.3f} [{r0['real_adversary_auc_ci'][0]:.3f}, {r0['real_adversary_auc_ci'][1]:.3f}]"
        fit = f"{r0['real_fit_adversary_auc']:.3f} [{r0['real_fit_adversary_auc_ci'][0]:.3f}, {r0['real_fit_adversary_auc_ci'][1]:.3f}]"
        gap = ms([r["sim_adversary_auc"] - r["real_adversary_auc"] for r in res])
        print(
            f"| {p} | {label} (n={len(res)}) | {cols[0]} | {cols[1]} | {gap} | {cols[2]} | {rounds} | "
            f"{words['sim_honest']:.0f} / {words['sim_adversary']:.0f} ({words['real_honest']:.0f} / {words['real_adversary']:.0f}) | {real} | {fit} |"
        )
