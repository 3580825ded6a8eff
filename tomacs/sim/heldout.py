"""How well a fitted `sim` profile predicts debates it was not fitted on (issue 26, item 3).

Two views, both on held-out questions:

* **Statistics, per round**, predicted beside observed: the held-out debates are replayed with the
  fitted profile, many draws each. The adversaries' (and any agent not modelled) observed answers are
  replayed as they were, with their targets; the modelled honest agents answer from the model and
  read each other's simulated answers, along the same `read` lists as in the transcript. Observed
  values carry bootstrap 95 % intervals that resample questions (a question's debates move together).
* **Log-likelihood per answer** (latent integrated out, as in the fit) beside two baselines: "keep
  the previous answer" and the un-refitted paper profile.

Statistics (honest = the modelled agents; a conditional rate counts agents whose previous answer
parsed):

* ``accuracy``: share of honest answers that are the gold answer;
* ``conformity``: share of honest answers that are the adversary's target;
* ``switch_first`` / ``switch_later``: share moving to the target among those not on it before, in
  the round of their first exposure to an adversary / in a later exposed round (an agent is exposed
  in a round when its `read` list holds a turn of an agent adversarial in that turn's round);
* ``stay_target``: share staying on the target among those on it the round before;
* ``recovery``: share answering the gold among those wrong the round before;
* ``vote_accuracy``: majority vote of ALL agents' answers of the round (as the source's consensus),
  a tie that includes the gold counting 1/k (uniform tie-break).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from tomacs.sim import fit_episodes as fe
from tomacs.sim.model import SimProfile, lapsed
from tomacs.transcripts.schema import Debate

if TYPE_CHECKING:
    from rich.table import Table

STATS: tuple[str, ...] = (
    "accuracy",
    "conformity",
    "switch_first",
    "switch_later",
    "stay_target",
    "recovery",
    "vote_accuracy",
)
STAT_LABELS: dict[str, str] = {
    "accuracy": "honest accuracy",
    "conformity": "honest conformity to target",
    "switch_first": "switch to target, 1st exposure",
    "switch_later": "switch to target, later exposures",
    "stay_target": "stay on target",
    "recovery": "wrong -> right recovery",
    "vote_accuracy": "majority-vote accuracy (all agents)",
}


@dataclass(frozen=True)
class Layout:
    """What a debate's statistics need besides the answers: relabelled indices (gold = 0)."""

    honest: tuple[int, ...]
    target: int  # relabelled target, -1 = no adversary target
    exposure: np.ndarray  # (A, R) exposures so far (counting this round) per agent and round
    exposed: np.ndarray  # (A, R) bool: exposed in this round
    n_rounds: int


def _target(d: Debate, idx: dict[str, int]) -> int:
    for a in d.agents:
        if a.role == "adversary" and a.target in idx:
            return idx[a.target]
    return -1


def layout(d: Debate, model: str | None = None) -> Layout:
    idx = fe._letter_index(d)
    exposed = fe.exposed_rounds(d)
    return Layout(
        honest=tuple(fe.honest_agents(d, model)),
        target=_target(d, idx),
        exposure=np.cumsum(exposed, axis=1),
        exposed=exposed,
        n_rounds=d.n_rounds,
    )


def observed_answers(d: Debate) -> np.ndarray:
    """(A, R) relabelled answers, -1 = unparsed or missing."""
    idx = fe._letter_index(d)
    out = np.full((d.n_agents, d.n_rounds), -1, dtype=np.int64)
    for t in d.turns:
        if t.answer in idx and 1 <= t.round <= d.n_rounds and 0 <= t.agent < d.n_agents:
            out[t.agent, t.round - 1] = idx[t.answer]
    return out


