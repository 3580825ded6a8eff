"""Fit a `sim` profile to real multi-round debates by maximum likelihood (issue 26, item 2).

Why a likelihood and not moments: a few hundred real debates hold a few thousand per-round answers,
and how each answer followed from what the agent had read is exactly what the simulator's update
rule models. The likelihood of every honest agent's answer, given its own previous and first answer
and the answers it read, uses all of that; aggregate moments would throw most of it away.

The model is the simulator's own (`tomacs.sim.model`, module docstring): per question a latent competence
``c ~ Beta(acc kappa, (1 - acc) kappa)`` and a distractor ``d`` (uniform over the wrong options),
shared by every agent on the question; round-1 answers are draws from ``p0(c, d)``, later answers
from ``softmax(update_logits)``. The latent is integrated out: Gauss-Jacobi quadrature over ``c``
(exact for the Beta weight) and an exact sum over ``d``, with every honest agent's every answer of
every debate on the same question inside the one integral (the simulator keys the latent by the
question, so a question asked again in another run shares it too).

What is modelled and what is conditioned on:

* outcomes: the parsed answers of agents whose role is ``honest`` (optionally of one model); an
  unparsed answer is not an outcome, and as a message it is dropped (as the `sim` backbone drops a
  message whose answer is not a candidate); an unparsed previous or first answer drops that term;
* adversaries (and honest agents of other models) are conditioned on: their answers enter only as
  messages, persuasive when the sender is adversarial in the round it answered;
* ``compliance`` is the adversaries' rate of stating their target from their onset on (a plain
  rate: a non-compliant adversary that happens to state the target counts as compliant);
* ``decision_weight`` is kept at 1: a debate without a decision agent says nothing about it.

Two optional refinements (`fit(by_benchmark=..., by_sender=...)`, both on in
`tomacs calibrate --from-episodes`; docs/experiments/2026-11-25-sim-profiles-from-real-debates.md gives
their held-out effect):

* **accuracy per benchmark**: one competence mean per benchmark of the fitting debates
  (``meta.benchmark``; debates without one form a group ``?`` of their own), the concentration
  shared. A question's latent then draws from its benchmark's Beta. The profile keeps one
  ``accuracy``: the question-weighted mean of the per-benchmark ones (the mean competence of the
  fitted questions), which prediction also uses for a benchmark that was not fitted;
* **persuasion per sender model**: a persuasive message weighs ``persuasion_by_model[m]`` by the
  model ``m`` of the adversary who sent it (agent model, else the debate's). The profile keeps one
  ``persuasion``: that of the fitted model's own adversaries (the simulator's adversaries are the same
  backbone as its honest agents), else of the sender model with the most persuasive messages read;
  prediction uses it for a sender model that was not fitted.

Answers are relabelled per debate so that the gold answer is index 0; the model is symmetric in the
wrong options, so this loses nothing and lets one vectorised pass cover every debate.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from scipy import optimize, special

from tomacs.sim.model import SimProfile
from tomacs.transcripts.schema import Debate
from tomacs.transcripts.split import debate_models as debate_models
from tomacs.transcripts.split import split_questions as split_questions

QUAD_NODES = 24  # Gauss-Jacobi nodes over competence (exact for polynomials of degree 47 in c)

# Fitted parameters, their bounds and starting points. `persuasion` may fall below 1 here (unlike
# the paper fit): a model that discounts a persuasive sender is an answer the data may give.
FIT_PARAMS: tuple[str, ...] = (
    "accuracy",
    "concentration",
    "distractor_share",
    "prior_weight",
    "self_weight",
    "share_weight",
    "count_weight",
    "persuasion",
    "anchor_weight",
)
_LOWER = np.array([0.02, 0.1, 0.0, 0.0, 0.0, 0.0, 0.0, 0.01, 0.0])
_UPPER = np.array([0.98, 60.0, 0.999, 10.0, 20.0, 30.0, 5.0, 30.0, 20.0])
_STARTS: tuple[np.ndarray, ...] = (
    np.array([0.6, 3.0, 0.5, 1.0, 2.0, 3.0, 0.3, 2.0, 0.5]),
    np.array([0.6, 1.0, 0.7, 0.5, 5.0, 8.0, 0.1, 1.0, 0.0]),
    np.array([0.6, 8.0, 0.3, 2.0, 1.0, 1.0, 0.6, 4.0, 2.0]),
)


def honest_agents(d: Debate, model: str | None = None) -> list[int]:
    """Agents whose answers are outcomes: role honest, and of `model` when one is asked for."""
    out = []
    for a in d.agents:
        if a.role != "honest":
            continue
        m = a.model or d.model
        if model is not None and m != model:
            continue
        out.append(a.agent)
    return out


UNKNOWN_BENCHMARK = "?"


def agent_model(d: Debate, agent: int) -> str:
    """An agent's model: its own, else the debate's, else '?'."""
    a = d.agents[agent] if 0 <= agent < len(d.agents) else None
    return (a.model if a is not None else None) or d.model or "?"


def debate_benchmark(d: Debate) -> str:
    """The benchmark a debate's question comes from (``meta.benchmark``), '?' when not recorded."""
    b = d.meta.get("benchmark") if isinstance(d.meta, dict) else None
    return b if isinstance(b, str) and b else UNKNOWN_BENCHMARK


