# ruff: noqa: E501
# One-off script of the stop-59 session (issue 40): test Acc / ADAcc (the tested end), validation per epoch, TNR
# and TPR of the decision, per run, for named sets of runs; means over the set.
# Usage: python scripts/oneoff/s59/summ.py SET ...   (SET = base | a prefix under outputs/s59, e.g. g01)
#        python scripts/oneoff/s59/summ.py --cells target SET ...   (MMLU, OpenBookQA eq50/gt50, seeds 0-2)
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


def base_dirs(b, a, s):
    """The stop-55 runs of today's defaults: the training run, and the evaluation of its last epoch."""
    if cells == "target":
        return f"outputs/s55/t_{b}_{a}_s{s}", f"outputs/s55/e_{b}_{a}_s{s}_checkpoint_own"
    run = f"outputs/s55/m_{b}_eq50_s0_r0" if (s == 0 and a == "eq50") else f"outputs/s55/u_{b}_{a}_s{s}"
    return run, f"outputs/s55/v_{b}_{a}_s{s}_last"


def tnr_tpr(path):
    hk = he = ak = ae = 0
    for line in open(path):
        ep = json.loads(line)
        T = len(ep["rounds"])
        onsets = {int(k): v for k, v in ep["plan"]["onsets"].items()}
        voters = set(ep["decision"]["voters"])
        for o in ep["rounds"][-1]:
            i = o["agent"]
            if i in onsets and onsets[i] <= T:
                ak, ae = ak + (i in voters), ae + (i not in voters)
            else:
                hk, he = hk + (i in voters), he + (i not in voters)
    return 100 * hk / (hk + he), 100 * ae / (ae + ak)


def one(run, test):
    r = json.load(open(f"{test or run}/results.json"))
    vals = [json.loads(x) for x in open(f"{run}/train_log.jsonl") if "val_acc" in x]
    tnr, tpr = tnr_tpr(f"{test or run}/episodes.jsonl")
    return {
        "acc": 100 * r["metrics"]["acc"],
        "adacc": 100 * r["metrics"]["adacc"],
        "tnr": tnr,
        "tpr": tpr,
        "val": [(round(100 * v["val_acc"], 1), round(100 * v["val_adacc"], 1)) for v in vals],
    }


for name in args:
    rows = []
    for b, a, s in CELLS:
        if name == "base":
            run, test = base_dirs(b, a, s)
        else:
            run, test = f"outputs/s59/{name}_{b}_{a}_s{s}", None
        try:
            x = one(run, test)
        except FileNotFoundError:
            continue
        rows.append((b, a, x))
        print(
            f"{name} {b} {a} s{s}: test {x['acc']:.1f} / {x['adacc']:.1f} TNR {x['tnr']:.1f} TPR {x['tpr']:.1f} | val {x['val']}"
        )
    if rows:
        m = {k: st.mean(x[k] for _, _, x in rows) for k in ("acc", "adacc", "tnr", "tpr")}
        print(
            f"== {name}: {len(rows)} runs, mean test {m['acc']:.1f} / {m['adacc']:.1f}, TNR {m['tnr']:.1f}, TPR {m['tpr']:.1f}"
        )
        for b, a in sorted({(b, a) for b, a, _ in rows}):
            xs = [x for bb, aa, x in rows if (bb, aa) == (b, a)]
            sd = st.stdev(x["acc"] for x in xs) if len(xs) > 1 else 0.0
            print(
                f"   {b} {a}: {st.mean(x['acc'] for x in xs):.1f} ± {sd:.1f} / {st.mean(x['adacc'] for x in xs):.1f} ({len(xs)})"
            )