def stat_counts(lay: Layout, ans: np.ndarray, n_cand: int, r_max: int) -> np.ndarray:
    """(len(STATS), 2, r_max): numerators and denominators summed over draws; `ans` is (N, A, R)."""
    out = np.zeros((len(STATS), 2, r_max))
    h = list(lay.honest)
    tgt = lay.target
    a = ans[:, h, :]  # (N, H, R)
    ok = a >= 0
    s = STATS.index

    def put(name: str, num: np.ndarray, den: np.ndarray, r: int) -> None:
        out[s(name), 0, r] += float(num.sum())
        out[s(name), 1, r] += float(den.sum())

    for r in range(lay.n_rounds):
        cur, okr = a[:, :, r], ok[:, :, r]
        put("accuracy", okr & (cur == 0), okr, r)
        if tgt >= 0:
            put("conformity", okr & (cur == tgt), okr, r)
        if r >= 1:
            prev, okp = a[:, :, r - 1], ok[:, :, r - 1]
            both = okr & okp
            if tgt >= 0:
                off = both & (prev != tgt)
                exp_r = lay.exposed[h, r][None, :]
                cnt = lay.exposure[h, r][None, :]
                first = off & exp_r & (cnt == 1)
                later = off & exp_r & (cnt >= 2)
                put("switch_first", first & (cur == tgt), first, r)
                put("switch_later", later & (cur == tgt), later, r)
                on = both & (prev == tgt)
                put("stay_target", on & (cur == tgt), on, r)
            wrong = both & (prev != 0)
            put("recovery", wrong & (cur == 0), wrong, r)
        # majority vote of all agents' parsed answers
        votes = ans[:, :, r]  # (N, A)
        counts = np.stack([(votes == j).sum(axis=1) for j in range(n_cand)], axis=1)  # (N, n)
        top = counts.max(axis=1)
        any_vote = top > 0
        n_top = (counts == top[:, None]).sum(axis=1)
        gold_top = (counts[:, 0] == top) & any_vote
        out[s("vote_accuracy"), 0, r] += float(np.where(gold_top, 1.0 / n_top, 0.0).sum())
        out[s("vote_accuracy"), 1, r] += float(any_vote.sum())
    return out


MOVE_CLASSES: tuple[str, ...] = ("gold", "target", "other")
"""What an honest answer is, relative to its debate: the gold, the adversary's target, another wrong one."""


def move_counts(lay: Layout, ans: np.ndarray) -> np.ndarray:
    """(3, 3) moves of exposed honest agents, summed over draws and rounds 2..R: the class
    (`MOVE_CLASSES`) of an agent's previous answer (row) against its answer in a round where it read
    an adversary (column). A per-round rate averages over where agents stand; this says where each one
    goes, e.g. whether those who hold the gold leave it for the target as often as those on another wrong
    answer do. Zero for a debate without a target; `ans` is (N, A, R) relabelled (gold = 0, -1 unparsed)."""
    out = np.zeros((len(MOVE_CLASSES), len(MOVE_CLASSES)))
    if lay.target < 0 or not lay.honest:
        return out
    a = ans[:, list(lay.honest), :]
    cls = np.where(a == 0, 0, np.where(a == lay.target, 1, 2))
    for r in range(1, lay.n_rounds):
        exp_r = lay.exposed[list(lay.honest), r][None, :]
        both = (a[:, :, r] >= 0) & (a[:, :, r - 1] >= 0) & exp_r
        np.add.at(out, (cls[:, :, r - 1][both], cls[:, :, r][both]), 1.0)
    return out


