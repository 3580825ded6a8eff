"""Wall time of a paper-table sweep on the simulator, and jobs per minute.

    python scripts/bench_sweep.py                      # the full table2 sweep (hours on 2 cores)
    python scripts/bench_sweep.py --estimate           # one job per method, extrapolated to the sweep
    python scripts/bench_sweep.py seed=0 benchmark=mmlu  # any table axis overridden

--estimate runs one job per method (first benchmark, attack and seed of the table, default sizes)
and multiplies each method's time by its number of jobs in the table: an extrapolation, printed
as such, for machines where the full sweep would take too long to measure.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from tomacs.paper_tables import jobs


def run(table: str, overrides: list[str], sweep_dir: Path) -> float:
    t0 = time.perf_counter()
    cmd = [
        sys.executable,
        "-m",
        "tomacs.cli",
        "train",
        f"table={table}",
        *overrides,
        f"hydra.sweep.dir={sweep_dir}",
    ]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"sweep failed:\n{p.stderr[-3000:]}")
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--table", default="table2")
    ap.add_argument("--estimate", action="store_true")
    ap.add_argument("overrides", nargs="*")
    args = ap.parse_args()
    all_jobs = jobs(args.table, args.overrides)
    print(
        f"{args.table}: {len(all_jobs)} jobs on backbone=sim ({' '.join(args.overrides) or 'default sizes'})"
    )
    with tempfile.TemporaryDirectory() as tmp:
        if not args.estimate:
            wall = run(args.table, args.overrides, Path(tmp) / "sweep")
            print(f"wall {wall / 60:.1f} min, {len(all_jobs) / (wall / 60):.2f} jobs/min (measured)")
            return
        per_method = Counter(next(o.split("=", 1)[1] for o in j if o.startswith("method=")) for j in all_jobs)
        first = dict(o.split("=", 1) for o in all_jobs[0])
        total = 0.0
        for method, count in per_method.items():
            ovs = [f"{k}={v}" for k, v in first.items() if k != "method"] + [
                f"method={method}",
                *args.overrides,
            ]
            wall = run(args.table, ovs, Path(tmp) / method)
            res = json.loads(next((Path(tmp) / method).rglob("results.json")).read_text())
            total += wall * count
            print(
                f"  {method:<12} one job {wall:7.1f} s "
                f"(train {res['train'].get('train_wall_s', 0):.1f} s) x {count}"
            )
        print(
            f"estimated full sweep: {total / 3600:.2f} h, "
            f"{len(all_jobs) / (total / 60):.2f} jobs/min (extrapolated)"
        )


if __name__ == "__main__":
    main()
