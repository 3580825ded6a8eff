"""Paired evaluation (`tomacs paired-eval`): re-evaluate every job of a finished sweep under one
evaluation seed.

On `sim` a run's seed draws both its training and its test episodes (who attacks, when, the target,
the simulated replies). A seed sweep's spread then mixes the two, and 153 questions alone carry about
4 points of it. This re-runs each job's evaluation with its own trained checkpoint (the one the training
job scored) and `eval.seed=K`, so every seed meets the same adversary plans. That is not yet the same
replies: once two policies draw different graphs, their agents read different messages and answer from
other draws, which at gt50 still moves one policy's Acc by 3-5 points. `--draws D` pools D draws of the
simulated agents per job (`eval.draws`), which cuts that noise by about sqrt(D), so the spread that is
left is mostly training's. It writes a sibling tree (`DIR_paired<K>`, `DIR_paired<K>_draws<D>` with D > 1;
one job per original job, resumable: finished jobs are skipped) that `tomacs report` and `tomacs
check-targets` read, and prints Acc mean ± sample std per cell, unpaired (the original jobs) beside paired.

A job whose seed already equals K is re-run too and its first draw must score exactly what it scored (a
check that the re-evaluation is faithful: it prints a warning if not).
"""

from __future__ import annotations

import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

from tomacs.job.files import tested_checkpoint
from tomacs.report.collect import Cell, cells, find_jobs

__all__ = ["paired_eval"]

# overrides of the original job that the re-evaluation sets itself (or that only a sweep knows)
DROP = ("mode=", "+table=", "table=", "hydra.", "checkpoint=", "eval.seed=", "eval.draws=")


def _command(job: Path, eval_seed: int, dest: Path, draws: int = 1) -> list[str]:
    """The job's own evaluation again, with the weights its test figures came from (`tested_checkpoint`)."""
    overrides = yaml.safe_load((job / ".hydra" / "overrides.yaml").read_text()) or []
    keep = [o for o in overrides if not o.startswith(DROP)]
    cmd = [sys.executable, "-m", "tomacs.cli", "evaluate", *keep, f"eval.seed={eval_seed}"]
    if draws > 1:
        cmd.append(f"eval.draws={draws}")
    if (ck := tested_checkpoint(job)) is not None:
        cmd.append(f"checkpoint='{ck.resolve()}'")
    return [*cmd, f"hydra.run.dir='{dest.resolve()}'"]


def _run(job: Path, eval_seed: int, dest: Path, draws: int = 1) -> str | None:
    """Re-evaluates one job into dest (skipped when dest already finished); the error line or None."""
    if (dest / "results.json").is_file():
        return None
    p = subprocess.run(_command(job, eval_seed, dest, draws), capture_output=True, text=True)
    if p.returncode != 0:
        tail = (p.stderr or p.stdout).strip().splitlines()[-1:] or ["(no output)"]
        return f"{job.name}: rc {p.returncode}: {tail[0]}"
    return None


def _first_draw_acc(results: dict) -> float:
    """Acc of a job's first pass: the run's own draw of the agents, whatever `eval.draws` pooled."""
    m = results["metrics"]
    return float((m["by_draw"][0] if m.get("by_draw") else m)["acc"])


def _ms(c: Cell | None) -> str:
    ms = None if c is None else c.mean_std("acc", 100.0)
    return "—" if ms is None else f"{ms[0]:5.1f} ± {ms[1]:3.1f}"


def paired_eval(
    root: Path,
    eval_seed: int = 0,
    out: Path | None = None,
    methods: set[str] | None = None,
    jobs: int = 2,
    draws: int = 1,
) -> int:
    """Re-evaluates the finished jobs under `root` (of `methods`, default all) with `eval_seed`, pooling
    `draws` draws of the agents, into `out` (default ROOT_paired<K>[_draws<D>] beside ROOT), `jobs` side
    by side; prints the table. The exit code: 1 when some re-evaluation failed, else 0. No finished job
    under root: FileNotFoundError."""
    found = [j for j in find_jobs(root) if methods is None or j.results["method"] in methods]
    if not found:
        which = f" for methods {','.join(sorted(methods))}" if methods else ""
        raise FileNotFoundError(f"no finished jobs under {root}{which}")
    out_root = out or root.with_name(
        f"{root.name}_paired{eval_seed}" + (f"_draws{draws}" if draws > 1 else "")
    )
    out_root.mkdir(parents=True, exist_ok=True)
    dest = {j.path: out_root / j.path.relative_to(root) for j in found}
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(_run, j.path, eval_seed, dest[j.path], draws) for j in found]
        errors = []
        for i, fut in enumerate(futures, 1):
            if err := fut.result():
                errors.append(err)
            print(f"\r{i}/{len(found)} jobs re-evaluated", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    done = {j.path: j for j in find_jobs(out_root)}
    pairs = [(j, done[dest[j.path]]) for j in found if dest[j.path] in done]
    paired = [p for _, p in pairs]
    # the faithfulness check: same seed, same checkpoint -> the same numbers on the first draw
    for j, p in pairs:
        now, was = _first_draw_acc(p.results), _first_draw_acc(j.results)
        if int(j.results["seed"]) == eval_seed and now != was:
            print(f"warning: {j.path.name} re-scored {now:.4f}, was {was:.4f}")
    backbones = sorted({str(j.results["backbone"]) for j in found})
    print(
        f"{len(paired)} of {len(found)} jobs re-evaluated with eval.seed={eval_seed}"
        f"{f' x {draws} draws' if draws > 1 else ''} into {out_root} "
        f"({time.perf_counter() - t0:.0f} s); backbone={','.join(backbones)}; "
        "Acc % mean ± sample std over seeds"
    )
    print(f"{'benchmark':<11} {'attack':<6} {'method':<12} {'unpaired':>13} {'paired':>13}")
    before, after = cells(found), cells(paired)
    for key in sorted(before, key=lambda k: (k.benchmark, k.attack, k.method)):
        label = key.method + (f" [{key.setting}]" if key.setting else "")
        pair = f"{_ms(before[key]):>13} {_ms(after.get(key)):>13}"
        print(f"{key.benchmark:<11} {key.attack:<6} {label:<12} {pair}")
    for e in errors:
        print(f"failed: {e}")
    return 1 if errors else 0
