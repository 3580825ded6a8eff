"""The Hydra entry point every job goes through (single runs, multirun, launchers)."""

from __future__ import annotations

import sys
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig
from rich.console import Console
from rich.table import Table

from tomacs.backbones.llm import BackboneError
from tomacs.config import ConfigError, register_schema
from tomacs.paths import conf_dir

register_schema()


def _console() -> Console:
    """A fresh console per use: hydra_entry is pickled by value by submitit launchers, so it must
    not reference module-level objects holding locks."""
    return Console(stderr=True)


def summary_table(results: dict) -> Table:
    """Metric/value rows, so the table stays readable in narrow terminals and CI logs."""
    m = results["metrics"]
    title = (
        f"{results['method']} on {results['benchmark']} | attack={results['attack']} "
        f"budget={results['budget']} | backbone={results['backbone']} | seed={results['seed']}"
    )
    t = Table(title=title)
    t.add_column("metric")
    t.add_column("value", justify="right")
    rows = [
        ("Acc %", _pct(m.get("acc"))),
        ("Token (per agent-round)", f"{m.get('token', 0):.1f}"),
        ("  prompt / completion", f"{m.get('token_prompt', 0):.1f} / {m.get('token_completion', 0):.1f}"),
        ("ADAcc %", _pct(m.get("adacc"))),
        ("balanced ADAcc %", _pct(m.get("adacc_balanced"))),
        ("all-reliable detector %", _pct(m.get("adacc_baseline"))),
        ("LLM calls", _calls(m, results.get("backbone_stats") or {})),
        ("unparsed answers", f"{m.get('unparsed_answers', 0):.0f}"),
        ("test questions", str(results["test_questions"])),
        ("wall s", f"{results['wall_s']:.1f}"),
    ]
    for k, v in rows:
        t.add_row(k, v)
    return t


def _calls(m: dict, stats: dict) -> str:
    """Agent/decision calls; for real backbones also how many were paid vs served from the cache."""
    calls = f"{m.get('llm_calls', 0):.0f}"
    if stats.get("backbone") != "sim" and "cache_hits" in stats and "calls" in stats:
        calls += f" ({stats['calls']} API, {stats['cache_hits']} cached, {stats.get('retries', 0)} retries)"
    return calls


def _pct(x: float | None) -> str:
    return "-" if x is None or x != x else f"{100 * x:.2f}"


@hydra.main(config_path=str(conf_dir()), config_name="config", version_base="1.3")
def hydra_entry(cfg: DictConfig) -> float:
    from tomacs.progress import Progress
    from tomacs.run import run_job

    hc = HydraConfig.get()
    out_dir = Path(hc.runtime.output_dir)
    mode = cfg.mode.value if hasattr(cfg.mode, "value") else str(cfg.mode)
    multirun = str(hc.mode) == "RunMode.MULTIRUN"
    name = hc.job.override_dirname
    job = {
        "group": Path(str(hc.sweep.dir)).as_posix() if multirun else "single",
        "name": name or out_dir.name,
        "overrides": ",".join(hc.overrides.task),
    }
    console = _console()
    try:
        results = run_job(cfg, mode, out_dir, Progress(enabled=sys.stderr.isatty() and not multirun), job)
    except (ConfigError, FileNotFoundError, ValueError) as exc:
        console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        raise SystemExit(2) from None
    except BackboneError as exc:  # the run is resumable: finished questions and paid replies are kept
        console.print(f"[bold red]backbone error:[/] {exc}", highlight=False, soft_wrap=True)
        console.print(f"re-run with hydra.run.dir={out_dir} to resume", highlight=False, soft_wrap=True)
        raise SystemExit(3) from None
    except OSError as exc:  # a disk that filled up or went read-only mid-run: one line, not a traceback
        console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        raise SystemExit(2) from None
    if multirun:
        from tomacs.sweep import job_line

        num = hc.job.get("num")
        console.print(job_line(results, name, num), highlight=False, markup=False, soft_wrap=True)
    else:
        if results.get("skipped"):
            console.print(f"already finished: {out_dir} (results.json matches this config; not run again)")
        console.print(summary_table(results))
        console.print(f"results: {out_dir / 'results.json'}", highlight=False, soft_wrap=True)
    return float(results["metrics"]["acc"])
