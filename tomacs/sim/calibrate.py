"""Fit the `sim` backbone's behavioural model to TodyComm Tables 7-8 and Table 2's Complete rows,
and report simulated vs paper (fitted cells, and the held-out Random rows).

The simulator is fitted to Tables 7-8 (single-agent accuracy, one persuasive sender, and 0/2/3/4
adversarial senders among six) jointly with Table 2's *Complete* rows (5 benchmarks x 3 attack
rates, simulated by the vectorised debate simulator `tomacs.sim.episodes`): the single-update
tables cannot tell apart the memory terms that only matter over several rounds (prior vs self vs
anchor weight, distractor share; docs/experiments/2026-11-23-sim-multiround-diagnosis.md). Every
other table (Table 2's Random rows, learned methods, Tables 3-6, 9, 10) is an outcome of running
methods on the fitted simulator, never a fitting target; `--check` prints the Random rows as
held-out predictions.

The two experiments, as simulated here (truth index 0, `n_cand` candidates, one question latent
shared by every agent on the question):

* **Table 7** (Vanilla / Attacked). Vanilla: a receiver answers on its own (`initial_probs`);
  Vanilla = P(correct). Attacked: that same receiver, holding its own first answer, reads ONE
  message from an adversarial sender that backs a uniformly random wrong target with the
  persuasive suffix, and answers again (`update_probs(prev=own answer, [(target, True)])`).
* **Table 8** (k = 0/2/3/4 adversarial of 6 senders). A receiver, holding its own first answer,
  reads 6 messages: k adversarial ones (persuasive) backing one shared uniformly random wrong
  target, and 6 - k honest ones that are other agents' own first answers on the same question
  (drawn from `initial_probs` with the shared latent). "0 adv" is therefore a receiver reading six
  honest senders, which is why it is higher than Vanilla.

Fitting: the five non-trivial cells per benchmark (Attacked, 0/2/3/4 adv; Vanilla holds by
construction because mean competence = Vanilla) are computed as EXACT expectations over every
discrete draw (own answer, target, honest senders' answers via multinomial enumeration) and a
fixed quantile grid over competence (common random numbers through the inverse CDF), so the
objective is smooth and scipy's least squares can fit it. Verification is by SAMPLED simulation
through the public model functions (`simulate_cells`), the same path the backbone uses.
"""

from __future__ import annotations

import datetime as _dt
import itertools
import math
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from scipy import optimize, special

from tomacs.sim.episodes import make_draws, table2_cells
from tomacs.sim.model import (
    PROFILE_NAMES,
    SimProfile,
    adversarial_answer,
    default_profiles_path,
    initial_probs,
    load_profiles,
    sample_index,
    sample_latent,
    sample_wrong,
    update_probs,
)

# TodyComm (shared/papers/todycomm.txt) Appendix E.1, Table 7 "Performance degradation under
# adversarial attack for a single agent": (Vanilla, Attacked), accuracy in %.
PAPER_TABLE7: dict[str, tuple[float, float]] = {
    "mmlu": (70.60, 37.25),
    "arc_c": (86.85, 56.19),
    "gsm8k": (90.77, 60.90),
    "openbookqa": (84.00, 32.67),
    "medqa": (65.17, 50.83),
}
# TodyComm Appendix E.1, Table 8 "Task accuracy across benchmarks with varying adversarial counts
# among 6 agents": (0 adv, 2 adv, 3 adv, 4 adv), accuracy in %.
PAPER_TABLE8: dict[str, tuple[float, float, float, float]] = {
    "mmlu": (76.90, 69.03, 56.63, 45.93),
    "arc_c": (89.30, 81.40, 75.13, 65.70),
    "gsm8k": (90.73, 70.93, 62.40, 50.03),
    "openbookqa": (86.83, 76.00, 66.00, 53.50),
    "medqa": (70.13, 61.17, 56.33, 52.50),
}
# Candidate counts the fit assumes: 4 options for the MC benchmarks (MedQA: the 4-option US set),
# 5 for GSM8K (gold plus four plausible wrong numbers, built by the backbone glue).
N_CAND: dict[str, int] = {"mmlu": 4, "arc_c": 4, "gsm8k": 5, "openbookqa": 4, "medqa": 4}

