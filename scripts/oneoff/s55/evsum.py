# ruff: noqa: E501, E741
# One-off script of the 2026-11-29 session (issue 40 logs); run from the repository root over outputs/s55.
import json
import statistics as st


def m(d):
    r = json.load(open(f"outputs/s55/{d}/results.json"))["metrics"]
    return r["acc"] * 100, r["adacc"] * 100


def f(xs):
    return f"{st.mean(x[0] for x in xs):.1f} ± {st.stdev(x[0] for x in xs):.1f} / {st.mean(x[1] for x in xs):.1f} ± {st.stdev(x[1] for x in xs):.1f}"


for b in ["mmlu", "openbookqa"]:
    for a in ["eq50", "gt50"]:
        row = {}
        for ck in ["best", "checkpoint"]:
            for mode in ["own", "paired"]:
                row[(ck, mode)] = [m(f"e_{b}_{a}_s{s}_{ck}_{mode}") for s in range(3)]
        train = [m(f"t_{b}_{a}_s{s}") for s in range(3)]
        assert [tuple(round(v, 6) for v in x) for x in train] == [
            tuple(round(v, 6) for v in x) for x in row[("best", "own")]
        ], (b, a)
        es = [m(f"e_{b}_{a}_s0_best_es{e}") for e in range(1, 5)] + [row[("best", "own")][0]]
        print(
            f"{b} {a}: best own {f(row[('best', 'own')])} | best paired {f(row[('best', 'paired')])} | last own {f(row[('checkpoint', 'own')])} | last paired {f(row[('checkpoint', 'paired')])} | s0 best under eval seeds 0-4 {f(es)}"
        )
        print(
            "   per seed last own",
            [tuple(round(v, 1) for v in x) for x in row[("checkpoint", "own")]],
            "paired best",
            [tuple(round(v, 1) for v in x) for x in row[("best", "paired")]],
        )
