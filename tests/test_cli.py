"""The CLI end to end on the simulator, with tiny sizes.

`tomacs` runs the console module in a fresh interpreter (the quickstart, errors, listings, a multirun);
tests of what a job does rather than of the process (same seed same numbers, paired evaluation seeds,
budgets, resuming) run it in this process through the `tomacs_here` fixture (tests/conftest.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow


def tomacs(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tomacs.cli", *args], capture_output=True, text=True, timeout=600, cwd=cwd
    )


def test_quickstart_writes_results(tmp_path: Path) -> None:
    out = tmp_path / "run"
    p = tomacs("train", "method=complete", "attack=gt50", "eval.size=12", f"hydra.run.dir={out}")
    assert p.returncode == 0, p.stderr
    res = json.loads((out / "results.json").read_text())
    assert res["backbone"] == "sim" and res["method"] == "complete" and res["attack"] == "gt50"
    assert "device" not in res  # nothing of a static method ran on a device
    m = res["metrics"]
    for key in (
        "acc",
        "token",
        "token_prompt",
        "token_completion",
        "adacc",
        "adacc_balanced",
        "adacc_baseline",
    ):
        assert key in m
    assert 0.0 <= m["acc"] <= 1.0 and m["token"] > 50
    # complete graph: every agent votes, so ADAcc equals the all-reliable baseline = 1 - 4/6
    assert m["adacc"] == pytest.approx(1 - 4 / 6)
    lines = (out / "episodes.jsonl").read_text().splitlines()
    assert len(lines) == 12
    ep = json.loads(lines[0])
    assert len(ep["plan"]["adversaries"]) == 4 and ep["plan"]["target"] != ep["question"]["answer"]
    assert (out / "config.yaml").is_file()
    assert "Acc" in p.stdout + p.stderr


def test_same_seed_same_numbers_and_resume(tmp_path: Path, tomacs_here: Callable[..., Any]) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    args = ["evaluate", "method=random", "attack=eq50", "eval.size=10", "eval.batch_size=4"]
    assert tomacs_here(*args, f"hydra.run.dir={a}").returncode == 0
    assert tomacs_here(*args, f"hydra.run.dir={b}").returncode == 0
    ea, eb = (a / "episodes.jsonl").read_text(), (b / "episodes.jsonl").read_text()
    assert ea == eb
    # a killed run: keep 4 finished questions and a torn line, rerun in the same dir
    lines = ea.splitlines()
    (b / "episodes.jsonl").write_text("\n".join(lines[:4]) + "\n" + lines[4][:50])
    (b / "results.json").unlink()
    p = tomacs_here(*args, f"hydra.run.dir={b}")
    assert p.returncode == 0, p.stderr
    rb = json.loads((b / "results.json").read_text())
    ra = json.loads((a / "results.json").read_text())
    assert rb["metrics"]["resumed_questions"] == 4
    assert rb["metrics"]["acc"] == ra["metrics"]["acc"] and rb["metrics"]["token"] == ra["metrics"]["token"]


def test_eval_seed_pairs_the_evaluation_across_training_seeds(
    tmp_path: Path, tomacs_here: Callable[..., Any]
) -> None:
    """eval.seed fixes the test episodes (adversaries, onsets, targets, sim replies, ties) whatever the
    run's seed; without it the seed re-draws them. complete has no randomness of its own, so a paired
    seed-1 run must equal a plain run under the eval seed, byte for byte."""
    args = ["evaluate", "method=complete", "attack=gt50", "eval.size=10"]
    runs = {
        "s0": ("seed=0",),
        "s1": ("seed=1",),
        "s1_paired": ("seed=1", "eval.seed=0"),
        "s2_paired": ("seed=2", "eval.seed=0"),
    }
    for name, extra in runs.items():
        p = tomacs_here(*args, *extra, f"hydra.run.dir={tmp_path / name}")
        assert p.returncode == 0, p.stderr
    ep = {name: (tmp_path / name / "episodes.jsonl").read_text() for name in runs}
    assert ep["s0"] != ep["s1"]  # unpaired: a seed re-draws the evaluation
    assert ep["s1_paired"] == ep["s0"] and ep["s2_paired"] == ep["s0"]
    res = {name: json.loads((tmp_path / name / "results.json").read_text()) for name in runs}
    assert [res[n]["eval_seed"] for n in runs] == [0, 1, 0, 0]
    assert [res[n]["seed"] for n in runs] == [0, 1, 1, 2]


def test_bad_override_is_one_clear_line() -> None:
    p = tomacs("train", "method=compleat")
    assert p.returncode == 2
    assert "unknown method 'compleat'" in p.stderr and "complete" in p.stderr
    p = tomacs("train", "agnets=3")
    assert p.returncode == 2 and "unknown config key 'agnets'" in p.stderr


def test_cuda_without_gpu_fails_clearly(tmp_path: Path) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is visible")
    p = tomacs("evaluate", "device=cuda", "eval.size=2", f"hydra.run.dir={tmp_path}")
    assert p.returncode == 2 and "no CUDA GPU" in p.stderr


def test_list_and_show_config() -> None:
    p = tomacs("list")
    assert p.returncode == 0
    for word in ("benchmark", "method", "attack", "budget", "backbone", "device", "logger", "gt50"):
        assert word in p.stdout
    p = tomacs("show-config", "method=star", "agents=10")
    assert p.returncode == 0 and "agents: 10" in p.stdout and "name: star" in p.stdout


def test_multirun(tmp_path: Path) -> None:
    p = tomacs("train", "-m", "method=complete,none", "eval.size=3", f"hydra.sweep.dir={tmp_path}")
    assert p.returncode == 0, p.stderr
    results = sorted(tmp_path.glob("*/results.json"))
    assert len(results) == 2
    assert {json.loads(r.read_text())["method"] for r in results} == {"complete", "none"}


@pytest.mark.parametrize("agents,budget", [(10, "b1"), (20, "b2")])
def test_todycomm_scales_with_budgets(
    tmp_path: Path, agents: int, budget: str, tomacs_here: Callable[..., Any]
) -> None:
    """Tables 3-4 settings: any N with an attack rate, and the node-wise budgets hold in every round."""
    out = tmp_path / "run"
    p = tomacs_here(
        "train",
        "method=todycomm",
        "embedder=hashing",
        f"agents={agents}",
        f"budget={budget}",
        "attack=gt50",
        "train.size=16",
        "train.val_size=0",
        "train.epochs=1",
        "train.batch_size=8",
        "eval.size=6",
        f"hydra.run.dir={out}",
    )
    assert p.returncode == 0, p.stderr
    res = json.loads((out / "results.json").read_text())
    assert res["agents"] == agents and res["n_adversaries"] == round(agents * 2 / 3)
    import torch

    # where `auto` ran, not the word `auto`
    assert res["config"]["device"]["name"] == "auto"
    assert res["device"] == ("cuda" if torch.cuda.is_available() else "cpu")
    assert res["train"]["iterations"] == 2
    limit = int(budget[1])
    episodes = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert len(episodes) == 6
    for e in episodes:
        assert len(e["plan"]["adversaries"]) == res["n_adversaries"]
        for g in e["graphs"][1:]:
            ins = [dst for _, dst in g["edges"]]
            outs = [src for src, _ in g["edges"]]
            assert max((ins.count(v) for v in set(ins)), default=0) <= limit
            assert max((outs.count(v) for v in set(outs)), default=0) <= limit
            assert set(ins + outs) <= set(g["nodes"])


def test_training_resumes_from_its_checkpoint(tmp_path: Path, tomacs_here: Callable[..., Any]) -> None:
    out = tmp_path / "run"
    common = [
        "method=todycomm",
        "embedder=hashing",
        "attack=gt50",
        "train.size=16",
        "train.val_size=8",
        "train.batch_size=8",
        "eval.size=6",
        f"hydra.run.dir={out}",
    ]
    assert tomacs_here("train", *common, "train.epochs=1").returncode == 0
    first = json.loads((out / "results.json").read_text())
    assert (
        first["train"]["iterations"] == 2
        and (out / "checkpoint.pt").is_file()
        and (out / "best.pt").is_file()
    )
    p = tomacs_here("train", *common, "train.epochs=2")
    assert p.returncode == 0, p.stderr
    second = json.loads((out / "results.json").read_text())
    assert second["train"]["resumed_from_epoch"] == 1 and second["train"]["iterations"] == 4
    log = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    iters = [r["iteration"] for r in log if "loss" in r]
    assert iters == [0, 1, 2, 3]  # no iteration repeated or lost across the restart
    assert all({"train_acc", "train_adacc", "loss"} <= set(r) for r in log if "loss" in r)
    # the evaluation was redone with the further-trained policy, not read back from the first run
    assert second["metrics"]["resumed_questions"] == 0
    # a finished job rerun with the same config is skipped: nothing trained or evaluated again
    before = (out / "results.json").read_bytes()
    third = tomacs_here("train", *common, "train.epochs=2")
    assert third.returncode == 0 and "already finished" in third.stderr
    assert (out / "results.json").read_bytes() == before
