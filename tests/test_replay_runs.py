"""`tomacs replay` over a sweep: which directories count as runs, and the mean and range over runs, against
values computed by hand (the command end to end is in tests/test_replay.py, beside its trained run)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tomacs.analysis.replay_runs import over_runs, run_line, trained_runs


def _run(path: Path, seed: int | None = 0, finished: bool = True) -> Path:
    path.mkdir(parents=True)
    (path / "config.yaml").write_text("method: {name: todycomm}\n")
    if finished:
        (path / "results.json").write_text(json.dumps({} if seed is None else {"seed": seed}))
    return path


def test_trained_runs_finds_finished_runs_in_natural_order_and_through_links(tmp_path: Path) -> None:
    one = _run(tmp_path / "one")
    assert trained_runs(one) == [one]  # a run is itself, finished or not
    sweep = tmp_path / "sweep"
    for name in ("seed=10", "seed=2", "seed=1"):
        _run(sweep / name)
    _run(sweep / "seed=3", finished=False)  # killed before results.json: not a finished run
    (sweep / "seed=1" / "sub").mkdir()
    _run(sweep / "seed=1" / "sub" / "inner")  # inside a run: not another run
    (sweep / "linked").symlink_to(one, target_is_directory=True)
    (sweep / "loop").symlink_to(sweep, target_is_directory=True)  # a cycle is walked once
    names = [p.relative_to(sweep).as_posix() for p in trained_runs(sweep)]
    assert names == ["linked", "seed=1", "seed=2", "seed=10"]
    (tmp_path / "empty").mkdir()
    assert trained_runs(tmp_path / "empty") == []


def _result(run_dir: str, aucs: dict[str, float | None], adacc: float, debates: int = 4) -> dict[str, Any]:
    rows = [
        {"round": r, "debates": debates, "honest": 8, "adversarial": 4, "dormant": 0, "auc": a,
         "auc_in_debate": a, "adacc": adacc, "all_reliable": 2 / 3}
        for r, a in aucs.items()
    ]  # fmt: skip
    summary = {"debates": debates, "agents": 12, "adversaries": 4, "rows": rows, "adacc": adacc}
    return {"run_dir": run_dir, "method": "todycomm", "summary": {**summary, "adacc_all_reliable": 2 / 3}}


def test_over_runs_by_hand() -> None:
    a = _result("a", {"2": 0.5, "decision": 0.9, "all": 0.7}, 0.75)
    b = _result("b", {"2": 0.7, "decision": 0.6, "all": None}, 0.25)
    c = _result("c", {"2": 0.6, "decision": 0.9, "all": 0.8}, 0.5)
    over = over_runs([a, b, c])
    assert over["runs"] == 3 and over["run_dirs"] == ["a", "b", "c"] and over["debates"] == 4
    rows = {r["round"]: r for r in over["rows"]}
    assert rows["2"]["auc"] == pytest.approx({"mean": 0.6, "min": 0.5, "max": 0.7, "runs": 3})
    assert rows["decision"]["auc"] == pytest.approx({"mean": 0.8, "min": 0.6, "max": 0.9, "runs": 3})
    # a run without a value (no adversary in the row) is left out of that row's figures, not counted as 0
    assert rows["all"]["auc"] == pytest.approx({"mean": 0.75, "min": 0.7, "max": 0.8, "runs": 2})
    assert over["adacc"] == pytest.approx({"mean": 0.5, "min": 0.25, "max": 0.75, "runs": 3})
    assert "probe_auc" not in rows["2"] and rows["2"]["honest"] == 8
    # the real probe's column (--probe --held-out) is summarised like the others, where the runs have it
    for res, x in zip((a, b, c), (0.6, 0.8, None), strict=True):
        res["summary"]["rows"][0]["real_probe_auc"] = x
    real = {r["round"]: r for r in over_runs([a, b, c])["rows"]}
    assert real["2"]["real_probe_auc"] == pytest.approx({"mean": 0.7, "min": 0.6, "max": 0.8, "runs": 2})
    assert "real_probe_auc" not in real["decision"]
    with pytest.raises(ValueError, match="must replay the same debates"):
        over_runs([a, _result("d", {"2": 0.5, "decision": 0.9, "all": 0.7}, 0.5, debates=5)])
    with pytest.raises(ValueError, match=r"different methods \(gsafeguard, todycomm\)"):
        over_runs([a, {**b, "method": "gsafeguard"}])
    with pytest.raises(ValueError, match="rows differ"):
        over_runs([a, _result("e", {"3": 0.5, "decision": 0.9, "all": 0.7}, 0.5)])


def test_run_line_names_the_run_its_seed_and_rows(tmp_path: Path) -> None:
    run = _run(tmp_path / "sweep" / "s1", seed=1)
    res = _result(str(run), {"2": 0.5, "decision": None, "all": 0.7}, 0.75)
    line = run_line(run, tmp_path / "sweep", res)
    assert line == "s1 (seed 1): AUC by row 2 0.500 · T+1 -; paper ADAcc 75.0 %"
    long = _run(tmp_path / "sweep" / ("0_" + "x" * 60), seed=None)
    assert run_line(long, tmp_path / "sweep", res).startswith("0_" + "x" * 37 + "…: AUC by row 2 0.500")
