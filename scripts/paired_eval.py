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
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

from tomacs.report.collect import Cell, cells, find_jobs

DROP = ("mode=", "+table=", "table=", "hydra.", "checkpoint=", "eval.seed=")


def _command(job: Path, eval_seed: int, dest: Path) -> list[str]:
    overrides = yaml.safe_load((job / ".hydra" / "overrides.yaml").read_text()) or []
    keep = [o for o in overrides if not o.startswith(DROP)]
    cmd = [sys.executable, "-m", "tomacs.cli", "evaluate", *keep, f"eval.seed={eval_seed}"]
    if (job / "best.pt").is_file():
        cmd.append(f"checkpoint='{(job / 'best.pt').resolve()}'")
    return [*cmd, f"hydra.run.dir='{dest.resolve()}'"]


def _run(job: Path, eval_seed: int, dest: Path) -> str | None:
    """Re-evaluates one job into dest (skipped when dest already finished); the error line or None."""
    if (dest / "results.json").is_file():
        return None
    p = subprocess.run(_command(job, eval_seed, dest), capture_output=True, text=True)
    if p.returncode != 0:
        tail = (p.stderr or p.stdout).strip().splitlines()[-1:] or ["(no output)"]
        return f"{job.name}: rc {p.returncode}: {tail[0]}"
    return None


def _ms(c: Cell | None) -> str:
    ms = None if c is None else c.mean_std("acc", 100.0)
    return "—" if ms is None else f"{ms[0]:5.1f} ± {ms[1]:3.1f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", type=Path, help="a sweep directory of finished jobs")
    ap.add_argument("--eval-seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None, help="default: ROOT_paired<K> beside ROOT")
    ap.add_argument("--methods", default=None, help="comma-separated; default every method")
    ap.add_argument("--jobs", type=int, default=2, help="evaluations run side by side")
    args = ap.parse_args()
    methods = set(args.methods.split(",")) if args.methods else None
    jobs = [j for j in find_jobs(args.root) if methods is None or j.results["method"] in methods]
    if not jobs:
        print(f"no finished jobs under {args.root}" + (f" for methods {args.methods}" if methods else ""))
        return 2
    out_root = args.out or args.root.with_name(f"{args.root.name}_paired{args.eval_seed}")
    out_root.mkdir(parents=True, exist_ok=True)
    dest = {j.path: out_root / j.path.relative_to(args.root) for j in jobs}
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [pool.submit(_run, j.path, args.eval_seed, dest[j.path]) for j in jobs]
        errors = []
        for i, fut in enumerate(futures, 1):
            if err := fut.result():
                errors.append(err)
            print(f"\r{i}/{len(jobs)} jobs re-evaluated", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    done = {j.path: j for j in find_jobs(out_root)}
    pairs = [(j, done[dest[j.path]]) for j in jobs if dest[j.path] in done]
    paired = [p for _, p in pairs]
    for j, p in pairs:  # the faithfulness check: same seed, same checkpoint -> same numbers
        now, was = p.results["metrics"]["acc"], j.results["metrics"]["acc"]
        if int(j.results["seed"]) == args.eval_seed and now != was:
            print(f"warning: {j.path.name} re-scored {now:.4f}, was {was:.4f}")
    backbones = sorted({str(j.results["backbone"]) for j in jobs})
    print(
        f"{len(paired)} of {len(jobs)} jobs re-evaluated with eval.seed={args.eval_seed} into {out_root} "
        f"({time.perf_counter() - t0:.0f} s); backbone={','.join(backbones)}; "
        "Acc % mean ± sample std over seeds"
    )
    print(f"{'benchmark':<11} {'attack':<6} {'method':<12} {'unpaired':>13} {'paired':>13}")
    before, after = cells(jobs), cells(paired)
    for key in sorted(before, key=lambda k: (k.benchmark, k.attack, k.method)):
        label = key.method + (f" [{key.setting}]" if key.setting else "")
        pair = f"{_ms(before[key]):>13} {_ms(after.get(key)):>13}"
        print(f"{key.benchmark:<11} {key.attack:<6} {label:<12} {pair}")
    for e in errors:
        print(f"failed: {e}")
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
