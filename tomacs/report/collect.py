"""Find finished jobs under a sweep directory and group them into table cells (mean +- std over seeds).

Reports read results.json files only (never W&B), so a report can be rebuilt offline from the
output tree alone, and a job that did not finish is simply a missing cell.
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tomacs.paths import conf_dir

__all__ = ["Cell", "Job", "cells", "find_jobs", "method_label"]

FIXED_ATTACKS = ("none", "lt50", "eq50", "gt50", "crs3of5")  # attacks whose name says the adversary count


@dataclass
class Job:
    path: Path
    results: dict[str, Any]

    @property
    def key(self) -> tuple[str, str, str, str]:
        r = self.results
        attack = str(r["attack"])
        if attack not in FIXED_ATTACKS:  # e.g. the receiver protocol: the count is the column
            attack = f"{attack} k={r.get('n_adversaries')}/{int(r.get('agents', 1)) - 1}"
        return (method_label(r), r["benchmark"], attack, r.get("budget", "none"))


@dataclass
class Cell:
    """One (method, benchmark, attack, budget) cell over seeds."""

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
        return statistics.fmean(vals), (statistics.pstdev(vals) if len(vals) > 1 else 0.0)

    @property
    def seeds(self) -> list[int]:
        return sorted(int(j.results["seed"]) for j in self.jobs)

    @property
    def backbones(self) -> set[str]:
        return {str(j.results["backbone"]) for j in self.jobs}


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


def _method_defaults(name: str) -> dict[str, Any]:
    if name not in _DEFAULTS:
        f = conf_dir() / "method" / f"{name}.yaml"
        _DEFAULTS[name] = yaml.safe_load(f.read_text()) if f.is_file() else {}
    return _DEFAULTS[name]


def method_label(results: dict[str, Any]) -> str:
    """The method name plus any of its parameters that differ from the shipped defaults (ablation
    and feature variants become their own rows), plus a non-default decision; `[untrained]` for a
    learned method evaluated without training (checkpoint=untrained)."""
    name = str(results["method"])
    cfg = (results.get("config") or {}).get("method") or {}
    base = _method_defaults(name)
    diffs = [
        f"{k}={cfg[k]}"
        for k in sorted(cfg)
        if k not in ("name", "embedder") and k in base and cfg[k] != base[k]
    ]
    if results.get("untrained"):  # a learned method scored without training is another row
        diffs.insert(0, "untrained")
    dec = results.get("decision")
    if dec not in (None, "auto") and not (name == "crs" and dec == "crs"):
        diffs.append(f"decision={dec}")
    if dec == "crs":
        from dataclasses import asdict

        from tomacs.config import CrsSchema

        crs_cfg = (results.get("config") or {}).get("crs") or {}
        diffs += [
            f"crs.{k}={v}" for k, v in sorted(asdict(CrsSchema()).items()) if k in crs_cfg and crs_cfg[k] != v
        ]
    return f"{name}[{','.join(diffs)}]" if diffs else name


def cells(jobs: list[Job]) -> dict[tuple[str, str, str, str], Cell]:
    out: dict[tuple[str, str, str, str], Cell] = defaultdict(Cell)
    for j in jobs:
        out[j.key].jobs.append(j)
    return dict(out)
