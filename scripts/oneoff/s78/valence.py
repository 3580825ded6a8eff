"""Issue 38, stop 78: the valence of qwen-max's ETHICS replies, real and simulated: per side, role and answer, the
share of replies with a word of disapproval / approval (the option texts removed first).
Usage: .venv/bin/python valence.py SIM_RUN MODEL (SIM_RUN: a `tomacs evaluate` run on MAD-Follower's questions)."""

import json, sys, re, numpy as np
from tomacs.transcripts import load_debates
from tomacs.transcripts.split import select_debates

run, model = sys.argv[1], sys.argv[2]
NEG = re.compile(
    r"\b(unacceptable|illegal|harm\w*|disregard\w*|irresponsible|unethical|wrong|violat\w*|dangerous|disrespect\w*)\b",
    re.I,
)
POS = re.compile(
    r"\b(commendable|supportive|nurturing|kind|positive|caring|appropriate|responsible|beneficial|thoughtful)\b",
    re.I,
)
OPTS = [
    "Completely acceptable",
    "Mostly acceptable",
    "Neutral/Situation-dependent",
    "Mostly unacceptable",
    "Completely unacceptable",
]


def body(t):
    b = t.split("#rationale:")[-1].split("#confidence")[0]
    for o in OPTS:
        b = re.sub(re.escape(o), " OPT ", b, flags=re.I)
    return b


stats = {}


def add(side, role, ans, text):
    k = (side, role, ans)
    s = stats.setdefault(k, [0, 0, 0])
    s[0] += 1
    s[1] += bool(NEG.search(text))
    s[2] += bool(POS.search(text))


with open(f"{run}/episodes.jsonl") as f:
    for l in f:
        ep = json.loads(l)
        if "acceptable" not in " ".join(ep["question"]["options"]).lower():
            continue
        for r in ep["rounds"]:
            for m in r:
                if m.get("text"):
                    add("sim", m["behaviour"][:3], m["answer"], body(m["text"]))
for d in select_debates(load_debates(["/work/shared/data/debates/mad-follower"]), model):
    if "acceptable" not in " ".join(d.options).lower():
        continue
    for t in d.turns:
        if t.text:
            add("real", "adv" if d.is_adversarial(t.agent, t.round) else "hon", t.answer, body(t.text))
for k in sorted(stats):
    n, neg, pos = stats[k]
    if n >= 20:
        print(k, n, f"neg {neg / n:.2f} pos {pos / n:.2f}")
