"""What every learned topology method shares: config checks, seeded init, device, checkpoints with
metadata, per-question randomness, the REINFORCE loss with its baselines, and log-prob helpers.

Why one base: TodyComm, AgentPrune, G-Designer, EIB-Learner and CARD differ in how they score
edges or agents, not in how they are configured, seeded, checkpointed or fed to the one trainer;
keeping that plumbing here keeps each paper's file about its paper. The next method is one file:
a subclass with `name`, `Settings` (a `tomacs.methods.settings.LearnedSettings` dataclass: its keys,
defaults and checks; conf/method/<name>.yaml extends it), `self.meta` and
`self.net = self.seeded(SomeNet, ...)` in `__init__` (the network a top-level class in
`tomacs.methods.nets`), then `begin` (graphs from `tomacs.graphs`' samplers, per-question
`question_rngs`), `act` if its graph changes by round, and `loss` via `reinforce_loss`. Register
it in `tomacs.methods.registry`; tests/test_method_contract.py then checks it.

torch is imported lazily (inside functions), so importing this module stays cheap.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from tomacs.embedding.embedders import DEFAULT_EMBEDDER, Embedder, embedder_dim, get_embedder
from tomacs.methods.base import History, Method, MethodContext
from tomacs.methods.settings import LearnedSettings
from tomacs.seeding import stable_seed
from tomacs.types import Question, RoundGraph

if TYPE_CHECKING:
    import torch

__all__ = [
    "BASELINES",
    "LearnedMethod",
    "bernoulli_log_prob",
    "bernoulli_matrix_log_prob",
    "bernoulli_terms",
    "decisions_log_prob",
    "nuclear_norm",
    "question_text",
    "reinforce_loss",
    "clipped_surrogate_loss",
    "torch_module",
]

BASELINES = ("none", "batch_mean", "moving_avg", "per_question")
_EPS = 1e-6
_Net = TypeVar("_Net")


def torch_module() -> ModuleType:
    import torch

    return torch


# -- log-probabilities and the policy-gradient loss (unit-tested against hand computations) --------
def bernoulli_terms(logits: torch.Tensor, actions: torch.Tensor | np.ndarray) -> torch.Tensor:
    """a*logsigmoid(z) + (1-a)*logsigmoid(-z) elementwise: a*log c + (1-a)*log(1-c) with
    c = sigmoid(z), finite even when c rounds to 0 or 1 in float32 (the terms `bernoulli_log_prob`
    sums; kept per agent where each agent has its own advantage)."""
    torch = torch_module()
    a = torch.as_tensor(actions, dtype=logits.dtype, device=logits.device)
    ls = torch.nn.functional.logsigmoid
    return a * ls(logits) + (1.0 - a) * ls(-logits)


def bernoulli_log_prob(logits: torch.Tensor, actions: torch.Tensor | np.ndarray) -> torch.Tensor:
    """sum_i log pi(a_i) with pi = Bernoulli(sigmoid(logit)), summed over the last axis."""
    return bernoulli_terms(logits, actions).sum(-1)


def bernoulli_matrix_log_prob(
    logits: torch.Tensor, sample: torch.Tensor | np.ndarray, mask: torch.Tensor | np.ndarray
) -> torch.Tensor:
    """sum over candidate edges of log Bernoulli(sample | sigmoid(logit)); the last two axes are N x N.

    A masked sum over the full matrix, so the result stays attached to every logit (a fully pruned
    matrix gives 0 with zero gradient, not a detached constant).
    """
    torch = torch_module()
    m = torch.as_tensor(mask, dtype=logits.dtype, device=logits.device)
    return (m * bernoulli_terms(logits, sample)).sum(dim=(-2, -1))


def decisions_log_prob(probs: torch.Tensor, decisions: list[tuple[int, int, int]]) -> torch.Tensor:
    """log P(G) = sum over decided pairs of kept*log p_ij + (1-kept)*log(1-p_ij), as a torch scalar
    (`decisions` from `tomacs.graphs.sequential_dag`).

    Probabilities are clamped to [1e-6, 1-1e-6] so a saturated sigmoid cannot give -inf.
    """
    torch = torch_module()
    if not decisions:
        return probs.sum() * 0.0  # keeps the graph (and device) of probs
    idx = torch.as_tensor([(i, j) for i, j, _ in decisions], device=probs.device)
    kept = torch.as_tensor([k for _, _, k in decisions], dtype=probs.dtype, device=probs.device)
    p = probs[idx[:, 0], idx[:, 1]].clamp(_EPS, 1.0 - _EPS)
    return (kept * torch.log(p) + (1.0 - kept) * torch.log1p(-p)).sum()


def reinforce_loss(
    log_probs: torch.Tensor,
    utilities: np.ndarray | Sequence[float],
    baseline: float | np.ndarray = 0.0,
) -> torch.Tensor:
    """REINFORCE as a loss to minimise: -mean_q [ log P_q * (u_q - b) ] (TodyComm Eq. 7, EIB Eq. 11,
    G-Designer Eq. 17, AgentPrune, CARD's -u term)."""
    torch = torch_module()
    u = torch.as_tensor(utilities, dtype=log_probs.dtype, device=log_probs.device)
    b = torch.as_tensor(
        baseline, dtype=log_probs.dtype, device=log_probs.device
    )  # a scalar or one per episode
    return -((log_probs * (u - b)).mean())


def clipped_surrogate_loss(
    new: torch.Tensor, old: torch.Tensor, advantage: np.ndarray | torch.Tensor, clip: float
) -> torch.Tensor:
    """PPO's clipped surrogate as a loss to minimise: -mean_q min(r A, clip(r, 1-e, 1+e) A) with
    r = exp(new - old). Why: `method.updates` > 1 takes several gradient steps on one batch of episodes
    (the LLM calls are the cost, not the steps), and the clip keeps the later steps near the policy that
    sampled them. At r = 1 its gradient is `reinforce_loss`'s, so the first step is Eq. 7's."""
    torch = torch_module()
    a = torch.as_tensor(advantage, dtype=new.dtype, device=new.device)
    r = torch.exp(new - old.detach())
    return -(torch.minimum(r * a, torch.clamp(r, 1.0 - clip, 1.0 + clip) * a).mean())


def per_question_baseline(u: np.ndarray, keys: list[str], fallback: float) -> np.ndarray:
    """Leave-one-out mean of the utilities sharing each episode's key (`fallback` where it is alone)."""
    if len(keys) != len(u):
        raise ValueError(f"{len(keys)} question keys for {len(u)} utilities")
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    for k, x in zip(keys, u, strict=True):
        sums[k] = sums.get(k, 0.0) + float(x)
        counts[k] = counts.get(k, 0) + 1
    return np.array(
        [
            (sums[k] - float(x)) / (counts[k] - 1) if counts[k] > 1 else fallback
            for k, x in zip(keys, u, strict=True)
        ]
    )


def nuclear_norm(p: torch.Tensor) -> torch.Tensor:
    """Sum of singular values of the last two axes: the convex surrogate of rank (low-rank prior of
    AgentPrune and G-Designer)."""
    torch = torch_module()
    return torch.linalg.svdvals(p).sum(-1)


def question_text(q: Question) -> str:
    """The query as the agents see it (text plus labelled options), the query node's text input."""
    if not q.options:
        return q.text
    opts = " ".join(f"{lab}) {o}" for lab, o in zip(q.labels, q.options, strict=True))
    return f"{q.text} {opts}"


# -- the base class ------------------------------------------------------------------------------------
class LearnedMethod(Method):
    """Subclasses set `name` and `Settings`, build `self.net` with `seeded(...)` and keep `self.meta`
    (architecture facts a checkpoint must match)."""

    trainable = True
    # REINFORCE on task rewards (tomacs.training.reinforce); a method that learns otherwise names its own
    # trainer (G-Safeguard: its supervised one on labelled conversations, tomacs.extras.gsafeguard.trainer)
    trainer = "tomacs.training.reinforce:REINFORCE"
    needs_embeddings = False  # the GNN methods embed role profiles and queries themselves
    Settings: type[LearnedSettings] = LearnedSettings

    def __init__(self, ctx: MethodContext, embedder: str | None = None, **params: Any) -> None:
        self.settings = self.Settings.from_params(params)  # checked: one line naming a bad key
        super().__init__(ctx, **self.settings.params())
        if ctx.mask is not None and np.asarray(ctx.mask).shape != (ctx.n_agents, ctx.n_agents):
            raise ValueError(f"mask has shape {np.asarray(ctx.mask).shape}, expected N x N = {ctx.n_agents}")
        # a run resolves its one embedder (top-level `embedder`, tomacs.config.resolve_embedder) and
        # hands it in ctx.extra; a method built by hand (tests) may name one, else the one default
        self.embedder_name = str(ctx.extra.get("embedder") or embedder or DEFAULT_EMBEDDER)
        self.emb_dim = embedder_dim(self.embedder_name)
        self.meta: dict[str, Any] = {}
        self.net: Any = None
        self._embedder: Embedder | None = None
        self.visits: dict[str, int] = {}  # training visits per question id: fresh, batch-free draws
        self.baseline = "none"
        self._ma: float | None = None  # moving-average reward baseline
        self.device = self._checked_device(ctx.device)
        # gradient steps per batch, read by the trainer (a method may resolve a null setting: TodyComm)
        self.updates: int = int(self.settings.updates or 1)
        if self.updates > 1 and not self.reuses:
            raise ValueError(
                f"{self.name} takes one gradient step per batch of episodes; set method.updates=1"
            )

    def resolved_settings(self) -> dict[str, object]:
        """What the method resolved from `auto`/null settings at this run, beyond `updates` (results.json
        -> train)."""
        return {}

    # -- network, device ---------------------------------------------------------------------------
    def seeded(self, build: Callable[..., _Net], *args: object) -> _Net:
        """Build the network with initial weights seeded by ctx.seed, without touching global RNG."""
        torch = torch_module()
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(self.ctx.seed))
            return build(*args)

    def _checked_device(self, device: str) -> torch.device:
        torch = torch_module()
        dev = torch.device(device)
        if dev.type == "cuda" and not torch.cuda.is_available():
            raise RuntimeError(f"{self.name} was asked for device {device!r} but torch sees no CUDA GPU")
        return dev

    def to(self, device: str) -> LearnedMethod:
        """Move the network (and whatever `moved` moves) to `device`."""
        self.device = self._checked_device(device)
        self.net = self.net.to(self.device)
        self.moved(self.device)
        return self

    def moved(self, device: torch.device) -> None:
        """Hook: move tensors the method keeps outside its network (edge indices)."""

    @property
    def embedder(self) -> Embedder:
        """The one the job handed in (`MethodContext.embedder`), else built on first use so that
        constructing the method (and its tests) never loads MiniLM."""
        if self._embedder is None:
            given = self.ctx.embedder
            if given is None:
                given = get_embedder(self.embedder_name, str(self.device))
            self._embedder = given
        return self._embedder

    # -- episode ---------------------------------------------------------------------------------
    def check_round(self, t: int) -> None:
        if not 2 <= t <= self.ctx.rounds:
            raise ValueError(f"act is for rounds 2..{self.ctx.rounds}, got t={t}")

    def act(self, state: dict[str, Any], t: int, history: History) -> list[RoundGraph]:
        """Every agent, and the graph `begin` decided for each query (state["edges"]), in every round
        t = 2..T: EIB-Learner, CARD and G-Designer design one graph per query; TodyComm and
        AgentPrune decide each round and override this."""
        self.check_round(t)
        nodes = list(range(self.ctx.n_agents))
        return [RoundGraph(nodes=list(nodes), edges=list(e)) for e in state["edges"]]

    # -- per-question randomness -------------------------------------------------------------------
    def question_seeds(self, questions: list[Question], train: bool) -> list[int]:
        """One seed per question keyed by (seed, method, question id, and in training how often that
        question was trained on): batching never changes a graph, and each epoch resamples."""
        seeds = []
        for q in questions:
            if train:
                k = self.visits.get(q.id, 0)
                self.visits[q.id] = k + 1
                seeds.append(stable_seed(self.ctx.seed, self.name, "train", q.id, k))
            else:
                seeds.append(stable_seed(self.ctx.seed, self.name, "eval", q.id))
        return seeds

    def question_rngs(self, questions: list[Question], train: bool) -> list[np.random.Generator]:
        return [np.random.default_rng(s) for s in self.question_seeds(questions, train)]

    # -- learning ----------------------------------------------------------------------------------
    def utilities(self, state: dict[str, Any], utilities: list[float]) -> np.ndarray:
        """The batch's utilities, checked against a training batch's questions."""
        if not state["train"] or state.get("logp") is None:
            raise RuntimeError(
                f"{self.name}.loss needs a batch begun with train=True (log-probs are sampled)"
            )
        u = np.asarray(utilities, dtype=np.float64)
        if u.shape != (len(state["questions"]),):
            raise ValueError(f"{u.size} utilities for {len(state['questions'])} questions")
        return u

    def baseline_value(self, u: np.ndarray, keys: list[str] | None = None) -> float | np.ndarray:
        """The reward baseline b of `self.baseline`: none (0, the papers'), batch_mean, moving_avg
        (the previous batches' exponential average, the batch mean on the first batch), or
        per_question: for each episode, the mean utility of the other episodes of its question in the
        batch (`train.samples` > 1 runs each question several times; leave-one-out keeps the estimate
        unbiased), which removes how hard the question is from the advantage; a question with one
        episode falls back to the batch mean. `keys`: each episode's question id (per_question only)."""
        if self.baseline == "none":
            return 0.0
        batch = float(u.mean())
        if self.baseline == "per_question":
            if keys is None:
                raise ValueError(f"{self.name}: baseline=per_question needs each episode's question")
            return per_question_baseline(u, keys, batch)
        if self.baseline == "batch_mean":
            return batch
        m = float(self.settings.baseline_momentum)  # type: ignore[attr-defined]  # methods offering moving_avg
        b = batch if self._ma is None else self._ma
        self._ma = batch if self._ma is None else m * self._ma + (1.0 - m) * batch
        return b

    def reuse_loss(self, state: dict[str, Any], clip: float) -> torch.Tensor:
        """Another gradient step on the batch `loss` last scored (`method.updates` > 1): the clipped
        surrogate of its log-probs recomputed under the current weights. Only a method that can
        recompute its log-probs offers it; `reuses` says which."""
        raise NotImplementedError(f"{self.name} takes one gradient step per batch; set method.updates=1")

    @property
    def reuses(self) -> bool:
        """Whether `reuse_loss` is implemented (method.updates > 1 is allowed): read off the class, so a
        flag cannot disagree with the code."""
        return type(self).reuse_loss is not LearnedMethod.reuse_loss

    def parameters(self) -> list[torch.nn.Parameter]:
        return list(self.net.parameters())

    def train_mode(self, train: bool) -> None:
        self.net.train(train)

    # -- checkpoints -------------------------------------------------------------------------------
    def extra_state(self) -> dict[str, object]:
        """Hook: what a subclass saves besides the network, visits, baseline and meta."""
        return {}

    def load_extra_state(self, state: dict[str, Any]) -> None:
        """Hook: read back `extra_state`."""

    def checkpoint_meta(self, meta: dict[str, Any]) -> dict[str, object]:
        """Hook: fill in what an older checkpoint's meta lacks (its value before the option existed)."""
        return meta

    def state_dict(self) -> dict[str, object]:
        return {
            "net": {k: v.detach().cpu().clone() for k, v in self.net.state_dict().items()},
            "visits": dict(self.visits),
            "baseline_ma": self._ma,
            **self.extra_state(),
            "meta": dict(self.meta),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        meta = self.checkpoint_meta(dict(state.get("meta", {})))
        diff = {k: (meta.get(k), v) for k, v in self.meta.items() if k in meta and meta[k] != v}
        if diff:
            raise ValueError(
                f"checkpoint does not fit this {self.name} (checkpoint, current): {diff}; "
                "set method.<key> (or agents) to the checkpoint's value"
            )
        self.net.load_state_dict(state["net"])
        self.visits = dict(state.get("visits", {}))
        self._ma = state.get("baseline_ma")
        self.load_extra_state(state)
