"""Wall time of the full `sim` fit (`tomacs sim fit`): Tables 7-8 jointly with Table 2 Complete.

Why: the fit simulates thousands of multi-round debates per objective evaluation (the vectorised
simulator, tomacs/sim/episodes.py); it must stay well under 30 minutes on 2 CPU cores. This runs
the same fit as `tomacs sim fit` (all five profiles, or those named) in `--jobs` processes
(one profile per process, numpy single-threaded), writes nothing, and prints the fitted cells
and the total wall time.

    python scripts/bench/calibrate.py                 # all five profiles, 2 processes
    python scripts/bench/calibrate.py -p arc_c --jobs 1
"""

from __future__ import annotations

import argparse
import os
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")


def main() -> None:
    from tomacs.sim.calibrate import calibrate, format_report
    from tomacs.sim.model import PROFILE_NAMES

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-p", "--profile", action="append", help="profile(s) to fit (default: all five)")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes (default 2 = the 2-core target)")
    args = ap.parse_args()
    names = args.profile or list(PROFILE_NAMES)
    t0 = time.perf_counter()
    rows = calibrate(names, write=False, jobs=args.jobs)  # the same code path as `tomacs sim fit`
    total = time.perf_counter() - t0
    print(format_report(rows))
    print(
        f"\ntotal wall time (fit + check): {total:.1f} s ({total / 60:.1f} min), {args.jobs} process(es), "
        f"cpu_count={os.cpu_count()}; target < 30 min on 2 cores"
    )


if __name__ == "__main__":
    main()
