"""Running a job: build it, train it (when asked and it learns), evaluate it, write its results.

Kept apart from the CLI so tests, sweeps and notebooks can run a job from a composed config.
Building lives in `tomacs.job.components`, the job's files in `tomacs.job.files`, the trainer where the
method names it (`tomacs.training.core.trainer_of`: REINFORCE, `tomacs.training.reinforce`, unless the
method brings its own); this module is the order they run in.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
from omegaconf import DictConfig

from tomacs.backbones.base import is_simulated_label
from tomacs.credibility.stream import stream_metrics
from tomacs.embedding.embedders import embedding_summary
from tomacs.execution.batches import Batch, walk
from tomacs.job.checkpoint import UNTRAINED, check_checkpoint, load_checkpoint
from tomacs.job.clock import JobClock
from tomacs.job.components import Components, backbone_label, build
from tomacs.job.files import (
    RESULTS,
    EpisodeLog,
    check_distinct,
    check_resumable,
    finished_results,
    git_rev,
    records_to_episodes,
    write_config,
    write_json,
)
from tomacs.job.progress import Progress, Running
from tomacs.job.rundir import hold
from tomacs.launch.baselines import run_baselines
from tomacs.launch.embed_rate import record_embed_rate
from tomacs.launch.plan import job_plan_line
from tomacs.launch.spec import job_spec
from tomacs.launch.tracking import make_tracker
from tomacs.metrics import summarize, unparsed_warning
from tomacs.training.core import trainer_of
from tomacs.training.reinforce import warm_up


def evaluate(comps: Components, out_dir: Path, progress: Progress | None = None) -> dict[str, Any]:
    """Evaluate on the test questions, resuming from episodes.jsonl when present.

    Under `eval.draws` = K > 1 (the simulator) the test is walked K times, draw k with the agents of
    `backbone.draw` + k on the same adversary plans, each into its own episode file; the metrics pool the
    K passes (one policy's expected score, with the evaluation's own noise cut by about sqrt(K)) and
    `by_draw` keeps each pass's, so their spread is on record."""
    draws = comps.spec.eval.draws
    progress = progress or Progress(enabled=False)
    t0 = time.perf_counter()
    metrics: dict[str, Any]
    if draws == 1:
        records, resumed = _evaluate_draw(comps, EpisodeLog.of(out_dir), progress, "evaluate")
        metrics = dict(summarize(records_to_episodes(records), comps.ctx.n_agents, comps.ctx.rounds))
    else:
        backbone: Any = comps.backbone
        base = backbone.draw
        records, resumed, by_draw = [], 0, []
        try:
            for k in range(draws):
                backbone.draw = base + k
                title = f"evaluate draw {k + 1}/{draws}"
                got, done = _evaluate_draw(comps, EpisodeLog.of(out_dir, k), progress, title)
                m = summarize(records_to_episodes(got), comps.ctx.n_agents, comps.ctx.rounds)
                by_draw.append({"draw": base + k, **{key: m[key] for key in DRAW_KEYS}})
                records += got
                resumed += done
        finally:
            backbone.draw = base
        metrics = dict(summarize(records_to_episodes(records), comps.ctx.n_agents, comps.ctx.rounds))
        metrics["draws"] = draws
        metrics["by_draw"] = by_draw
        metrics["acc_draw_std"] = float(np.std([d["acc"] for d in by_draw], ddof=1))
    metrics["eval_wall_s"] = round(time.perf_counter() - t0, 3)
    metrics["resumed_questions"] = resumed
    if comps.executor.crs is not None:  # one pass only (config.validate refuses eval.draws > 1 with it)
        metrics.update(stream_metrics(records, comps.executor.schedule.fixed_agents))
    return metrics


# what results.json keeps of each draw under eval.draws > 1
DRAW_KEYS = ("acc", "adacc", "adacc_baseline")


