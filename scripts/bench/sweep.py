"""Wall time of a paper-table sweep on the simulator, where it goes, and an extrapolated total.

    python scripts/bench/sweep.py --slice                     # issue 14's slice: each method once per
                                                              # benchmark at gt50, MiniLM, extrapolated
    python scripts/bench/sweep.py --slice --benchmarks mmlu   # a thinner slice (one benchmark)
    python scripts/bench/sweep.py --estimate                  # one job per method (first benchmark)
    python scripts/bench/sweep.py                             # the full table2 sweep (hours on 2 cores)
    python scripts/bench/sweep.py --slice train.epochs=2      # any override goes to every job
    python scripts/bench/sweep.py --job                       # one MiniLM TodyComm job (MMLU gt50,
                                                              # seed 0) on the shared embedding cache

--slice runs each method once per benchmark (attack gt50, seed 0, the table's default sizes) and
prints, per method, the mean job time and the share of it spent inside MiniLM (`encode_s` of
results.json), then multiplies each (benchmark, method) time by the jobs the table has of it (its
attack rates x seeds). Every slice job gets its own empty embedding cache, so the extrapolation is
what a first sweep costs with nothing shared: a real sweep also reuses the texts that repeat across
attack rates (round-1 and honest rounds), so it is an upper bound. For TodyComm it also prints the
ratio of an iteration's time to the bound of encoding that iteration's texts in one `encode()`
call (the per-text time of one call over the job's own agent texts, same precision): the goal is
<= 1.2. The machine's load average is printed with the figures; measure on an idle machine.

--job times the job a user re-runs most: one TodyComm job at the table's sizes on the run's own
embedding cache (`embed.cache`, default outputs/cache/embeddings.sqlite), so with the cache warm from
an earlier run of the same cell it is the warm-cache figure of issue 28; it prints how many texts
MiniLM embedded and how many the cache served, and the share of the job spent inside MiniLM.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

from tomacs.launch.table_sweeps import jobs, sweep_params


def run(args: list[str]) -> float:
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "tomacs.cli", "train", *args], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"job failed ({' '.join(args)}):\n{p.stderr[-3000:]}")
    return time.perf_counter() - t0


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def encode_bound_per_text(out_dir: Path, precision: str, n: int = 512) -> float:
    """Seconds per text of one encode() call over up to n of the job's agent texts (no cache)."""
    from tomacs.embedding.embedders import MiniLMEmbedder

    texts: list[str] = []
    for line in (out_dir / "episodes.jsonl").read_text().splitlines():
        for rnd in json.loads(line)["rounds"]:
            texts += [o["text"] for o in rnd if o.get("text")]
    texts = list(dict.fromkeys(texts))[:n]
    emb = MiniLMEmbedder(precision=precision)
    emb._encode(texts[:8])  # load and warm up
    t0 = time.perf_counter()
    emb._encode(texts)
    return (time.perf_counter() - t0) / len(texts)


def todycomm_ratio(out_dir: Path, precision: str) -> tuple[float, float, float]:
    """(median iteration s, median bound s, median ratio) over the job's training iterations."""
    log = [json.loads(x) for x in (out_dir / "train_log.jsonl").read_text().splitlines()]
    its = [r for r in log if "train_acc" in r]
    walls = [b["wall_s"] - a["wall_s"] for a, b in zip(its, its[1:], strict=False)]  # the first loads
    per_text = encode_bound_per_text(out_dir, precision)
    bounds = [r["encoded"] * per_text for r in its[1:]]
    ratios = [w / b for w, b in zip(walls, bounds, strict=True) if b > 0]
    if not ratios:  # one iteration, or nothing encoded (a warm cache)
        return (statistics.median(walls) if walls else float("nan")), 0.0, float("nan")
    return statistics.median(walls), statistics.median(bounds), statistics.median(ratios)


