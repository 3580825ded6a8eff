"""`eval.draws`: one evaluation pooled over several draws of the simulated agents.

On 153 test questions one draw of the agents moves a fixed policy's Acc by 3-5 points at gt50
(docs/experiments/2026-11-29-todycomm-minilm-table-five-benchmarks.md), more than the seed spread issue 40
asks for. Pooling K draws cuts that noise; it must be exactly the K single-draw evaluations
(`backbone.draw=base+k`), resume pass by pass, and be refused where there is no fresh draw to take.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tomacs.config import ConfigError, compose
from tomacs.job.files import EpisodeLog, with_added_keys
from tomacs.launch.run import run_job
from tomacs.report.settings import settings_of, split_keys

BASE = ["method=complete", "attack=gt50", "embedder=hashing", "eval.size=12"]


def _job(out: Path, *extra: str) -> dict:
    return run_job(compose([*BASE, *extra]), "evaluate", out)


def test_pooled_draws_are_the_single_draw_evaluations(tmp_path: Path) -> None:
    pooled = _job(tmp_path / "pooled", "eval.draws=3")["metrics"]
    single = [_job(tmp_path / f"d{k}", f"backbone.draw={k}")["metrics"] for k in range(3)]
    assert pooled["draws"] == 3 and pooled["n_queries"] == 36
    assert [d["draw"] for d in pooled["by_draw"]] == [0, 1, 2]
    for d, s in zip(pooled["by_draw"], single, strict=True):
        assert (d["acc"], d["adacc"], d["adacc_baseline"]) == (s["acc"], s["adacc"], s["adacc_baseline"])
    accs = [s["acc"] for s in single]
    assert len(set(accs)) > 1  # the draws differ, or pooling them would show nothing
    assert pooled["acc"] == pytest.approx(sum(accs) / 3)
    assert pooled["acc_draw_std"] == pytest.approx((sum((a - sum(accs) / 3) ** 2 for a in accs) / 2) ** 0.5)
    # every reader of a run reads episodes.jsonl: the run's own draw, the same episodes as a plain run
    own = [json.loads(x)["rounds"] for x in (tmp_path / "pooled" / "episodes.jsonl").read_text().splitlines()]
    plain = [json.loads(x)["rounds"] for x in (tmp_path / "d0" / "episodes.jsonl").read_text().splitlines()]
    assert own == plain
    assert sorted(p.name for p in (tmp_path / "pooled").glob("episodes*.jsonl")) == [
        "episodes.draw1.jsonl",
        "episodes.draw2.jsonl",
        "episodes.jsonl",
    ]


def test_draws_start_from_backbone_draw(tmp_path: Path) -> None:
    pooled = _job(tmp_path / "p", "eval.draws=2", "backbone.draw=5")["metrics"]
    six = _job(tmp_path / "s", "backbone.draw=6")["metrics"]
    assert [d["draw"] for d in pooled["by_draw"]] == [5, 6]
    assert pooled["by_draw"][1]["acc"] == six["acc"]


def test_one_draw_writes_what_it_always_wrote(tmp_path: Path) -> None:
    m = _job(tmp_path, "eval.draws=1")["metrics"]
    assert not {"draws", "by_draw", "acc_draw_std"} & set(m)
    assert [p.name for p in tmp_path.glob("episodes*.jsonl")] == ["episodes.jsonl"]


def test_more_draws_extend_a_finished_run_and_a_killed_pass_resumes(tmp_path: Path) -> None:
    fresh = _job(tmp_path / "fresh", "eval.draws=3")["metrics"]
    run = tmp_path / "run"
    _job(run)
    more = _job(run, "eval.draws=2")["metrics"]
    assert more["resumed_questions"] == 12  # draw 0 from the first run
    assert more["by_draw"] == fresh["by_draw"][:2]
    # killed inside the third pass: 5 of its 12 questions on disk, no results
    _job(run, "eval.draws=3")
    log = run / "episodes.draw2.jsonl"
    log.write_text("".join(log.read_text().splitlines(keepends=True)[:5]))
    (run / "results.json").unlink()
    again = _job(run, "eval.draws=3")["metrics"]
    assert again["resumed_questions"] == 12 + 12 + 5
    assert again["by_draw"] == fresh["by_draw"]
    assert again["acc"] == fresh["acc"] and again["adacc"] == fresh["adacc"]


def test_discard_all_drops_every_pass(tmp_path: Path) -> None:
    _job(tmp_path, "eval.draws=3")
    EpisodeLog.discard_all(tmp_path)
    assert not list(tmp_path.glob("episodes*.jsonl"))


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        (["eval.draws=0"], r"eval\.draws must be >= 1 \(got 0\)"),
        (["eval.draws=2", "backbone=gpt-4.1-nano"], r"only backbone=sim has .*set eval\.draws=1"),
        (["eval.draws=2", "method=crs"], r"cannot pool credibility's query stream.*backbone\.draw=K"),
        (["eval.draws=2", "decision=crs"], r"cannot pool credibility's query stream"),
    ],
)
def test_draws_without_a_fresh_draw_are_refused_at_compose(extra: list[str], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        compose([*BASE, *extra])


def test_a_job_from_before_the_key_is_no_other_setting_in_a_report() -> None:
    new = with_added_keys(json.loads(json.dumps(_config())))
    old = _config()
    del old["eval"]["draws"], old["backbone"]["draw"]
    settings = [settings_of(c, {"mode": "evaluate"}) for c in (old, new)]
    assert split_keys([settings]) == []
    four = _config()
    four["eval"]["draws"] = 4
    assert split_keys([[*settings, settings_of(four, {"mode": "evaluate"})]]) == ["eval.draws"]


def _config() -> dict:
    from omegaconf import OmegaConf

    c = OmegaConf.to_container(compose(BASE), resolve=True)
    assert isinstance(c, dict)
    return c


def test_the_view_and_the_summary_say_the_metrics_pool_draws(tmp_path: Path) -> None:
    from tomacs.launch.hydra_app import summary_table
    from tomacs.report.collect import find_jobs
    from tomacs.view.runs import settings

    res = _job(tmp_path / "p", "eval.draws=2")
    _job(tmp_path / "one")
    rows = {str(j.path.name): dict(settings(j)) for j in find_jobs(tmp_path)}
    assert rows["p"]["eval draws (pooled)"] == "2" and "eval draws (pooled)" not in rows["one"]
    table = summary_table(res)
    labels = [str(c) for c in table.columns[0].cells]
    values = [str(c) for c in table.columns[1].cells]
    row = labels.index("draws of the agents (pooled above): 2")
    accs = " ".join(f"{100 * d['acc']:.1f}" for d in res["metrics"]["by_draw"])
    assert values[row].startswith(f"Acc % {accs}; std ")