def _evaluate_draw(
    comps: Components, log: EpisodeLog, progress: Progress, title: str
) -> tuple[list[dict[str, Any]], int]:
    """One pass over the test questions into `log`, resuming what it holds: (the test's records, how
    many were there before this process)."""
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
    running = Running(comps.ctx.n_agents, comps.ctx.rounds)
    resumed = len(comps.test_qs) - len(todo)
    if resumed:
        title = f"{title} ({resumed} done before)"
    progress.skip_job(resumed)  # evaluated by an earlier process: not in what remains
    with progress.task(title, total=len(todo), unit="questions") as task:

        def finished(b: Batch) -> None:
            log.append(b.episodes)
            task.step(len(b.questions), batch=f"{b.number}/{b.total}", **running.add(b.episodes))

        walk(
            comps.executor,
            comps.method,
            todo,
            comps.spec.eval.batch_size,
            train=False,
            phase="eval",
            on_call=task,
            on_batch=finished,
        )
    records = [r for r in log.load() if r["question"]["id"] in {q.id for q in comps.test_qs}]
    check_distinct([r["question"]["id"] for r in records], str(log.path))
    return records, len(done)


def job_questions(comps: Components, mode: str) -> tuple[int, bool]:
    """(questions the whole job walks, whether that is a bound): the job's ETA in progress lines.
    A resumed job counts its finished work here too: the trainer and `evaluate` take what an earlier
    process did out of it (`Progress.skip_job`) once they know it."""
    test = len(comps.test_qs) * comps.spec.eval.draws
    if mode != "train":
        return test, False
    if comps.method.trainable:
        walked = trainer_of(comps.method).questions(comps)  # the method's trainer knows what it walks
        return (0, False) if walked is None else (walked[0] + test, walked[1])  # None: unknown, no job ETA
    if comps.executor.crs is not None:
        return len(comps.train_qs) + test, False
    return 0, False


def crs_summary(comps: Components) -> dict[str, object]:
    crs = comps.executor.crs
    if crs is None:
        raise ValueError("crs_summary: the job decides without credibility (decision != crs)")
    fixed = comps.executor.schedule.fixed_agents
    return {**crs.stats(), "persistent_adversaries": None if fixed is None else list(fixed)}


def run_id(job: dict[str, str] | None, resolved: Mapping[str, object]) -> str:
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
    validated: bool = False,
) -> dict[str, Any]:
    """Train (when asked and the method learns) then evaluate; write config.yaml and results.json.

    `job` (from Hydra): {"group": sweep, "name": overrides, "overrides": ...} for trackers and the
    run id. A job whose results.json already matches its config is not run again (returned with
    "skipped": True), so re-running a sweep in the same directory only does what is missing.
    The job holds out_dir for its whole life: a second job there fails at once (tomacs.job.rundir).
    `on_start` runs once the job is past every check, before it writes anything (the CLI prints
    the run directory there, so a refused job says only why). `validated`: the caller validated `cfg`
    (a single run's CLI, which composed it), so it is not validated twice."""
    with hold(out_dir):
        return _locked_job(cfg, mode, out_dir, progress, job, on_start, validated)


def _locked_job(
    cfg: DictConfig,
    mode: str,
    out_dir: Path,
    progress: Progress | None,
    job: dict[str, str] | None,
    on_start: Callable[[], None] | None = None,
    validated: bool = False,
) -> dict[str, object]:
    t0 = time.perf_counter()
    spec = job_spec(cfg, validated=validated)  # the embedder config.yaml records is settled on it
    resolved = spec.as_dict()
    done = finished_results(out_dir, resolved, mode)
    if done is not None:
        return {**done, "skipped": True}
    check_checkpoint(spec, mode)
    comps = build(spec, need_train=(mode == "train"))
    check_resumable(out_dir, resolved)
    trains = mode == "train" and comps.method.trainable  # training loads (resumes) its own checkpoint
    if not trains and spec.checkpoint and spec.checkpoint != UNTRAINED:
        load_checkpoint(comps.method, Path(spec.checkpoint))  # a wrong one is refused before the job starts
    # on the job's own build: the dry run reuses its benchmark, questions and backbone, and walks a
    # method and executor of its own (tomacs.launch.plan), so the job's state is not moved
    plan_line = job_plan_line(spec, mode, comps) if on_start is not None else None
    if on_start is not None:
        on_start()
        print(plan_line, file=sys.stderr, flush=True)
    write_config(out_dir, resolved)
    clock = JobClock(out_dir, t0)  # the job's wall time over this process and the ones before it
    progress = progress or Progress(enabled=False)
    progress.on_step.append(clock.tick)
    # W&B's config also names the sim profile the run used (its file and fit date for a user profile)
    info = comps.backbone.profile_info() if hasattr(comps.backbone, "profile_info") else None
    tracked = {**resolved, "sim_profile": info} if info is not None else resolved
    comps.tracker = make_tracker(spec.logger.plain(), tracked, out_dir, job or {})
    results: dict[str, Any] | None = None
    try:
        results = _run(comps, mode, out_dir, progress, resolved, clock, job)
    finally:
        clock.tick(force=True)
        comps.tracker.finish(results, EpisodeLog.of(out_dir).path, failed=results is None)
    return results


