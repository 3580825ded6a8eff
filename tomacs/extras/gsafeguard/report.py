"""The G-Safeguard comparison of TodyComm App. E.4 in a report (`SECTION`, which `GSafeguard.report_sections`
names and `tomacs report` adds): its Fig. 4 (the supervised detector's ADAcc per epoch on its training
conversations and on the evaluation questions) and the ADAcc gap TodyComm - G-Safeguard beside the
paper's (§5.1: 7.17 / 19.63 / 3.74 points on MMLU).

Read from train_log.jsonl and results.json only, like every other figure and table of a report.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from pathlib import Path

import matplotlib.pyplot as plt
from matplotlib.lines import Line2D

from tomacs.report.build import Section
from tomacs.report.collect import Cell, CellKey, Job
from tomacs.report.paper import lookup
from tomacs.report.plots import (
    _legend_cols,
    _save,
    _title,
    job_series,
    labels_for,
    log_records,
    provenance,
    set_caption,
)
from tomacs.report.tables import (
    ATTACK_ORDER,
    ATTACK_TITLE,
    BENCH_ORDER,
    BENCH_TITLE,
    MISSING,
    _order,
    natural_key,
)

__all__ = ["CURVES", "SECTION", "curve_series", "detector_curves", "gap_markdown"]

# (log key, legend) of Fig. 4: "Training" is scored on the training data, hence its overfitting
CURVES = (
    ("train_adacc", "training (its training conversations)"),
    ("data_val_adacc", "held-out conversations (picks the checkpoint)"),
    ("val_adacc", "evaluation (validation questions, the run's attack)"),
)
_STYLE = {"train_adacc": "-", "data_val_adacc": ":", "val_adacc": "--"}


def curve_series(jobs: list[Job]) -> dict[tuple[str, str, str, str], dict[int, list[float]]]:
    """(benchmark, attack, series, metric) -> epoch (1-based) -> one value per seed, in %, for the
    jobs whose train_log.jsonl is a supervised detector's (its lines carry `data_val_adacc`)."""
    out: dict[tuple[str, str, str, str], dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for bench, attack, name, rec in log_records(jobs):
        if "data_val_adacc" not in rec or "epoch" not in rec:
            continue
        for metric, _ in CURVES:
            v = rec.get(metric)
            if v is not None and v == v:
                out[(bench, attack, name, metric)][int(rec["epoch"]) + 1].append(100.0 * float(v))
    return out


def detector_curves(jobs: list[Job], out: Path) -> list[Path]:
    """detector_curves_<benchmark>.png (and .pdf, .svg, .caption.txt): TodyComm Fig. 4 per
    benchmark, a column per attack rate."""
    series = curve_series(jobs)
    infos = job_series(jobs)
    prov = provenance(jobs)
    paths = []
    for bench in _order([k[0] for k in series], BENCH_ORDER):
        attacks = _order([k[1] for k in series if k[0] == bench], ATTACK_ORDER)
        names = sorted({k[2] for k in series if k[0] == bench}, key=natural_key)
        colour = {n: f"C{i % 10}" for i, n in enumerate(names)}
        labels = labels_for(infos, names)
        fig, axes = plt.subplots(
            1, len(attacks), figsize=(max(6.0, 4.4 * len(attacks)), 3.6), squeeze=False, layout="constrained"
        )
        for c, a in enumerate(attacks):
            ax = axes[0][c]
            for name in names:
                for metric, _ in CURVES:
                    pts = series.get((bench, a, name, metric))
                    if not pts:
                        continue
                    xs = sorted(pts)
                    ax.plot(
                        xs, [statistics.fmean(pts[x]) for x in xs], _STYLE[metric], color=colour[name], lw=1.3
                    )
                    if any(len(pts[x]) > 1 for x in xs):
                        lo, hi = [min(pts[x]) for x in xs], [max(pts[x]) for x in xs]
                        ax.fill_between(xs, lo, hi, alpha=0.15, color=colour[name], lw=0)
            ax.set_title(ATTACK_TITLE.get(a, a))
            ax.set_xlabel("epoch")
            if c == 0:
                ax.set_ylabel("ADAcc %")
            ax.grid(alpha=0.3)
        handles = [Line2D([], [], color=colour[n], label=labels.get(n, n)) for n in names]
        handles += [Line2D([], [], color="grey", ls=_STYLE[m], label=lab) for m, lab in CURVES]
        fig.legend(handles=handles, loc="outside lower center", ncol=_legend_cols(fig, handles), fontsize=8)
        title = BENCH_TITLE.get(bench, bench)
        _title(fig, f"{title}: supervised detector ADAcc per epoch")
        set_caption(
            fig,
            f"The supervised detector's ADAcc % per epoch on {title} (the shape of TodyComm's Fig. 4), a "
            "column per attack rate: on its training conversations, on held-out conversations (which pick "
            "the checkpoint) and on the run's validation questions; the mean over seeds, band = the "
            "seeds' min–max. " + prov,
        )
        paths.append(_save(fig, out / f"detector_curves_{bench}.png"))
    return paths


def _rank(x: str, order: list[str]) -> int:
    return order.index(x) if x in order else len(order)


def _mean(cell: Cell | None) -> float | None:
    ms = cell.mean_std("adacc", 100.0) if cell else None
    return None if ms is None else ms[0]


def gap_markdown(all_cells: dict[CellKey, Cell]) -> str:
    """Per benchmark and attack rate with both a todycomm and a gsafeguard row: their ADAcc and the
    gap, ours and the paper's (G-Safeguard's paper value is implied by §5.1, see paper_numbers.json)."""
    rows = []
    for key, cell in sorted(all_cells.items()):
        if not key.method.startswith("gsafeguard"):
            continue
        tody = all_cells.get(CellKey("todycomm", key.benchmark, key.attack, key.budget, key.setting))
        g, t = _mean(cell), _mean(tody)
        if g is None or t is None:
            continue
        pg = lookup("gsafeguard", key.benchmark, key.attack, "adacc") if key.method == "gsafeguard" else None
        pt = lookup("todycomm", key.benchmark, key.attack, "adacc")
        paper = (
            f"{pt['value']:.2f} / {pg['value']:.2f} (implied) / {pt['value'] - pg['value']:+.2f}"
            if pg and pt and key.budget == "none"
            else MISSING
        )
        seeds = f"{len(tody.values('adacc')) if tody else 0}/{len(cell.values('adacc'))}"
        row = key.method + (f" [{key.setting}]" if key.setting else "")
        bench, attack = (
            BENCH_TITLE.get(key.benchmark, key.benchmark),
            ATTACK_TITLE.get(key.attack, key.attack),
        )
        line = (
            f"| {bench} | {attack} | {row} | {key.budget} | **{t:.2f} / {g:.2f} / {t - g:+.2f}** ({seeds}) "
        )
        rows.append((key.benchmark, key.attack, line + f"| *{paper}* |"))
    if not rows:
        return ""
    rows.sort(key=lambda r: (_rank(r[0], BENCH_ORDER), r[0], _rank(r[1], ATTACK_ORDER)))
    return "\n".join(
        [
            "### TodyComm vs G-Safeguard: ADAcc (TodyComm App. E.4, §5.1)",
            "",
            "Each cell: TodyComm / G-Safeguard / gap, in %; **ours** (mean over seeds; seeds "
            "TodyComm/G-Safeguard) / *paper* (TodyComm from Table 10; G-Safeguard implied by §5.1's "
            "improvements, no table prints it).",
            "",
            "| benchmark | attack | row | budget | ours | paper |",
            "|---|---|---|---|---|---|",
            *(r[2] for r in rows),
            "",
        ]
    )


# the gap table after the main tables (when both rows were run), Fig. 4 after the training curves
SECTION = Section(markdown=gap_markdown, figures=detector_curves)