CELLS: tuple[str, ...] = ("vanilla", "attacked", "adv0", "adv2", "adv3", "adv4")
N_SENDERS = 6
ADV_COUNTS: tuple[int, ...] = (0, 2, 3, 4)
TOLERANCE_POINTS = 3.0
TOLERANCE_T2_FITTED = 4.0  # Table 2 Complete rows (fitted)
TOLERANCE_T2_HELD_OUT = 6.0  # Table 2 Random rows (held out, predictions)
ATTACKS: tuple[str, ...] = ("lt50", "eq50", "gt50")
FIT_EPISODES = 3000  # debates per Table 2 cell inside the fit (common random numbers)
CHECK_EPISODES = 20000  # debates per Table 2 cell in `--check`
_W78 = 2.0  # Tables 7-8 residuals weigh this much more than Table 2's in the joint fit
_HINGE78 = 2.0  # Tables 7-8 cells beyond this many points (expected) are penalised steeply ...
_W_HINGE = 10.0  # ... with this weight, so sampling noise (±1) keeps them within ±3
_DIFF_STEP = 0.08  # finite-difference step (relative): large enough to see through sampling steps

# TodyComm Table 2 (gpt-4.1-nano, 6 agents, 4 rounds), accuracy in %, per method / benchmark /
# attack rate (<50 %, =50 %, >50 %). Complete rows are fitted; Random rows are held out.
PAPER_TABLE2: dict[str, dict[str, dict[str, float]]] = {
    "complete": {
        "mmlu": {"lt50": 64.94, "eq50": 46.63, "gt50": 41.39},
        "arc_c": {"lt50": 81.17, "eq50": 67.67, "gt50": 64.33},
        "gsm8k": {"lt50": 81.0, "eq50": 75.46, "gt50": 66.34},
        "openbookqa": {"lt50": 67.83, "eq50": 42.5, "gt50": 37.33},
        "medqa": {"lt50": 59.67, "eq50": 43.67, "gt50": 41.75},
    },
    "random": {
        "mmlu": {"lt50": 59.92, "eq50": 45.97, "gt50": 42.05},
        "arc_c": {"lt50": 79.15, "eq50": 64.1, "gt50": 64.88},
        "gsm8k": {"lt50": 83.01, "eq50": 76.33, "gt50": 68.26},
        "openbookqa": {"lt50": 64.33, "eq50": 42.17, "gt50": 36.33},
        "medqa": {"lt50": 58.33, "eq50": 48.33, "gt50": 42.0},
    },
}

# Free parameters, their bounds and the starting point. The lower bound of `persuasion` keeps the
# design's premise (a persuasive message weighs more than an honest one) rather than a target.
_FREE: tuple[str, ...] = (
    "concentration",
    "distractor_share",
    "prior_weight",
    "self_weight",
    "share_weight",
    "count_weight",
    "persuasion",
    "anchor_weight",
    "decision_weight",
    "compliance",
)
# Fitted by default: all but `compliance`. Freed in the joint fit it came out at 0.94-1.00 on every
# profile (2026-11-24), and fixing it at 0.7 or 0.85 moved ARC-C's lt50 miss by only 2-3 points while
# Tables 7-8 pushed back: the data do not ask for it, so the shipped profiles keep compliant
# adversaries (1) and `fit_profile(free=...)` can still fit it (docs/deviations.md, sim section).
_FITTED: tuple[str, ...] = tuple(k for k in _FREE if k != "compliance")
_LOWER = np.array([0.3, 0.0, 0.05, 0.0, 0.0, 0.0, 1.05, 0.0, 0.05, 0.3])
_UPPER = np.array([80.0, 1.0, 6.0, 10.0, 20.0, 6.0, 12.0, 10.0, 5.0, 1.0])
_STARTS = (
    np.array([3.0, 0.5, 1.0, 1.0, 2.0, 0.3, 2.0, 0.0, 1.0, 1.0]),
    np.array([1.5, 0.6, 0.6, 0.5, 4.0, 0.1, 3.0, 0.0, 1.0, 1.0]),
    np.array([8.0, 0.4, 1.5, 2.0, 1.0, 0.6, 1.5, 0.0, 1.0, 1.0]),
)
_RIDGE = 1e-3  # tiny pull toward the first start: picks one solution where the cells underdetermine


