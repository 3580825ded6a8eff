"""`tomacs calibrate --diagnose`: run a composed config's test questions on the recorded `sim` backbone
and take its multi-round debates apart (the statistics and terms are `tomacs.sim.diagnose`'s).

Kept out of `tomacs.sim` because it builds a whole job (components, executor, method): the simulator
package stays below the job machinery that uses it as a backbone.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from tomacs.sim.diagnose import (
    RecordingBackbone,
    ablation_row,
    ablations,
    conformity_by_lure,
    round_stats,
    term_stats,
)
from tomacs.types import Episode, Question

if TYPE_CHECKING:
    from tomacs.runspec.spec import RunSpec


def _run(executor: Any, method: Any, questions: Sequence[Question], batch_size: int) -> list[Episode]:
    from tomacs.analysis.propagation import run_episodes

    return run_episodes(executor, method, questions, batch_size)


def diagnose(spec: RunSpec, ablate: bool = True) -> dict[str, object]:
    """Build the components of a run spec (as `tomacs evaluate` does), run its test
    questions through the executor on the recorded sim backbone, and return the diagnosis."""
    from tomacs.config import ConfigError
    from tomacs.job.components import build, rebuild
    from tomacs.job.files import git_rev
    from tomacs.report.paper import lookup
    from tomacs.sim.backbone import SimBackbone

    if str(spec.backbone.name) != "sim":
        raise ConfigError(f"--diagnose needs backbone=sim (got {spec.backbone.name})")
    t0 = time.perf_counter()
    comps = build(spec, need_train=False)
    inner = comps.backbone
    if not isinstance(inner, SimBackbone):
        raise TypeError("the diagnosis needs the sim backbone (backbone=sim)")
    batch = spec.eval.batch_size
    rec = RecordingBackbone(inner)
    # every pass is the job rebuilt on its own backbone (a fresh method, executor and credibility
    # state over the same questions), so no pass starts from what an earlier one moved
    recorded = rebuild(comps, backbone=rec)
    method = recorded.method
    eps = _run(recorded.executor, method, recorded.test_qs, batch)
    stats = round_stats(eps)
    terms = term_stats(rec.records, eps)
    by_lure = conformity_by_lure(eps, inner)
    abl: list[dict[str, Any]] = []
    if ablate:
        base_final = stats["decision"]["acc"]
        for name, what, changes in ablations(inner.profile):
            changed: dict[str, Any] = dict(changes)  # float fields of the profile
            prof = replace(inner.profile, **changed)
            sim = SimBackbone(inner.profile_name, inner.seed, profiles={inner.profile_name: prof})
            ablated = rebuild(comps, backbone=sim)
            st = round_stats(_run(ablated.executor, ablated.method, ablated.test_qs, batch))
            abl.append(ablation_row(name, what, changes, st, base_final))
        abl.insert(0, ablation_row("fitted", "the stored profile", {}, stats, base_final))
    bench, method_name, attack = comps.bench.name, method.name, str(spec.attack.name)
    paper = lookup(method_name, bench, attack, "acc")
    return {
        "analysis": "sim_diagnose",
        "backbone": "sim",
        "profile": inner.profile_name,
        "profile_params": inner.profile.to_dict(),
        "benchmark": bench,
        "method": method_name,
        "attack": attack,
        "n_adversaries": int(comps.ctx.n_adversaries),
        "n_agents": int(comps.ctx.n_agents),
        "rounds": int(comps.ctx.rounds),
        "seed": spec.seed,
        "n_questions": len(eps),
        "untrained": bool(method.trainable),
        "final_acc": stats["decision"]["acc"],
        "paper_acc": None if paper is None else paper["value"] / 100.0,
        "paper_source": None if paper is None else paper["source"],
        "per_round": stats["rounds"],
        "conformity_by_lure": by_lure,
        "decision": stats["decision"],
        "terms": terms,
        "decomposition_max_error": max((r.error for r in rec.records), default=0.0),
        "n_updates": len(rec.records),
        "ablations": abl,
        "git_rev": git_rev(),
        "wall_s": round(time.perf_counter() - t0, 3),
    }
