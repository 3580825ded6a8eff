"""`tomacs paired-eval` on a real two-seed sweep: the re-evaluation is faithful and pairs the seeds."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def _sweep(tmp_path: Path, method: str, size: int, *extra: str) -> Path:
    """A finished two-seed evaluation sweep of `method` at gt50 on `size` questions."""
    sweep = tmp_path / "sweep"
    p = subprocess.run(
        [
            sys.executable, "-m", "tomacs.cli", "evaluate", "-m", f"method={method}", "attack=gt50",
            f"eval.size={size}", "seed=0,1", f"hydra.sweep.dir={sweep}", *extra,
        ],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    return sweep


def test_paired_eval_re_scores_a_sweep_under_one_eval_seed(tmp_path: Path) -> None:
    sweep = _sweep(tmp_path, "complete", 8)
    jobs = sorted(d for d in sweep.iterdir() if (d / "results.json").is_file())
    assert len(jobs) == 2
    seed0, seed1 = sorted(jobs, key=lambda d: json.loads((d / "results.json").read_text())["seed"])
    assert (seed0 / "episodes.jsonl").read_text() != (seed1 / "episodes.jsonl").read_text()

    out = tmp_path / "paired"
    cli = [sys.executable, "-m", "tomacs.cli", "paired-eval"]
    q = subprocess.run(
        [*cli, str(sweep), "--eval-seed", "0", "--out", str(out), "--jobs", "2"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert q.returncode == 0, q.stdout + q.stderr
    assert "warning" not in q.stdout  # the seed-0 job re-scored exactly as it scored
    # complete draws nothing of its own: paired, both seeds run the very same test episodes
    assert (out / seed0.name / "episodes.jsonl").read_text() == (seed0 / "episodes.jsonl").read_text()
    assert (out / seed1.name / "episodes.jsonl").read_text() == (seed0 / "episodes.jsonl").read_text()
    res1 = json.loads((out / seed1.name / "results.json").read_text())
    assert res1["seed"] == 1 and res1["eval_seed"] == 0
    rows = q.stdout.splitlines()
    row = next(line for line in rows if line.split()[:3] == ["synthetic", "gt50", "complete"])
    assert row.rstrip().endswith("± 0.0")  # the paired spread of a method without randomness is zero
    # resumable: a second call finds every job done and re-runs nothing
    stamps = [(out / d.name / "results.json").stat().st_mtime_ns for d in (seed0, seed1)]
    r = subprocess.run(
        [*cli, str(sweep), "--out", str(out)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert r.returncode == 0 and "2 of 2 jobs re-evaluated" in r.stdout
    assert [(out / d.name / "results.json").stat().st_mtime_ns for d in (seed0, seed1)] == stamps


def test_paired_eval_with_draws_pools_draws_of_the_agents(tmp_path: Path) -> None:
    """`--draws D`: each job re-scored under D draws of the simulated agents; the first is the plain paired
    evaluation, so the seed-0 job still re-scores exactly (no warning) and the tree is named for D."""
    sweep = _sweep(tmp_path, "random", 6)
    q = subprocess.run(
        [sys.executable, "-m", "tomacs.cli", "paired-eval", str(sweep), "--draws", "3"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert q.returncode == 0, q.stdout + q.stderr
    assert "warning" not in q.stdout and "2 of 2 jobs re-evaluated with eval.seed=0 x 3 draws" in q.stdout
    out = tmp_path / "sweep_paired0_draws3"
    for job in sorted(d for d in sweep.iterdir() if (d / "results.json").is_file()):
        res = json.loads((out / job.name / "results.json").read_text())
        m = res["metrics"]
        assert res["eval_seed"] == 0 and m["draws"] == 3 and [d["draw"] for d in m["by_draw"]] == [0, 1, 2]
        assert m["n_queries"] == 18
        assert m["acc"] == pytest.approx(sum(d["acc"] for d in m["by_draw"]) / 3)


def test_a_sweep_that_pooled_draws_is_re_scored_on_one_and_checked_on_its_first(tmp_path: Path) -> None:
    sweep = _sweep(tmp_path, "random", 12, "eval.draws=2")
    first = [json.loads(f.read_text())["metrics"]["by_draw"] for f in sweep.rglob("results.json")]
    assert any(d[0]["acc"] != d[1]["acc"] for d in first)  # the pooled Acc is not the first draw's
    out = tmp_path / "paired"
    q = subprocess.run(
        [sys.executable, "-m", "tomacs.cli", "paired-eval", str(sweep), "--out", str(out)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert q.returncode == 0, q.stdout + q.stderr
    assert "warning" not in q.stdout  # the seed-0 job's first draw is what one pass re-scores
    for res in (json.loads(f.read_text()) for f in out.rglob("results.json")):
        assert "by_draw" not in res["metrics"] and res["metrics"]["n_queries"] == 12


def test_the_re_evaluation_loads_the_checkpoint_the_job_tested(tmp_path: Path) -> None:
    """paired-eval, replay and the credit analysis read the weights the job's test figures came from."""
    from tomacs.job.files import tested_checkpoint

    run = tmp_path / "run"
    run.mkdir()
    assert tested_checkpoint(run) is None  # nothing trained yet
    (run / "best.pt").write_bytes(b"b")
    (run / "checkpoint.pt").write_bytes(b"c")

    def tested(results: object) -> str:
        (run / "results.json").write_text(json.dumps(results))
        ck = tested_checkpoint(run)
        assert ck is not None
        return ck.name

    assert tested({"train": {"epochs": 3}}) == "best.pt"  # a job from before `train.select`
    assert tested({"train": {"tested": "best"}}) == "best.pt"
    assert tested({"train": {"tested": "last"}}) == "checkpoint.pt"
    assert tested({"train": None}) == "best.pt"  # an unlearned method's results
    # before the job finished, its config says which end it will test
    (run / "results.json").unlink()
    (run / "config.yaml").write_text("train:\n  select: last\n")
    assert tested_checkpoint(run) == run / "checkpoint.pt"
    (run / "config.yaml").write_text("train:\n  select: best\n")
    assert tested_checkpoint(run) == run / "best.pt"
    (run / "best.pt").unlink()  # the chosen file missing: the other one, not nothing
    assert tested_checkpoint(run) == run / "checkpoint.pt"
