"""Assemble a report directory: report.md (links everything), table.md, table.tex, and the figures
(PNG, PDF, SVG, each with its caption file; the training curves' raw data as CSV). A method adds parts
of its own (`Section`s its `report_sections` name, e.g. G-Safeguard's comparison with TodyComm)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tomacs.report import plots, tables
from tomacs.report.collect import STD_NOTE, Cell, CellKey, Job, cell_warnings, cells, find_jobs, setting_keys
from tomacs.report.paper import PAPER_BACKBONE, PAPER_TITLE, paper_methods


@dataclass(frozen=True)
class Section:
    """A part of a report that a method adds (named by its `report_sections`, "module:attr"):
    `markdown(cells)` a block after the tables ("" when it has nothing to show), `figures(jobs, out)`
    the figures it writes into `out`, listed after the training curves."""

    markdown: Callable[[dict[CellKey, Cell]], str]
    figures: Callable[[list[Job], Path], list[Path]]


def sections() -> list[Section]:
    """Every registered method's report sections, in the order of the method names."""
    from tomacs.methods.registry import method_extras

    found = method_extras("report_sections")
    bad = [s for s in found if not isinstance(s, Section)]
    if bad:
        raise TypeError(f"a method's report_sections must name tomacs.report.build.Section objects: {bad}")
    return [s for s in found if isinstance(s, Section)]


def build_report(root: Path, out: Path | None = None) -> dict[str, Any]:
    """Read every results.json under `root`; write the report into `out` (default root/report)."""
    root = Path(root)
    if not root.exists():
        raise FileNotFoundError(f"{root} does not exist; pass a sweep directory (outputs/multirun/...)")
    jobs = find_jobs(root)
    if not jobs:
        raise FileNotFoundError(f"no finished job (results.json) under {root}")
    out = Path(out) if out else root / "report"
    out.mkdir(parents=True, exist_ok=True)
    all_cells = cells(jobs)
    varying = setting_keys(jobs)
    warnings = cell_warnings(all_cells)
    backbones = sorted({str(j.results["backbone"]) for j in jobs})
    ours = ", ".join(f"backbone={b}" for b in backbones)
    # the paper's Table 2 rows are shown (as missing where not run) only for Table-2-like sweeps
    table2_like = any(k.attack in ("lt50", "eq50", "gt50") for k in all_cells)
    paper_rows = paper_methods("Table 2") if table2_like else []
    skipped = tables.not_run(all_cells, paper_rows)
    budgets = sorted({k.budget for k in all_cells}, key=lambda b: (b != "none", b))
    md_parts, tex_parts = [], []
    for budget in budgets:
        title = (
            f"Acc / Token / ADAcc, budget={budget} — ours: {ours}; "
            f"paper (TodyComm Tables 2, 9, 10): {PAPER_BACKBONE}"
        )
        md_parts.append(tables.markdown(all_cells, budget, paper_rows if budget == "none" else [], title))
        tex_parts.append(tables.latex(all_cells, budget, paper_rows if budget == "none" else [], title))
    if table2_like:
        md_parts.append(tables.averages_markdown(all_cells, paper_rows))
    parts = sections()
    md_parts.extend(s.markdown(all_cells) for s in parts)
    (out / "table.md").write_text("\n".join(p for p in md_parts if p))
    (out / "table.tex").write_text("\n".join(p for p in tex_parts if p))
    figs = [
        *plots.training_curves(jobs, out),
        *[f for s in parts for f in s.figures(jobs, out)],
        *[
            f
            for f in (plots.acc_vs_tokens(all_cells, out), plots.adacc_bars(all_cells, out))
            if f is not None
        ],
    ]
    missing = [
        f"{k.method} on {k.benchmark} {k.attack} (budget {k.budget})"
        for k, c in sorted(all_cells.items())
        if not c.values("acc")
    ]
    lines = [
        f"# tomacs report: {root}",
        "",
        *(["## WARNINGS", "", *(f"- **{w}**" for w in warnings), ""] if warnings else []),
        f"- ours: {len(jobs)} finished jobs, {ours} (sim = the calibrated simulator, not an LLM); {STD_NOTE}",
        f"- paper: {PAPER_TITLE}; backbone {PAPER_BACKBONE}; every paper number is "
        "traceable in tomacs/report/paper_numbers.json (table, row, column); the paper does not say "
        "which std it prints",
        "- a cell pools only jobs equal in every setting of their resolved config except the seed; "
        + (
            f"settings that vary here are the `setting` column: {', '.join(varying)}"
            if varying
            else "no setting varies here beyond method, benchmark, attack and budget"
        ),
        "- `—` = no such cell (not run here, or not in the paper, or the paper's N/T differ from ours); "
        "rows with no number of ours are left out",
        f"- paper rows not run here: {', '.join(skipped) if skipped else 'none'}",
        "",
        *(p for p in md_parts if p),
        "## Figures",
        "",
        "Each figure is written as PNG, PDF and SVG; its caption (also in `<name>.caption.txt`) says "
        "whose numbers it shows. Training lines are smoothed; their raw values are in the CSV beside them.",
        "",
        *[line for f in figs for line in _figure_md(f)],
        f"LaTeX: [table.tex](table.tex). Cells with no metric: {', '.join(missing) if missing else 'none'}.",
        "",
    ]
    (out / "report.md").write_text("\n".join(lines))
    return {
        "out": out,
        "jobs": len(jobs),
        "cells": all_cells,
        "figures": figs,
        "backbones": backbones,
        "warnings": warnings,
        "varying": varying,
        "not_run": skipped,
    }


def _figure_md(png: Path) -> list[str]:
    """A figure in report.md: the PNG, its caption, and links to every file written for it."""
    files = plots.figure_files(png)
    cap = files["caption"].read_text().strip() if files["caption"].is_file() else ""
    links = " · ".join(f"[{kind.upper()}]({f.name})" for kind, f in files.items() if kind != "caption")
    return [f"![{png.stem}]({png.name})", "", *([f"*{cap}*", ""] if cap else []), links, ""]
