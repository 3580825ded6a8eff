"""TodyComm: round-adaptive communication and decision graphs from learned per-agent credits.

Paper map (shared/papers/todycomm.txt):
  * Alg. 1 (§4.2.1)  one GRU cell shared by all agents; h_i^1 = 0; each round t = 2..T+1 reads the
    node features f_i^t (Eq. 4, Appendix C; `tomacs.methods.features`) and an MLP + sigmoid maps
    h_i^t to the credit c_i^t in (0, 1).
  * Alg. 2           training: a ~ Bernoulli(c), then each a_i flipped with probability epsilon;
    log P^t = sum_i log pi^t(a_i) of the *post-flip* action under the policy probabilities
    (exactly as the paper writes it: no correction for the epsilon mixture). Inference:
    a_i = 1 iff c_i > mean(c).
  * Alg. 4 / Eq. 5-6 the participants' credit-ranked DAG (`tomacs.graphs.credit_ranked_dag`) under
    the run's edge mask and in/out degree budgets.
  * §4.2.2           one more GRU step at T+1; its participation picks the voters, whose vote
    weights are the softmax of their T+1 credits (the executor does the weighted vote).
  * Eq. 7            loss = -mean_q [ (sum_{t=2}^{T} gamma^{T+1-t} log P_comm^t + log P_dec^{T+1})
    * (u_q - b) ] with b a reward baseline (0 in the paper; see `baseline`).

Fallbacks (documented deviations; the paper is silent on them):
  * inference with all credits equal selects nobody under "c_i > mean(c)"; we then keep all agents
    (no credit information = no reason to exclude anyone).
  * a decision with no voters (training sample of all zeros, or oracle ablation with every agent
    adversarial) falls back to all agents with softmax weights; the log-prob stays the one of the
    sampled action. A communication round with no participants is kept as sampled (nobody talks,
    everyone carries their output forward): it is a legitimate action whose probability we train on.

Departures measured in issue 12 (docs/deviations.md), each with the paper's literal form as an option:
  * `normalize`: "running" (default) standardises f_i^t with statistics of the training batches
    only (frozen at evaluation, saved in the checkpoint); "none" is Alg. 1's raw input.
  * `isolated`: "answer" (default) lets an agent with a_i^t = 0 answer alone (an isolated node:
    no messages in or out), which the paper's Token numbers imply; "silent" makes no call and
    carries its last output forward.
  * `tie_tol`: inference keeps c_i > mean(c) - tie_tol; 0 (default) is the paper's rule.
  * `comm`: "learned" (default) is the paper; "debate" (issue 38) communicates as LLM-Debate and the
    real transcripts do (every agent reads every other's round t-1 reply, within the run's mask and
    budgets) and learns only the decision: credits are still computed every round (the GRU's history
    and the next round's features), no communication action is sampled, and Eq. 7 keeps its decision
    term only (a communication action that is not taken carries no gradient).

Ablations (Table 5), config `ablation`:
  * no_ranking: Alg. 4 visits participants in fixed agent order (`rank=False`).
  * no_removal: training is unchanged (sampled participation is applied, so credits get a real
    learning signal); at inference every agent communicates every round and every agent votes, and
    credits only order the DAG and weight the vote (softmax over all N). If nothing were ever removed
    in training too, the sampled actions would not influence the reward and REINFORCE's expected
    gradient would be exactly zero: the credits would stay untrained noise.
  * no_credits: no learning. Oracle reliability (an agent is reliable at round t iff it behaves
    honestly at t, from the episode's AdversaryPlan) gives participation; every reliable agent gets
    credit 1 (others 0), so ranking falls back to agent index and votes are equal. Needs
    `state["plans"]` (one AdversaryPlan per question, set by the executor after `begin`, or passed
    as `begin(..., plans=...)`). `loss` returns None.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from tomacs.benchmarks.parsing import is_correct
from tomacs.embedding.embedders import embedder_dim
from tomacs.graphs import all_pairs, constrain_round, credit_ranked_dag
from tomacs.methods.base import History, MethodContext
from tomacs.methods.features import FEATURE_SETS, build_features, feature_dim, feature_names
from tomacs.methods.learned import (
    LearnedMethod,
    bernoulli_log_prob,
    bernoulli_terms,
    clipped_surrogate_loss,
    reinforce_loss,
    torch_module,
)
from tomacs.methods.settings import LearnedSettings, bounded, choice
from tomacs.types import AdversaryPlan, DecisionGraph, DecisionMode, Episode, Question, RoundGraph
from tomacs.voting import vote_leaders

if TYPE_CHECKING:
    import torch

    from tomacs.methods.nets import CreditNet

__all__ = [
    "ABLATIONS",
    "BASELINES",
    "TodyComm",
    "TodyCommSettings",
    "bernoulli_log_prob",
    "decision_weights",
    "discounted_log_prob",
    "embedding_width",
    "inference_participation",
    "reinforce_loss",
    "resolve_decision_credit",
    "resolve_emb_proj",
    "resolve_gamma",
    "resolve_updates",
    "sample_participation",
]

ABLATIONS = ("none", "no_ranking", "no_removal", "no_credits")
BASELINES = ("none", "batch_mean", "moving_avg", "per_question")
NORMALIZERS = ("none", "running", "layernorm")
ISOLATED = ("silent", "answer")
COMMS = ("learned", "debate")
DECISION_CREDITS = ("auto", "episode", "counterfactual", "expected")
# `decision_credit=expected` sums over every participation vector of the decision round: 2^N of them
EXPECTED_MAX_AGENTS = 12
DEFAULT_UPDATES = 4  # steps per batch unless the paper's step was asked for (`resolve_updates`)
# Eq. 7's discount unless the paper's step was asked for (`resolve_gamma`); EPISODE_GAMMA is that step's
DEFAULT_GAMMA, EPISODE_GAMMA = 0.1, 0.9


@dataclass
class TodyCommSettings(LearnedSettings):
    """TodyComm's keys, defaults and valid values (conf/method/todycomm.yaml extends this).
    Analyses are embedded with the run's `embedder` (default MiniLM, §5: all-MiniLM-L6-v2);
    lr: null = top-level train.lr (5e-4, §5), set to override for this method."""

    name: str = "todycomm"
    hidden_size: int = 64  # GRU hidden size of Alg. 1 (paper does not report it; our choice)
    mlp_hidden: int = 32  # hidden width of the credit MLP of Alg. 1 (ours; paper does not report it)
    epsilon: float = bounded(0.1, 0.0, 1.0, open_high=False)  # Alg. 2 exploration: each sampled a_i flipped
    # Eq. 7 discount gamma^{T+1-t} on round-t communication log-probs (the paper gives no value); null = by
    # the decision credit setting (`resolve_gamma`): 0.9 with an explicit `episode`, so
    # `method.decision_credit=episode` alone is the step measured before 2026-11-29; else 0.1 (issue 40)
    gamma: float | None = bounded(None, 0.0, 1.0, open_low=True, open_high=False)
    # Eq. 7 reward baseline: none (paper, raw u) | batch_mean | moving_avg | per_question (leave-one-out over
    # the question's other episodes; needs train.samples > 1)
    baseline: str = choice("batch_mean", BASELINES)
    baseline_momentum: float = 0.9  # moving_avg only: b <- m*b + (1-m)*mean(u)
    # App. C node features; Table 6: full | self_only | self_neighbor | self_diff | no_persist
    features: str = choice("full", FEATURE_SETS)
    ablation: str = choice("none", ABLATIONS)  # Table 5 (no_credits needs state["plans"])
    # null = the embedder's size (minilm 384, hashing 64); ctx.extra["embed_dim"] wins
    emb_dim: int | None = None
    # §4.2.2 decision weights softmax(c^{T+1}/tau) over voters; 1.0 = the paper
    decision_tau: float = bounded(1.0, 0.0, open_low=True)
    # GRU input: running (per-feature standardiser, statistics from training only, ours) | none (the
    # paper's literal raw f_i^t) | layernorm. See docs/deviations.md (issue 12)
    normalize: str = choice("running", NORMALIZERS)
    norm_clip: float = bounded(
        5.0, 0.0, open_low=True
    )  # running only: standardised features clipped to +-this
    # a non-participant answers alone, no messages (matches the paper's Token numbers) | silent (makes
    # no call and keeps its last output). See docs/deviations.md
    isolated: str = choice("answer", ISOLATED)
    # >0: a shared learned projection of each analysis embedding to this many dims before the GRU
    # (ours; 0 = the paper's Alg. 1 read as an unconstrained GRU input). null = by the embedder's width
    # (`resolve_emb_proj`: 32 for MiniLM's 384 dims, 0 for hashing's 64). See docs/deviations.md (issue 28)
    emb_proj: int | None = bounded(None, 0)
    tie_tol: float = bounded(0.0, 0.0)  # inference a_i = 1 iff c_i > mean(c) - tie_tol; 0 = the paper's rule
    # learned (the paper): rounds 2..T follow Alg. 2/4's sampled participation and credit-ranked DAG |
    # debate (ours): rounds 2..T are LLM-Debate's graph, every agent reading every other's previous reply
    # (the graph real debate transcripts record), and only the decision (voters, weights) is learned. Why:
    # a policy judged on real debates must see in training the graph it is judged on. docs/deviations.md
    comm: str = choice("learned", COMMS)
    # The advantage of the decision's participation terms (Eq. 7's round T+1): episode (the paper: u - b
    # for every agent) | counterfactual (ours: per agent, u minus the expected utility of the vote over
    # that agent's own sampled action, the others' held fixed; votes are recounted, no LLM call) |
    # expected (ours: the decision's exact expected utility over all 2^N participation vectors, votes
    # recounted, in place of one sampled vector; the communication rounds' return is that expectation).
    # See `decision_advantages`, `expected_vote_utility` and docs/deviations.md (issue 40).
    # auto: expected where it applies (the credit-weighted vote of at most EXPECTED_MAX_AGENTS agents), else
    # episode (`resolve_decision_credit`)
    decision_credit: str = choice("auto", DECISION_CREDITS)
    # gradient steps per batch (LearnedSettings.updates); null = by the decision credit setting
    # (`resolve_updates`): 1 with an explicit `episode`, so `method.decision_credit=episode` alone is the
    # paper's step; else 4, also where `auto` falls back to `episode` (issue 40)
    updates: int | None = bounded(None, 1)


_torch = torch_module


# -- Alg. 2 and Eq. 7 as pure functions (unit-tested against hand computations) -------------------
# The log-prob of Alg. 2 is `bernoulli_log_prob` and Eq. 7's loss `reinforce_loss` (the learned base,
# shared with every REINFORCE method); what is TodyComm's own follows.
def sample_participation(
    credits: np.ndarray, epsilon: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Alg. 2 (training): a ~ Bernoulli(c), xi ~ Bernoulli(eps), a <- |a - xi|.

    Returns (post-flip actions, pre-flip samples, flips) as int arrays of the credits' shape; the
    log-prob is taken of the post-flip actions (`bernoulli_log_prob`).
    """
    c = np.asarray(credits, dtype=np.float64)
    sampled = (rng.random(c.shape) < c).astype(np.int64)
    flips = (rng.random(c.shape) < epsilon).astype(np.int64)
    return np.abs(sampled - flips), sampled, flips


