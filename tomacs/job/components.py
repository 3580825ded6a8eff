"""Building a job: a composed config -> the benchmark, backbone, method and executor of one run.

Everything is validated and settled here, before a job writes a file, so a bad config fails in one
line and every later stage (training, evaluation, analyses) reads the same `Components`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from tomacs.agents.adversary import LURE_FROM_PROFILE, AdversarySchedule
from tomacs.agents.roles import assign_roles
from tomacs.backbones.base import Backbone, BaseBackbone, backbone_class
from tomacs.benchmarks.base import BenchmarkAdapter, get_benchmark
from tomacs.config import ConfigError
from tomacs.execution.executor import Executor, ExecutorConfig
from tomacs.methods.base import Method, MethodContext, resolve_decision
from tomacs.methods.registry import build_method, method_settings
from tomacs.runspec.spec import Params, RunSpec
from tomacs.seeding import stable_seed
from tomacs.types import AgentCondition, Question

if TYPE_CHECKING:
    from tomacs.embedding.embedders import Embedder


def resolve_device(name: str, needed: bool) -> str:
    """`cuda` without a GPU is an error even for a method without parameters (the user asked for
    it); `auto` picks what exists. torch is imported only when needed, so static runs stay light."""
    if not needed and name != "cuda":
        return "cpu"
    import torch

    if name == "cpu":
        return "cpu"
    has_cuda = torch.cuda.is_available()
    if name == "cuda":
        if not has_cuda:
            raise ConfigError(
                "device=cuda but no CUDA GPU is visible to torch; use device=cpu or device=auto"
            )
        return "cuda"
    return "cuda" if has_cuda else "cpu"


def build_backbone(spec: RunSpec, bench: BenchmarkAdapter) -> BaseBackbone:
    """The backbone kind `spec.backbone` names (tomacs.backbones.base.BACKBONES), built for this job."""
    return backbone_class(spec.backbone).from_job(spec, bench)


def backbone_label(spec: RunSpec, backbone: Backbone) -> str:
    """The backbone as results name it (`BaseBackbone.result_label`)."""
    label = getattr(backbone, "result_label", None)
    return label() if callable(label) else str(getattr(backbone, "name", spec.backbone.name))


@dataclass
class Components:
    """What one job is made of: built once by `build`, then read by training, evaluation and the
    analyses, so each of them sees the same method, executor and question splits."""

    spec: RunSpec
    bench: BenchmarkAdapter
    backbone: Backbone
    method: Method
    executor: Executor
    ctx: MethodContext
    roles: list[str]
    train_qs: list[Question] = field(default_factory=list)
    val_qs: list[Question] = field(default_factory=list)
    test_qs: list[Question] = field(default_factory=list)
    tracker: Any = None  # tomacs.launch.tracking tracker of this job (None = local files only)


def _split(bench: BenchmarkAdapter, split: str, size: int, seed: int) -> list[Question]:
    return bench.load(split, size, seed) if size > 0 else []


CONDITION_KEYS: dict[str, Any] = {"capability": 1.0, "cost": 1.0, "backbone": None}


def agent_conditions(spec: RunSpec, n: int) -> list[AgentCondition]:
    """Per-agent conditions (CARD): capability (competence multiplier the sim honours), cost (per
    call, relative), backbone (a label). Missing -> every agent alike."""
    raw = (
        None
        if spec.conditions is None
        else [c.plain() if isinstance(c, Params) else c for c in spec.conditions]
    )
    if raw is None:
        return [AgentCondition(capability=1.0, cost=1.0, backbone=str(spec.backbone.name)) for _ in range(n)]
    if not isinstance(raw, list) or len(raw) != n:
        raise ConfigError(f"conditions must list one mapping per agent (agents={n}), got {raw!r}")
    out: list[AgentCondition] = []
    for i, c in enumerate(raw):
        if not isinstance(c, dict) or set(c) - set(CONDITION_KEYS):
            raise ConfigError(f"conditions[{i}] = {c!r}: valid keys are {', '.join(CONDITION_KEYS)}")
        d = dict(CONDITION_KEYS, backbone=str(spec.backbone.name))
        d.update(c)
        capability, cost = float(d["capability"]), float(d["cost"])
        if capability <= 0 or cost < 0:
            raise ConfigError(f"conditions[{i}]: capability must be > 0 and cost >= 0")
        out.append(AgentCondition(capability=capability, cost=cost, backbone=d["backbone"]))
    return out


def adversary_schedule(spec: RunSpec) -> AdversarySchedule:
    """The run's attack, every field given to the schedule's validating constructor. With
    `attack.persistent` the same agents turn adversarial in every episode: drawn once per run from
    the seed, among the agents `attack.protect_last` leaves open."""
    n = spec.agents
    attack = spec.attack
    schedule = AdversarySchedule.from_config(attack, n, spec.rounds)
    if not attack.get("persistent") or schedule.k == 0:
        return schedule
    rng = np.random.default_rng(stable_seed(spec.seed, "persistent-adversaries"))
    pool = [a for a in range(n) if a not in schedule.protected]
    fixed = tuple(sorted(int(a) for a in rng.choice(pool, schedule.k, replace=False)))
    return dataclasses.replace(schedule, fixed_agents=fixed)


def _target_rule(spec: RunSpec, schedule: AdversarySchedule, backbone: Backbone) -> AdversarySchedule:
    """`attack.target_lure=profile` settled to the sim profile's fitted value; a number stays. Both
    need the backbone to know each question's lure (config.validate refused any other kind)."""
    if (spec.attack.get("target_lure") != LURE_FROM_PROFILE) or schedule.k == 0:
        return schedule
    fitted = getattr(backbone, "fitted_target_lure", None)
    value = fitted() if callable(fitted) else None
    if value is None:
        raise ConfigError(
            f"attack.target_lure={LURE_FROM_PROFILE}: the sim profile of this run has no fitted target rule "
            "(a paper profile, or one fitted from debates where no question keeps one adversaries' target); "
            "give a probability (e.g. attack.target_lure=0.25) or null (uniform)"
        )
    return dataclasses.replace(schedule, target_lure=float(value))


