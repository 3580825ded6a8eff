"""`tomacs transcripts curves`: simulated against real debates, per round, side by side (issue 39, item 3).

`method=debate` run in a source's protocol (its agents, rounds, adversaries and onsets) should
reproduce that source's per-round curves; this is where that claim is checked. The statistics are
the held-out check's (`tomacs.sim.heldout`: definitions in its docstring), computed here on each
side's OWN answers, so a gap is a gap between what the simulator did and what the real models did,
not between a replay and its source. Both sides get the same percentile bootstrap over questions.

The target printed with the table is the issue's: honest accuracy and conformity within
`TOLERANCE` (8 points) of the real value at every round. The other statistics are shown against
the real 95 % interval only, as they rest on few answers (a switch at the first exposure happens
once per agent and debate).

Kept apart from the CLI (a parser of options) so that tests drive the numbers without a console.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import NotRequired, TypedDict

import numpy as np

from tomacs.sim import heldout as h
from tomacs.transcripts.schema import Debate

CURVE_STATS: tuple[str, ...] = ("accuracy", "conformity", "switch_first", "switch_later", "vote_accuracy")
TARGET_STATS: tuple[str, ...] = ("accuracy", "conformity")
TOLERANCE = 0.08  # the target: 8 points, on honest accuracy and conformity, at every round
FIGURE_SUFFIXES = (".png", ".pdf", ".svg")


class Protocol(TypedDict):
    """The distinct values over a side's debates: one value each when the side runs one protocol."""

    agents: list[int]
    rounds: list[int]
    adversaries: list[int]
    onsets: list[int]  # every adversary onset round seen
    # the distinct per-debate onset lists (sorted): [[1, 2]] when every debate has one adversary from
    # round 1 and one from round 2 (MAD-Follower), several when each onset is drawn (attack=mad)
    onset_sets: NotRequired[list[list[int]]]


class Side(TypedDict):
    label: str
    debates: int
    questions: int
    honest_answers: int  # parsed honest answers in the compared rounds (the accuracy denominators)
    models: list[str]
    protocol: Protocol


class CurveCell(TypedDict):
    """One statistic in one round; rates as fractions, None where the statistic is undefined."""

    stat: str
    round: int
    sim: float | None
    sim_lo: float | None
    sim_hi: float | None
    real: float | None
    real_lo: float | None
    real_hi: float | None
    real_interval: str  # "bootstrap", or "clopper-pearson" where the real rate is 0 or 1
    n_sim: int
    n_real: int
    gap_points: float | None  # sim minus real, in percentage points
    within: bool | None  # TARGET_STATS only: |gap| <= the tolerance
    inside: bool | None  # sim inside the real 95 % interval


class Moves(TypedDict):
    """Exposed honest agents' moves, rounds 2+ (`tomacs.sim.heldout.move_counts`): counts, row = the class
    of the previous answer, column = the class of the answer in the exposed round."""

    classes: list[str]
    sim: list[list[float]]
    real: list[list[float]]


class Curves(TypedDict):
    sim: Side
    real: Side
    rounds: int
    tolerance_points: float
    intervals: str
    reps: int
    seed: int
    protocol_warning: str | None
    sim_precision_note: str | None
    cells: list[CurveCell]
    moves: Moves
    target_cells: int
    target_within: int
    target_met: bool


def protocol(debates: Sequence[Debate]) -> Protocol:
    """What `method=debate` must copy from a source for its curves to be comparable."""
    return Protocol(
        agents=sorted({d.n_agents for d in debates}),
        rounds=sorted({d.n_rounds for d in debates}),
        adversaries=sorted({sum(a.role == "adversary" for a in d.agents) for d in debates}),
        onsets=sorted({a.onset for d in debates for a in d.agents if a.role == "adversary" and a.onset}),
        onset_sets=[
            list(t)
            for t in sorted(
                {
                    tuple(sorted(a.onset for a in d.agents if a.role == "adversary" and a.onset))
                    for d in debates
                }
            )
        ],
    )


