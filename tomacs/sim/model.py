"""The behavioural model behind the `sim` backbone: how a simulated LLM agent picks an answer.

This module is the *math* only (pure numpy); the Backbone glue maps candidate indices to answer
strings and texts. Answers are indices into a candidate list of size `n_cand` with a known truth
index (multiple choice: the options; numeric: the gold plus plausible wrong numbers).

Model (parameters of one `SimProfile`, fitted by `tomacs calibrate` jointly to TodyComm Tables 7-8
and Table 2's *Complete* rows; see docs/deviations.md):

* Per question a latent shared by all agents: competence ``c ~ Beta(acc * kappa, (1 - acc) * kappa)``
  and an attractive distractor ``d`` (uniform over wrong indices). A shared latent is what makes
  six honest agents only a little better than one (Table 8 "0 adv" vs Table 7 "Vanilla"): hard
  questions are hard for everyone.
* Capability ``g`` (per-agent condition, default 1) scales the odds of competence:
  ``c_g = g c / (g c + 1 - c)``, so it stays a probability and ``g = 1`` is the identity.
* Initial answer: ``p0[truth] = c_g``, ``p0[d] = (1 - c_g) * delta``, the remaining wrong mass is
  spread evenly. Hence ``E[p0[truth]] = E[c] = acc`` = the benchmark's single-agent accuracy.
* Update after reading messages (answer index ``a_m``, weight ``w_m = rho`` if persuasive else 1):
  ``u_j = beta * log p0[j] + alpha * [j == prev] + gamma * [j == first]
  + share * S_j / sum_m w_m + count * S_j``
  with ``S_j = sum_m w_m [a_m == j]``; the new answer is ``softmax(u)``. Three mechanisms that only
  real debates identify (neutral in every paper profile): an agent that already read an adversary in
  an earlier round weighs persuasive messages ``lambda_L * rho`` (``later_weight``), the self term
  gains ``kappa`` (``target_persistence``) while a persuasive message it reads backs its own previous
  answer; and ``lapse`` (epsilon) mixes every update with a uniform draw,
  ``(1 - epsilon) softmax(u) + epsilon / n``, the answers a few real replies give that no term explains (a
  fit without it pays a large log-loss for each on questions it did not see). The share term says how
  much of what the agent reads backs ``j``; the count term says how many voices back it, so more
  adversaries push harder even when their share is fixed. ``prev`` is the agent's own previous
  answer, ``first`` its own round-1 answer (the anchor, weight ``gamma = anchor_weight``). In a
  single update from the first answer (Tables 7-8) ``prev == first``, so those tables identify only
  ``alpha + gamma``; the split is identified by multi-round debates (Table 2 Complete).
* The LLM decision agent is a receiver like the one of Tables 7-8: it holds its own answer, drawn
  from ``p0`` (`decision_own_answer` in the backbone), which is both its ``prev`` and its ``first``.
  What it reads weighs ``decision_weight`` times the message terms of a debating agent (the share
  and count terms are scaled; 1 = a Table 8 receiver). Its prompt is another role's (decide from
  the agents' analyses), and Table 2's LLM-decision cells sit on both sides of a Table 8 receiver
  with the same adversaries (GSM8K above, OpenBookQA/MedQA far below), which one update rule for
  every reader cannot give. Tables 7-8 have no decision agent, so only Table 2 Complete fits it.
* An adversary (App. D prompt) argues for the shared wrong target with probability ``compliance``
  (pi); otherwise it states its own first-answer belief (a draw from ``p0``), still with the
  persuasive App. D framing and suffix, so its message keeps the persuasive weight. Every
  adversarial sender of Tables 7-8 is such an agent, so pi enters those tables as well as Table 2.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import MISSING, asdict, dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

_EPS = 1e-9
PROFILE_NAMES: tuple[str, ...] = ("mmlu", "arc_c", "gsm8k", "openbookqa", "medqa")


@dataclass(frozen=True)
class SimProfile:
    """All parameters of the behavioural model for one benchmark.

    `accuracy` is not fitted: it is the paper's single-agent accuracy (Table 7 "Vanilla"), and
    it is the mean of the competence distribution, so the simulator's one-agent accuracy matches
    the paper by construction. `n_cand` is the candidate count the fit assumed (the functions
    accept any count; a different count changes the chance level, not the parameters' meaning).
    """

    name: str
    n_cand: int
    accuracy: float  # mean competence = single-agent accuracy (fraction)
    concentration: float  # kappa of the Beta; small = question difficulty varies a lot
    distractor_share: float  # delta: share of wrong-answer mass on the attractive distractor
    prior_weight: float  # beta: weight of the agent's own belief log p0 when updating
    self_weight: float  # alpha: stickiness to the agent's own previous answer
    share_weight: float  # weight of the (persuasion-weighted) fraction of messages backing j
    count_weight: float  # weight per (persuasion-weighted) message backing j
    persuasion: float  # rho: weight of a persuasive (adversarial) message relative to an honest one
    anchor_weight: float = 0.0  # gamma: pull toward the agent's own round-1 answer (multi-round only)
    decision_weight: float = 1.0  # lambda_D: weight of what the LLM decision agent reads (1 = a receiver's)
    compliance: float = 1.0  # pi: probability that an adversary's reply argues for its target
    # Mechanisms fitted from real debates (`tomacs sim fit-episodes`, each kept per profile by
    # cross-validated likelihood on its fitting questions); their neutral values leave the update rule,
    # and every paper profile, unchanged.
    later_weight: float = 1.0  # lambda_L: persuasion at later exposures, relative to the first exposure
    target_persistence: float = 0.0  # kappa: extra stickiness while an adversary read backs one's own answer
    lapse: float = 0.0  # epsilon: share of a later-round answer drawn uniformly, whatever the terms say

    def to_dict(self) -> dict[str, object]:
        return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, d: dict[str, Any], name: str | None = None) -> SimProfile:
        """Build from a config mapping; `name` fills in when the mapping is keyed by profile."""
        data = dict(d)
        if name is not None:
            data.setdefault("name", name)
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown SimProfile keys: {sorted(unknown)}")
        optional = {f.name for f in fields(cls) if f.default is not MISSING}
        missing = known - set(data) - optional
        if missing:
            raise ValueError(f"SimProfile {data.get('name')!r} lacks keys: {sorted(missing)}")
        kw: dict[str, Any] = {}
        for f in fields(cls):
            if f.name not in data:
                continue
            v = data[f.name]
            kw[f.name] = str(v) if f.name == "name" else int(v) if f.name == "n_cand" else float(v)
        return cls(**kw)

    @property
    def beta_ab(self) -> tuple[float, float]:
        """(a, b) of the competence Beta distribution."""
        return self.accuracy * self.concentration, (1.0 - self.accuracy) * self.concentration


@dataclass(frozen=True)
class QuestionLatent:
    """What all agents share about one question: how answerable it is, and which wrong answer lures."""

    competence: float
    distractor: int


def default_profiles_path() -> Path:
    """conf/backbone/sim.yaml of the shipped configs (checkout or wheel)."""
    try:
        from tomacs.paths import conf_dir

        return conf_dir() / "backbone" / "sim.yaml"
    except FileNotFoundError:
        # conf_dir() needs conf/config.yaml; fall back to the checkout layout so the model
        # works before (or without) the full Hydra tree.
        pkg = Path(__file__).resolve().parents[1]
        for cand in (pkg / "conf" / "backbone" / "sim.yaml", pkg.parent / "conf" / "backbone" / "sim.yaml"):
            if cand.is_file():
                return cand
        raise


def load_profiles(path: str | Path | None = None) -> dict[str, SimProfile]:
    """Read the fitted profiles from the `sim` backbone config (default: conf/backbone/sim.yaml)."""
    import yaml

    p = Path(path) if path is not None else default_profiles_path()
    with open(p, encoding="utf-8") as fh:
        cfg = yaml.safe_load(fh) or {}
    profs = cfg.get("profiles") or {}
    return {name: SimProfile.from_dict(vals, name=name) for name, vals in profs.items()}


def _check(n_cand: int, truth_idx: int) -> None:
    if n_cand < 2:
        raise ValueError(f"need at least 2 candidates, got {n_cand}")
    if not 0 <= truth_idx < n_cand:
        raise ValueError(f"truth index {truth_idx} outside 0..{n_cand - 1}")


def effective_competence(competence: float | np.ndarray, capability: float = 1.0) -> float | np.ndarray:
    """Competence after a per-agent capability multiplier on its odds (capability 1 = unchanged)."""
    if capability <= 0:
        raise ValueError(f"capability must be > 0, got {capability}")
    # a float (the per-call path) is clipped without np.clip's array machinery: the same value, faster
    c = (
        min(max(competence, _EPS), 1.0 - _EPS)
        if isinstance(competence, float)
        else np.clip(competence, _EPS, 1.0 - _EPS)
    )
    if capability == 1.0:
        return c
    return capability * c / (capability * c + 1.0 - c)


def sample_latent(
    profile: SimProfile, rng: np.random.Generator, n_cand: int, truth_idx: int
) -> QuestionLatent:
    """Draw one question's shared latent: competence from the Beta, distractor uniform over wrong answers."""
    _check(n_cand, truth_idx)
    a, b = profile.beta_ab
    c = float(rng.beta(a, b))
    wrong = [j for j in range(n_cand) if j != truth_idx]
    return QuestionLatent(competence=c, distractor=int(wrong[int(rng.integers(len(wrong)))]))


def _distractor(latent: QuestionLatent, n_cand: int, truth_idx: int) -> int:
    """The latent's distractor, remapped onto a wrong index if the glue's candidate list disagrees."""
    d = latent.distractor
    if 0 <= d < n_cand and d != truth_idx:
        return d
    return (truth_idx + 1) % n_cand


def initial_probs(
    profile: SimProfile, latent: QuestionLatent, n_cand: int, truth_idx: int, capability: float = 1.0
) -> np.ndarray:
    """An honest agent's first-answer distribution over candidates.

    Truth gets the (capability-scaled) competence; wrong mass favours the distractor. Averaged
    over latents with capability 1 the truth probability is exactly `profile.accuracy`.
    """
    _check(n_cand, truth_idx)
    c = float(effective_competence(latent.competence, capability))
    p = np.empty(n_cand)
    if n_cand == 2:
        p[:] = 1.0 - c
    else:
        d = _distractor(latent, n_cand, truth_idx)
        p[:] = (1.0 - c) * (1.0 - profile.distractor_share) / (n_cand - 2)
        p[d] = (1.0 - c) * profile.distractor_share
    p[truth_idx] = c
    return p / p.sum()


UPDATE_TERMS: tuple[str, ...] = ("prior", "self", "anchor", "messages")
# One message an agent read: (candidate index, persuasive) or, with a told credibility, (.., weight).
SeenMessage = tuple[int, bool] | tuple[int, bool, float]


def message_support(
    messages: Sequence[SeenMessage], n_cand: int, persuasion: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(S, honest, adversarial): the persuasion-weighted support S_j of what an agent read, and the
    told-weight sums of honest and of persuasive senders per candidate (S = honest + rho * adversarial).

    S is accumulated message by message, as the update has always summed it, so every run's logits
    stay bit-identical; the per-class sums exist for the diagnosis's split of the message term."""
    support, honest, adversarial = np.zeros(n_cand), np.zeros(n_cand), np.zeros(n_cand)
    for msg in messages:
        idx, persuasive = msg[0], msg[1]
        # optional 3rd entry: the credibility a coordinator was told for this sender. Not fitted
        # (Tables 7-8 have no scores): a told score scales the sender's support (docs/deviations.md).
        weight = float(msg[2]) if len(msg) > 2 else 1.0
        if not 0 <= idx < n_cand:
            raise ValueError(f"message answer {idx} outside 0..{n_cand - 1}")
        support[idx] += weight * (persuasion if persuasive else 1.0)
        (adversarial if persuasive else honest)[idx] += weight
    return support, honest, adversarial


def logit_terms(
    profile: SimProfile,
    latent: QuestionLatent,
    prev_idx: int | None,
    messages: Sequence[SeenMessage],
    n_cand: int,
    truth_idx: int,
    capability: float = 1.0,
    first_idx: int | None = None,
    message_scale: float = 1.0,
    exposed_before: bool = False,
) -> dict[str, np.ndarray]:
    """The update rule, written once: the additive terms of u_j by name (`UPDATE_TERMS`).

    `update_logits` sums them; `tomacs.sim.diagnose` splits them further (competence vs distractor,
    honest vs adversarial senders) without restating the rule. `first_idx` is the agent's own
    round-1 answer (None: no anchor term, e.g. unknown). `exposed_before`: the agent read a persuasive
    message in an earlier round (its persuasive messages then weigh ``later_weight`` times more)."""
    p0 = initial_probs(profile, latent, n_cand, truth_idx, capability)
    terms = {k: np.zeros(n_cand) for k in UPDATE_TERMS}
    terms["prior"] = profile.prior_weight * np.log(np.maximum(p0, 1e-300))
    if prev_idx is not None:
        if not 0 <= prev_idx < n_cand:
            raise ValueError(f"previous answer {prev_idx} outside 0..{n_cand - 1}")
        terms["self"][prev_idx] = profile.self_weight
    if first_idx is not None:
        if not 0 <= first_idx < n_cand:
            raise ValueError(f"first answer {first_idx} outside 0..{n_cand - 1}")
        terms["anchor"][first_idx] = profile.anchor_weight
    if messages:
        rho = profile.persuasion * (profile.later_weight if exposed_before else 1.0)
        support, _, adversarial = message_support(messages, n_cand, rho)
        if prev_idx is not None and profile.target_persistence and adversarial[prev_idx] > 0:
            terms["self"][prev_idx] += profile.target_persistence
        if support.sum() > 0:  # all senders told credibility 0: nothing to be moved by
            terms["messages"] = message_scale * (
                profile.share_weight * support / support.sum() + profile.count_weight * support
            )
    return terms


def update_logits(
    profile: SimProfile,
    latent: QuestionLatent,
    prev_idx: int | None,
    messages: Sequence[SeenMessage],
    n_cand: int,
    truth_idx: int,
    capability: float = 1.0,
    first_idx: int | None = None,
    message_scale: float = 1.0,
    exposed_before: bool = False,
) -> np.ndarray:
    """The logits u_j of the update model (see module docstring): the sum of `logit_terms`.

    Adding a term that is zero at j leaves u_j unchanged bit for bit, so this sum equals the
    element-wise updates the rule was first written with."""
    terms = logit_terms(
        profile,
        latent,
        prev_idx,
        messages,
        n_cand,
        truth_idx,
        capability,
        first_idx,
        message_scale,
        exposed_before,
    )
    u = terms[UPDATE_TERMS[0]]
    for k in UPDATE_TERMS[1:]:
        u = u + terms[k]
    return u


def update_probs(
    profile: SimProfile,
    latent: QuestionLatent,
    prev_idx: int | None,
    messages: Sequence[SeenMessage],
    n_cand: int,
    truth_idx: int,
    capability: float = 1.0,
    first_idx: int | None = None,
    message_scale: float = 1.0,
    exposed_before: bool = False,
) -> np.ndarray:
    """An honest agent's answer distribution after reading `messages` = [(answer index, persuasive)].

    `prev_idx` is its own previous answer and `first_idx` its own round-1 answer (the LLM decision
    agent passes its own drawn answer as both; None drops the term). Messages whose answer did not
    parse should simply be left out by the caller.
    """
    u = update_logits(
        profile,
        latent,
        prev_idx,
        messages,
        n_cand,
        truth_idx,
        capability,
        first_idx,
        message_scale,
        exposed_before,
    )
    u = u - u.max()
    e = np.exp(u)
    return lapsed(e / e.sum(), profile.lapse, n_cand)


def lapsed(probs: np.ndarray, lapse: float, n_cand: int) -> np.ndarray:
    """An update's answer distribution with the profile's lapse: ``(1 - lapse) probs + lapse / n``, a
    uniform draw that no term of the rule explains. 0 (every paper profile) returns `probs` itself, bit
    for bit. The executor's draws and the held-out replay (`tomacs.sim.heldout`) both mix here."""
    return (1.0 - lapse) * probs + lapse / n_cand if lapse else probs


def adversarial_answer(
    profile: SimProfile,
    latent: QuestionLatent,
    target_idx: int,
    n_cand: int,
    truth_idx: int,
    rng: np.random.Generator,
    capability: float = 1.0,
) -> int:
    """What an adversary answers from its onset (TodyComm App. D prompt).

    With probability ``compliance`` (pi) the shared wrong target; otherwise the reply does not
    follow the instruction and states the agent's own first-answer belief, a draw from ``p0``
    (the App. D prompt shows no neighbour messages, so nothing else can move it). Real LLMs given
    an adversarial role do not always comply; pi = 1 is the old always-compliant adversary and
    then no random number is drawn, so runs with pi = 1 keep their exact draws.
    """
    if profile.compliance >= 1.0:
        return int(target_idx)
    if rng.random() < profile.compliance:
        return int(target_idx)
    p0 = initial_probs(profile, latent, n_cand, truth_idx, capability)
    return int(rng.choice(n_cand, p=p0))


def sample_wrong(rng: np.random.Generator, n_cand: int, truth_idx: int) -> int:
    """A uniformly random wrong candidate, e.g. the adversaries' shared target."""
    _check(n_cand, truth_idx)
    j = int(rng.integers(n_cand - 1))
    return j if j < truth_idx else j + 1


def sample_index(probs: np.ndarray, rng: np.random.Generator) -> int:
    """Draw one candidate index from a probability vector.

    Generator.choice(len(p), p=p)'s own draw (one rng.random() against the normalised cumulative sum, so
    the same index and the same stream; tests/test_sim_model.py checks it), without its argument checks,
    which took three quarters of its time in the simulator's inner loops (8.6 -> 3.3 us a draw)."""
    cdf = np.cumsum(probs, dtype=np.float64)
    if not (abs(cdf[-1] - 1.0) <= 1.5e-8 and probs.min() >= 0.0):  # numpy's tolerance: sqrt(float64 eps)
        raise ValueError(f"probabilities must be >= 0 and sum to 1 (got {probs})")
    cdf /= cdf[-1]
    return int(cdf.searchsorted(rng.random(), side="right"))
