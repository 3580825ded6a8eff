"""Issue 38: follow.py again on `replay_inputs`, which steps every debate shape (r1probe.py's batches
dropped the debates of a second shape in a batch, which changed qwen3-8b's figures). The probe on f^2 with
MAD-Follower's followers (onset 2) labelled three ways at round 2, scored on the real held-out debates with
the replay's labels. Usage: follow2.py RUN_DIR TRANSCRIPTS MODEL.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from tomacs.analysis.replay import _step_rows, load_policy, replay_inputs
from tomacs.analysis.replay_probe import probe_aucs
from tomacs.sim.from_episodes import select_debates
from tomacs.transcripts import load_debates


def round2(pairs: list, inputs: list, follower: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Round-2 features and labels; a dormant adversary (a follower) gets `follower`, None leaves it out."""
    x, y = [], []
    for (d, ep), read in zip(pairs, inputs, strict=True):
        for row, _, _, _, truth in _step_rows(d, ep):
            if row != "2":
                continue
            for i, lab in enumerate(truth):
                lab = follower if lab is None else lab
                if lab is not None:
                    x.append(read["2"][i])
                    y.append(lab)
    return np.stack(x), np.asarray(y)


def main() -> None:
    run, src, model = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    policy = load_policy(run)
    sim_pairs, sim_in = replay_inputs(policy, load_debates([run / "episodes.jsonl"]))
    real_pairs, real_in = replay_inputs(policy, select_debates(load_debates([src]), model, True, 0.7, 0))
    score = {"2": round2(real_pairs, real_in, None)}
    for name, follower in (("left out", None), ("as adversaries", 1), ("as honest", 0)):
        got = probe_aucs({"2": round2(sim_pairs, sim_in, follower)}, score)["2"]
        print(f"followers {name}: sim -> real {got:.3f}")


if __name__ == "__main__":
    main()
