"""Report figures and tables a researcher can paste into a paper (issue 15 item 12). The checks read
the plotted data (matplotlib artists, the data functions), never pixels."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import matplotlib.pyplot as plt
import pytest
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.container import BarContainer, ErrorbarContainer
from matplotlib.patches import Patch

from tomacs.report import plots, tables
from tomacs.report.build import build_report
from tomacs.report.collect import CellKey, cells, find_jobs
from tomacs.report.paper import paper_methods

# (method, benchmark, attack, seed) -> acc, token, adacc, adacc_baseline
RUNS = {
    ("todycomm", "mmlu", "lt50", 0): (0.80, 400.0, 0.90, 4 / 6),
    ("todycomm", "mmlu", "lt50", 1): (0.70, 420.0, 0.80, 4 / 6),
    ("todycomm", "mmlu", "gt50", 0): (0.60, 380.0, 0.85, 2 / 6),
    ("todycomm", "mmlu", "gt50", 1): (0.64, 390.0, 0.75, 2 / 6),
    ("complete", "mmlu", "lt50", 0): (0.75, 800.0, 4 / 6, 4 / 6),
    ("complete", "mmlu", "gt50", 0): (0.30, 810.0, 2 / 6, 2 / 6),
    ("complete", "gsm8k", "gt50", 0): (0.50, 900.0, 2 / 6, 2 / 6),
}


def make_jobs(root: Path, logs: dict[tuple[str, str, int], list[dict]] | None = None) -> None:
    for (m, b, a, seed), (acc, tok, adacc, base) in RUNS.items():
        d = root / f"{m}_{b}_{a}_{seed}"
        d.mkdir(parents=True)
        cfg = {
            "benchmark": {"name": b},
            "method": {"name": m},
            "attack": {"name": a},
            "budget": {"name": "none"},
            "backbone": {"name": "sim"},
            "agents": 6,
            "rounds": 4,
            "seed": seed,
            "mode": "train",
        }
        res = {
            "backbone": "sim",
            "benchmark": b,
            "method": m,
            "attack": a,
            "budget": "none",
            "seed": seed,
            "agents": 6,
            "metrics": {"acc": acc, "token": tok, "adacc": adacc, "adacc_baseline": base},
            "config": cfg,
        }
        (d / "results.json").write_text(json.dumps(res))
        log = (logs or {}).get((b, a, seed))
        if m == "todycomm" and log:
            (d / "train_log.jsonl").write_text("\n".join(json.dumps(x) for x in log) + "\n")


@pytest.fixture
def all_cells(tmp_path: Path) -> dict:
    make_jobs(tmp_path)
    return cells(find_jobs(tmp_path))


def test_acc_vs_tokens_has_a_panel_per_benchmark_a_marker_per_method_a_colour_per_attack(
    all_cells: dict,
) -> None:
    pts = plots.acc_token_points(all_cells)
    assert sorted(pts) == ["gsm8k", "mmlu"]
    tg = next(p for p in pts["mmlu"] if p.series == "todycomm" and p.attack == "gt50")
    assert tg.acc == pytest.approx(62.0) and tg.acc_std == pytest.approx(statistics.stdev([60.0, 64.0]))
    assert tg.token == pytest.approx(385.0) and tg.n == 2
    fig = plots.acc_vs_tokens_figure(all_cells)
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in panels] == ["MMLU", "GSM8K"]
    mmlu = panels[0]
    bars = [c for c in mmlu.containers if isinstance(c, ErrorbarContainer)]
    assert len(bars) == 4  # 2 methods x 2 attack rates, each with seed error bars
    by = {}
    for c in bars:
        line = c.lines[0]
        by[(line.get_marker(), line.get_color())] = (line.get_xdata()[0], line.get_ydata()[0])
    markers = {m for m, _ in by}
    colours = {c for _, c in by}
    assert len(markers) == 2 and len(colours) == 2  # method -> marker, attack -> colour
    assert (385.0, pytest.approx(62.0)) in [(x, y) for x, y in by.values()]
    plt.close(fig)


def test_adacc_bars_have_seed_error_bars_and_the_all_reliable_line(all_cells: dict) -> None:
    data = plots.adacc_bar_data(all_cells)
    tl = next(b for b in data["mmlu"] if b.series == "todycomm" and b.attack == "lt50")
    assert tl.adacc == pytest.approx(85.0) and tl.std == pytest.approx(statistics.stdev([90.0, 80.0]))
    assert tl.baseline == pytest.approx(100 * 4 / 6)  # = fraction of honest agents
    fig = plots.adacc_bars_figure(all_cells)
    mmlu = next(ax for ax in fig.axes if ax.get_title() == "MMLU")
    heights = sorted(
        round(r.get_height(), 2) for c in mmlu.containers if isinstance(c, BarContainer) for r in c
    )
    assert heights == sorted(round(x, 2) for x in (85.0, 80.0, 100 * 4 / 6, 100 * 2 / 6))
    errs = [c for c in mmlu.containers if isinstance(c, ErrorbarContainer)]
    assert len(errs) == 2  # only the two-seed bars (todycomm) carry a std
    base = [
        seg[0][1]
        for lc in mmlu.collections
        if isinstance(lc, LineCollection) and lc.get_label() == plots.BASELINE
        for seg in lc.get_segments()
    ]
    assert sorted(round(y, 2) for y in base) == sorted(
        round(100 * x, 2) for x in (4 / 6, 4 / 6, 2 / 6, 2 / 6)
    )
    assert fig.get_suptitle() == "Adversary detection accuracy"  # provenance is in the caption
    assert "Ours: backbone=sim" in plots.caption(fig)
    plt.close(fig)


def test_training_curves_rows_acc_adacc_loss_per_attack_with_bands_validation_and_single_points(
    tmp_path: Path,
) -> None:
    def log(seed: int, n_iter: int) -> list[dict]:
        out = [
            {"iteration": k, "loss": 0.1 * k + seed, "train_acc": 0.5 + 0.1 * seed, "train_adacc": 0.6}
            for k in range(n_iter)
        ]
        return [*out, {"epoch": 0, "iteration": n_iter, "val_acc": 0.7 + 0.1 * seed, "val_adacc": 0.8}]

    make_jobs(
        tmp_path,
        {("mmlu", "lt50", 0): log(0, 3), ("mmlu", "lt50", 1): log(1, 3), ("mmlu", "gt50", 0): log(0, 1)},
    )
    figs = plots.training_curve_figures(find_jobs(tmp_path))
    assert list(figs) == ["mmlu"]
    axes = figs["mmlu"].axes
    grid = [ax for ax in axes if ax.get_ylabel() or ax.get_title() or ax.get_xlabel() or ax.lines]
    assert len(grid) == 6  # rows Acc, ADAcc, loss x columns < 50%, > 50%
    assert [ax.get_title() for ax in axes[:2]] == ["< 50%", "> 50%"]
    assert [axes[r * 2].get_ylabel() for r in range(3)] == ["Acc %", "ADAcc %", "loss"]
    acc_lt = axes[0]
    mean_line = acc_lt.lines[0]
    assert list(mean_line.get_ydata()) == pytest.approx([55.0, 55.0, 55.0])  # seeds 50 and 60
    assert any(isinstance(c, PolyCollection) for c in acc_lt.collections)  # the seed band
    val = [c for c in acc_lt.containers if isinstance(c, ErrorbarContainer)]
    assert len(val) == 1 and val[0].lines[0].get_ydata()[0] == pytest.approx(75.0)
    loss_lt = axes[4]  # smoothed (EMA): starts at the first mean, lags behind the rise
    assert list(loss_lt.lines[0].get_ydata()) == pytest.approx(plots.smooth([0.5, 0.6, 0.7]))
    single = axes[1].lines[0]  # > 50%: one iteration, one seed
    assert len(single.get_xdata()) == 1 and single.get_marker() not in (None, "None", "", " ")
    for f in figs.values():
        plt.close(f)


def test_training_curves_accept_seeds_with_equal_validation_scores(tmp_path: Path) -> None:
    # three seeds with the same validation Acc: the float mean of the plotted percentages lies a
    # rounding step above them (a real table2 sweep's report crashed on this)
    v = 33 / 153
    assert statistics.fmean([100.0 * v] * 3) > 100.0 * v
    for seed in range(3):
        d = tmp_path / f"todycomm_{seed}"
        d.mkdir()
        cfg = {"benchmark": {"name": "mmlu"}, "method": {"name": "todycomm"}, "attack": {"name": "gt50"}}
        cfg.update({"budget": {"name": "none"}, "backbone": {"name": "sim"}, "seed": seed, "mode": "train"})
        res = {"backbone": "sim", "benchmark": "mmlu", "method": "todycomm", "attack": "gt50"}
        res.update({"budget": "none", "seed": seed, "agents": 6, "config": cfg})
        res["metrics"] = {"acc": 0.5, "token": 500.0, "adacc": 0.8, "adacc_baseline": 1 / 3}
        (d / "results.json").write_text(json.dumps(res))
        log = [
            {"iteration": 0, "loss": 0.1, "train_acc": 0.5, "train_adacc": 0.6},
            {"epoch": 0, "iteration": 1, "val_acc": v, "val_adacc": 0.8},
        ]
        (d / "train_log.jsonl").write_text("\n".join(json.dumps(x) for x in log) + "\n")
    figs = plots.training_curve_figures(find_jobs(tmp_path))
    val = [c for c in figs["mmlu"].axes[0].containers if isinstance(c, ErrorbarContainer)]
    assert len(val) == 1 and val[0].lines[0].get_ydata()[0] == pytest.approx(100 * v)
    for f in figs.values():
        plt.close(f)


def test_tables_carry_adacc_in_latex_and_drop_rows_of_dashes(tmp_path: Path) -> None:
    make_jobs(tmp_path)
    res = build_report(tmp_path)
    tex = (tmp_path / "report" / "table.tex").read_text()
    assert "ADAcc" in tex and tex.count("ADAcc \\%") == 2  # todycomm and complete
    md = (tmp_path / "report" / "table.md").read_text()
    for m in ("random", "gdesigner", "agentprune"):  # paper rows never run here
        assert f"| {m} |" not in md
    assert res["not_run"] == ["random", "gdesigner", "agentprune"]
    report = (tmp_path / "report" / "report.md").read_text()
    assert "paper rows not run here: random, gdesigner, agentprune" in report
    # todycomm was not run on gsm8k: its rows stay, with "—" only in that column
    row = next(ln for ln in md.splitlines() if ln.startswith("| todycomm | Acc % |"))
    assert row.count("**—**") == 1
    for f in res["figures"]:
        assert f.is_file() and f.stat().st_size > 1000


def test_not_run_lists_paper_rows_in_paper_order() -> None:
    empty: dict = {CellKey("todycomm", "mmlu", "gt50", "none"): None}
    assert tables.not_run(empty, paper_methods("Table 2")) == [
        "random",
        "complete",
        "gdesigner",
        "agentprune",
    ]


# -- issue 27 item 8: figure fixes ----------------------------------------------------------------


def test_validation_points_sit_on_their_epochs_last_training_iteration(tmp_path: Path) -> None:
    """A validation line logs the count of iterations done (one past the epoch's last); plotted
    there, the last validation point lay past the end of the training line."""
    log = []
    for epoch, first in enumerate((0, 3)):  # two epochs of three iterations: 0-2, 3-5
        log += [
            {"iteration": k, "epoch": epoch, "loss": 0.1, "train_acc": 0.5, "train_adacc": 0.6}
            for k in range(first, first + 3)
        ]
        log.append({"epoch": epoch, "iteration": first + 3, "val_acc": 0.7 + 0.1 * epoch, "val_adacc": 0.8})
    make_jobs(tmp_path, {("mmlu", "lt50", 0): log})
    series = plots.curve_series(find_jobs(tmp_path))
    train = series[("mmlu", "lt50", "todycomm", "train_acc")]
    val = series[("mmlu", "lt50", "todycomm", "val_acc")]
    assert sorted(train) == [0, 1, 2, 3, 4, 5]
    assert sorted(val) == [2, 5] and val[5] == [pytest.approx(80.0)]
    figs = plots.training_curve_figures(find_jobs(tmp_path))
    ax = figs["mmlu"].axes[0]
    vx = [c for c in ax.containers if isinstance(c, ErrorbarContainer)][0].lines[0].get_xdata()
    assert max(vx) == max(ax.lines[0].get_xdata()) == 5
    for f in figs.values():
        plt.close(f)


def test_attack_rates_in_the_acc_token_legend_are_not_method_markers(all_cells: dict) -> None:
    fig = plots.acc_vs_tokens_figure(all_cells)
    handles = fig.legends[0].legend_handles
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    methods = {
        h.get_marker() for h, lab in zip(handles, labels, strict=True) if not lab.startswith("attack ")
    }
    attacks = [h for h, lab in zip(handles, labels, strict=True) if lab.startswith("attack ")]
    assert len(attacks) == 2 and len(methods) == 2
    for h in attacks:  # colour patches: no marker shape a method could own
        assert isinstance(h, Patch), h
    plt.close(fig)


def test_titles_promise_seed_error_bars_only_where_there_are_seeds(tmp_path: Path) -> None:
    assert plots.seed_note([1, 1]) == "1 seed per point: no error bars"
    assert plots.seed_note([3, 3]) == "error bars: sample std over 3 seeds"
    assert plots.seed_note([1, 2]) == "error bars: sample std over seeds (n = 1–2; none where n = 1)"
    one = tmp_path / "one"
    log = [{"iteration": 0, "loss": 0.1, "train_acc": 0.5}, {"iteration": 1, "val_acc": 0.6}]
    make_jobs(one, {("mmlu", "lt50", 0): log})
    for d in one.glob("*_1"):  # keep seed 0 only: every point from one seed
        for f in d.iterdir():
            f.unlink()
        d.rmdir()
    c1 = cells(find_jobs(one))
    for fig, per in ((plots.acc_vs_tokens_figure(c1), "point"), (plots.adacc_bars_figure(c1), "bar")):
        title = plots.caption(fig)  # what the error bars are: the caption says it
        assert f"1 seed per {per}: no error bars" in title and "std over seeds" not in title, title
        plt.close(fig)
    figs = plots.training_curve_figures(find_jobs(one))
    labels = [t.get_text() for t in figs["mmlu"].legends[0].get_texts()]
    assert any(lab.startswith("train (1 seed") for lab in labels) and not any("band" in lab for lab in labels)
    plt.close(figs["mmlu"])
    mixed = tmp_path / "mixed"
    make_jobs(mixed)  # todycomm has 2 seeds, complete 1
    fig = plots.acc_vs_tokens_figure(cells(find_jobs(mixed)))
    assert "(n = 1–2; none where n = 1)" in plots.caption(fig)
    plt.close(fig)
