"""What a topology method is: it decides graphs, it never calls an LLM.

The executor drives every method through the same calls, batched over the questions of a batch
and synchronous over rounds (round t of every question finishes before round t+1 is decided),
so a method with a batched policy (TodyComm's GRU) sees all questions of a round at once.

History layout used throughout: history[q][t-1][i] is agent i's output o_i^t for question q of
the batch, for the rounds already run. Each round holds all N agents (non-participants carry
their last output with participated=False).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from tomacs.types import AgentOutput, DecisionGraph, DecisionMode, Episode, Question, RoundGraph

if TYPE_CHECKING:
    import torch

    from tomacs.embedding.embedders import Embedder

History = list[list[list[AgentOutput]]]
# A method's per-batch state (`begin`'s return, handed back to `act`, `decide`, `loss` and the replay
# hooks): keyed by name, its values the method's own; the executor may add "plans" (a method that
# declares `needs_oracle`) and "credibility" (the run's CrS scores at the batch start).
BatchState = dict[str, object]


DECISIONS = ("auto", "vote", "llm", "crs")


def resolve_decision(
    requested: str, method: str, n_agents: int, n_adversaries: int
) -> tuple[str, DecisionMode]:
    """(decision, mode): the run's decision setting after the credibility rule, and the rule a
    baseline's decision graph uses. `auto` is TodyComm's comparison rule for baselines: a vote
    below 50 % adversaries, an LLM decision agent at or above; the credibility topologies
    (`method=crs`) decide with credibility; under `crs` the voters vote, re-weighted by CrS."""
    if requested not in DECISIONS:
        raise ValueError(f"unknown decision '{requested}'; valid: {', '.join(DECISIONS)}")
    decision = "crs" if requested == "auto" and method == "crs" else requested
    if decision in ("crs", "vote"):
        return decision, "vote"
    if decision == "llm":
        return decision, "llm"
    return decision, "llm" if 2 * n_adversaries >= n_agents and n_adversaries > 0 else "vote"


def own_decision(method: str) -> str:
    """The decision `auto` settles to for `method` whatever the adversaries: its own rule (credibility
    for `method=crs`), else `auto` itself (a report names any other decision as a variant of the row)."""
    return resolve_decision("auto", method, 1, 0)[0]


@dataclass
class MethodContext:
    """Everything about the run that a method may read; built once per run by `tomacs.job.components`."""

    n_agents: int
    rounds: int
    roles: list[str]
    seed: int
    in_budget: int | None = None  # node-wise in-degree budget (None = unlimited)
    out_budget: int | None = None  # node-wise out-degree budget (None = unlimited)
    mask: np.ndarray | None = None  # N x N 0/1 edge mask, None = all pairs allowed
    decision: str = "auto"  # auto | vote | llm | crs
    n_adversaries: int = 0  # configured adversary count, for the decision=auto fairness rule
    device: str = "cpu"
    extra: dict[str, Any] = field(default_factory=dict)
    # an embedder instance the job hands in (tomacs.job.components.build's `embedder`, e.g. a dry
    # run's counting one); None: a method that embeds builds the one `extra["embedder"]` names
    embedder: Embedder | None = None
    # the rule a baseline's decision graphs name, resolved from `decision` in __post_init__
    baseline_decision_mode: DecisionMode = field(init=False)

    def __post_init__(self) -> None:
        """Resolved once, when the run's context is built: TodyComm's fairness rule for baselines
        (vote below 50% adversaries, LLM judge at/above; under `crs` the voters vote and
        credibility re-weights them), see resolve_decision above. An unknown decision fails here."""
        _, mode = resolve_decision(self.decision, "", self.n_agents, self.n_adversaries)
        self.baseline_decision_mode = mode


class Method:
    """Base class. Subclasses override what they need; static methods keep the defaults."""

    name: str = "method"
    trainable: bool = False
    needs_embeddings: bool = False  # the executor embeds analyses only when some method needs them
    # Oracle information (the episodes' adversary plans: who is adversarial, from when, with which
    # target) is handed only to a method that declares it, as `state["plans"]` after `begin`, and
    # results.json records `oracle: true`. Only ablations may need it (TodyComm's no_credits):
    # a method that reads the answer key is not comparable with one that does not.
    needs_oracle: bool = False
    # What a method plugs in besides its graphs, each named by a "module:attr" string (tomacs.registry)
    # imported only when used, so no generic module names a method (issue 41; tests/test_method_extras.py):
    # `trainer`: its `tomacs.training.core.Trainer` (LearnedMethod: REINFORCE; None: nothing to train);
    # `commands`: functions `register(app)` that add its commands to the `tomacs` CLI (tomacs.cli collects
    # every method's); `report_sections`: its `tomacs.report.build.Section`s (tomacs report adds them).
    # They live in tomacs/extras/<name>/ (G-Safeguard: trainer.py, data.py, cli.py, report.py).
    trainer: str | None = None
    commands: tuple[str, ...] = ()
    report_sections: tuple[str, ...] = ()
    # `tomacs replay` (tomacs.analysis.replay) drives a method that scores agents on recorded debates
    # through its own calls (the replay_* hooks below say how); `replay_reads`: whether its inputs depend
    # on who read whom, which a transcript must then record
    replays: bool = False
    replay_reads: bool = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A method's name is its schema's: `Settings.name`'s default (tomacs.methods.settings) is the
        one place it is written, and the class reads it from there."""
        super().__init_subclass__(**kwargs)
        schema = cls.__dict__.get("Settings")
        named = getattr(schema, "__dataclass_fields__", {}).get("name")
        if named is None or not named.default:
            return
        if "name" in cls.__dict__ and cls.__dict__["name"] != named.default:
            raise TypeError(
                f"{cls.__name__}.name = {cls.__dict__['name']!r} but its Settings name {named.default!r}: "
                "write the name once, in the Settings dataclass"
            )
        cls.name = named.default

    def __init__(self, ctx: MethodContext, **params: Any) -> None:
        self.ctx = ctx
        self.params = params

    # -- episode -----------------------------------------------------------------------------
    def begin(self, questions: list[Question], train: bool, rng: np.random.Generator) -> BatchState:
        """Start a batch; return the state the method keeps its per-batch data in."""
        return {"questions": questions, "train": train, "rng": rng}

    def act(self, state: BatchState, t: int, history: History) -> list[RoundGraph]:
        """The communication graph of round t (2..T) for every question of the batch."""
        raise NotImplementedError

    @property
    def decision_mode(self) -> DecisionMode:
        """The rule this method's decision graphs name (recorded in results.json); a baseline
        follows the run's decision setting through TodyComm's comparison rule."""
        return self.ctx.baseline_decision_mode

    def decide(self, state: BatchState, history: History) -> list[DecisionGraph]:
        """The decision graph of every question of the batch."""
        n = self.ctx.n_agents
        mode = self.decision_mode
        return [DecisionGraph(voters=list(range(n)), weights=None, mode=mode) for _ in history]

    # -- learning ----------------------------------------------------------------------------
    def loss(self, state: BatchState, episodes: list[Episode], utilities: list[float]) -> torch.Tensor | None:
        """A scalar torch loss for the batch, or None for a method with nothing to learn."""
        return None

    def parameters(self) -> list[torch.nn.Parameter]:
        return []

    def on_iteration_end(self, iteration: int) -> None:
        """Hook for schedule-driven changes (AgentPrune's pruning)."""

    def state_dict(self) -> dict[str, object]:
        return {}

    def load_state_dict(self, state: dict[str, object]) -> None:
        return None

    def train_mode(self, train: bool) -> None:
        return None

    # -- hooks of the analyses that drive a trained method (tomacs.analysis) --------------------------
    def credit_policy_refusal(self) -> str | None:
        """Why `tomacs analyze credits` (tomacs.analysis.credit) cannot diagnose this method, or None when
        it can: the method then keeps its credit network as `net`, builds a fresh one with `make_net()`,
        and appends (t, the policy's inputs) to `trace` for every round it steps while `trace` is a list."""
        return f"method {self.name!r} has no credit policy to diagnose (use a todycomm run)"

    @classmethod
    def replay_refusal(cls, params: Mapping[str, object]) -> str | None:
        """A setting of the run's method (its params) under which there is nothing to replay, or None."""
        return None

    @classmethod
    def trained_shape(cls, params: Mapping[str, object], agents: int, rounds: int) -> str:
        """What a replayed policy was trained on, as the replay table's title says it."""
        return f"trained {agents}x{rounds}"

    def replay_follow(self, state: BatchState, t: int, edges: list[list[tuple[int, int]]]) -> None:
        """Install round t's recorded graph (edges per debate) where the method's next step reads it;
        a method whose inputs do not read the graph keeps this default (nothing)."""
        return None

    def replay_excluded(self, state: BatchState, graphs: list[RoundGraph]) -> list[set[int]]:
        """After `act(t)`: the agents the method called adversarial in round t, per debate (by default
        the agents its round graphs leave out of the participants)."""
        n = self.ctx.n_agents
        return [
            set(range(n)) - set(g.participants if g.participants is not None else g.nodes) for g in graphs
        ]
