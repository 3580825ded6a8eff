"""Resuming into an output dir: allowed for how-to-run changes, refused for what-is-measured ones."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tomacs.config import ConfigError, compose
from tomacs.launch.run import run_job


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


@pytest.mark.parametrize(
    ("method", "old_keys"),
    [
        ("random", {"crs": {"embedder": None}}),
        ("todycomm", {"method": {"embedder": "hashing"}, "crs": {"embedder": None}}),
    ],
)
def test_a_run_dir_written_with_the_old_embedder_keys_resumes(
    tmp_path: Path, method: str, old_keys: dict
) -> None:
    """Before issue 29 config.yaml named the embedder in `method.embedder` and `crs.embedder` too."""
    import yaml

    over = [f"method={method}", "attack=lt50", "embedder=hashing", "checkpoint=untrained"][
        : 4 if method == "todycomm" else 2
    ]
    run_job(compose([*over, "eval.size=4"]), "evaluate", tmp_path)
    saved = yaml.safe_load((tmp_path / "config.yaml").read_text())
    for group, keys in old_keys.items():
        saved[group].update(keys)
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(saved))
    res = run_job(compose([*over, "eval.size=6"]), "evaluate", tmp_path)
    assert res["metrics"]["resumed_questions"] == 4 and res["test_questions"] == 6


OLD_CONFIGS = Path(__file__).resolve().parent / "data" / "old_configs"
# the overrides that give a TodyComm run from before issue 40 its defaults of then
TODYCOMM_BEFORE_ISSUE_40 = [
    "train=default",
    "method.decision_credit=episode",
    "method.updates=1",
    "method.gamma=0.9",
]


@pytest.mark.parametrize("file", sorted(OLD_CONFIGS.glob("*.yaml")), ids=lambda p: p.stem)
def test_a_config_yaml_written_before_the_option_schemas_resumes_and_skips(
    file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """config.yaml files saved before the attack, benchmark and backbone options extended schemas (each
    option wrote every key; gpt-4.1-nano wrote no require_api_base): the same overrides composed today
    resume into such a directory and a finished job is recognised; a real difference is still refused."""
    import copy
    import json

    from tomacs.config import to_container
    from tomacs.job.checkpoint import settle_embedder
    from tomacs.job.files import check_resumable, finished_results

    monkeypatch.delenv("TOMACS_DATA", raising=False)  # the fixtures were composed without it
    overrides = file.read_text().splitlines()[1].lstrip("# ").split()
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.yaml").write_text(file.read_text())
    (run / "episodes.jsonl").write_text("")
    if "method=todycomm" in overrides:
        # TodyComm's defaults changed since (issue 40: its own budget, the expected decision, 4 steps, gamma):
        # the same overrides now compose another job, refused naming the keys; given back, the run resumes
        today = compose(overrides)
        settle_embedder(today)
        plain = to_container(today)
        plain.pop("hydra", None)
        with pytest.raises(
            ConfigError, match=r"decision_credit: 'episode' -> 'auto'.*train\.name: 'default' -> 'paper'"
        ):
            check_resumable(run, plain)
        overrides = [*overrides, *TODYCOMM_BEFORE_ISSUE_40]
    cfg = compose(overrides)
    settle_embedder(cfg)  # as a job does before it checks the directory (tomacs.launch.run)
    new = to_container(cfg)
    new.pop("hydra", None)
    check_resumable(run, new)
    old = yaml.safe_load(file.read_text())
    (run / "results.json").write_text(json.dumps({"config": old, "mode": "train"}))
    assert finished_results(run, new, "train") is not None
    changed = copy.deepcopy(new)
    changed["attack"]["suffix"] = False
    with pytest.raises(ConfigError, match=r"attack\.suffix"):
        check_resumable(run, changed)


def test_a_minilm_run_of_the_unprojected_default_is_refused_naming_emb_proj(tmp_path: Path) -> None:
    """TodyComm's emb_proj default became null (32 with MiniLM, 0 with hashing; issue 28): a MiniLM run
    directory saved with the earlier 0 is another network, so it is refused with the key, and setting
    the key back resumes it; a hashing one saved with 0, or a MiniLM one with an explicit 32, is the same
    network as today's default and resumes."""
    from tomacs.config import to_container
    from tomacs.job.checkpoint import settle_embedder
    from tomacs.job.files import check_resumable

    def settled(*extra: str) -> dict:
        cfg = compose(["method=todycomm", "attack=gt50", *extra])
        settle_embedder(cfg)
        return to_container(cfg)

    def saved(config: dict) -> Path:
        run = tmp_path / f"run{len(list(tmp_path.iterdir()))}"
        run.mkdir()
        (run / "config.yaml").write_text(yaml.safe_dump(config))
        (run / "episodes.jsonl").write_text("")
        return run

    assert settled()["method"]["emb_proj"] is None and settled()["embedder"] == "minilm"
    old_minilm = saved(settled("method.emb_proj=0"))
    with pytest.raises(ConfigError, match=r"method\.emb_proj: 0 -> None"):
        check_resumable(old_minilm, settled())
    check_resumable(old_minilm, settled("method.emb_proj=0"))
    check_resumable(saved(settled("embedder=hashing", "method.emb_proj=0")), settled("embedder=hashing"))
    check_resumable(saved(settled("method.emb_proj=32")), settled())
    check_resumable(saved(settled()), settled("method.emb_proj=32"))
