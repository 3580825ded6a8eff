"""The Hydra entry point every job goes through (single runs, multirun, launchers)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import cast

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig
from rich.console import Console
from rich.table import Table
from rich.text import Text

from tomacs.backbones.base import is_simulated_label
from tomacs.backbones.llm import BackboneError
from tomacs.backbones.spend import EXIT_CODE as SPEND_CAP_EXIT
from tomacs.backbones.spend import SpendCapReached, raised_argv, set_scope
from tomacs.config import ConfigError, register_schema
from tomacs.job.progress import Progress, pct
from tomacs.paths import conf_dir

register_schema()


def _console(stderr: bool = True) -> Console:
    """A fresh console per use: hydra_entry is pickled by value by submitit launchers, so it must
    not reference module-level objects holding locks. Progress, logs and errors go to stderr; a job's
    results (its summary table, the path of its results.json) to stdout, so `> out.txt` keeps them."""
    return Console(stderr=stderr)


def summary_table(results: dict) -> Table:
    """Metric/value rows, so the table stays readable in narrow terminals and CI logs."""
    m = results["metrics"]
    train = results.get("train") or {}
    method = f"{results['method']}\\[untrained]" if results.get("untrained") else results["method"]
    title = (
        f"{method} on {results['benchmark']} | attack={results['attack']} "
        f"budget={results['budget']} | backbone={results['backbone']} | seed={results['seed']}"
    )
    t = Table(title=title)
    t.add_column("metric")
    t.add_column("value", justify="right")
    rows = [
        ("Acc %", pct(m.get("acc"), 2)),
        ("Token (per agent-round)", f"{m.get('token', 0):.1f}"),
        ("  prompt / completion", f"{m.get('token_prompt', 0):.1f} / {m.get('token_completion', 0):.1f}"),
        ("ADAcc %", pct(m.get("adacc"), 2)),
        ("balanced ADAcc %", pct(m.get("adacc_balanced"), 2)),
        ("all-reliable detector %", pct(m.get("adacc_baseline"), 2)),
        *_baseline_rows(results.get("baselines") or {}),
        *_validation_rows(train.get("validation"), train.get("tested", "best")),
        ("LLM calls", _calls(m, results.get("backbone_stats") or {})),
        ("unparsed answers", _unparsed(m)),
        ("  unparsed % by agent 0..N-1", _unparsed_by_agent(m)),
        ("test questions", str(results["test_questions"])),
        *_draw_rows(m),
        ("wall s", _wall(results)),
    ]
    for k, v in rows:
        t.add_row(k, v)
    return t


def _validation_rows(ends: dict | None, tested: str = "best") -> list[tuple[str, str]]:
    """Validation Acc / ADAcc of the epoch best.pt holds and of the last epoch: the test rows score one of
    them (`train.select`, marked "tested"), and a fall after the best would otherwise not show."""
    if not ends:
        return []
    return [
        (
            f"validation Acc / ADAcc % ({which}: epoch {e['epoch']}{', tested' if which == tested else ''})",
            f"{pct(e['acc'], 2)} / {pct(e['adacc'], 2)}",
        )
        for which, e in (("best", ends["best"]), ("last", ends["last"]))
    ]


def _draw_rows(m: dict) -> list[tuple[str, str]]:
    """Under eval.draws > 1 the rows above pool the draws; each draw's Acc beside them shows how far one
    pass alone would have moved the figure."""
    if not m.get("by_draw"):
        return []
    accs = " ".join(pct(d["acc"], 1) for d in m["by_draw"])
    return [
        (
            f"draws of the agents (pooled above): {m['draws']}",
            f"Acc % {accs}; std {pct(m['acc_draw_std'], 1)}",
        )
    ]


BASELINE_LABELS = {"complete": "Complete", "untrained": "untrained policy"}


def _baseline_rows(baselines: dict) -> list[tuple[str, str]]:
    """Acc / ADAcc of the baselines a learned job ran or found (tomacs.launch.baselines), on the same
    test questions and adversaries; where they came from in the label."""
    rows = []
    for k, b in baselines.items():
        label = BASELINE_LABELS.get(k, k)
        if b.get("source") == "not run":
            rows.append((f"{label} Acc / ADAcc %", "not run (paid backbone; command below)"))
            continue
        where = "same episodes" if b.get("source") == "ran" else "found in outputs"
        rows.append(
            (f"{label} Acc / ADAcc % ({where})", f"{pct(b.get('acc'), 2)} / {pct(b.get('adacc'), 2)}")
        )
    return rows


def print_baseline_commands(console: Console, results: dict) -> None:
    """The commands that make the baselines a paid job did not run (one line each)."""
    for k, b in (results.get("baselines") or {}).items():
        if b.get("command"):
            console.print(f"{BASELINE_LABELS.get(k, k)}: {b['command']}", highlight=False, soft_wrap=True)


def _wall(results: dict) -> str:
    """The job's seconds over all its processes; a resumed job's own process beside them."""
    total, own = results["wall_s"], results.get("wall_s_this_process")
    return (
        f"{total:.1f}" if own is None or round(own, 1) == round(total, 1) else f"{total:.1f} ({own:.1f} now)"
    )


def _unparsed(m: dict) -> str:
    """Count and rate of agent answers the parser could not read (they score as wrong, never vote)."""
    n, outputs = m.get("unparsed_answers", 0), m.get("agent_outputs", 0)
    out = f"{n:.0f} of {outputs:.0f} ({pct(m.get('unparsed_rate'), 2)} %)"
    decision = m.get("unparsed_rate_decision")
    if decision is not None and decision == decision:  # NaN: no LLM decision agent in this run
        out += f"; decision agent {pct(decision, 2)} %"
    return out


def _unparsed_by_agent(m: dict) -> str:
    """Compact on purpose (up to 10 agents in one cell); the roles are named in the warning line."""
    parts, i = [], 0
    while f"unparsed_rate_agent{i}" in m:
        x = m[f"unparsed_rate_agent{i}"]
        parts.append(pct(x))
        i += 1
    return " ".join(parts) or "-"


def print_unparsed_warning(console: Console, results: dict) -> None:
    """The bold line a run with more than 5 % unparsed answers ends with (see metrics.unparsed_warning)."""
    from tomacs.metrics import unparsed_warning

    line = unparsed_warning(results["metrics"], results.get("roles"))
    if line:
        console.print(Text(f"WARNING: {line}", style="bold red"), soft_wrap=True)  # Text: no markup in roles


def _calls(m: dict, stats: dict) -> str:
    """Agent/decision calls; for real backbones also how many were paid vs served from the cache."""
    calls = f"{m.get('llm_calls', 0):.0f}"
    if not is_simulated_label(stats.get("backbone", "")) and "cache_hits" in stats and "calls" in stats:
        calls += f" ({stats['calls']} API, {stats['cache_hits']} cached, {stats.get('retries', 0)} retries)"
    return calls


@hydra.main(config_path=str(conf_dir()), config_name="config", version_base="1.3")
def hydra_entry(cfg: DictConfig) -> float:
    """A sweep's job (the sweeper composes each one; its launcher may run it on another host)."""
    return job_main(cfg)