def inference_participation(credits: np.ndarray, tie_tol: float = 0.0) -> np.ndarray:
    """Alg. 2 (inference): a_i = 1 iff c_i > mean(c) - tie_tol, per row; an all-zero row (all
    credits equal) falls back to keeping every agent (see the module docstring).

    tie_tol = 0 is the paper's rule. Why a tolerance: with strictly "> mean", credits that differ by
    float noise (0.501 vs 0.499) still exclude about half of the agents; an agent whose credit is
    within tie_tol of the mean has not been judged less reliable than the average, so it stays.
    """
    c = np.asarray(credits, dtype=np.float64)
    a = (c > c.mean(axis=-1, keepdims=True) - float(tie_tol)).astype(np.int64)
    empty = a.sum(axis=-1) == 0
    a[empty] = 1
    return a


def decision_weights(credits: np.ndarray, voters: list[int], tau: float = 1.0) -> list[float]:
    """§4.2.2: softmax of the T+1 credits over the voters (tau = 1 is the paper's plain softmax)."""
    c = np.asarray([credits[i] for i in voters], dtype=np.float64) / tau
    if c.size == 0:
        return []
    e = np.exp(c - c.max())
    return [float(x) for x in e / e.sum()]


def discounted_log_prob(
    logp_comm: list[torch.Tensor], logp_dec: torch.Tensor, gamma: float, rounds: int
) -> torch.Tensor:
    """The bracket of Eq. 7: sum_{t=2}^{T} gamma^{T+1-t} log P_comm^t + log P_dec^{T+1}.

    logp_comm[k] is round t = k + 2 (a (Q,) tensor each), so len(logp_comm) == rounds - 1.
    """
    if len(logp_comm) != rounds - 1:
        raise ValueError(f"expected {rounds - 1} log-probs for T={rounds}, got {len(logp_comm)}")
    total = logp_dec
    for k, lp in enumerate(logp_comm):
        t = k + 2
        total = total + (gamma ** (rounds + 1 - t)) * lp
    return total


