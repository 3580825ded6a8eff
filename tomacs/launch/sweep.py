"""Sweep progress: one line per finished job, and a summary table when the multirun ends."""

from __future__ import annotations

import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from hydra.experimental.callback import Callback
from omegaconf import DictConfig
from rich.console import Console
from rich.table import Table

from tomacs.job.progress import pct


def job_line(results: dict[str, Any], name: str, num: int | None) -> str:
    m = results["metrics"]
    acc, adacc = m.get("acc"), m.get("adacc")
    tag = "skipped (finished before)" if results.get("skipped") else f"{results.get('wall_s', 0):.1f} s"
    return (
        f"[job {num if num is not None else '?'}] {name or results['method']} | Acc {pct(acc, 2)} | "
        f"ADAcc {pct(adacc, 2)} | Token {m.get('token', 0):.0f} | {tag}"
    )


SHOWN = ("method", "benchmark", "attack", "budget", "seed", "mode")  # own columns; not repeated


def job_number(job_dir: Path) -> int | None:
    """Hydra's job number, the leading digits of a sweep subdirectory ("12_method=...")."""
    m = re.match(r"(\d+)_", job_dir.name)
    return int(m.group(1)) if m else None


def other_overrides(job_dir: Path) -> list[str]:
    """The job's command-line overrides except those with their own column, from .hydra/overrides.yaml
    (else the directory name), so e.g. agents=4 vs agents=8 is visible in the summary."""
    f = job_dir / ".hydra" / "overrides.yaml"
    items: list[str] = []
    if f.is_file():
        try:
            loaded = yaml.safe_load(f.read_text())
            items = [str(x) for x in loaded] if isinstance(loaded, list) else []
        except yaml.YAMLError:
            items = []
    else:
        items = re.sub(r"^\d+_", "", job_dir.name).split(",")
    return [o for o in items if "=" in o and o.split("=", 1)[0].lstrip("+~") not in SHOWN]


def _natural(s: str) -> list[int | str]:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s)]


@dataclass
class Summary:
    table: Table
    title: str
    common: list[str]  # overrides every job shares (printed once under the table)
    full_width: int  # characters the table needs with no column folded
    folded_width: int  # ... with the overrides column at its minimum


def summary(sweep_dir: Path) -> Summary:
    """One row per finished job in job-number order (0, 1, 2, ..., 10), every column in full: names
    are never cut. Overrides every job shares are printed once; those that differ get a column that
    folds (wraps) when a terminal is narrow."""
    from tomacs.report.collect import find_jobs

    sweep_dir = Path(sweep_dir)
    jobs = sorted(find_jobs(sweep_dir), key=lambda j: _natural(j.path.relative_to(sweep_dir).as_posix()))
    overrides = [other_overrides(j.path) for j in jobs]
    common = [o for o in overrides[0] if all(o in x for x in overrides)] if overrides else []
    t = Table()
    rows = []
    for j, ov in zip(jobs, overrides, strict=True):
        r, m = j.results, j.results["metrics"]
        num = job_number(j.path)
        rows.append(
            [
                str(num) if num is not None else j.path.relative_to(sweep_dir).as_posix(),
                str(r["method"]),
                str(r["benchmark"]),
                str(r["attack"]),
                str(r.get("budget")),
                str(r["seed"]),
                f"{100 * m['acc']:.2f}",
                f"{100 * m['adacc']:.2f}" if m.get("adacc") == m.get("adacc") else "-",
                f"{m.get('token', 0):.0f}",
                f"{r.get('wall_s', 0):.1f}",
                ",".join(o for o in ov if o not in common),
            ]
        )
    heads = ["job", "method", "benchmark", "attack", "budget", "seed", "Acc %", "ADAcc %", "Token", "s"]
    if not any(row[-1] for row in rows):
        rows = [row[:-1] for row in rows]
    widths = [max([len(col)] + [len(row[i]) for row in rows]) for i, col in enumerate(heads)]
    for col, width in zip(heads, widths, strict=True):
        right = col in ("Acc %", "ADAcc %", "Token", "s", "seed")
        t.add_column(col, justify="right" if right else "left", no_wrap=True, min_width=width)
    fixed = sum(w + 3 for w in widths) + 1  # padding 1+1 and one border per column, plus the last
    full = folded = fixed
    if len(heads) < len(rows[0]) if rows else False:
        longest = max(len(row[-1]) for row in rows)
        fold_min = max(len("overrides"), min(24, longest))
        t.add_column("overrides", overflow="fold", min_width=fold_min)
        full, folded = fixed + max(longest, len("overrides")) + 3, fixed + fold_min + 3
    for row in rows:
        t.add_row(*row)
    return Summary(t, f"sweep {sweep_dir}: {len(jobs)} finished jobs", common, full, folded)


def print_summary(console: Console, sweep_dir: Path) -> None:
    """In a log file (not a terminal) nothing limits the width, so each job stays on one line; on a
    terminal only the overrides column folds, and never below its minimum width."""
    s = summary(sweep_dir)
    width = max(console.width, s.folded_width if console.is_terminal else s.full_width)
    # Console.print(width=) cannot exceed the console's own width: print through one that is wide enough
    wide = Console(
        file=console.file,
        width=width,
        force_terminal=console.is_terminal,
        color_system=console.color_system,  # type: ignore[arg-type]
    )
    console.print(s.title, highlight=False, soft_wrap=True)  # a long path is never wrapped mid-word
    wide.print(s.table, crop=False)
    if s.common:
        console.print(f"every job: {','.join(s.common)}", highlight=False, soft_wrap=True)


class SweepSummary(Callback):
    """Registered in conf/config.yaml (hydra.callbacks); prints the table after a multirun."""

    def on_multirun_start(self, config: DictConfig, **kwargs: object) -> None:
        self._started = time.time()

    def on_multirun_end(self, config: DictConfig, **kwargs: object) -> None:
        sweep_dir = Path(str(config.hydra.sweep.dir))
        if sweep_dir.exists():  # the sweep's result: on stdout (its jobs' progress went to stderr)
            out = Console()
            print_summary(out, sweep_dir)
            out.print(f"report: tomacs report {sweep_dir}", highlight=False, soft_wrap=True)
        stop_on_spend_cap(sweep_dir, getattr(self, "_started", 0.0))


def stop_on_spend_cap(sweep_dir: Path, since: float) -> None:
    """Jobs stopped by a spend cap returned normally (so the others could finish or reach it too);
    the sweep ends with one line naming the caps, the command that goes on, and exit code 4."""
    from tomacs.backbones.spend import EXIT_CODE, LEDGER_NAME, SpendLedger

    path = sweep_dir / LEDGER_NAME
    if not path.is_file():
        return
    with SpendLedger(path) as book:
        stops = book.stops_since(since)
        calls, usd = book.paid("sweep")
    if not stops:
        return
    from tomacs.backbones.spend import raised_argv
    from tomacs.job.rundir import command_argv, resume_command

    caps = ", ".join(f"{e.key}={e.limit:g}" for e in stops)
    command = resume_command(sweep_dir.resolve(), True, raised_argv(command_argv(), stops))
    print(
        f"spend cap reached: {caps} (this sweep's jobs have paid ${usd:.4f} for {calls} calls); finished "
        f"work and paid replies are kept; raise it and resume with: {command}",
        file=sys.stderr,
        flush=True,
    )
    raise SystemExit(EXIT_CODE)
