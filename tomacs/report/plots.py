"""Figures of a report (matplotlib, PNG): training curves as the paper's Fig. 2/5, accuracy vs
tokens per method, ADAcc bars. Headless (Agg); figures are built from results/train logs only."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from tomacs.report.collect import Cell, Job  # noqa: E402
from tomacs.report.tables import ATTACK_ORDER, ATTACK_TITLE, _order  # noqa: E402


def training_curves(jobs: list[Job], out: Path) -> Path | None:
    """Per attack rate: train Acc and train ADAcc per iteration, one line per method (mean over
    seeds and benchmarks of the jobs that have a train_log.jsonl)."""
    series: dict[tuple[str, str, str], dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for j in jobs:
        log = j.path / "train_log.jsonl"
        if not log.is_file():
            continue
        for line in log.read_text().splitlines():
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            if "iteration" in rec and "train_acc" in rec:
                for metric in ("train_acc", "train_adacc"):
                    v = rec.get(metric)
                    if v is not None:
                        series[(j.key[2], j.key[0], metric)][int(rec["iteration"])].append(100 * float(v))
    if not series:
        return None
    attacks = _order([k[0] for k in series], ATTACK_ORDER)
    fig, axes = plt.subplots(2, len(attacks), figsize=(4 * len(attacks), 6), squeeze=False)
    for c, a in enumerate(attacks):
        for r, metric in enumerate(("train_acc", "train_adacc")):
            ax = axes[r][c]
            for (aa, method, mm), pts in sorted(series.items()):
                if aa == a and mm == metric:
                    xs = sorted(pts)
                    ax.plot(xs, [sum(pts[x]) / len(pts[x]) for x in xs], label=method)
            ax.set_title(f"{ATTACK_TITLE.get(a, a)}: {'Acc' if metric == 'train_acc' else 'ADAcc'} (train)")
            ax.set_xlabel("iteration")
            ax.set_ylabel("%")
            ax.legend(fontsize=7)
    fig.tight_layout()
    path = out / "training_curves.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def acc_vs_tokens(all_cells: dict[tuple[str, str, str, str], Cell], out: Path) -> Path | None:
    pts: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for (m, _b, _a, _bud), cell in all_cells.items():
        acc, tok = cell.mean_std("acc", 100.0), cell.mean_std("token")
        if acc and tok:
            pts[m].append((tok[0], acc[0]))
    if not pts:
        return None
    fig, ax = plt.subplots(figsize=(6, 4.5))
    for m, xy in sorted(pts.items()):
        ax.scatter([x for x, _ in xy], [y for _, y in xy], label=m, s=25)
    ax.set_xlabel("Token (per agent-round)")
    ax.set_ylabel("Acc %")
    ax.set_title("Accuracy vs tokens (one point per benchmark x attack x budget)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    path = out / "acc_vs_tokens.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def adacc_bars(all_cells: dict[tuple[str, str, str, str], Cell], out: Path) -> Path | None:
    vals: dict[tuple[str, str], list[float]] = defaultdict(list)
    for (m, _b, a, _bud), cell in all_cells.items():
        if a in ("none",):
            continue
        vals[(m, a)].extend(cell.values("adacc", 100.0))
    if not vals:
        return None
    methods = sorted({m for m, _ in vals})
    attacks = _order([a for _, a in vals], ATTACK_ORDER)
    fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(methods) * len(attacks) / 2), 4.5))
    width = 0.8 / max(1, len(attacks))
    for k, a in enumerate(attacks):
        ys = [sum(vals[(m, a)]) / len(vals[(m, a)]) if vals.get((m, a)) else 0.0 for m in methods]
        ax.bar([i + k * width for i in range(len(methods))], ys, width, label=ATTACK_TITLE.get(a, a))
    ax.set_xticks(
        [i + width * (len(attacks) - 1) / 2 for i in range(len(methods))], methods, rotation=30, ha="right"
    )
    ax.set_ylabel("ADAcc %")
    ax.set_title("Adversary detection accuracy (mean over benchmarks and seeds)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    path = out / "adacc_bars.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