def vote_utility(
    question: Question, answers: list[str | None], credits: np.ndarray, participation: np.ndarray, tau: float
) -> float:
    """The expected utility of §4.2.2's credit-weighted vote for one participation vector: voters are
    the participants (everyone when none), weighted by `decision_weights`; a tie is scored as the
    executor's seeded draw among the tied answers would be on average (`weighted_vote`)."""
    voters = [i for i in range(len(answers)) if participation[i]] or list(range(len(answers)))
    tied = vote_leaders([answers[v] for v in voters], decision_weights(credits, voters, tau))
    return sum(is_correct(question, a) for a in tied) / len(tied) if tied else 0.0


def decision_advantages(
    question: Question,
    answers: list[str | None],
    credits: np.ndarray,
    actions: np.ndarray,
    utility: float,
    epsilon: float,
    tau: float,
) -> np.ndarray:
    """Per-agent advantages of the decision's participation (`decision_credit=counterfactual`):
    A_i = u - [p_i U(a_i = 1) + (1 - p_i) U(a_i = 0)], the other agents' actions as sampled, U the vote's
    expected utility (`vote_utility`) and p_i = c_i (1 - eps) + (1 - c_i) eps the probability that Alg. 2
    samples a_i = 1. Why: the baseline depends on the others' actions only, so it adds no bias for agent
    i, and an agent whose vote changes nothing gets no gradient instead of the episode's noise."""
    c = np.asarray(credits, dtype=np.float64)
    p = c * (1.0 - epsilon) + (1.0 - c) * epsilon
    out = np.empty(len(answers), dtype=np.float64)
    for i in range(len(answers)):
        with_i, without_i = np.array(actions, copy=True), np.array(actions, copy=True)
        with_i[i], without_i[i] = 1, 0
        base = p[i] * vote_utility(question, answers, c, with_i, tau) + (1.0 - p[i]) * vote_utility(
            question, answers, c, without_i, tau
        )
        out[i] = utility - base
    return out


def participation_vectors(n: int) -> np.ndarray:
    """Every participation vector of n agents, (2^n, n) of 0/1, row k the binary digits of k."""
    k = np.arange(2**n)[:, None]
    return ((k >> np.arange(n)[None, :]) & 1).astype(np.int64)


