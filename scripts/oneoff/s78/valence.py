"""Issue 38, stop 78: the valence of a model's ETHICS replies on MAD-Follower, real and simulated: per side,
role and answer, the share of replies with a word of disapproval / approval (the option texts removed first).

Usage: .venv/bin/python valence.py SIM_RUN MODEL
(SIM_RUN: a `tomacs evaluate` run on MAD-Follower's questions)
"""

from __future__ import annotations

import json
import re
import sys

from tomacs.transcripts import load_debates
from tomacs.transcripts.split import select_debates

NEG = re.compile(
    r"\b(unacceptable|illegal|harm\w*|disregard\w*|irresponsible|unethical|wrong|violat\w*|dangerous|"
    r"disrespect\w*)\b",
    re.I,
)
POS = re.compile(
    r"\b(commendable|supportive|nurturing|kind|positive|caring|appropriate|responsible|beneficial|"
    r"thoughtful)\b",
    re.I,
)
OPTS = ["Completely acceptable", "Mostly acceptable", "Neutral/Situation-dependent", "Mostly unacceptable"]
OPTS.append("Completely unacceptable")


def body(text: str) -> str:
    """The rationale, every option text replaced (so "unacceptable" in an option's name does not count)."""
    b = text.split("#rationale:")[-1].split("#confidence")[0]
    for o in OPTS:
        b = re.sub(re.escape(o), " OPT ", b, flags=re.I)
    return b


def main(run: str, model: str) -> None:
    stats: dict[tuple[str, str, str], list[int]] = {}

    def add(side: str, role: str, answer: str, text: str) -> None:
        s = stats.setdefault((side, role, str(answer)), [0, 0, 0])
        s[0] += 1
        s[1] += bool(NEG.search(text))
        s[2] += bool(POS.search(text))

    with open(f"{run}/episodes.jsonl") as f:
        for line in f:
            ep = json.loads(line)
            if "acceptable" in " ".join(ep["question"]["options"]).lower():
                for r in ep["rounds"]:
                    for m in r:
                        if m.get("text"):
                            add("sim", m["behaviour"][:3], m["answer"], body(m["text"]))
    for d in select_debates(load_debates(["/work/shared/data/debates/mad-follower"]), model):
        if "acceptable" in " ".join(d.options or ()).lower():
            for t in d.turns:
                if t.text:
                    role = "adv" if d.is_adversarial(t.agent, t.round) else "hon"
                    add("real", role, str(t.answer), body(t.text))
    for k in sorted(stats):
        n, neg, pos = stats[k]
        if n >= 20:
            print(k, n, f"neg {neg / n:.2f} pos {pos / n:.2f}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
