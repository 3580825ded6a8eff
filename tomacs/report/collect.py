"""Find finished jobs under a sweep directory and group them into table cells (mean ± sample std
over seeds).

Reports read results.json files only (never W&B), so a report can be rebuilt offline from the
output tree alone, and a job that did not finish is simply a missing cell. A cell holds the seeds
of ONE experiment: jobs are grouped by every setting of their resolved config (tomacs.report.settings),
and the settings that vary inside a (method, benchmark, attack, budget) group become a column.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from tomacs.backbones.base import is_simulated_label
from tomacs.paths import conf_dir
from tomacs.report.settings import context_of, load_config, settings_of, split_keys

__all__ = ["Cell", "CellKey", "Job", "cell_warnings", "cells", "find_jobs", "method_label", "setting_keys"]

STD_NOTE = "mean ± sample std over seeds, n−1 denominator; n = seeds"


class CellKey(NamedTuple):
    method: str
    benchmark: str
    attack: str
    budget: str
    setting: str = ""  # the varying settings of this experiment, e.g. "agents=4"; "" when none vary


FIXED_ATTACKS = ("none", "lt50", "eq50", "gt50", "crs3of5")  # attacks whose name says the adversary count


@dataclass(eq=False)
class Job:
    path: Path
    results: dict[str, Any]

    @cached_property
    def config(self) -> dict[str, Any] | None:
        return load_config(self.path, self.results)

    @cached_property
    def settings(self) -> dict[str, str]:
        return settings_of(self.config, self.results)

    @cached_property
    def context(self) -> dict[str, str]:
        return context_of(self.config, self.results)

    def setting_label(self, keys: list[str]) -> str:
        return ", ".join(f"{k}={_show(self.settings.get(k))}{self._profile_label(k)}" for k in keys)

    def _profile_label(self, key: str) -> str:
        """A sim profile setting also shows the backbone it gave: `sim` (a paper profile) or `sim:NAME`
        (a user profile fitted from real episodes), whether it was named or given as a file."""
        label = str(self.results.get("backbone", ""))
        return f" ({label})" if key == "backbone.profile" and is_simulated_label(label) else ""

    @property
    def key(self) -> tuple[str, str, str, str]:
        """(method label, benchmark, attack, budget): the table's row and column, not yet the cell."""
        r = self.results
        attack = str(r["attack"])
        if attack not in FIXED_ATTACKS:  # e.g. the receiver protocol: the count is the column
            attack = f"{attack} k={r.get('n_adversaries')}/{int(r.get('agents', 1)) - 1}"
        return (method_label(r), r["benchmark"], attack, r.get("budget", "none"))


def _show(value: str | None) -> str:
    if value is None:
        return "<unset>"
    v = json.loads(value)
    return "null" if v is None else str(v)


@dataclass
class Cell:
    """One experiment (method, benchmark, attack, budget, varying settings) over seeds."""

    jobs: list[Job] = field(default_factory=list)

    def values(self, metric: str, scale: float = 1.0) -> list[float]:
        out = []
        for j in self.jobs:
            v = j.results["metrics"].get(metric)
            if v is not None and v == v:
                out.append(float(v) * scale)
        return out

    def mean_std(self, metric: str, scale: float = 1.0) -> tuple[float, float] | None:
        vals = self.values(metric, scale)
        if not vals:
            return None
        return statistics.fmean(vals), (statistics.stdev(vals) if len(vals) > 1 else 0.0)

    @property
    def seeds(self) -> list[int]:
        return sorted(int(j.results["seed"]) for j in self.jobs)

    @property
    def backbones(self) -> set[str]:
        return {str(j.results["backbone"]) for j in self.jobs if "backbone" in j.results}

    def setting(self, key: str) -> object:
        """A setting's value (decoded) shared by the cell's jobs; None if unset."""
        v = self.jobs[0].settings.get(key) if self.jobs else None
        return None if v is None else json.loads(v)

    def warnings(self) -> list[str]:
        """Why this cell's mean may not be a mean over independent seeds of one experiment."""
        out = []
        seeds = Counter(int(j.results["seed"]) for j in self.jobs)
        dup = sorted(s for s, n in seeds.items() if n > 1)
        if dup:
            where = ", ".join(str(j.path) for j in self.jobs if int(j.results["seed"]) in dup)
            out.append(
                f"seed {', '.join(map(str, dup))} appears more than once (same experiment run twice; "
                f"n counts it twice): {where}"
            )
        for k in sorted({k for j in self.jobs for k in j.context}):
            vals = Counter(j.context.get(k, "<unset>") for j in self.jobs)
            if len(vals) > 1:
                out.append(
                    f"jobs disagree in {k} (not an experiment setting, but it can change the numbers): "
                    + ", ".join(f"{v} ({n} job{'s' * (n > 1)})" for v, n in sorted(vals.items()))
                )
        unknown = [str(j.path) for j in self.jobs if j.config is None]
        if unknown:
            out.append(
                "no resolved config saved (results.json 'config', config.yaml): grouped by the few settings "
                f"results.json names, so other settings may differ: {', '.join(unknown)}"
            )
        return out