def exposed_rounds(d: Debate) -> np.ndarray:
    """(A, R) bool: the agent read a turn of an agent adversarial in that turn's round (parsed or not).
    The one definition of an exposure: the held-out statistics' switches and `later_weight`'s rows."""
    out = np.zeros((d.n_agents, d.n_rounds), dtype=bool)
    for t in d.turns:
        if 1 <= t.round <= d.n_rounds and 0 <= t.agent < d.n_agents:
            out[t.agent, t.round - 1] = any(d.is_adversarial(j, rr) for j, rr in t.read if j != t.agent)
    return out


def exposed_before(d: Debate) -> np.ndarray:
    """(A, R) bool: the agent was exposed in an earlier round (the simulator's `exposed_before`)."""
    seen = np.cumsum(exposed_rounds(d), axis=1) > 0
    return np.concatenate([np.zeros((d.n_agents, 1), dtype=bool), seen[:, :-1]], axis=1)


def _letter_index(d: Debate) -> dict[str, int]:
    """Letter -> relabelled index, the gold answer at 0."""
    n = len(d.letters)
    g = d.letters.index(d.gold)
    return {letter: (i - g) % n for i, letter in enumerate(d.letters)}


@dataclass
class Observations:
    """Every outcome of one candidate count, vectorised; rows are sorted by latent group."""

    n_cand: int
    group: np.ndarray  # (O,) latent group of the row (0..n_groups-1, non-decreasing)
    y: np.ndarray  # (O,) the answer (gold = 0)
    prev: np.ndarray  # (O,) own previous answer, -1 = none
    first: np.ndarray  # (O,) own round-1 answer, -1 = none
    s_honest: np.ndarray  # (O, n) messages backing j from non-adversarial senders
    s_pers: np.ndarray  # (O, n) messages backing j from adversarial (persuasive) senders
    initial: np.ndarray  # (O,) bool: answered from p0 (round 1, or nothing to update on)
    n_groups: int
    keys: list[str] = field(default_factory=list)  # question key of each group
    target: np.ndarray | None = None  # (G,) the adversaries' relabelled target, -1 = none or mixed
    benchmark: str = UNKNOWN_BENCHMARK  # the block's benchmark (blocks are per candidate count and benchmark)
    s_pers_by: np.ndarray | None = None  # (O, M, n) s_pers split by the sender's model
    pers_models: tuple[str, ...] = ()  # the M sender models of s_pers_by (the same for every block)
    later: np.ndarray | None = None  # (O,) bool: the agent read an adversarial turn in an earlier round

    @property
    def size(self) -> int:
        return int(self.y.shape[0])


def observations(debates: Sequence[Debate], model: str | None = None) -> list[Observations]:
    """Turn debates into per-answer rows, one block per (candidate count, benchmark)."""
    by_n: dict[tuple[int, str], dict[str, list[tuple[Any, ...]]]] = {}
    targets: dict[str, set[int]] = {}
    senders = sorted({agent_model(d, a.agent) for d in debates for a in d.agents if a.role == "adversary"})
    m_idx = {m: k for k, m in enumerate(senders)}
    n_m = max(len(senders), 1)
    for d in debates:
        n = len(d.letters)
        if n < 2 or d.gold not in d.letters:
            raise ValueError(f"debate {d.id!r} ({d.source}): gold {d.gold!r} is not one of {list(d.letters)}")
        idx = _letter_index(d)
        turns = {(t.agent, t.round): t for t in d.turns}

        def ans(agent: int, rnd: int, _t: dict = turns, _i: dict = idx) -> int:
            t = _t.get((agent, rnd))
            return -1 if t is None or t.answer is None or t.answer not in _i else _i[t.answer]

        rows = by_n.setdefault((n, debate_benchmark(d)), {}).setdefault(d.question_key, [])
        targets.setdefault(d.question_key, set()).add(debate_target(d))
        before = exposed_before(d)
        for i in honest_agents(d, model):
            first = ans(i, 1)
            for r in range(1, d.n_rounds + 1):
                later = bool(before[i, r - 1])
                t = turns.get((i, r))
                y = ans(i, r)
                if t is None or y < 0:
                    continue  # unparsed: not an outcome
                sh = np.zeros(n)
                sp = np.zeros(n)
                spm = np.zeros((n_m, n))
                for j, rr in t.read:
                    if j == i:
                        continue  # one's own earlier answer is the previous/first term, not a message
                    a = ans(j, rr)
                    if a < 0:
                        continue  # unparsed message: dropped
                    if d.is_adversarial(j, rr):
                        sp[a] += 1.0
                        spm[m_idx[agent_model(d, j)], a] += 1.0
                    else:
                        sh[a] += 1.0
                prev = ans(i, r - 1) if r > 1 else -1
                # as the backbone: round 1, or no previous answer and nothing read -> p0
                initial = r == 1 or (prev < 0 and sh.sum() + sp.sum() == 0)
                rows.append((y, prev, first if r > 1 else -1, sh, sp, initial, spm, later))
    blocks = []
    for (n, bench), groups in sorted(by_n.items()):
        keys = [k for k, v in groups.items() if v]
        g_idx, ys, pv, fs, shs, sps, ini, spms, lat = [], [], [], [], [], [], [], [], []
        for gi, k in enumerate(keys):
            for y, prev, first, sh, sp, initial, spm, later in groups[k]:
                lat.append(later)
                g_idx.append(gi)
                ys.append(y)
                pv.append(prev)
                fs.append(first)
                shs.append(sh)
                sps.append(sp)
                ini.append(initial)
                spms.append(spm)
        if not ys:
            continue
        blocks.append(
            Observations(
                n_cand=n,
                group=np.array(g_idx, dtype=np.int64),
                y=np.array(ys, dtype=np.int64),
                prev=np.array(pv, dtype=np.int64),
                first=np.array(fs, dtype=np.int64),
                s_honest=np.array(shs),
                s_pers=np.array(sps),
                initial=np.array(ini, dtype=bool),
                n_groups=len(keys),
                keys=keys,
                target=np.array([next(iter(targets[k])) if len(targets[k]) == 1 else -1 for k in keys]),
                benchmark=bench,
                s_pers_by=np.array(spms),
                pers_models=tuple(senders),
                later=np.array(lat, dtype=bool),
            )
        )
    return blocks