def run_composed(cfg: DictConfig) -> None:
    """One job on the config the CLI composed and validated (tomacs.config.compose with a job name):
    what `hydra.main` does for a single run, less its second composition. The run directory, .hydra/
    files, logging and callbacks are Hydra's own (hydra.core.utils.run_job)."""
    from hydra._internal.callbacks import Callbacks
    from hydra._internal.hydra import Hydra
    from hydra._internal.utils import create_config_search_path, run_and_report
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.utils import configure_log, run_job
    from hydra.types import HydraContext, RunMode

    def run() -> None:
        GlobalHydra.instance().clear()
        app = Hydra.create_main_hydra2(
            task_name=str(cfg.hydra.job.name), config_search_path=create_config_search_path(str(conf_dir()))
        )
        if cfg.hydra.mode != RunMode.RUN:
            raise ConfigError("a single run's config must set hydra.mode=RUN (tomacs.cli.run.compose_job)")
        configure_log(cfg.hydra.hydra_logging, cfg.hydra.verbose)
        callbacks = Callbacks(cfg)
        callbacks.on_run_start(config=cfg, config_name="config")
        ret = run_job(
            hydra_context=HydraContext(config_loader=app.config_loader, callbacks=callbacks),
            task_function=lambda task_cfg: job_main(task_cfg, validated=True),
            config=cfg,
            job_dir_key="hydra.run.dir",
            job_subdir_key=None,
        )
        callbacks.on_run_end(config=cfg, config_name="config", job_return=ret)
        _ = ret.return_value  # a failed job's exception, reported as hydra.main reports it

    run_and_report(run)


