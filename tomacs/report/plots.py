"""Figures of a report (matplotlib, PNG): training curves as the paper's Fig. 2/3, accuracy vs
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


def _read_log(path: Path) -> list[dict]:
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue  # a torn last line of a killed job
    return out


def curve_series(jobs: list[Job]) -> dict[tuple[str, str, str, str], dict[int, list[float]]]:
    """(benchmark, attack, method, metric) -> iteration -> one value per seed, in %, for metrics
    train_acc / train_adacc (every iteration) and val_acc / val_adacc (after each epoch)."""
    series: dict[tuple[str, str, str, str], dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for j in jobs:
        log = j.path / "train_log.jsonl"
        if not log.is_file():
            continue
        method, bench, attack, _ = j.key
        for rec in _read_log(log):
            if "iteration" not in rec:
                continue
            for metric in ("train_acc", "train_adacc", "val_acc", "val_adacc"):
                v = rec.get(metric)
                if v is not None:
                    series[(bench, attack, method, metric)][int(rec["iteration"])].append(100 * float(v))
    return series


def training_curves(jobs: list[Job], out: Path) -> list[Path]:
    """The paper's Fig. 2 shape, one figure per benchmark: a column per attack rate, Acc (top) and
    ADAcc (bottom) per training iteration; a line per method is the mean over seeds with the
    seeds' min-max as a band; markers are the validation scores after each epoch (with the seeds'
    range). Returns the figures written, training_curves_<benchmark>.png each."""
    series = curve_series(jobs)
    written: list[Path] = []
    for bench in sorted({k[0] for k in series}):
        attacks = _order([k[1] for k in series if k[0] == bench], ATTACK_ORDER)
        fig, axes = plt.subplots(2, len(attacks), figsize=(4 * len(attacks), 6), squeeze=False)
        for c, a in enumerate(attacks):
            for r, kind in enumerate(("acc", "adacc")):
                ax = axes[r][c]
                for _, aa, method, metric in sorted(x for x in series if x[0] == bench):
                    if aa != a or metric != f"train_{kind}":
                        continue
                    pts = series[(bench, aa, method, metric)]
                    xs = sorted(pts)
                    mean = [sum(pts[x]) / len(pts[x]) for x in xs]
                    (line,) = ax.plot(xs, mean, label=f"{method} (train)", lw=1.2)
                    if any(len(pts[x]) > 1 for x in xs):
                        ax.fill_between(
                            xs,
                            [min(pts[x]) for x in xs],
                            [max(pts[x]) for x in xs],
                            alpha=0.2,
                            color=line.get_color(),
                        )
                    val = series.get((bench, aa, method, f"val_{kind}"))
                    if val:
                        vx = sorted(val)
                        ax.errorbar(
                            vx,
                            [sum(val[x]) / len(val[x]) for x in vx],
                            yerr=[
                                [sum(val[x]) / len(val[x]) - min(val[x]) for x in vx],
                                [max(val[x]) - sum(val[x]) / len(val[x]) for x in vx],
                            ],
                            fmt="o",
                            ms=4,
                            color=line.get_color(),
                            label=f"{method} (validation)",
                        )
                ax.set_title(f"{bench} {ATTACK_TITLE.get(a, a)}: {'Acc' if kind == 'acc' else 'ADAcc'}")
                ax.set_xlabel("training iteration")
                ax.set_ylabel("%")
                ax.legend(fontsize=6)
        fig.tight_layout()
        path = out / f"training_curves_{bench}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    return written


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