def quadrature(profile: SimProfile, nodes: int = QUAD_NODES) -> tuple[np.ndarray, np.ndarray]:
    """Competence nodes and weights (summing to 1) for the profile's Beta: Gauss-Jacobi on [0, 1]."""
    a, b = profile.beta_ab
    with np.errstate(divide="ignore", invalid="ignore"):  # scipy evaluates both branches of a where
        x, w = special.roots_jacobi(nodes, b - 1.0, a - 1.0)
    c = np.clip((1.0 + x) / 2.0, 1e-9, 1.0 - 1e-9)
    w = np.maximum(w, 0.0)
    return c, w / w.sum()


def own_and_message_logits(
    profile: SimProfile,
    s_honest: np.ndarray,
    s_pers: np.ndarray,
    prev: np.ndarray,
    first: np.ndarray,
    pers_scale: float | None = None,
    later: np.ndarray | None = None,
) -> np.ndarray:
    """The latent-free part of `tomacs.sim.model.update_logits`, batched over rows (..., n): own previous
    and first answer (index, -1 = none) and the share and count terms of what was read, given
    per-answer counts of non-persuasive and persuasive messages. The likelihood and the held-out
    simulation both use it; tests check it against `update_logits`.

    `pers_scale` replaces ``profile.persuasion`` as the persuasive messages' factor (1.0 when
    `s_pers` already holds each message at its sender model's weight). `later` (rows,) marks rows whose
    agent read an adversary in an earlier round: their persuasive messages weigh ``later_weight`` more.
    ``target_persistence`` adds to the self term where a persuasive message backs the previous answer."""
    rho = profile.persuasion if pers_scale is None else pers_scale
    if later is not None and profile.later_weight != 1.0:
        s_pers = s_pers * np.where(later, profile.later_weight, 1.0)[..., None]
    s = s_honest + rho * s_pers
    tot = s.sum(axis=-1, keepdims=True)
    m = np.where(
        tot > 0, profile.share_weight * s / np.where(tot > 0, tot, 1.0) + profile.count_weight * s, 0.0
    )
    n = m.shape[-1]
    cand = np.arange(n)
    own = (prev[..., None] == cand) & (prev[..., None] >= 0)
    m = m + profile.self_weight * own
    if profile.target_persistence:
        m = m + profile.target_persistence * (own & (s_pers > 0))
    m = m + profile.anchor_weight * ((first[..., None] == cand) & (first[..., None] >= 0))
    return m


def weighted_pers(
    profile: SimProfile, obs: Observations, pers_by: dict[str, float] | None
) -> np.ndarray | None:
    """(O, n) persuasive messages, each at its sender model's weight (`pers_by`, the profile's
    persuasion for a model not in it); None when `pers_by` is None (one weight for all)."""
    if not pers_by or obs.s_pers_by is None or not obs.pers_models:
        return None
    w = np.array([pers_by.get(m, profile.persuasion) for m in obs.pers_models])
    return np.einsum("omn,m->on", obs.s_pers_by, w)


def message_logits(
    profile: SimProfile, obs: Observations, pers_by: dict[str, float] | None = None
) -> np.ndarray:
    """`own_and_message_logits` for every row of a block (persuasion per sender model with `pers_by`)."""
    sp = weighted_pers(profile, obs, pers_by)
    if sp is None:
        return own_and_message_logits(profile, obs.s_honest, obs.s_pers, obs.prev, obs.first, later=obs.later)
    return own_and_message_logits(
        profile, obs.s_honest, sp, obs.prev, obs.first, pers_scale=1.0, later=obs.later
    )


