"""The weighted plurality every vote in tomacs counts: one tally, so the executor's vote
(tomacs.execution.decision.weighted_vote) and the votes a method recounts while it learns
(TodyComm's counterfactual decision credit) cannot drift apart."""

from __future__ import annotations

from collections.abc import Sequence


def vote_leaders(answers: Sequence[str | None], weights: Sequence[float] | None) -> list[str]:
    """The answers with the largest total weight, sorted (several on a tie, none when nothing parsed);
    unparsed answers do not vote, and weights None counts one vote each."""
    totals: dict[str, float] = {}
    for k, a in enumerate(answers):
        if a is None:
            continue
        w = 1.0 if weights is None else float(weights[k])
        totals[a] = totals.get(a, 0.0) + w
    if not totals:
        return []
    best = max(totals.values())
    return sorted(a for a, w in totals.items() if abs(w - best) <= 1e-12 * max(1.0, abs(best)))
