"""Which keys of a job's resolved config are experiment settings, so a report pools only seeds.

A report cell is the mean over seeds of one experiment. Two jobs belong to the same cell only if
every *setting* is equal; the seed is the replicate index. Some config keys are not settings at
all: where logs, caches and checkpoints go, how many calls run in parallel, which sweep wrote the
job. Those would split every seed into its own cell (a checkpoint path differs per seed), so they
are left out of the comparison. A few keys are not settings but could still move a number (the
code version, the device, where the data file or the server lives): they do not split cells, but a
cell whose jobs disagree in them is reported loudly.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from tomacs.config import flat

__all__ = [
    "BOOKKEEPING",
    "CONTEXT",
    "RUN_KIND",
    "context_of",
    "is_setting",
    "legend_part",
    "load_config",
    "ran_on",
    "settings_of",
    "split_keys",
]

# never compared: the replicate index and where/how a job writes, logs and caches
BOOKKEEPING = (
    "seed",  # the replicate: what a cell averages over
    "hydra",  # Hydra internals (run/sweep dirs, job names): never in config.yaml, dropped if present
    "logger",  # W&B project/tags: where metrics are logged
    "table_name",  # which paper-table sweep wrote the job
    "concurrency",  # calls in flight: speed only
    "backbone.cache",  # response-cache path/switch: a cached reply is the same reply
    "embed.cache",  # embedding-cache path/switch: cached vectors are bit-identical to fresh ones
    "backbone.max_concurrency",
    "backbone.timeout",
    "backbone.max_retries",
    "backbone.backoff_base",
    "backbone.backoff_max",
    "backbone.require_api_base",  # a start-time check that api_base is set
    "backbone.api_key_env",  # the name of an environment variable
)  # and a method's keys declared `bookkeeping` (G-Safeguard's conversation file): `bookkeeping()`
# not settings, but a cell whose jobs differ in one of these gets a warning ("device": where it ran, `ran_on`)
CONTEXT = ("git_rev", "device", "benchmark.path", "backbone.api_base")


# how a job ran rather than what it ran: a figure's legend names these only where two lines differ in
# nothing else (a trained run beside the evaluation of its checkpoint)
RUN_KIND = ("mode", "checkpoint")
# what a figure's legend calls a setting; any other key is shown as itself (dots read as spaces)
LEGEND_NAMES = {
    "agents": "N",
    "rounds": "T",
    "backbone.profile": "sim profile",
    "backbone.model": "model",
    "backbone.name": "backbone",
    "embedder": "embedder",
    "decision": "decision",
    "checkpoint": "checkpoint",
}


def _under(key: str, names: tuple[str, ...]) -> bool:
    return any(key == n or key.startswith(n + ".") for n in names)


@functools.cache
def bookkeeping() -> tuple[str, ...]:
    """BOOKKEEPING and the method keys a method's schema declares bookkeeping (`method.<key>`)."""
    from tomacs.methods.registry import bookkeeping_keys

    return (*BOOKKEEPING, *(f"method.{k}" for k in bookkeeping_keys()))


def is_setting(key: str) -> bool:
    """Whether a dotted config key can be an experiment setting (not bookkeeping, not context)."""
    return not (_under(key, bookkeeping()) or _under(key, CONTEXT))


def legend_part(key: str, value: str | None) -> str | None:
    """One setting as a figure's legend shows it to a reader, e.g. `N=4`, `embedder: hashing`,
    `evaluated from a checkpoint`; None where it says nothing about the experiment: bookkeeping or
    context keys, and values that are unset or null (the method's default). `value` is the
    canonical JSON string of `settings_of` (None: the job has no such key)."""
    if value is None or not is_setting(key):
        return None
    v = json.loads(value)
    if v is None or v == "":
        return None
    if key == "mode":
        return {"train": "trained", "evaluate": "evaluated"}.get(str(v), f"mode: {v}")
    if key == "checkpoint":  # settings_of keeps only these two
        return "untrained" if v == "untrained" else "from a checkpoint"
    if key == "backbone.profile":
        v = Path(str(v)).stem  # a profile file shows as its name
    name = LEGEND_NAMES.get(key, key.replace(".", " "))
    if isinstance(v, bool):
        return name if v else f"no {name}"
    shown = v if isinstance(v, (str, int, float)) else json.dumps(v, separators=(",", ":"))
    return f"{name}={shown}" if len(name) <= 2 else f"{name}: {shown}"


