"""Vectorised numeric simulation of whole `sim` debates (static topologies), for fitting and checks.

The executor runs a debate request by request through `SimBackbone` (texts, tokens, parsing).
For fitting the multi-round terms to TodyComm Table 2 that is far too slow, so this module runs
the SAME model on index arrays, thousands of episodes at once:

* per episode: competence ``c ~ Beta`` (inverse CDF of a fixed uniform), a distractor and the
  adversaries' shared target, both uniform over the wrong answers (truth = index 0, which the
  model is symmetric in), `k` adversaries at uniform positions with onsets uniform over
  `onset_rounds` (the schedule of `tomacs.agents.adversary`);
* round 1: every agent draws from ``p0``; rounds 2..T: agents in order 0..N-1, each hearing the
  current-round answers of its in-neighbours in the static DAG (complete: every earlier agent;
  random: each earlier agent with `edge_prob`, drawn once per episode and kept every round, as
  `method=random` does), with the update of `model.update_logits` (prev = its last answer,
  first = its round-1 answer); an adversary from its onset answers the target with probability
  `compliance` (else a draw from ``p0``, as `model.adversarial_answer`) and its message is
  persuasive either way;
* the decision (`decision=auto`): plurality vote with uniform tie-breaking below 50 % adversaries,
  at or above it the LLM decision agent, a receiver holding its own answer drawn from ``p0``
  (prev = first = that answer) that reads all N final outputs.

Every random quantity comes from uniforms drawn once per (seed, episodes) (`Draws`), so two
parameter vectors are compared on the same episodes (common random numbers). The decision step
is Rao-Blackwellised: the returned accuracy is the exact expectation of the final answer's
correctness given the agents' final answers (vote ties and the decision agent's draws averaged
out), which is unbiased for the executor's accuracy and less noisy. `tests/test_sim_episodes.py`
checks it against the executor path.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from tomacs.agents.adversary import DEFAULT_ONSET_ROUNDS
from tomacs.sim.model import SimProfile

N_AGENTS = 6
ROUNDS = 4
ATTACK_COUNTS: dict[str, int] = {"lt50": 2, "eq50": 3, "gt50": 4}
GRAPHS: tuple[str, ...] = ("complete", "random")


@dataclass(frozen=True)
class Draws:
    """The common random numbers of `episodes` debates (independent of every model parameter)."""

    u_comp: np.ndarray  # (E,) competence quantile
    u_distractor: np.ndarray  # (E,) -> distractor index
    u_target: np.ndarray  # (E,) -> adversaries' target index
    u_positions: np.ndarray  # (E, N) -> adversary positions (the k smallest)
    u_onset: np.ndarray  # (E, N) -> onset round
    u_answer: np.ndarray  # (T, N, E) one uniform per agent answer
    u_edges: np.ndarray  # (E, N, N) -> random-graph edges
    u_comply: np.ndarray  # (T, N, E) -> does an adversary's reply follow its target (compliance)
    u_defect: np.ndarray  # (T, N, E) -> a non-compliant adversary's own answer (a draw from p0)

    @property
    def episodes(self) -> int:
        return int(self.u_comp.shape[0])


def make_draws(episodes: int, seed: int, n_agents: int = N_AGENTS, rounds: int = ROUNDS) -> Draws:
    """Uniforms for `episodes` debates from one seeded generator (same seed -> same draws)."""
    rng = np.random.default_rng(seed)
    e, n = int(episodes), int(n_agents)
    return Draws(
        u_comp=(rng.permutation(e) + rng.random(e)) / e,  # stratified: a smoother competence sample
        u_distractor=rng.random(e),
        u_target=rng.random(e),
        u_positions=rng.random((e, n)),
        u_onset=rng.random((e, n)),
        u_answer=rng.random((rounds, n, e)),
        u_edges=rng.random((e, n, n)),
        # drawn last, so the earlier streams (and every fit made before compliance) are unchanged
        u_comply=rng.random((rounds, n, e)),
        u_defect=rng.random((rounds, n, e)),
    )


def initial_probs_batch(profile: SimProfile, u_comp: np.ndarray, distractor: np.ndarray) -> np.ndarray:
    """(E, n) first-answer distributions, truth at 0, as `model.initial_probs` (capability 1)."""
    n = profile.n_cand
    a, b = profile.beta_ab
    c = np.clip(special.betaincinv(a, b, u_comp), 1e-9, 1 - 1e-9)
    p0 = np.empty((len(c), n))
    if n == 2:
        p0[:, 1] = 1 - c
    else:
        p0[:, 1:] = ((1 - c) * (1 - profile.distractor_share) / (n - 2))[:, None]
        p0[np.arange(len(c)), distractor] = (1 - c) * profile.distractor_share
    p0[:, 0] = c
    return p0 / p0.sum(axis=1, keepdims=True)


def _sample(p: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Inverse-CDF draw of one index per row of `p` with uniforms `u`."""
    cdf = np.cumsum(p, axis=1)
    idx = (cdf < (u * cdf[:, -1])[:, None]).sum(axis=1)
    return np.minimum(idx, p.shape[1] - 1)


def _softmax(u: np.ndarray) -> np.ndarray:
    u = u - u.max(axis=-1, keepdims=True)
    e = np.exp(u)
    return e / e.sum(axis=-1, keepdims=True)


def _message_terms(profile: SimProfile, support: np.ndarray) -> np.ndarray:
    total = support.sum(axis=-1, keepdims=True)
    share = np.divide(support, total, out=np.zeros_like(support), where=total > 0)
    return profile.share_weight * share + profile.count_weight * support


