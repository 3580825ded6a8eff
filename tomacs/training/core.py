"""What every trainer shares: the `Trainer` record a learned method names (its `trainer`), and the epoch
bookkeeping. REINFORCE (`tomacs.training.reinforce`) and a method's own trainer (G-Safeguard's supervised
detector, `tomacs.extras.gsafeguard.trainer`) step their models differently, but count epochs, keep the best
one, stop early, write checkpoint.pt / best.pt / train_log.jsonl and resume a killed run the same way, here.

Kept apart from both so that a rule (what "best" means when there is no validation score, what a
resumed run skips, which lines of the log survive a kill) is written once and cannot drift between them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tomacs.config import SELECTS
from tomacs.execution.batches import walk
from tomacs.job.checkpoint import load_checkpoint, save_checkpoint
from tomacs.job.progress import Progress, Running
from tomacs.registry import load_target

if TYPE_CHECKING:
    from tomacs.job.components import Components
    from tomacs.methods.base import Method
    from tomacs.types import Episode

CHECKPOINT, BEST, TRAIN_LOG = "checkpoint.pt", "best.pt", "train_log.jsonl"


def _unknown(comps: Components) -> tuple[int, bool] | None:
    return None


def _budget(method: Any) -> int | None:
    return None


@dataclass(frozen=True)
class Trainer:
    """How a learned method is trained: what its `trainer` ("module:attr", tomacs.methods.base) names.

    `train(comps, out_dir, progress)` trains and returns results.json's `train`. The rest say what training
    costs without running it: `questions(comps)`, the questions it walks through the executor in the whole
    job and whether that is a bound (the job's ETA; None: unknown, no ETA); `walks_training`, whether an
    epoch walks the training questions (`tomacs plan` dry-runs one); `epochs(method)`, the epochs when the
    method sets them itself (None: the run's `train` budget); `plan_note`, what the plan says of it."""

    train: Callable[..., dict[str, Any]]
    questions: Callable[[Components], tuple[int, bool] | None] = _unknown
    walks_training: bool = True
    epochs: Callable[[Any], int | None] = _budget
    plan_note: str = ""


def trainer_of(method: Method) -> Trainer:
    """The trainer a learned method names (its `trainer`, imported now)."""
    target = getattr(method, "trainer", None)
    if not target:
        raise ValueError(f"method {method.name!r} has no trainer: it learns nothing")
    found = load_target(str(target))
    if not isinstance(found, Trainer):
        raise TypeError(f"{target}, method {method.name!r}'s trainer, is not a tomacs.training.core.Trainer")
    return found


def append_line(path: Path, rec: Mapping[str, object]) -> None:
    """One JSON line, appended: the log is read line by line, and a kill tears at most the last one."""
    with path.open("a") as f:
        f.write(json.dumps(rec) + "\n")


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


@dataclass
class Standing:
    """Where training stands after an epoch. Every checkpoint carries it, so a killed run goes on
    from its last finished epoch with the same best checkpoint and early-stopping count."""

    epoch: int = 0  # the next epoch to run
    iteration: int = 0  # optimiser steps so far
    best_val: float = -1.0  # the best selection score so far (each trainer says what it scores)
    since_best: int = 0  # epochs since that score
    best_val_acc: float | None = None  # validation Acc of the best checkpoint
    best_epoch: int | None = None

    @classmethod
    def of(cls, ckpt: dict[str, Any]) -> Standing:
        """From a checkpoint of either trainer, old ones included: a field it lacks takes its start value."""
        return cls(
            ckpt.get("epoch", -1) + 1,
            ckpt.get("iteration", 0),
            ckpt.get("best_val", -1.0),
            ckpt.get("since_best", 0),
            ckpt.get("best_val_acc"),
            ckpt.get("best_epoch"),
        )

    def judge(self, epoch: int, score: float | None, **best: float | None) -> bool:
        """Count a finished epoch; True when its model is the best so far, i.e. its score beats
        every earlier one (strictly: a tie keeps the earlier epoch). No score (nothing to validate
        on): every epoch is the best, so the last one is kept, and no best score is recorded.
        `best` are the fields (best_val_acc, best_epoch) to record with a new best score."""
        is_best = score is None or score > self.best_val
        if is_best and score is not None:
            self.best_val = score
            for name, value in best.items():
                setattr(self, name, value)
        self.since_best = 0 if is_best else self.since_best + 1
        self.epoch = epoch + 1
        return is_best

    def checkpoint_fields(self, keys: tuple[str, ...]) -> dict[str, object]:
        """The named fields as a checkpoint stores them ("epoch" is the last finished one)."""
        return {k: self.epoch - 1 if k == "epoch" else getattr(self, k) for k in keys}


class EpochLoop:
    """One training run's epochs in out_dir: resume, the epoch numbers to run, keep-best and early
    stopping, the log, the two checkpoints, and the best weights back in the model at the end.

    A trainer makes one, calls `resume`, runs its own epoch for each of `epochs()`, then `judge`
    and `save`, and finally `finish`. `keys` are the Standing fields its checkpoints have always
    carried, in their order, so that new checkpoints are written as before and old ones load."""

    def __init__(
        self,
        out_dir: Path,
        method: Any,
        optimizer: Any,
        *,
        label: str,
        epochs: int,
        keys: tuple[str, ...],
        patience: int | None = None,
        tracker: Any = None,
        progress: Progress | None = None,
        t0: float | None = None,
    ) -> None:
        self.method, self.optimizer = method, optimizer
        self.ckpt_path, self.best_path = out_dir / CHECKPOINT, out_dir / BEST
        self.log_path = out_dir / TRAIN_LOG
        self.label, self.total, self.keys = label, epochs, keys
        self.patience = patience  # None: no early stopping (also when there is nothing to validate on)
        self.tracker = tracker
        self.prog = progress or Progress(enabled=False)
        self.t0 = time.perf_counter() if t0 is None else t0
        self.at = Standing()
        self.start = 0  # the first epoch this process runs
        self.stopped_early = False

    def resume(self, given: str | None) -> dict[str, object] | None:
        """Load `given` (spec.checkpoint) or else out_dir's checkpoint.pt when there is one, weights
        and optimiser, and drop the log lines of the epochs that will run again; the checkpoint's
        dict (for what else the trainer keeps in it), None for a fresh start. A run that had
        already stopped early stays stopped."""
        path = Path(given) if given else (self.ckpt_path if self.ckpt_path.exists() else None)
        ckpt = None
        if path is not None:
            ckpt = load_checkpoint(self.method, path, self.optimizer)
            self.at = Standing.of(ckpt)
        self.start = self.at.epoch
        trim_log(self.log_path, self.start)
        self.stopped_early = self.out_of_patience()
        return ckpt

    def out_of_patience(self) -> bool:
        """Early stopping: the score has not improved for `patience` epochs."""
        return self.patience is not None and self.at.since_best >= int(self.patience)

    def epochs_left(self) -> int:
        """How many epochs `epochs()` will run at most (none once a resumed run had stopped early)."""
        return 0 if self.stopped_early else max(0, self.total - self.start)

    def epochs(self) -> Iterator[int]:
        """The epochs left to run, ending early once patience runs out."""
        for epoch in range(self.start, self.total):
            if self.stopped_early:
                break
            yield epoch

    def title(self, epoch: int) -> str:
        return f"{self.label} epoch {epoch + 1}/{self.total}"

    def wall_s(self) -> float:
        return round(time.perf_counter() - self.t0, 3)

    def log(self, rec: Mapping[str, object], step: int) -> None:
        """A line of train_log.jsonl, and the same record to the experiment tracker when there is one."""
        append_line(self.log_path, rec)
        if self.tracker is not None:
            self.tracker.log(rec, step=step)

    def judge(self, epoch: int, score: float | None, **best: float | None) -> bool:
        """Standing.judge, then whether patience has run out (`stopped_early`)."""
        is_best = self.at.judge(epoch, score, **best)
        self.stopped_early = self.out_of_patience()
        return is_best

    def save(self, is_best: bool, extra: Mapping[str, object]) -> None:
        """checkpoint.pt after every epoch (what a resume reads), best.pt too when the epoch is the best."""
        fields = {**self.at.checkpoint_fields(self.keys), **extra}
        save_checkpoint(self.ckpt_path, self.method, self.optimizer, fields)
        if is_best:
            save_checkpoint(self.best_path, self.method, self.optimizer, fields)

    def finish(self, select: str = "best") -> None:
        """The model ends holding best.pt's weights (`select="last"`: the last epoch's, which it holds
        already), in evaluation mode."""
        if select not in SELECTS:
            raise ValueError(f"select must be one of {', '.join(SELECTS)}, got {select!r}")
        if select == "best" and self.best_path.exists():
            load_checkpoint(self.method, self.best_path)
        self.method.train_mode(False)

    def summary(self) -> dict[str, object]:
        """results.json -> train: the fields both trainers report, first in its order."""
        return {
            "epochs": self.total,
            "epochs_run": int(self.at.epoch),
            "stopped_early": bool(self.stopped_early),
            "iterations": int(self.at.iteration),
            "best_val_acc": self.at.best_val_acc,
        }


def greedy_val_episodes(comps: Components, batch_size: int, prog: Progress, title: str) -> list[Episode]:
    """The method, greedy, on the validation questions with a progress bar: what model selection
    (REINFORCE) and the supervised detector's evaluation curve (Fig. 4) both score."""
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
