"""TodyComm's claims (issue 12 targets) checked on finished jobs, with the paper's numbers beside ours.

    python scripts/check_todycomm_targets.py outputs/multirun/table2/sim/<stamp>     # any tree of jobs
    python scripts/check_todycomm_targets.py --run seed=0,1,2 benchmark=mmlu embedder=hashing

--run first runs `tomacs train table=table2 <overrides>` into a fresh directory (hours for the full
table on 2 cores; narrow it with overrides) and prints its wall time. The checks:

* TodyComm ADAcc averaged over benchmarks and attack rates >= 80 % (paper: > 85 %);
* TodyComm Acc above every baseline at eq50 and gt50 on at least 4 of the benchmarks present
  (4 of 5 in the paper's table);
* seed std of TodyComm's Acc <= 2 points in every cell;
* TodyComm Token <= AgentPrune's at eq50 and gt50.

Every number is ours (labelled with the backbone) or the paper's (gpt-4.1-nano), never mixed.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

from tomacs.report.collect import CellKey, cells, find_jobs
from tomacs.report.paper import lookup

ATTACKS = ("lt50", "eq50", "gt50")


def _fmt(ms: tuple[float, float] | None, n: int = 0) -> str:
    if ms is None:
        return "—"
    return f"{ms[0]:.1f} ± {ms[1]:.1f}" + (f" (n={n})" if n else "")


def _paper(method: str, bench: str, attack: str, metric: str) -> str:
    r = lookup(method, bench, attack, metric)
    return "—" if r is None else f"{r['value']:.1f}"


def report(root: Path) -> int:
    jobs = find_jobs(root)
    if not jobs:
        print(f"no finished jobs under {root}")
        return 2
    cs = cells([j for j in jobs if j.key[3] == "none"])
    varying = sorted({k.setting for k in cs if k.setting})
    if varying:
        print(f"{root} mixes experiments ({'; '.join(varying)}): point this script at one of them")
        return 2
    benches = sorted({k[1] for k in cs})
    methods = sorted({k[0] for k in cs})
    backbones = sorted({str(j.results["backbone"]) for j in jobs})
    print(f"{len(jobs)} jobs under {root}; ours: backbone={','.join(backbones)}; paper: gpt-4.1-nano")
    print(
        f"\n{'benchmark':<11} {'attack':<6} {'method':<12} {'Acc ours':>16} {'paper':>6} "
        f"{'ADAcc ours':>16} {'paper':>6} {'Token ours':>12} {'paper':>6}"
    )
    for b in benches:
        for a in ATTACKS:
            for m in methods:
                c = cs.get(CellKey(m, b, a, "none"))
                if c is None:
                    continue
                tok = c.mean_std("token")
                print(
                    f"{b:<11} {a:<6} {m:<12} {_fmt(c.mean_std('acc', 100.0), len(c.jobs)):>16} "
                    f"{_paper(m, b, a, 'acc'):>6} {_fmt(c.mean_std('adacc', 100.0)):>16} "
                    f"{_paper(m, b, a, 'adacc'):>6} {(f'{tok[0]:.0f}' if tok else '—'):>12} "
                    f"{_paper(m, b, a, 'token'):>6}"
                )
    tody = {(b, a): cs.get(CellKey("todycomm", b, a, "none")) for b in benches for a in ATTACKS}
    print("\ntargets (ours):")
    adaccs = [v for c in tody.values() if c is not None for v in [c.mean_std("adacc", 100.0)[0]]]
    ok_ad = bool(adaccs) and statistics.fmean(adaccs) >= 80.0
    mean_ad = f"{statistics.fmean(adaccs):.1f}" if adaccs else "—"
    print(f"  [{'x' if ok_ad else ' '}] ADAcc mean over {len(adaccs)} cells >= 80 %: {mean_ad} %")
    wins = 0
    for b in benches:
        beat = True
        for a in ("eq50", "gt50"):
            t = tody.get((b, a))
            others = [cs[k] for k in cs if k[1] == b and k[2] == a and k[0] != "todycomm" and k[3] == "none"]
            if t is None or not others:
                beat = False
                continue
            ta = t.mean_std("acc", 100.0)[0]
            best = max(o.mean_std("acc", 100.0)[0] for o in others)
            beat = beat and ta > best
        wins += int(beat)
    need = min(4, len(benches))
    print(
        f"  [{'x' if wins >= need else ' '}] Acc above every baseline at eq50 and gt50: "
        f"{wins} of {len(benches)} benchmarks (need {need})"
    )
    stds = [(b, a, c.mean_std("acc", 100.0)[1], len(c.jobs)) for (b, a), c in tody.items() if c is not None]
    worst = max(stds, key=lambda x: x[2]) if stds else None
    seeded = all(n > 1 for *_, n in stds)
    ok_std = bool(stds) and seeded and worst is not None and worst[2] <= 2.0
    worst_txt = f"worst {worst[0]} {worst[1]} {worst[2]:.2f}" if worst else "—"
    print(
        f"  [{'x' if ok_std else ' '}] seed std of Acc <= 2 points: {worst_txt}"
        + ("" if seeded else " (some cells have one seed)")
    )
    tok_ok, tok_n = 0, 0
    for b in benches:
        for a in ("eq50", "gt50"):
            t, ap = tody.get((b, a)), cs.get(CellKey("agentprune", b, a, "none"))
            if t is None or ap is None:
                continue
            tok_n += 1
            tok_ok += int(t.mean_std("token")[0] <= ap.mean_std("token")[0])
    print(
        f"  [{'x' if tok_n and tok_ok == tok_n else ' '}] Token <= AgentPrune at eq50/gt50: "
        f"{tok_ok} of {tok_n} cells"
    )
    return 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", nargs="?", help="a directory of finished jobs")
    ap.add_argument("--run", nargs="*", metavar="OVERRIDE", help="run table2 with these overrides first")
    args = ap.parse_args()
    if args.run is not None:
        root = Path("outputs") / "multirun" / "check_todycomm" / time.strftime("%Y-%m-%d_%H-%M-%S")
        t0 = time.perf_counter()
        cmd = [
            sys.executable,
            "-m",
            "tomacs.cli",
            "train",
            "table=table2",
            *args.run,
            f"hydra.sweep.dir={root}",
        ]
        if subprocess.run(cmd).returncode != 0:
            sys.exit("sweep failed")
        print(f"sweep wall time {(time.perf_counter() - t0) / 60:.1f} min -> {root}")
    elif args.root:
        root = Path(args.root)
    else:
        ap.error("give a directory of jobs or --run")
    sys.exit(report(root))


if __name__ == "__main__":
    main()
