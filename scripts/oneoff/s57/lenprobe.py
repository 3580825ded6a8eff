"""Sim reply words against the fitted word target, per role/phase: the length a style asks for vs what it writes."""

import sys

import numpy as np

import tomacs.sim.text as T
import tomacs.sim.text_model as TM
from tomacs.benchmarks.base import get_benchmark
from tomacs.sim.profiles import load_text_model

prof = sys.argv[1]
tm = load_text_model(f"conf/profiles/{prof}.yaml")
qs = get_benchmark("mmlu").load("test", size=300, seed=0)
rec = []
orig = TM.words_target


def wt(pt, rng, cap):
    n = orig(pt, rng, cap)
    rec.append(n)
    return n


TM.words_target = wt
T.styled.__globals__["words_target"] = wt
rng = np.random.default_rng(0)
msgs = []
for role, phase in (("honest", "first"), ("honest", "later"), ("adversary", "first"), ("adversary", "later")):
    st = tm.get(role, phase)
    diffs, ws = [], []
    for q in qs:
        ans = q.labels[0]
        rd = 1 if phase == "first" else 2
        inc = (
            [
                T.Message(
                    sender=1,
                    role="x",
                    answer=q.labels[1],
                    text="I think (B) is right because of reasons given.",
                    persuasive=False,
                )
            ]
            if rd == 2
            else []
        )
        rec.clear()
        if role == "honest":
            txt = T.honest_analysis(q, "x", ans, rng, round=rd, incoming=inc, style=st)
        else:
            txt = T.adversarial_analysis(q, ans, rng, style=st, max_words=None, round=rd, incoming=inc)
        body = txt.rsplit("Answer:", 1)[0]
        w = len(body.split())
        ws.append(w)
        diffs.append(w - rec[0])
    print(
        prof,
        role,
        phase,
        "target median",
        round(np.exp(st.log_words_mean), 1),
        "written median",
        np.median(ws),
        "mean(written-target)",
        round(np.mean(diffs), 1),
        "q10/q90 of diff",
        np.percentile(diffs, [10, 90]),
    )
