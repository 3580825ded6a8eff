"""Resuming into an output dir: allowed for how-to-run changes, refused for what-is-measured ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from tomacs.config import ConfigError, compose
from tomacs.run import run_job


def job(out: Path, *extra: str) -> dict:
    return run_job(compose(["method=random", "attack=lt50", "eval.size=4", *extra]), "evaluate", out)


def test_changed_experiment_is_refused_with_the_differing_key(tmp_path: Path) -> None:
    job(tmp_path)
    with pytest.raises(ConfigError, match=r"attack\.name: 'lt50' -> 'gt50'.*new hydra\.run\.dir"):
        run_job(compose(["method=random", "attack=gt50", "eval.size=4"]), "evaluate", tmp_path)
    with pytest.raises(ConfigError, match="seed: 0 -> 1"):
        job(tmp_path, "seed=1")


def test_run_settings_may_change_and_more_questions_extend_the_run(tmp_path: Path) -> None:
    job(tmp_path)
    res = run_job(
        compose(["method=random", "attack=lt50", "eval.size=6", "eval.batch_size=1", "concurrency=2"]),
        "evaluate",
        tmp_path,
    )
    assert res["metrics"]["resumed_questions"] == 4 and res["test_questions"] == 6