def build(
    spec: RunSpec, need_train: bool, *, backbone: Backbone | None = None, embedder: Embedder | None = None
) -> Components:
    """Build every part of the job from its spec (validated and settled by tomacs.launch, or by
    tomacs.job.files for a run directory); `need_train` loads the training and validation splits too.

    `backbone` and `embedder` substitute the job's own parts (the seams of a dry run or a diagnosis,
    which otherwise would patch them in): `backbone` answers the executor and the credibility judge
    in place of the backbone `spec.backbone` names, `embedder` embeds for the executor, the
    credibility centroid and a learned method (through `MethodContext.embedder`) in place of the
    embedder `spec.embedder` names. None builds the job's own."""
    from tomacs.embedding.embedders import configure as configure_embeddings

    configure_embeddings(spec.embed.cache, spec.embed.precision, spec.embed.backend)
    bench_cfg = spec.benchmark.plain()
    bench = get_benchmark(bench_cfg.pop("name"), **bench_cfg)
    comps = _assemble(spec, bench, backbone, embedder)
    load_questions(comps, need_train)
    return comps


def rebuild(
    comps: Components, *, backbone: Backbone | None = None, embedder: Embedder | None = None
) -> Components:
    """The same job again with state of its own: a fresh method, executor and credibility state
    over the config, benchmark and question splits `comps` already holds, nothing re-read or
    re-validated. What a second pass over the job's questions starts from, so that it neither
    reads nor moves the state of the first (a learned method's per-question visits, the credibility
    scores): the plan line's dry run on the job's own build, the sim diagnosis's ablations.

    `backbone` and `embedder` substitute parts as in `build`; left None, the new parts use those of
    `comps` (its backbone; the embedder it was given or its executor or credibility judge holds)."""
    if backbone is None:
        backbone = comps.backbone
    if embedder is None:
        crs = comps.executor.crs
        held = (comps.ctx.embedder, comps.executor.embedder, crs.embedder if crs is not None else None)
        embedder = next((e for e in held if e is not None), None)
    twin = _assemble(comps.spec, comps.bench, backbone, embedder)
    twin.train_qs, twin.val_qs, twin.test_qs = list(comps.train_qs), list(comps.val_qs), list(comps.test_qs)
    return twin