def _ordered(p: Protocol) -> bool:
    """Every debate has one adversary per onset round, the same rounds (attack.ordered_onsets)."""
    sets = p.get("onset_sets") or []
    return len(sets) == 1 and len(sets[0]) > 1 and len(set(sets[0])) == len(sets[0])


def _alts(values: list[int]) -> str:
    return "/".join(str(v) for v in values) or "?"


def describe(p: Protocol) -> str:
    """One line a person reads: `agents=3 rounds=3, 1 adversary from round 1`."""
    head = f"agents={_alts(p['agents'])} rounds={_alts(p['rounds'])}"
    if p["adversaries"] == [0]:
        return head + ", no adversary"
    noun = "adversary" if p["adversaries"] == [1] else "adversaries"
    if _ordered(p):
        return f"{head}, {_alts(p['adversaries'])} {noun}, one from each of rounds {_alts(p['onsets'])}"
    return f"{head}, {_alts(p['adversaries'])} {noun} from round {_alts(p['onsets'])}"


def _named_attack(count: int, onsets: list[int]) -> str:
    """The shipped attack running a source's protocol (those whose adversaries argue by the
    debate prompt, as the sources' do), else the generic keys."""
    if count == 0:
        return "attack=none"
    import yaml

    from tomacs.paths import conf_dir

    for f in sorted((conf_dir() / "attack").glob("*.yaml")):
        doc = yaml.safe_load(f.read_text()) or {}
        if (
            doc.get("prompt") == "debate"
            and doc.get("count") == count
            and sorted(set(doc.get("onset_rounds") or [])) == onsets
        ):
            return f"attack={f.stem}"
    return f"attack=maa attack.count={count} attack.onset_rounds=[{','.join(map(str, onsets))}]"


def override_for(p: Protocol) -> str | None:
    """The overrides that run a side's protocol in `method=debate`; None when it mixes several."""
    if len(p["agents"]) != 1 or len(p["rounds"]) != 1 or len(p["adversaries"]) != 1:
        return None
    attack = _named_attack(p["adversaries"][0], p["onsets"])
    if _ordered(p):
        attack += " attack.ordered_onsets=true"
    return f"agents={p['agents'][0]} rounds={p['rounds'][0]} {attack}"


def protocol_warning(sim: Protocol, real: Protocol) -> str | None:
    """One line when the sides ran different protocols (the curves are then not comparable as the
    issue means them), naming both and the fix; None when they match."""
    if sim == real:
        return None
    fix = override_for(real)
    how = (
        f"run the sim with {fix}"
        if fix
        else "the real side mixes protocols: pass --real paths of one protocol"
    )
    rounds = min(max(sim["rounds"], default=0), max(real["rounds"], default=0))
    return (
        f"the sides ran different protocols: sim {describe(sim)}; real {describe(real)}; {how} "
        f"(compared up to round {rounds})"
    )


def _counts(debates: Sequence[Debate], model: str | None) -> tuple[int, np.ndarray]:
    """Questions and the per-question counts (Q, len(STATS), 2, R) of a side's own answers."""
    r_max = max(d.n_rounds for d in debates)
    keys, per_q = h._question_counts(debates, [h.observed_answers(d)[None] for d in debates], model, r_max)
    return len(keys), per_q


SIM_HALF_WIDTH = 3.0
"""Points: a target cell whose SIMULATED 95 % interval is wider than +/- this gets a note. The
simulator's question latents are fixed by question id, so a run on MMLU's 153 test questions carries
the same question-sample error at every seed: honest round-1 accuracy of maa-qwen14 came out 65.0 on
them against 69.9 on 2,000 questions (its fitted accuracy 69.8), four target cells of six within 8
points against six of six."""


