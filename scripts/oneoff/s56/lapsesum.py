"""Summary of the refits with --lapse auto (outputs/s56/fit_*.json) beside the shipped profiles."""

import json
import sys
from pathlib import Path

import yaml

for n in sys.argv[1:] or ["mad-qwen3-8b", "mad-qwen-max", "maa-gpt35", "maa-qwen14", "maa-gpt4o"]:
    f = Path(f"outputs/s56/fit_{n}.json")
    if not f.is_file():
        continue
    r = json.loads(f.read_text())
    old = yaml.safe_load(open(f"conf/profiles/{n}.yaml"))["provenance"]["held_out"]
    h = r["held_out"]
    ll = h["loglik_per_answer"]
    lap = r["fit"]["lapse"]
    cv = " · ".join(f"{k}: {v:.4f}" for k, v in (lap.get("cv_loglik_per_answer") or {}).items())
    kept = r["fit"]["mechanisms"].get("kept")
    print(f"{n}: lapse {lap['rate']} (cv {cv}); kept {kept}")
    print(
        f"   held out {old['loglik_per_answer']['fitted']:.4f} -> {ll['fitted']:.4f} "
        f"(paper {ll['paper']:.4f}, "
        f"keep-previous {ll['keep_previous']:.4f}); cells {old['cells_inside']}/{old['cells_total']} -> "
        f"{h['cells_inside']}/{h['cells_total']}; fit {r['fit']['seconds']:.1f} s"
    )
    p = r["profile"]
    print("   " + ", ".join(f"{k}={v:.3g}" for k, v in p.items() if isinstance(v, float)))
