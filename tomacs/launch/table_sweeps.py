"""Paper tables as sweeps (conf/table/*.yaml): list them, expand their jobs, check they compose.

Why expand here and not only in Hydra: a typo in a table (or in the axis a user overrides) must
fail before a sweep of hundreds of jobs starts, in one line, and the number of jobs a table
launches is something a researcher wants to know up front (`tomacs tables`).
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import yaml

from tomacs.config import ConfigError, compose, expand_sweep
from tomacs.paths import conf_dir

__all__ = ["jobs", "sweep_params", "table_names", "validate_table"]


def table_names(root: Path | None = None) -> list[str]:
    """Names in natural order (table2 ... table9, table10), as a reader of the paper expects."""
    d = (root or conf_dir()) / "table"
    return sorted(
        (p.stem for p in d.glob("*.yaml")),
        key=lambda n: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", n)],
    )


def sweep_params(name: str) -> dict[str, str]:
    f = conf_dir() / "table" / f"{name}.yaml"
    if not f.is_file():
        raise ConfigError(f"unknown table '{name}'; valid tables: {', '.join(table_names())}")
    data = yaml.safe_load(f.read_text()) or {}
    params = ((data.get("hydra") or {}).get("sweeper") or {}).get("params") or {}
    return {str(k): str(v) for k, v in params.items()}


def _axes(name: str, overrides: list[str]) -> dict[str, list[str]]:
    axes = {k: v.split(",") for k, v in sweep_params(name).items()}
    for o in overrides:
        if "=" in o and not o.startswith(("+table=", "hydra.", "hydra/")):
            k, v = o.split("=", 1)
            axes[k.lstrip("+")] = v.split(",")
    return axes


def jobs(name: str, overrides: list[str] | None = None) -> list[list[str]]:
    """Every job of the table (the product of its axes; command-line overrides replace an axis)."""
    axes = _axes(name, list(overrides or []))
    keys = list(axes)
    return [
        [f"{k}={v}" for k, v in zip(keys, combo, strict=True)] for combo in itertools.product(*axes.values())
    ]


def validate_table(name: str, overrides: list[str] | None = None) -> int:
    """Compose one job per value of every axis (not the full product); return the job count."""
    axes = _axes(name, list(overrides or []))
    for ovs in expand_sweep([f"{k}={','.join(v)}" for k, v in axes.items()]):
        compose([f"+table={name}", *ovs])
    return len(jobs(name, overrides))
