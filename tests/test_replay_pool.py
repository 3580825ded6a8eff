"""`tomacs transcripts pool` on replays: the K folds of a cross-fitted policy replay joined into one.

Checked through the CLI on the MAD-Follower fixture: one policy replayed fold by fold must pool to the
replay of all its debates at once (same credits, same truth), a single fold must pool to its own rows, and
the refusals name the fix. The rank AUC of the intervals against the pairwise one by hand."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from tests.test_replay import MAD, run  # noqa: F401
from tomacs.analysis.credit import auc
from tomacs.analysis.folds import read_fold_files
from tomacs.analysis.replay_pool import _cells_auc, format_replay_pool, pool_replays
from tomacs.transcripts import load_debates

K = 5  # the fixture's 5 questions: one per fold


def _replay(run_dir: Path, out: Path, *extra: str) -> dict:
    from tomacs.cli import app

    res = CliRunner().invoke(app, ["replay", str(run_dir), str(MAD), *extra, "--out", str(out)])
    assert res.exit_code == 0, res.output
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def folds(run: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Path], dict]:  # noqa: F811
    """The fixture's debates replayed fold by fold by one policy, and all at once."""
    d = tmp_path_factory.mktemp("pool")
    files = [d / f"f{k}.json" for k in range(1, K + 1)]
    for k, f in enumerate(files, 1):
        _replay(run, f, "--fold", f"{k}/{K}")
    return files, _replay(run, d / "all.json")


def test_the_replay_records_its_fold(folds: tuple[list[Path], dict]) -> None:
    files, whole = folds
    one = json.loads(files[1].read_text())
    assert (one["fold"], one["seed"], one["held_out"], one["split"]) == ("2/5", 0, True, None)
    assert (whole["fold"], whole["seed"], whole["held_out"]) == (None, None, False)
    d = one["debates"][0]
    assert set(d["truth"]) == set(d["credits"]) and all(y in (0, 1, None) for y in d["truth"]["decision"])


def test_one_policy_pooled_over_its_folds_is_its_replay_of_all(
    folds: tuple[list[Path], dict], tmp_path: Path
) -> None:
    from tomacs.cli import app

    files, whole = folds
    out = tmp_path / "pool.json"
    res = CliRunner().invoke(app, ["transcripts", "pool", *map(str, files), "-o", str(out)])
    assert res.exit_code == 0, res.output
    said = " ".join(res.output.split())
    n = len(load_debates([MAD]))
    assert f"replay, cross-fit: {K} of {K} folds" in said and f"{n} real debates" in said
    pooled = json.loads(out.read_text())
    assert pooled["debates"] == whole["summary"]["debates"] == n
    rows = {r["round"]: r for r in whole["summary"]["rows"]}
    assert [r["round"] for r in pooled["rows"]] == list(rows)
    checked = 0
    for r in pooled["rows"]:
        w = rows[r["round"]]
        assert (r["debates"], r["honest"], r["adversarial"], r["dormant"]) == (
            w["debates"],
            w["honest"],
            w["adversarial"],
            w["dormant"],
        )
        for key in ("auc", "auc_in_debate", "adacc", "all_reliable"):
            assert r[key] == (None if w[key] is None else pytest.approx(w[key])), (r["round"], key)
            checked += w[key] is not None
        assert len(r["fold_aucs"]) == K
        if None not in r["fold_aucs"]:
            assert r["fold_mean_auc"] == pytest.approx(float(np.mean(r["fold_aucs"])))
        if r["auc_ci"] is not None:
            assert r["auc_ci"][0] <= r["auc"] <= r["auc_ci"][1]
    assert checked >= 8  # numbers compared, not only Nones
    s = whole["summary"]
    assert pooled["adacc"] == pytest.approx(s["adacc"]) and pooled["agents"] == s["agents"]
    assert pooled["adacc_all_reliable"] == pytest.approx(s["adacc_all_reliable"])
    assert pooled["missing_folds"] == [] and pooled["kind"] == "replay"


def test_a_single_fold_pools_to_its_own_rows(folds: tuple[list[Path], dict]) -> None:
    files, _ = folds
    for f in files[:2]:
        one = json.loads(f.read_text())
        res = pool_replays(read_fold_files([str(f)])[1], draws=50)
        assert res["missing_folds"] == [k for k in range(1, K + 1) if f"{k}/{K}" != one["fold"]]
        own = {r["round"]: r for r in one["summary"]["rows"]}
        for r in res["rows"]:
            w = own[r["round"]]["auc"]  # one fold: its mean AUC is its own
            assert r["fold_mean_auc"] == (None if w is None else pytest.approx(w)), r["round"]
            for key in ("auc", "auc_in_debate", "adacc", "all_reliable"):
                w = own[r["round"]][key]
                assert r[key] == (None if w is None else pytest.approx(w)), (r["round"], key)
        text = format_replay_pool(res)
        assert "folds missing" in text and "paper ADAcc" in text


def test_the_pool_refuses_what_is_not_one_cross_fit(folds: tuple[list[Path], dict], tmp_path: Path) -> None:
    files, whole = folds

    def refused(*paths: Path) -> str:
        with pytest.raises(ValueError) as exc:
            read_fold_files([str(p) for p in paths])
        return str(exc.value)

    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps(whole))
    assert "not one fold of a cross-fit" in refused(plain) and "replay RUN TRANSCRIPTS --fold" in refused(
        plain
    )
    texts = tmp_path / "texts.json"
    texts.write_text(json.dumps({"fold": "1/5", "replies": {}, "two_sample_auc": 0.9}))
    assert "two kinds" in refused(files[1], texts)
    sweep = tmp_path / "sweep.json"
    sweep.write_text(json.dumps({"runs": [whole], "over_runs": {}}))
    assert "several runs" in refused(sweep)
    other = tmp_path / "other.json"
    other.write_text(json.dumps({**json.loads(files[0].read_text()), "model": "gpt-4o"}))
    assert "differ in model" in refused(other, files[1])
    assert "given twice" in refused(files[0], files[0])
    old = json.loads(files[0].read_text())
    for d in old["debates"]:
        del d["truth"]
    stale = tmp_path / "stale.json"
    stale.write_text(json.dumps(old))
    with pytest.raises(ValueError, match="replay the run again"):
        pool_replays(read_fold_files([str(stale)])[1])


def test_the_intervals_auc_is_the_pairwise_auc() -> None:
    rng = np.random.default_rng(0)
    for _ in range(20):
        hon = [float(x) for x in rng.integers(0, 5, size=int(rng.integers(1, 9)))]  # ties on purpose
        adv = [float(x) for x in rng.integers(0, 5, size=int(rng.integers(1, 9)))]
        half = len(hon) // 2  # split over two debates' cells: the AUC is over them together
        cells = [(hon[:half], adv[:1], 0, 0, 0), (hon[half:], adv[1:], 0, 0, 0)]
        assert _cells_auc(cells) == pytest.approx(auc(hon, adv))
    assert _cells_auc([([0.9, 0.8], [0.1, 0.8], 0, 0, 0)]) == pytest.approx(0.875)  # 3.5 of 4 pairs
    assert _cells_auc([([0.9], [], 0, 0, 0)]) is None  # one role only
