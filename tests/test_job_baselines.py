"""A learned job's summary shows Complete and the untrained policy beside it (issue 41, newcomer 9).

On the simulator both are run on the job's own test episodes: a test checks each against the same
baseline run by hand with `tomacs evaluate`. On a paid backbone nothing is run: a matching finished run
of the outputs tree is shown, else the command that makes it. Sweeps run none.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tomacs.config import compose, to_container
from tomacs.job.checkpoint import settle_embedder
from tomacs.launch.baselines import baseline_command, baseline_config, find_baseline, run_baselines
from tomacs.report.collect import Job

pytestmark = pytest.mark.slow

SETTING = ["attack=gt50", "embedder=hashing", "eval.size=6", "seed=3"]
TRAIN = [
    "method=todycomm",
    *SETTING,
    "train.size=8",
    "train.val_size=4",
    "train.batch_size=4",
    "train.epochs=1",
]


def _metrics(path: Path) -> dict[str, Any]:
    return json.loads((path / "results.json").read_text())["metrics"]


def test_a_single_learned_job_runs_both_baselines_on_its_own_episodes(tomacs_here, tmp_path: Path) -> None:
    run = tmp_path / "outputs" / "flagship"
    res = tomacs_here("train", *TRAIN, f"hydra.run.dir={run}")
    assert res.returncode == 0, res.stderr
    base = json.loads((run / "results.json").read_text())["baselines"]
    assert base["complete"]["source"] == base["untrained"]["source"] == "ran"
    assert "Complete Acc / ADAcc % (same episodes)" in res.stdout
    assert "untrained policy Acc / ADAcc % (same episodes)" in res.stdout
    assert not (run / "baselines").exists() and sorted(p.name for p in run.parent.iterdir()) == ["flagship"]
    # the same baselines, run by hand, give the same numbers
    complete, untrained = tmp_path / "complete", tmp_path / "untrained"
    assert tomacs_here("evaluate", "method=complete", *SETTING, f"hydra.run.dir={complete}").returncode == 0
    ran = tomacs_here(
        "evaluate", "method=todycomm", "checkpoint=untrained", *SETTING, f"hydra.run.dir={untrained}"
    )
    assert ran.returncode == 0, ran.stderr
    for name, path in (("complete", complete), ("untrained", untrained)):
        m = _metrics(path)
        assert base[name]["acc"] == m["acc"] and base[name]["adacc"] == m["adacc"], name
        assert base[name]["llm_calls"] == m["llm_calls"], name


def test_a_finished_baseline_in_the_outputs_tree_is_used_not_rerun(tomacs_here, tmp_path: Path) -> None:
    out = tmp_path / "outputs"
    assert tomacs_here("evaluate", "method=complete", *SETTING, f"hydra.run.dir={out / 'c'}").returncode == 0
    res = tomacs_here("train", *TRAIN, f"hydra.run.dir={out / 'tc'}")
    base = json.loads((out / "tc" / "results.json").read_text())["baselines"]
    assert base["complete"]["source"] == "found" and base["complete"]["run_dir"] == str((out / "c").resolve())
    assert base["complete"]["acc"] == _metrics(out / "c")["acc"]
    assert "Complete Acc / ADAcc % (found in outputs)" in res.stdout


def _job(path: str, overrides: list[str]) -> Job:
    cfg = compose(overrides)
    settle_embedder(cfg)
    resolved = to_container(cfg)
    return Job(
        Path(path), {"method": resolved["method"]["name"], "metrics": {"acc": 0.5}, "config": resolved}
    )


def _resolved(overrides: list[str]) -> dict[str, Any]:
    cfg = compose(overrides)
    settle_embedder(cfg)
    return to_container(cfg)


def test_only_the_same_setting_and_the_baselines_own_method_settings_match() -> None:
    job = _resolved(["method=todycomm", *SETTING, "train=paper"])
    same = _job("/x/same", ["method=complete", *SETTING, "train=default", "mode=evaluate"])
    other_attack = _job("/x/attack", ["method=complete", *SETTING, "attack=eq50"])
    other_seed = _job("/x/seed", ["method=complete", *SETTING, "seed=4"])
    temporal = _job("/x/temporal", ["method=complete", *SETTING, "method.temporal=full"])
    trained = _job("/x/trained", ["method=todycomm", *SETTING])
    untrained = _job("/x/untrained", ["method=todycomm", *SETTING, "checkpoint=untrained", "mode=evaluate"])
    other_method = _job(
        "/x/other", ["method=todycomm", *SETTING, "checkpoint=untrained", "method.epsilon=0.2"]
    )
    jobs = [other_attack, other_seed, temporal, trained, other_method, untrained, same]
    assert find_baseline(jobs, job, "complete", exclude=Path("/x/me"))["run_dir"] == "/x/same"
    assert find_baseline(jobs, job, "untrained", exclude=Path("/x/me"))["run_dir"] == "/x/untrained"
    assert find_baseline([other_attack, other_seed, temporal], job, "complete", exclude=Path("/x/me")) is None
    assert find_baseline([trained, other_method], job, "untrained", exclude=Path("/x/me")) is None
    with pytest.raises(ValueError, match="complete, untrained"):
        baseline_config(job, "star")


def test_a_paid_backbone_runs_nothing_and_names_the_commands(tmp_path: Path) -> None:
    job = _resolved(["method=todycomm", *SETTING])

    def refuse(*a: Any, **k: Any) -> dict[str, Any]:
        raise AssertionError("a paid job must not run its baselines")

    got = run_baselines(job, tmp_path / "run", simulated=False, run=refuse)
    assert {b["source"] for b in got.values()} == {"not run"}
    cmd = got["complete"]["command"]
    assert cmd.startswith("tomacs evaluate method=complete ") and "attack=gt50" in cmd and "seed=3" in cmd
    assert baseline_command(job, "untrained").startswith(
        "tomacs evaluate method=todycomm checkpoint=untrained "
    )


def test_a_paid_baseline_made_under_other_caps_is_found() -> None:
    """Spend caps, rate limits, the cache and retries say how a run was made, not what it measured."""
    paid = ["backbone=gpt-4.1-nano", *SETTING]
    job = _resolved(["method=todycomm", *paid, "backbone.max_usd=20"])
    capped = _job("/x/capped", ["method=complete", *paid, "backbone.sweep_max_usd=5", "backbone.rpm=500"])
    other_model = _job("/x/model", ["method=complete", *paid, "backbone.model=gpt-4o-mini"])
    found = find_baseline([other_model, capped], job, "complete", exclude=Path("/x/me"))
    assert found is not None and found["run_dir"] == "/x/capped"
    assert find_baseline([other_model], job, "complete", exclude=Path("/x/me")) is None


def test_a_sweep_job_runs_no_baselines(tmp_path: Path) -> None:
    from tomacs.launch.run import run_job

    cfg = compose(["mode=train", *TRAIN])
    res = run_job(cfg, "train", tmp_path / "job", job={"group": "sweep", "name": "x", "overrides": "x"})
    assert "baselines" not in res
