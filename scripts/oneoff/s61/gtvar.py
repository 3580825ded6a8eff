"""Stop 61: where the seed spread of Acc at gt50 comes from, on one shared test draw (eval seed 0).

For each policy (seeds 0-5 of MMLU gt50, seeds 0-2 of ARC-C, GSM8K and OpenBookQA gt50), on the same test
episodes: Acc; the share of honest agents right in the last round; Acc among episodes where the honest agents'
last answers are all right / split / all wrong; adversarial messages read by honest agents per episode (an
edge into an honest agent from an adversary at or after its onset, rounds 2-4); and the decision's ADAcc.
"""

import json
import statistics as st
from pathlib import Path

OUT = Path("/work/main/outputs")
SETS = {
    "mmlu gt50": [OUT / "s59/tg01_mmlu_gt50_s0", OUT / "s59/pe_mmlu_gt50_s1", OUT / "s59/pe_mmlu_gt50_s2"]
    + [OUT / f"s60/pe_mmlu_gt50_s{s}" for s in (3, 4, 5)],
    "arc_c gt50": [OUT / "s61/tb_arc_c_gt50_s0"] + [OUT / f"s61/pe_arc_c_gt50_s{s}" for s in (1, 2)],
    "gsm8k gt50": [OUT / "s61/tb_gsm8k_gt50_s0"] + [OUT / f"s61/pe_gsm8k_gt50_s{s}" for s in (1, 2)],
    "openbookqa gt50": [OUT / "s59/tg01_openbookqa_gt50_s0"]
    + [OUT / f"s59/pe_openbookqa_gt50_s{s}" for s in (1, 2)],
    "mmlu gt50, the seed-0 policy, 5 draws of the agents (simdraws.py)": [OUT / "s59/tg01_mmlu_gt50_s0"]
    + [OUT / f"s61/sd_mmlu_gt50_o{k}" for k in (1, 2, 3, 4)],
    "openbookqa gt50, the seed-0 policy, 5 draws": [OUT / "s59/tg01_openbookqa_gt50_s0"]
    + [OUT / f"s61/sd_openbookqa_gt50_o{k}" for k in (1, 2, 3, 4)],
    "arc_c gt50, the seed-0 policy, 5 draws": [OUT / "s61/tb_arc_c_gt50_s0"]
    + [OUT / f"s61/sd_arc_c_gt50_o{k}" for k in (1, 2, 3, 4)],
}


def same(a: object, b: object) -> bool:
    if a is None or b is None:
        return False
    try:
        return abs(float(str(a)) - float(str(b))) < 1e-9
    except ValueError:
        return str(a).strip().upper() == str(b).strip().upper()


def policy_stats(run: Path) -> dict[str, float]:
    eps = [json.loads(x) for x in (run / "episodes.jsonl").read_text().splitlines() if x.strip()]
    hon_right, adv_msgs, by_state = [], [], {"all": [], "split": [], "none": []}
    kept_h, cut_a, n_h, n_a = 0, 0, 0, 0
    for e in eps:
        gold = e["question"]["answer"]
        onsets = {int(k): v for k, v in e["plan"]["onsets"].items()}
        last = e["rounds"][-1]
        hon = [o for o in last if o["agent"] not in onsets]
        right = [same(o["answer"], gold) for o in hon]
        hon_right.append(sum(right) / len(right))
        state = "all" if all(right) else ("none" if not any(right) else "split")
        by_state[state].append(1.0 if e["correct"] else 0.0)
        msgs = 0
        for t, g in enumerate(e["graphs"], start=1):
            if not g:
                continue
            for s, r in g["edges"] + g.get("temporal_edges", []):
                if r not in onsets and s in onsets and onsets[s] <= t:
                    msgs += 1
        adv_msgs.append(msgs)
        voters = set(e["decision"]["voters"])
        for a in range(len(last)):
            if a in onsets:
                n_a += 1
                cut_a += a not in voters
            else:
                n_h += 1
                kept_h += a in voters
    out = {
        "acc": 100 * st.mean(1.0 if e["correct"] else 0.0 for e in eps),
        "honest_right": 100 * st.mean(hon_right),
        "adv_msgs": st.mean(adv_msgs),
        "adacc": 100 * (kept_h + cut_a) / (n_h + n_a),
    }
    for k, v in by_state.items():
        out[f"n_{k}"] = len(v)
        out[f"acc_{k}"] = 100 * st.mean(v) if v else float("nan")
    return out


def main() -> None:
    keys = ["acc", "honest_right", "n_all", "n_split", "n_none", "acc_all", "acc_split", "acc_none"]
    keys += ["adv_msgs", "adacc"]
    for name, runs in SETS.items():
        rows = [policy_stats(r) for r in runs if (r / "episodes.jsonl").exists()]
        print(f"\n{name}: {len(rows)} runs on eval seed 0's adversary plans")
        print("| seed | " + " | ".join(keys) + " |")
        for i, r in enumerate(rows):
            print(f"| {i} | " + " | ".join(f"{r[k]:.1f}" for k in keys) + " |")
        print("| std | " + " | ".join(f"{st.stdev([r[k] for r in rows]):.1f}" for k in keys) + " |")


if __name__ == "__main__":
    main()
