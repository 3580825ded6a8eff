"""Sweep progress: one line per finished job, and a summary table when the multirun ends."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig
from rich.console import Console
from rich.table import Table

console = Console(stderr=True)


def job_line(results: dict[str, Any], name: str, num: int | None) -> str:
    m = results["metrics"]
    acc, adacc = m.get("acc"), m.get("adacc")
    tag = "skipped (finished before)" if results.get("skipped") else f"{results.get('wall_s', 0):.1f} s"
    from tomacs.hydra_app import _pct as pct  # job_line is only called from there

    return (
        f"[job {num if num is not None else '?'}] {name or results['method']} | Acc {pct(acc)} | "
        f"ADAcc {pct(adacc)} | Token {m.get('token', 0):.0f} | {tag}"
    )


def summary(sweep_dir: Path) -> Table:
    from tomacs.report.collect import find_jobs

    jobs = find_jobs(sweep_dir)
    t = Table(title=f"sweep {sweep_dir}: {len(jobs)} finished jobs")
    for col in ("job", "method", "benchmark", "attack", "budget", "seed", "Acc %", "ADAcc %", "Token", "s"):
        t.add_column(col, justify="right" if col in ("Acc %", "ADAcc %", "Token", "s", "seed") else "left")
    for j in sorted(jobs, key=lambda j: str(j.path)):
        r, m = j.results, j.results["metrics"]
        t.add_row(
            j.path.name[:40],
            str(r["method"]),
            str(r["benchmark"]),
            str(r["attack"]),
            str(r.get("budget")),
            str(r["seed"]),
            f"{100 * m['acc']:.2f}",
            f"{100 * m['adacc']:.2f}" if m.get("adacc") == m.get("adacc") else "-",
            f"{m.get('token', 0):.0f}",
            f"{r.get('wall_s', 0):.1f}",
        )
    return t


class SweepSummary(Callback):
    """Registered in conf/config.yaml (hydra.callbacks); prints the table after a multirun."""

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        sweep_dir = Path(str(config.hydra.sweep.dir))
        if sweep_dir.exists():
            console.print(summary(sweep_dir))
            console.print(f"report: tomacs report {sweep_dir}", highlight=False, soft_wrap=True)