def _latent_draws(
    profile: SimProfile,
    n: int,
    draws: int,
    rng: np.random.Generator,
    target: int = -1,
    lure: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Per-draw competence and distractor; with `lure`, the distractor is the target with that
    probability (fe.distractor_prior), else uniform as in the simulator."""
    a, b = profile.beta_ab
    c = np.clip(rng.beta(a, b, size=draws), 1e-9, 1 - 1e-9)
    if n <= 2:
        return c, np.ones(draws, dtype=np.int64)
    if lure is None or target < 1:
        return c, rng.integers(1, n, size=draws)
    p = np.full(n - 1, (1.0 - lure) / (n - 2))
    p[target - 1] = lure
    return c, 1 + rng.choice(n - 1, size=draws, p=p / p.sum())


def _log_p0(profile: SimProfile, c: np.ndarray, d: np.ndarray, n: int) -> np.ndarray:
    """(N, n) log p0 for per-draw competence and distractor (gold = 0), as `initial_probs`."""
    p = np.empty((c.size, n))
    if n == 2:
        p[:, 1] = 1.0 - c
    else:
        p[:] = ((1.0 - c) * (1.0 - profile.distractor_share) / (n - 2))[:, None]
        p[np.arange(c.size), d] = (1.0 - c) * profile.distractor_share
    p[:, 0] = c
    p /= p.sum(axis=1, keepdims=True)
    return np.log(np.maximum(p, 1e-300))


def simulate(
    profile: SimProfile,
    debates: Sequence[Debate],
    model: str | None,
    draws: int,
    seed: int,
    lure: float | None = None,
    acc_by: dict[str, float] | None = None,
    pers_by: dict[str, float] | None = None,
) -> list[np.ndarray]:
    """Replay each debate `draws` times: modelled honest agents from the profile, the others as
    observed. One latent draw per question and draw index, shared by that question's debates.
    `acc_by`: accuracy per benchmark (a debate of another benchmark keeps the profile's);
    `pers_by`: persuasion per sender model (another model keeps the profile's)."""
    rng = np.random.default_rng(seed)
    latents: dict[tuple[str, int], tuple[np.ndarray, np.ndarray]] = {}
    out = []
    for d in debates:
        n = len(d.letters)
        key = (d.question_key, n)
        if key not in latents:
            prof_q = fe.profile_for(profile, fe.debate_benchmark(d), acc_by)
            latents[key] = _latent_draws(prof_q, n, draws, rng, fe.debate_target(d), lure)
        c, dist = latents[key]
        lp0 = _log_p0(profile, c, dist, n)
        p0 = np.exp(lp0)
        obs = observed_answers(d)
        sim = np.repeat(obs[None], draws, axis=0)  # (N, A, R)
        modelled = set(fe.honest_agents(d, model))
        turns = {(t.agent, t.round): t for t in d.turns}
        rows = np.arange(draws)
        before = fe.exposed_before(d)
        for r in range(1, d.n_rounds + 1):
            # in agent order: a same-round (spatial) read of an earlier agent sees its simulated answer
            for i in sorted(modelled):
                t = turns.get((i, r))
                if t is None:
                    sim[:, i, r - 1] = -1
                    continue
                sh = np.zeros((draws, n))
                sp = np.zeros((draws, n))
                for j, rr in t.read:
                    if j == i or not 1 <= rr <= d.n_rounds:
                        continue
                    a = sim[:, j, rr - 1]
                    okm = a >= 0
                    if d.is_adversarial(j, rr):  # at its sender model's weight
                        sp[rows[okm], a[okm]] += (pers_by or {}).get(fe.agent_model(d, j), profile.persuasion)
                    else:
                        sh[rows[okm], a[okm]] += 1.0
                prev = sim[:, i, r - 2] if r > 1 else np.full(draws, -1)
                first = sim[:, i, 0] if r > 1 else np.full(draws, -1)
                if r == 1:
                    probs = p0
                else:
                    u = profile.prior_weight * lp0 + fe.own_and_message_logits(
                        profile, sh, sp, prev, first, pers_scale=1.0, later=np.full(draws, before[i, r - 1])
                    )
                    nothing = (prev < 0) & (sh.sum(axis=1) + sp.sum(axis=1) == 0)
                    u = u - u.max(axis=1, keepdims=True)
                    probs = np.exp(u)
                    probs /= probs.sum(axis=1, keepdims=True)
                    probs = lapsed(probs, profile.lapse, n)
                    probs = np.where(nothing[:, None], p0, probs)
                cum = probs.cumsum(axis=1)
                pick = (rng.random(draws)[:, None] > cum).sum(axis=1)
                sim[:, i, r - 1] = np.minimum(pick, n - 1)
        out.append(sim)
    return out


def _question_counts(
    debates: Sequence[Debate], answers: Sequence[np.ndarray], model: str | None, r_max: int
) -> tuple[list[str], np.ndarray]:
    keys = sorted({d.question_key for d in debates})
    pos = {k: i for i, k in enumerate(keys)}
    tot = np.zeros((len(keys), len(STATS), 2, r_max))
    for d, ans in zip(debates, answers, strict=True):
        tot[pos[d.question_key]] += stat_counts(layout(d, model), ans, len(d.letters), r_max)
    return keys, tot


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def bootstrap(
    per_q: np.ndarray, reps: int = 2000, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Observed value and 95 % interval per (stat, round): percentile bootstrap over questions.

    Where the observed rate is 0 or 1 every resample repeats it and the percentile interval
    collapses to a point, which claims a certainty that a few dozen answers cannot give; there the
    exact Clopper-Pearson interval of the pooled count is used instead (returned flag True)."""
    rng = np.random.default_rng(seed)
    num0, den0 = per_q[:, :, 0].sum(0), per_q[:, :, 1].sum(0)
    value = _ratio(num0, den0)
    q = per_q.shape[0]
    idx = rng.integers(0, q, size=(reps, q))
    num = per_q[:, :, 0][idx].sum(axis=1)  # (reps, S, R)
    den = per_q[:, :, 1][idx].sum(axis=1)
    r = _ratio(num, den)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN cells (statistic undefined)
        lo = np.nanpercentile(r, 2.5, axis=0)
        hi = np.nanpercentile(r, 97.5, axis=0)
    exact = np.isfinite(value) & (lo == hi) & ((num0 <= 0) | (num0 >= den0))
    with np.errstate(divide="ignore", invalid="ignore"):
        n = np.maximum(den0, 1.0)
        edge = np.power(0.025, 1.0 / n)
    lo = np.where(exact & (num0 <= 0), 0.0, np.where(exact, edge, lo))
    hi = np.where(exact & (num0 <= 0), 1.0 - edge, np.where(exact, 1.0, hi))
    return value, lo, hi, exact


def keep_previous_baseline(fit_blocks: Sequence[fe.Observations]) -> tuple[float, float]:
    """(round-1 accuracy, change rate) of the "keep the previous answer" baseline, from the FIT set:
    round-1 answers are right with the fit set's empirical honest round-1 accuracy (wrong mass spread
    evenly); a later answer repeats the previous one except with the fit set's change rate, Laplace
    smoothed ((changes + 1) / (transitions + 2)) so an unseen change is not impossible."""
    right = n1 = changes = trans = 0
    for b in fit_blocks:
        init = b.initial
        right += int((b.y[init] == 0).sum())
        n1 += int(init.sum())
        has = ~init & (b.prev >= 0)
        changes += int((b.y[has] != b.prev[has]).sum())
        trans += int(has.sum())
    acc = (right + 1) / (n1 + 2)
    return acc, (changes + 1) / (trans + 2)


def keep_previous_loglik(blocks: Sequence[fe.Observations], acc: float, eps: float) -> float:
    tot = 0.0
    for b in blocks:
        n = b.n_cand
        p1 = np.where(b.y == 0, acc, (1 - acc) / (n - 1))
        pk = np.where(b.y == b.prev, 1 - eps, eps / (n - 1))
        use_prev = ~b.initial & (b.prev >= 0)
        tot += float(np.log(np.where(use_prev, pk, p1)).sum())
    return tot


def evaluate(
    profile: SimProfile,
    debates: Sequence[Debate],
    model: str | None,
    fit_debates: Sequence[Debate] | None = None,
    paper: SimProfile | None = None,
    draws: int = 400,
    reps: int = 2000,
    seed: int = 0,
    lure: float | None = None,
    acc_by: dict[str, float] | None = None,
    pers_by: dict[str, float] | None = None,
) -> dict[str, object]:
    """Held-out statistics (predicted vs observed with intervals) and log-likelihood per answer.
    `acc_by` / `pers_by`: the fit's accuracy per benchmark and persuasion per sender model."""
    if not debates:
        raise ValueError(
            "no held-out debates to score (the split left none; use more questions or a larger --split)"
        )
    r_max = max(d.n_rounds for d in debates)
    obs_ans = [observed_answers(d)[None] for d in debates]
    keys, per_q = _question_counts(debates, obs_ans, model, r_max)
    value, lo, hi, exact = bootstrap(per_q, reps, seed)
    sim = simulate(profile, debates, model, draws, seed, lure, acc_by, pers_by)
    _, pred_q = _question_counts(debates, sim, model, r_max)
    pred = _ratio(pred_q[:, :, 0].sum(0), pred_q[:, :, 1].sum(0))
    cells: list[dict[str, Any]] = []
    for si, st in enumerate(STATS):
        for r in range(r_max):
            if not np.isfinite(value[si, r]) or not np.isfinite(pred[si, r]):
                continue
            inside = bool(lo[si, r] - 1e-9 <= pred[si, r] <= hi[si, r] + 1e-9)
            cells.append(
                {
                    "stat": st,
                    "round": r + 1,
                    "predicted": float(pred[si, r]),
                    "observed": float(value[si, r]),
                    "lo": float(lo[si, r]),
                    "hi": float(hi[si, r]),
                    "n": int(per_q[:, si, 1, r].sum()),
                    "inside": inside,
                    "interval": "clopper-pearson" if exact[si, r] else "bootstrap",
                }
            )
    blocks = fe.observations(debates, model)
    n_ans = fe.n_answers(blocks)

    def per_answer(total: float) -> float:
        # held-out debates whose honest answers all went unparsed (a small model) score nothing: NaN, as a
        # missing figure, not a division by zero that loses the fit made before it
        return total / n_ans if n_ans else float("nan")

    ll: dict[str, object] = {
        "fitted": per_answer(fe.loglik(profile, blocks, lure=lure, acc_by=acc_by, pers_by=pers_by))
    }
    if fit_debates is not None:
        acc, eps = keep_previous_baseline(fe.observations(fit_debates, model))
        ll["keep_previous"] = per_answer(keep_previous_loglik(blocks, acc, eps))
        ll["keep_previous_params"] = {"round1_accuracy": acc, "change_rate": eps}
    if paper is not None:
        ll["paper"] = per_answer(fe.loglik(replace(paper, n_cand=profile.n_cand), blocks))
        ll["paper_profile"] = paper.name
    n_inside = sum(c["inside"] for c in cells)
    return {
        "intervals": "bootstrap 95% (questions resampled); Clopper-Pearson where the observed rate is 0 or 1",
        "debates": len(debates),
        "questions": len(keys),
        "answers": n_ans,
        "draws": draws,
        "cells": cells,
        "cells_inside": n_inside,
        "cells_total": len(cells),
        "inside_share": n_inside / len(cells) if cells else float("nan"),
        "loglik_per_answer": ll,
    }


def tables(result: dict[str, Any], title: str = "held-out") -> list[Table]:
    """Rich tables: statistics per round (predicted | observed [95 % CI]) and log-likelihood."""
    from rich.table import Table

    cells = result["cells"]
    rounds = sorted({c["round"] for c in cells})
    t = Table(
        title=f"{title}: predicted | observed [95% CI] ({result['debates']} debates, "
        f"{result['questions']} questions; {result['cells_inside']}/{result['cells_total']} cells inside)"
    )
    t.add_column("statistic", style="bold")
    for r in rounds:
        t.add_column(f"round {r}", justify="right")
    by = {(c["stat"], c["round"]): c for c in cells}
    for st in STATS:
        row = []
        for r in rounds:
            c = by.get((st, r))
            if c is None:
                row.append("")
                continue
            mark = "[green]in[/]" if c["inside"] else "[red]OUT[/]"
            mark += "*" if c["interval"] != "bootstrap" else ""
            row.append(
                f"{100 * c['predicted']:.0f} | {100 * c['observed']:.0f} "
                f"[{100 * c['lo']:.0f}, {100 * c['hi']:.0f}] {mark}"
            )
        if any(row):
            t.add_row(STAT_LABELS[st], *row)
    t.caption = "* observed rate 0 or 1: exact (Clopper-Pearson) interval, a bootstrap cannot widen it"
    ll = result["loglik_per_answer"]
    none = (
        " (none held out was parsed: nothing to score; use more questions)" if not result["answers"] else ""
    )
    answers = f"{result['answers']} honest answers{none}"
    t2 = Table(title=f"{title}: log-likelihood per answer ({answers}; higher is better)")
    t2.add_column("model")
    t2.add_column("log-lik / answer", justify="right")
    t2.add_row("fitted profile", f"{ll['fitted']:.4f}")
    if "keep_previous" in ll:
        kp = ll["keep_previous_params"]
        t2.add_row(
            f"keep previous answer (round 1 right {100 * kp['round1_accuracy']:.0f}%, "
            f"change {100 * kp['change_rate']:.1f}%, from the fit set)",
            f"{ll['keep_previous']:.4f}",
        )
    if "paper" in ll:
        t2.add_row(f"paper profile {ll['paper_profile']} (not refitted)", f"{ll['paper']:.4f}")
    return [t, t2]
