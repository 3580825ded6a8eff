"""Fit the `sim` backbone's behavioural model to TodyComm Tables 7-8, and report simulated vs paper.

The simulator is fitted to these two tables ONLY (single-agent accuracy, one persuasive sender,
and 0/2/3/4 adversarial senders among six). Every other table (2-6, 9-10) is an outcome of
running methods on the fitted simulator, never a fitting target.

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

from tomacs.backbones.sim_model import (
    PROFILE_NAMES,
    SimProfile,
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
)
_LOWER = np.array([0.3, 0.0, 0.05, 0.0, 0.0, 0.0, 1.05])
_UPPER = np.array([80.0, 1.0, 6.0, 10.0, 20.0, 6.0, 12.0])
_STARTS = (
    np.array([3.0, 0.5, 1.0, 1.0, 2.0, 0.3, 2.0]),
    np.array([1.5, 0.6, 0.6, 0.5, 4.0, 0.1, 3.0]),
    np.array([8.0, 0.4, 1.5, 2.0, 1.0, 0.6, 1.5]),
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
        kappa, delta, beta, alpha, s, kc, rho = (float(v) for v in x)
        n = self.n
        p0 = self._p0(kappa, delta)  # (G, n)
        logp = np.log(p0)
        eye = np.eye(n)
        out = {"vanilla": 100.0 * float(p0[:, 0].mean())}
        targets = np.arange(1, n)
        # logits base: (G, prev, n)
        base = beta * logp[:, None, :] + alpha * eye[None, :, :]
        # Table 7: one persuasive message (share 1, support rho) for target tau.
        u = base[:, :, None, :] + (s + kc * rho) * eye[targets][None, None, :, :]  # (G, prev, tau, n)
        pc = _softmax0(u).mean(axis=2)  # average over targets
        out["attacked"] = 100.0 * float((p0 * pc).sum(axis=1).mean())
        for k in ADV_COUNTS:
            comps = self.comps[k]  # (K, n) honest counts
            # multinomial probability of each honest composition: (G, K)
            w = np.exp(self.log_coef[k][None, :] + (comps[None, :, :] * logp[:, None, :]).sum(-1))
            support = comps[:, None, :] + k * rho * eye[targets][None, :, :]  # (K, tau, n)
            total = (N_SENDERS - k) + k * rho
            msg = s * support / total + kc * support  # (K, tau, n)
            u = base[:, None, :, None, :] + msg[None, :, None, :, :]  # (G, K, prev, tau, n)
            pc = _softmax0(u).mean(axis=3)  # (G, K, prev)
            e = (w[:, :, None] * p0[:, None, :] * pc).sum(axis=(1, 2))
            out[f"adv{k}"] = 100.0 * float(e.mean())
        return out


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


def fit_profile(name: str, trials: int = 2000, seed: int = 0) -> SimProfile:
    """Least-squares fit of one benchmark's profile on expected cell values.

    `trials` and `seed` do not enter the smooth fit (it uses exact expectations); they are kept so
    callers can pass the same arguments to fit and verification. Several starting points guard
    against a local optimum; the one with the smallest residual wins.
    """
    del trials, seed
    if name not in PAPER_TABLE7:
        raise KeyError(f"no paper targets for profile {name!r}; known: {sorted(PAPER_TABLE7)}")
    target = paper_cells(name)
    keys = [c for c in CELLS if c != "vanilla"]
    y = np.array([target[c] for c in keys])
    ev = _Expected(N_CAND[name], PAPER_TABLE7[name][0] / 100.0)
    scale = _UPPER - _LOWER
    lower = _LOWER.copy()
    lower[1] = max(lower[1], 1.0 / (N_CAND[name] - 1))  # the distractor is at least as likely as any wrong

    def resid(x: np.ndarray) -> np.ndarray:
        got = ev.cells(x)
        fit = np.array([got[c] for c in keys]) - y
        ridge = math.sqrt(_RIDGE) * (x - _STARTS[0]) / scale
        return np.concatenate([fit, ridge])

    best: Any = None
    for x0 in _STARTS:
        x0 = np.clip(x0, lower + 1e-6, _UPPER - 1e-6)
        res = optimize.least_squares(resid, x0, bounds=(lower, _UPPER), x_scale=scale, max_nfev=400)
        if best is None or res.cost < best.cost:
            best = res
    return _profile_from(name, best.x)


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
                ans = sample_index(update_probs(profile, lat, own, [(tgt, True)], n, truth), rng)
            else:
                k = int(cell[3:])
                tgt = sample_wrong(rng, n, truth)
                msgs = [(tgt, True)] * k + [(sample_index(p0, rng), False) for _ in range(N_SENDERS - k)]
                ans = sample_index(update_probs(profile, lat, own, msgs, n, truth), rng)
            hits[cell] += int(ans == truth)
    return {c: 100.0 * hits[c] / trials for c in CELLS}


def _rows(profile: SimProfile, trials: int, seed: int) -> list[dict[str, Any]]:
    sim = simulate_cells(profile, trials, seed)
    exp = expected_cells(profile)
    paper = paper_cells(profile.name)
    return [
        {
            "profile": profile.name,
            "cell": c,
            "paper": paper[c],
            "simulated": round(sim[c], 2),
            "expected": round(exp[c], 2),
            "diff": round(sim[c] - paper[c], 2),
        }
        for c in CELLS
    ]


def calibrate(
    profiles: list[str] | None = None,
    trials: int = 2000,
    seed: int = 0,
    write: bool = False,
    path: str | Path | None = None,
) -> list[dict[str, Any]]:
    """Fit the named profiles (default all five), verify by sampled simulation, optionally write them.

    Returns one row per (profile, cell): paper %, simulated % (sampled, `trials` per cell, seeded),
    expected % (the fit's smooth value) and diff = simulated - paper. With `write=True` the fitted
    values replace those profiles in conf/backbone/sim.yaml (or `path`), other profiles kept.
    """
    names = list(profiles) if profiles else list(PROFILE_NAMES)
    t0 = time.perf_counter()
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
        "# Backbone `sim`: calibrated behavioural simulator of LLM agents (tomacs/backbones/sim_model.py).",
        "# The profile values below are FITTED by `tomacs calibrate` to TodyComm Tables 7-8 ONLY",
        "# (single agent vanilla/attacked; receiver with 0/2/3/4 adversarial of 6 senders).",
        f"# Fitted {_dt.date.today().isoformat()}, verification seed={seed}, trials={trials} per cell.",
        "# `accuracy` is Table 7 Vanilla (mean competence), not a fitted value. Do not hand-tune.",
        "name: sim",
        "profile: null  # null = the benchmark's own profile (synthetic -> mmlu)",
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
    """Markdown table of simulated vs paper per cell, plus the largest |diff| and the tolerance check."""
    if not rows:
        return "(no calibration rows)"
    head = "| profile | cell | paper | simulated | expected | diff |\n|---|---|---:|---:|---:|---:|"
    body = [
        f"| {r['profile']} | {r['cell']} | {r['paper']:.2f} | {r['simulated']:.2f} | "
        f"{r.get('expected', float('nan')):.2f} | {r['diff']:+.2f} |"
        for r in rows
    ]
    worst = max(rows, key=lambda r: abs(r["diff"]))
    ok = all(abs(r["diff"]) <= TOLERANCE_POINTS for r in rows)
    tail = [
        "",
        f"max |diff| = {abs(worst['diff']):.2f} points ({worst['profile']}/{worst['cell']}); "
        f"every cell within ±{TOLERANCE_POINTS:g}: {'yes' if ok else 'NO'}",
        "simulated = sampled outcomes (seeded); expected = the fit's exact expectation; backbone=sim",
    ]
    if "fit_seconds" in rows[0]:
        tail.append(f"fit wall time: {rows[0]['fit_seconds']:.1f} s")
    return "\n".join([head, *body, *tail])


def stored_rows(trials: int = 2000, seed: int = 0, path: str | Path | None = None) -> list[dict[str, Any]]:
    """Verification rows for the STORED profiles (no fitting): what tests and `--check` use."""
    profs = load_profiles(path)
    rows: list[dict[str, Any]] = []
    for name in PROFILE_NAMES:
        if name in profs:
            rows.extend(_rows(replace(profs[name], name=name), trials, seed))
    return rows
