"""Figures of a report (matplotlib, PNG), shaped to be pasted into a paper: training curves as the
TodyComm paper's Fig. 2, Acc vs Token per benchmark, ADAcc bars against the all-reliable detector.

Each figure has a data function (what is plotted, testable without pixels) and a drawing function.
Every figure says whose numbers it shows (ours, with the backbone label) and what the error bars
are. Headless (Agg); figures are built from results.json and train_log.jsonl only.
"""

from __future__ import annotations

import statistics
import textwrap
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from tomacs.job.files import read_log  # noqa: E402
from tomacs.report.collect import Cell, CellKey, Job, setting_keys  # noqa: E402
from tomacs.report.tables import ATTACK_ORDER, ATTACK_TITLE, BENCH_ORDER, BENCH_TITLE, _order, natural_key  # noqa: E402

MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p"]
ATTACK_COLOUR = {"none": "tab:green", "lt50": "tab:blue", "eq50": "tab:orange", "gt50": "tab:red"}
BASELINE = "_all-reliable detector"  # the artist label of the baseline lines (underscore: no legend entry)
CURVE_METRICS = (("acc", "Acc %"), ("adacc", "ADAcc %"), ("loss", "loss"))


def series_name(method: str, setting: str = "", budget: str = "none") -> str:
    """One plotted series = one experiment row of the tables (method, its varying settings, budget)."""
    extra = [s for s in (setting, "" if budget == "none" else f"budget={budget}") if s]
    return f"{method} [{'; '.join(extra)}]" if extra else method


def _ours_label(cells: list[Cell]) -> str:
    bbs = sorted({b for c in cells for b in c.backbones})
    return "ours, " + ", ".join(f"backbone={b}" for b in bbs) if bbs else "ours"


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
    """A suptitle wrapped to the figure's width, so it is never cut at the edges."""
    fig.suptitle("\n".join(textwrap.wrap(text, max(30, int(fig.get_figwidth() * 72 / 7.5)))))


def _save(fig: plt.Figure, path: Path) -> Path:
    fig.savefig(path, dpi=130, bbox_inches="tight")  # nothing (title, legend) is ever clipped
    plt.close(fig)
    return path


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
    """Write training_curves_<benchmark>.png per benchmark (see training_curve_figures)."""
    return [
        _save(fig, out / f"training_curves_{bench}.png")
        for bench, fig in training_curve_figures(jobs).items()
    ]


def training_curve_figures(jobs: list[Job]) -> dict[str, plt.Figure]:
    """One figure per benchmark: a column per attack rate; rows Acc,
    ADAcc and loss per training iteration. A line per series is the mean over seeds, its band the
    seeds' min-max; the markers with error bars are validation scores after each epoch (mean, seeds'
    min-max). Every train point carries a marker, so a run of one iteration is still visible."""
    series = curve_series(jobs)
    label = _ours_label([Cell([j]) for j in jobs])
    figs: dict[str, plt.Figure] = {}
    for bench in _order([k[0] for k in series], BENCH_ORDER):
        attacks = _order([k[1] for k in series if k[0] == bench], ATTACK_ORDER)
        names = sorted({k[2] for k in series if k[0] == bench}, key=natural_key)
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
                        mean = [statistics.fmean(pts[x]) for x in xs]
                        ax.plot(
                            xs, mean, marker="o", ms=2.5 if len(xs) > 30 else 4, lw=1.2, color=colour[name]
                        )
                        if any(len(pts[x]) > 1 for x in xs):
                            lo, hi = [min(pts[x]) for x in xs], [max(pts[x]) for x in xs]
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
        handles = [Line2D([], [], color=colour[n], marker="o", label=n) for n in names]
        seeds = max((len(v) for k, pts in series.items() if k[0] == bench for v in pts.values()), default=1)
        train_label = "train (mean; band = seeds' min–max)" if seeds > 1 else "train (1 seed)"
        handles += [
            Line2D([], [], color="grey", marker="o", label=train_label),
            Line2D(
                [], [], color="grey", marker="D", mfc="white", ls="none", label="validation after each epoch"
            ),
        ]
        fig.legend(handles=handles, loc="outside lower center", ncol=_legend_cols(fig, handles), fontsize=8)
        _title(fig, f"{BENCH_TITLE.get(bench, bench)}: training curves ({label})")
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
    handles = [Line2D([], [], ls="none", marker=marker[n], color="grey", mec="black", label=n) for n in names]
    # attack rates are colours, shown as colour patches: a marker here would read as a method's shape
    handles += [
        Patch(color=_attack_colour(a, attacks), label=f"attack {ATTACK_TITLE.get(a, a)}") for a in attacks
    ]
    fig.legend(handles=handles, loc="outside lower center", ncol=_legend_cols(fig, handles), fontsize=8)
    ns = [p.n for ps in pts.values() for p in ps]
    _title(fig, f"Acc vs Token ({_ours_label(list(all_cells.values()))}); {seed_note(ns)}")
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
    handles = [plt.Rectangle((0, 0), 1, 1, color=colour[n], label=n) for n in names]
    handles.append(
        Line2D([], [], color="black", ls="--", label="all-reliable detector (= fraction of honest agents)")
    )
    fig.legend(handles=handles, loc="outside lower center", ncol=_legend_cols(fig, handles), fontsize=8)
    ns = [b.n for bs in data.values() for b in bs]
    _title(
        fig, f"Adversary detection accuracy ({_ours_label(list(all_cells.values()))}); {seed_note(ns, 'bar')}"
    )
    return fig
