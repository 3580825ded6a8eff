"""Time `tomacs sim fit-episodes`' fit on 500 episodes (issue 26 target: <= 2 min on 2 cores).

Why: a researcher fits their own model from a few hundred real debates; the fit must stay a
coffee-break job. The real MAD-Follower debates (209) are replicated, each copy a question of its
own (the copies' latents are separate, as 500 distinct questions would be), up to --episodes. The
fit is the one the command runs (every parameter, the target-lure rule, accuracy per benchmark and
persuasion per adversary model unless switched off, 3 L-BFGS-B starts).

    python scripts/bench/fit_episodes.py                      # 500 episodes, qwen-max honest agents
    python scripts/bench/fit_episodes.py --model qwen3-8b --episodes 1000
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import time
from pathlib import Path

from tomacs.sim import fit_episodes as fe

# $TOMACS_DATA (as `make` sets it), else the shared data beside the checkout (scripts/bench/<this file>)
DATA = Path(os.environ.get("TOMACS_DATA") or Path(__file__).resolve().parents[3] / "shared" / "data")
DEFAULT = DATA / "debates" / "mad-follower"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "paths", nargs="*", default=[str(DEFAULT)], help="debate transcripts (default: MAD-Follower)"
    )
    ap.add_argument("--episodes", type=int, default=500)
    ap.add_argument("--model", default="qwen-max", help="honest agents' model ('' = all honest agents)")
    ap.add_argument("--restarts", type=int, default=3)
    ap.add_argument("--no-by-benchmark", action="store_true", help="one accuracy for all benchmarks")
    ap.add_argument("--no-by-sender", action="store_true", help="one persuasion for all adversary models")
    args = ap.parse_args()
    from tomacs.transcripts import load_debates

    model = args.model or None
    base = [d for d in load_debates(args.paths) if model is None or model in fe.debate_models(d)]
    if not base:
        raise SystemExit(f"no debates with honest agents of {model!r} in {args.paths}")
    debates = []
    k = 0
    while len(debates) < args.episodes:
        for d in base:
            if len(debates) >= args.episodes:
                break
            q = f"{d.question or d.id} [copy {k}]"
            debates.append(dataclasses.replace(d, id=f"{d.id}#{k}", question=q))
        k += 1
    cpu0 = time.process_time()
    res = fe.fit(
        debates,
        model=model,
        restarts=args.restarts,
        fit_lure=True,
        by_benchmark=not args.no_by_benchmark,
        by_sender=not args.no_by_sender,
    )
    cpu = time.process_time() - cpu0
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"fit on {len(debates)} episodes ({res.n_answers} honest answers, {res.n_questions} questions, "
        f"{args.restarts} starts, {len(res.accuracy_by_benchmark or {}) or 1} accuracies, "
        f"{len(res.persuasion_by_model or {}) or 1} persuasions): {res.seconds:.1f} s wall, "
        f"{cpu:.1f} s CPU (load average {load:.1f}, "
        f"{os.cpu_count()} cores); converged={res.converged}"
    )


if __name__ == "__main__":
    main()