def paper_cells(name: str) -> dict[str, float]:
    """The six paper numbers (in %) for one benchmark, keyed like `simulate_cells`."""
    v, a = PAPER_TABLE7[name]
    t8 = PAPER_TABLE8[name]
    return {"vanilla": v, "attacked": a, **{f"adv{k}": x for k, x in zip(ADV_COUNTS, t8, strict=True)}}


def _compositions(total: int, parts: int) -> np.ndarray:
    """All count vectors of `parts` non-negative integers summing to `total` (stars and bars)."""
    rows = []
    for bars in itertools.combinations(range(total + parts - 1), parts - 1):
        prev, row = -1, []
        for b in bars:
            row.append(b - prev - 1)
            prev = b
        row.append(total + parts - 2 - prev)
        rows.append(row)
    return np.array(rows, dtype=float).reshape(-1, parts)


class _Expected:
    """Exact expected cell values (in %) for a parameter vector, on a fixed competence grid.

    Truth is index 0 and the distractor index 1; the target ranges over all wrong indices with
    equal probability, which covers both "target = distractor" and "target = another wrong one".
    """

    def __init__(self, n_cand: int, accuracy: float, grid: int = 96) -> None:
        self.n = n_cand
        self.acc = accuracy
        self.u = (np.arange(grid) + 0.5) / grid  # common random numbers for competence
        self.comps = {k: _compositions(N_SENDERS - k, n_cand) for k in ADV_COUNTS}
        self.adv_comps = {k: _compositions(k, n_cand) for k in ADV_COUNTS}
        self.log_coef = {
            k: special.gammaln(N_SENDERS - k + 1) - special.gammaln(c + 1).sum(axis=1)
            for k, c in self.comps.items()
        }

    def _p0(self, kappa: float, delta: float) -> np.ndarray:
        a, b = self.acc * kappa, (1.0 - self.acc) * kappa
        c = np.clip(special.betaincinv(a, b, self.u), 1e-9, 1 - 1e-9)
        p0 = np.empty((len(c), self.n))
        p0[:, 0] = c
        if self.n == 2:
            p0[:, 1] = 1 - c
        else:
            p0[:, 1] = (1 - c) * delta
            p0[:, 2:] = ((1 - c) * (1 - delta) / (self.n - 2))[:, None]
        return p0

    def cells(self, x: np.ndarray) -> dict[str, float]:
        kappa, delta, beta, alpha, s, kc, rho = (float(v) for v in x[:7])
        # the receiver holds its own FIRST answer, so its previous answer is its first one and the
        # self and anchor weights act together: these tables identify only their sum
        alpha += float(x[7]) if len(x) > 7 else 0.0
        pi = float(x[9]) if len(x) > 9 else 1.0  # compliance of the adversarial senders
        n = self.n
        p0 = self._p0(kappa, delta)  # (G, n)
        logp = np.log(p0)
        eye = np.eye(n)
        out = {"vanilla": 100.0 * float(p0[:, 0].mean())}
        # logits base: (G, prev, n)
        base = beta * logp[:, None, :] + alpha * eye[None, :, :]
        # Table 7: one persuasive message (share 1, support rho) for target tau, or, when the
        # sender does not comply, for its own answer m ~ p0 (still persuasive).
        u = base[:, :, None, :] + (s + kc * rho) * eye[None, None, :, :]  # (G, prev, m, n)
        pm = _softmax0(u)  # (G, prev, m)
        pc = pi * pm[:, :, 1:].mean(axis=2)
        if pi < 1.0:
            pc = pc + (1.0 - pi) * (pm * p0[:, None, :]).sum(axis=2)
        out["attacked"] = 100.0 * float((p0 * pc).sum(axis=1).mean())
        for k in ADV_COUNTS:
            comps = self.comps[k]  # (K, n) honest counts
            # multinomial probability of each honest composition: (G, K)
            w = np.exp(self.log_coef[k][None, :] + (comps[None, :, :] * logp[:, None, :]).sum(-1))
            adv, pa = self._adversary_counts(k, pi, logp)  # (A, n), (G, A)
            support = comps[:, None, :] + rho * adv[None, :, :]  # (K, A, n), every sender counted
            total = (N_SENDERS - k) + k * rho
            msg = s * support / total + kc * support
            u = base[:, :, None, None, :] + msg[None, None, :, :, :]  # (G, prev, K, A, n)
            pc = _softmax0(u)  # (G, prev, K, A)
            e = np.einsum("gp,gpka->gka", p0, pc)
            e = np.einsum("gk,ga,gka->g", w, pa, e)
            out[f"adv{k}"] = 100.0 * float(e.mean())
        return out

    def _adversary_counts(self, k: int, pi: float, logp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """What k adversarial senders say, as count vectors a over the candidates, and P(a) per
        competence grid point: c of them comply (Binomial(k, pi)) and back the shared target tau
        (uniform over the wrong answers); the k - c others state a draw from p0 each. Grouping by
        a (not by who complied) is what keeps the enumeration small."""
        n = self.n
        adv = self.adv_comps[k]  # (A, n) every composition of k
        pa = np.zeros((logp.shape[0], len(adv)))
        for c in range(k + 1):
            pc = math.comb(k, c) * pi**c * (1.0 - pi) ** (k - c)
            if pc == 0.0:
                continue
            for tau in range(1, n):
                d = adv - c * np.eye(n)[tau]  # the defectors' counts
                ok = (d >= 0).all(axis=1)
                if not ok.any():
                    continue
                dd = d[ok]
                lc = special.gammaln(k - c + 1) - special.gammaln(dd + 1).sum(axis=1)
                pa[:, ok] += pc / (n - 1) * np.exp(lc[:, None] + dd @ logp.T).T
        keep = pa.max(axis=0) > 0.0
        return adv[keep], pa[:, keep]


def _softmax0(u: np.ndarray) -> np.ndarray:
    """Probability of index 0 (the truth) under softmax over the last axis."""
    m = u.max(axis=-1, keepdims=True)
    e = np.exp(u - m)
    return e[..., 0] / e.sum(axis=-1)


def _profile_from(name: str, x: np.ndarray) -> SimProfile:
    return SimProfile(
        name=name,
        n_cand=N_CAND[name],
        accuracy=PAPER_TABLE7[name][0] / 100.0,
        **{k: float(v) for k, v in zip(_FREE, x, strict=True)},
    )


def expected_cells(profile: SimProfile, grid: int = 96) -> dict[str, float]:
    """Expected (not sampled) cell values in % for a profile, as used by the fit."""
    x = np.array([getattr(profile, k) for k in _FREE])
    return _Expected(profile.n_cand, profile.accuracy, grid).cells(x)


def _fit_t78(name: str) -> np.ndarray:
    """Stage 1: least squares on Tables 7-8 alone (anchor 0): a start for the joint fit."""
    target = paper_cells(name)
    keys = [c for c in CELLS if c != "vanilla"]
    y = np.array([target[c] for c in keys])
    ev = _Expected(N_CAND[name], PAPER_TABLE7[name][0] / 100.0)
    lower, upper = _bounds(name)
    lower, upper, scale = lower[:7], upper[:7], (upper - lower)[:7]

    def resid(x: np.ndarray) -> np.ndarray:
        got = ev.cells(x)
        fit = np.array([got[c] for c in keys]) - y
        ridge = math.sqrt(_RIDGE) * (x - _STARTS[0][:7]) / scale
        return np.concatenate([fit, ridge])

    best: Any = None
    for x0 in _STARTS:
        x0 = np.clip(x0[:7], lower + 1e-6, upper - 1e-6)
        res = optimize.least_squares(resid, x0, bounds=(lower, upper), x_scale=scale, max_nfev=400)
        if best is None or res.cost < best.cost:
            best = res
    return np.append(best.x, [0.0, 1.0, 1.0])  # anchor 0, a plain-receiver decision agent, compliant


def _bounds(name: str) -> tuple[np.ndarray, np.ndarray]:
    lower = _LOWER.copy()
    lower[1] = max(lower[1], 1.0 / (N_CAND[name] - 1))  # the distractor is at least as likely as any wrong
    return lower, _UPPER.copy()


def fit_profile(
    name: str,
    trials: int = 2000,
    seed: int = 0,
    episodes: int = FIT_EPISODES,
    table2: bool = True,
    targets: dict[str, float] | None = None,
    free: Sequence[str] | None = None,
    start: SimProfile | None = None,
    max_nfev: int = 40,
) -> SimProfile:
    """Fit one benchmark's profile: Tables 7-8 (exact expectations) jointly with Table 2's
    *Complete* rows (the vectorised debate simulator, `episodes` common-random-number debates).

    Stage 1 fits Tables 7-8 alone (they identify only self + anchor, so anchor = 0 there). Stage 2
    starts from that fit with the memory split three ways (all self, all anchor, half and half) and
    fits every free parameter to the 5 + 3 cells; Tables 7-8 residuals weigh `_W78` times more and
    a steep hinge beyond `_HINGE78` points keeps them within their ±3 tolerance. `table2=False`
    gives the old Tables 7-8-only fit.
    `targets` (cell -> %) replaces the paper numbers, `free` names the fitted parameters (default:
    every parameter but `compliance`; the others stay at `start`), e.g. for recovery tests on data
    made by the model itself.
    `trials` does not enter the fit (kept so callers can pass the same arguments to verification).
    """
    del trials
    if name not in PAPER_TABLE7:
        raise KeyError(f"no paper targets for profile {name!r}; known: {sorted(PAPER_TABLE7)}")
    target = dict(paper_cells(name))
    target.update({f"t2_{a}": v for a, v in PAPER_TABLE2["complete"][name].items()})
    if targets is not None:
        target.update(targets)
    keys78 = [c for c in CELLS if c != "vanilla"]
    keys2 = [f"t2_{a}" for a in ATTACKS] if table2 else []
    y = np.array([target[c] for c in keys78 + keys2])
    n_cand = start.n_cand if start is not None else N_CAND[name]
    acc = start.accuracy if start is not None else PAPER_TABLE7[name][0] / 100.0
    ev = _Expected(n_cand, acc)
    draws = make_draws(episodes, seed) if table2 else None
    lower, upper = _bounds(name)
    idx = [_FREE.index(k) for k in (free or _FITTED)]
    if start is not None:
        starts = [np.array([getattr(start, k) for k in _FREE])]
    else:
        x78 = _fit_t78(name)
        if not table2:
            return _profile_from(name, x78)
        mem = x78[3]
        starts = []
        for frac in (1.0, 0.5, 0.0):  # share of self + anchor kept as self
            x = x78.copy()
            x[3], x[7] = frac * mem, (1 - frac) * mem
            starts.append(x)
    scale = (upper - lower)[idx]
    weights = np.array([_W78] * len(keys78) + [1.0] * len(keys2))

    def full(z: np.ndarray, x0: np.ndarray) -> np.ndarray:
        x = x0.copy()
        x[idx] = z
        return x

    def resid(z: np.ndarray, x0: np.ndarray) -> np.ndarray:
        x = full(z, x0)
        got = ev.cells(x)
        vals = [got[c] for c in keys78]
        if keys2:
            assert draws is not None  # table2: drawn above
            prof = replace(_profile_from(name, x), n_cand=n_cand, accuracy=acc)
            t2 = table2_cells(prof, draws)
            vals += [t2[a] for a in ATTACKS]
        ridge = math.sqrt(_RIDGE) * (z - x0[idx]) / scale
        diff = np.array(vals) - y
        # Tables 7-8 are a constraint (±3 on sampled cells): a steep hinge beyond _HINGE78 points
        hinge = _W_HINGE * np.maximum(np.abs(diff[: len(keys78)]) - _HINGE78, 0.0)
        return np.concatenate([weights * diff, hinge, ridge])

    best: Any = None
    best_x0: Any = None
    for x0 in starts:
        x0 = x0.copy()
        x0[idx] = np.clip(x0[idx], lower[idx] + 1e-6, upper[idx] - 1e-6)  # fixed ones stay as they are
        res = optimize.least_squares(
            resid,
            x0[idx],
            args=(x0,),
            bounds=(lower[idx], upper[idx]),
            x_scale=scale,
            diff_step=_DIFF_STEP,
            max_nfev=max_nfev,
        )
        if best is None or res.cost < best.cost:
            best, best_x0 = res, x0
    return replace(_profile_from(name, full(best.x, best_x0)), n_cand=n_cand, accuracy=acc)


def simulate_cells(profile: SimProfile, trials: int, seed: int) -> dict[str, float]:
    """Sampled Table 7/8 cells in % (see module docstring), through the public model functions.

    Each cell uses `trials` fresh questions (latents) from one seeded generator, so the same seed
    gives the same numbers. Truth is index 0 (the model is symmetric in the truth's position).
    """
    rng = np.random.default_rng(seed)
    n, truth = profile.n_cand, 0
    hits = dict.fromkeys(CELLS, 0)
    for cell in CELLS:
        for _ in range(trials):
            lat = sample_latent(profile, rng, n, truth)
            p0 = initial_probs(profile, lat, n, truth)
            own = sample_index(p0, rng)
            if cell == "vanilla":
                ans = own
            elif cell == "attacked":
                tgt = sample_wrong(rng, n, truth)
                said = adversarial_answer(profile, lat, tgt, n, truth, rng)
                # the receiver's previous answer is its first one: self + anchor terms both apply
                probs = update_probs(profile, lat, own, [(said, True)], n, truth, first_idx=own)
                ans = sample_index(probs, rng)
            else:
                k = int(cell[3:])
                tgt = sample_wrong(rng, n, truth)
                msgs = [(adversarial_answer(profile, lat, tgt, n, truth, rng), True) for _ in range(k)]
                msgs += [(sample_index(p0, rng), False) for _ in range(N_SENDERS - k)]
                ans = sample_index(update_probs(profile, lat, own, msgs, n, truth, first_idx=own), rng)
            hits[cell] += int(ans == truth)
    return {c: 100.0 * hits[c] / trials for c in CELLS}


GROUP_T78 = "Tables 7-8 (fitted)"
T7_CELLS = ("vanilla", "attacked")
T78_LEGEND = (  # the cells' names alone do not say which paper table they come from
    "table 7: vanilla = one agent answering alone; attacked = the agent reading one adversarial sender\n"
    f"table 8: advK = a receiver reading {N_SENDERS} senders, K of them adversarial (adv0: none)\n"
    "values: accuracy % of the receiving agent, per benchmark profile\n"
)
GROUP_COMPLETE = "Table 2 Complete (fitted)"
GROUP_RANDOM = "Table 2 Random (held out)"
GROUP_TOLERANCE: dict[str, float] = {
    GROUP_T78: TOLERANCE_POINTS,
    GROUP_COMPLETE: TOLERANCE_T2_FITTED,
    GROUP_RANDOM: TOLERANCE_T2_HELD_OUT,
}


def _rows(
    profile: SimProfile, trials: int, seed: int, episodes: int = CHECK_EPISODES, table2: bool = True
) -> list[dict[str, object]]:
    """Check rows of one profile: Tables 7-8 (sampled single updates), and Table 2's Complete
    (fitted) and Random (held-out) rows from `episodes` vectorised debates per cell. The debates
    use draws of seed ``seed + 1``, not the fit's own draws (seed ``seed``)."""
    sim = simulate_cells(profile, trials, seed)
    exp = expected_cells(profile)
    paper = paper_cells(profile.name)
    rows = [
        {
            "group": GROUP_T78,
            "profile": profile.name,
            "cell": c,
            "paper": paper[c],
            "simulated": round(sim[c], 2),
            "expected": round(exp[c], 2),
            "diff": round(sim[c] - paper[c], 2),
        }
        for c in CELLS
    ]
    if not table2 or profile.name not in PAPER_TABLE2["complete"]:
        return rows
    draws = make_draws(episodes, seed + 1)
    for method, group in (("complete", GROUP_COMPLETE), ("random", GROUP_RANDOM)):
        got = table2_cells(profile, draws, graph=method)
        for a in ATTACKS:
            ref = PAPER_TABLE2[method][profile.name][a]
            rows.append(
                {
                    "group": group,
                    "profile": profile.name,
                    "cell": f"{method}/{a}",
                    "paper": ref,
                    "simulated": round(got[a], 2),
                    "expected": None,
                    "diff": round(got[a] - ref, 2),
                }
            )
    return rows


def calibrate(
    profiles: list[str] | None = None,
    trials: int = 10000,
    seed: int = 0,
    write: bool = False,
    path: str | Path | None = None,
    jobs: int = 2,
) -> list[dict[str, object]]:
    """Fit the named profiles (default all five), verify by sampled simulation, optionally write them.

    `jobs` > 1 fits profiles in that many processes (one profile each).

    Returns one row per (profile, cell): paper %, simulated % (sampled, `trials` per cell, seeded),
    expected % (the fit's smooth value) and diff = simulated - paper. With `write=True` the fitted
    values replace those profiles in conf/backbone/sim.yaml (or `path`), other profiles kept.
    """
    names = list(profiles) if profiles else list(PROFILE_NAMES)
    t0 = time.perf_counter()
    if jobs > 1 and len(names) > 1:
        from concurrent.futures import ProcessPoolExecutor
        from functools import partial

        fit = partial(fit_profile, trials=trials, seed=seed)
        with ProcessPoolExecutor(max_workers=min(jobs, len(names))) as pool:
            fitted = dict(zip(names, pool.map(fit, names), strict=True))
    else:
        fitted = {name: fit_profile(name, trials, seed) for name in names}
    fit_s = time.perf_counter() - t0
    rows: list[dict[str, Any]] = []
    for name in names:
        rows.extend(_rows(fitted[name], trials, seed))
    for r in rows:
        r["fit_seconds"] = round(fit_s, 2)
    if write:
        target = Path(path) if path is not None else _default_write_path()
        existing: dict[str, SimProfile] = {}
        if target.is_file():
            existing = load_profiles(target)
        existing.update(fitted)
        write_profiles(existing, target, trials=trials, seed=seed)
    return rows


def _default_write_path() -> Path:
    try:
        return default_profiles_path()
    except FileNotFoundError:
        return Path(__file__).resolve().parents[1] / "conf" / "backbone" / "sim.yaml"


def write_profiles(profiles: dict[str, SimProfile], path: str | Path, trials: int, seed: int) -> None:
    """Write the `sim` backbone config with a header saying where the numbers come from."""
    order = [n for n in PROFILE_NAMES if n in profiles] + sorted(set(profiles) - set(PROFILE_NAMES))
    lines = [
        "# Backbone `sim`: calibrated behavioural simulator of LLM agents (tomacs/sim/model.py).",
        "# The profile values below are FITTED by `tomacs calibrate` to TodyComm Tables 7-8",
        "# (single agent vanilla/attacked; receiver with 0/2/3/4 adversarial of 6 senders) jointly with",
        "# Table 2's Complete rows (6 agents, 4 rounds, decision=auto). Every other table (Random rows,",
        "# learned methods, Tables 3-6, 9, 10) is held out. See docs/deviations.md (sim section).",
        f"# Fitted {_dt.date.today().isoformat()}, fit seed={seed}, verification trials={trials} per cell.",
        "# `accuracy` is Table 7 Vanilla (mean competence), not a fitted value. Do not hand-tune.",
        "# Every other key, its default and what it means: SimSettings in tomacs/sim/backbone.py",
        "# (the schema this file extends).",
        "defaults:",
        "  - /schema/backbone/sim@_here_",
        "  - _self_",
        "profiles:",
    ]
    for name in order:
        d = profiles[name].to_dict()
        d.pop("name")
        body = ", ".join(f"{k}: {_fmt(v)}" for k, v in d.items())
        lines.append(f"  {name}: {{{body}}}")
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def format_report(rows: Sequence[dict[str, Any]]) -> str:
    """Markdown tables of simulated vs paper per cell, one per group (Tables 7-8 and Table 2
    Complete: fitted; Table 2 Random: held out), each with its largest |diff| and tolerance check."""
    if not rows:
        return "(no calibration rows)"
    out: list[str] = []
    groups = list(dict.fromkeys(r.get("group", GROUP_T78) for r in rows))
    for g in groups:
        sub = [r for r in rows if r.get("group", GROUP_T78) == g]
        tol = GROUP_TOLERANCE.get(g, TOLERANCE_POINTS)
        out.append(f"## {g}")
        t78 = g == GROUP_T78
        if t78:
            out.append(T78_LEGEND)
        head = "| table " if t78 else ""
        out.append(
            f"{head}| profile | cell | paper | simulated | expected | diff |\n"
            f"{'|---' if t78 else ''}|---|---|---:|---:|---:|---:|"
        )
        for r in sub:
            e = r.get("expected")
            e_s = "—" if e is None else f"{e:.2f}"
            flag = "" if abs(r["diff"]) <= tol else "  ← miss"
            which = f"| {7 if r['cell'] in T7_CELLS else 8} " if t78 else ""
            out.append(
                f"{which}| {r['profile']} | {r['cell']} | {r['paper']:.2f} | {r['simulated']:.2f} | {e_s} | "
                f"{r['diff']:+.2f}{flag} |"
            )
        worst = max(sub, key=lambda r: abs(r["diff"]))
        n_ok = sum(abs(r["diff"]) <= tol for r in sub)
        out += [
            "",
            f"max |diff| = {abs(worst['diff']):.2f} points ({worst['profile']}/{worst['cell']}); "
            f"within ±{tol:g}: {n_ok} of {len(sub)} cells"
            + (" (held out: predictions, never fitted)" if g == GROUP_RANDOM else ""),
            "",
        ]
    out.append(
        "simulated = sampled outcomes (seeded; Table 2: vectorised debates, tomacs/sim/episodes.py, "
        "6 agents, 4 rounds, decision=auto); expected = the fit's exact expectation; backbone=sim"
    )
    if "fit_seconds" in rows[0]:
        out.append(f"fit wall time: {rows[0]['fit_seconds']:.1f} s")
    return "\n".join(out)


def stored_rows(
    trials: int = 10000,
    seed: int = 0,
    path: str | Path | None = None,
    episodes: int = CHECK_EPISODES,
    table2: bool = True,
) -> list[dict[str, object]]:
    """Verification rows for the STORED profiles (no fitting): what tests and `--check` use."""
    profs = load_profiles(path)
    rows: list[dict[str, Any]] = []
    for name in PROFILE_NAMES:
        if name in profs:
            rows.extend(_rows(replace(profs[name], name=name), trials, seed, episodes, table2))
    return rows
