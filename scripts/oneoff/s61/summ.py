"""Stop 61: TodyComm's defaults on the five Table 2 benchmarks (MiniLM, seeds 0-2), beside Complete and the
paper.

MMLU and OpenBookQA are stop 59's runs (outputs/s59/tg01_*, gamma 0.1 = today's default); ARC-C, GSM8K and
MedQA are this stop's (outputs/s61/tb_*). Acc / ADAcc in %, mean +- sample std over the seeds found.
"""

import json
import statistics as st
import sys
from pathlib import Path

ROOT = Path("/work/main/outputs")
PAPER = json.loads(Path("tomacs/report/paper_numbers.json").read_text())["records"]
BENCHES = ("mmlu", "arc_c", "gsm8k", "openbookqa", "medqa")
ATTACKS = ("lt50", "eq50", "gt50")


def run_dir(bench: str, attack: str, seed: int) -> Path:
    if bench in ("mmlu", "openbookqa"):
        return ROOT / "s59" / f"tg01_{bench}_{attack}_s{seed}"
    return ROOT / "s61" / f"tb_{bench}_{attack}_s{seed}"


def val_curve(run: Path) -> list[tuple[float, float]]:
    """Validation (Acc, ADAcc) in % per epoch, from train_log.jsonl."""
    rows = [json.loads(line) for line in (run / "train_log.jsonl").read_text().splitlines() if line.strip()]
    return [(100 * r["val_acc"], 100 * r["val_adacc"]) for r in rows if "val_acc" in r]


def last_minus_best(curves: list[list[tuple[float, float]]]) -> str:
    """On the seed-mean curve: the last epoch minus the best epoch, for Acc and ADAcc apart."""
    n = min(len(c) for c in curves)
    mean = [(st.mean(c[e][0] for c in curves), st.mean(c[e][1] for c in curves)) for e in range(n)]
    acc = mean[-1][0] - max(m[0] for m in mean)
    ad = mean[-1][1] - max(m[1] for m in mean)
    return f"{acc:+.1f} / {ad:+.1f}"


def paired_acc(bench: str, attack: str) -> list[float]:
    """Seed 0's own test Acc and seeds 1-2 on seed 0's episodes (eval.seed=0), where all three exist."""
    stop = "s59" if bench in ("mmlu", "openbookqa") else "s61"
    paths = [run_dir(bench, attack, 0) / "results.json"]
    paths += [ROOT / stop / f"pe_{bench}_{attack}_s{s}" / "results.json" for s in (1, 2)]
    if not all(p.exists() for p in paths):
        return []
    return [100 * json.loads(p.read_text())["metrics"]["acc"] for p in paths]


def paper(bench: str, attack: str, method: str, metric: str) -> str:
    for r in PAPER:
        if (r["benchmark"], r["attack"], r["method"], r["metric"]) == (bench, attack, method, metric):
            if r["table"] in ("Table 2", "Table 10"):
                return f"{r['value']:.1f}"
    return "-"


def ms(xs: list[float]) -> str:
    if not xs:
        return "-"
    sd = st.stdev(xs) if len(xs) > 1 else 0.0
    return f"{st.mean(xs):.1f} ± {sd:.1f}"


def main() -> None:
    seeds = (0, 1, 2)
    print(
        "| cell | n | Acc | ADAcc | Complete Acc | lead | val last-best Acc / ADAcc | wall s |"
        " paper TodyComm Acc / ADAcc | paper Complete Acc | Acc paired |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    means: dict[str, list[tuple[float, float, float]]] = {}
    for b in BENCHES:
        for a in ATTACKS:
            acc, ad, comp, lead, wall = [], [], [], [], []
            curves = []
            for s in seeds:
                p = run_dir(b, a, s) / "results.json"
                if not p.exists():
                    continue
                r = json.loads(p.read_text())
                acc.append(100 * r["metrics"]["acc"])
                ad.append(100 * r["metrics"]["adacc"])
                c = 100 * r["baselines"]["complete"]["acc"]
                comp.append(c)
                lead.append(acc[-1] - c)
                curves.append(val_curve(p.parent))
                wall.append(r["wall_s"])
            if not acc:
                continue
            means.setdefault(b, []).append((st.mean(acc), st.mean(ad), st.mean(comp)))
            head = f"| {b} {a} | {len(acc)} | {ms(acc)} | {ms(ad)} | {ms(comp)}"
            print(
                f"{head} | {ms(lead)} (min {min(lead):.1f}) |"
                f" {last_minus_best(curves)} | {st.mean(wall):.0f} |"
                f" {paper(b, a, 'todycomm', 'acc')} / {paper(b, a, 'todycomm', 'adacc')} |"
                f" {paper(b, a, 'complete', 'acc')} | {ms(paired_acc(b, a))} |"
            )
    allm = [m for v in means.values() for m in v]
    ad12 = [m[1] for k, v in means.items() if k != "gsm8k" for m in v]
    if allm:
        print(
            f"\nmean over {len(allm)} cells: Acc {st.mean(m[0] for m in allm):.1f},"
            f" ADAcc {st.mean(m[1] for m in allm):.1f}, Complete Acc {st.mean(m[2] for m in allm):.1f};"
            f" ADAcc without GSM8K (Table 10's cells) {st.mean(ad12):.1f}",
            file=sys.stdout,
        )

    print("\n| cell | seeds | paper step Acc / ADAcc | default Acc / ADAcc, same seeds |")
    print("|---|---|---|---|")
    for b in ("gsm8k", "medqa"):
        for a in ("eq50", "gt50"):
            ps, tb = [], []
            for s in (0, 1):
                p = ROOT / "s61" / f"ps_{b}_{a}_s{s}" / "results.json"
                if p.exists():
                    ps.append(json.loads(p.read_text())["metrics"])
                    tb.append(json.loads((run_dir(b, a, s) / "results.json").read_text())["metrics"])
            if ps:
                cells = [ms([100 * m[k] for m in ms_]) for ms_ in (ps, tb) for k in ("acc", "adacc")]
                print(f"| {b} {a} | {len(ps)} | {cells[0]} / {cells[1]} | {cells[2]} / {cells[3]} |")


if __name__ == "__main__":
    main()