# The fields a profile fitted from real debates may set away from their neutral value (tomacs.sim.model).
FITTED_MECHANISMS: dict[str, float] = {"later_weight": 1.0, "target_persistence": 0.0, "lapse": 0.0}


def simulate(
    profile: SimProfile,
    n_adversaries: int,
    draws: Draws,
    graph: str = "complete",
    decision: str = "auto",
    edge_prob: float = 0.5,
    onset_rounds: tuple[int, ...] = DEFAULT_ONSET_ROUNDS,
) -> dict[str, Any]:
    """Simulate `draws.episodes` debates; return final accuracy and per-round honest accuracy (fractions).

    `decision`: auto (vote below 50 % adversaries, else llm), vote or llm. `graph`: complete or random.
    """
    if graph not in GRAPHS:
        raise ValueError(f"graph must be one of {GRAPHS}, got {graph!r}")
    fitted = [k for k, neutral in FITTED_MECHANISMS.items() if getattr(profile, k) != neutral]
    if fitted:  # this batch simulator writes the paper profiles' rule only; the executor runs every mechanism
        raise ValueError(
            f"profile {profile.name!r} carries {', '.join(fitted)}, which tomacs.sim.episodes does not "
            "simulate; run it through the executor (tomacs evaluate backbone.profile=...)"
        )
    rounds, n_agents, e = draws.u_answer.shape
    n = profile.n_cand
    k = int(n_adversaries)
    if not 0 <= k <= n_agents:
        raise ValueError(f"n_adversaries must be in 0..{n_agents}, got {k}")
    rows = np.arange(e)
    eye = np.eye(n)
    distractor = 1 + np.minimum((draws.u_distractor * (n - 1)).astype(int), n - 2)
    target = 1 + np.minimum((draws.u_target * (n - 1)).astype(int), n - 2)
    rank = np.argsort(np.argsort(draws.u_positions, axis=1), axis=1)
    adversary = rank < k  # (E, N)
    onsets = np.asarray(onset_rounds)
    onset = onsets[np.minimum((draws.u_onset * len(onsets)).astype(int), len(onsets) - 1)]
    if graph == "complete":
        edges = np.broadcast_to(np.triu(np.ones((n_agents, n_agents), bool), 1), (e, n_agents, n_agents))
    else:
        edges = (draws.u_edges < edge_prob) & np.triu(np.ones((n_agents, n_agents), bool), 1)[None]
    p0 = initial_probs_batch(profile, draws.u_comp, distractor)
    base = profile.prior_weight * np.log(np.maximum(p0, 1e-300))
    first = np.stack([_sample(p0, draws.u_answer[0, i]) for i in range(n_agents)], axis=1)  # (E, N)
    prev = first
    honest = ~adversary
    per_round = [_honest_acc(first, honest)]
    weight = np.ones((e, n_agents))
    for t in range(2, rounds + 1):
        adv_now = adversary & (onset <= t)
        weight = np.where(adv_now, profile.persuasion, 1.0)
        cur = np.zeros((e, n_agents), dtype=int)
        contrib = np.zeros((e, n_agents, n))
        for i in range(n_agents):
            u = base + profile.self_weight * eye[prev[:, i]] + profile.anchor_weight * eye[first[:, i]]
            if i > 0:
                support = np.einsum("ej,ejn->en", edges[:, :i, i].astype(float), contrib[:, :i])
                u = u + _message_terms(profile, support)
            ans = _sample(_softmax(u), draws.u_answer[t - 1, i])
            adv_ans = target
            if profile.compliance < 1.0:  # a non-compliant reply states the agent's own p0 belief
                defect = _sample(p0, draws.u_defect[t - 1, i])
                adv_ans = np.where(draws.u_comply[t - 1, i] < profile.compliance, target, defect)
            cur[:, i] = np.where(adv_now[:, i], adv_ans, ans)
            contrib[rows, i, cur[:, i]] = weight[:, i]
        prev = cur
        per_round.append(_honest_acc(cur, honest))
    mode = decision
    if mode == "auto":
        mode = "llm" if 2 * k >= n_agents and k > 0 else "vote"
    counts = np.zeros((e, n))
    np.add.at(counts, (np.repeat(rows, n_agents), prev.ravel()), 1.0)
    if mode == "vote":
        tied = counts == counts.max(axis=1, keepdims=True)
        correct = tied[:, 0] / tied.sum(axis=1)
    elif mode == "llm":
        support = np.zeros((e, n))
        np.add.at(support, (np.repeat(rows, n_agents), prev.ravel()), weight.ravel())
        msg = profile.decision_weight * _message_terms(profile, support)
        own = profile.self_weight + profile.anchor_weight
        # expectation over the decision agent's own answer o ~ p0, then over its draw
        u = base[:, None, :] + own * eye[None, :, :] + msg[:, None, :]  # (E, own, n)
        correct = (p0 * _softmax(u)[:, :, 0]).sum(axis=1)
    else:
        raise ValueError(f"decision must be auto, vote or llm, got {decision!r}")
    return {"acc": float(correct.mean()), "honest_acc": per_round, "mode": mode, "episodes": e}


def _honest_acc(answers: np.ndarray, honest: np.ndarray) -> float:
    n_h = honest.sum()
    return float(((answers == 0) & honest).sum() / n_h) if n_h else float("nan")


def table2_cells(
    profile: SimProfile,
    draws: Draws,
    graph: str = "complete",
    attacks: tuple[str, ...] = ("lt50", "eq50", "gt50"),
) -> dict[str, float]:
    """Final accuracy in % per attack option (6 agents, 4 rounds, decision=auto)."""
    return {a: 100.0 * simulate(profile, ATTACK_COUNTS[a], draws, graph=graph)["acc"] for a in attacks}
