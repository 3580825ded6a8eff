"""TodyComm's claims (issue 12 targets) checked on finished jobs, with the paper's numbers beside
ours (`tomacs check-targets`).

`--run` first runs `tomacs train table=table2 <overrides>` into a fresh directory (hours for the full
table on 2 cores; narrow it with overrides) and prints its wall time. The checks:

* TodyComm ADAcc averaged over benchmarks and attack rates >= 80 % (paper: > 85 %);
* TodyComm Acc above every baseline at eq50 and gt50 on at least 4 of the benchmarks present
  (4 of 5 in the paper's table);
* seed std of TodyComm's Acc <= 2 points in every cell;
* TodyComm Token <= AgentPrune's at eq50 and gt50;
* at lt50, TodyComm's ADAcc above the all-reliable detector's on every benchmark present (issue 28: a
  detector that flags nobody scores 1 - adversaries/agents, which a policy must beat to detect at all).

Every number is ours (labelled with the backbone) or the paper's (gpt-4.1-nano), never mixed.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

from tomacs.report.collect import Cell, CellKey, cells, find_jobs
from tomacs.report.paper import PAPER_METHOD, lookup
from tomacs.report.settings import ran_on

__all__ = ["check_targets", "run_table2"]

ATTACKS = ("lt50", "eq50", "gt50")
# the baseline the Token claim names (a row key of the paper's tables)
TOKEN_RIVAL = "agentprune"


def _fmt(ms: tuple[float, float] | None, n: int = 0) -> str:
    if ms is None:
        return "—"
    return f"{ms[0]:.1f} ± {ms[1]:.1f}" + (f" (n={n})" if n else "")


def _stat(c: Cell, metric: str, scale: float = 1.0) -> tuple[float, float]:
    """(mean, std) of a cell that has values of `metric` (every cell a finished job made)."""
    ms = c.mean_std(metric, scale)
    if ms is None:
        raise ValueError(f"no {metric} values in the jobs {c.jobs}")
    return ms


def _paper(method: str, bench: str, attack: str, metric: str) -> str:
    r = lookup(method, bench, attack, metric)
    return "—" if r is None else f"{r['value']:.1f}"


def check_targets(root: Path) -> None:
    """Prints our cells beside the paper's and the targets, each [x] met or [ ] not. No finished
    job under root: FileNotFoundError; a tree that mixes experiments: ValueError."""
    jobs = find_jobs(root)
    if not jobs:
        raise FileNotFoundError(f"no finished jobs under {root}")
    cs = cells([j for j in jobs if j.key[3] == "none"])
    varying = sorted({k.setting for k in cs if k.setting})
    if varying:
        mixed = "; ".join(varying)
        raise ValueError(f"{root} mixes experiments ({mixed}): point check-targets at one of them")
    benches = sorted({k[1] for k in cs})
    methods = sorted({k[0] for k in cs})
    backbones = sorted({str(j.results["backbone"]) for j in jobs})
    # TodyComm's embedder (null = MiniLM) and where it ran: the two things issue 28's tables hinge on
    tody_jobs = [j for k, c in cs.items() if k.method == PAPER_METHOD for j in c.jobs]
    embedders = sorted({str((j.config or {}).get("embedder") or "minilm") for j in tody_jobs if j.config})
    devices = sorted({d for j in tody_jobs if (d := ran_on(j.results))})
    ours = "; ".join(
        [f"backbone={','.join(backbones)}"]
        + ([f"{PAPER_METHOD} embedder={','.join(embedders)}"] if embedders else [])
        + ([f"device={','.join(devices)}"] if devices else [])
    )
    print(f"{len(jobs)} jobs under {root}; ours: {ours}; paper: gpt-4.1-nano")
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
    tody = {(b, a): cs.get(CellKey(PAPER_METHOD, b, a, "none")) for b in benches for a in ATTACKS}
    print("\ntargets (ours):")
    adaccs = [v for c in tody.values() if c is not None for v in [_stat(c, "adacc", 100.0)[0]]]
    ok_ad = bool(adaccs) and statistics.fmean(adaccs) >= 80.0
    mean_ad = f"{statistics.fmean(adaccs):.1f}" if adaccs else "—"
    print(f"  [{'x' if ok_ad else ' '}] ADAcc mean over {len(adaccs)} cells >= 80 %: {mean_ad} %")
    wins = 0
    for b in benches:
        beat = True
        for a in ("eq50", "gt50"):
            t = tody.get((b, a))
            others = [
                cs[k] for k in cs if k[1] == b and k[2] == a and k[0] != PAPER_METHOD and k[3] == "none"
            ]
            if t is None or not others:
                beat = False
                continue
            ta = _stat(t, "acc", 100.0)[0]
            best = max(_stat(o, "acc", 100.0)[0] for o in others)
            beat = beat and ta > best
        wins += int(beat)
    need = min(4, len(benches))
    print(
        f"  [{'x' if wins >= need else ' '}] Acc above every baseline at eq50 and gt50: "
        f"{wins} of {len(benches)} benchmarks (need {need})"
    )
    stds = [(b, a, _stat(c, "acc", 100.0)[1], len(c.jobs)) for (b, a), c in tody.items() if c is not None]
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
            t, ap = tody.get((b, a)), cs.get(CellKey(TOKEN_RIVAL, b, a, "none"))
            if t is None or ap is None:
                continue
            tok_n += 1
            tok_ok += int(_stat(t, "token")[0] <= _stat(ap, "token")[0])
    print(
        f"  [{'x' if tok_n and tok_ok == tok_n else ' '}] Token <= AgentPrune at eq50/gt50: "
        f"{tok_ok} of {tok_n} cells"
    )
    lt = []  # (benchmark, TodyComm ADAcc, all-reliable ADAcc) at lt50
    for b in benches:
        t = tody.get((b, "lt50"))
        ad, base = (t.mean_std("adacc", 100.0), t.mean_std("adacc_baseline", 100.0)) if t else (None, None)
        if ad is not None and base is not None:
            lt.append((b, ad[0], base[0]))
    above = sum(ad > base for _, ad, base in lt)
    shown = ", ".join(f"{b} {ad:.1f} {'>' if ad > base else '<='} {base:.1f}" for b, ad, base in lt)
    print(
        f"  [{'x' if lt and above == len(lt) else ' '}] ADAcc above the all-reliable detector at lt50: "
        f"{above} of {len(lt)} benchmarks" + (f" ({shown})" if lt else "")
    )


def run_table2(overrides: list[str]) -> Path:
    """Runs `tomacs train table=table2 OVERRIDES` into a fresh directory under outputs/multirun/
    check_todycomm and returns it; prints the sweep's wall time. A failed sweep: RuntimeError."""
    root = Path("outputs") / "multirun" / "check_todycomm" / time.strftime("%Y-%m-%d_%H-%M-%S")
    t0 = time.perf_counter()
    cmd = [sys.executable, "-m", "tomacs.cli", "train", "table=table2", *overrides, f"hydra.sweep.dir={root}"]
    if subprocess.run(cmd).returncode != 0:
        raise RuntimeError(f"the table2 sweep failed (its jobs are under {root})")
    print(f"sweep wall time {(time.perf_counter() - t0) / 60:.1f} min -> {root}")
    return root
