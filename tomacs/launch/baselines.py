"""What a learned job's summary prints beside it: Complete and the untrained policy (issue 41, newcomer 9).

Why: a user who has just trained TodyComm cannot tell from its own numbers whether it won. The
all-reliable detector is in every job's metrics; Complete (the densest baseline, the paper's reference
row) and the same method with its initial weights are the two comparisons that say whether training
did anything. They are run when they are cheap: on a simulated backbone, on the job's own test
questions and episode seed (the same adversaries, onsets and targets), in a scratch directory, so no
extra run appears in the outputs tree a report or a view reads. On a paid backbone nothing is run:
a finished run of the same setting found in the outputs tree is shown, else the command that makes one.
"""

from __future__ import annotations

import copy
import json
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from omegaconf import OmegaConf

from tomacs.config import flat
from tomacs.job.checkpoint import UNTRAINED
from tomacs.job.files import _RESUME_FREE, _settled
from tomacs.job.progress import Progress

if TYPE_CHECKING:
    from tomacs.report.collect import Job

BASELINES = ("complete", "untrained")
KEPT = ("acc", "adacc", "adacc_baseline", "token", "llm_calls")
# what two runs may differ in and still be the same comparison: how each was made (what a resume may change,
# but the test questions), the method and its training, and where the texts were embedded
_FREE = (
    "method",
    "train",
    "logger",
    "embedder",
    "embed",
    "device",
    "hydra",
    *(k for k in _RESUME_FREE if k not in ("eval.size", "eval.draws")),
)


def baseline_config(resolved: dict[str, Any], which: str) -> dict[str, object]:
    """The config of baseline `which` for a learned job's settled config: the same benchmark, attack,
    budget, backbone, seeds and test size, evaluated only, with no tracker."""
    from tomacs.methods.registry import method_defaults

    d = copy.deepcopy(resolved)
    d.pop("hydra", None)
    d["mode"] = "evaluate"
    if isinstance(d.get("logger"), dict):
        d["logger"] = {**d["logger"], "name": "none"}
    if which == "complete":
        d["method"] = dict(method_defaults("complete") or {"name": "complete"})
        d["checkpoint"] = None
        d["embedder"] = None  # settled again: Complete embeds nothing unless the decision needs it
    elif which == "untrained":
        d["checkpoint"] = UNTRAINED
    else:
        raise ValueError(f"unknown baseline {which!r}; valid: {', '.join(BASELINES)}")
    return d


def _key(config: dict[str, Any]) -> dict[str, object]:
    return {
        k: v
        for k, v in flat(_settled(config)).items()
        if not any(k == f or k.startswith(f + ".") for f in _FREE)
    }


def _method_keys(config: dict[str, Any]) -> dict[str, object]:
    return {k: v for k, v in flat(_settled(config)).items() if k.startswith("method.")}


def find_baseline(
    jobs: Iterable[Job], resolved: dict[str, Any], which: str, exclude: Path
) -> dict[str, object] | None:
    """A finished run among `jobs` that is baseline `which` of this job: the same setting, and the
    baseline's own method settings (Complete's defaults; the job's method, untrained), or None."""
    want = baseline_config(resolved, which)
    key, method = _key(want), _method_keys(want)
    for job in jobs:
        cfg = job.config
        if cfg is None or job.path.resolve() == exclude.resolve():
            continue
        untrained = cfg.get("checkpoint") == UNTRAINED
        if _method_keys(cfg) != method or untrained != (which == "untrained") or _key(cfg) != key:
            continue
        return {**_kept(job.results["metrics"]), "source": "found", "run_dir": str(job.path)}
    return None


def candidate_jobs(out_dir: Path) -> list[Job]:
    """Where a job looks for its baselines: the outputs tree it lives in (its nearest ancestor named
    `outputs`); elsewhere only its sibling directories, so a run under /tmp never walks all of /tmp."""
    from tomacs.report.collect import Job, find_jobs

    here = out_dir.resolve()
    for p in here.parents:
        if p.name == "outputs":
            return find_jobs(p)
    jobs = []
    for sib in sorted(here.parent.iterdir()) if here.parent.is_dir() else []:
        f = sib / "results.json"
        if sib != here and f.is_file():
            try:
                res = json.loads(f.read_text())
            except (OSError, json.JSONDecodeError):
                continue
            if isinstance(res, dict) and "metrics" in res and "method" in res:
                jobs.append(Job(sib, res))
    return jobs


def _kept(metrics: Mapping[str, object]) -> dict[str, object]:
    return {k: metrics[k] for k in KEPT if k in metrics}


def run_baselines(
    resolved: dict[str, Any],
    out_dir: Path,
    simulated: bool,
    run: Callable[..., dict[str, Any]],
    progress: Progress | None = None,
) -> dict[str, object]:
    """{baseline: metrics + where they come from} for a learned job. `run` is `run_job` (passed in:
    this module sits below the job runner that calls it)."""
    out: dict[str, Any] = {}
    jobs = candidate_jobs(out_dir)
    for which in BASELINES:
        found = find_baseline(jobs, resolved, which, exclude=out_dir)
        if found is not None:
            out[which] = found
            continue
        if not simulated:
            out[which] = {"source": "not run", "command": baseline_command(resolved, which)}
            continue
        cfg = OmegaConf.create(baseline_config(resolved, which))  # run_job settles and freezes it
        before = progress.prefix if progress is not None else ""
        if progress is not None:
            progress.prefix = f"baseline {which}: "  # its lines are not the job's own evaluation
        try:
            with tempfile.TemporaryDirectory(prefix=f"tomacs-{which}-") as tmp:
                res = run(cfg, "evaluate", Path(tmp) / which, progress)
        finally:
            if progress is not None:
                progress.prefix = before
        out[which] = {**_kept(res["metrics"]), "source": "ran"}
    return out


def baseline_command(resolved: dict[str, Any], which: str) -> str:
    """The command that makes baseline `which` of a job on a paid backbone (the summary prints it)."""
    parts = [f"{k}={v}" for k, v in _overrides(resolved).items()]
    if which == "complete":
        return " ".join(["tomacs evaluate method=complete", *parts])
    return " ".join([f"tomacs evaluate method={resolved['method']['name']} checkpoint=untrained", *parts])


def _overrides(resolved: dict[str, Any]) -> dict[str, object]:
    """The group choices and sizes that make the comparison (names as the run recorded them)."""
    names = {g: (resolved.get(g) or {}).get("name") for g in ("benchmark", "attack", "budget", "backbone")}
    out: dict[str, Any] = {g: n for g, n in names.items() if n}
    for k in ("agents", "rounds", "seed"):
        if k in resolved:
            out[k] = resolved[k]
    ev = resolved.get("eval") or {}
    if "size" in ev:
        out["eval.size"] = ev["size"]
    return out
