"""A learned job reports its best and its last validation epoch (issue 40 item 2): best.pt is what the
test rows score, and reporting it alone would hide a fall after the peak."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console

from tests.test_todycomm import _one_thread  # noqa: F401 (autouse fixture)
from tomacs.config import compose
from tomacs.job.progress import pct
from tomacs.launch.hydra_app import summary_table
from tomacs.launch.run import run_job
from tomacs.training.reinforce import validation_ends


def _log(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_best_is_the_selection_and_last_is_the_last_epoch(tmp_path: Path) -> None:
    rows = [
        {"iteration": 0, "epoch": 0, "loss": 0.1},  # a training line: skipped
        {"epoch": 0, "iteration": 8, "val_acc": 0.50, "val_adacc": 0.70},
        {"epoch": 1, "iteration": 16, "val_acc": 0.60, "val_adacc": 0.80},
        {"epoch": 2, "iteration": 24, "val_acc": 0.60, "val_adacc": 0.90},  # ADAcc breaks the tie
        {"epoch": 3, "iteration": 32, "val_acc": 0.60, "val_adacc": 0.90},  # a full tie keeps the earlier
        {"epoch": 4, "iteration": 40, "val_acc": 0.55, "val_adacc": 0.75},
    ]
    ends = validation_ends(_log(tmp_path / "train_log.jsonl", rows))
    assert ends == {
        "best": {"epoch": 3, "acc": 0.60, "adacc": 0.90},
        "last": {"epoch": 5, "acc": 0.55, "adacc": 0.75},
    }
    assert validation_ends(_log(tmp_path / "none.jsonl", rows[:1])) is None
    assert validation_ends(tmp_path / "missing.jsonl") is None


def test_a_learned_job_reports_both_and_its_summary_shows_them(tmp_path: Path) -> None:
    cfg = compose(
        [
            "method=todycomm",
            "embedder=hashing",
            "attack=gt50",
            "train.size=8",
            "train.val_size=4",
            "train.batch_size=4",
            "train.epochs=3",
            "train.select=best",  # TodyComm's budget tests the last epoch; the other end here
            "eval.size=4",
        ]
    )
    res = run_job(cfg, "train", tmp_path / "run")
    ends = res["train"]["validation"]
    vals = [r for r in map(json.loads, (tmp_path / "run" / "train_log.jsonl").open()) if "val_acc" in r]
    assert len(vals) == 3 and ends["last"] == {
        "epoch": 3,
        "acc": vals[-1]["val_acc"],
        "adacc": vals[-1]["val_adacc"],
    }
    assert ends["best"]["acc"] == res["train"]["best_val_acc"] == max(r["val_acc"] for r in vals)
    console = Console(record=True, width=220)
    console.print(summary_table(res))
    text = " ".join(console.export_text().split())
    best, last = ends["best"], ends["last"]
    assert (
        f"validation Acc / ADAcc % (best: epoch {best['epoch']}, tested) │ {pct(best['acc'], 2)} / " in text
    )
    row = f"{pct(last['acc'], 2)} / {pct(last['adacc'], 2)}"
    assert f"validation Acc / ADAcc % (last: epoch 3) │ {row}" in text
    # train.select=last marks the last epoch as the one the test rows score
    res["train"]["tested"] = "last"
    console = Console(record=True, width=220)
    console.print(summary_table(res))
    text = " ".join(console.export_text().split())
    assert f"validation Acc / ADAcc % (last: epoch 3, tested) │ {row}" in text
    assert f"(best: epoch {best['epoch']}) │" in text
