"""Issue 41: what a newcomer met. In process (typer's CliRunner, run_job) on tiny simulator jobs.

1. a resumed job's ETA sets what remains against what remains;
2. `tomacs plan` charges no latency on the simulator, accepts --latency 0 and times MiniLM by the
   rate earlier jobs measured (saying so);
3. the plan names replies in the response cache and repeats within the job apart;
4. a refused paid run leaves no directory and no resume line;
5. the hub hint names TOMACS_ONLINE=1;
6. messages name no file beside the repository;
7. results go to stdout, progress to stderr;
8. results.json's wall_s covers every process of a resumed job; the training log says what it judges.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tomacs.cli import app
from tomacs.config import compose
from tomacs.job.progress import Progress
from tomacs.launch.run import run_job

pytestmark = pytest.mark.slow

TRAIN = [
    "method=todycomm",
    "embedder=hashing",
    "attack=gt50",
    "train.size=16",
    "train.val_size=8",
    "train.batch_size=8",
    "eval.size=6",
]


def lines() -> tuple[Progress, io.StringIO]:
    buf = io.StringIO()
    return Progress(style="lines", stream=buf), buf


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    """The CLI in this process: what it sets for Hydra (sys.argv, the typed command) is put back after."""
    from tomacs.job.rundir import ARGV_ENV

    monkeypatch.setattr(sys, "argv", list(sys.argv))
    monkeypatch.setenv(ARGV_ENV, "")
    return CliRunner()


# -- 1 and 8: a resumed job --------------------------------------------------------------------------


def test_a_resumed_trainings_eta_counts_only_what_remains_and_its_log_names_the_metric(
    tmp_path: Path,
) -> None:
    run = tmp_path / "run"
    prog, buf = lines()
    run_job(compose([*TRAIN, "train.epochs=1"]), "train", run, prog)
    first = buf.getvalue()
    # the validation line says what picks best.pt
    assert "new best val Acc (ADAcc breaks ties)" in first, first
    prog, buf = lines()
    res = run_job(compose([*TRAIN, "train.epochs=2"]), "train", run, prog)
    assert res["train"]["resumed_from_epoch"] == 1
    # epoch 1 was the earlier process's: what remains is one epoch (16 + 8 questions) and the test (6)
    assert prog.job_total == 16 + 8 + 6 == prog.job_done, (prog.job_total, prog.job_done)
    # "<=" where early stopping may end it sooner (train.patience); TodyComm's own budget has none
    assert buf.getvalue().rstrip().endswith("job ETA 0:00")


def test_a_resumed_evaluations_eta_counts_only_what_remains(tmp_path: Path) -> None:
    run = tmp_path / "run"
    over = ["method=random", "attack=gt50", "eval.size=6", "eval.batch_size=2"]
    run_job(compose(over), "evaluate", run)
    episodes = run / "episodes.jsonl"
    episodes.write_text("".join(episodes.read_text().splitlines(keepends=True)[:4]))
    (run / "results.json").unlink()
    prog, _ = lines()
    res = run_job(compose(over), "evaluate", run, prog)
    assert res["metrics"]["resumed_questions"] == 4
    assert prog.job_total == 2 == prog.job_done


def test_wall_s_is_the_whole_job_over_every_process(tmp_path: Path) -> None:
    run = tmp_path / "run"
    over = ["method=random", "attack=gt50", "eval.size=6", "eval.batch_size=2"]
    first = run_job(compose(over), "evaluate", run)
    assert first["wall_s"] == first["wall_s_this_process"]
    wall = json.loads((run / "wall.json").read_text())["processes"]
    assert len(wall) == 1 and wall[0]["wall_s"] >= first["wall_s_this_process"]
    # a process killed after 1000 s, then a resume of its last questions
    wall.append({"pid": 1, "host": "elsewhere", "started": "then", "wall_s": 1000.0})
    (run / "wall.json").write_text(json.dumps({"processes": wall}))
    episodes = run / "episodes.jsonl"
    episodes.write_text("".join(episodes.read_text().splitlines(keepends=True)[:4]))
    (run / "results.json").unlink()
    again = run_job(compose(over), "evaluate", run)
    assert again["wall_s_this_process"] < 1000
    assert again["wall_s"] == pytest.approx(
        wall[0]["wall_s"] + 1000.0 + again["wall_s_this_process"], abs=0.01
    )
    assert len(json.loads((run / "wall.json").read_text())["processes"]) == 3


def test_the_detectors_log_names_what_picks_its_best_epoch(tmp_path: Path) -> None:
    over = [
        "method=gsafeguard",
        "embedder=hashing",
        "attack=gt50",
        "train.size=4",
        "train.val_size=2",
        "eval.size=2",
        "method.samples=2",
        "method.densities=[0.5]",
        "method.counts=[1,2]",
        "method.epochs=1",
        "method.hidden_size=16",
        "method.val_fraction=0.5",
    ]
    prog, buf = lines()
    run_job(compose(over), "train", tmp_path, prog)
    assert "| new best held-out ADAcc" in buf.getvalue(), buf.getvalue()


# -- 2 and 3: the plan -------------------------------------------------------------------------------


def test_plan_on_the_simulator_charges_no_latency_and_accepts_latency_0(cli: CliRunner) -> None:
    from tomacs.launch.plan import plan_job

    p = plan_job(compose(["method=complete", "attack=gt50", "eval.size=4"]), "evaluate")
    s = p.summary(1.0)
    assert s["calls_total"] > 0 and s["wall_s"] == 0.0 and s["latency_s"] == 0.0
    res = cli.invoke(
        app, ["plan", "--json", "--latency", "0", "--evaluate", "method=complete", "eval.size=2"]
    )
    assert res.exit_code == 0, res.output
    (job,) = json.loads(res.stdout)["jobs"]
    assert job["wall_s"] == 0.0
    res = cli.invoke(app, ["plan", "--latency", "-1", "method=complete"])
    assert res.exit_code == 2 and "--latency must be >= 0" in res.output


def test_plan_table_names_the_response_cache_and_repeats_apart(cli: CliRunner) -> None:
    res = cli.invoke(app, ["plan", "--evaluate", "method=complete", "eval.size=2"])
    assert res.exit_code == 0, res.output
    head = " ".join(res.stdout.split())
    assert "in cache" in head and "repeats" in head and "no latency" in head, res.stdout
    assert "latency 1 s assumed" not in head  # nothing waits on the simulator


def _fake_minilm(cfg: Any, encoded: int, seconds: float) -> list[dict[str, Any]]:
    from tomacs.launch.plan import minilm_settings

    precision, backend = minilm_settings(cfg, "cpu")
    info = {"embedder": "minilm", "device": "cpu", "encoded": encoded, "encode_s": seconds}
    return [{**info, "precision": precision, "backend": backend}]


def test_jobs_record_minilms_rate_and_the_plan_uses_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tomacs.launch.run as run_mod
    from tomacs.launch.embed_rate import RATE_FILE
    from tomacs.launch.plan import plan_job

    cache = f"embed.cache={tmp_path / 'embeddings.sqlite'}"
    for i, (n, s) in enumerate([(400, 20.0), (600, 20.0)]):  # two jobs: 1,000 texts in 40 s
        cfg = compose(["method=complete", "attack=gt50", "eval.size=2", cache, f"seed={i}"])
        monkeypatch.setattr(run_mod, "embedding_summary", lambda cfg=cfg, n=n, s=s: _fake_minilm(cfg, n, s))
        run_job(cfg, "evaluate", tmp_path / f"run{i}")
    jobs = json.loads((tmp_path / RATE_FILE).read_text())["jobs"]
    assert [j["encoded"] for j in jobs] == [400, 600]
    monkeypatch.setattr("tomacs.launch.plan.minilm_seconds_per_text", lambda *a: pytest.fail("sampled"))
    plan = plan_job(compose([*TRAIN, "embedder=minilm", "train.epochs=1", cache]), "train", sample=8)
    assert plan.embed_kind == "minilm" and plan.embed_texts > 0
    assert plan.embed_s == pytest.approx(plan.embed_texts / 25.0)
    assert "MiniLM 25 texts/s on cpu" in plan.embed_basis and "measured by 2 earlier jobs" in plan.embed_basis
    assert plan.embed_basis in plan.notes


def test_without_a_measured_rate_the_plan_says_it_sampled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tomacs.launch.plan import plan_job

    monkeypatch.setattr("tomacs.launch.plan.minilm_seconds_per_text", lambda *a: (0.05, 300))
    cache = f"embed.cache={tmp_path / 'embeddings.sqlite'}"
    plan = plan_job(compose([*TRAIN, "embedder=minilm", "train.epochs=1", cache]), "train", sample=8)
    assert "MiniLM 20 texts/s on cpu" in plan.embed_basis and "sampled now over 300 texts" in plan.embed_basis


# -- 4: a refused paid run ---------------------------------------------------------------------------


def test_a_refused_paid_run_leaves_no_directory_and_no_resume_line(
    cli: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    job = [
        "backbone=gpt-4.1-nano",
        f"backbone.cache.path={tmp_path / 'c.sqlite'}",
        "method=complete",
        "eval.size=2",
    ]
    run = tmp_path / "run"
    res = cli.invoke(app, ["evaluate", *job, f"hydra.run.dir={run}"])
    assert res.exit_code == 3, res.output
    assert "OPENAI_API_KEY is not set" in res.stderr and "resume with" not in res.output, res.output
    assert not run.exists(), sorted(p.name for p in run.rglob("*"))
    # a directory that was there before the command (even empty) is not this command's to remove
    mine = tmp_path / "mine"
    mine.mkdir()
    res = cli.invoke(app, ["evaluate", *job, f"hydra.run.dir={mine}"])
    assert res.exit_code == 3 and mine.is_dir()


def test_a_refused_paid_sweep_leaves_no_directory_and_no_resume_line(
    cli: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's capped sweep without a key: every job refused before any work, so nothing to resume;
    a sweep directory holding a job's work keeps it and its resume line."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)  # the response cache's default path (a path override would name the job dirs)
    sweep = tmp_path / "sweep"
    args = [
        "evaluate",
        "-m",
        "method=complete,random",
        "backbone=gpt-4.1-nano",
        "backbone.sweep_max_usd=20",
        "eval.size=2",
        f"hydra.sweep.dir={sweep}",
    ]
    res = cli.invoke(app, args)
    assert res.exit_code == 3, res.output
    assert "resume with" not in res.output and "no job of the sweep did any work" in res.stderr, res.output
    assert not sweep.exists(), sorted(p.name for p in sweep.rglob("*"))
    (sweep / "done_job").mkdir(parents=True)  # an earlier process's job
    (sweep / "done_job" / "results.json").write_text("{}")
    res = cli.invoke(app, args)
    assert res.exit_code == 3 and "resume with" in res.stderr and (sweep / "done_job").is_dir()


# -- 5 and 6: hints a user can act on ----------------------------------------------------------------


def test_the_hub_hint_names_tomacs_online(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from tomacs.benchmarks.base import BenchmarkFileMissing, get_benchmark

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("TOMACS_ONLINE", raising=False)
    with pytest.raises(BenchmarkFileMissing) as e:
        get_benchmark("mmlu", source="hub").load("test", 3, 0)
    assert "TOMACS_ONLINE=1" in str(e.value) and "unset it" not in str(e.value), str(e.value)
    monkeypatch.setenv("TOMACS_ONLINE", "1")  # then it is the user's own HF_HUB_OFFLINE
    with pytest.raises(BenchmarkFileMissing) as e:
        get_benchmark("mmlu", source="hub").load("test", 3, 0)
    assert "HF_HUB_OFFLINE is set in your environment; unset it" in str(e.value)


def test_a_missing_benchmark_names_the_data_readme_by_its_real_path(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from tomacs.benchmarks.base import BenchmarkFileMissing, get_benchmark

    (tmp_path / "README.md").write_text("# my data\n")
    monkeypatch.setenv("TOMACS_DATA", str(tmp_path))
    with pytest.raises(BenchmarkFileMissing) as e:
        get_benchmark("mmlu").load("test", 3, 0)
    msg = str(e.value)
    assert f"see {(tmp_path / 'README.md').resolve()}" in msg and "shared/" not in msg, msg
    (tmp_path / "README.md").unlink()
    with pytest.raises(BenchmarkFileMissing) as e:
        get_benchmark("mmlu").load("test", 3, 0)
    assert "README" not in str(e.value) and "shared/" not in str(e.value)


def test_the_report_cites_the_paper_by_name(cli: CliRunner, tmp_path: Path) -> None:
    run_job(compose(["method=complete", "attack=gt50", "eval.size=2"]), "evaluate", tmp_path / "run")
    res = cli.invoke(app, ["report", str(tmp_path)])
    assert res.exit_code == 0, res.output
    md = next(tmp_path.rglob("report.md")).read_text()
    assert "shared/" not in md and "TodyComm: Task-Oriented Dynamic Communication" in md


# -- 7: results on stdout ----------------------------------------------------------------------------


def test_results_go_to_stdout_and_progress_to_stderr(cli: CliRunner, tmp_path: Path) -> None:
    run = tmp_path / "run"
    res = cli.invoke(
        app, ["evaluate", "method=complete", "attack=gt50", "eval.size=2", f"hydra.run.dir={run}"]
    )
    assert res.exit_code == 0, res.output
    assert f"results: {run / 'results.json'}" in res.stdout and "Acc %" in res.stdout
    assert "evaluate |" in res.stderr and "results:" not in res.stderr and "evaluate |" not in res.stdout
    sweep = tmp_path / "sweep"
    over = [
        "evaluate",
        "-m",
        "method=complete",
        "attack=gt50",
        "eval.size=2",
        "seed=0,1",
        f"hydra.sweep.dir={sweep}",
    ]
    res = cli.invoke(app, over)
    assert res.exit_code == 0, res.output
    assert "2 finished jobs" in res.stdout and f"report: tomacs report {sweep}" in " ".join(
        res.stdout.split()
    )
    assert "[job 0]" in res.stderr and "finished jobs" not in res.stderr
    assert "Launching 2 jobs" in res.stderr and "Launching" not in res.stdout  # Hydra's log: stderr
