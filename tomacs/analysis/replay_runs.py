"""`tomacs replay` over several trained runs (a seed sweep): each run replayed as alone, then per row the
mean and range over the runs.

Why: one policy's replay is one draw of its training. On qwen3-8b's held-out real debates three seeds of the
same setting gave the second credit round AUC 0.717 / 0.777 / 0.717 and the decision 0.798 / 0.844 / 0.736
(docs/experiments/2026-11-30-replay-over-seeds-and-two-scale-mechanisms.md), so a claim about real debates
needs the spread, and the command gives it where the runs are."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, cast

import numpy as np

from tomacs.report.tables import natural_key

if TYPE_CHECKING:
    from rich.table import Table

NAME_WIDTH = 40  # a run's name in its line, at most
# the per-row statistics summarised over runs (the counts are the same for every run of the same debates)
OVER_RUNS = ("auc", "auc_in_debate", "adacc", "all_reliable", "probe_auc", "real_probe_auc")


def trained_runs(root: Path) -> list[Path]:
    """`root` itself when it is a run (it has config.yaml); else every finished run below it (config.yaml
    beside results.json), in natural order of their paths; [] when there is none. Links to runs count (a
    sweep assembled by hand), each directory once."""
    root = Path(root)
    if (root / "config.yaml").is_file() or not root.is_dir():
        return [root]
    found, seen = [], set()
    for top, dirs, files in os.walk(root, followlinks=True):
        real = os.path.realpath(top)
        if real in seen:
            dirs.clear()
            continue
        seen.add(real)
        if "config.yaml" in files:
            dirs.clear()  # a run's own subfolders hold no other run
            if "results.json" in files:
                found.append(Path(top))
        dirs.sort(key=natural_key)  # two links to one run: the first in this order counts
    return sorted(found, key=lambda p: natural_key(p.relative_to(root).as_posix()))


def run_seed(run: Path) -> int | None:
    """The seed a run's results.json records (None when it records none)."""
    try:
        seed = json.loads((run / "results.json").read_text()).get("seed")
    except (OSError, ValueError, AttributeError):
        return None
    return int(seed) if isinstance(seed, int) else None


def _label(row: str) -> str:
    return "T+1" if row == "decision" else row


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


class Spread(TypedDict):
    """One statistic over the runs (None where no run had a value)."""

    mean: float | None
    min: float | None
    max: float | None
    runs: int


class OverRow(TypedDict, total=False):
    """One row over the runs: the first run's counts, and a `Spread` per statistic in `OVER_RUNS`."""

    round: str
    debates: int
    honest: int
    adversarial: int
    dormant: int
    auc: Spread
    auc_in_debate: Spread
    adacc: Spread
    all_reliable: Spread
    probe_auc: Spread
    real_probe_auc: Spread


class OverRuns(TypedDict):
    runs: int
    run_dirs: list[str]
    debates: int
    agents: int
    adversaries: int
    rows: list[OverRow]
    adacc: Spread
    adacc_all_reliable: float | None


def _summary(res: Mapping[str, object]) -> Mapping[str, Any]:
    """A replay result's `summary` (`tomacs.analysis.replay.replay_run`)."""
    return cast("Mapping[str, Any]", res["summary"])


def run_line(run: Path, root: Path, res: Mapping[str, object]) -> str:
    """One run of several, in a line: its AUC per row and its paper ADAcc."""
    name = run.relative_to(root).as_posix() if run != root and run.is_relative_to(root) else str(run)
    if len(name) > NAME_WIDTH:  # a Hydra job's folder names every override; its index leads
        name = name[: NAME_WIDTH - 1] + "…"
    seed = run_seed(run)
    s = _summary(res)
    aucs = " · ".join(f"{_label(r['round'])} {_num(r['auc'])}" for r in s["rows"] if r["round"] != "all")
    adacc = s["adacc"]
    return (
        f"{name}{'' if seed is None else f' (seed {seed})'}: AUC by row {aucs}; paper ADAcc "
        f"{'-' if adacc is None else f'{100 * adacc:.1f} %'}"
    )


