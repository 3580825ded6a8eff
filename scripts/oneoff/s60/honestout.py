# ruff: noqa: E501
# One-off script of the stop-60 session (issue 40): at eq50, which honest agents the decision leaves out at
# epoch 2 (best.pt, outputs/s59/eb_tg01_*) and at the last epoch (outputs/s59/tg01_*), on the same test episodes:
# how many, and how many of them hold a wrong final answer (leaving those out is what Eq. 7's reward pays for).
# Usage: python scripts/oneoff/s60/honestout.py
import glob
import json


def stats(path):
    out = out_wrong = kept = kept_wrong = 0
    correct = n = 0
    for line in open(path):
        ep = json.loads(line)
        n += 1
        correct += ep["correct"] is True
        gold = ep["question"]["answer"]
        T = len(ep["rounds"])
        onsets = {int(k): v for k, v in ep["plan"]["onsets"].items()}
        voters = set(ep["decision"]["voters"])
        for o in ep["rounds"][-1]:
            i = o["agent"]
            if i in onsets and onsets[i] <= T:
                continue
            wrong = o["answer"] != gold
            if i in voters:
                kept, kept_wrong = kept + 1, kept_wrong + wrong
            else:
                out, out_wrong = out + 1, out_wrong + wrong
    h = out + kept
    return 100 * out / h, 100 * out_wrong / max(out, 1), 100 * kept_wrong / kept, 100 * correct / n


for best in sorted(glob.glob("outputs/s59/eb_tg01_*eq50_s[0-9]")):
    last = best.replace("/eb_", "/")
    a, b = stats(f"{best}/episodes.jsonl"), stats(f"{last}/episodes.jsonl")
    print(
        f"{last.split('/')[-1]}: honest left out {a[0]:.1f} -> {b[0]:.1f} %, wrong among them {a[1]:.1f} -> {b[1]:.1f} %, wrong among the kept {a[2]:.1f} -> {b[2]:.1f} %; Acc {a[3]:.1f} -> {b[3]:.1f}"
    )
