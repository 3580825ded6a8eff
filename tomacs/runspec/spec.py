"""The run spec: one job's settings, composed and validated once above (tomacs.launch), frozen here.

Hydra's DictConfig is the right tool to compose a config from groups and overrides; it is the wrong
thing to hand to the code that runs a job. It is mutable (a stage could change what a later one
reads), untyped to a type checker, and its reads fail late. So `tomacs.launch` turns the composed
config into a `RunSpec` (and `tomacs.job.files` turns an old run directory's config.yaml into one,
after migrating it), and nothing below launch sees a DictConfig.

The keys every run has are typed fields. A plugin's group (method, benchmark, backbone, attack,
logger, crs) stays a frozen mapping of its keys: the plugin's own Settings validate it where it is
built, and its keys differ by plugin.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import MISSING, dataclass, field
from typing import Any


def _freeze(value: object) -> Any:
    if isinstance(value, Mapping):
        return Params(value)
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return tuple(_freeze(v) for v in value)
    return value


def _thaw(value: object) -> Any:
    if isinstance(value, Params):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    return value


class Params(Mapping[str, Any]):
    """A config group's keys, read-only: by key, `.get`, or as attributes (`spec.backbone.model`).
    Nested mappings are Params and lists are tuples, so nothing of a spec can be changed in place."""

    __slots__ = ("_d",)

    def __init__(self, data: Mapping[str, Any] | None = None) -> None:
        object.__setattr__(self, "_d", {str(k): _freeze(v) for k, v in (data or {}).items()})

    def __getitem__(self, key: str) -> Any:
        return self._d[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._d)

    def __len__(self) -> int:
        return len(self._d)

    def __getattr__(self, key: str) -> Any:
        try:
            return self._d[key]
        except KeyError:
            raise AttributeError(key) from None

    def __setattr__(self, key: str, value: object) -> None:
        raise AttributeError(f"a run spec is frozen: cannot set {key!r}")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mapping) and self.plain() == _thaw(Params(other))

    def __hash__(self) -> int:
        return hash(repr(self))

    def __reduce__(self) -> tuple[type[Params], tuple[dict[str, Any]]]:
        # rebuilt through the constructor: copy and pickle must not set attributes of a frozen object
        return (Params, (self.plain(),))

    def __repr__(self) -> str:
        return f"Params({self.plain()!r})"

    def plain(self) -> dict[str, Any]:
        """A mutable deep copy (dicts and lists), for files and for code that edits its own copy."""
        out: dict[str, Any] = _thaw(self)
        return out


@dataclass(frozen=True)
class TrainSpec:
    """`train.*`: the training budget. No defaults here: conf/train/*.yaml holds them, and a run
    directory's config gains a key added since with the value runs before it had
    (tomacs.job.files.TRAIN_KEYS_ADDED) before it becomes a spec."""

    name: str
    size: int
    val_size: int
    batch_size: int
    epochs: int
    lr: float
    optimizer: str
    patience: int | None
    samples: int
    lr_schedule: str
    grad_clip: float | None
    select: str


@dataclass(frozen=True)
class EvalSpec:
    """`eval.*`: the test split and its batches; `seed` pairs the evaluation (None = the run's
    seed, as in runs from before it existed); `draws` pools that many draws of the simulated agents."""

    size: int
    batch_size: int
    seed: int | None = None
    draws: int = 1


@dataclass(frozen=True)
class EmbedSpec:
    """`embed.*`: MiniLM's cache, precision and backend. The defaults are what a run directory from
    before the block existed ran with (no cache; precision and backend as `auto` resolves them), not
    the shipped ones (conf/config.yaml)."""

    cache: str | None = None
    precision: str = "auto"
    backend: str = "auto"


@dataclass(frozen=True)
class BudgetSpec:
    """`budget.*`: node-wise degree budgets (TodyComm Table 3); None = no bound."""

    name: str
    in_degree: int | None
    out_degree: int | None


def _typed(cls: type, raw: object) -> Any:
    """A typed group from its mapping; a key it does not know, or one it needs and lacks, is an error
    naming the keys (a validated config has neither; a hand-edited config.yaml may)."""
    data = dict(raw) if isinstance(raw, Mapping) else {}
    fields = cls.__dataclass_fields__  # type: ignore[attr-defined]
    known = set(fields)
    missing = sorted(k for k, f in fields.items() if k not in data and f.default is MISSING)
    if missing:
        raise ValueError(f"{cls.__name__}: missing keys {', '.join(missing)}")
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueError(
            f"{cls.__name__}: unknown keys {', '.join(unknown)}; valid: {', '.join(sorted(known))}"
        )
    return cls(**data)


@dataclass(frozen=True)
class RunSpec:
    """One job's settings, typed where every run has them. `resolved` is the whole config as
    composed and settled, for config.yaml, results.json and the run id (what a resume compares)."""

    agents: int
    rounds: int
    seed: int
    mode: str
    decision: str
    embedder: str | None
    checkpoint: str | None
    concurrency: int
    device: str
    train: TrainSpec
    eval: EvalSpec
    embed: EmbedSpec
    budget: BudgetSpec
    method: Params
    benchmark: Params
    backbone: Params
    attack: Params
    logger: Params
    crs: Params
    conditions: tuple[Params, ...] | None
    table_name: str | None
    resolved: Params = field(repr=False, compare=False)

    @classmethod
    def of(cls, resolved: Mapping[str, object]) -> RunSpec:
        """The spec of a resolved config (a plain mapping, as config.yaml holds it). Keys a run
        directory of an earlier version lacks take the value runs then had."""
        r = Params(resolved)
        device = r.get("device")
        conditions = r.get("conditions")
        return cls(
            agents=int(r["agents"]),
            rounds=int(r["rounds"]),
            seed=int(r["seed"]),
            mode=str(r.get("mode") or "train"),
            decision=str(r.get("decision") or "auto"),
            embedder=None if r.get("embedder") is None else str(r["embedder"]),
            checkpoint=None if r.get("checkpoint") is None else str(r["checkpoint"]),
            concurrency=int(r.get("concurrency") or 64),
            device=str(device.get("name", "auto") if isinstance(device, Mapping) else device or "auto"),
            train=_typed(TrainSpec, r.get("train")),
            eval=_typed(EvalSpec, r.get("eval")),
            embed=_typed(EmbedSpec, r.get("embed")),
            budget=_typed(BudgetSpec, r.get("budget")),
            method=r.get("method") or Params(),
            benchmark=r.get("benchmark") or Params(),
            backbone=r.get("backbone") or Params(),
            attack=r.get("attack") or Params(),
            logger=r.get("logger") or Params({"name": "none"}),
            crs=r.get("crs") or Params(),
            conditions=None if conditions is None else tuple(conditions),
            table_name=None if r.get("table_name") is None else str(r["table_name"]),
            resolved=r,
        )

    def as_dict(self) -> dict[str, object]:
        """The resolved config as a plain dict (config.yaml, results.json's `config`)."""
        return self.resolved.plain()