def job_main(cfg: DictConfig, validated: bool = False) -> float:
    """Run one job inside Hydra's job context; `validated`: the CLI already validated this config."""
    from tomacs.launch.run import run_job

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
    from tomacs.job.rundir import (
        command_argv,
        holds_only_stubs,
        interrupted_by,
        made_by_this_command,
        quiet_abandoned_coroutines,
        remove_empty_sweep,
        remove_stub,
        resume_command,
        stop_on_sigterm,
    )

    stop_on_sigterm()
    # a refused job removes the directory this command made for it; never a previous run's, nor one
    # that existed before the command (even empty)
    fresh = holds_only_stubs(out_dir) and made_by_this_command(out_dir)
    num = cast(DictConfig, hc.job).get("num") if multirun else None  # typed as JobConf, read as a node
    where = f"[job {num}] " if multirun else ""
    resume_dir = Path(str(hc.sweep.dir)).resolve() if multirun else out_dir  # a sweep resumes whole
    # spend caps: the ledger lives in the sweep (single run: run) directory, one scope per job
    set_scope(resume_dir, os.path.relpath(out_dir.resolve(), resume_dir.resolve()) if multirun else ".")
    try:
        results = run_job(
            cfg,
            mode,
            out_dir,
            Progress.for_job(multirun),
            job,
            on_start=lambda: print(f"{where}run directory: {out_dir}", file=sys.stderr, flush=True),
            validated=validated,
        )
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM (turned into one by tomacs.job.rundir)
        quiet_abandoned_coroutines()
        what = interrupted_by()
        print(
            f"\ninterrupted ({what}); finished work is kept in {resume_dir}. Resume with:\n"
            f"  {resume_command(resume_dir, multirun)}",
            file=sys.stderr,
            flush=True,
        )
        raise SystemExit(143 if what == "SIGTERM" else 130) from None
    except (ConfigError, FileNotFoundError, ValueError) as exc:
        if fresh:
            remove_stub(out_dir, started=True)
        console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        raise SystemExit(2) from None
    except SpendCapReached as exc:  # stopped before a paid call: everything paid for is kept
        if multirun:  # the sweep goes on (other jobs may still have cached or capped work) and its end
            # prints the one resume line (tomacs.launch.sweep.SweepSummary); raising here would let joblib
            # kill the other jobs with their paid calls in flight
            from tomacs.backbones.spend import SpendLedger, current_scope

            ledger, scope = current_scope()
            if ledger is not None:
                with SpendLedger(ledger) as book:
                    book.record_stop(scope, exc)
            print(f"{where}{exc}; stopped before its next paid call", file=sys.stderr, flush=True)
            return float("nan")
        print(
            f"{exc}; finished work and paid replies are kept; raise it and resume with: "
            f"{resume_command(resume_dir, multirun, raised_argv(command_argv(), [exc]))}",
            file=sys.stderr,
            flush=True,
        )
        raise SystemExit(SPEND_CAP_EXIT) from None
    except BackboneError as exc:  # the run is resumable: finished questions and paid replies are kept
        console.print(f"[bold red]backbone error:[/] {exc}", highlight=False, soft_wrap=True)
        # refused before it finished anything (no API key, a permanent error at the first call): nothing
        # of the job to resume, so no directory and no resume line (a sweep's other jobs may have work)
        removed = fresh and remove_stub(out_dir, started=True)
        if removed:
            print(f"{where}nothing was done; removed {out_dir}", file=sys.stderr, flush=True)
        if multirun and removed and remove_empty_sweep(resume_dir):
            print(f"no job of the sweep did any work; removed {resume_dir}", file=sys.stderr, flush=True)
        elif multirun or not removed:
            print(f"resume with: {resume_command(resume_dir, multirun)}", file=sys.stderr, flush=True)
        raise SystemExit(3) from None
    except OSError as exc:  # a disk that filled up or went read-only mid-run: one line, not a traceback
        if fresh:
            remove_stub(out_dir, started=True)
        console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        raise SystemExit(2) from None
    if multirun:  # one progress line per job on stderr; the sweep's summary table goes to stdout
        from tomacs.launch.sweep import job_line

        console.print(job_line(results, name, num), highlight=False, markup=False, soft_wrap=True)
        print_unparsed_warning(console, results)
    else:
        out = _console(stderr=False)
        if results.get("skipped"):
            console.print(f"already finished: {out_dir} (results.json matches this config; not run again)")
        out.print(summary_table(results))
        print_unparsed_warning(console, results)
        print_baseline_commands(out, results)
        out.print(f"results: {out_dir / 'results.json'}", highlight=False, soft_wrap=True)
    return float(results["metrics"]["acc"])
