# ruff: noqa: E501, E741
# One-off script of the 2026-11-29 session (issue 40 logs); run from the repository root over outputs/s55.
"""Who the decision leaves out: honest agents excluded vs kept, by whether their final answer is right."""

import json
import sys

for path in sys.argv[1:]:
    he_w = he_r = hk_w = hk_r = ae = ak = 0
    ae_right = ak_right = 0
    n_ep = 0
    for line in open(path):
        ep = json.loads(line)
        n_ep += 1
        rounds = ep["rounds"]
        T = len(rounds)
        plan = ep["plan"]
        onsets = {int(k): v for k, v in plan["onsets"].items()}
        voters = set(ep["decision"]["voters"])
        ans = ep["question"]["answer"]
        for o in rounds[-1]:
            i = o["agent"]
            adv = i in onsets and onsets[i] <= T
            right = o["answer"] == ans
            if adv:
                if i in voters:
                    ak += 1
                    ak_right += right
                else:
                    ae += 1
                    ae_right += right
            else:
                if i in voters:
                    hk_r += right
                    hk_w += not right
                else:
                    he_r += right
                    he_w += not right
    he, hk = he_r + he_w, hk_r + hk_w
    print(
        f"{path.split('/')[2]}: {n_ep} episodes; honest kept {hk} ({100 * hk_w / max(hk, 1):.1f} % wrong), "
        f"honest left out {he} ({100 * he_w / max(he, 1):.1f} % wrong); TNR {100 * hk / (hk + he):.1f}; "
        f"adversaries left out {ae} ({100 * ae_right / max(ae, 1):.1f} % right), kept {ak} ({100 * ak_right / max(ak, 1):.1f} % right); TPR {100 * ae / max(ae + ak, 1):.1f}"
    )
