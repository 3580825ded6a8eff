"""The Hydra entry point every job goes through (single runs, multirun, launchers)."""

from __future__ import annotations

import sys
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig
from rich.console import Console
from rich.table import Table

from tomacs.config import ConfigError, register_schema
from tomacs.paths import conf_dir

register_schema()
console = Console(stderr=True)


def summary_table(results: dict) -> Table:
    m = results["metrics"]
    title = (
        f"{results['method']} on {results['benchmark']} | attack={results['attack']} "
        f"budget={results['budget']} "
        f"| backbone={results['backbone']} | seed={results['seed']}"
    )
    t = Table(title=title)
    for col in (
        "Acc %",
        "Token",
        "prompt",
        "completion",
        "ADAcc %",
        "bal. ADAcc %",
        "all-reliable %",
        "LLM calls",
        "unparsed",
        "questions",
        "wall s",
    ):
        t.add_column(col, justify="right")
    t.add_row(
        f"{100 * m['acc']:.2f}",
        f"{m['token']:.1f}",
        f"{m.get('token_prompt', 0):.1f}",
        f"{m.get('token_completion', 0):.1f}",
        f"{100 * m['adacc']:.2f}",
        _pct(m.get("adacc_balanced")),
        _pct(m.get("adacc_baseline")),
        f"{m.get('llm_calls', 0):.0f}",
        f"{m.get('unparsed_answers', 0):.0f}",
        str(results["test_questions"]),
        f"{results['wall_s']:.1f}",
    )
    return t


def _pct(x: float | None) -> str:
    return "-" if x is None or x != x else f"{100 * x:.2f}"


@hydra.main(config_path=str(conf_dir()), config_name="config", version_base="1.3")
def hydra_entry(cfg: DictConfig) -> float:
    from tomacs.progress import Progress
    from tomacs.run import run_job

    out_dir = Path(HydraConfig.get().runtime.output_dir)
    mode = cfg.mode.value if hasattr(cfg.mode, "value") else str(cfg.mode)
    try:
        results = run_job(cfg, mode, out_dir, Progress(enabled=sys.stderr.isatty()))
    except (ConfigError, FileNotFoundError, ValueError) as exc:
        console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        raise SystemExit(2) from None
    console.print(summary_table(results))
    console.print(f"results: {out_dir / 'results.json'}", highlight=False, soft_wrap=True)
    return float(results["metrics"]["acc"])
