"""Paper-shaped tables (rows: methods x {Acc, Token}; columns: benchmark x attack rate) in Markdown
and LaTeX, ours beside the paper's, never blurred: each cell says which number is which."""

from __future__ import annotations

from collections.abc import Sequence

from tomacs.report.collect import Cell
from tomacs.report.paper import lookup

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


def _order(items: Sequence[str], order: Sequence[str]) -> list[str]:
    return sorted(set(items), key=lambda x: (order.index(x) if x in order else len(order), x))


def columns(all_cells: dict[tuple[str, str, str, str], Cell], budget: str) -> list[tuple[str, str]]:
    keys = [k for k in all_cells if k[3] == budget]
    benches = _order([k[1] for k in keys], BENCH_ORDER)
    attacks = _order([k[2] for k in keys], ATTACK_ORDER)
    return [(b, a) for b in benches for a in attacks if any(k[1] == b and k[2] == a for k in keys)]


def rows(
    all_cells: dict[tuple[str, str, str, str], Cell], budget: str, paper_rows: Sequence[str]
) -> list[str]:
    ours = [k[0] for k in all_cells if k[3] == budget]
    extra = [m for m in paper_rows if m not in ours]  # the paper's rows we have not run: shown as missing
    return _order(ours, list(paper_rows)) + extra


def _ours(cell: Cell | None, metric: str, scale: float, digits: int) -> str:
    ms = cell.mean_std(metric, scale) if cell else None
    if ms is None:
        return MISSING
    mean, std = ms
    n = len(cell.values(metric, scale)) if cell else 0
    return f"{mean:.{digits}f} ± {std:.{digits}f} (n={n})" if n > 1 else f"{mean:.{digits}f} (n=1)"


def _paper(method: str, bench: str, attack: str, metric: str, digits: int) -> str:
    rec = lookup(method, bench, attack, metric)  # variants only where the paper has that exact row
    if rec is None:
        return MISSING
    std = rec.get("std")
    return f"{rec['value']:.{digits}f}" + (f" ± {std:.{digits}f}" if std is not None else "")


METRICS = [("acc", "Acc %", 100.0, 2), ("token", "Token", 1.0, 0), ("adacc", "ADAcc %", 100.0, 2)]


def markdown(
    all_cells: dict[tuple[str, str, str, str], Cell], budget: str, paper_rows: Sequence[str], title: str
) -> str:
    cols = columns(all_cells, budget)
    if not cols:
        return ""
    head = "| method | metric | " + " | ".join(
        f"{BENCH_TITLE.get(b, b)} {ATTACK_TITLE.get(a, a)}" for b, a in cols
    )
    lines = [
        f"### {title}",
        "",
        "Each cell: **ours** (mean ± std over seeds, n = seeds) / *paper*.",
        "",
        head + " |",
    ]
    lines.append("|---|---|" + "---|" * len(cols))
    for m in rows(all_cells, budget, paper_rows):
        for metric, label, scale, digits in METRICS:
            cells_txt = []
            for b, a in cols:
                c = all_cells.get((m, b, a, budget))
                cells_txt.append(
                    f"**{_ours(c, metric, scale, digits)}** / *{_paper(m, b, a, metric, digits)}*"
                )
            lines.append(f"| {m} | {label} | " + " | ".join(cells_txt) + " |")
    return "\n".join(lines) + "\n"


def latex(
    all_cells: dict[tuple[str, str, str, str], Cell], budget: str, paper_rows: Sequence[str], caption: str
) -> str:
    cols = columns(all_cells, budget)
    if not cols:
        return ""
    spec = "ll" + "c" * len(cols)
    out = [
        "\\begin{table}[t]",
        "\\centering\\small",
        f"\\caption{{{_tex(caption)} Each cell: ours (mean$\\pm$std over seeds) / paper.}}",
        f"\\begin{{tabular}}{{{spec}}}",
        "\\toprule",
        "Method & Metric & "
        + " & ".join(f"{BENCH_TITLE.get(b, b)} {_tex(ATTACK_TITLE.get(a, a))}" for b, a in cols)
        + " \\\\",
        "\\midrule",
    ]
    for m in rows(all_cells, budget, paper_rows):
        for metric, label, scale, digits in METRICS[:2]:
            vals = []
            for b, a in cols:
                ours = _ours(all_cells.get((m, b, a, budget)), metric, scale, digits).split(" (n=")[0]
                vals.append(f"{_tex(ours)} / {_tex(_paper(m, b, a, metric, digits))}")
            out.append(f"{_tex(m)} & {_tex(label)} & " + " & ".join(vals) + " \\\\")
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


def averages_markdown(all_cells: dict[tuple[str, str, str, str], Cell], paper_rows: Sequence[str]) -> str:
    """TodyComm Table 9 shape: per method and attack rate, Acc and Token averaged over the benchmarks
    (each benchmark's mean over seeds first). Says how many of the paper's five benchmarks it covers."""
    keys = [k for k in all_cells if k[3] == "none" and k[1] in FIVE and k[2] in ("lt50", "eq50", "gt50")]
    if not keys:
        return ""
    attacks = _order([k[2] for k in keys], ATTACK_ORDER)
    lines = [
        "### Averages over benchmarks (TodyComm Table 9 shape)",
        "",
        "Each cell: **ours** (mean over the benchmarks run, k = how many of the five) / *paper Table 9*.",
        "",
        "| method | metric | " + " | ".join(ATTACK_TITLE[a] for a in attacks) + " |",
        "|---|---|" + "---|" * len(attacks),
    ]
    for m in rows(all_cells, "none", paper_rows):
        for metric, label, scale, digits in METRICS[:2]:
            out = []
            for a in attacks:
                means = [
                    ms[0]
                    for b in FIVE
                    if (c := all_cells.get((m, b, a, "none"))) is not None
                    and (ms := c.mean_std(metric, scale))
                ]
                ours = f"{sum(means) / len(means):.{digits}f} (k={len(means)})" if means else MISSING
                out.append(f"**{ours}** / *{_paper(m, 'avg5', a, metric, digits)}*")
            lines.append(f"| {m} | {label} | " + " | ".join(out) + " |")
    return "\n".join(lines) + "\n"
