"""`tomacs replay --probe`: does a policy leave signal unused that its own inputs carry to real debates?

Per row of the replay's table (credits c^t, t = 2..T, and the decision), a logistic regression is fitted on
the features the policy read in that row of the run's own test debates (RUN/episodes.jsonl: simulated on
`sim`; replayed as recorded), with their labels, and scored on the same row of the replayed debates: the AUC
P(honest > adversary) of its honest-side score, pooled over debates, as the table's AUC. Labels are the
table's: an adversary counts once the row reads one of its adversarial outputs, and a dormant one is left out
of both sides.

Why: a policy's AUC on real debates can be low because its inputs cannot tell the roles apart there, or
because it did not learn what they can tell. The probe is supervised (the simulator's labels) and reads
exactly the policy's inputs, so it answers which (docs/experiments/2026-11-30-first-credit-round-on-real-
debates.md: TodyComm's first credit round, at 0.87 for the probe against 0.68 for the policy on qwen-max).

With `--held-out` a second probe (`with_real_probe`) is fitted the same way on the real debates of the
questions the profile was fitted on, and scored on the held-out ones: what a reader of the same inputs reaches
when it learns from the source's own labels. It bounds what any simulator could teach that reader, so a row
where it stays under a target is a limit of the real replies (and the embedder), not of the simulator or of
the policy (docs/experiments/2026-12-06-replay-real-probe.md).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from tomacs.analysis.credit import auc
from tomacs.analysis.replay import Policy, Probe, ReplayError, RowInputs, _step_rows, replay_inputs

if TYPE_CHECKING:
    from tomacs.job.progress import Progress
    from tomacs.transcripts.schema import Debate
    from tomacs.types import Episode

__all__ = ["PROBE_C", "labelled_rows", "probe_aucs", "probe_run", "with_real_probe"]

PROBE_C = 0.1  # the logistic regression's inverse L2 strength on standardised inputs (hundreds of dims)


def labelled_rows(
    pairs: Sequence[tuple[Debate, Episode]], inputs: Sequence[RowInputs]
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per row: (features (M, F), labels (M,), 1 adversary) over every agent the row labels."""
    xs: dict[str, list[np.ndarray]] = defaultdict(list)
    ys: dict[str, list[int]] = defaultdict(list)
    for (d, ep), read in zip(pairs, inputs, strict=True):
        for row, _, _, _, truth in _step_rows(d, ep):
            for i, y in enumerate(truth):
                if y is not None and row in read:
                    xs[row].append(read[row][i])
                    ys[row].append(int(y))
    return {row: (np.stack(xs[row]), np.asarray(ys[row])) for row in xs}


def probe_aucs(
    fit: dict[str, tuple[np.ndarray, np.ndarray]], score: dict[str, tuple[np.ndarray, np.ndarray]]
) -> dict[str, float | None]:
    """Per row of `score`: the AUC of a probe fitted on `fit`'s same row; None where either side lacks a
    class (or `fit` the row)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    out: dict[str, float | None] = {}
    for row, (x, y) in score.items():
        if row not in fit or len(set(fit[row][1].tolist())) < 2 or len(set(y.tolist())) < 2:
            out[row] = None
            continue
        clf = make_pipeline(StandardScaler(), LogisticRegression(C=PROBE_C, max_iter=3000, random_state=0))
        clf.fit(*fit[row])
        honest_side = -clf.decision_function(x)  # high = honest, as a credit
        out[row] = auc(honest_side[y == 0].tolist(), honest_side[y == 1].tolist())
    return out


def probe_run(
    policy: Policy,
    pairs: Sequence[tuple[Debate, Episode]],
    inputs: Sequence[RowInputs],
    rows: list[dict[str, Any]],
    progress: Progress | None = None,
    real_fit: Sequence[Debate] = (),
) -> dict[str, object]:
    """The probe of the module docstring for a replay's `pairs`; sets each row's `probe_auc` (None for the
    pooled "all" row) and returns what the summary records of the fit. With `real_fit` (the real debates
    of the fitting questions) also each row's `real_probe_auc`, the same probe fitted on those."""
    from tomacs.transcripts import TranscriptError, load_debates

    path = policy.run_dir / "episodes.jsonl"
    if not path.is_file():
        raise ReplayError(
            f"--probe fits on the run's own test episodes, {path}, which is missing: pass a finished "
            "`tomacs train` run"
        )
    try:
        sim = load_debates([path])
    except TranscriptError as exc:
        raise ReplayError(f"--probe: {exc}") from None
    scored = labelled_rows(pairs, inputs)
    fits = {"probe_auc": sim} | ({"real_probe_auc": list(real_fit)} if real_fit else {})
    for key, fit in fits.items():
        fit_pairs, fit_inputs = replay_inputs(policy, fit, progress)
        assert fit_inputs is not None  # asked for
        aucs = probe_aucs(labelled_rows(fit_pairs, fit_inputs), scored)
        for r in rows:
            r[key] = aucs.get(str(r["round"]))
    out: dict[str, object] = {"episodes": str(path), "debates": len(sim), "C": PROBE_C}
    if real_fit:
        out["real"] = {"debates": len(real_fit), "questions": len({d.question_key for d in real_fit})}
    return out


def with_real_probe(real_fit: Sequence[Debate]) -> Probe:
    """`probe_run` with the real probe too (`--probe --held-out`), as `replay_run` calls a probe."""
    if not real_fit:
        raise ReplayError(
            "--probe --held-out: no real debate of the fitting questions to fit the real probe on"
        )
    return partial(probe_run, real_fit=real_fit)
