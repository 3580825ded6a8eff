"""Credibility over the query stream of a run: the warm-up pass and what the stream shows."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tomacs.metrics import summarize
from tomacs.progress import Progress

__all__ = ["separation_query", "stream_metrics", "warm_up"]


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


def warm_up(comps: Any, out_dir: Path, progress: Progress | None = None) -> dict[str, Any]:
    """`train` for a method with nothing to learn but decision=crs: stream the training questions
    once so credibility is learned before the test stream (which keeps learning). Deterministic,
    so a rerun repeats it exactly (and makes no new API calls: the response cache has it all)."""
    cfg = comps.cfg
    n, rounds = comps.ctx.n_agents, comps.ctx.rounds
    qs = list(comps.train_qs)
    bs = int(cfg.train.batch_size)
    log_path = out_dir / "train_log.jsonl"
    log_path.unlink(missing_ok=True)
    t0 = time.perf_counter()
    crs = comps.executor.crs
    with (progress or Progress(enabled=False)).task(
        "credibility warm-up", total=len(qs), unit="questions"
    ) as adv:
        for b in range(0, len(qs), bs):
            eps, _ = comps.executor.run_batch(
                qs[b : b + bs], comps.method, train=False, phase="train0", on_call=adv
            )
            m = summarize(eps, n, rounds)
            adv.step(len(eps), acc=m["acc"])
            with log_path.open("a") as f:
                f.write(
                    json.dumps({"warmup_batch": b // bs, "train_acc": m["acc"], "crs": crs.state.to_dict()})
                    + "\n"
                )
    return {
        "epochs": 0,
        "iterations": 0,
        "credibility_warmup_queries": len(qs),
        "credibility_after_warmup": crs.state.to_dict(),
        "train_wall_s": round(time.perf_counter() - t0, 3),
        "resumed_from_epoch": 0,
    }
