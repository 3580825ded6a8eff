"""What the run page and the sweep table show about a job, read from its run directory.

Why through tomacs.report: a number on the page must be the number `tomacs report` prints. The
job (results.json, its saved config), its method label (ablations are their own rows), the paper's
record for its cell and the sweep's warnings all come from tomacs/report, so the page can never
disagree with the report on which paper number belongs beside ours or on what looks wrong.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

from tomacs.job.files import read_log
from tomacs.report.collect import Job, cell_warnings, cells
from tomacs.report.paper import PAPER_BACKBONE, comparable, lookup
from tomacs.report.settings import ran_on

# (key in results.json metrics, label, scale to the paper's unit, digits); the paper prints %
METRICS: tuple[tuple[str, str, float, int], ...] = (
    ("acc", "Acc %", 100.0, 2),
    ("token", "Token", 1.0, 0),
    ("adacc", "ADAcc %", 100.0, 2),
    ("adacc_balanced", "ADAcc balanced %", 100.0, 2),
    ("adacc_baseline", "ADAcc all-reliable %", 100.0, 2),
    ("token_prompt", "Token prompt", 1.0, 0),
    ("token_completion", "Token completion", 1.0, 0),
    ("unparsed_rate", "unparsed %", 100.0, 2),
    ("participation_rate", "participation %", 100.0, 1),
    ("edges_per_round", "edges per round", 1.0, 2),
)
# the run table of a sweep: the paper's three metrics
TABLE_METRICS = ("acc", "token", "adacc")


def _num(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if f != f else f


def settings(job: Job) -> list[tuple[str, str]]:
    """The job's settings a reader needs to trust a number: what ran (method, benchmark, attack,
    budget, N, T), on what (backbone and its profile, embedder, device), with which seed, from
    which code."""
    r, cfg = job.results, job.config or {}
    bb = r.get("backbone_stats") or {}
    profile = bb.get("profile")
    if profile and bb.get("profile_source"):
        profile = f"{profile} ({bb['profile_source']})"
    model = (cfg.get("backbone") or {}).get("model") if isinstance(cfg.get("backbone"), dict) else None
    method, bench, attack, budget = job.key
    rows = [
        ("method", method),
        ("benchmark", bench),
        ("attack", attack),
        ("budget", budget),
        ("agents N", r.get("agents")),
        ("rounds T", r.get("rounds")),
        ("decision", r.get("decision_mode") or r.get("decision")),
        ("backbone", r.get("backbone")),
        ("model", model),
        ("profile", profile),
        ("embedder", cfg.get("embedder")),
        ("device", ran_on(r) or "none"),
        ("seed", r.get("seed")),
        ("eval seed", r.get("eval_seed")),
        # eval.draws > 1: the metrics pool that many draws of the simulated agents; the view shows the first's
        ("eval draws (pooled)", (r.get("metrics") or {}).get("draws")),
        ("mode", r.get("mode")),
        ("revision", r.get("git_rev")),
        ("run id", r.get("run_id")),
    ]
    return [(k, str(v)) for k, v in rows if v is not None and v != ""]


def paper_number(job: Job, metric: str) -> dict[str, object] | None:
    """The paper's record for this job's cell and metric, where the report would print it: the
    same method label, benchmark and attack, no budget, and the paper's N and T."""
    method, bench, attack, budget = job.key
    if budget != "none":
        return None
    rec = lookup(method, bench, attack, metric)
    wanted = {"agents": job.results.get("agents"), "rounds": job.results.get("rounds")}
    if rec is None or not comparable(rec, wanted):
        return None
    return {"value": rec["value"], "std": rec.get("std"), "source": rec.get("source"), "table": rec["table"]}


def metric_rows(job: Job) -> list[dict[str, object]]:
    """Ours beside the paper's (backbone PAPER_BACKBONE), in the paper's units."""
    m = job.results.get("metrics") or {}
    out: list[dict[str, object]] = []
    for key, label, scale, digits in METRICS:
        ours = _num(m.get(key))
        paper = paper_number(job, key)
        if ours is None and paper is None:
            continue
        out.append(
            {
                "metric": key,
                "label": label,
                "ours": None if ours is None else round(ours * scale, digits),
                "paper": paper,
                "digits": digits,
            }
        )
    return out


