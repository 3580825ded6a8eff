# ruff: noqa: E501
# One-off script of the stop-60 session (issue 40): the validation curve of issue 40's target runs (seeds 0-2)
# measured on 64 questions (outputs/s59/tg01_*) and, for the same training, on 256 (outputs/s60/v256_*):
# per run, per cell (mean ± std over seeds), and whether the last epoch is within 3 points of the best.
# Usage: python scripts/oneoff/s60/valsumm.py
import json
import statistics as st


def curve(run):
    try:
        vals = [json.loads(x) for x in open(f"{run}/train_log.jsonl") if "val_acc" in x]
    except FileNotFoundError:
        return None
    return [100 * v["val_acc"] for v in vals], [100 * v["val_adacc"] for v in vals]


def within(acc, adacc):
    return max(acc) - acc[-1] <= 3 and max(adacc) - adacc[-1] <= 3


for size, pre in ((64, "outputs/s59/tg01_"), (256, "outputs/s60/v256_")):
    runs_ok = runs = cells_ok = 0
    print(f"== validation on {size} questions")
    for b in ("mmlu", "openbookqa"):
        for a in ("eq50", "gt50"):
            cs = [c for c in (curve(f"{pre}{b}_{a}_s{s}") for s in range(3)) if c is not None]
            if not cs:
                continue
            runs += len(cs)
            runs_ok += sum(within(*c) for c in cs)
            ma = [st.mean(c[0][e] for c in cs) for e in range(3)]
            md = [st.mean(c[1][e] for c in cs) for e in range(3)]
            sa = [st.stdev(c[0][e] for c in cs) if len(cs) > 1 else 0.0 for e in range(3)]
            sd = [st.stdev(c[1][e] for c in cs) if len(cs) > 1 else 0.0 for e in range(3)]
            ok = within(ma, md)
            cells_ok += ok
            line = " -> ".join(f"{ma[e]:.1f} ± {sa[e]:.1f} / {md[e]:.1f} ± {sd[e]:.1f}" for e in range(3))
            print(f"  {b} {a} ({len(cs)} seeds): {line}{'  (mean: last within 3)' if ok else ''}")
            for s, c in enumerate(cs):
                print(f"     s{s}: " + " -> ".join(f"{x:.1f} / {y:.1f}" for x, y in zip(*c, strict=True)))
    print(f"  last within 3 of best: {runs_ok}/{runs} runs, {cells_ok} cells on the seed mean")
