"""The one trainer for every learned method: REINFORCE over episodes from the shared executor.

A method supplies `loss(state, episodes, utilities)`; this module owns the loop, the optimiser,
the run log, per-epoch checkpoints, best-by-validation selection and resume, so that every method
is trained under the same budget and bookkeeping.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tomacs.batches import Batch, walk
from tomacs.build import Components
from tomacs.checkpoint import load_checkpoint, save_checkpoint
from tomacs.embed import encode_totals
from tomacs.metrics import summarize
from tomacs.progress import Progress, Running, pct
from tomacs.seeding import stable_seed
from tomacs.types import Episode


def make_optimizer(name: str, params: list[Any], lr: float) -> Any:
    import torch

    if name == "adam":
        return torch.optim.Adam(params, lr=lr)
    if name == "sgd":
        return torch.optim.SGD(params, lr=lr)
    if name == "adamw":
        return torch.optim.AdamW(params, lr=lr)
    raise ValueError(f"unknown optimizer '{name}'; valid: adam, adamw, sgd")


def utility(episode: Any) -> float:
    """u_q(τ): 1 for a correct final answer, 0 otherwise (TodyComm §4.1, task utility)."""
    return 1.0 if episode.correct else 0.0


def credit_gap(episodes: list[Any], n: int, rounds: int) -> float | None:
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


def trim_log(path: Path, start_epoch: int) -> None:
    """Keep only the log lines of epochs the checkpoint holds: a run stopped mid-epoch logged
    iterations that the resume runs again, and the log must show each iteration once."""
    if not path.exists():
        return
    keep = []
    for line in path.read_text().splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            break  # a torn last line from a kill
        if isinstance(rec, dict) and int(rec.get("epoch", start_epoch)) < start_epoch:
            keep.append(line)
    path.write_text("".join(x + "\n" for x in keep))


def _append(path: Path, rec: dict[str, Any]) -> None:
    with path.open("a") as f:
        f.write(json.dumps(rec) + "\n")


@dataclass
class Standing:
    """Where training stands after an epoch. Every checkpoint carries it, so a killed run goes on
    from its last finished epoch with the same best checkpoint and early-stopping count."""

    epoch: int = 0  # the next epoch to run
    iteration: int = 0
    best_val: float = -1.0  # the best validation score so far (Acc; ADAcc breaks ties)
    since_best: int = 0  # epochs since that score
    best_acc: float | None = None  # validation Acc of the best checkpoint

    @classmethod
    def of(cls, ckpt: dict[str, Any]) -> Standing:
        return cls(
            ckpt.get("epoch", -1) + 1,
            ckpt.get("iteration", 0),
            ckpt.get("best_val", -1.0),
            ckpt.get("since_best", 0),
            ckpt.get("best_val_acc"),
        )

    def judge(self, epoch: int, val_acc: float | None, val_adacc: float | None) -> bool:
        """Count a finished epoch; True when its policy is the best so far. Validation Acc picks
        the checkpoint (the reward); ADAcc only breaks ties, which are common on a few dozen
        questions. No validation: keep the last epoch."""
        tie = val_adacc if val_adacc is not None and val_adacc == val_adacc else 0.0
        score = val_acc + 1e-3 * tie if val_acc is not None else -float(epoch)
        is_best = val_acc is None or score > self.best_val
        if is_best and val_acc is not None:
            self.best_val, self.best_acc = score, val_acc
        self.since_best = 0 if is_best else self.since_best + 1
        self.epoch = epoch + 1
        return is_best

    def checkpoint_fields(self) -> dict[str, Any]:
        return {
            "epoch": self.epoch - 1,
            "iteration": self.iteration,
            "best_val": self.best_val,
            "best_val_acc": self.best_acc,
            "since_best": self.since_best,
        }


def train(comps: Components, out_dir: Path, progress: Progress | None = None) -> dict[str, Any]:
    """Train the method epoch by epoch (checkpoint.pt after each, best.pt by validation), resuming
    from out_dir's checkpoint (or cfg.checkpoint); the method ends holding best.pt's weights."""
    cfg = comps.cfg
    method = comps.method
    lr = float(method.settings.lr or cfg.train.lr)
    optimizer = make_optimizer(str(cfg.train.optimizer), method.parameters(), lr)
    ckpt_path, best_path = out_dir / "checkpoint.pt", out_dir / "best.pt"
    log_path = out_dir / "train_log.jsonl"
    at = Standing()
    resume_from = (
        Path(cfg.checkpoint) if cfg.get("checkpoint") else (ckpt_path if ckpt_path.exists() else None)
    )
    if resume_from is not None:
        ck = load_checkpoint(method, resume_from, optimizer)
        if comps.executor.crs is not None and ck.get("credibility"):
            comps.executor.crs.state.load(ck["credibility"])
        at = Standing.of(ck)
    start_epoch = at.epoch
    trim_log(log_path, start_epoch)
    epochs = int(cfg.train.epochs)
    patience = cfg.train.get("patience")
    if not comps.train_qs:
        raise ValueError("train.size is 0 or the benchmark has no training split; nothing to train on")
    t0 = time.perf_counter()
    prog = progress or Progress(enabled=False)

    def out_of_patience() -> bool:
        """Early stopping: validation has not improved for `patience` epochs."""
        return patience is not None and bool(comps.val_qs) and at.since_best >= int(patience)

    stopped_early = out_of_patience()  # a resumed run that had already stopped stays stopped
    for epoch in range(start_epoch, epochs):
        if stopped_early:
            break
        title = f"train epoch {epoch + 1}/{epochs}"
        at.iteration = train_epoch(comps, optimizer, epoch, at.iteration, log_path, prog, title, t0)
        val_acc, val_adacc = validate(comps, epoch, at.iteration, log_path, prog, f"{title} validating")
        is_best = at.judge(epoch, val_acc, val_adacc)
        stopped_early = out_of_patience()
        if val_acc is not None:
            prog.log(
                f"{title} validation | val Acc {pct(val_acc)} | val ADAcc {pct(val_adacc)}"
                f" | {'new best' if is_best else f'no improvement for {at.since_best}'}"
                + (f" | stopping early (patience {patience})" if stopped_early else "")
            )
        extra = {**at.checkpoint_fields(), "embedder": cfg.get("embedder")}
        if comps.executor.crs is not None:  # credibility is part of the run's learned state
            extra["credibility"] = comps.executor.crs.state.to_dict()
        save_checkpoint(ckpt_path, method, optimizer, extra)
        if is_best:
            save_checkpoint(best_path, method, optimizer, extra)
    if best_path.exists():
        load_checkpoint(method, best_path)
    method.train_mode(False)
    return {
        "epochs": epochs,
        "epochs_run": at.epoch,
        "stopped_early": bool(stopped_early),
        "iterations": at.iteration,
        "best_val_acc": at.best_acc,
        "train_wall_s": round(time.perf_counter() - t0, 3),
        "resumed_from_epoch": start_epoch,
    }


def train_epoch(
    comps: Components,
    optimizer: Any,
    epoch: int,
    iteration: int,
    log_path: Path,
    prog: Progress,
    title: str,
    t0: float,
) -> int:
    """One pass over the training questions in the epoch's seeded order, a REINFORCE step per
    batch, each logged to train_log.jsonl; returns the iteration count after the epoch."""
    cfg, method = comps.cfg, comps.method
    n, rounds = comps.ctx.n_agents, comps.ctx.rounds
    method.train_mode(True)
    order = np.random.default_rng(stable_seed(cfg.seed, "shuffle", epoch)).permutation(len(comps.train_qs))
    qs = [comps.train_qs[i] for i in order]
    running = Running(n, rounds)
    # the sampling (exploring) policy's Acc/ADAcc, not the greedy one validation scores
    with prog.task(title, total=len(qs), unit="questions", label="explore") as task:
        encoded = encode_totals()

        def step(b: Batch) -> None:
            nonlocal iteration, encoded
            loss = method.loss(b.state, b.episodes, [utility(e) for e in b.episodes])
            loss_value = None
            if loss is not None and getattr(loss, "requires_grad", False):
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                loss_value = float(loss.detach().cpu())
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
                "wall_s": round(time.perf_counter() - t0, 3),
                "encoded": now[0] - encoded[0],  # MiniLM texts this iteration (0 with the hashing embedder)
                "encode_s": round(now[1] - encoded[1], 3),
            }
            encoded = now
            _append(log_path, rec)
            if comps.tracker is not None:
                comps.tracker.log(rec, step=iteration)
            iteration += 1
            task.step(
                len(b.questions), iter=f"{b.number}/{b.total}", loss=loss_value, **running.add(b.episodes)
            )

        bs = int(cfg.train.batch_size)
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


def validate(
    comps: Components, epoch: int, iteration: int, log_path: Path, prog: Progress, title: str
) -> tuple[float | None, float | None]:
    """Acc and ADAcc of the greedy policy on the validation questions (None, None without any)."""
    if not comps.val_qs:
        return None, None
    n, rounds = comps.ctx.n_agents, comps.ctx.rounds
    comps.method.train_mode(False)
    eps = greedy_val_episodes(comps, int(comps.cfg.train.batch_size), prog, title)
    vm = summarize(eps, n, rounds)
    vrec = {
        "epoch": epoch,
        "iteration": iteration,
        "val_acc": vm["acc"],
        "val_adacc": vm["adacc"],
        "val_token": vm["token"],
        "val_credit_gap": credit_gap(eps, n, rounds),
    }
    _append(log_path, vrec)
    if comps.tracker is not None:
        comps.tracker.log(vrec, step=max(iteration - 1, 0))
    return vm["acc"], vm["adacc"]


def greedy_val_episodes(comps: Components, batch_size: int, prog: Progress, title: str) -> list[Episode]:
    """The method, greedy, on the validation questions with a progress bar: what model selection
    (here) and the supervised detector's evaluation curve (Fig. 4) both score."""
    running = Running(comps.ctx.n_agents, comps.ctx.rounds)
    with prog.task(title, total=len(comps.val_qs), unit="questions", label="val") as task:
        return walk(
            comps.executor,
            comps.method,
            comps.val_qs,
            batch_size,
            train=False,
            phase="val",
            on_call=task,
            on_batch=lambda b: task.step(len(b.episodes), **running.add(b.episodes)),
        )


def warm_up(comps: Components, out_dir: Path, progress: Progress | None = None) -> dict[str, Any]:
    """`train` for a method with nothing to learn but decision=crs: stream the training questions
    once so credibility is learned before the test stream (which keeps learning). Deterministic,
    so a rerun repeats it exactly (and makes no new API calls: the response cache has it all)."""
    crs = comps.executor.crs
    if crs is None:
        raise ValueError("the credibility warm-up needs decision=crs")
    n, rounds = comps.ctx.n_agents, comps.ctx.rounds
    log_path = out_dir / "train_log.jsonl"
    log_path.unlink(missing_ok=True)
    t0 = time.perf_counter()
    qs = comps.train_qs
    prog = progress or Progress(enabled=False)
    with prog.task("credibility warm-up", total=len(qs), unit="questions") as task:

        def finished(b: Batch) -> None:
            m = summarize(b.episodes, n, rounds)
            task.step(len(b.episodes), acc=m["acc"])
            rec = {"warmup_batch": b.number - 1, "train_acc": m["acc"], "crs": crs.state.to_dict()}
            _append(log_path, rec)

        walk(
            comps.executor,
            comps.method,
            qs,
            int(comps.cfg.train.batch_size),
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
