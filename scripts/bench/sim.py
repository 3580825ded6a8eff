"""Simulator throughput (episodes/s) and quickstart wall time, optionally against an older revision.

    python scripts/bench/sim.py                          # complete, gt50, 153 questions, 3 repeats
    python scripts/bench/sim.py --baseline HEAD~3        # the same, interleaved with a git revision
    python scripts/bench/sim.py --quickstart             # also the wall time of the quickstart command
    python scripts/bench/sim.py --profile                # cProfile of one evaluation (top 25 by own time)
    python scripts/bench/sim.py method=chain benchmark=synthetic_numeric   # any overrides

Every measurement runs in a fresh process (no warm caches carried between measurements). With
--baseline the revision's `tomacs/` and `conf/` are extracted to a temporary directory and each
repeat runs baseline then current, so both see the same machine load; the load average is printed
because timings on a shared machine are noisy, and episodes per CPU second beside the wall-clock
rate (less sensitive to other processes). Both count evaluation only (the executor's batches, not
process start-up or config composition); the one-off tokenizer load (once per process) is timed
apart and a third rate includes it.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]  # the checkout: scripts/bench/<this file>
DEFAULT = ["method=complete", "attack=gt50"]


def _spec(cfg: object) -> object:
    """The run spec of a composed config (tomacs.launch.spec); a revision from before the run spec
    (a --baseline) builds from the composed config itself."""
    try:
        from tomacs.launch.spec import job_spec
    except ImportError:
        return cfg
    return job_spec(cfg)  # type: ignore[arg-type]


def worker(overrides: list[str]) -> None:
    """One evaluation in this process; prints its timing as JSON (run by the parent via --worker)."""
    from tomacs.config import compose
    from tomacs.launch.run import (  # tomacs.launch.run has both in every revision --baseline may name
        build,
        evaluate,
    )
    from tomacs.tokens import get_encoding

    t0 = time.perf_counter()
    comps = build(_spec(compose(overrides)), need_train=False)
    built = time.perf_counter() - t0
    t0 = time.perf_counter()
    get_encoding()  # the one-off tokenizer load, timed apart from the episodes
    tok = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        c0 = time.process_time()
        m = evaluate(comps, Path(tmp))
        cpu = time.process_time() - c0
    n = int(m["n_queries"])
    print(
        json.dumps(
            {
                "episodes": n,
                "eval_s": m["eval_wall_s"],
                "cpu_s": cpu,
                "tokenizer_s": tok,
                "build_s": built,
                "acc": m["acc"],
            }
        )
    )


def measure(root: Path, overrides: list[str]) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    p = subprocess.run(
        [sys.executable, __file__, "--worker", *overrides], capture_output=True, text=True, env=env, cwd=root
    )
    if p.returncode != 0:
        sys.exit(f"worker failed in {root}:\n{p.stderr[-3000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def quickstart(root: Path) -> tuple[float, float]:
    """Wall and CPU time of `tomacs train method=complete attack=gt50` as a new process (imports included)."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    with tempfile.TemporaryDirectory() as tmp:
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        p = subprocess.run(
            [sys.executable, "-m", "tomacs.cli", "train", *DEFAULT, f"hydra.run.dir={tmp}/run"],
            capture_output=True,
            text=True,
            env=env,
            cwd=root,
        )
        wall = time.perf_counter() - t0
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit(f"quickstart failed in {root}:\n{p.stderr[-3000:]}")
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def extract(rev: str, dest: Path) -> Path:
    """`tomacs/` and `conf/` of a git revision, as a tree that PYTHONPATH can point at."""
    data = subprocess.run(
        ["git", "-C", str(REPO), "archive", rev, "tomacs", "conf"], capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=BytesIO(data)) as tar:
        tar.extractall(dest, filter="data")
    return dest


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def profile(overrides: list[str]) -> None:
    import cProfile
    import pstats

    from tomacs.config import compose
    from tomacs.job.components import build
    from tomacs.launch.run import evaluate

    comps = build(_spec(compose(overrides)), need_train=False)
    with tempfile.TemporaryDirectory() as tmp:
        prof = cProfile.Profile()
        prof.enable()
        evaluate(comps, Path(tmp))
        prof.disable()
    pstats.Stats(prof).sort_stats("tottime").print_stats(25)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--baseline", metavar="REV", help="git revision to compare against, e.g. HEAD~3")
    ap.add_argument("--quickstart", action="store_true", help="also time the quickstart command")
    ap.add_argument("--profile", action="store_true", help="cProfile one evaluation in this process")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("overrides", nargs="*")
    a = ap.parse_args()
    overrides = a.overrides or DEFAULT
    if a.worker:
        return worker(overrides)
    if a.profile:
        return profile(overrides)
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"current": REPO}
        if a.baseline:
            trees = {f"baseline {a.baseline}": extract(a.baseline, Path(tmp)), "current": REPO}
        rates: dict[str, list[float]] = {k: [] for k in trees}
        cpu_rates: dict[str, list[float]] = {k: [] for k in trees}
        cold: dict[str, list[float]] = {k: [] for k in trees}
        qs: dict[str, list[float]] = {k: [] for k in trees}
        qs_cpu: dict[str, list[float]] = {k: [] for k in trees}
        print(f"sim evaluation: {' '.join(overrides)}; load average before: {load()}")
        for rep in range(a.repeat):
            for name, root in trees.items():
                r = measure(root, overrides)
                rate = r["episodes"] / r["eval_s"]
                rates[name].append(rate)
                cpu_rates[name].append(r["episodes"] / r["cpu_s"])
                cold[name].append(r["episodes"] / (r["eval_s"] + r["tokenizer_s"]))
                line = (
                    f"  [{rep + 1}] {name:>20}: {rate:6.1f} episodes/s ({r['episodes']} in "
                    f"{r['eval_s']:.2f} s wall, {r['cpu_s']:.2f} s CPU; "
                    f"+{r['tokenizer_s']:.2f} s tokenizer load)"
                )
                if a.quickstart:
                    wall, cpu = quickstart(root)
                    qs[name].append(wall)
                    qs_cpu[name].append(cpu)
                    line += f"; quickstart {wall:.2f} s wall, {cpu:.2f} s CPU"
                print(f"{line}  load {load()}", flush=True)
        for name in trees:
            line = (
                f"{name:>22}: median {statistics.median(rates[name]):6.1f} episodes/s wall-clock, "
                f"{statistics.median(cpu_rates[name]):6.1f} per CPU second, "
                f"{statistics.median(cold[name]):6.1f} with the tokenizer load"
            )
            if a.quickstart:
                line += (
                    f"; quickstart median {statistics.median(qs[name]):.2f} s wall, "
                    f"{statistics.median(qs_cpu[name]):.2f} s CPU"
                )
            print(line)
        print(f"load average after: {load()}")


if __name__ == "__main__":
    main()