def load_config(job_dir: Path, results: Mapping[str, object]) -> dict[str, object] | None:
    """The job's resolved config: the copy inside results.json (written with those very numbers),
    else the job directory's config.yaml or .hydra/config.yaml; None when none exists."""
    cfg = results.get("config")
    if isinstance(cfg, dict):
        return cfg
    for f in (job_dir / "config.yaml", job_dir / ".hydra" / "config.yaml"):
        if f.is_file():
            try:
                data = yaml.safe_load(f.read_text())
            except yaml.YAMLError:
                continue
            if isinstance(data, dict):
                return data
    return None


# results.json fields that are settings, for jobs whose config was not saved (old output trees)
_RESULT_SETTINGS = (
    "backbone",
    "benchmark",
    "method",
    "attack",
    "budget",
    "agents",
    "rounds",
    "decision",
    "mode",
)


def settings_of(config: Mapping[str, object] | None, results: Mapping[str, object]) -> dict[str, str]:
    """Every experiment setting of a job as dotted key -> canonical string (JSON), seed excluded. A key
    added since a job ran takes the value the job ran with (`with_added_keys`, as a resume fills them), so
    a job from before `eval.draws` or `backbone.draw` is no other setting than today's default."""
    from tomacs.job.files import with_added_keys

    if config is None:
        return {k: json.dumps(results.get(k), sort_keys=True, default=str) for k in _RESULT_SETTINGS}
    out = {}
    mode = config.get("mode", results.get("mode"))
    for k, v in flat(with_added_keys(dict(config))).items():
        if _under(k, bookkeeping()) or _under(k, CONTEXT):
            continue
        if k == "checkpoint":
            # a checkpoint *file* differs per seed; what matters is whether one was loaded at all.
            # In train mode it only resumes the same training, so it is no setting there.
            if v in (None, "") or (mode == "train" and str(v).lower() != "untrained"):
                continue
            v = "untrained" if str(v).lower() == "untrained" else "(a checkpoint file)"
        out[k] = json.dumps(v, sort_keys=True, default=str)
    return out


def ran_on(results: dict[str, Any]) -> str | None:
    """The device a job's numbers were computed on (cpu, cuda), or None where nothing ran on one.

    Not the config's `device`: its default `auto` is the same string on a laptop and on a GPU node.
    results.json names the resolved device since 2026-11-27; older jobs name it only through their
    MiniLM embedders (`embedding[].device`), which ran where the policy did."""
    if results.get("device"):
        return str(results["device"])
    kinds = sorted({str(e.get("device")) for e in results.get("embedding") or [] if isinstance(e, dict)})
    return ",".join(kinds) or None


def context_of(config: dict[str, Any] | None, results: dict[str, Any]) -> dict[str, str]:
    """The non-setting values that could still move a number (see CONTEXT)."""
    f = flat(config or {})
    out = {"git_rev": str(results.get("git_rev"))}
    if (device := ran_on(results)) is not None:
        out["device"] = device
    for k in CONTEXT:
        if k not in out and k != "device" and k in f:
            out[k] = str(f[k])
    return out


def split_keys(groups: list[list[dict[str, str]]]) -> list[str]:
    """Settings that differ between jobs of one group (jobs with the same method label,
    benchmark, attack and budget): each must become a column, or seeds of different experiments
    would be averaged. A key missing from some job counts as a difference."""
    keys: set[str] = set()
    for settings in groups:
        every = set().union(*settings) if settings else set()
        for k in every:
            if len({s.get(k, "<unset>") for s in settings}) > 1:
                keys.add(k)
    return sorted(keys)