def cost_rows(results: dict[str, Any]) -> list[tuple[str, str]]:
    """Calls, tokens, USD and cache hits (what the run paid), and where its time went."""
    m = results.get("metrics") or {}
    bb = results.get("backbone_stats") or {}
    train = results.get("train") or {}
    rows: list[tuple[str, Any]] = [
        ("LLM calls (evaluation)", m.get("llm_calls")),
        ("LLM calls (backbone, all)", bb.get("calls")),
        ("tokens (evaluation)", m.get("tokens_total")),
        ("prompt tokens", m.get("prompt_tokens_total")),
        ("completion tokens", m.get("completion_tokens_total")),
        ("cost USD", bb.get("cost_usd")),
        ("cache hits (evaluation)", m.get("cache_hits")),
        ("cache hits (backbone)", bb.get("cache_hits")),
        ("cache misses (backbone)", bb.get("cache_misses")),
        ("retries", bb.get("retries")),
        ("wall s (job)", results.get("wall_s")),
        ("wall s (training)", train.get("train_wall_s")),
        ("wall s (evaluation)", m.get("eval_wall_s")),
    ]
    out = []
    for k, v in rows:
        f = _num(v)
        if f is None:
            continue
        out.append((k, f"{f:.4f}" if k == "cost USD" else (f"{f:.0f}" if f == int(f) else f"{f:.3f}")))
    return out


def curves(log: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """Per epoch: validation Acc / ADAcc (%) and credit gap, the mean training loss, Acc and credit
    gap over the epoch's iterations. A key with no value in any epoch is left out."""
    train: dict[int, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    val: dict[int, dict[str, float]] = defaultdict(dict)
    for rec in log:
        if "epoch" not in rec:
            continue
        e = int(rec["epoch"])
        if "loss" in rec:
            for k in ("loss", "train_acc", "credit_gap"):
                v = _num(rec.get(k))
                if v is not None:
                    train[e][k].append(v)
        elif any(k.startswith("val_") for k in rec):
            for k in ("val_acc", "val_adacc", "val_credit_gap"):
                v = _num(rec.get(k))
                if v is not None:
                    val[e][k] = v
    epochs = sorted(set(train) | set(val))
    scale = {"val_acc": 100.0, "val_adacc": 100.0, "train_acc": 100.0}
    out: dict[str, list[Any]] = {"epoch": epochs}
    for k in ("val_acc", "val_adacc", "val_credit_gap"):
        out[k] = [None if k not in val[e] else round(val[e][k] * scale.get(k, 1.0), 4) for e in epochs]
    for k in ("loss", "train_acc", "credit_gap"):
        out[k] = [
            round(statistics.fmean(train[e][k]) * scale.get(k, 1.0), 6) if train[e].get(k) else None
            for e in epochs
        ]
    return {k: v for k, v in out.items() if k == "epoch" or any(x is not None for x in v)}


def run_record(job: Job, root: Path) -> dict[str, object]:
    """The run page's data, without its episodes."""
    r = job.results
    log = job.path / "train_log.jsonl"
    rel = job.path.relative_to(root).as_posix() if job.path != root else "."
    return {
        "path": rel,
        "label": job.path.resolve().name if rel == "." else rel,
        "finished": bool(r.get("metrics")),
        "settings": settings(job) if r else [],
        "metrics": metric_rows(job) if r else [],
        "paper_backbone": PAPER_BACKBONE,
        "curves": curves(read_log(log)) if log.is_file() else {},
        "cost": cost_rows(r),
        "train": {k: v for k, v in (r.get("train") or {}).items() if isinstance(v, (int, float, bool))},
        "table": {k: _num((r.get("metrics") or {}).get(k)) for k in TABLE_METRICS},
    }


def missing_seeds(jobs: list[Job]) -> list[str]:
    """Experiments (report cells) that lack a seed some other experiment of the sweep ran: their
    means are over fewer (or other) seeds than their neighbours', so a comparison between rows mixes
    replicate sets. `tomacs report` does not say this; the page does."""
    all_cells = cells(jobs)
    every = sorted({s for c in all_cells.values() for s in c.seeds})
    out = []
    for k, c in sorted(all_cells.items()):
        lack = [s for s in every if s not in c.seeds]
        if lack:
            out.append(
                f"{k.method} on {k.benchmark} {k.attack} (budget {k.budget}"
                f"{', ' + k.setting if k.setting else ''}): missing seed {', '.join(map(str, lack))} "
                f"(the sweep has seeds {', '.join(map(str, every))})"
            )
    return out


def sweep_warnings(jobs: list[Job]) -> list[str]:
    """What `tomacs report` warns about (tomacs.report.collect.cell_warnings), then missing seeds,
    and the devices when the jobs ran on more than one kind."""
    out = cell_warnings(cells(jobs)) if jobs else []
    out += missing_seeds(jobs)
    devices = sorted({ran_on(j.results) or "none" for j in jobs})
    if len([d for d in devices if d != "none"]) > 1:
        out.append(f"the jobs ran on different devices: {', '.join(devices)}")
    return out