def sim_precision_note(cells: Sequence[CurveCell], questions: int) -> str | None:
    """A one-line note when the simulated side is too small for an 8-point comparison, else None."""
    widest: tuple[float, CurveCell] | None = None
    for c in cells:
        if c["within"] is None or c["sim_lo"] is None or c["sim_hi"] is None:
            continue
        half = 50.0 * (c["sim_hi"] - c["sim_lo"])
        if widest is None or half > widest[0]:
            widest = (half, c)
    if widest is None or widest[0] <= SIM_HALF_WIDTH:
        return None
    half, c = widest
    return (
        f"the simulated side has {questions} questions: its own 95 % interval is +/-{half:.1f} points "
        f"({h.STAT_LABELS[c['stat']]}, round {c['round']}); a sim run keeps a question's latent at every "
        "seed, so run it on more questions (MMLU: benchmark.test_subset=null eval.size=2000)"
    )


def moves(debates: Sequence[Debate], model: str | None) -> np.ndarray:
    """(3, 3) exposed honest agents' moves of a side's own answers (`h.move_counts`), summed."""
    out = np.zeros((len(h.MOVE_CLASSES),) * 2)
    for d in debates:
        out += h.move_counts(h.layout(d, model), h.observed_answers(d)[None])
    return out


def format_moves(m: Moves) -> list[str]:
    """A line per class held before: where exposed honest agents went, % of the row, sim | real."""
    sim, real = np.array(m["sim"]), np.array(m["real"])
    if not real.sum() and not sim.sum():
        return []
    lines = ["where exposed honest agents go (rounds 2+), % of those holding each answer: sim | real"]
    w = max(len(c) for c in m["classes"])
    for i, c in enumerate(m["classes"]):
        ns, nr = sim[i].sum(), real[i].sum()
        cols = [
            f"-> {to} {_share(sim[i, j], ns)} | {_share(real[i, j], nr)}" for j, to in enumerate(m["classes"])
        ]
        lines.append(f"  from {c:<{w}} (n {ns:g} | {nr:g}): " + "  ".join(cols))
    return lines


def _share(k: float, n: float) -> str:
    return "-" if not n else f"{100.0 * k / n:.1f}"


