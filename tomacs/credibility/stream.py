"""Credibility over the query stream of a run: what the stream shows (the warm-up pass that
learns it before the test stream is `tomacs.training.reinforce.warm_up`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["separation_query", "stream_metrics"]


def separation_query(
    trajectory: Sequence[Sequence[float]], adversaries: Sequence[int], strict: bool = True
) -> int | None:
    """Queries needed until adversaries sit below honest agents for good: the smallest q such that
    after every query k >= q (1-based) max(adversary CrS) < min(honest CrS) (strict) or the
    adversaries' mean < the honest mean (strict=False). None if it does not hold at the end."""
    adv = set(int(a) for a in adversaries)
    if not trajectory or not adv:
        return None
    honest = [i for i in range(len(trajectory[0])) if i not in adv]
    if not honest:
        return None

    def separated(s: Sequence[float]) -> bool:
        a = [s[i] for i in adv]
        h = [s[i] for i in honest]
        return max(a) < min(h) if strict else sum(a) / len(a) < sum(h) / len(h)

    q = None
    for k in range(len(trajectory) - 1, -1, -1):
        if not separated(trajectory[k]):
            break
        q = k + 1
    return q


def stream_metrics(records: list[dict[str, Any]], adversaries: Sequence[int] | None) -> dict[str, Any]:
    traj = [r["crs"]["after"] for r in records if "crs" in r]
    out: dict[str, Any] = {"crs_updates": len(traj)}
    if not traj:
        return out
    out["crs_start"] = records[0]["crs"]["before"] if "crs" in records[0] else None
    out["crs_final"] = traj[-1]
    if adversaries:
        adv = set(adversaries)
        honest = [i for i in range(len(traj[-1])) if i not in adv]
        out["crs_final_adversary_mean"] = sum(traj[-1][i] for i in adv) / len(adv)
        out["crs_final_honest_mean"] = sum(traj[-1][i] for i in honest) / len(honest) if honest else None
        out["crs_separation_query"] = separation_query(traj, adversaries, strict=True)
        out["crs_mean_separation_query"] = separation_query(traj, adversaries, strict=False)
    sources: dict[str, int] = {}
    for r in records:
        if "crs" in r:
            sources[r["crs"]["source"]] = sources.get(r["crs"]["source"], 0) + 1
    out["crs_contribution_sources"] = sources
    return out