def _spread(values: Sequence[object]) -> Spread:
    xs = [float(v) for v in values if isinstance(v, int | float)]
    if not xs:
        return {"mean": None, "min": None, "max": None, "runs": 0}
    return {"mean": float(np.mean(xs)), "min": min(xs), "max": max(xs), "runs": len(xs)}


def over_runs(results: Sequence[Mapping[str, object]]) -> OverRuns:
    """Per row (the rows of `tomacs.analysis.replay.round_stats`) the mean, min and max over the runs of
    each statistic in `OVER_RUNS`, and the same for the summary's paper ADAcc. Every run must have
    replayed the same debates (the counts of the first run are kept)."""
    if not results:
        raise ValueError("no runs to summarise")
    methods = sorted({str(res.get("method")) for res in results})
    if len(methods) > 1:
        raise ValueError(
            f"the runs are of different methods ({', '.join(methods)}): replay each method's runs apart"
        )
    first = _summary(results[0])
    counts = ("debates", "agents", "adversaries")
    for res in results[1:]:
        s = _summary(res)
        if [s[k] for k in counts] != [first[k] for k in counts]:
            raise ValueError(
                f"{res['run_dir']} replayed {s['debates']} debates, {results[0]['run_dir']} "
                f"{first['debates']}: the runs of one summary must replay the same debates"
            )
    rows: list[OverRow] = []
    for i, row in enumerate(first["rows"]):
        per = [_summary(res)["rows"][i] for res in results]
        if any(r["round"] != row["round"] for r in per):
            raise ValueError("the runs' rows differ: replay them one by one")
        out: dict[str, object] = {k: row[k] for k in ("round", "debates", "honest", "adversarial", "dormant")}
        for key in OVER_RUNS:
            if any(key in r for r in per):
                out[key] = _spread([r.get(key) for r in per])
        rows.append(cast(OverRow, out))
    return {
        "runs": len(results),
        "run_dirs": [str(res["run_dir"]) for res in results],
        "debates": int(first["debates"]),
        "agents": int(first["agents"]),
        "adversaries": int(first["adversaries"]),
        "rows": rows,
        "adacc": _spread([_summary(res)["adacc"] for res in results]),
        "adacc_all_reliable": first["adacc_all_reliable"],
    }


def over_runs_table(over: OverRuns) -> Table:
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    def cell(s: Spread | None, pct: bool = False) -> str:
        if not s or s["mean"] is None or s["min"] is None or s["max"] is None:
            return "-"
        mean, lo, hi = s["mean"], s["min"], s["max"]
        if pct:
            return f"{100 * mean:.1f} [{100 * lo:.1f}-{100 * hi:.1f}]"
        short = (lambda x: f"{x:.3f}".removeprefix("0")) if hi < 1 else (lambda x: f"{x:.3f}")
        return f"{mean:.3f} [{short(lo)}-{short(hi)}]"

    probe = any("probe_auc" in r for r in over["rows"])
    real = any("real_probe_auc" in r for r in over["rows"])
    t = Table(
        title=escape(f"over {over['runs']} runs: mean [min-max]"),
        box=box.SIMPLE_HEAD,
        caption=(
            "each run replayed on the same debates, as alone; the columns as in the table of one run (its "
            "counts of honest agents and adversaries per row: replay one run, or see --out)"
        ),
        caption_justify="left",
        pad_edge=False,
        collapse_padding=True,
    )
    for col in ("t", "deb", "AUC", "ADAcc", "all-rel"):
        t.add_column(col, justify="right", no_wrap=True)
    if probe:
        t.add_column("probe", justify="right", no_wrap=True)
    if real:
        t.add_column("real", justify="right", no_wrap=True)
    for r in over["rows"]:
        rel = r["all_reliable"]["mean"]
        t.add_row(
            _label(str(r["round"])),
            str(r["debates"]),
            cell(r["auc"]),
            cell(r["adacc"], pct=True),
            "-" if rel is None else f"{100 * rel:.1f}",
            *([cell(r.get("probe_auc"))] if probe else []),
            *([cell(r.get("real_probe_auc"))] if real else []),
            end_section=r["round"] == "decision",
        )
    return t