def _num(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def compare_curves(
    sim: Sequence[Debate],
    real: Sequence[Debate],
    model: str | None = None,
    *,
    sim_label: str = "sim",
    real_label: str = "real",
    reps: int = 2000,
    seed: int = 0,
    tolerance: float = TOLERANCE,
) -> Curves:
    """The per-round curves of both sides and their comparison. The sim side's honest agents are
    all its honest agents (a sim run has one model); the real side's are those of `model`."""
    if not sim:
        raise ValueError(f"no simulated debates in {sim_label}")
    if not real:
        raise ValueError(f"no real debates in {real_label}")
    q_sim, pq_sim = _counts(sim, None)
    q_real, pq_real = _counts(real, model)
    r = min(pq_sim.shape[-1], pq_real.shape[-1])
    pq_sim, pq_real = pq_sim[..., :r], pq_real[..., :r]
    v_s, lo_s, hi_s, _ = h.bootstrap(pq_sim, reps, seed)
    v_r, lo_r, hi_r, exact = h.bootstrap(pq_real, reps, seed)
    cells: list[CurveCell] = []
    for st in CURVE_STATS:
        si = h.STATS.index(st)
        for k in range(r):
            s, rv = _num(v_s[si, k]), _num(v_r[si, k])
            if s is None and rv is None:
                continue
            rlo, rhi = _num(lo_r[si, k]), _num(hi_r[si, k])
            gap = None if s is None or rv is None else 100.0 * (s - rv)
            within = None
            if st in TARGET_STATS and rv is not None:
                within = gap is not None and abs(gap) <= 100.0 * tolerance + 1e-9
            inside = None
            if s is not None and rlo is not None and rhi is not None:
                inside = rlo - 1e-9 <= s <= rhi + 1e-9
            cells.append(
                CurveCell(
                    stat=st,
                    round=k + 1,
                    sim=s,
                    sim_lo=_num(lo_s[si, k]),
                    sim_hi=_num(hi_s[si, k]),
                    real=rv,
                    real_lo=rlo,
                    real_hi=rhi,
                    real_interval="clopper-pearson" if exact[si, k] else "bootstrap",
                    n_sim=int(pq_sim[:, si, 1, k].sum()),
                    n_real=int(pq_real[:, si, 1, k].sum()),
                    gap_points=gap,
                    within=within,
                    inside=inside,
                )
            )
    acc = h.STATS.index("accuracy")
    p_sim, p_real = protocol(sim), protocol(real)

    def side(ds: Sequence[Debate], label: str, q: int, pq: np.ndarray, p: Protocol) -> Side:
        return Side(
            label=label,
            debates=len(ds),
            questions=q,
            honest_answers=int(pq[:, acc, 1, :].sum()),
            models=sorted({d.model or "?" for d in ds}),
            protocol=p,
        )

    target = [c for c in cells if c["within"] is not None]
    n_within = sum(bool(c["within"]) for c in target)
    return Curves(
        sim=side(sim, sim_label, q_sim, pq_sim, p_sim),
        real=side(real, real_label, q_real, pq_real, p_real),
        rounds=r,
        tolerance_points=100.0 * tolerance,
        intervals="bootstrap 95% (questions resampled); Clopper-Pearson where the real rate is 0 or 1",
        reps=reps,
        seed=seed,
        protocol_warning=protocol_warning(p_sim, p_real),
        sim_precision_note=sim_precision_note(cells, q_sim),
        cells=cells,
        moves=Moves(
            classes=list(h.MOVE_CLASSES),
            sim=moves(sim, None).tolist(),
            real=moves(real, model).tolist(),
        ),
        target_cells=len(target),
        target_within=n_within,
        target_met=bool(target) and n_within == len(target),
    )


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}"


def cell_text(c: CurveCell) -> str:
    """`sim | real [lo, hi]` in percent, then ok / OFF gap (target statistics) and in / OUT."""
    text = f"{_pct(c['sim'])} | {_pct(c['real'])}"
    if c["real_lo"] is not None and c["real_hi"] is not None:
        star = "*" if c["real_interval"] != "bootstrap" else ""
        text += f" [{_pct(c['real_lo'])}, {_pct(c['real_hi'])}]{star}"
    if c["within"] is not None:
        gap = c["gap_points"]
        text += " ok" if c["within"] else " OFF " + ("-" if gap is None else f"{abs(gap):.1f}")
    if c["inside"] is not None:
        text += " in" if c["inside"] else " OUT"
    return text


def _side_line(name: str, s: Side) -> str:
    return (
        f"{name} {s['debates']} debates, {s['questions']} questions, {s['honest_answers']} honest answers "
        f"({', '.join(s['models'])}): {s['label']}"
    )