def _assemble(
    spec: RunSpec, bench: BenchmarkAdapter, backbone: Backbone | None, embedder: Embedder | None
) -> Components:
    """Every part of the job that holds state (method, executor, credibility), on a settled config
    and its benchmark; `backbone` / `embedder` substitute the job's own (see `build`)."""
    n, rounds, seed = spec.agents, spec.rounds, spec.seed
    roles = assign_roles(bench.roles_key, n)
    schedule = adversary_schedule(spec)
    method_params = method_settings(spec).params()  # the method's validated settings
    method_name = str(method_params.pop("name"))
    # once, here: the credibility topologies (method=crs) decide with credibility under `auto`
    decision, _ = resolve_decision(spec.decision, method_name, n, schedule.k)
    ctx = MethodContext(
        n_agents=n,
        rounds=rounds,
        roles=roles,
        seed=seed,
        in_budget=spec.budget.in_degree,
        out_budget=spec.budget.out_degree,
        decision=decision,
        n_adversaries=schedule.k,
        device="cpu",
        embedder=embedder,
    )
    conditions = agent_conditions(spec, n)
    ctx.extra["conditions"] = conditions
    if spec.embedder:  # the run's one embedder (settled with the spec)
        from tomacs.embedding.embedders import embedder_dim

        ctx.extra["embedder"] = spec.embedder
        ctx.extra["embed_dim"] = embedder_dim(spec.embedder)
    method = build_method(method_name, ctx, method_params)
    ctx.device = resolve_device(spec.device, needed=method.trainable)
    if method.trainable and hasattr(method, "to"):
        method.to(ctx.device)

    def job_embedder() -> Embedder:
        if embedder is not None:
            return embedder
        from tomacs.embedding.embedders import DEFAULT_EMBEDDER, get_embedder

        return get_embedder(spec.embedder or DEFAULT_EMBEDDER, ctx.device)

    ex_embedder = job_embedder() if method.needs_embeddings else None
    if backbone is None:
        backbone = build_backbone(spec, bench)
    schedule = _target_rule(spec, schedule, backbone)
    crs = None
    if decision == "crs":
        from tomacs.credibility.decider import CrsConfig, CrsDecider

        try:
            crs_cfg = CrsConfig(**spec.crs.plain())
        except ValueError as e:
            raise ConfigError(str(e)) from None
        crs_emb = None
        if crs_cfg.aggregation == "centroid":
            crs_emb = ex_embedder if ex_embedder is not None else job_embedder()
        simulated = backbone_class(spec.backbone).simulated
        crs = CrsDecider(crs_cfg, n, roles, seed, backbone, simulated=simulated, embedder=crs_emb)
    caps: list[float | None] = [c["capability"] for c in conditions]
    executor = Executor(
        ExecutorConfig(
            n,
            rounds,
            roles,
            seed,
            capabilities=None if all(c == 1.0 for c in caps) else caps,
            mask=ctx.mask,
            in_budget=ctx.in_budget,
            out_budget=ctx.out_budget,
            eval_seed=spec.eval.seed,
        ),
        backbone,
        schedule,
        ex_embedder,
        crs=crs,
    )
    return Components(spec, bench, backbone, method, executor, ctx, roles)


def _no_training_questions(comps: Components, split: str) -> str:
    """Why a learned method got no training questions, and the fix for that cause."""
    spec, bench, method = comps.spec, comps.bench, comps.method.name
    if spec.train.size <= 0:
        return (
            f"method={method} learns, but train.size={spec.train.size} gives it no training questions: "
            f"set train.size>0 (default 256), or score it untrained with "
            f"`tomacs evaluate method={method} checkpoint=untrained`"
        )
    file_split = getattr(bench, "train_split", split)
    where = bench.file_path(file_split) if hasattr(bench, "file_path") else None
    source = f" ({where})" if where is not None else ""
    return (
        f"benchmark '{bench.name}': its training split '{file_split}'{source} has no rows, "
        f"so method={method} has nothing to train on; fill that file (or point benchmark.path at a "
        "complete copy), or use another benchmark"
    )


def load_questions(comps: Components, need_train: bool) -> None:
    """The splits a job reads: training and validation only when it trains something (a learned
    method, or credibility warmed up on the training stream), the test split always."""
    spec, bench, seed = comps.spec, comps.bench, comps.spec.seed
    splits = getattr(bench, "splits", {"train": "train", "validation": "validation", "test": "test"})
    learns = comps.method.trainable
    if need_train and (learns or comps.executor.crs is not None):
        comps.train_qs = _split(bench, splits.get("train", "train"), spec.train.size, seed)
    if need_train and learns and not comps.train_qs:
        raise ConfigError(_no_training_questions(comps, splits.get("train", "train")))
    if need_train and learns:
        comps.val_qs = _split(bench, splits.get("validation", "validation"), spec.train.val_size, seed)
    comps.test_qs = _split(bench, splits.get("test", "test"), spec.eval.size, seed)
    if not comps.test_qs:
        raise ConfigError(f"benchmark '{bench.name}' gave no test questions; check benchmark.path")
