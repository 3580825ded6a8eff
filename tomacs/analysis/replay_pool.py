"""`tomacs transcripts pool` on replays: the K folds of a cross-fitted policy replay, joined into one.

Why: a policy trained on a profile fitted on 70 % of a source's questions and replayed on the other 30 %
reads 15-110 real debates, one held-out set's draw (stop 77 found a 70/30 split's texts gap moved by up to
0.13 with the set). Trained on each fold's profile (`sim fit-episodes --fold k/K`) and replayed on its own
fold (`replay --fold k/K -o F`), the K policies read every real debate of the model once, each on a fit
that never saw it.

How the folds are joined, per row (credit round t, the decision T+1, all):
- the pooled AUC: every held-out debate's credits from its own fold's policy, honest against adversarial
  ones (a policy whose credits run higher in one fold than another loses here, though TodyComm's own calls
  compare credits within a debate only); and the mean of the folds' own AUCs, what one policy reaches on
  debates its profile never saw; each fold's AUC beside them;
- AUC within a debate and the row's ADAcc, over all debates;
- a 95 % interval for both AUCs and for the decision's ADAcc minus the all-reliable detector's, from
  debates drawn with replacement within each fold;
- the paper's ADAcc and the all-reliable detector's over all agents (each fold's weighted by its agents,
  the counts' own pooling); the probes' AUCs, the mean over the folds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypedDict, cast

import numpy as np

from tomacs.analysis.credit import auc
from tomacs.analysis.folds import FoldFiles, fold_mean
from tomacs.analysis.texts import _percentiles, _rank_auc

AUC_TARGET = 0.75  # issue 38: a simulator-trained policy's AUC on real debates, each round after onset
DRAWS = 2000  # debates drawn with replacement within each fold, per interval


class PooledRow(TypedDict):
    """One row of the pooled replay: a credit round ('2', '3', ...), 'decision' or 'all'."""

    round: str
    debates: int
    honest: int
    adversarial: int
    dormant: int
    auc: float | None
    auc_ci: list[float] | None
    fold_aucs: list[float | None]
    fold_mean_auc: float | None
    fold_mean_auc_ci: list[float] | None
    auc_in_debate: float | None
    adacc: float | None
    all_reliable: float | None
    probe_auc: float | None
    real_probe_auc: float | None


class ReplayPool(TypedDict):
    """What `pool_replays` returns and `transcripts pool -o` writes for replays."""

    kind: str
    folds: int
    missing_folds: list[int]
    model: str | None
    method: str | None
    embedder: str | None
    runs: list[str]
    debates: int
    agents: int
    rows: list[PooledRow]
    adacc: float | None
    adacc_all_reliable: float | None
    fold_adacc: list[float | None]
    fold_all_reliable: list[float | None]
    decision_margin: float | None
    decision_margin_ci: list[float] | None


# one debate's share of a row: (honest credits, adversarial credits, calls right, calls made, honest)
Cell = tuple[list[float], list[float], int, int, int]


def _cells(debate: dict[str, Any], path: str) -> dict[str, Cell]:
    """Per row, what one replayed debate adds to it (dormant adversaries left out, as the rows do), and
    its rows together under 'all'."""
    truth = debate.get("truth")
    if not isinstance(truth, dict):
        raise ValueError(
            f"{path}: debate {debate.get('id')!r} has no per-row truth (written before the replays kept it); "
            "replay the run again with this version"
        )
    out: dict[str, Cell] = {}
    for row, ys in truth.items():
        credits, pred = debate["credits"][row], debate["predicted_adversarial"][row]
        hon = [float(c) for c, y in zip(credits, ys, strict=True) if y == 0]
        adv = [float(c) for c, y in zip(credits, ys, strict=True) if y == 1]
        right = sum(int(bool(p) == bool(y)) for p, y in zip(pred, ys, strict=True) if y is not None)
        out[str(row)] = (hon, adv, right, len(hon) + len(adv), len(hon))
    cells = list(out.values())
    out["all"] = (
        [x for c in cells for x in c[0]],
        [x for c in cells for x in c[1]],
        sum(c[2] for c in cells),
        sum(c[3] for c in cells),
        sum(c[4] for c in cells),
    )
    return out


def _row_key(row: str) -> tuple[int, int]:
    return (0, int(row)) if row.isdigit() else (1, 0) if row == "decision" else (2, 0)


def _fold_row(res: dict[str, Any], row: str) -> dict[str, Any]:
    return next((r for r in res["summary"]["rows"] if str(r["round"]) == row), {})


def _weighted(vals: Sequence[float | None], weights: Sequence[int]) -> float | None:
    if not vals or any(v is None for v in vals) or not sum(weights):
        return None
    return float(np.dot(np.asarray(vals, dtype=float), weights) / sum(weights))


def _pooled_row(row: str, folds: list[list[dict[str, Cell]]], results: list[dict[str, Any]]) -> PooledRow:
    cells = [c[row] for fold in folds for c in fold if row in c]
    hon = [x for c in cells for x in c[0]]
    adv = [x for c in cells for x in c[1]]
    # within a debate: per debate and row, 'all' too (the replay's own rows count it so)
    parts = [c[r] for fold in folds for c in fold for r in c if r != "all"] if row == "all" else cells
    within = [auc(c[0], c[1]) for c in parts if c[0] and c[1]]
    made = sum(c[3] for c in cells)
    dormant = sum(
        int(r.get("dormant") or 0)
        for res in results
        for r in res["summary"]["rows"]
        if str(r["round"]) == row
    )
    fold_rows = [_fold_row(res, row) for res in results]
    having = [fr for fr in fold_rows if fr]
    return {
        "round": row,
        "debates": len(cells),
        "honest": len(hon),
        "adversarial": len(adv),
        "dormant": dormant,
        "auc": auc(hon, adv) if hon and adv else None,
        "auc_ci": None,
        "fold_aucs": [fr.get("auc") if fr else None for fr in fold_rows],
        "fold_mean_auc": fold_mean([fr.get("auc") for fr in having]) if having else None,
        "fold_mean_auc_ci": None,
        "auc_in_debate": float(np.mean(within)) if within else None,
        "adacc": sum(c[2] for c in cells) / made if made else None,
        "all_reliable": sum(c[4] for c in cells) / made if made else None,
        "probe_auc": fold_mean([fr.get("probe_auc") for fr in having]) if having else None,
        "real_probe_auc": fold_mean([fr.get("real_probe_auc") for fr in having]) if having else None,
    }


def _fill_intervals(rows: list[PooledRow], folds: list[list[dict[str, Cell]]], seed: int, draws: int) -> None:
    """Each row's `auc_ci` and `fold_mean_auc_ci`: the pooled AUC and the folds' mean AUC over debates drawn
    with replacement within each fold."""
    rng = np.random.default_rng([seed, 38])
    picks = [rng.integers(len(f), size=(draws, len(f))) if f else None for f in folds]
    for prow in rows:
        if prow["auc"] is None:
            continue
        pooled, means = [], []
        for d in range(draws):
            got = [
                [fold[int(i)][prow["round"]] for i in pick[d] if prow["round"] in fold[int(i)]]
                for fold, pick in zip(folds, picks, strict=True)
                if pick is not None
            ]
            own = [a for cells in got if cells and (a := _cells_auc(cells)) is not None]
            every = _cells_auc([c for cells in got for c in cells])
            if every is not None:
                pooled.append(every)
            if own and len(own) == len(got):  # a fold without both roles in this draw: no mean of all folds
                means.append(float(np.mean(own)))
        if pooled:
            prow["auc_ci"] = _interval(pooled)
        if means and prow["fold_mean_auc"] is not None:
            prow["fold_mean_auc_ci"] = _interval(means)


def _cells_auc(cells: Sequence[Cell]) -> float | None:
    """The AUC of honest over adversarial credits in `cells` (`texts._rank_auc`, the fast path of
    `credit.auc` the intervals' many draws need); None without both roles."""
    hon = [x for c in cells for x in c[0]]
    adv = [x for c in cells for x in c[1]]
    return _rank_auc(np.r_[np.ones(len(hon)), np.zeros(len(adv))], np.asarray(hon + adv, dtype=float))


def _margin_ci(folds: list[list[dict[str, Cell]]], seed: int, draws: int) -> list[float] | None:
    """95 % interval of the decision row's ADAcc minus the all-reliable detector's, debates drawn with
    replacement within each fold."""
    per = [
        np.asarray([(c["decision"][2] - c["decision"][4], c["decision"][3]) for c in f if "decision" in c])
        for f in folds
    ]
    if not any(p.size for p in per):
        return None
    rng = np.random.default_rng([seed, 39])
    vals = np.zeros(draws)
    for d in range(draws):
        diff = made = 0.0
        for p in per:
            if p.size:
                pick = p[rng.integers(len(p), size=len(p))]
                diff += pick[:, 0].sum()
                made += pick[:, 1].sum()
        vals[d] = diff / made if made else np.nan
    lo, hi = np.nanpercentile(vals, [2.5, 97.5])
    return [float(lo), float(hi)]


def pool_replays(folds: FoldFiles, seed: int = 0, draws: int = DRAWS) -> ReplayPool:
    """The folds' replays joined (module docstring); `folds` as `read_fold_files` returns them."""
    results = [cast(dict[str, Any], res) for _, res in folds]
    cells = [[_cells(d, res.get("run_dir", "?")) for d in res["debates"]] for res in results]
    names = sorted({row for fold in cells for c in fold for row in c}, key=_row_key)
    rows = [_pooled_row(row, cells, results) for row in names]
    _fill_intervals(rows, cells, seed, draws)
    agents = [int(res["summary"]["agents"]) for res in results]
    fold_adacc = [res["summary"].get("adacc") for res in results]
    fold_rel = [res["summary"].get("adacc_all_reliable") for res in results]
    decision = next((r for r in rows if r["round"] == "decision"), None)
    margin = (
        None
        if decision is None or decision["adacc"] is None or decision["all_reliable"] is None
        else decision["adacc"] - decision["all_reliable"]
    )
    k_of = folds[0][0].of
    first = results[0]
    return {
        "kind": "replay",
        "folds": k_of,
        "missing_folds": sorted(set(range(1, k_of + 1)) - {f.k for f, _ in folds}),
        "model": first.get("model"),
        "method": first.get("method"),
        "embedder": first.get("embedder"),
        "runs": [str(res.get("run_dir")) for res in results],
        "debates": sum(int(res["summary"]["debates"]) for res in results),
        "agents": sum(agents),
        "rows": rows,
        "adacc": _weighted(fold_adacc, agents),
        "adacc_all_reliable": _weighted(fold_rel, agents),
        "fold_adacc": fold_adacc,
        "fold_all_reliable": fold_rel,
        "decision_margin": margin,
        "decision_margin_ci": _margin_ci(cells, seed, draws) if margin is not None else None,
    }


def _n(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}"


def _ci(ci: list[float] | None) -> str:
    return f"[{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "-"


def _label(row: str) -> str:
    return "T+1" if row == "decision" else row


def format_replay_pool(res: ReplayPool) -> str:
    """Plain text: the pooled rows with the folds' own AUCs, the ADAcc against the all-reliable detector,
    and the rows against issue 38's AUC target."""
    who = ", ".join(str(x) for x in (res["model"] and f"model {res['model']}", res["method"]) if x)
    lines = [
        f"replay, cross-fit: {len(res['runs'])} of {res['folds']} folds ({who}, embedder {res['embedder']}); "
        f"{res['debates']} real debates, each replayed by the policy trained on the fold's profile, fitted "
        "without it",
    ]
    if res["missing_folds"]:
        lines.append(
            f"  folds missing: {', '.join(map(str, res['missing_folds']))} (pooled over the folds given)"
        )
    lines += [f"  fold {i}: {run}" for i, run in enumerate(res["runs"], 1)]
    own_head = "folds' own AUC"
    width = max(len(own_head), 6 * len(res["runs"])) + 2
    lines += [
        "",
        f"  {'t':<5}{'deb':>5}{'hon':>6}{'adv':>6}{'dorm':>6}{'AUC':>8}{'95 %':>17}{'folds mean':>12}"
        f"{'95 %':>17}  {own_head:<{width}}{'AUC/deb':>8}{'ADAcc':>7}{'all-rel':>8}{'probe':>7}{'real':>7}",
    ]
    for r in res["rows"]:
        own = "".join(f"{_n(x):<6}" for x in r["fold_aucs"])
        lines.append(
            f"  {_label(r['round']):<5}{r['debates']:>5}{r['honest']:>6}{r['adversarial']:>6}"
            f"{r['dormant']:>6}{_n(r['auc']):>8}{_ci(r['auc_ci']):>17}{_n(r['fold_mean_auc']):>12}"
            f"{_ci(r['fold_mean_auc_ci']):>17}  {own:<{width}}{_n(r['auc_in_debate']):>8}"
            f"{_pct(r['adacc']):>7}{_pct(r['all_reliable']):>8}{_n(r['probe_auc']):>7}{_n(r['real_probe_auc']):>7}"
        )
    lines += [
        "",
        "  (AUC: over every debate, its credits from its own fold's policy, honest above adversarial = 1;"
        " folds mean: the mean of the folds' own AUCs, each policy on its own debates, what one policy"
        " reaches (the pooled AUC also charges the policies' different scales); 95 %: debates drawn with"
        " replacement within each fold; probe, real: the folds' mean of `replay --probe`'s columns)",
    ]
    folds_a = ", ".join(
        f"{_pct(a)} / {_pct(b)}" for a, b in zip(res["fold_adacc"], res["fold_all_reliable"], strict=True)
    )
    lines.append(
        f"  paper ADAcc (decision voters) {_pct(res['adacc'])} %, all-reliable detector "
        f"{_pct(res['adacc_all_reliable'])} %, over the folds' {res['agents']} agents (folds: {folds_a})"
    )
    if res["decision_margin"] is not None:
        ci = res["decision_margin_ci"]
        span = f" [{100 * ci[0]:+.1f}, {100 * ci[1]:+.1f}]" if ci else ""
        lines.append(
            f"  decision's ADAcc minus the all-reliable detector's    "
            f"{100 * res['decision_margin']:+.1f} points{span}"
        )
    after = [r for r in res["rows"] if r["round"] != "all" and r["adversarial"]]
    verdicts = (
        ("the folds' mean AUC", [(r, r["fold_mean_auc"]) for r in after]),
        ("the pooled AUC", [(r, r["auc"]) for r in after]),
    )
    for what, vals in verdicts:
        met = [_label(r["round"]) for r, v in vals if v is not None and v >= AUC_TARGET]
        short = [_label(r["round"]) for r, v in vals if v is not None and v < AUC_TARGET]
        lines.append(
            f"  {what} >= {AUC_TARGET} at the rows after onset: met at {', '.join(met) or 'none'}; "
            f"under it at {', '.join(short) or 'none'}"
        )
    return "\n".join(lines)


def _interval(vals: Sequence[float]) -> list[float]:
    return list(_percentiles(vals, 0.95))