def slice_mode(table: str, benchmarks: list[str] | None, overrides: list[str], tmp: Path) -> None:
    axes = {k: v.split(",") for k, v in sweep_params(table).items()}
    benches = benchmarks or axes["benchmark"]
    per_cell = len(jobs(table, [*overrides, "benchmark=mmlu", "method=complete"]))  # attacks x seeds
    print(f"{table}: slice of {len(benches)} benchmark(s) x {len(axes['method'])} methods at gt50, seed 0;")
    print(f"  each (benchmark, method) stands for {per_cell} jobs of the table; {load()}")
    times: dict[str, list[float]] = defaultdict(list)
    enc: Counter[str] = Counter()
    wall_in: Counter[str] = Counter()
    total = 0.0
    ratio_rows: list[tuple[str, float, float, float]] = []
    for bench in benches:
        for method in axes["method"]:
            out = tmp / f"{bench}_{method}"
            wall = run(
                [
                    f"benchmark={bench}",
                    f"method={method}",
                    "attack=gt50",
                    "seed=0",
                    f"embed.cache={tmp / f'emb_{bench}_{method}.sqlite'}",
                    *overrides,
                    f"hydra.run.dir={out}",
                ]
            )
            res = json.loads((out / "results.json").read_text())
            times[method].append(wall)
            enc[method] += sum(e.get("encode_s", 0.0) for e in res.get("embedding") or [])
            wall_in[method] += res["wall_s"]
            total += wall * per_cell
            prec = next((e["precision"] for e in res.get("embedding") or []), "none")
            job_enc = sum(e.get("encode_s", 0.0) for e in res.get("embedding") or [])
            share = 100 * job_enc / res["wall_s"] if res["wall_s"] else 0.0
            print(f"  {bench:<11} {method:<11} {wall:7.1f} s  (in MiniLM {share:.0f} %, {prec})", flush=True)
            if method == "todycomm" and res.get("train", {}).get("iterations"):
                ratio_rows.append((bench, *todycomm_ratio(out, prec if prec != "none" else "fp32")))
    print(f"per method (mean job s over {len(benches)} benchmark(s), share of job time inside MiniLM):")
    for method, ts in times.items():
        share = 100 * enc[method] / wall_in[method] if wall_in[method] else 0.0
        print(f"  {method:<11} {statistics.mean(ts):7.1f} s  MiniLM {share:4.0f} %")
    for bench, it, bound, ratio in ratio_rows:
        print(
            f"todycomm {bench}: iteration {it:.1f} s, encode bound of its texts {bound:.1f} s, "
            f"ratio {ratio:.2f} (goal <= 1.2)"
        )
    full = len(jobs(table, overrides))
    scale = len(axes["benchmark"]) / len(benches)
    print(f"extrapolated full {table} ({full} jobs, no cache shared): {total * scale / 3600:.2f} h; {load()}")


def job_mode(overrides: list[str], tmp: Path, out: Path | None = None) -> None:
    """One TodyComm job on the shared embedding cache: wall time, texts embedded vs served. `out` keeps
    the job's directory (results.json, checkpoints) for a table cell; a temporary one otherwise."""
    cell = ["method=todycomm", "benchmark=mmlu", "attack=gt50", "seed=0"]
    keys = {o.split("=", 1)[0] for o in overrides}
    job_dir = out or tmp / "job"
    args = [*[c for c in cell if c.split("=", 1)[0] not in keys], *overrides, f"hydra.run.dir={job_dir}"]
    print(f"one job: {' '.join(a for a in args if not a.startswith('hydra.'))}; {load()}", flush=True)
    wall = run(args)
    res = json.loads((job_dir / "results.json").read_text())
    for e in res.get("embedding") or []:
        hits = (e.get("cache") or {}).get("hits", 0)
        share = 100 * e.get("encode_s", 0.0) / res["wall_s"] if res["wall_s"] else 0.0
        print(
            f"  {e['embedder']} ({e.get('precision')}): embedded {e.get('encoded', 0):,} texts, "
            f"cache served {hits:,}; {share:.0f} % of the job inside the embedder"
        )
    m = res["metrics"]
    print(
        f"job wall {wall:.0f} s (train {res['train'].get('train_wall_s', 0):.0f} s), "
        f"Acc {100 * m['acc']:.1f} ADAcc {100 * m['adacc']:.1f}; {load()}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--table", default="table2")
    ap.add_argument("--slice", action="store_true", help="each method once per benchmark at gt50")
    ap.add_argument("--benchmarks", help="comma-separated benchmarks for --slice (default: the table's)")
    ap.add_argument("--estimate", action="store_true", help="one job per method, first benchmark")
    ap.add_argument("--job", action="store_true", help="one TodyComm job on the shared embedding cache")
    ap.add_argument("--out", type=Path, help="--job: keep the job directory here (default: temporary)")
    ap.add_argument("overrides", nargs="*")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        if args.job:
            job_mode(args.overrides, tmp, args.out)
            return
        if args.slice:
            benches = args.benchmarks.split(",") if args.benchmarks else None
            slice_mode(args.table, benches, args.overrides, tmp)
            return
        all_jobs = jobs(args.table, args.overrides)
        print(f"{args.table}: {len(all_jobs)} jobs on backbone=sim; {load()}")
        if not args.estimate:
            wall = run([f"table={args.table}", *args.overrides, f"hydra.sweep.dir={tmp / 'sweep'}"])
            print(f"wall {wall / 60:.1f} min, {len(all_jobs) / (wall / 60):.2f} jobs/min (measured)")
            return
        per_method = Counter(next(o.split("=", 1)[1] for o in j if o.startswith("method=")) for j in all_jobs)
        first = dict(o.split("=", 1) for o in all_jobs[0])
        total = 0.0
        for method, count in per_method.items():
            ovs = [f"{k}={v}" for k, v in first.items() if k != "method"]
            out = tmp / method
            wall = run([*ovs, f"method={method}", *args.overrides, f"hydra.run.dir={out}"])
            res = json.loads((out / "results.json").read_text())
            total += wall * count
            print(
                f"  {method:<12} one job {wall:7.1f} s "
                f"(train {res['train'].get('train_wall_s', 0):.1f} s) x {count}"
            )
        print(f"estimated full sweep: {total / 3600:.2f} h (extrapolated); {load()}")


if __name__ == "__main__":
    main()