def vote_table(question: Question, answers: list[str | None], credits: np.ndarray, tau: float) -> np.ndarray:
    """`vote_utility` of every participation vector (rows of `participation_vectors`): (2^N,)."""
    masks = participation_vectors(len(answers))
    return np.array([vote_utility(question, answers, credits, m, tau) for m in masks], dtype=np.float64)


def expected_vote_utility(logits: torch.Tensor, table: torch.Tensor, epsilon: float) -> torch.Tensor:
    """sum_m P(m) U(m) per question: the decision's exact expected utility under Alg. 2's sampling
    (a_i ~ Bernoulli(c_i), flipped with probability eps), differentiable in the logits. logits (Q, N),
    table (Q, 2^N) from `vote_table`. Why: its gradient is what Eq. 7's decision term estimates from one
    sample (exactly its expectation at eps = 0), so that term's sampling noise is gone at the cost of 2^N
    recounts."""
    torch = _torch()
    n = logits.shape[-1]
    masks = torch.as_tensor(participation_vectors(n), dtype=logits.dtype, device=logits.device)
    c = torch.sigmoid(logits)
    p = (c * (1.0 - epsilon) + (1.0 - c) * epsilon).clamp(1e-12, 1.0 - 1e-12)
    logp = torch.log(p) @ masks.T + torch.log1p(-p) @ (1.0 - masks).T  # (Q, 2^N)
    return (torch.exp(logp) * table).sum(-1)


# Wider embeddings than this get emb_proj = AUTO_PROJ by default (emb_proj: null)
AUTO_WIDTH, AUTO_PROJ = 64, 32


def embedding_width(embedder: str, emb_dim: int | None = None, announced: int | None = None) -> int:
    """The width of the analysis embeddings a run feeds TodyComm: the executor's announced size
    (ctx.extra["embed_dim"]) wins over the method's emb_dim, which wins over the embedder's own.
    One function, so that the config's spelling check and the network agree on it."""
    return int(announced or emb_dim or embedder_dim(embedder))


def resolve_emb_proj(setting: int | None, emb_dim: int) -> int:
    """The projection width a run uses: an explicit setting as given; null by the embedding's width.

    Why by width (issue 28, docs/deviations.md): the GRU's gates saturate when two wide standardised
    embedding blocks are most of its input. With MiniLM (2 x 384 of 803 inputs) a 32-d projection made
    REINFORCE learn much faster (sim seed 0 ADAcc: OpenBookQA lt50 60.9 -> 82.9, gt50 78.4 -> 89.7, MMLU
    gt50 80.1 -> 85.4; MMLU lt50 65.7 -> 63.0 and eq50 79.4 -> 75.5); with the 64-d hashing embedder
    the gates are not saturated and the projection slowed it (MMLU lt50 ADAcc 96.8 -> 70.3), so
    hashing runs keep the unprojected input."""
    if setting is not None:
        return int(setting)
    return AUTO_PROJ if emb_dim > AUTO_WIDTH else 0


def _by_credit_setting(setting: float | None, decision_credit: str, paper: float, ours: float) -> float:
    """The rule `resolve_updates` and `resolve_gamma` share: an explicit setting as given; null is the
    paper step's value where `episode` was asked for by name (the setting, not what `auto` resolved to), else
    ours."""
    if setting is not None:
        return setting
    return paper if decision_credit == "episode" else ours


def resolve_updates(setting: int | None, decision_credit: str) -> int:
    """Gradient steps per batch: an explicit setting as given; null is 1 where the paper's `episode` credit
    was asked for by name (Eq. 7's step, literally) and 4 otherwise (the configuration measured in
    docs/experiments/2026-11-28-todycomm-expected-decision.md). `decision_credit` is the setting, not what
    `auto` resolved to: where `auto` falls back to `episode` (an LLM or CrS decision, N > 12), 4 steps alone
    still beat the paper's single step at the paper's budget (MiniLM, 3 seeds: Acc +6-8, ADAcc +3-9 points,
    docs/experiments/2026-11-27-todycomm-reinforce-step.md)."""
    return int(_by_credit_setting(setting, decision_credit, paper=1, ours=DEFAULT_UPDATES))


def resolve_gamma(setting: float | None, decision_credit: str) -> float:
    """Eq. 7's discount: an explicit setting as given; null is 0.9 (our value since the first trainer; the
    paper gives none) where the paper's `episode` credit was asked for by name, else 0.1.

    Why 0.1 (issue 40, docs/experiments/2026-11-29-todycomm-gamma.md): with the decision's exact term, the
    communication rounds' REINFORCE terms were 1.2-2.7 times its gradient's norm and orthogonal to the
    direction that separates adversaries (cosine with a supervised gradient on the true labels -0.17 to +0.02,
    against the decision term's 0.27-0.80), so they mostly added noise to each step. At 0.1 (round weights
    0.001, 0.01, 0.1 for T = 4) MiniLM ADAcc at the paper's 24 iterations rose from 86.6 to 92.2 % on the
    tuning cells and from 82.5 to 89.8 % on issue 40's target cells (3 seeds), Acc from 61.7 to 65.3. Where
    `auto` falls back to the sampled term with 4 steps, 0.1 was better too (tuning cells 58.6 / 74.9 -> 60.8 /
    79.8), so the null follows the setting, as `resolve_updates` does."""
    return float(_by_credit_setting(setting, decision_credit, paper=EPISODE_GAMMA, ours=DEFAULT_GAMMA))


