# ruff: noqa: E501
# One-off script of the stop-60 session (issue 40): test Acc / ADAcc, decision TNR / TPR, validation per epoch,
# round-3/4 participation at inference, per run and per set; "DIR:PREFIX" names a set (e.g. s59:g01, s60:r1).
# Usage: python scripts/oneoff/s60/summ.py [--cells tune|target] DIR:PREFIX ...
import json
import statistics as st
import sys

args = sys.argv[1:]
cells = "tune"
if args and args[0] == "--cells":
    cells, args = args[1], args[2:]
if cells == "tune":
    CELLS = [(b, a, s) for s in (0, 1) for b in ("arc_c", "synthetic") for a in ("eq50", "gt50")]
else:
    CELLS = [(b, a, s) for b in ("mmlu", "openbookqa") for a in ("eq50", "gt50") for s in (0, 1, 2)]


def episodes_stats(path):
    hk = he = ak = ae = 0
    part = {3: 0.0, 4: 0.0}
    n = 0
    for line in open(path):
        ep = json.loads(line)
        n += 1
        T = len(ep["rounds"])
        onsets = {int(k): v for k, v in ep["plan"]["onsets"].items()}
        voters = set(ep["decision"]["voters"])
        for o in ep["rounds"][-1]:
            i = o["agent"]
            if i in onsets and onsets[i] <= T:
                ak, ae = ak + (i in voters), ae + (i not in voters)
            else:
                hk, he = hk + (i in voters), he + (i not in voters)
        for t in (3, 4):
            g = ep["graphs"][t - 1]
            part[t] += len(g["participants"]) / len(g["nodes"]) if g else 1.0
    return 100 * hk / (hk + he), 100 * ae / (ae + ak), 100 * part[3] / n, 100 * part[4] / n


def one(run):
    r = json.load(open(f"{run}/results.json"))
    vals = [json.loads(x) for x in open(f"{run}/train_log.jsonl") if "val_acc" in x]
    tnr, tpr, p3, p4 = episodes_stats(f"{run}/episodes.jsonl")
    va = [100 * v["val_acc"] for v in vals]
    vd = [100 * v["val_adacc"] for v in vals]
    return {
        "acc": 100 * r["metrics"]["acc"],
        "adacc": 100 * r["metrics"]["adacc"],
        "tnr": tnr,
        "tpr": tpr,
        "p3": p3,
        "p4": p4,
        "val": [(round(a, 1), round(d, 1)) for a, d in zip(va, vd, strict=True)],
        "within3": max(va) - va[-1] <= 3 and max(vd) - vd[-1] <= 3,
    }


KEYS = ("acc", "adacc", "tnr", "tpr", "p3", "p4")
for name in args:
    where, prefix = name.split(":")
    rows = []
    for b, a, s in CELLS:
        try:
            x = one(f"outputs/{where}/{prefix}_{b}_{a}_s{s}")
        except FileNotFoundError:
            continue
        rows.append((b, a, x))
        print(
            f"{name} {b} {a} s{s}: test {x['acc']:.1f} / {x['adacc']:.1f} TNR {x['tnr']:.1f} TPR {x['tpr']:.1f} part r3 {x['p3']:.0f} r4 {x['p4']:.0f} | val {x['val']}{' ok' if x['within3'] else ''}"
        )
    if rows:
        m = {k: st.mean(x[k] for _, _, x in rows) for k in KEYS}
        ok = sum(x["within3"] for _, _, x in rows)
        print(
            f"== {name}: {len(rows)} runs, mean test {m['acc']:.1f} / {m['adacc']:.1f}, TNR {m['tnr']:.1f}, TPR {m['tpr']:.1f}, part r3 {m['p3']:.1f} r4 {m['p4']:.1f}; last within 3 of best: {ok}/{len(rows)}"
        )
        for b, a in sorted({(b, a) for b, a, _ in rows}):
            xs = [x for bb, aa, x in rows if (bb, aa) == (b, a)]
            sd = st.stdev(x["acc"] for x in xs) if len(xs) > 1 else 0.0
            ep = [st.mean(x["val"][e][0] for x in xs) for e in range(len(xs[0]["val"]))]
            ed = [st.mean(x["val"][e][1] for x in xs) for e in range(len(xs[0]["val"]))]
            curve = " -> ".join(f"{p:.1f} / {d:.1f}" for p, d in zip(ep, ed, strict=True))
            print(
                f"   {b} {a}: {st.mean(x['acc'] for x in xs):.1f} ± {sd:.1f} / {st.mean(x['adacc'] for x in xs):.1f} ({len(xs)}) | val mean {curve}"
            )
