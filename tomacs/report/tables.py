"""Paper-shaped tables (rows: methods x {Acc, Token}; columns: benchmark x attack rate) in Markdown
and LaTeX, ours beside the paper's, never blurred: each cell says which number is which."""

from __future__ import annotations

import re
from collections.abc import Sequence

from tomacs.report.collect import STD_NOTE, Cell, CellKey
from tomacs.report.paper import comparable, lookup

ATTACK_ORDER = ["none", "lt50", "eq50", "gt50", "crs3of5"]
ATTACK_TITLE = {"none": "no attack", "lt50": "< 50%", "eq50": "= 50%", "gt50": "> 50%", "crs3of5": "3 of 5"}
BENCH_ORDER = ["mmlu", "arc_c", "gsm8k", "openbookqa", "medqa", "synthetic", "synthetic_numeric"]
BENCH_TITLE = {
    "mmlu": "MMLU",
    "arc_c": "ARC-C",
    "gsm8k": "GSM8K",
    "openbookqa": "OpenBookQA",
    "medqa": "MedQA",
}
MISSING = "—"
Cells = dict[CellKey, Cell]
Row = tuple[str, str]  # (method label, varying settings)


def natural_key(s: str) -> list[int | str]:
    """Sort "agents=10" after "agents=6" and job 10 after job 2."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s)]


def _order(items: Sequence[str], order: Sequence[str]) -> list[str]:
    return sorted(set(items), key=lambda x: (order.index(x) if x in order else len(order), natural_key(x)))


def columns(all_cells: Cells, budget: str) -> list[tuple[str, str]]:
    keys = [k for k in all_cells if k.budget == budget]
    benches = _order([k.benchmark for k in keys], BENCH_ORDER)
    attacks = _order([k.attack for k in keys], ATTACK_ORDER)
    return [(b, a) for b in benches for a in attacks if any(k.benchmark == b and k.attack == a for k in keys)]


def rows(all_cells: Cells, budget: str, paper_rows: Sequence[str] = ()) -> list[Row]:
    """Our (method, setting) rows: methods in the paper's order, settings in natural order."""
    ours = {(k.method, k.setting) for k in all_cells if k.budget == budget}
    methods = _order([m for m, _ in ours], list(paper_rows))
    return [(m, s) for m in methods for s in sorted({s for mm, s in ours if mm == m}, key=natural_key)]


def not_run(all_cells: Cells, paper_rows: Sequence[str]) -> list[str]:
    """The paper's rows (methods) with no job of ours: named in a note instead of rows of "—"."""
    ours = {k.method for k in all_cells}
    return [m for m in paper_rows if m not in ours]


def _ours(cell: Cell | None, metric: str, scale: float, digits: int) -> str:
    ms = cell.mean_std(metric, scale) if cell else None
    if ms is None:
        return MISSING
    mean, std = ms
    n = len(cell.values(metric, scale)) if cell else 0
    return f"{mean:.{digits}f} ± {std:.{digits}f} (n={n})" if n > 1 else f"{mean:.{digits}f} (n=1)"


def _row_settings(all_cells: Cells, row: Row) -> dict[str, object]:
    c = next((c for k, c in all_cells.items() if (k.method, k.setting) == row and c.jobs), None)
    return {k: c.setting(k) for k in ("agents", "rounds")} if c else {}


def _paper(
    method: str, bench: str, attack: str, metric: str, digits: int, settings: dict[str, object]
) -> str:
    rec = lookup(method, bench, attack, metric)  # variants only where the paper has that exact row
    if rec is None or not comparable(rec, settings):
        return MISSING
    std = rec.get("std")
    implied = " (implied)" if rec.get("implied") else ""  # derived from the text, no table prints it
    return f"{rec['value']:.{digits}f}" + (f" ± {std:.{digits}f}" if std is not None else "") + implied


METRICS = [("acc", "Acc %", 100.0, 2), ("token", "Token", 1.0, 0), ("adacc", "ADAcc %", 100.0, 2)]


def _has_setting(all_cells: Cells) -> bool:
    return any(k.setting for k in all_cells)


def table_rows(
    all_cells: Cells, budget: str, paper_rows: Sequence[str]
) -> list[tuple[Row, tuple, list[tuple[str, str]]]]:
    """(row, metric, [(ours, paper) per column]) for every row where ours has at least one number:
    a row that would be all "—" is left out (the caller names the paper rows not run)."""
    cols = columns(all_cells, budget)
    out = []
    for row in rows(all_cells, budget, paper_rows):
        settings = _row_settings(all_cells, row)
        for spec in METRICS:
            metric, _label, scale, digits = spec
            vals = [
                (
                    _ours(all_cells.get(CellKey(row[0], b, a, budget, row[1])), metric, scale, digits),
                    _paper(row[0], b, a, metric, digits, settings),
                )
                for b, a in cols
            ]
            if any(o != MISSING for o, _ in vals):
                out.append((row, spec, vals))
    return out