def find_jobs(root: Path) -> list[Job]:
    jobs = []
    for p in sorted(Path(root).rglob("results.json")):
        try:
            res = json.loads(p.read_text())
        except (OSError, json.JSONDecodeError):
            continue  # a job killed while writing: missing, not fatal
        if isinstance(res, dict) and "metrics" in res and "method" in res:
            jobs.append(Job(p.parent, res))
    return jobs


_DEFAULTS: dict[str, dict[str, Any]] = {}


def _method_defaults(name: str) -> dict[str, object]:
    """The shipped settings of a method: its schema's defaults, then what its yaml changes."""
    if name not in _DEFAULTS:
        from tomacs.methods.registry import method_defaults

        f = conf_dir() / "method" / f"{name}.yaml"
        shipped = (yaml.safe_load(f.read_text()) if f.is_file() else None) or {}
        shipped.pop("defaults", None)
        try:
            schema = method_defaults(name) or {}
        except ValueError:  # a method this version no longer has
            schema = {}
        _DEFAULTS[name] = {**schema, **shipped}
    return _DEFAULTS[name]


def method_label(results: dict[str, Any]) -> str:
    """The method name plus any of its parameters that differ from the shipped defaults (ablation
    and feature variants become their own rows), plus a non-default decision; `[untrained]` for a
    learned method evaluated without training (checkpoint=untrained)."""
    from tomacs.methods.base import own_decision
    from tomacs.methods.registry import bookkeeping_keys
    from tomacs.methods.settings import METHOD_KEYS_BEFORE

    name = str(results["method"])
    base = _method_defaults(name)
    recorded = (results.get("config") or {}).get("method") or {}
    # a key a run's file lacks ran as it did before the key existed, not as today's default. Only where the
    # file records the method's settings (tomacs writes every key of the block): a block that names the
    # method alone, or no config at all, says nothing about when it ran
    before = {k: v for k, v in METHOD_KEYS_BEFORE.items() if k in base} if set(recorded) - {"name"} else {}
    cfg = {**before, **recorded}
    skip = ("name", "embedder", *bookkeeping_keys())  # embedder: a key of old configs
    diffs = [f"{k}={cfg[k]}" for k in sorted(cfg) if k not in skip and k in base and cfg[k] != base[k]]
    if results.get("untrained"):  # a learned method scored without training is another row
        diffs.insert(0, "untrained")
    dec = results.get("decision")
    if dec not in (None, "auto", own_decision(name)):
        diffs.append(f"decision={dec}")
    if dec == "crs":
        from dataclasses import asdict

        from tomacs.config import CrsSchema

        crs_cfg = (results.get("config") or {}).get("crs") or {}
        diffs += [
            f"crs.{k}={v}" for k, v in sorted(asdict(CrsSchema()).items()) if k in crs_cfg and crs_cfg[k] != v
        ]
    return f"{name}[{','.join(diffs)}]" if diffs else name


def setting_keys(jobs: list[Job]) -> list[str]:
    """The settings that vary inside some (method, benchmark, attack, budget) group."""
    groups: dict[tuple[str, str, str, str], list[dict[str, str]]] = defaultdict(list)
    for j in jobs:
        groups[j.key].append(j.settings)
    return split_keys(list(groups.values()))


def cells(jobs: list[Job]) -> dict[CellKey, Cell]:
    """Group jobs into cells: same method label, benchmark, attack, budget AND every other setting
    (the varying ones named in CellKey.setting); only the seed (and bookkeeping) may differ."""
    keys = setting_keys(jobs)
    out: dict[CellKey, Cell] = defaultdict(Cell)
    for j in jobs:
        out[CellKey(*j.key, j.setting_label(keys))].jobs.append(j)
    return dict(out)


def cell_warnings(all_cells: dict[CellKey, Cell]) -> list[str]:
    """Every cell's warnings (a seed run twice, jobs that disagree in device or code revision, jobs
    without a saved config), each naming its cell: the report's WARNINGS and `tomacs view` show
    the same lines."""
    return [
        f"{k.method} on {k.benchmark} {k.attack} (budget {k.budget}"
        f"{', ' + k.setting if k.setting else ''}): {w}"
        for k, c in sorted(all_cells.items())
        for w in c.warnings()
    ]
