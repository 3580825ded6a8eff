"""A job: config -> components -> (train) -> evaluate -> files.

Kept apart from the CLI so tests, sweeps and notebooks can run a job from a composed config.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from omegaconf import DictConfig, OmegaConf

from tomacs.agents.adversary import AdversarySchedule
from tomacs.agents.roles import assign_roles
from tomacs.benchmarks.base import BenchmarkAdapter, get_benchmark
from tomacs.config import ConfigError, flat, to_container, validate
from tomacs.executor import Executor, ExecutorConfig
from tomacs.methods.base import Method, MethodContext
from tomacs.methods.registry import build_method
from tomacs.metrics import summarize, unparsed_warning
from tomacs.progress import Progress, Running
from tomacs.seeding import stable_seed
from tomacs.types import Episode, Question


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


def git_rev() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            cwd=Path(__file__).resolve().parent,
        )
        return out.stdout.strip() or None
    except Exception:
        return None


def build_backbone(cfg: DictConfig, bench: BenchmarkAdapter) -> Any:
    name = cfg.backbone.name
    if name == "sim":
        from tomacs.backbones.sim import SimBackbone

        profile = cfg.backbone.get("profile") or bench.profile
        return SimBackbone(profile=profile, seed=int(cfg.seed))
    from tomacs.backbones.llm import LiteLLMBackbone

    return LiteLLMBackbone.from_config(cfg.backbone)


def backbone_label(cfg: DictConfig, backbone: Any) -> str:
    return "sim" if cfg.backbone.name == "sim" else str(getattr(backbone, "name", cfg.backbone.name))


@dataclass
class Components:
    cfg: DictConfig
    bench: BenchmarkAdapter
    backbone: Any
    method: Method
    executor: Executor
    ctx: MethodContext
    roles: list[str]
    train_qs: list[Question] = field(default_factory=list)
    val_qs: list[Question] = field(default_factory=list)
    test_qs: list[Question] = field(default_factory=list)
    tracker: Any = None  # tomacs.tracking tracker of this job (None = local files only)


def _split(bench: BenchmarkAdapter, split: str, size: int, seed: int) -> list[Question]:
    return bench.load(split, size, seed) if size > 0 else []


CONDITION_KEYS = {"capability": 1.0, "cost": 1.0, "backbone": None}


def agent_conditions(cfg: DictConfig, n: int) -> list[dict[str, Any]]:
    """Per-agent conditions (CARD): capability (competence multiplier the sim honours), cost (per
    call, relative), backbone (a label). Missing -> every agent alike."""
    raw = to_container(cfg).get("conditions")
    if raw is None:
        return [dict(CONDITION_KEYS, backbone=str(cfg.backbone.name)) for _ in range(n)]
    if not isinstance(raw, list) or len(raw) != n:
        raise ConfigError(f"conditions must list one mapping per agent (agents={n}), got {raw!r}")
    out = []
    for i, c in enumerate(raw):
        if not isinstance(c, dict) or set(c) - set(CONDITION_KEYS):
            raise ConfigError(f"conditions[{i}] = {c!r}: valid keys are {', '.join(CONDITION_KEYS)}")
        d = dict(CONDITION_KEYS, backbone=str(cfg.backbone.name))
        d.update(c)
        if float(d["capability"]) <= 0 or float(d["cost"]) < 0:
            raise ConfigError(f"conditions[{i}]: capability must be > 0 and cost >= 0")
        d["capability"], d["cost"] = float(d["capability"]), float(d["cost"])
        out.append(d)
    return out


def build(cfg: DictConfig, need_train: bool) -> Components:
    validate(cfg)
    from tomacs.training import settle_embedder

    settle_embedder(cfg)  # idempotent; run_job settles it before config.yaml is written
    from tomacs.embed import configure as configure_embeddings

    emb = cfg.get("embed") or {}
    configure_embeddings(emb.get("cache"), str(emb.get("precision", "auto")))
    n, rounds, seed = int(cfg.agents), int(cfg.rounds), int(cfg.seed)
    bench_cfg = to_container(cfg.benchmark)
    bench = get_benchmark(bench_cfg.pop("name"), **bench_cfg)
    roles = assign_roles(bench.roles_key, n)
    schedule = AdversarySchedule(
        n_agents=n,
        rounds=rounds,
        count=cfg.attack.get("count"),
        rate=cfg.attack.get("rate"),
        onset_rounds=tuple(cfg.attack.get("onset_rounds") or (3, 4)),
        name=str(cfg.attack.name),
        suffix=bool(cfg.attack.get("suffix", True)),
    )
    if cfg.attack.get("protect_last"):
        schedule.protected = (n - 1,)
    if cfg.attack.get("persistent") and schedule.k > 0:
        # the same agents in every episode: drawn once per run from the seed
        rng = np.random.default_rng(stable_seed(seed, "persistent-adversaries"))
        pool = [a for a in range(n) if a not in schedule.protected]
        schedule.fixed_agents = tuple(sorted(int(a) for a in rng.choice(pool, schedule.k, replace=False)))
    method_params = to_container(cfg.method)
    method_name = method_params.pop("name")
    decision = str(to_container(cfg)["decision"])
    if decision == "auto" and method_name == "crs":
        decision = "crs"  # the credibility topologies are meant to run with credibility
    ctx = MethodContext(
        n_agents=n,
        rounds=rounds,
        roles=roles,
        seed=seed,
        in_budget=cfg.budget.get("in_degree"),
        out_budget=cfg.budget.get("out_degree"),
        decision=decision,
        n_adversaries=schedule.count,
        device="cpu",
    )
    conditions = agent_conditions(cfg, n)
    ctx.extra["conditions"] = conditions
    if cfg.get("embedder"):  # the top-level embedder wins over every method's own choice
        from tomacs.embed import embedder_dim

        ctx.extra["embedder"] = str(cfg.embedder)
        ctx.extra["embed_dim"] = embedder_dim(str(cfg.embedder))
    method = build_method(method_name, ctx, method_params)
    ctx.device = resolve_device(cfg.device.name, needed=method.trainable)
    if method.trainable and hasattr(method, "to"):
        method.to(ctx.device)
    embedder = None
    if method.needs_embeddings:
        from tomacs.embed import DEFAULT_EMBEDDER, get_embedder

        embedder = get_embedder(cfg.get("embedder") or DEFAULT_EMBEDDER, ctx.device)
    backbone = build_backbone(cfg, bench)
    crs = None
    if decision == "crs":
        from tomacs.credibility.decider import CrsConfig, CrsDecider

        try:
            crs_cfg = CrsConfig(**to_container(cfg.crs))
        except ValueError as e:
            raise ConfigError(str(e)) from None
        crs_emb = None
        if crs_cfg.aggregation == "centroid":
            from tomacs.embed import DEFAULT_EMBEDDER, get_embedder

            crs_emb = embedder or get_embedder(
                crs_cfg.embedder or cfg.get("embedder") or DEFAULT_EMBEDDER, ctx.device
            )
        crs = CrsDecider(
            crs_cfg, n, roles, seed, backbone, simulated=cfg.backbone.name == "sim", embedder=crs_emb
        )
    caps = [c["capability"] for c in conditions]
    executor = Executor(
        ExecutorConfig(n, rounds, roles, seed, capabilities=None if all(c == 1.0 for c in caps) else caps),
        backbone,
        schedule,
        embedder,
        crs=crs,
    )
    comps = Components(cfg, bench, backbone, method, executor, ctx, roles)
    splits = getattr(bench, "splits", {"train": "train", "validation": "validation", "test": "test"})
    if need_train and (method.trainable or crs is not None):
        comps.train_qs = _split(bench, splits.get("train", "train"), int(cfg.train.size), seed)
    if need_train and method.trainable:
        comps.val_qs = _split(bench, splits.get("validation", "validation"), int(cfg.train.val_size), seed)
    comps.test_qs = _split(bench, splits.get("test", "test"), int(cfg.eval.size), seed)
    if not comps.test_qs:
        raise ConfigError(f"benchmark '{bench.name}' gave no test questions; check benchmark.path")
    return comps


# ----------------------------------------------------------------------------------------------
class EpisodeLog:
    """Append-only episodes.jsonl; lets a killed evaluation resume where it stopped."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def repair(self) -> None:
        """Cut a torn tail left by a kill, so appended episodes start on a fresh line."""
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        keep = 0
        for line in data.splitlines(keepends=True):
            try:
                json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError):
                break
            if not line.endswith(b"\n"):
                break
            keep += len(line)
        if keep != len(data):
            with self.path.open("r+b") as f:
                f.truncate(keep)

    def done_ids(self) -> set[str]:
        if not self.path.exists():
            return set()
        ids = set()
        with self.path.open() as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                try:
                    ids.add(json.loads(line)["question"]["id"])
                except (json.JSONDecodeError, KeyError):
                    break  # a torn last line from a kill: ignore it and recompute that question
        return ids

    def load(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        out = []
        with self.path.open() as f:
            for line in f:
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    break
        return out

    def append(self, episodes: list[Episode]) -> None:
        with self.path.open("a") as f:
            for e in episodes:
                f.write(json.dumps(e.to_dict()) + "\n")
            f.flush()
            os.fsync(f.fileno())


def batches(items: list[Any], size: int) -> list[list[Any]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def evaluate(comps: Components, out_dir: Path, progress: Progress | None = None) -> dict[str, Any]:
    """Evaluate on the test questions, resuming from episodes.jsonl when present."""
    cfg = comps.cfg
    log = EpisodeLog(out_dir / "episodes.jsonl")
    log.repair()
    check_distinct([q.id for q in comps.test_qs], f"the test questions of benchmark '{comps.bench.name}'")
    check_distinct([r["question"]["id"] for r in log.load()], str(log.path))
    done = log.done_ids()
    todo = [q for q in comps.test_qs if q.id not in done]
    crs = comps.executor.crs
    if crs is not None and done:
        # resume the query stream where it stopped: the scores after the last finished question
        last = [r["crs"] for r in log.load() if "crs" in r]
        if last:
            crs.state.load({"scores": last[-1]["after"], "updates": crs.state.updates + len(last)})
    comps.method.train_mode(False)
    n, rounds = comps.ctx.n_agents, comps.ctx.rounds
    t0 = time.perf_counter()
    chunks = batches(todo, int(cfg.eval.batch_size))
    running = Running(n, rounds)
    resumed = len(comps.test_qs) - len(todo)
    title = f"evaluate ({resumed} done before)" if resumed else "evaluate"
    with (progress or Progress(enabled=False)).task(title, total=len(todo), unit="questions") as task:
        for k, batch in enumerate(chunks, start=1):
            episodes, _ = comps.executor.run_batch(
                batch, comps.method, train=False, phase="eval", on_call=task
            )
            log.append(episodes)
            task.step(len(batch), batch=f"{k}/{len(chunks)}", **running.add(episodes))
    wall = time.perf_counter() - t0
    records = [r for r in log.load() if r["question"]["id"] in {q.id for q in comps.test_qs}]
    check_distinct([r["question"]["id"] for r in records], str(log.path))
    metrics = summarize(records_to_episodes(records), n, rounds)
    metrics["eval_wall_s"] = round(wall, 3)
    metrics["resumed_questions"] = len(done)
    if crs is not None:
        from tomacs.credibility.stream import stream_metrics

        metrics.update(stream_metrics(records, comps.executor.schedule.fixed_agents))
    return metrics


def check_distinct(ids: list[str], where: str) -> None:
    """Metrics count questions, so a question present twice would count twice (n_queries, calls,
    Acc). Duplicates mean two jobs wrote one directory (before it was locked) or a broken split:
    refuse rather than guess which copy is right."""
    first: dict[str, int] = {}
    for i, qid in enumerate(ids, start=1):
        if qid in first:
            fix = (
                f"delete {where} (or the whole run directory) and re-run to recompute it"
                if where.endswith(".jsonl")
                else "question ids must be unique; fix the data file"
            )
            raise ConfigError(
                f"{where}: question id {qid!r} appears twice (entries {first[qid]} and {i}); {fix}"
            )
        first[qid] = i


def records_to_episodes(records: list[dict[str, Any]]) -> list[Episode]:
    from tomacs.serialize import episode_from_dict

    return [episode_from_dict(r) for r in records]


def write_json(path: Path, obj: Any) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(obj, indent=2, default=_json_default))
    tmp.replace(path)


def _json_default(o: Any) -> Any:
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


# Keys that may change between a run and its resume: how to run, not what is measured. More
# epochs continue training (stale evaluation episodes are then dropped); a larger eval.size adds
# questions (finished ones are per-question seeded, so batch size and order do not matter).
_RESUME_FREE = (
    "mode",
    "checkpoint",
    "concurrency",
    "train.epochs",
    "train.patience",
    "eval.size",
    "eval.batch_size",
    "backbone.timeout",
    "backbone.max_concurrency",
    "backbone.max_retries",
    "backbone.backoff_base",
    "backbone.backoff_max",
    "backbone.cache",
    "embed.cache",  # cached vectors are bit-identical to fresh ones
)


def check_resumable(out_dir: Path, resolved: dict[str, Any]) -> None:
    """Refuse to resume into a directory whose episodes came from a different config: mixing them
    would report numbers of two experiments as one."""
    old_path = out_dir / "config.yaml"
    if not old_path.is_file() or not any((out_dir / f).exists() for f in ("episodes.jsonl", "checkpoint.pt")):
        return
    old = flat(_settled(OmegaConf.to_container(OmegaConf.load(old_path), resolve=True)))
    new = flat(resolved)
    diff = sorted(
        k
        for k in set(old) | set(new)
        if old.get(k) != new.get(k) and not any(k == f or k.startswith(f + ".") for f in _RESUME_FREE)
    )
    ckpts = (old.get("checkpoint"), new.get("checkpoint"))
    if ckpts[0] != ckpts[1] and UNTRAINED in ckpts:
        diff.append("checkpoint")  # episodes of the untrained policy must never pass for a trained one's
    if diff:
        shown = ", ".join(f"{k}: {old.get(k)!r} -> {new.get(k)!r}" for k in diff[:4])
        more = f" (+{len(diff) - 4} more)" if len(diff) > 4 else ""
        raise ConfigError(
            f"{out_dir} holds a run with a different config ({shown}{more}); "
            "use a new hydra.run.dir, or delete that directory to start over"
        )


UNTRAINED = "untrained"  # checkpoint=untrained: evaluate a learned method's initial policy, on purpose


def check_checkpoint(cfg: DictConfig, mode: str) -> None:
    """An evaluation of a learned method needs its trained weights: without them it scores the
    random initial policy under the method's name. Asking for that explicitly is allowed (a
    baseline for the learning curve) and the results say so."""
    from tomacs.methods.registry import is_trainable

    ckpt = cfg.get("checkpoint")
    name = str(cfg.method.name)
    if ckpt == UNTRAINED and mode == "train":
        raise ConfigError(
            "checkpoint=untrained is for `tomacs evaluate`; `tomacs train` starts from an untrained policy "
            "by itself (drop checkpoint=untrained)"
        )
    if mode == "evaluate" and not ckpt and is_trainable(name):
        raise ConfigError(
            f"method={name} is learned and no checkpoint was given: pass checkpoint=<run dir>/best.pt, "
            f"train it with `tomacs train method={name} ...`, or add checkpoint=untrained to score "
            "the untrained policy (marked untrained in results)"
        )


def crs_summary(comps: Components) -> dict[str, Any]:
    crs = comps.executor.crs
    fixed = comps.executor.schedule.fixed_agents
    return {**crs.stats(), "persistent_adversaries": None if fixed is None else list(fixed)}


def finished_results(out_dir: Path, resolved: dict[str, Any], mode: str) -> dict[str, Any] | None:
    """The results of this exact job if it already finished in out_dir (a re-run sweep skips it)."""
    path = out_dir / "results.json"
    if not path.is_file():
        return None
    try:
        old = json.loads(path.read_text())
    except json.JSONDecodeError:
        return None
    same = isinstance(old.get("config"), dict) and _settled(old["config"]) == resolved
    return old if same and old.get("mode") == mode else None


def _settled(config: dict[str, Any]) -> dict[str, Any]:
    """A saved config with its embedder resolved as today's runs record it (runs from before
    that recorded `embedder: null`), so that resuming and skipping still recognise them."""
    from tomacs.config import resolve_embedder

    cfg = OmegaConf.create(config)
    resolve_embedder(cfg)
    return OmegaConf.to_container(cfg, resolve=True)  # type: ignore[return-value]


def run_id(job: dict[str, str] | None, resolved: dict[str, Any]) -> str:
    """Stable id of a job: hash of its overrides (sweeps), else of its resolved config."""
    key = (job or {}).get("overrides") or json.dumps(resolved, sort_keys=True, default=str)
    return hashlib.sha256(key.encode()).hexdigest()[:12]


def run_job(
    cfg: DictConfig,
    mode: str,
    out_dir: Path,
    progress: Progress | None = None,
    job: dict[str, str] | None = None,
    on_start: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Train (when asked and the method learns) then evaluate; write config.yaml and results.json.

    `job` (from Hydra): {"group": sweep, "name": overrides, "overrides": ...} for trackers and the
    run id. A job whose results.json already matches its config is not run again (returned with
    "skipped": True), so re-running a sweep in the same directory only does what is missing.
    The job holds out_dir for its whole life: a second job there fails at once (tomacs.rundir).
    `on_start` runs once the job is past every check, before it writes anything (the CLI prints
    the run directory there, so a refused job says only why)."""
    from tomacs.rundir import hold

    with hold(out_dir):
        return _locked_job(cfg, mode, out_dir, progress, job, on_start)


def _locked_job(
    cfg: DictConfig,
    mode: str,
    out_dir: Path,
    progress: Progress | None,
    job: dict[str, str] | None,
    on_start: Callable[[], None] | None = None,
) -> dict[str, Any]:
    t0 = time.perf_counter()
    from tomacs.training import settle_embedder

    settle_embedder(cfg)  # before config.yaml: it records the embedder the run really uses
    resolved = to_container(cfg)
    resolved.pop("hydra", None)
    done = finished_results(out_dir, resolved, mode)
    if done is not None:
        return {**done, "skipped": True}
    check_checkpoint(cfg, mode)
    comps = build(cfg, need_train=(mode == "train"))
    check_resumable(out_dir, resolved)
    trains = mode == "train" and comps.method.trainable  # training loads (resumes) its own checkpoint
    if not trains and cfg.get("checkpoint") and cfg.checkpoint != UNTRAINED:
        from tomacs.training import load_checkpoint

        load_checkpoint(comps.method, Path(cfg.checkpoint))  # a wrong one is refused before the job starts
    if on_start is not None:
        on_start()
    (out_dir / "config.yaml").write_text(OmegaConf.to_yaml(OmegaConf.create(resolved)))
    from tomacs.tracking import make_tracker

    comps.tracker = make_tracker(to_container(cfg.logger), resolved, out_dir, job or {})
    results: dict[str, Any] | None = None
    try:
        results = _run(comps, cfg, mode, out_dir, progress, resolved, t0, job)
    finally:
        comps.tracker.finish(results, out_dir / "episodes.jsonl", failed=results is None)
    return results


def _run(
    comps: Components,
    cfg: DictConfig,
    mode: str,
    out_dir: Path,
    progress: Progress | None,
    resolved: dict[str, Any],
    t0: float,
    job: dict[str, str] | None,
) -> dict[str, Any]:
    label = backbone_label(cfg, comps.backbone)
    train_info: dict[str, Any] = {}
    if mode == "train" and comps.method.trainable:
        from tomacs.training import train

        train_info = train(comps, out_dir, progress)
        stale = out_dir / "episodes.jsonl"
        if train_info["epochs_run"] > train_info["resumed_from_epoch"] and stale.exists():
            # evaluation episodes of an earlier policy: the resumed training changed it
            stale.unlink()
    if mode == "train" and not comps.method.trainable and comps.executor.crs is not None and comps.train_qs:
        from tomacs.credibility.stream import warm_up

        train_info = warm_up(comps, out_dir, progress)
    metrics = evaluate(comps, out_dir, progress)
    stats = comps.backbone.stats() if hasattr(comps.backbone, "stats") else {}
    # a learned method scored without training: kept apart from the trained one in every report
    untrained = comps.method.trainable and (
        cfg.get("checkpoint") == UNTRAINED or (mode == "train" and train_info.get("iterations") == 0)
    )
    from tomacs.embed import embedding_summary

    results = {
        "backbone": label,
        "benchmark": comps.bench.name,
        "method": comps.method.name,
        "untrained": bool(untrained),
        "attack": cfg.attack.name,
        "budget": cfg.budget.name,
        "agents": comps.ctx.n_agents,
        "rounds": comps.ctx.rounds,
        "seed": int(cfg.seed),
        "decision": comps.ctx.decision,
        "n_adversaries": comps.ctx.n_adversaries,
        "mode": mode,
        "run_id": run_id(job, resolved),
        "git_rev": git_rev(),
        "metrics": metrics,
        "roles": list(comps.roles),
        "unparsed_warning": unparsed_warning(metrics, comps.roles),
        "train": train_info,
        "backbone_stats": stats,
        "embedding": embedding_summary(),
        **({"credibility": crs_summary(comps)} if comps.executor.crs is not None else {}),
        "wall_s": round(time.perf_counter() - t0, 3),
        "test_questions": len(comps.test_qs),
        "config": resolved,
    }
    write_json(out_dir / "results.json", results)
    return results