def _p0_parts(profile: SimProfile, c: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """log p0 of the truth, of the distractor and of any other wrong answer, per competence node."""
    if n == 2:
        other = np.full_like(c, -np.inf)
        return np.log(c), np.log(1.0 - c), other
    delta = profile.distractor_share
    with np.errstate(divide="ignore"):
        return (
            np.log(c),
            np.log(np.maximum((1.0 - c) * delta, 1e-300)),
            np.log(np.maximum((1.0 - c) * (1.0 - delta) / (n - 2), 1e-300)),
        )


def _counts(obs: Observations, rows: np.ndarray) -> np.ndarray:
    """(G, n): how many of the selected rows of each group answered j."""
    out = np.zeros((obs.n_groups, obs.n_cand))
    np.add.at(out, (obs.group[rows], obs.y[rows]), 1.0)
    return out


def _by_answer(counts: np.ndarray, t: np.ndarray, d: np.ndarray, o: np.ndarray) -> np.ndarray:
    """(G, K, D): sum over rows of a per-answer value that is `t` for the truth, `d` for the
    distractor and `o` for any other wrong answer (each (K,)), given answer counts (G, n)."""
    c0 = counts[:, 0][:, None, None]
    cd = counts[:, 1:][:, None, :]
    rest = counts.sum(axis=1)[:, None, None] - c0 - cd
    return c0 * t[None, :, None] + cd * d[None, :, None] + rest * o[None, :, None]


def _group_starts(g: np.ndarray) -> np.ndarray:
    """First row of each group in `g` (non-decreasing: a group's rows are contiguous), for reduceat."""
    return np.flatnonzero(np.r_[True, g[1:] != g[:-1]])


def _at_answer(y: np.ndarray, n_d: int, t: np.ndarray, d: np.ndarray, o: np.ndarray) -> np.ndarray:
    """(U, K, D): per row, a per-answer value (each (K,)) at the row's answer `y`: `t` for the truth (0),
    `d` where the answer is distractor d + 1, `o` for any other wrong answer."""
    is_d = y[:, None] - 1 == np.arange(n_d)[None, :]  # (U, D)
    return np.where(
        (y == 0)[:, None, None],
        t[None, :, None],
        np.where(is_d[:, None, :], d[None, :, None], o[None, :, None]),
    )


def group_loglik(
    profile: SimProfile, obs: Observations, c: np.ndarray, pers_by: dict[str, float] | None = None
) -> np.ndarray:
    """log P(all of a group's answers | latent), shape (G, K, D) for competence nodes `c` and
    distractors 1..n-1.

    Round-1 rows are ``log p0[y]``; later rows ``u_y - logsumexp(u)`` with ``u = beta log p0 + m``
    (``m`` from `message_logits`). ``log p0`` takes three values only (truth, distractor, other
    wrong), so per-answer sums reduce to counts and only the softmax's normaliser, a three-term sum,
    is computed per (row, node, distractor)."""
    n = obs.n_cand
    lt, ld, lo = _p0_parts(profile, c, n)  # (K,)
    if n == 2:
        lo = np.zeros_like(lt)  # no "other wrong" answer exists; its count is always 0
    init = obs.initial
    out = _by_answer(_counts(obs, np.flatnonzero(init)), lt, ld, lo)
    upd = np.flatnonzero(~init)
    if upd.size:
        m = message_logits(profile, obs, pers_by)[upd]  # (U, n)
        m = m - m.max(axis=1, keepdims=True)
        e = np.exp(m)
        beta = profile.prior_weight
        bt, bd, bo = beta * lt, beta * ld, beta * lo
        shift = np.maximum(bt, bd) if n == 2 else np.maximum(np.maximum(bt, bd), bo)
        at, ad = np.exp(bt - shift), np.exp(bd - shift)
        ao = np.zeros_like(at) if n == 2 else np.exp(bo - shift)
        e0 = e[:, 0][:, None, None]
        ed = e[:, 1:][:, None, :]  # (U, 1, D)
        rest = e.sum(axis=1)[:, None, None] - e0 - ed
        norm = e0 * at[None, :, None] + ed * ad[None, :, None] + rest * ao[None, :, None]
        if profile.lapse:
            return out + _lapsed_rows(profile.lapse, obs, upd, m, e, norm, (at, ad, ao), (bt, bd, bo))
        lnorm = np.log(np.maximum(norm, 1e-300))
        g = obs.group[upd]
        starts = _group_starts(g)
        groups = g[starts]
        out[groups] -= np.add.reduceat(lnorm, starts, axis=0)
        my = np.zeros(obs.n_groups)
        np.add.at(my, g, m[np.arange(upd.size), obs.y[upd]])
        cnt = np.bincount(g, minlength=obs.n_groups).astype(float)
        out += (my[:, None] - cnt[:, None] * shift[None, :])[:, :, None]
        out += _by_answer(_counts(obs, upd), bt, bd, bo)
    return out


def _lapsed_rows(
    lapse: float,
    obs: Observations,
    upd: np.ndarray,
    m: np.ndarray,
    e: np.ndarray,
    norm: np.ndarray,
    prior: tuple[np.ndarray, np.ndarray, np.ndarray],
    beta_p0: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> np.ndarray:
    """(G, K, D) sums over the update rows of ``log((1 - lapse) softmax(u)_y + lapse / n)``.

    A mixture does not split into per-answer counts as the plain softmax does, so each row's probability
    is formed per (node, distractor): ``e_y a_y / norm`` from `group_loglik`'s factors (``e = exp(m)``,
    ``a = exp(beta log p0 - shift)``). Where that normaliser underflows, the row is redone in logs
    (`_lapsed_rows_in_logs`): a lapse caps each row's loss, which lets the optimiser reach parameters
    where an underflowed normaliser would pass for a gain."""
    at, ad, ao = prior
    n, n_d = obs.n_cand, obs.n_cand - 1
    y = obs.y[upd]
    a_y = _at_answer(y, n_d, at, ad, ao)
    ok = norm > 1e-250
    p = e[np.arange(upd.size), y][:, None, None] * a_y / np.where(ok, norm, 1.0)
    mixed = np.log((1.0 - lapse) * np.minimum(p, 1.0) + lapse / n)
    bad = np.flatnonzero(~ok.all(axis=(1, 2)))
    if bad.size:
        mixed[bad] = _lapsed_rows_in_logs(lapse, n, y[bad], m[bad], beta_p0)
    out = np.zeros((obs.n_groups, at.shape[0], n_d))
    g = obs.group[upd]
    starts = _group_starts(g)
    out[g[starts]] = np.add.reduceat(mixed, starts, axis=0)
    return out


def _lapsed_rows_in_logs(
    lapse: float, n: int, y: np.ndarray, m: np.ndarray, beta_p0: tuple[np.ndarray, np.ndarray, np.ndarray]
) -> np.ndarray:
    """(R, K, D) ``log((1 - lapse) softmax(u)_y + lapse / n)`` with the normaliser kept in logs:
    ``u_j = m_j + beta log p0[j]`` takes three prior values (truth, distractor, any other wrong answer),
    so it is a log-sum-exp of three terms, the last over the other answers' ``m_j``."""
    bt, bd, bo = beta_p0
    n_d = n - 1
    mw = m[:, 1:]  # (R, D): the wrong answers' m, candidate d + 1 at column d
    others = np.where(np.eye(n_d, dtype=bool)[None], -np.inf, mw[:, None, :])  # (R, D, D): all but d
    with np.errstate(divide="ignore"):
        l_other = special.logsumexp(others, axis=2) if n_d > 1 else np.full((len(y), 1), -np.inf)
    t_term = (m[:, 0][:, None] + bt[None, :])[:, :, None]  # (R, K, 1)
    d_term = mw[:, None, :] + bd[None, :, None]  # (R, K, D)
    o_term = l_other[:, None, :] + bo[None, :, None]
    lse = np.logaddexp(np.logaddexp(t_term, d_term), o_term)
    v = m[np.arange(len(y)), y][:, None, None] + _at_answer(y, n_d, bt, bd, bo) - lse
    return np.logaddexp(np.log1p(-lapse) + v, np.log(lapse / n))


def block_loglik(
    profile: SimProfile,
    obs: Observations,
    nodes: int = QUAD_NODES,
    grid: tuple[np.ndarray, np.ndarray] | None = None,
    lure: float | None = None,
    acc_by: dict[str, float] | None = None,
    pers_by: dict[str, float] | None = None,
) -> np.ndarray:
    """Marginal log-likelihood of each latent group (question): the latent integrated out.

    `grid` = (competence values, weights) replaces the Gauss-Jacobi rule (tests use a 2-point grid).
    `acc_by` = accuracy per benchmark (the block's replaces the profile's when it is there);
    `pers_by` = persuasion per sender model."""
    profile = profile_for(profile, obs.benchmark, acc_by)
    c, w = grid if grid is not None else quadrature(profile, nodes)
    c = np.asarray(c, dtype=float)
    w = np.asarray(w, dtype=float)
    g = group_loglik(profile, obs, c, pers_by)  # (G, K, D)
    with np.errstate(divide="ignore"):
        lw = np.log(w)[None, :, None] + np.log(distractor_prior(obs, lure))[:, None, :]
    return special.logsumexp(g + lw, axis=(1, 2))


def profile_for(profile: SimProfile, benchmark: str, acc_by: dict[str, float] | None) -> SimProfile:
    """The profile with the benchmark's accuracy when `acc_by` has one, else unchanged."""
    if acc_by and benchmark in acc_by:
        return replace(profile, accuracy=float(acc_by[benchmark]))
    return profile


def distractor_prior(obs: Observations, lure: float | None = None) -> np.ndarray:
    """(G, D) prior of each question's distractor (1..n-1). The simulator draws it uniformly, and
    independently of any adversary's target; `lure` is instead the probability that the distractor
    IS the question's adversarial target (the rest spread evenly), for sources whose target rule is
    tied to the question (MAD-Follower's fixed letter). None = uniform = the simulator."""
    d = obs.n_cand - 1
    pri = np.full((obs.n_groups, d), 1.0 / d)
    if lure is None or d < 2 or obs.target is None:
        return pri
    has = obs.target >= 1
    rows = np.flatnonzero(has)
    pri[rows] = (1.0 - lure) / (d - 1)
    pri[rows, obs.target[has] - 1] = lure
    return pri


def debate_target(d: Debate) -> int:
    """The adversaries' target, relabelled (gold = 0); -1 when there is none."""
    idx = _letter_index(d)
    for a in d.agents:
        if a.role == "adversary" and a.target in idx:
            return idx[a.target]
    return -1


def loglik(
    profile: SimProfile,
    blocks: Sequence[Observations],
    nodes: int = QUAD_NODES,
    lure: float | None = None,
    acc_by: dict[str, float] | None = None,
    pers_by: dict[str, float] | None = None,
) -> float:
    """Total marginal log-likelihood of every block."""
    return float(
        sum(block_loglik(profile, b, nodes, lure=lure, acc_by=acc_by, pers_by=pers_by).sum() for b in blocks)
    )


def n_answers(blocks: Sequence[Observations]) -> int:
    return int(sum(b.size for b in blocks))


def adversary_compliance(debates: Sequence[Debate]) -> float | None:
    """Share of adversarial turns (from onset, parsed) that state the adversary's target."""
    hit = tot = 0
    for d in debates:
        for a in d.agents:
            if a.role != "adversary" or a.target is None:
                continue
            for t in d.turns:
                if t.agent == a.agent and d.is_adversarial(a.agent, t.round) and t.answer is not None:
                    tot += 1
                    hit += t.answer == a.target
    return hit / tot if tot else None


@dataclass(frozen=True)
class FitResult:
    profile: SimProfile
    loglik: float  # total, on the fitting debates
    n_answers: int
    n_debates: int
    n_questions: int
    seconds: float
    converged: bool
    starts: int
    target_lure: float | None = None  # fitted P(distractor = target), when asked for and identified
    target_lure_questions: int = 0  # fitting questions whose debates share one adversaries' target
    accuracy_by_benchmark: dict[str, float] | None = None  # with by_benchmark
    questions_by_benchmark: dict[str, int] | None = None  # fitting questions per benchmark
    persuasion_by_model: dict[str, float] | None = None  # with by_sender
    messages_by_model: dict[str, int] | None = None  # persuasive messages read, per sender model


def _profile_at(base: SimProfile, names: Sequence[str], x: np.ndarray) -> SimProfile:
    values: dict[str, Any] = {k: float(v) for k, v in zip(names, x, strict=True)}  # float fields only
    return replace(base, **values)


def _prior_point(
    prior: SimProfile | None, names: Sequence[str], n_b: int, n_s: int, lo: np.ndarray, span: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The prior in `fit`'s [0, 1] coordinates, and which coordinates it pulls: every one but the lure
    (the last, when fitted), which is the source's rule. No prior: nothing is pulled."""
    z_prior, pulled = np.zeros(len(lo)), np.zeros(len(lo))
    if prior is not None:
        x_prior = [float(getattr(prior, k)) if k in FIT_PARAMS else EXTRA_START[k] for k in names]
        x_prior += [prior.accuracy] * n_b + [prior.persuasion] * n_s
        n = len(x_prior)
        z_prior[:n] = np.clip((np.array(x_prior) - lo[:n]) / span[:n], 0, 1)
        pulled[:n] = 1.0
    return z_prior, pulled


def _optimum_of(
    res: FitResult,
    names: Sequence[str],
    benches: Sequence[str],
    senders: Sequence[str],
    lure_start: float | None,
    neutral: Sequence[str] = (),
) -> np.ndarray:
    """An earlier fit's optimum as a starting point of `fit`'s vector (`neutral` fields at their neutral
    starts; the lure is appended when it is fitted, `lure_start` where the earlier fit had none)."""
    p = res.profile
    x0 = np.array([EXTRA_START[k] if k in neutral else float(getattr(p, k)) for k in names])
    x0 = np.r_[
        x0,
        [(res.accuracy_by_benchmark or {}).get(bn, p.accuracy) for bn in benches],
        [(res.persuasion_by_model or {}).get(m, p.persuasion) for m in senders],
    ]
    if lure_start is not None:
        x0 = np.r_[x0, res.target_lure if res.target_lure is not None else lure_start]
    return x0


def persuasive_messages(blocks: Sequence[Observations]) -> dict[str, int]:
    """Persuasive messages read by the modelled agents, per sender model (models never read left out)."""
    out: dict[str, int] = {}
    for b in blocks:
        if b.s_pers_by is None:
            continue
        for k, m in enumerate(b.pers_models):
            out[m] = out.get(m, 0) + int(round(float(b.s_pers_by[:, k, :].sum())))
    return {m: v for m, v in sorted(out.items()) if v > 0}


def stored_persuasion(pers_by: dict[str, float], messages: dict[str, int], model: str | None) -> float:
    """The one `persuasion` a stored profile keeps: the fitted model's own adversaries' weight when
    they were read (the simulator's adversaries are the same backbone as its honest agents), else
    the weight of the sender model read most often (ties: the first name)."""
    if model is not None and model in pers_by:
        return float(pers_by[model])
    top = max(sorted(pers_by), key=lambda m: messages.get(m, 0))
    return float(pers_by[top])


def fit(
    debates: Sequence[Debate],
    name: str = "fitted",
    model: str | None = None,
    restarts: int = 3,
    nodes: int = QUAD_NODES,
    extra: Sequence[str] = (),
    fixed: dict[str, float] | None = None,
    fit_lure: bool = False,
    by_benchmark: bool = False,
    by_sender: bool = False,
    warm: FitResult | None = None,
    prior: SimProfile | None = None,
    shrink: float = 0.0,
    also_from: FitResult | None = None,
) -> FitResult:
    """Maximum likelihood over FIT_PARAMS (plus `extra` profile fields, starting at their defaults),
    L-BFGS-B within bounds from `restarts` starting points; the best optimum wins.

    `warm`: start once from that fit's optimum instead (the `extra` fields at their neutral starts), so
    a model with more mechanisms begins where the nested one ended and can only gain in-sample.

    `by_benchmark`: one accuracy per benchmark of the fitting blocks instead of `accuracy`;
    `by_sender`: one persuasion per adversary model read instead of `persuasion` (module docstring).

    `shrink` > 0 with a `prior` profile: maximum a posteriori instead, the log-likelihood per answer less
    `shrink` times the squared distance to the prior, each parameter scaled to its bounds (per-benchmark
    accuracies and per-sender persuasions toward the prior's one value, a mechanism toward its neutral
    value, the lure free). A source of few questions then stays near the prior where its data say little
    (`choose_shrink` picks the strength by cross-validation). The result's loglik is the likelihood alone.

    `also_from`: one more start, at that fit's optimum (its mechanisms included): a path of strengths then
    moves from one optimum to the next instead of landing in unrelated local optima of a small source."""
    import time

    t0 = time.perf_counter()
    blocks = observations(debates, model)
    if not blocks:
        raise ValueError(
            "no honest answers to fit (every honest answer unparsed, or no agent of the model asked for)"
        )
    n_cand = max(b.n_cand for b in blocks)
    # only a question whose debates share one target says anything about the lure; a source that draws the
    # target per debate (multi-agent-attack's repeats) has none, and a lure "fitted" there would be its start
    lure_questions = sum(int((b.target >= 0).sum()) for b in blocks if b.target is not None)
    fit_lure = fit_lure and lure_questions > 0
    comp = adversary_compliance(debates)
    base = SimProfile(
        name=name,
        n_cand=n_cand,
        accuracy=0.6,
        concentration=3.0,
        distractor_share=0.5,
        prior_weight=1.0,
        self_weight=1.0,
        share_weight=1.0,
        count_weight=0.1,
        persuasion=1.0,
        compliance=1.0 if comp is None else float(comp),
    )
    if fixed:
        pinned: dict[str, Any] = dict(fixed)  # float fields only
        base = replace(base, **pinned)
    q_by_bench: dict[str, int] = {}
    for b in blocks:
        q_by_bench[b.benchmark] = q_by_bench.get(b.benchmark, 0) + b.n_groups
    # one category is the plain parameter (the same fit, parameter for parameter, as without)
    benches = sorted(q_by_bench) if by_benchmark and not (fixed and "accuracy" in fixed) else []
    benches = benches if len(benches) > 1 else []
    msgs = persuasive_messages(blocks)
    senders = sorted(msgs) if by_sender and not (fixed and "persuasion" in fixed) else []
    senders = senders if len(senders) > 1 else []
    drop = set(fixed or ()) | ({"accuracy"} if benches else set()) | ({"persuasion"} if senders else set())
    names = [k for k in FIT_PARAMS if k not in drop] + list(extra)

    def bound(k: str, which: np.ndarray, extra_i: int) -> float:
        return float(which[FIT_PARAMS.index(k)] if k in FIT_PARAMS else EXTRA_BOUNDS[k][extra_i])

    lo = np.array([bound(k, _LOWER, 0) for k in names])
    hi = np.array([bound(k, _UPPER, 1) for k in names])
    n_p = len(names)
    # after the profile's fields: accuracy per benchmark, persuasion per sender model, the lure
    ia, ip = FIT_PARAMS.index("accuracy"), FIT_PARAMS.index("persuasion")
    lo = np.r_[lo, [_LOWER[ia]] * len(benches), [_LOWER[ip]] * len(senders)]
    hi = np.r_[hi, [_UPPER[ia]] * len(benches), [_UPPER[ip]] * len(senders)]
    n_b, n_s = len(benches), len(senders)
    n_ans = n_answers(blocks)
    if fit_lure:
        lo, hi = np.r_[lo, 0.0], np.r_[hi, 1.0]
    span = hi - lo

    def unpack(
        x: np.ndarray,
    ) -> tuple[SimProfile, dict[str, float] | None, dict[str, float] | None, float | None]:
        prof = _profile_at(base, names, x[:n_p])
        acc_by = {bn: float(v) for bn, v in zip(benches, x[n_p : n_p + n_b], strict=True)} or None
        pers_by = {m: float(v) for m, v in zip(senders, x[n_p + n_b : n_p + n_b + n_s], strict=True)} or None
        lure = float(x[n_p + n_b + n_s]) if fit_lure else None
        return prof, acc_by, pers_by, lure

    def data_nll(z: np.ndarray) -> float:
        prof, acc_by, pers_by, lure = unpack(lo + z * span)
        return -loglik(prof, blocks, nodes, lure=lure, acc_by=acc_by, pers_by=pers_by) / n_ans

    if shrink > 0 and prior is None:
        raise ValueError("shrink > 0 needs a prior profile to shrink toward")
    z_prior, pulled = _prior_point(prior if shrink > 0 else None, names, n_b, n_s, lo, span)

    def nll(z: np.ndarray) -> float:
        # the optimiser works on [0, 1] per parameter, so one step size suits all of them
        v = data_nll(z) + shrink * float((pulled * (z - z_prior) ** 2).sum())
        return v if np.isfinite(v) else 1e6

    starts: list[np.ndarray] = []
    for s in _STARTS[: max(1, restarts)]:
        x0 = np.array([s[FIT_PARAMS.index(k)] if k in FIT_PARAMS else EXTRA_START[k] for k in names])
        x0 = np.r_[x0, [s[ia]] * n_b, [s[ip]] * n_s]
        if fit_lure:
            x0 = np.r_[x0, 1.0 / max(n_cand - 1, 1)]
        starts.append(x0)
    layout = (names, benches, senders, 1.0 / max(n_cand - 1, 1) if fit_lure else None)
    if warm is not None:  # the nested fit's optimum, the mechanisms it lacks at their neutral values
        starts = [_optimum_of(warm, *layout, neutral=extra)]
    if also_from is not None:
        starts.append(_optimum_of(also_from, *layout))
    if shrink > 0:  # the prior itself is a start: a strong pull must not leave the fit in a far optimum
        starts.append(
            lo + z_prior * span if not fit_lure else np.r_[(lo + z_prior * span)[:-1], starts[0][-1]]
        )
    best: Any = None
    for x0 in starts:
        z0 = np.clip((x0 - lo) / span, 1e-6, 1 - 1e-6)
        res = optimize.minimize(
            nll, z0, method="L-BFGS-B", bounds=[(0.0, 1.0)] * len(z0), options={"maxiter": 300}
        )
        if best is None or res.fun < best.fun:
            best = res
    data_fun = data_nll(best.x) if shrink > 0 else float(best.fun)  # the likelihood alone, not the penalty
    best.x = lo + best.x * span
    prof, acc_by, pers_by, lure = unpack(best.x)
    if by_benchmark and not acc_by and len(q_by_bench) == 1:
        acc_by = {next(iter(q_by_bench)): prof.accuracy}
    if by_sender and not pers_by and len(msgs) == 1:
        pers_by = {next(iter(msgs)): prof.persuasion}
    if acc_by and len(acc_by) > 1:  # stored: mean competence of the fitted questions (question-weighted)
        tot = sum(q_by_bench[bn] for bn in acc_by)
        prof = replace(prof, accuracy=float(sum(acc_by[bn] * q_by_bench[bn] for bn in acc_by) / tot))
    if pers_by and len(pers_by) > 1:
        prof = replace(prof, persuasion=stored_persuasion(pers_by, msgs, model))
    return FitResult(
        profile=prof,
        loglik=-data_fun * n_ans,
        n_answers=n_ans,
        n_debates=len(debates),
        n_questions=sum(b.n_groups for b in blocks),
        seconds=time.perf_counter() - t0,
        converged=bool(best.success),
        starts=len(starts),
        target_lure=lure,
        target_lure_questions=lure_questions,
        accuracy_by_benchmark=acc_by,
        questions_by_benchmark=dict(sorted(q_by_bench.items())),
        persuasion_by_model=pers_by,
        messages_by_model=msgs,
    )


# Optional model extensions (issue 26 item 4; issue 39 item 2): bounds and starting points when fitted.
# Tried and not kept (docs/experiments/2026-11-25-sim-profiles-from-real-debates.md): `adopted_weight`,
# extra stickiness of an answer that differs from the first one (held-out log-likelihood fell for both
# MAD-Follower models).
EXTRA_BOUNDS: dict[str, tuple[float, float]] = {
    "later_weight": (0.05, 20.0),
    "target_persistence": (0.0, 20.0),
}
EXTRA_START: dict[str, float] = {"later_weight": 1.0, "target_persistence": 0.0}
# The mechanisms a profile may carry, each kept or dropped per profile by cross-validated likelihood on
# its own fitting questions (`select_mechanisms`): what one model's debates need costs another nothing.
MECHANISMS: dict[str, str] = {
    "later_weight": "persuasion at exposures after the first, relative to the first",
    "target_persistence": "extra stickiness while an adversary read backs one's previous answer",
}


def fit_date() -> str:
    return _dt.date.today().isoformat()
