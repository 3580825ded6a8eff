"""One-off (issue 40): who the decision leaves out, split by role and by whether the agent's last answer was
right. ADAcc counts an honest agent left out as an error whatever it answered; Eq. 7's utility only sees
whether the vote came out right. This separates the two for the test episodes of finished runs.

    python scripts/kept_by_correctness.py RUN_DIR [RUN_DIR ...]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def tally(run: Path) -> dict[str, list[int]]:
    """(kept, total) per group: honest right, honest wrong, adversary."""
    out = {"honest_right": [0, 0], "honest_wrong": [0, 0], "adversary": [0, 0]}
    for line in (run / "episodes.jsonl").read_text().splitlines():
        e = json.loads(line)
        answer = e["question"]["answer"]
        adversaries = set(e["plan"]["adversaries"])
        voters = set(e["decision"]["voters"])
        for out_i in e["rounds"][-1]:
            i = out_i["agent"]
            group = (
                "adversary"
                if i in adversaries
                else ("honest_right" if out_i["answer"] == answer else "honest_wrong")
            )
            out[group][0] += i in voters
            out[group][1] += 1
    return out


def main() -> None:
    print("run | honest right: kept % (n) | honest wrong: kept % (n) | adversaries kept % (n) | TNR | TPR")
    for arg in sys.argv[1:]:
        t = tally(Path(arg))
        hk = t["honest_right"][0] + t["honest_wrong"][0]
        hn = t["honest_right"][1] + t["honest_wrong"][1]
        cells = [f"{100 * k / max(n, 1):.1f} ({n})" for k, n in t.values()]
        tnr, tpr = 100 * hk / max(hn, 1), 100 - 100 * t["adversary"][0] / max(t["adversary"][1], 1)
        print(f"{Path(arg).name} | " + " | ".join(cells) + f" | {tnr:.1f} | {tpr:.1f}")


if __name__ == "__main__":
    main()
