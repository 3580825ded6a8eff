"""Wall-time figures for the README's main commands (the issue's speed goals are measured here).

    python scripts/bench/quickstart.py            # quickstart + a short TodyComm run per embedder
    python scripts/bench/quickstart.py --quick    # quickstart only

Prints one line per measurement. Runs go to a temporary directory; nothing is kept.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run(args: list[str], out: Path) -> tuple[float, dict]:
    t0 = time.perf_counter()
    p = subprocess.run(
        [sys.executable, "-m", "tomacs.cli", *args, f"hydra.run.dir={out}"], capture_output=True, text=True
    )
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise SystemExit(f"failed: tomacs {' '.join(args)}\n{p.stderr[-2000:]}")
    return wall, json.loads((out / "results.json").read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="only the quickstart command")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        wall, res = run(["train", "method=complete", "attack=gt50"], Path(tmp) / "quick")
        m = res["metrics"]
        print(
            f"quickstart `tomacs train method=complete attack=gt50`: {wall:.1f} s wall "
            f"({res['test_questions']} questions, {m['llm_calls']:.0f} simulated calls, "
            f"Acc {100 * m['acc']:.2f} %, backbone={res['backbone']})"
        )
        if a.quick:
            return
        for emb in ("hashing", "minilm"):
            args = [
                "train",
                "method=todycomm",
                f"embedder={emb}",
                "attack=gt50",
                "train.size=64",
                "train.val_size=0",
                "train.epochs=1",
                "eval.size=32",
                "embed.cache=null",  # time the embedding itself, not a warm cache from an earlier run
            ]
            wall, res = run(args, Path(tmp) / emb)
            it = res["train"]["iterations"]
            per_it = res["train"]["train_wall_s"] / max(it, 1)
            print(
                f"todycomm embedder={emb}: {per_it:.1f} s per training iteration (batch 32), "
                f"eval {res['metrics']['eval_wall_s']:.1f} s for 32 questions, {wall:.1f} s wall in all"
            )


if __name__ == "__main__":
    main()
