"""Simulator runs stay byte-identical across speed work (issue 14, item 3).

The sim backbone memoises per-question work and counts tokens once per distinct string; neither may
change a single episode. tests/data/sim_golden.json holds the SHA-256 of episodes.jsonl and the
metrics (wall times removed) of a few small runs, recorded from the code before the speed work.

If a change to the simulator is MEANT to change its texts or draws, re-record the golden and say so
in the commit:  python tests/test_sim_golden.py --record
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest

GOLDEN = Path(__file__).parent / "data" / "sim_golden.json"

# Different question kinds (mc / numeric), attacks, graphs and decision modes (llm decision agent,
# vote), so every tomacs.sim.text path and every token count is covered.
RUNS: dict[str, list[str]] = {
    "complete_gt50_llm": ["benchmark=synthetic", "method=complete", "attack=gt50", "eval.size=24"],
    "chain_lt50_numeric": ["benchmark=synthetic_numeric", "method=chain", "attack=lt50", "eval.size=24"],
    "random_none_vote": [
        "benchmark=synthetic",
        "method=random",
        "attack=none",
        "decision=vote",
        "eval.size=24",
    ],
    "debate_eq50": ["benchmark=synthetic", "method=debate", "attack=eq50", "eval.size=16"],
    "star_gt50_numeric_llm": [
        "benchmark=synthetic_numeric",
        "method=star",
        "attack=gt50",
        "decision=llm",
        "eval.size=16",
    ],
}

_WALL_KEYS = ("eval_wall_s",)


def run_digest(overrides: list[str], out_dir: Path) -> dict[str, Any]:
    """SHA-256 of the run's episodes.jsonl and its metrics without wall-clock entries."""
    from tomacs.config import compose
    from tomacs.launch.run import run_job

    res = run_job(compose([*overrides, "seed=3"]), "evaluate", out_dir)
    data = (out_dir / "episodes.jsonl").read_bytes()
    metrics = {k: v for k, v in res["metrics"].items() if k not in _WALL_KEYS}
    return {
        "episodes_sha256": hashlib.sha256(data).hexdigest(),
        "episodes_bytes": len(data),
        "metrics": metrics,
    }


@pytest.mark.parametrize("name", sorted(RUNS))
def test_sim_run_matches_golden(name: str, tmp_path: Path) -> None:
    golden = json.loads(GOLDEN.read_text())[name]
    got = run_digest(RUNS[name], tmp_path)
    # through JSON so that NaN metrics (e.g. a TPR with no adversary) compare equal to themselves
    # metrics added after the golden was recorded are new keys, not changed numbers: compare the recorded ones
    recorded = {k: got["metrics"].get(k, "missing") for k in golden["metrics"]}
    assert json.dumps(recorded, sort_keys=True) == json.dumps(golden["metrics"], sort_keys=True)
    assert got["episodes_bytes"] == golden["episodes_bytes"]
    assert got["episodes_sha256"] == golden["episodes_sha256"]


if __name__ == "__main__" and "--record" in sys.argv:
    import tempfile

    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, ov in sorted(RUNS.items()):
            out[name] = run_digest(ov, Path(tmp) / name)
            print(name, out[name]["episodes_sha256"][:16], out[name]["episodes_bytes"])
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN}")
