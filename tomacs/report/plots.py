"""Figures of a report (matplotlib), shaped to be pasted into a paper: training curves as the
TodyComm paper's Fig. 2, Acc vs Token per benchmark, ADAcc bars against the all-reliable detector.

Each figure has a data function (what is plotted, testable without pixels) and a drawing function.
Every figure is written as PNG, PDF and SVG side by side, with its caption in `<name>.caption.txt`:
a figure's title is short, and the caption says whose numbers it shows (backbone, sim profile, code
revision, when the jobs finished), what the error bars are and how curves are smoothed, so that a
title never wraps and a figure can be pasted under a caption of the paper's own. Legends name
experiments for people (`todycomm (N=4)`), never as raw config strings. Headless (Agg); figures
are built from results.json and train_log.jsonl only.
"""

from __future__ import annotations

import csv
import datetime
import json
import statistics
import textwrap
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.artist import Artist  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from tomacs.job.files import read_log  # noqa: E402
from tomacs.report.collect import Cell, CellKey, Job, setting_keys  # noqa: E402
from tomacs.report.settings import RUN_KIND, legend_part  # noqa: E402
from tomacs.report.tables import ATTACK_ORDER, ATTACK_TITLE, BENCH_ORDER, BENCH_TITLE, _order, natural_key  # noqa: E402

MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p"]
ATTACK_COLOUR = {"none": "tab:green", "lt50": "tab:blue", "eq50": "tab:orange", "gt50": "tab:red"}
BASELINE = "_all-reliable detector"  # the artist label of the baseline lines (underscore: no legend entry)
CURVE_METRICS = (("acc", "Acc %"), ("adacc", "ADAcc %"), ("loss", "loss"))
FORMATS = ("png", "pdf", "svg")  # every figure, side by side; the PNG is the one report.md shows
PNG_DPI = 200
# per-iteration training lines are drawn as a bias-corrected exponential moving average over this
# many iterations (alpha = 2 / (span + 1)); the raw values are in the figure's CSV
SMOOTH_SPAN = 10
CURVE_CSV_COLUMNS = (
    "attack",
    "series",  # the legend's label
    "series_key",  # the series' full name (method [settings; budget])
    "metric",
    "iteration",
    "seeds",
    "mean",  # over seeds, as logged: unsmoothed
    "min",
    "max",
    "plotted",  # what the line shows there: the smoothed mean (training), the mean (validation)
)
_CAPTION = "_tomacs_caption"  # the attribute a drawing function leaves its caption in


def series_name(method: str, setting: str = "", budget: str = "none") -> str:
    """One plotted series = one experiment row of the tables (method, its varying settings, budget).
    The key a series is stored under; a legend shows `series_labels` instead."""
    extra = [s for s in (setting, "" if budget == "none" else f"budget={budget}") if s]
    return f"{method} [{'; '.join(extra)}]" if extra else method


@dataclass(frozen=True)
class SeriesInfo:
    """What a series is, for its legend label: the method label, the budget, and the varying
    settings of its jobs (key -> canonical JSON value, None where the job has no such key)."""

    method: str
    budget: str
    settings: tuple[tuple[str, str | None], ...]


def _info(job: Job, keys: list[str]) -> SeriesInfo:
    method, _bench, _attack, budget = job.key
    return SeriesInfo(method, budget, tuple((k, job.settings.get(k)) for k in keys))


def job_series(jobs: list[Job]) -> dict[str, SeriesInfo]:
    """Every series name of these jobs (as `log_records` names them) -> what it is."""
    keys = setting_keys(jobs)
    out = {}
    for j in jobs:
        method, _bench, _attack, budget = j.key
        out[series_name(method, j.setting_label(keys), budget)] = _info(j, keys)
    return out


