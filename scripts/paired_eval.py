"""Re-evaluate every job of a finished sweep under one evaluation seed (paired evaluation).

    python scripts/paired_eval.py outputs/multirun/table2/sim/<stamp>            # eval.seed=0
    python scripts/paired_eval.py DIR --eval-seed 0 --methods todycomm --jobs 2

On `sim` a run's seed draws both its training and its test episodes (who attacks, when, the target,
the simulated replies). A seed sweep's spread then mixes the two, and 153 questions alone carry about
4 points of it. This script re-runs each job's evaluation with its own trained checkpoint (best.pt,
the one the training job scored) and `eval.seed=K`, so every seed meets the same test episodes and
the spread that is left is training's. It writes a sibling tree (`DIR_paired<K>`, one job per
original job, resumable: finished jobs are skipped) that `tomacs report` and
`scripts/check_todycomm_targets.py` read, and prints Acc mean ± sample std per cell, unpaired
(the original jobs) beside paired.

A job whose seed already equals K is re-run too and must score exactly what it scored (a check
that the re-evaluation is faithful: it prints a warning if not).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

DROP = ("mode=", "+table=", "table=", "hydra.", "checkpoint=", "eval.seed=")


def _jobs(root: Path, methods: set[str] | None) -> list[tuple[Path, dict]]:
    out = []
    for res in sorted(root.glob("*/results.json")):
        r = json.loads(res.read_text())
        if methods is None or r["method"] in methods:
            out.append((res.parent, r))
    return out


def _command(job: Path, results: dict, eval_seed: int, dest: Path) -> list[str]:
    overrides = yaml.safe_load((job / ".hydra" / "overrides.yaml").read_text()) or []
    keep = [o for o in overrides if not o.startswith(DROP)]
    cmd = [sys.executable, "-m", "tomacs.cli", "evaluate", *keep, f"eval.seed={eval_seed}"]
    if (job / "best.pt").is_file():
        cmd.append(f"checkpoint='{(job / 'best.pt').resolve()}'")
    return [*cmd, f"hydra.run.dir='{dest.resolve()}'"]


def _run(job: Path, results: dict, eval_seed: int, out_root: Path) -> tuple[Path, str | None]:
    dest = out_root / job.name
    if (dest / "results.json").is_file():
        return dest, None
    p = subprocess.run(_command(job, results, eval_seed, dest), capture_output=True, text=True)
    if p.returncode != 0:
        tail = (p.stderr or p.stdout).strip().splitlines()[-1:] or ["(no output)"]
        return dest, f"{job.name}: rc {p.returncode}: {tail[0]}"
    return dest, None


def _cells(pairs: list[tuple[dict, dict | None]]) -> dict[tuple[str, str, str], tuple[list, list]]:
    cells: dict[tuple[str, str, str], tuple[list, list]] = defaultdict(lambda: ([], []))
    for orig, paired in pairs:
        key = (orig["benchmark"], orig["attack"], orig["method"])
        cells[key][0].append(100.0 * orig["metrics"]["acc"])
        if paired is not None:
            cells[key][1].append(100.0 * paired["metrics"]["acc"])
    return cells


def _ms(v: list[float]) -> str:
    if not v:
        return "—"
    return f"{statistics.fmean(v):5.1f} ± {statistics.stdev(v) if len(v) > 1 else 0.0:3.1f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", type=Path, help="a sweep directory of finished jobs")
    ap.add_argument("--eval-seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None, help="default: ROOT_paired<K> beside ROOT")
    ap.add_argument("--methods", default=None, help="comma-separated; default every method")
    ap.add_argument("--jobs", type=int, default=2, help="evaluations run side by side")
    args = ap.parse_args()
    methods = set(args.methods.split(",")) if args.methods else None
    jobs = _jobs(args.root, methods)
    if not jobs:
        print(f"no finished jobs under {args.root}" + (f" for methods {args.methods}" if methods else ""))
        return 2
    out_root = args.out or args.root.with_name(f"{args.root.name}_paired{args.eval_seed}")
    out_root.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    errors: list[str] = []
    paired: dict[Path, dict] = {}
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {pool.submit(_run, job, r, args.eval_seed, out_root): job for job, r in jobs}
        for i, fut in enumerate(futures, 1):
            dest, err = fut.result()
            if err:
                errors.append(err)
            elif (dest / "results.json").is_file():
                paired[futures[fut]] = json.loads((dest / "results.json").read_text())
            print(f"\r{i}/{len(jobs)} jobs re-evaluated", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    for job, r in jobs:  # the faithfulness check: same seed, same checkpoint -> same numbers
        p = paired.get(job)
        if p is not None and int(r["seed"]) == args.eval_seed and p["metrics"]["acc"] != r["metrics"]["acc"]:
            print(f"warning: {job.name} re-scored {p['metrics']['acc']:.4f}, was {r['metrics']['acc']:.4f}")
    backbones = sorted({str(r["backbone"]) for _, r in jobs})
    print(
        f"{len(paired)} of {len(jobs)} jobs re-evaluated with eval.seed={args.eval_seed} into {out_root} "
        f"({time.perf_counter() - t0:.0f} s); backbone={','.join(backbones)}; "
        "Acc % mean ± sample std over seeds"
    )
    print(f"{'benchmark':<11} {'attack':<6} {'method':<12} {'unpaired':>13} {'paired':>13}")
    cells = _cells([(r, paired.get(job)) for job, r in jobs])
    for (b, a, m), (u, p) in sorted(cells.items()):
        print(f"{b:<11} {a:<6} {m:<12} {_ms(u):>13} {_ms(p):>13}")
    for e in errors:
        print(f"failed: {e}")
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
