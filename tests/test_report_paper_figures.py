"""Report figures a researcher pastes into a paper (issue 42): PDF and SVG beside each PNG, provenance
in a caption file and out of the title, legends for people, smoothed training curves with the raw
values kept in a CSV. The checks read the matplotlib figure objects and the files, never pixels."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pytest

from tomacs.extras.gsafeguard import report as detector
from tomacs.report import plots
from tomacs.report.build import build_report
from tomacs.report.collect import cells, find_jobs
from tomacs.report.settings import legend_part


def _job(
    root: Path, name: str, seed: int, cfg: dict[str, Any], metrics: dict[str, float], **res: Any
) -> Path:
    d = root / name
    d.mkdir(parents=True)
    base = {"benchmark": {"name": "mmlu"}, "method": {"name": "todycomm"}, "attack": {"name": "gt50"}}
    base.update({"budget": {"name": "none"}, "backbone": {"name": "sim", "profile": "mmlu_nano"}})
    config = {**base, "agents": 6, "rounds": 4, "seed": seed, "mode": "train", **cfg}
    results = {"backbone": "sim", "benchmark": "mmlu", "method": "todycomm", "attack": "gt50"}
    results.update({"budget": "none", "seed": seed, "agents": config["agents"], "mode": config["mode"]})
    results.update({"git_rev": "abc1234", "metrics": metrics, "config": config, **res})
    (d / "results.json").write_text(json.dumps(results))
    return d


def _log(d: Path, losses: list[float], acc: float = 0.5) -> None:
    recs: list[dict[str, Any]] = [
        {"iteration": k, "loss": v, "train_acc": acc, "train_adacc": 0.6} for k, v in enumerate(losses)
    ]
    recs.append({"epoch": 0, "iteration": len(losses), "val_acc": 0.7, "val_adacc": 0.8})
    (d / "train_log.jsonl").write_text("\n".join(json.dumps(r) for r in recs) + "\n")


M = {"acc": 0.6, "token": 400.0, "adacc": 0.8, "adacc_baseline": 1 / 3}
LOSS = [1.0, 0.2, 0.9, 0.1, 0.8, 0.05]  # a jagged loss: smoothing must show


@pytest.fixture
def sweep(tmp_path: Path) -> Path:
    """todycomm on MMLU > 50% as a trained job (no embedder named: null) at N=6 over two seeds and N=4,
    and an evaluation of a checkpoint with the hashing embedder: the raw series names carry
    `checkpoint=<unset>`, `embedder=null` and `mode=train`."""
    root = tmp_path / "sweep"
    for seed in (0, 1):
        _log(_job(root, f"train6_{seed}", seed, {"embedder": None}, M), [v + seed for v in LOSS])
    _log(_job(root, "train4_0", 0, {"embedder": None, "agents": 4}, {**M, "acc": 0.5}), LOSS)
    _job(
        root,
        "eval6_0",
        0,
        {"embedder": "hashing", "mode": "evaluate", "checkpoint": "/x/best.pt"},
        {**M, "acc": 0.55, "token": 380.0},
    )
    return root


def _legend_texts(fig: plt.Figure) -> list[str]:
    return [t.get_text() for leg in fig.legends for t in leg.get_texts()]


def test_raw_series_names_carry_config_strings_the_legends_do_not(sweep: Path) -> None:
    jobs = find_jobs(sweep)
    raw = set(plots.job_series(jobs))
    assert any("checkpoint=<unset>" in n and "embedder=null" in n and "mode=train" in n for n in raw), raw
    all_cells = cells(jobs)
    figs = [
        *plots.training_curve_figures(jobs).values(),
        plots.acc_vs_tokens_figure(all_cells),
        plots.adacc_bars_figure(all_cells),
    ]
    for fig in figs:
        texts = _legend_texts(fig)
        for bad in ("=<unset>", "embedder=null", "=null", "checkpoint=", "mode=", "agents="):
            assert not any(bad in t for t in texts), (bad, texts)
        plt.close(fig)
    labels = plots.series_labels(plots.cell_series(all_cells))
    assert sorted(labels.values()) == [
        "todycomm (N=4)",
        "todycomm (N=6)",
        "todycomm (N=6, embedder: hashing)",  # how it ran (evaluated, a checkpoint) tells nothing apart
    ]
    # in the training curves only trained lines are drawn: the run kind is equal there, so it is dropped
    train_fig = plots.training_curve_figures(jobs)["mmlu"]
    assert {"todycomm (N=4)", "todycomm (N=6)"} <= set(_legend_texts(train_fig))
    plt.close(train_fig)


def test_legend_parts_drop_bookkeeping_and_unset_values() -> None:
    assert legend_part("agents", "4") == "N=4"
    assert legend_part("embedder", "null") is None and legend_part("embedder", None) is None
    assert legend_part("embedder", '"hashing"') == "embedder: hashing"
    assert legend_part("concurrency", "8") is None  # settings.BOOKKEEPING
    assert legend_part("git_rev", '"abc"') is None  # settings.CONTEXT
    assert legend_part("backbone.profile", '"profiles/sure.yaml"') == "sim profile: sure"
    assert legend_part("method.isolated", "true") == "method isolated"
    # lines that differ only in how they ran are told apart by it, and only then
    info = {
        "a": plots.SeriesInfo("todycomm", "none", (("mode", '"train"'),)),
        "b": plots.SeriesInfo("todycomm", "none", (("mode", '"evaluate"'),)),
    }
    assert plots.series_labels(info) == {"a": "todycomm (trained)", "b": "todycomm (evaluated)"}


def test_every_figure_is_png_pdf_svg_with_provenance_in_its_caption_not_its_title(
    sweep: Path, tmp_path: Path
) -> None:
    res = build_report(sweep, tmp_path / "report")
    out = tmp_path / "report"
    names = sorted(f.name for f in res["figures"])
    assert names == ["acc_vs_tokens.png", "adacc_bars.png", "training_curves_mmlu.png"]
    md = (out / "report.md").read_text()
    for png in res["figures"]:
        for ext in ("png", "pdf", "svg"):
            f = png.with_suffix(f".{ext}")
            assert f.is_file() and f.stat().st_size > 1000, f
            assert f"]({f.name})" in md  # report.md links every format
        assert png.with_suffix(".pdf").read_bytes().startswith(b"%PDF")
        assert b"<svg" in png.with_suffix(".svg").read_bytes()
        cap = png.with_suffix(".caption.txt").read_text()
        assert "backbone=sim" in cap and "sim profile mmlu_nano" in cap and "code revision abc1234" in cap
        assert "finished 20" in cap and "jobs" in cap
        assert cap.strip() in md  # shown under the figure
        assert f"![{png.stem}]({png.name})" in md
    assert (out / "training_curves_mmlu.csv").is_file() and "](training_curves_mmlu.csv)" in md
    # titles stay short: no backbone, seed note or revision in any title of the figure objects
    all_cells = cells(find_jobs(sweep))
    figs = [
        *plots.training_curve_figures(find_jobs(sweep)).values(),
        plots.acc_vs_tokens_figure(all_cells),
        plots.adacc_bars_figure(all_cells),
    ]
    for fig in figs:
        titles = [fig.get_suptitle(), *(ax.get_title() for ax in fig.axes)]
        for t in titles:
            assert "backbone" not in t and "ours" not in t and "seed" not in t and "abc1234" not in t, t
            assert "\n" not in t  # never wraps
        assert "backbone=sim" in plots.caption(fig)
        plt.close(fig)


def test_loss_is_smoothed_and_the_csv_keeps_the_raw_values(sweep: Path, tmp_path: Path) -> None:
    jobs = find_jobs(sweep)
    fig = plots.training_curve_figures(jobs)["mmlu"]
    loss_ax = fig.axes[2]  # rows Acc, ADAcc, loss; one column
    assert loss_ax.get_ylabel() == "loss"
    labels = plots.series_labels(plots.job_series(jobs))
    n6 = next(i for i, line in enumerate(loss_ax.lines) if "N=6" in _legend_texts(fig)[i])
    drawn = list(loss_ax.lines[n6].get_ydata())
    raw_mean = [v + 0.5 for v in LOSS]  # seeds 0 and 1: LOSS and LOSS + 1
    assert drawn != pytest.approx(raw_mean)  # smoothing changed the plotted series
    assert drawn == pytest.approx(plots.smooth(raw_mean))
    assert max(drawn) - min(drawn) < max(raw_mean) - min(raw_mean)  # and flattened its jags
    assert "exponential moving average over 10 iterations" in plots.caption(fig)
    assert "training_curves_mmlu.csv" in plots.caption(fig)
    plt.close(fig)

    out = tmp_path / "figs"
    out.mkdir()
    plots.training_curves(jobs, out)
    with (out / "training_curves_mmlu.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert tuple(rows[0]) == plots.CURVE_CSV_COLUMNS
    loss6 = [r for r in rows if r["metric"] == "loss" and r["series"] == "todycomm (N=6)"]
    assert [float(r["mean"]) for r in loss6] == pytest.approx(raw_mean)  # the raw values
    assert [float(r["min"]) for r in loss6] == pytest.approx(LOSS)
    assert [float(r["max"]) for r in loss6] == pytest.approx([v + 1 for v in LOSS])
    assert [float(r["plotted"]) for r in loss6] == pytest.approx(drawn)
    assert {r["series"] for r in rows} <= set(labels.values())
    val = [r for r in rows if r["metric"] == "val_acc"]
    assert val and all(r["plotted"] == r["mean"] for r in val)  # validation points are not smoothed


def test_smooth_is_a_bias_corrected_ema() -> None:
    assert plots.smooth([3.0, 3.0, 3.0]) == pytest.approx([3.0, 3.0, 3.0])
    assert plots.smooth([1.0, 0.0], span=3) == pytest.approx([1.0, 1 / 3])  # alpha 0.5: (0.5*0.5)/(0.75)
    assert plots.smooth([1.0, 5.0], span=1) == [1.0, 5.0]


def test_detector_curves_are_written_in_three_formats_with_a_caption(tmp_path: Path) -> None:
    cfg = {"method": {"name": "gsafeguard"}}
    d = _job(tmp_path / "sweep", "gsafeguard_0", 0, cfg, M, method="gsafeguard")
    logs = [{"epoch": e, "train_adacc": 0.5, "data_val_adacc": 0.6, "val_adacc": 0.7} for e in range(2)]
    (d / "train_log.jsonl").write_text("\n".join(json.dumps(r) for r in logs) + "\n")
    out = tmp_path / "out"
    out.mkdir()
    [png] = detector.detector_curves(find_jobs(tmp_path / "sweep"), out)
    assert {p.suffix for p in png.parent.glob(f"{png.stem}.*")} == {".png", ".pdf", ".svg", ".txt"}
    cap = png.with_suffix(".caption.txt").read_text()
    assert "Fig. 4" in cap and "backbone=sim" in cap