def format_curves(res: Curves) -> str:
    """Plain text: a row per statistic, a column per round, then the target's verdict and the sides."""
    tol = res["tolerance_points"]
    lines = []
    if res["protocol_warning"]:
        lines.append(f"warning: {res['protocol_warning']}")
    lines += [
        f"protocol: sim {describe(res['sim']['protocol'])}; real {describe(res['real']['protocol'])}",
        f"per round, % : sim | real [real 95% interval]; ok / OFF d: |sim - real| <= {tol:g} points "
        "(honest accuracy and conformity); in / OUT: sim inside the real interval",
        "",
    ]
    rounds = list(range(1, res["rounds"] + 1))
    by = {(c["stat"], c["round"]): cell_text(c) for c in res["cells"]}
    stats = [st for st in CURVE_STATS if any((st, r) in by for r in rounds)]
    w0 = max([len("statistic"), *(len(h.STAT_LABELS[st]) for st in stats)])
    widths = {r: max([len(f"round {r}"), *(len(by.get((st, r), "")) for st in stats)]) for r in rounds}
    lines.append(
        "  ".join([f"{'statistic':<{w0}}", *(f"{f'round {r}':<{widths[r]}}" for r in rounds)]).rstrip()
    )
    for st in stats:
        row = [f"{h.STAT_LABELS[st]:<{w0}}", *(f"{by.get((st, r), ''):<{widths[r]}}" for r in rounds)]
        lines.append("  ".join(row).rstrip())
    verdict = "yes" if res["target_met"] else "no"
    mv = format_moves(res["moves"])
    lines += ["", *mv] if mv else []
    lines += [
        "",
        f"honest accuracy and conformity within {tol:g} points at every round: {verdict} "
        f"({res['target_within']} of {res['target_cells']} cells)",
        _side_line("sim ", res["sim"]),
        _side_line("real", res["real"]),
    ]
    if any(c["real_interval"] != "bootstrap" for c in res["cells"]):
        lines.append("* real rate 0 or 1: exact (Clopper-Pearson) interval, a bootstrap cannot widen it")
    if res.get("sim_precision_note"):
        lines.append(f"note: {res['sim_precision_note']}")
    return "\n".join(lines)


def figure_stem(stem: str | Path) -> Path:
    """`--plot STEM`: a name given with a figure suffix keeps its stem (`fig.png` -> `fig`)."""
    p = Path(stem)
    return p.with_suffix("") if p.suffix.lower() in FIGURE_SUFFIXES else p


def _series(cells: Sequence[CurveCell], side: str) -> list[tuple[int, float, float | None, float | None]]:
    """(round, value, lo, hi) in percent of one side's defined cells."""

    def pct(x: float | None) -> float | None:
        return None if x is None else 100.0 * x

    out = []
    for c in cells:
        v, lo, hi = (
            (c["sim"], c["sim_lo"], c["sim_hi"]) if side == "sim" else (c["real"], c["real_lo"], c["real_hi"])
        )
        if v is not None:
            out.append((c["round"], 100.0 * v, pct(lo), pct(hi)))
    return out