def cell_series(all_cells: dict[CellKey, Cell]) -> dict[str, SeriesInfo]:
    """Every series name of these cells (as the data functions name them) -> what it is."""
    jobs = [j for c in all_cells.values() for j in c.jobs]
    keys = setting_keys(jobs)
    return {
        series_name(k.method, k.setting, k.budget): _info(c.jobs[0], keys)
        for k, c in all_cells.items()
        if c.jobs
    }


def series_labels(infos: dict[str, SeriesInfo]) -> dict[str, str]:
    """A legend label per series of one figure, for a reader: the method, then only the settings
    that tell this figure's lines apart, each named for people (tomacs.report.settings.legend_part):
    a setting equal on every line is dropped, so are unset and null values, and how a job ran (mode,
    checkpoint) is named only where lines differ in nothing else. A label that would still collide
    falls back to the series' full name."""
    varying = {
        k
        for k in {k for i in infos.values() for k, _ in i.settings}
        if len({dict(i.settings).get(k) for i in infos.values()}) > 1
    }

    def label(info: SeriesInfo, run_kind: bool) -> str:
        parts = [
            p
            for k, v in info.settings
            if k in varying and (run_kind or k not in RUN_KIND)
            for p in [legend_part(k, v)]
            if p is not None
        ]
        if info.budget != "none":
            parts.append(f"budget: {info.budget}")
        return f"{info.method} ({', '.join(parts)})" if parts else info.method

    out = {n: label(i, False) for n, i in infos.items()}
    for clash in (lambda n: label(infos[n], True), lambda n: n):
        seen: dict[str, int] = defaultdict(int)
        for lab in out.values():
            seen[lab] += 1
        out = {n: (clash(n) if seen[lab] > 1 else lab) for n, lab in out.items()}
    return out


def labels_for(infos: dict[str, SeriesInfo], names: list[str]) -> dict[str, str]:
    """`series_labels` over the lines of one figure only (`names`)."""
    return series_labels({n: infos[n] for n in names if n in infos})


def provenance(jobs: list[Job]) -> str:
    """Whose numbers a figure shows, for its caption: backbones (and sim profiles), the number of
    jobs, the code revisions and the dates the jobs finished (their results.json)."""
    bbs = sorted({str(j.results["backbone"]) for j in jobs if "backbone" in j.results})
    profiles = sorted(
        {
            Path(str(json.loads(p))).stem
            for j in jobs
            if (p := j.settings.get("backbone.profile")) is not None and json.loads(p) is not None
        }
    )
    revs = sorted({str(j.results["git_rev"]) for j in jobs if j.results.get("git_rev")})
    days = sorted(
        {
            datetime.date.fromtimestamp((j.path / "results.json").stat().st_mtime).isoformat()
            for j in jobs
            if (j.path / "results.json").is_file()
        }
    )
    parts = ["Ours: " + (", ".join(f"backbone={b}" for b in bbs) if bbs else "backbone unknown")]
    if profiles:
        parts.append(f"sim profile {', '.join(profiles)}")
    parts.append(f"{len(jobs)} job{'s' * (len(jobs) != 1)}")
    if revs:
        parts.append(f"code revision {', '.join(revs)}")
    if days:
        parts.append(f"finished {days[0]}" + (f" to {days[-1]}" if days[-1] != days[0] else ""))
    return "; ".join(parts) + "."


def _cell_jobs(all_cells: dict[CellKey, Cell]) -> list[Job]:
    return [j for c in all_cells.values() for j in c.jobs]


def _mean_std(vals: list[float]) -> tuple[float, float]:
    return statistics.fmean(vals), (statistics.stdev(vals) if len(vals) > 1 else 0.0)


def _attack_colour(attack: str, order: list[str]) -> str:
    if attack in ATTACK_COLOUR:
        return ATTACK_COLOUR[attack]
    return f"C{(order.index(attack) + 4) % 10}"