def _run(
    comps: Components,
    mode: str,
    out_dir: Path,
    progress: Progress,
    resolved: dict[str, Any],
    clock: JobClock,
    job: dict[str, str] | None,
) -> dict[str, object]:
    spec = comps.spec
    label = backbone_label(spec, comps.backbone)
    train_info: dict[str, Any] = {}
    progress.start_job(*job_questions(comps, mode))
    if mode == "train" and comps.method.trainable:
        train_info = trainer_of(comps.method).train(comps, out_dir, progress)
        if train_info["epochs_run"] > train_info["resumed_from_epoch"]:
            EpisodeLog.discard_all(out_dir)  # evaluated by the policy before this training
    if mode == "train" and not comps.method.trainable and comps.executor.crs is not None and comps.train_qs:
        train_info = warm_up(comps, out_dir, progress)
    metrics = evaluate(comps, out_dir, progress)
    stats = comps.backbone.stats() if hasattr(comps.backbone, "stats") else {}
    # a learned method scored without training: kept apart from the trained one in every report
    untrained = comps.method.trainable and (
        spec.checkpoint == UNTRAINED or (mode == "train" and train_info.get("iterations") == 0)
    )
    embedded = embedding_summary()
    baselines = None
    if mode == "train" and comps.method.trainable and not untrained and (job or {}).get("group") == "single":
        # a single learned job's summary shows whether training won (tomacs.launch.baselines); sweeps
        # hold their own comparisons, and a report reads them
        baselines = run_baselines(resolved, out_dir, is_simulated_label(label), run_job, progress)
    own = clock.this_process()
    results = {
        "backbone": label,
        "benchmark": comps.bench.name,
        "method": comps.method.name,
        "untrained": bool(untrained),
        "oracle": bool(comps.method.needs_oracle),
        "attack": spec.attack.name,
        "budget": spec.budget.name,
        "agents": comps.ctx.n_agents,
        "rounds": comps.ctx.rounds,
        "seed": spec.seed,
        "eval_seed": comps.executor.episode_seed("eval"),  # = seed unless eval.seed pairs the evaluation
        "decision": comps.ctx.decision,
        "decision_mode": comps.method.decision_mode,
        "n_adversaries": comps.ctx.n_adversaries,
        "mode": mode,
        "run_id": run_id(job, resolved),
        "git_rev": git_rev(),
        **({"device": comps.ctx.device} if comps.method.trainable or embedded else {}),
        "metrics": metrics,
        "roles": list(comps.roles),
        "unparsed_warning": unparsed_warning(metrics, comps.roles),
        "train": train_info,
        "backbone_stats": stats,
        "embedding": embedded,
        **({"baselines": baselines} if baselines is not None else {}),
        **({"credibility": crs_summary(comps)} if comps.executor.crs is not None else {}),
        "wall_s": clock.total(own),  # every process of the job (a resumed one's earlier ones too)
        "wall_s_this_process": own,
        "test_questions": len(comps.test_qs),
        "config": resolved,
    }
    write_json(out_dir / RESULTS, results)
    record_embed_rate(spec, embedded)  # what `tomacs plan` times MiniLM by
    return results