def markdown(all_cells: Cells, budget: str, paper_rows: Sequence[str], title: str) -> str:
    cols = columns(all_cells, budget)
    if not cols:
        return ""
    setting = _has_setting(all_cells)
    head = (
        "| method | "
        + ("setting | " if setting else "")
        + "metric | "
        + " | ".join(f"{BENCH_TITLE.get(b, b)} {ATTACK_TITLE.get(a, a)}" for b, a in cols)
    )
    lines = [
        f"### {title}",
        "",
        f"Each cell: **ours** ({STD_NOTE}) / *paper*.",
        "",
        head + " |",
        "|---|" + ("---|" if setting else "") + "---|" + "---|" * len(cols),
    ]
    for (m, s), (_metric, label, _scale, _digits), vals in table_rows(all_cells, budget, paper_rows):
        pre = f"| {m} | " + (f"{s or MISSING} | " if setting else "") + f"{label} | "
        lines.append(pre + " | ".join(f"**{o}** / *{p}*" for o, p in vals) + " |")
    return "\n".join(lines) + "\n"


def latex(all_cells: Cells, budget: str, paper_rows: Sequence[str], caption: str) -> str:
    cols = columns(all_cells, budget)
    if not cols:
        return ""
    setting = _has_setting(all_cells)
    spec = ("lll" if setting else "ll") + "c" * len(cols)
    out = [
        "\\begin{table}[t]",
        "\\centering\\small",
        f"\\caption{{{_tex(caption)}. Each cell: ours (mean$\\pm$sample std over seeds) / paper.}}",
        f"\\begin{{tabular}}{{{spec}}}",
        "\\toprule",
        "Method & "
        + ("Setting & " if setting else "")
        + "Metric & "
        + " & ".join(f"{BENCH_TITLE.get(b, b)} {_tex(ATTACK_TITLE.get(a, a))}" for b, a in cols)
        + " \\\\",
        "\\midrule",
    ]
    for (m, s), (_metric, label, _scale, _digits), vals in table_rows(all_cells, budget, paper_rows):
        cells_tex = [f"{_tex(o.split(' (n=')[0])} / {_tex(p)}" for o, p in vals]
        pre = f"{_tex(m)} & " + (f"{_tex(s or MISSING)} & " if setting else "") + f"{_tex(label)} & "
        out.append(pre + " & ".join(cells_tex) + " \\\\")
    out += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    return "\n".join(out) + "\n"


def _tex(s: str) -> str:
    return (
        s.replace("\\", "\\textbackslash{}")
        .replace("%", "\\%")
        .replace("_", "\\_")
        .replace("&", "\\&")
        .replace("±", "$\\pm$")
        .replace("—", "--")
        .replace("<", "$<$")
        .replace(">", "$>$")
        .replace("#", "\\#")
    )


FIVE = ("mmlu", "arc_c", "gsm8k", "openbookqa", "medqa")


def averages_markdown(all_cells: Cells, paper_rows: Sequence[str]) -> str:
    """TodyComm Table 9 shape: per (method, setting) row and attack rate, Acc and Token averaged
    over the benchmarks (each benchmark's mean over seeds first). Says how many of the paper's five
    benchmarks it covers."""
    keys = [
        k
        for k in all_cells
        if k.budget == "none" and k.benchmark in FIVE and k.attack in ("lt50", "eq50", "gt50")
    ]
    if not keys:
        return ""
    attacks = _order([k.attack for k in keys], ATTACK_ORDER)
    setting = _has_setting(all_cells)
    lines = [
        "### Averages over benchmarks (TodyComm Table 9 shape)",
        "",
        "Each cell: **ours** (mean over the benchmarks run, k = how many of the five) / *paper Table 9*.",
        "",
        "| method | "
        + ("setting | " if setting else "")
        + "metric | "
        + " | ".join(ATTACK_TITLE[a] for a in attacks)
        + " |",
        "|---|" + ("---|" if setting else "") + "---|" + "---|" * len(attacks),
    ]
    row_keys = {(k.method, k.setting) for k in keys}
    for row in [r for r in rows(all_cells, "none", paper_rows) if r in row_keys]:
        m, s = row
        settings = _row_settings(all_cells, row)
        for metric, label, scale, digits in METRICS[:2]:
            out = []
            for a in attacks:
                means = [
                    ms[0]
                    for b in FIVE
                    if (c := all_cells.get(CellKey(m, b, a, "none", s))) is not None
                    and (ms := c.mean_std(metric, scale))
                ]
                ours = f"{sum(means) / len(means):.{digits}f} (k={len(means)})" if means else MISSING
                out.append(f"**{ours}** / *{_paper(m, 'avg5', a, metric, digits, settings)}*")
            pre = f"| {m} | " + (f"{s or MISSING} | " if setting else "") + f"{label} | "
            lines.append(pre + " | ".join(out) + " |")
    return "\n".join(lines) + "\n"
