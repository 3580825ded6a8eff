"""The one trainer for every learned method: REINFORCE over episodes from the shared executor.

A method supplies `loss(state, episodes, utilities)`; this module owns the REINFORCE step, the
optimiser and what picks the best epoch (validation Acc), and `tomacs.training.core.EpochLoop`
(shared with every trainer) keeps the run log, per-epoch checkpoints, best.pt and resume,
so that every method is trained under the same budget and bookkeeping.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from tomacs.embedding.embedders import encode_totals
from tomacs.execution.batches import Batch, walk
from tomacs.job.components import Components
from tomacs.job.progress import Progress, Running, pct
from tomacs.methods.learned import LearnedMethod
from tomacs.metrics import summarize
from tomacs.seeding import stable_seed
from tomacs.training.core import TRAIN_LOG, EpochLoop, Trainer, append_line, greedy_val_episodes
from tomacs.types import Episode

if TYPE_CHECKING:
    import torch


def make_optimizer(name: str, params: list[torch.nn.Parameter], lr: float) -> torch.optim.Optimizer:
    import torch

    if name == "adam":
        return torch.optim.Adam(params, lr=lr)
    if name == "sgd":
        return torch.optim.SGD(params, lr=lr)
    if name == "adamw":
        return torch.optim.AdamW(params, lr=lr)
    raise ValueError(f"unknown optimizer '{name}'; valid: adam, adamw, sgd")


def scheduled_lr(base: float, schedule: str, iteration: int, total: int) -> float:
    """The learning rate of `iteration` (0-based) of `total`: constant (the paper), or cosine from
    `base` down to 0 at the job's last iteration. A function of the iteration, so a resumed run
    continues the same schedule without saving any scheduler state."""
    if schedule == "constant" or total <= 1:
        return base
    if schedule == "cosine":
        return base * 0.5 * (1.0 + math.cos(math.pi * min(iteration, total - 1) / (total - 1)))
    raise ValueError(f"unknown train.lr_schedule {schedule!r}; valid: constant, cosine")


def utility(episode: Episode) -> float:
    """u_q(τ): 1 for a correct final answer, 0 otherwise (TodyComm §4.1, task utility)."""
    return 1.0 if episode.correct else 0.0


def credit_gap(episodes: list[Episode], n: int, rounds: int) -> float | None:
    """Mean decision credit of honest minus adversarial agents (ground truth), None without credits.

    Logged per iteration because it moves long before Acc does: a policy that is learning to
    detect shows a growing gap even while the accuracy of a 32-question batch is still noise."""
    hon: list[float] = []
    adv: list[float] = []
    for ep in episodes:
        credits = getattr(ep.decision, "credits", None) if ep.decision is not None else None
        if credits is None:
            continue
        for i, y in enumerate(ep.plan.labels(n, rounds)):
            (adv if y else hon).append(float(credits[i]))
    if not hon or not adv:
        return None
    return float(np.mean(hon) - np.mean(adv))


# the Standing fields REINFORCE checkpoints carry, in their order (tomacs.training.core.EpochLoop)
CHECKPOINT_KEYS = ("epoch", "iteration", "best_val", "best_val_acc", "since_best")


# what `selection_score` judges, as the training log lines name it
SELECTION = "val Acc (ADAcc breaks ties)"


def selection_score(val_acc: float | None, val_adacc: float | None) -> float | None:
    """What picks best.pt: validation Acc (the reward); ADAcc only breaks ties, which are common
    on a few dozen questions. None without validation: every epoch is kept, so the last one wins."""
    if val_acc is None:
        return None
    tie = val_adacc if val_adacc is not None and val_adacc == val_adacc else 0.0
    return val_acc + 1e-3 * tie


def validation_ends(log_path: Path) -> dict[str, dict[str, float | int]] | None:
    """The best validation epoch (the one best.pt holds, by `selection_score`; a tie keeps the
    earlier) and the last one, from train_log.jsonl (so a resumed run's earlier epochs count):
    results report both, since the test figures of best.pt alone would hide a fall after the peak
    (issue 40). None without validation."""
    import json

    rows = []
    if log_path.is_file():
        for line in log_path.read_text().splitlines():
            rec = json.loads(line) if line.strip() else {}
            if rec.get("val_acc") is not None:
                rows.append(rec)
    if not rows:
        return None

    def end(rec: dict[str, Any]) -> dict[str, float | int]:
        return {
            "epoch": int(rec["epoch"]) + 1,
            "acc": float(rec["val_acc"]),
            "adacc": float(rec["val_adacc"]),
        }

    best = rows[0]
    for rec in rows[1:]:
        if (selection_score(rec["val_acc"], rec["val_adacc"]) or 0.0) > (
            selection_score(best["val_acc"], best["val_adacc"]) or 0.0
        ):
            best = rec
    return {"best": end(best), "last": end(rows[-1])}


def epoch_questions(comps: Components) -> int:
    """Questions one epoch walks, for the job's ETA: every training episode (`train.samples` per
    training question) and the validation questions."""
    return len(comps.train_qs) * comps.spec.train.samples + len(comps.val_qs)


def train(comps: Components, out_dir: Path, progress: Progress | None = None) -> dict[str, object]:
    """Train the method epoch by epoch (checkpoint.pt after each, best.pt by validation), resuming
    from out_dir's checkpoint (or spec.checkpoint); the method ends holding best.pt's weights
    (`train.select=last`: the last epoch's)."""
    spec = comps.spec
    method = comps.method
    if not isinstance(method, LearnedMethod):
        raise TypeError(f"REINFORCE trains a learned method (LearnedMethod), not {method.name!r}")
    lr = float(method.settings.lr or spec.train.lr)
    optimizer = make_optimizer(spec.train.optimizer, method.parameters(), lr)
    patience = spec.train.patience
    loop = EpochLoop(
        out_dir,
        method,
        optimizer,
        label="train",
        epochs=spec.train.epochs,
        keys=CHECKPOINT_KEYS,
        patience=patience if comps.val_qs else None,  # nothing to validate on: no early stopping
        tracker=comps.tracker,
        progress=progress,
    )
    ck = loop.resume(spec.checkpoint)
    if ck is not None and comps.executor.crs is not None and ck.get("credibility"):
        comps.executor.crs.state.load(ck["credibility"])
    if not comps.train_qs:
        raise ValueError("train.size is 0 or the benchmark has no training split; nothing to train on")
    loop.t0 = time.perf_counter()  # train_wall_s has always counted from here, after the loading
    # epochs an earlier process finished (or that will not run: it had stopped early) are not what remains
    loop.prog.skip_job((loop.total - loop.epochs_left()) * epoch_questions(comps))
    at = loop.at
    for epoch in loop.epochs():
        title = loop.title(epoch)
        at.iteration = train_epoch(comps, loop, epoch, title)
        val_acc, val_adacc = validate(comps, loop, epoch, f"{title} validating")
        is_best = loop.judge(epoch, selection_score(val_acc, val_adacc), best_val_acc=val_acc)
        if val_acc is not None:
            judged = f"{SELECTION} for {at.since_best} epoch{'s' if at.since_best > 1 else ''}"
            loop.prog.log(
                f"{title} validation | val Acc {pct(val_acc)} | val ADAcc {pct(val_adacc)}"
                f" | {f'new best {SELECTION}' if is_best else f'no improvement in {judged}'}"
                + (f" | stopping early (patience {patience})" if loop.stopped_early else "")
            )
        extra: dict[str, Any] = {"embedder": spec.embedder}
        if comps.executor.crs is not None:  # credibility is part of the run's learned state
            extra["credibility"] = comps.executor.crs.state.to_dict()
        loop.save(is_best, extra)
    loop.finish(spec.train.select)
    return {
        **loop.summary(),
        # what a setting left to the method (null, auto) resolved to: results name the estimator that ran
        "updates": method.updates,
        **method.resolved_settings(),
        "validation": validation_ends(loop.log_path),
        "tested": spec.train.select,  # which end of training the test figures are: best.pt or the last epoch
        "train_wall_s": loop.wall_s(),
        "resumed_from_epoch": loop.start,
    }


def train_epoch(comps: Components, loop: EpochLoop, epoch: int, title: str) -> int:
    """One pass over the training questions in the epoch's seeded order, a REINFORCE step per
    batch, each logged to train_log.jsonl; returns the iteration count after the epoch."""
    spec, method, optimizer = comps.spec, comps.method, loop.optimizer
    assert isinstance(method, LearnedMethod)  # `train` checked it
    iteration = loop.at.iteration
    n, rounds = comps.ctx.n_agents, comps.ctx.rounds
    method.train_mode(True)
    order = np.random.default_rng(stable_seed(spec.seed, "shuffle", epoch)).permutation(len(comps.train_qs))
    k = spec.train.samples
    # train.samples > 1: each question's episodes sit in one batch (its per-question baseline)
    qs = [comps.train_qs[i] for i in order for _ in range(k)]
    running = Running(n, rounds)
    base_lr = float(optimizer.defaults["lr"])  # what `train` built the optimiser with
    schedule = spec.train.lr_schedule
    clip = spec.train.grad_clip
    updates, update_clip = method.updates, method.settings.update_clip
    bs = spec.train.batch_size * k
    total = spec.train.epochs * math.ceil(len(qs) / bs)  # the job's iterations: the schedule's span
    # the sampling (exploring) policy's Acc/ADAcc, not the greedy one validation scores
    with loop.prog.task(title, total=len(qs), unit="questions", label="explore") as task:
        encoded = encode_totals()

        def step(b: Batch) -> None:
            nonlocal iteration, encoded
            loss = method.loss(b.state, b.episodes, [utility(e) for e in b.episodes])
            loss_value = None
            if loss is not None and getattr(loss, "requires_grad", False):
                rate = scheduled_lr(base_lr, schedule, iteration, total)
                for group in optimizer.param_groups:
                    group["lr"] = rate
                descend(optimizer, loss, clip)
                loss_value = float(loss.detach().cpu())
                for _ in range(updates - 1):  # method.updates > 1: more steps on the same episodes
                    descend(optimizer, method.reuse_loss(b.state, update_clip), clip)
            method.on_iteration_end(iteration)
            m = summarize(b.episodes, n, rounds)
            now = encode_totals()
            rec = {
                "iteration": iteration,
                "epoch": epoch,
                "loss": loss_value,
                "train_acc": m["acc"],
                "train_adacc": m["adacc"],
                "train_token": m["token"],
                "credit_gap": credit_gap(b.episodes, n, rounds),
                "wall_s": loop.wall_s(),
                "encoded": now[0] - encoded[0],  # MiniLM texts this iteration (0 with the hashing embedder)
                "encode_s": round(now[1] - encoded[1], 3),
            }
            encoded = now
            loop.log(rec, step=iteration)
            iteration += 1
            task.step(
                len(b.questions), iter=f"{b.number}/{b.total}", loss=loss_value, **running.add(b.episodes)
            )

        # the epoch is the sample index of this pass: each epoch draws fresh replies for its questions
        walk(
            comps.executor,
            method,
            qs,
            bs,
            train=True,
            phase=f"train{epoch}",
            sample_index=epoch,
            on_call=task,
            on_batch=step,
        )
    return iteration


def descend(optimizer: torch.optim.Optimizer, loss: torch.Tensor, clip: float | None) -> None:
    """One optimiser step on `loss`, its global gradient norm clipped to `clip` (train.grad_clip)."""
    import torch

    optimizer.zero_grad()
    loss.backward()
    if clip is not None:
        params = [p for group in optimizer.param_groups for p in group["params"]]
        torch.nn.utils.clip_grad_norm_(params, float(clip))
    optimizer.step()


def validate(comps: Components, loop: EpochLoop, epoch: int, title: str) -> tuple[float | None, float | None]:
    """Acc and ADAcc of the greedy policy on the validation questions (None, None without any)."""
    if not comps.val_qs:
        return None, None
    n, rounds = comps.ctx.n_agents, comps.ctx.rounds
    iteration = loop.at.iteration
    comps.method.train_mode(False)
    eps = greedy_val_episodes(comps, comps.spec.train.batch_size, loop.prog, title)
    vm = summarize(eps, n, rounds)
    vrec = {
        "epoch": epoch,
        "iteration": iteration,
        "val_acc": vm["acc"],
        "val_adacc": vm["adacc"],
        "val_token": vm["token"],
        "val_credit_gap": credit_gap(eps, n, rounds),
    }
    loop.log(vrec, step=max(iteration - 1, 0))
    return vm["acc"], vm["adacc"]


def warm_up(comps: Components, out_dir: Path, progress: Progress | None = None) -> dict[str, object]:
    """`train` for a method with nothing to learn but decision=crs: stream the training questions
    once so credibility is learned before the test stream (which keeps learning). Deterministic,
    so a rerun repeats it exactly (and makes no new API calls: the response cache has it all)."""
    crs = comps.executor.crs
    if crs is None:
        raise ValueError("the credibility warm-up needs decision=crs")
    n, rounds = comps.ctx.n_agents, comps.ctx.rounds
    log_path = out_dir / TRAIN_LOG
    log_path.unlink(missing_ok=True)
    t0 = time.perf_counter()
    qs = comps.train_qs
    prog = progress or Progress(enabled=False)
    with prog.task("credibility warm-up", total=len(qs), unit="questions") as task:

        def finished(b: Batch) -> None:
            m = summarize(b.episodes, n, rounds)
            task.step(len(b.episodes), acc=m["acc"])
            rec = {"warmup_batch": b.number - 1, "train_acc": m["acc"], "crs": crs.state.to_dict()}
            append_line(log_path, rec)

        walk(
            comps.executor,
            comps.method,
            qs,
            comps.spec.train.batch_size,
            train=False,
            phase="train0",
            on_call=task,
            on_batch=finished,
        )
    return {
        "epochs": 0,
        "iterations": 0,
        "credibility_warmup_queries": len(qs),
        "credibility_after_warmup": crs.state.to_dict(),
        "train_wall_s": round(time.perf_counter() - t0, 3),
        "resumed_from_epoch": 0,
    }


def job_questions(comps: Components) -> tuple[int, bool]:
    """The questions REINFORCE walks in a whole job (every epoch's), and whether that is a bound (early
    stopping on validation may end it sooner)."""
    epochs = comps.spec.train.epochs
    bound = comps.spec.train.patience is not None and bool(comps.val_qs)
    return epochs * epoch_questions(comps), bound


# every learned method's trainer unless it names its own (`LearnedMethod.trainer`)
REINFORCE = Trainer(
    train=train,
    questions=job_questions,
    plan_note="training: the untrained policy's participation, one epoch dry-run and repeated",
)