def plot_curves(res: Curves, stem: str | Path) -> Path:
    """A panel per statistic, x = round: the simulated line against the real one, each with its 95 %
    band, and on the target statistics the real value +- the tolerance; written as STEM.png/.pdf/.svg
    and STEM.caption.txt (the report's writer: provenance in the caption, not the title)."""
    from matplotlib.lines import Line2D
    from matplotlib.ticker import MaxNLocator

    from tomacs.job.files import git_rev
    from tomacs.report import plots

    plt = plots.plt
    base = figure_stem(stem)
    base.parent.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(1, len(CURVE_STATS), figsize=(3.0 * len(CURVE_STATS), 3.4), layout="constrained")
    tol = res["tolerance_points"]
    for ax, st in zip(axes, CURVE_STATS, strict=True):
        cells = [c for c in res["cells"] if c["stat"] == st]
        for side, colour, alpha in (("sim", "tab:blue", 0.15), ("real", "black", 0.22)):
            pts = _series(cells, side)
            if not pts:
                continue
            xs, ys = [p[0] for p in pts], [p[1] for p in pts]
            marker = "o" if side == "sim" else "s"
            band = [(x, lo, hi) for x, _, lo, hi in pts if lo is not None and hi is not None]
            if len(band) >= 2:
                ax.plot(xs, ys, marker=marker, color=colour, lw=1.4)
                ax.fill_between(
                    [b[0] for b in band],
                    [b[1] for b in band],
                    [b[2] for b in band],
                    color=colour,
                    alpha=alpha,
                    lw=0,
                )
            else:  # one round (a first exposure): a band of one x is invisible; error bars, set apart
                for x, y, lo, hi in pts:
                    err = None if lo is None or hi is None else [[max(0.0, y - lo)], [max(0.0, hi - y)]]
                    dx = -0.06 if side == "sim" else 0.06
                    ax.errorbar([x + dx], [y], yerr=err, fmt=marker, color=colour, capsize=3, lw=1.0)
            if side == "real" and st in TARGET_STATS:
                for sign in (-1, 1):
                    ax.plot(xs, [y + sign * tol for y in ys], ls=":", lw=1.0, color="grey")
        ax.set_title("\n".join(textwrap.wrap(h.STAT_LABELS[st], 24)), fontsize=10)
        ax.set_xlabel("round")
        ax.set_xlim(0.8, res["rounds"] + 0.2)
        ax.set_ylim(0, 100)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("%")
    handles = [
        Line2D([], [], color="tab:blue", marker="o", label="simulated (band or bar: 95% interval)"),
        Line2D([], [], color="black", marker="s", label="real (band or bar: 95% interval)"),
        Line2D([], [], color="grey", ls=":", label=f"real ± {tol:g} points (target)"),
    ]
    fig.legend(handles=handles, loc="outside lower center", ncol=len(handles), fontsize=8)
    plots._title(fig, "Simulated vs real debates, per round")
    s, r = res["sim"], res["real"]
    warn = f" Warning: {res['protocol_warning']}." if res["protocol_warning"] else ""
    plots.set_caption(
        fig,
        f"Per-round statistics of simulated debates ({s['label']}: {s['debates']} debates, "
        f"{s['questions']} questions, {s['honest_answers']} honest answers; {describe(s['protocol'])}) "
        f"against real ones ({r['label']}: {r['debates']} debates, {r['questions']} questions, "
        f"{r['honest_answers']} honest answers; {describe(r['protocol'])}). Each side's own answers; "
        "rates over the honest agents (vote accuracy: majority of all agents); switch rates count the "
        "honest agents not on the adversary's target the round before, in the round of their first "
        "exposure to an adversary and in later exposed rounds. Bands and bars: 95% percentile bootstrap over "
        f"questions ({res['reps']} resamples, seed {res['seed']}). Dotted: the real value ± {tol:g} "
        f"points, the target for honest accuracy and conformity, met at {res['target_within']} of "
        f"{res['target_cells']} rounds and statistics.{warn} Code revision {git_rev() or 'unknown'}.",
    )
    return plots._save(fig, Path(str(base) + ".png"))


def run_curves(
    sim_paths: Sequence[str],
    real_paths: Sequence[str],
    model: str | None,
    held_out: bool,
    split: float,
    seed: int,
    reps: int = 2000,
    out: str | None = None,
    plot: str | None = None,
    fold: str | None = None,
) -> str:
    """Read both sides, compare, write what was asked; the text to print. `fold` (k/K, implies `held_out`):
    the real questions of that fold of a cross-fit."""
    from tomacs.analysis.text_report import load_side
    from tomacs.job.files import write_json
    from tomacs.sim.from_episodes import select_debates
    from tomacs.transcripts import TranscriptError
    from tomacs.transcripts.split import held_out_label, parse_fold

    k_of = parse_fold(fold)
    held_out = held_out or k_of is not None
    try:
        sim = load_side(sim_paths)
        real = select_debates(load_side(real_paths), model, held_out, split, seed, k_of)
    except TranscriptError as exc:
        raise ValueError(str(exc)) from None
    real_label = (
        ", ".join(real_paths)
        + (f" (model {model})" if model else "")
        + (held_out_label(split, seed, k_of) if held_out else "")
    )
    if held_out and not real:
        raise ValueError(f"no held-out real debates in {real_label}: use a smaller --split")
    res = compare_curves(
        sim, real, model, sim_label=", ".join(sim_paths), real_label=real_label, reps=reps, seed=seed
    )
    text = format_curves(res)
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        write_json(Path(out), res)
        text += f"\nresults: {out}"
    if plot:
        png = plot_curves(res, plot)
        text += f"\nfigure: {png} (and .pdf, .svg, .caption.txt)"
    return text