def _legend_cols(fig: plt.Figure, handles: list) -> int:
    """As many legend columns as fit the figure's width (about 6 pt per character at fontsize 8)."""
    longest = max(len(str(h.get_label())) for h in handles)
    fits = int(fig.get_figwidth() * 72 // (longest * 5.5 + 40))
    return max(1, min(len(handles), fits))


def _title(fig: plt.Figure, text: str) -> None:
    """A short human title (provenance goes to the caption), wrapped should it ever be too wide."""
    fig.suptitle("\n".join(textwrap.wrap(text, max(30, int(fig.get_figwidth() * 72 / 7.5)))))


def set_caption(fig: plt.Figure, text: str) -> None:
    setattr(fig, _CAPTION, text)


def caption(fig: plt.Figure) -> str:
    """The caption a drawing function gave its figure ("" if none): what `_save` writes beside it."""
    return str(getattr(fig, _CAPTION, ""))


def figure_files(png: Path) -> dict[str, Path]:
    """The files written for one figure: png, pdf, svg and its caption (csv where it has raw data)."""
    out = {f: png.with_suffix(f".{f}") for f in FORMATS}
    out["caption"] = png.with_suffix(".caption.txt")
    if png.with_suffix(".csv").is_file():
        out["csv"] = png.with_suffix(".csv")
    return out


def _save(fig: plt.Figure, path: Path) -> Path:
    """Write the figure as PNG, PDF and SVG (fonts kept as text: editable in a paper's figure), its
    caption beside it; return the PNG's path. No timestamps inside, so a rebuilt report is unchanged."""
    path = path.with_suffix(".png")
    with plt.rc_context({"pdf.fonttype": 42, "svg.fonttype": "none"}):
        for fmt in FORMATS:
            meta = {"png": None, "pdf": {"CreationDate": None}, "svg": {"Date": None}}[fmt]
            # bbox tight: nothing (title, legend) is ever clipped
            fig.savefig(path.with_suffix(f".{fmt}"), dpi=PNG_DPI, bbox_inches="tight", metadata=meta)
    path.with_suffix(".caption.txt").write_text(caption(fig) + "\n")
    plt.close(fig)
    return path


def smooth(values: list[float], span: int = SMOOTH_SPAN) -> list[float]:
    """Bias-corrected exponential moving average (as TensorBoard's smoothing): alpha = 2/(span+1),
    the first point is the first value, a constant series stays constant; span <= 1 is no smoothing."""
    if span <= 1:
        return list(values)
    beta = 1.0 - 2.0 / (span + 1)
    out, m = [], 0.0
    for t, v in enumerate(values, start=1):
        m = beta * m + (1.0 - beta) * v
        out.append(m / (1.0 - beta**t))
    return out


# ---------------------------------------------------------------- training curves (paper Fig. 2)


def curve_series(jobs: list[Job]) -> dict[tuple[str, str, str, str], dict[int, list[float]]]:
    """(benchmark, attack, series, metric) -> iteration -> one value per seed, for metrics
    train_acc / train_adacc (in %) and loss (every iteration), val_acc / val_adacc (in %, after each
    epoch). The series is the method plus any setting that varies (see series_name), so two
    experiments never share a band."""
    series: dict[tuple[str, str, str, str], dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for bench, attack, name, rec in log_records(jobs):
        if "iteration" in rec:
            for metric in ("train_acc", "train_adacc", "val_acc", "val_adacc", "loss"):
                v = rec.get(metric)
                if v is not None and v == v:
                    scale = 1.0 if metric == "loss" else 100.0
                    x = int(rec["iteration"])
                    if metric.startswith("val_"):
                        # a training line carries the iteration it ran as; a validation line the
                        # count of iterations done, one past the epoch's last: plot it on that last
                        # one (as the tracker's step), not past the end of the training line
                        x = max(x - 1, 0)
                    series[(bench, attack, name, metric)][x].append(scale * float(v))
    return series


def seed_note(ns: list[int], per: str = "point") -> str:
    """What the error bars of a figure are, true to its seed counts: no promise of seed error bars
    where every point comes from one seed."""
    if not ns or max(ns) <= 1:
        return f"1 seed per {per}: no error bars"
    lo, hi = min(ns), max(ns)
    if lo == hi:
        return f"error bars: sample std over {hi} seeds"
    return f"error bars: sample std over seeds (n = {lo}–{hi}; none where n = 1)"


def log_records(jobs: list[Job]) -> Iterator[tuple[str, str, str, dict]]:
    """(benchmark, attack, series name, record) for every line of every job's train_log.jsonl; the
    series name carries any setting that varies between the jobs, so two experiments never share a band."""
    keys = setting_keys(jobs)
    for j in jobs:
        log = j.path / "train_log.jsonl"
        if not log.is_file():
            continue
        method, bench, attack, budget = j.key
        name = series_name(method, j.setting_label(keys), budget)
        for rec in read_log(log):
            yield bench, attack, name, rec


def training_curves(jobs: list[Job], out: Path) -> list[Path]:
    """Write training_curves_<benchmark>.png/.pdf/.svg per benchmark (see training_curve_figures),
    its caption, and training_curves_<benchmark>.csv: every plotted point's raw values."""
    series, infos = curve_series(jobs), job_series(jobs)
    paths = []
    for bench, fig in training_curve_figures(jobs).items():
        labels = labels_for(infos, sorted({k[2] for k in series if k[0] == bench}))
        write_curve_csv(series, labels, bench, out / f"training_curves_{bench}.csv")
        paths.append(_save(fig, out / f"training_curves_{bench}.png"))
    return paths


def write_curve_csv(
    series: dict[tuple[str, str, str, str], dict[int, list[float]]],
    labels: dict[str, str],
    bench: str,
    path: Path,
) -> Path:
    """The raw data of one benchmark's training curves: a row per (attack, series, metric,
    iteration) with the seeds' mean, min and max as logged (unsmoothed), and `plotted`, the value
    the figure's line shows there (the smoothed mean for training lines, the mean for validation)."""
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(CURVE_CSV_COLUMNS)
        keys = [k for k in series if k[0] == bench]
        for _b, attack, name, metric in sorted(keys, key=lambda k: (k[1], natural_key(k[2]), k[3])):
            pts = series[(bench, attack, name, metric)]
            xs = sorted(pts)
            mean = [statistics.fmean(pts[x]) for x in xs]
            shown = mean if metric.startswith("val_") else smooth(mean)
            for x, m, sm in zip(xs, mean, shown, strict=True):
                lo, hi = min(pts[x]), max(pts[x])
                w.writerow([attack, labels.get(name, name), name, metric, x, len(pts[x]), m, lo, hi, sm])
    return path


def training_curve_figures(jobs: list[Job]) -> dict[str, plt.Figure]:
    """One figure per benchmark: a column per attack rate; rows Acc, ADAcc and loss per training
    iteration. A line per series is the mean over seeds, smoothed (`smooth`, a bias-corrected EMA
    over SMOOTH_SPAN iterations), its band the seeds' min-max, smoothed alike; the markers with
    error bars are validation scores after each epoch (mean, seeds' min-max; never smoothed). Every
    train point carries a marker, so a run of one iteration is still visible."""
    series, infos = curve_series(jobs), job_series(jobs)
    prov = provenance(jobs)
    figs: dict[str, plt.Figure] = {}
    for bench in _order([k[0] for k in series], BENCH_ORDER):
        attacks = _order([k[1] for k in series if k[0] == bench], ATTACK_ORDER)
        names = sorted({k[2] for k in series if k[0] == bench}, key=natural_key)
        labels = labels_for(infos, names)
        colour = {n: f"C{i % 10}" for i, n in enumerate(names)}
        fig, axes = plt.subplots(
            len(CURVE_METRICS),
            len(attacks),
            figsize=(max(8.0, 4.2 * len(attacks)), 2.8 * len(CURVE_METRICS) + 0.8),
            squeeze=False,
            sharex="col",
            layout="constrained",
        )
        for c, a in enumerate(attacks):
            for r, (kind, ylabel) in enumerate(CURVE_METRICS):
                ax = axes[r][c]
                train_metric = "loss" if kind == "loss" else f"train_{kind}"
                for name in names:
                    pts = series.get((bench, a, name, train_metric))
                    if pts:
                        xs = sorted(pts)
                        mean = smooth([statistics.fmean(pts[x]) for x in xs])
                        ax.plot(
                            xs, mean, marker="o", ms=2.5 if len(xs) > 30 else 4, lw=1.2, color=colour[name]
                        )
                        if any(len(pts[x]) > 1 for x in xs):
                            lo, hi = smooth([min(pts[x]) for x in xs]), smooth([max(pts[x]) for x in xs])
                            ax.fill_between(xs, lo, hi, alpha=0.2, color=colour[name], lw=0)
                    val = series.get((bench, a, name, f"val_{kind}")) if kind != "loss" else None
                    if val:
                        vx = sorted(val)
                        vm = [statistics.fmean(val[x]) for x in vx]
                        ax.errorbar(
                            vx,
                            vm,
                            # clamped: the float mean of equal seeds can sit a rounding step
                            # outside them (fmean([31/153] * 3) > 31/153), and matplotlib refuses
                            # a negative error
                            yerr=[
                                [max(0.0, m - min(val[x])) for m, x in zip(vm, vx, strict=True)],
                                [max(0.0, max(val[x]) - m) for m, x in zip(vm, vx, strict=True)],
                            ],
                            fmt="D",
                            ms=5,
                            mfc="white",
                            color=colour[name],
                            capsize=2,
                        )
                if r == 0:
                    ax.set_title(ATTACK_TITLE.get(a, a))
                if r == len(CURVE_METRICS) - 1:
                    ax.set_xlabel("training iteration")
                ax.xaxis.set_major_locator(MaxNLocator(integer=True))
                if c == 0:
                    ax.set_ylabel(ylabel)
                ax.grid(alpha=0.3)
        handles = [Line2D([], [], color=colour[n], marker="o", label=labels.get(n, n)) for n in names]
        seeds = max((len(v) for k, pts in series.items() if k[0] == bench for v in pts.values()), default=1)
        train_label = (
            f"train (mean; band = seeds' min–max; EMA {SMOOTH_SPAN})"
            if seeds > 1
            else f"train (1 seed; EMA {SMOOTH_SPAN})"
        )
        handles += [
            Line2D([], [], color="grey", marker="o", label=train_label),
            Line2D(
                [], [], color="grey", marker="D", mfc="white", ls="none", label="validation after each epoch"
            ),
        ]
        fig.legend(handles=handles, loc="outside lower center", ncol=_legend_cols(fig, handles), fontsize=8)
        title = BENCH_TITLE.get(bench, bench)
        _title(fig, f"{title}: training curves")
        band = "the mean over seeds (band: the seeds' min–max), both" if seeds > 1 else "one seed,"
        set_caption(
            fig,
            f"Training curves on {title}, a column per attack rate; rows: Acc %, ADAcc % and the loss "
            f"per training iteration. Training lines: {band} smoothed by a bias-corrected exponential "
            f"moving average over {SMOOTH_SPAN} iterations (alpha = 2/{SMOOTH_SPAN + 1}); the raw values "
            f"are in training_curves_{bench}.csv. Diamonds: validation after each epoch (mean, error "
            "bars = seeds' min–max; not smoothed). " + prov,
        )
        figs[bench] = fig
    return figs


# ---------------------------------------------------------------- Acc vs Token


@dataclass(frozen=True)
class Point:
    series: str
    attack: str
    token: float
    token_std: float
    acc: float
    acc_std: float
    n: int


def acc_token_points(all_cells: dict[CellKey, Cell]) -> dict[str, list[Point]]:
    """benchmark -> one point per (series, attack): mean Token and Acc % over seeds, sample stds."""
    out: dict[str, list[Point]] = defaultdict(list)
    for k, cell in sorted(all_cells.items()):
        acc, tok = cell.values("acc", 100.0), cell.values("token")
        if not acc or not tok:
            continue
        (am, asd), (tm, tsd) = _mean_std(acc), _mean_std(tok)
        out[k.benchmark].append(
            Point(series_name(k.method, k.setting, k.budget), k.attack, tm, tsd, am, asd, len(acc))
        )
    return dict(out)


def acc_vs_tokens(all_cells: dict[CellKey, Cell], out: Path) -> Path | None:
    fig = acc_vs_tokens_figure(all_cells)
    return None if fig is None else _save(fig, out / "acc_vs_tokens.png")


def acc_vs_tokens_figure(all_cells: dict[CellKey, Cell]) -> plt.Figure | None:
    """A panel per benchmark: one marker shape per method (series), one colour per attack rate,
    error bars = sample std over seeds in both Acc and Token."""
    pts = acc_token_points(all_cells)
    if not pts:
        return None
    benches = _order(list(pts), BENCH_ORDER)
    names = sorted({p.series for ps in pts.values() for p in ps}, key=natural_key)
    attacks = _order([p.attack for ps in pts.values() for p in ps], ATTACK_ORDER)
    marker = {n: MARKERS[i % len(MARKERS)] for i, n in enumerate(names)}
    ncol = min(3, len(benches))
    nrow = -(-len(benches) // ncol)
    fig, axes = plt.subplots(
        nrow, ncol, figsize=(max(8.0, 4.4 * ncol), 3.6 * nrow + 1.0), squeeze=False, layout="constrained"
    )
    for i, b in enumerate(benches):
        ax = axes[i // ncol][i % ncol]
        for p in pts[b]:
            ax.errorbar(
                p.token,
                p.acc,
                xerr=p.token_std,
                yerr=p.acc_std,
                fmt=marker[p.series],
                color=_attack_colour(p.attack, attacks),
                ms=7,
                capsize=2,
                mec="black",
                mew=0.5,
            )
        ax.set_title(BENCH_TITLE.get(b, b))
        ax.set_xlabel("Token (per agent-round)")
        ax.set_ylabel("Acc %")
        lo, hi = ax.get_ylim()
        ax.set_ylim(max(lo, 0.0), min(hi, 100.5))  # an error bar past 100 % or below 0 % is clipped
        ax.grid(alpha=0.3)
    for j in range(len(benches), nrow * ncol):
        axes[j // ncol][j % ncol].set_visible(False)
    labels = labels_for(cell_series(all_cells), names)
    handles: list[Artist] = [
        Line2D([], [], ls="none", marker=marker[n], color="grey", mec="black", label=labels.get(n, n))
        for n in names
    ]
    # attack rates are colours, shown as colour patches: a marker here would read as a method's shape
    handles += [
        Patch(color=_attack_colour(a, attacks), label=f"attack {ATTACK_TITLE.get(a, a)}") for a in attacks
    ]
    fig.legend(handles=handles, loc="outside lower center", ncol=_legend_cols(fig, handles), fontsize=8)
    ns = [p.n for ps in pts.values() for p in ps]
    _title(fig, "Acc vs Token")
    set_caption(
        fig,
        "Acc % against Token (tokens per agent and round) per benchmark: a marker per method, a colour "
        f"per attack rate; the mean over seeds; {seed_note(ns)}, in both Acc and Token. "
        + provenance(_cell_jobs(all_cells)),
    )
    return fig


# ---------------------------------------------------------------- ADAcc bars


@dataclass(frozen=True)
class Bar:
    series: str
    attack: str
    adacc: float
    std: float
    n: int
    baseline: float | None  # ADAcc of the all-reliable detector = fraction of honest agents, in %


def adacc_bar_data(all_cells: dict[CellKey, Cell]) -> dict[str, list[Bar]]:
    """benchmark -> one bar per (series, attack) under attack: ADAcc % mean and sample std over seeds,
    and the all-reliable detector's ADAcc (metrics 'adacc_baseline', mean over seeds)."""
    out: dict[str, list[Bar]] = defaultdict(list)
    for k, cell in sorted(all_cells.items()):
        if k.attack == "none":
            continue  # no adversary: nothing to detect
        vals = cell.values("adacc", 100.0)
        if not vals:
            continue
        base = cell.values("adacc_baseline", 100.0)
        m, s = _mean_std(vals)
        out[k.benchmark].append(
            Bar(
                series_name(k.method, k.setting, k.budget),
                k.attack,
                m,
                s,
                len(vals),
                statistics.fmean(base) if base else None,
            )
        )
    return dict(out)


def adacc_bars(all_cells: dict[CellKey, Cell], out: Path) -> Path | None:
    fig = adacc_bars_figure(all_cells)
    return None if fig is None else _save(fig, out / "adacc_bars.png")


def adacc_bars_figure(all_cells: dict[CellKey, Cell]) -> plt.Figure | None:
    """A panel per benchmark: groups = attack rates, a bar per method (series) with the seeds' sample
    std as error bar, and a dashed line over each bar at the all-reliable detector's ADAcc."""
    data = adacc_bar_data(all_cells)
    if not data:
        return None
    benches = _order(list(data), BENCH_ORDER)
    names = sorted({b.series for bs in data.values() for b in bs}, key=natural_key)
    colour = {n: f"C{i % 10}" for i, n in enumerate(names)}
    ncol = min(3, len(benches))
    nrow = -(-len(benches) // ncol)
    fig, axes = plt.subplots(
        nrow,
        ncol,
        figsize=(max(8.0, max(4.4, 0.9 * len(names) + 2) * ncol), 3.8 * nrow + 1.0),
        squeeze=False,
        layout="constrained",
    )
    width = 0.8 / max(1, len(names))
    for i, bench in enumerate(benches):
        ax = axes[i // ncol][i % ncol]
        attacks = _order([b.attack for b in data[bench]], ATTACK_ORDER)
        for bar in data[bench]:
            x = attacks.index(bar.attack) + (names.index(bar.series) - (len(names) - 1) / 2) * width
            ax.bar(
                x, bar.adacc, width, yerr=bar.std if bar.n > 1 else None, capsize=2, color=colour[bar.series]
            )
            if bar.baseline is not None:
                ax.hlines(
                    bar.baseline,
                    x - width / 2,
                    x + width / 2,
                    colors="black",
                    linestyles="--",
                    lw=1.2,
                    label=BASELINE,
                )
        ax.set_xticks(range(len(attacks)), [ATTACK_TITLE.get(a, a) for a in attacks])
        ax.set_xlim(-0.5, len(attacks) - 0.5)
        ax.set_ylim(0, 105)
        ax.set_ylabel("ADAcc %")
        ax.set_title(BENCH_TITLE.get(bench, bench))
        ax.grid(axis="y", alpha=0.3)
    for j in range(len(benches), nrow * ncol):
        axes[j // ncol][j % ncol].set_visible(False)
    labels = labels_for(cell_series(all_cells), names)
    handles: list[Artist] = [
        plt.Rectangle((0, 0), 1, 1, color=colour[n], label=labels.get(n, n)) for n in names
    ]
    handles.append(
        Line2D([], [], color="black", ls="--", label="all-reliable detector (= fraction of honest agents)")
    )
    fig.legend(handles=handles, loc="outside lower center", ncol=_legend_cols(fig, handles), fontsize=8)
    ns = [b.n for bs in data.values() for b in bs]
    _title(fig, "Adversary detection accuracy")
    set_caption(
        fig,
        "ADAcc % per benchmark and attack rate, a bar per method: the mean over seeds; "
        f"{seed_note(ns, 'bar')}. Dashed: the all-reliable detector, which trusts every agent (its "
        "ADAcc is the fraction of honest agents). " + provenance(_cell_jobs(all_cells)),
    )
    return fig