def resolve_decision_credit(setting: str, decision: str, n_agents: int) -> str:
    """The decision credit a run uses: an explicit setting as given (refused later in one line where it
    cannot apply); `auto` is `expected` where the decision is TodyComm's credit-weighted vote of at most
    EXPECTED_MAX_AGENTS agents, else the paper's `episode`.

    Why `expected` by default (issue 40): at the paper's 24 iterations it lifted MiniLM ADAcc on the four
    MMLU/OpenBookQA eq50/gt50 cells from 61.8-65.2 % (the paper's step) to 77.8-88.1 % (4 steps per batch,
    docs/experiments/2026-11-28-todycomm-expected-decision.md). Where it cannot be computed (an LLM or CrS
    decision, or 2^N recounts too many) the paper's term is the honest fallback, not an error (with 4 steps,
    `resolve_updates`)."""
    if setting != "auto":
        return setting
    if decision in ("auto", "vote") and n_agents <= EXPECTED_MAX_AGENTS:
        return "expected"
    return "episode"


# -- the method ------------------------------------------------------------------------------------
class TodyComm(LearnedMethod):
    """TodyComm (the main method). Config keys: `TodyCommSettings`."""

    needs_embeddings = True  # its node features f_i^t read the agents' analyses (Eq. 4)
    # replayed on recorded debates (tomacs.analysis.replay): a participant of round t is a_i^t = 1
    # (c_i > mean(c)), the default `replay_excluded`; its features read round t-1's graph
    replays = True
    Settings = TodyCommSettings
    settings: TodyCommSettings

    def __init__(self, ctx: MethodContext, **params: Any) -> None:
        super().__init__(ctx, **params)
        s = self.settings
        self.features, self.ablation = s.features, s.ablation
        self.needs_oracle = self.ablation == "no_credits"  # Table 5 "w/o credits": ground-truth labels
        self.baseline, self.normalize, self.isolated = s.baseline, s.normalize, s.isolated
        self.epsilon, self.tau, self.tie_tol = s.epsilon, s.decision_tau, s.tie_tol
        self.gamma = resolve_gamma(s.gamma, s.decision_credit)
        self.comm = s.comm
        self.decision_credit = resolve_decision_credit(s.decision_credit, ctx.decision, ctx.n_agents)
        self.updates = resolve_updates(s.updates, s.decision_credit)
        if self.decision_credit != "episode" and ctx.decision not in ("auto", "vote"):
            raise ValueError(
                f"method.decision_credit={self.decision_credit} recounts TodyComm's credit-weighted vote; "
                f"with decision={ctx.decision} the decision is not that vote: use decision=vote or "
                "method.decision_credit=episode"
            )
        if self.decision_credit == "expected" and ctx.n_agents > EXPECTED_MAX_AGENTS:
            raise ValueError(
                f"method.decision_credit=expected sums over 2^N participation vectors; N={ctx.n_agents} "
                f"agents is more than {EXPECTED_MAX_AGENTS}: use method.decision_credit=counterfactual"
            )
        clip = s.norm_clip
        # The executor's embedder decides the embedding size; the run announces it in ctx.extra.
        self.emb_dim = embedding_width(self.embedder_name, s.emb_dim, ctx.extra.get("embed_dim"))
        self.in_dim = feature_dim(self.emb_dim, self.features)
        self.hidden = s.hidden_size
        self.mlp_hidden = s.mlp_hidden
        self.emb_proj = resolve_emb_proj(s.emb_proj, self.emb_dim)
        self.meta = {
            "in_dim": self.in_dim,
            "emb_dim": self.emb_dim,
            "hidden_size": self.hidden,
            "mlp_hidden": self.mlp_hidden,
            "features": self.features,
            "normalize": self.normalize,
            "emb_proj": self.emb_proj,
        }
        self.norm_clip = clip
        self.net = self.seeded(self.make_net).to(self.device)
        self.trace: list[tuple[int, np.ndarray]] | None = None  # (t, features) when analysed

    def resolved_settings(self) -> dict[str, object]:
        return {"decision_credit": self.decision_credit, "gamma": self.gamma}

    def make_net(self) -> CreditNet:
        """A fresh credit network of this configuration (Alg. 1), unseeded: `tomacs diagnose` builds
        copies of it for its supervised learning curve."""
        from tomacs.methods.nets import CreditNet

        names = dict(feature_names(self.emb_dim, self.features))
        emb_cols = [list(range(names[k].start, names[k].stop)) for k in ("ana", "nbr_ana") if k in names]
        return CreditNet(
            self.in_dim, self.hidden, self.mlp_hidden, self.normalize, self.norm_clip, emb_cols, self.emb_proj
        )

    def credit_policy_refusal(self) -> str | None:
        """`tomacs analyze credits` reads `net`, `make_net` and `trace` (see `_step`)."""
        if self.ablation == "no_credits":
            return "ablation=no_credits uses oracle credits: there is no learned policy to diagnose"
        return None

    # -- replay on recorded debates (tomacs.analysis.replay) ----------------------------------------
    @classmethod
    def replay_refusal(cls, params: Mapping[str, object]) -> str | None:
        if params.get("ablation") == "no_credits":
            return "ablation=no_credits: its credits are oracle labels, there is no policy"
        return None

    def replay_follow(self, state: dict[str, Any], t: int, edges: list[list[tuple[int, int]]]) -> None:
        state["edges"][t] = edges  # what `_step(t + 1)` reads as round t's graph (`begin`'s record)

    # -- episode ---------------------------------------------------------------------------------
    def begin(
        self,
        questions: list[Question],
        train: bool,
        rng: np.random.Generator,
        plans: list[AdversaryPlan] | None = None,
    ) -> dict[str, object]:
        """Per-batch state: hidden states h^1 = 0 for every (question, agent), and per-round records."""
        torch = _torch()
        q, n = len(questions), self.ctx.n_agents
        return {
            "questions": questions,
            "train": bool(train),
            "rng": rng,
            "plans": plans,
            "h": torch.zeros(q * n, self.hidden, device=self.device),
            "credits": {},  # t -> (Q, N) numpy credits c^t (detached), t = 2..T+1
            "actions": {},  # t -> (Q, N) participation a^t as applied to the graph
            "logp": {},  # t -> (Q,) tensor log P^t (training only)
            "feats": {},  # t -> the network's input of round t (training only: `reuse_loss` replays it)
            "sampled": {},  # t -> the sampled (post-flip) actions whose log-prob is logp[t]
            "edges": {},  # t -> per-question edge lists of round t
            "last_t": 1,
        }

    def _sampling(self, state: Mapping[str, object]) -> bool:
        return bool(state["train"]) and self.ablation != "no_credits"

    def _step(self, state: dict[str, Any], t: int, history: History) -> tuple[np.ndarray, np.ndarray]:
        """One round of Alg. 1 + Alg. 2 for every question: returns (credits, applied participation)."""
        if t != state["last_t"] + 1:
            raise RuntimeError(f"TodyComm expects rounds in order; got t={t} after t={state['last_t']}")
        questions: list[Question] = state["questions"]
        if len(history) != len(questions):
            raise ValueError(f"history has {len(history)} questions, the batch has {len(questions)}")
        for hq in history:
            if len(hq) < t - 1:
                raise ValueError(f"round {t} needs outputs of round {t - 1}; history has {len(hq)} rounds")
        n, qn = self.ctx.n_agents, len(questions)

        if self.ablation == "no_credits":
            credits = self._oracle_credits(state, min(t, self.ctx.rounds))
            state["credits"][t] = credits
            state["last_t"] = t
            return credits, credits.astype(np.int64)

        torch = _torch()
        feats = build_features(
            prev=[hq[t - 2] for hq in history],
            first=[hq[0] for hq in history],
            edges=state["edges"].get(t - 1),
            credits=state["credits"].get(t - 1),
            kinds=[qq.kind for qq in questions],
            emb_dim=self.emb_dim,
            features=self.features,
        )
        if self.trace is not None:  # tomacs.analysis.credit reads the exact inputs of the policy
            self.trace.append((t, feats))
        f = torch.as_tensor(feats.reshape(qn * n, -1), device=self.device)
        if state["train"]:
            state["feats"][t] = f
        with torch.set_grad_enabled(bool(state["train"])):
            logits, h = self.net(f, state["h"], update_stats=bool(state["train"]))
        state["h"] = h
        logits = logits.view(qn, n)
        credits = torch.sigmoid(logits).detach().cpu().numpy().astype(np.float64)
        state["credits"][t] = credits

        if self.comm == "debate" and t <= self.ctx.rounds:
            actions = np.ones((qn, n), dtype=np.int64)  # the debate graph: everyone takes part
        elif self._sampling(state):
            actions, _, _ = sample_participation(credits, self.epsilon, state["rng"])
            state["logp"][t] = bernoulli_log_prob(logits, actions)
            state["sampled"][t] = actions
            if t == self.ctx.rounds + 1 and self.decision_credit == "counterfactual":
                state["logp_agents"] = bernoulli_terms(logits, actions)  # (Q, N): one term per agent
            if t == self.ctx.rounds + 1 and self.decision_credit == "expected":
                state["decision_logits"] = logits  # (Q, N), attached: the exact expectation's input
        elif self.ablation == "no_removal":
            actions = np.ones((qn, n), dtype=np.int64)
        else:
            actions = inference_participation(credits, self.tie_tol)
        state["last_t"] = t
        return credits, actions

    def _oracle_credits(self, state: dict[str, Any], t: int) -> np.ndarray:
        """no_credits ablation: 1 for agents behaving honestly at round t, else 0 (oracle labels)."""
        plans = state.get("plans")
        if plans is None:
            raise RuntimeError(
                "ablation=no_credits needs the episodes' adversary plans: the executor must set "
                "state['plans'] (one AdversaryPlan per question) after begin()"
            )
        if len(plans) != len(state["questions"]):
            raise ValueError(f"{len(plans)} plans for {len(state['questions'])} questions")
        n = self.ctx.n_agents
        honest = [[p.behaviour(i, t) == "honest" for i in range(n)] for p in plans]
        return np.array(honest, dtype=np.float64)

    def act(self, state: dict[str, Any], t: int, history: History) -> list[RoundGraph]:
        """Round t in 2..T: credits, participation, credit-ranked DAG (Alg. 1, 2, 4)."""
        self.check_round(t)
        credits, actions = self._step(state, t, history)
        ctx = self.ctx
        if self.comm == "debate":
            return self._debate_round(state, t, credits)
        graphs, edges_t = [], []
        for q in range(len(history)):
            part = [int(x) for x in actions[q]]
            edges = credit_ranked_dag(
                credits[q].tolist(),
                part,
                mask=ctx.mask,
                out_budget=ctx.out_budget,
                in_budget=ctx.in_budget,
                rank=self.ablation != "no_ranking",
            )
            # silent: a non-participant makes no call and carries its output forward; answer: it
            # still answers alone (an isolated node, observed by the next round's features)
            nodes = [i for i in range(ctx.n_agents) if part[i] or self.isolated == "answer"]
            graphs.append(
                RoundGraph(
                    nodes=nodes,
                    edges=edges,
                    credits=[float(c) for c in credits[q]],
                    participants=[i for i in range(ctx.n_agents) if part[i]],
                )
            )
            edges_t.append(edges)
        state["actions"][t] = actions
        state["edges"][t] = edges_t
        return graphs

    def _debate_round(self, state: dict[str, Any], t: int, credits: np.ndarray) -> list[RoundGraph]:
        """comm=debate: every agent reads every other's round t-1 reply (temporal edges, as the
        `debate` topology, under the same mask and budgets); the features of round t+1 read these
        edges as round t's graph, as `tomacs replay` installs a transcript's recorded reads."""
        ctx = self.ctx
        _, temporal = constrain_round([], all_pairs(ctx.n_agents), ctx.mask, ctx.in_budget, ctx.out_budget)
        nodes = list(range(ctx.n_agents))
        graphs = [
            RoundGraph(
                nodes=list(nodes),
                edges=[],
                temporal_edges=list(temporal),
                credits=[float(c) for c in credits[q]],
                participants=list(nodes),
            )
            for q in range(len(credits))
        ]
        state["actions"][t] = np.ones((len(credits), ctx.n_agents), dtype=np.int64)  # everyone takes part
        state["edges"][t] = [list(temporal) for _ in graphs]
        return graphs

    @property
    def decision_mode(self) -> DecisionMode:
        """§4.2.2: TodyComm decides by its own credit-weighted vote (`decision=llm` asks an LLM
        decision agent to read its voters instead); the baselines' comparison rule is not its."""
        return "llm" if self.ctx.decision == "llm" else "vote"

    def decide(self, state: dict[str, Any], history: History) -> list[DecisionGraph]:
        """Round T+1 (§4.2.2): participation picks voters, softmax of their credits weights them."""
        t = self.ctx.rounds + 1
        credits, actions = self._step(state, t, history)
        mode = self.decision_mode
        out = []
        for q in range(len(history)):
            voters = [i for i in range(self.ctx.n_agents) if actions[q, i]]
            if not voters:
                voters = list(range(self.ctx.n_agents))
            out.append(
                DecisionGraph(
                    voters=voters,
                    weights=decision_weights(credits[q], voters, self.tau),
                    mode=mode,
                    credits=[float(c) for c in credits[q]],
                )
            )
        state["actions"][t] = actions
        # the votes the decision counts: what the recounts of `decision_credit` != episode recount
        state["final_answers"] = [[o.answer for o in h[-1]] for h in history]
        return out

    # -- learning --------------------------------------------------------------------------------
    def loss(
        self, state: dict[str, Any], episodes: list[Episode], utilities: list[float]
    ) -> torch.Tensor | None:
        """Eq. 7 over the batch (see `reinforce_loss`); None for the no_credits ablation."""
        if self.ablation == "no_credits":
            return None
        u = self.utilities(state, utilities)
        T = self.ctx.rounds
        needed = [T + 1] if self.comm == "debate" else range(2, T + 2)
        missing = [t for t in needed if t not in state["logp"]]
        if missing:
            raise RuntimeError(f"no log-probs for rounds {missing}: call act for 2..T and decide first")
        # what `reuse_loss` needs: the sampling policy's terms and the advantage (its baseline drawn once:
        # moving_avg's baseline moves with each draw, so `expected`, whose return is not u, draws its own)
        state["logp_old"] = {t: state["logp"][t].detach() for t in needed}
        if self.decision_credit == "expected":
            return self._expected_loss(state)
        baseline = self.baseline_value(u, [q.id for q in state["questions"]])
        state["advantage"] = u - baseline
        if self.decision_credit == "counterfactual":
            return self._counterfactual_loss(state, u, baseline)
        if self.comm == "debate":  # no communication action was taken: the decision term alone
            total = state["logp"][T + 1]
        else:
            comm = [state["logp"][t] for t in range(2, T + 1)]
            total = discounted_log_prob(comm, state["logp"][T + 1], self.gamma, T)
        return reinforce_loss(total, u, baseline)

    def _counterfactual_loss(
        self, state: dict[str, Any], u: np.ndarray, baseline: float | np.ndarray
    ) -> torch.Tensor:
        """Eq. 7 with the decision's terms weighted per agent by `decision_advantages`; the
        communication rounds keep the episode's advantage u - b."""
        T = self.ctx.rounds
        answers = self._final_answers(state)
        adv = np.stack(
            [
                decision_advantages(
                    question,
                    answers[q],
                    state["credits"][T + 1][q],
                    state["actions"][T + 1][q],
                    float(u[q]),
                    self.epsilon,
                    self.tau,
                )
                for q, question in enumerate(state["questions"])
            ]
        )
        state["decision_advantage"] = adv
        state["logp_agents_old"] = state["logp_agents"].detach()
        terms = state["logp_agents"]
        loss = -(terms * terms.new_tensor(adv)).sum(-1).mean()
        if self.comm != "debate":
            comm = self._comm_log_prob(state)
            loss = loss + reinforce_loss(comm, u, baseline)
        return loss

    def _expected_loss(self, state: dict[str, Any]) -> torch.Tensor:
        """-E[U] of the decision (`expected_vote_utility`, exact over its participation) plus Eq. 7's
        communication terms, whose return is that expectation given the episode (the decision's own
        draw averaged out) less its batch baseline."""
        torch = _torch()
        T = self.ctx.rounds
        logits = state["decision_logits"]
        credits, answers = state["credits"][T + 1], self._final_answers(state)
        table = np.stack(
            [
                vote_table(question, answers[q], credits[q], self.tau)
                for q, question in enumerate(state["questions"])
            ]
        )
        state["vote_table"] = torch.as_tensor(table, dtype=logits.dtype, device=logits.device)
        expected = expected_vote_utility(logits, state["vote_table"], self.epsilon)
        loss = -expected.mean()
        if self.comm != "debate":
            ev = expected.detach().cpu().numpy().astype(np.float64)
            baseline = self.baseline_value(ev, [q.id for q in state["questions"]])
            state["advantage"] = ev - baseline
            comm = self._comm_log_prob(state)
            loss = loss + reinforce_loss(comm, ev, baseline)
        return loss

    def _final_answers(self, state: dict[str, Any]) -> list[list[str | None]]:
        """Each question's last-round answers, as `decide` read them: the votes the decision's recounts
        count (the same answers the episodes record; `loss` has checked that decide ran)."""
        return state["final_answers"]

    def _comm_log_prob(self, state: dict[str, Any]) -> torch.Tensor:
        """Eq. 7's communication terms: sum over rounds 2..T of gamma^{T+1-t} log P^t, per question."""
        return sum(self._round_weight(t) * state["logp"][t] for t in range(2, self.ctx.rounds + 1))

    def _round_weight(self, t: int) -> float:
        """Eq. 7's weight of round t's log-prob: gamma^{T+1-t} for communication, 1 for the decision."""
        T = self.ctx.rounds
        return 1.0 if t == T + 1 else self.gamma ** (T + 1 - t)

    def reuse_loss(self, state: dict[str, Any], clip: float) -> torch.Tensor:
        """Eq. 7's terms as PPO's clipped surrogate, round by round, with the log-probs of the batch's
        sampled actions recomputed from the inputs the network read (the GRU replayed from h = 0; the
        running standardiser is not updated again). Its gradient at the sampling weights is `loss`'s."""
        if "logp_old" not in state:
            raise RuntimeError("reuse_loss follows loss on the same batch")
        torch = _torch()
        qn, n = len(state["questions"]), self.ctx.n_agents
        h = torch.zeros(qn * n, self.hidden, device=self.device)
        total = None
        for t in sorted(state["feats"]):
            logits, h = self.net(state["feats"][t], h)
            if t not in state["logp_old"]:
                continue
            if t == self.ctx.rounds + 1 and "vote_table" in state:  # the exact expectation, again
                term = -expected_vote_utility(logits.view(qn, n), state["vote_table"], self.epsilon).mean()
            elif t == self.ctx.rounds + 1 and "decision_advantage" in state:  # per agent, times N: a sum
                new_terms = bernoulli_terms(logits.view(qn, n), state["sampled"][t]).flatten()
                old_terms, adv = state["logp_agents_old"].flatten(), state["decision_advantage"].flatten()
                term = n * clipped_surrogate_loss(new_terms, old_terms, adv, clip)
            else:
                new = bernoulli_log_prob(logits.view(qn, n), state["sampled"][t])
                term = self._round_weight(t) * clipped_surrogate_loss(
                    new, state["logp_old"][t], state["advantage"], clip
                )
            total = term if total is None else total + term
        assert total is not None
        return total

    def checkpoint_meta(self, meta: dict[str, Any]) -> dict[str, object]:
        if meta and "normalize" not in meta:
            meta["normalize"] = "none"  # checkpoints from before the option had raw inputs
        if meta and "emb_proj" not in meta:
            meta["emb_proj"] = 0  # checkpoints from before the option had no projection
        return meta
