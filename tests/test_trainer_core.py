"""The bookkeeping both trainers share (tomacs.training.core): keep-best, patience, checkpoints, the
log and resume, on hand-computed cases with a toy model whose weight is the epoch that wrote it."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from tomacs.training.core import EpochLoop, Standing, trim_log
from tomacs.training.reinforce import selection_score

torch = pytest.importorskip("torch")

KEYS = ("epoch", "iteration", "best_val", "best_epoch", "since_best")


def test_judge_keeps_the_first_of_equal_scores_and_counts_epochs_since_the_best() -> None:
    at = Standing()
    verdicts = [at.judge(e, s, best_epoch=e) for e, s in enumerate([0.5, 0.5, 0.7, 0.6, 0.7])]
    assert verdicts == [True, False, True, False, False]
    assert (at.best_val, at.best_epoch, at.since_best, at.epoch) == (0.7, 2, 2, 5)


def test_judge_without_a_score_keeps_every_epoch_and_records_no_best_score() -> None:
    at = Standing()
    assert [at.judge(e, None, best_val_acc=0.9) for e in range(3)] == [True, True, True]
    assert (at.best_val, at.best_val_acc, at.since_best, at.epoch) == (-1.0, None, 0, 3)


def test_a_nan_score_is_never_the_best() -> None:
    at = Standing()
    assert at.judge(0, 0.25) and not at.judge(1, float("nan"))
    assert (at.best_val, at.since_best) == (0.25, 1)


def test_old_checkpoints_of_either_trainer_give_their_standing() -> None:
    reinforce = {"epoch": 3, "iteration": 40, "best_val": 0.5005, "best_val_acc": 0.5, "since_best": 2}
    detector = {"epoch": 1, "iteration": 6, "best_val": 0.875, "best_epoch": 0, "best_val_acc": 0.25}
    assert Standing.of(reinforce) == Standing(4, 40, 0.5005, 2, 0.5, None)
    assert Standing.of(detector) == Standing(2, 6, 0.875, 0, 0.25, 0)
    assert Standing.of({}) == Standing()
    fields = Standing.of(detector).checkpoint_fields(("epoch", "iteration", "best_val", "best_epoch"))
    assert list(fields.items()) == [("epoch", 1), ("iteration", 6), ("best_val", 0.875), ("best_epoch", 0)]


def test_trim_log_keeps_the_finished_epochs_and_stops_at_a_torn_line(tmp_path: Path) -> None:
    log = tmp_path / "train_log.jsonl"
    rows = [{"epoch": 0, "iteration": 0}, {"epoch": 1, "iteration": 1}, {"epoch": 0, "x": 1}]
    log.write_text("".join(json.dumps(r) + "\n" for r in rows) + '{"epoch": 0, "itera')
    trim_log(log, 1)
    assert log.read_text() == '{"epoch": 0, "iteration": 0}\n{"epoch": 0, "x": 1}\n'
    trim_log(tmp_path / "absent.jsonl", 1)  # a fresh run has no log yet
    assert not (tmp_path / "absent.jsonl").exists()


def test_reinforce_selection_score_is_acc_with_adacc_breaking_ties() -> None:
    assert math.isclose(selection_score(0.5, 0.25) or 0.0, 0.50025)
    assert selection_score(0.5, float("nan")) == 0.5 and selection_score(0.5, None) == 0.5
    assert selection_score(None, 0.9) is None


class Toy:
    """A model whose one weight is set to the epoch that trained it: which checkpoint is loaded shows."""

    name = "toy"

    def __init__(self) -> None:
        self.w = torch.zeros(1)
        self.training: bool | None = None

    def state_dict(self) -> dict[str, Any]:
        return {"net": {"w": self.w.clone()}}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.w = state["net"]["w"].clone()

    def train_mode(self, on: bool) -> None:
        self.training = on


SCORES = [0.2, 0.6, 0.4, 0.5, 0.9, 0.9]  # patience 2 stops after epoch 3: epoch 1 stays the best


def _run(out: Path, kill_after: int | None = None) -> tuple[Toy, EpochLoop] | None:
    toy = Toy()
    loop = EpochLoop(out, toy, None, label="toy", epochs=len(SCORES), keys=KEYS, patience=2)
    loop.resume(None)
    for epoch in loop.epochs():
        toy.w = torch.tensor([float(epoch)])
        loop.at.iteration += 2
        loop.log({"epoch": epoch, "iteration": loop.at.iteration}, step=epoch)
        is_best = loop.judge(epoch, SCORES[epoch], best_epoch=epoch)
        loop.save(is_best, {"embedder": "hashing"})
        if epoch == kill_after:  # killed in the next epoch, after it logged a line
            loop.log({"epoch": epoch + 1, "iteration": loop.at.iteration + 1}, step=epoch + 1)
            return None
    loop.finish()
    return toy, loop


def _log_epochs(out: Path) -> list[int]:
    return [json.loads(x)["epoch"] for x in (out / "train_log.jsonl").read_text().splitlines()]


def test_the_loop_keeps_the_best_stops_early_and_ends_holding_the_best_weights(tmp_path: Path) -> None:
    done = _run(tmp_path)
    assert done is not None
    toy, loop = done
    assert float(toy.w) == 1.0 and toy.training is False  # best.pt is epoch 1's
    assert loop.summary() == {
        "epochs": 6,
        "epochs_run": 4,
        "stopped_early": True,
        "iterations": 8,
        "best_val_acc": None,
    }
    assert _log_epochs(tmp_path) == [0, 1, 2, 3]
    ckpt = torch.load(tmp_path / "checkpoint.pt", weights_only=False)
    assert [k for k in ckpt if k in KEYS or k == "embedder"] == [*KEYS, "embedder"]
    assert (ckpt["epoch"], ckpt["iteration"], ckpt["best_val"], ckpt["best_epoch"], ckpt["since_best"]) == (
        3,
        8,
        0.6,
        1,
        2,
    )
    again = _run(tmp_path)  # a run that had stopped early stays stopped
    assert again is not None and again[1].start == 4 and again[1].stopped_early
    assert float(again[0].w) == 1.0 and _log_epochs(tmp_path) == [0, 1, 2, 3]


def test_a_killed_run_resumes_to_the_same_end_as_an_uninterrupted_one(tmp_path: Path) -> None:
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    whole.mkdir()
    killed.mkdir()
    done = _run(whole)
    assert _run(killed, kill_after=1) is None
    assert _log_epochs(killed) == [0, 1, 2]  # the half-run epoch 2 logged a line
    resumed = _run(killed)
    assert done is not None and resumed is not None
    assert resumed[1].start == 2 and float(resumed[0].w) == 1.0
    assert resumed[1].summary() == done[1].summary()
    assert _log_epochs(killed) == _log_epochs(whole) == [0, 1, 2, 3]
    a = torch.load(whole / "checkpoint.pt", weights_only=False)
    b = torch.load(killed / "checkpoint.pt", weights_only=False)
    assert {k: a[k] for k in KEYS} == {k: b[k] for k in KEYS}
