"""The one interface between the executor and anything that answers prompts.

A request carries both the chat messages and the structure that produced them. A real LLM
backbone reads only `messages`; the simulator reads only the structure. Because the same code
builds both, prompts and token counts are identical whichever backbone runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

from tomacs.registry import Registry
from tomacs.types import Behaviour, Message, Question

if TYPE_CHECKING:
    from tomacs.runspec.spec import RunSpec

RequestKind = Literal["agent", "decision", "judge"]  # judge: the credibility judge (tomacs.credibility)


@dataclass
class GenerationRequest:
    messages: list[dict[str, str]]
    question: Question
    kind: RequestKind
    agent: int  # -1 for the decision agent
    role: str
    round: int  # 1..T for agents, T+1 for the decision agent
    behaviour: Behaviour
    target: str | None  # the adversarial target answer (adversarial requests only)
    previous_answer: str | None  # the agent's own parsed answer from its last participation
    incoming: list[Message]  # neighbour messages (agents) or voters' final outputs (decision)
    seed_key: str  # stable key "<seed>/<question id>/<agent>/<round>" for deterministic sampling
    sample_index: int = 0
    capability: float | None = None  # per-agent condition (CARD); None = profile default
    first_answer: str | None = None  # the agent's own parsed round-1 answer (None in round 1)
    extra: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None  # a simulator's sampling seed for this draw (paired evaluation); None = its own
    exposed_before: bool = False  # the agent read an adversarial message in an earlier round (sim only)
    previous_text: str | None = None  # its own last reply where its prompt shows it (`tomacs.sim.repeats`)


@dataclass
class GenerationReply:
    text: str
    prompt_tokens: int
    completion_tokens: int
    cached: bool = False
    cost_usd: float = 0.0
    tokens_estimated: bool = False  # True when counted locally because the server gave none
    retries: int = 0


class JobBenchmark(Protocol):
    """What a backbone may read of its job's benchmark (a `tomacs.benchmarks.base.BenchmarkAdapter`,
    on the same floor as backbones/ and so not imported here): its name and simulator profile."""

    @property
    def name(self) -> str: ...

    @property
    def profile(self) -> str: ...


class Backbone(Protocol):
    """Anything that turns requests into replies. `name` is written into every result."""

    name: str

    async def generate(self, requests: list[GenerationRequest]) -> list[GenerationReply]: ...

    def stats(self) -> dict[str, object]:
        """Counters for results.json: calls, cache hits/misses, retries, cost."""
        ...

    async def aclose(self) -> None: ...


class BaseBackbone:
    """What a kind of backbone says about itself, so no caller tests its name.

    A backbone kind subclasses this, implements `from_job` (and the `Backbone` protocol's `generate`,
    `stats`, `aclose`), and gets one line in `BACKBONES`. `simulated` is True for a kind that answers
    without a model server: it costs nothing, needs no API key, has no response cache and nothing to
    plan, and `tomacs plan` prices a job's calls only for a kind that is not simulated.
    """

    simulated: ClassVar[bool] = False
    # True for a kind that knows each question's lure (its most attractive wrong answer), which a
    # source's target rule (`attack.target_lure`) needs: the simulator's latent. A real model's is unknown.
    knows_lures: ClassVar[bool] = False
    # True for a kind that can meet the same prompts again with fresh draws of its agents (`backbone.draw`),
    # which `eval.draws` > 1 needs: the simulator. A paid model's replies come back from its response cache.
    redraws: ClassVar[bool] = False
    name: str

    @classmethod
    def check_settings(cls, settings: Mapping[str, object]) -> None:
        """Rules of this kind's settings (`backbone.*`) its schema's types cannot state; ValueError
        with one line naming the key and the fix. Called once, where the config is validated."""

    @classmethod
    def from_job(cls, spec: RunSpec, bench: JobBenchmark) -> BaseBackbone:
        """The backbone of one job from its spec (`spec.backbone` is this kind's
        conf/backbone/*.yaml) and its benchmark adapter."""
        raise NotImplementedError(f"{cls.__name__}.from_job")

    async def generate(self, requests: list[GenerationRequest]) -> list[GenerationReply]:
        """The `Backbone` protocol's: one reply per request, in order (every kind implements it)."""
        raise NotImplementedError(f"{type(self).__name__}.generate")

    def stats(self) -> dict[str, object]:
        """The `Backbone` protocol's counters for results.json (every kind implements it)."""
        raise NotImplementedError(f"{type(self).__name__}.stats")

    async def aclose(self) -> None:
        """The `Backbone` protocol's: release connections (every kind implements it)."""
        raise NotImplementedError(f"{type(self).__name__}.aclose")

    def result_label(self) -> str:
        """The backbone as results.json names it (`backbone`). A label is the kind's registry name,
        or KIND:DETAIL, so `is_simulated_label` can tell a simulated run from its results alone."""
        return self.name

    @classmethod
    def run_model(cls, config: Mapping[str, object]) -> str | None:
        """The model a finished run's agents ran on, from its config.yaml (a transcript's `model`):
        `backbone.model`; None when the config names none."""
        backbone = config.get("backbone")
        model = backbone.get("model") if isinstance(backbone, Mapping) else None
        return None if model is None else str(model)


# Backbone kind -> class, as "module:class" strings imported on first use. A conf/backbone/*.yaml names
# its kind with `kind:` (without one, its `name` is the kind: conf/backbone/sim.yaml). A new backbone
# kind adds one line here.
BACKBONES: Registry[type[BaseBackbone]] = Registry(
    "backbone",
    {
        "sim": "tomacs.sim.backbone:SimBackbone",
        "litellm": "tomacs.backbones.llm:LiteLLMBackbone",
    },
)


def backbone_kind(backbone_cfg: Mapping[str, object]) -> str:
    """The registry name of a `cfg.backbone` mapping: its `kind`, else its `name`."""
    return str(backbone_cfg.get("kind") or backbone_cfg.get("name"))


def backbone_class(backbone_cfg: Mapping[str, object]) -> type[BaseBackbone]:
    """The class of a `cfg.backbone` mapping's kind (one line listing the kinds if it has none)."""
    return BACKBONES.get(backbone_kind(backbone_cfg))


def is_simulated_label(label: str) -> bool:
    """Whether a result label (`BaseBackbone.result_label`) is a simulated kind's."""
    kind = str(label).split(":")[0]
    return kind in BACKBONES and BACKBONES.get(kind).simulated
