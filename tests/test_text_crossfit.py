"""A cross-fit of the texts check (issue 38): K profiles, each fitted without one fold of the questions,
each checked against its own fold, and the folds joined by `tomacs transcripts pool`. Hand cases for the
folds (each question held out exactly once) and for the pooled gap (its mean and its interval)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tomacs.analysis.text_pool import format_pool, pool, pooled_gap_draws, read_folds
from tomacs.transcripts.schema import AgentInfo, Debate, Turn
from tomacs.transcripts.split import Fold, parse_fold, select_debates, split_questions

MAA = Path(__file__).parent / "data" / "multi_agent_attack_small"


def _debates(n_questions: int, per_question: int = 2) -> list[Debate]:
    agents = (AgentInfo(0, "honest", model="m"),)
    return [
        Debate(
            id=f"q{q}-{r}",
            source="t",
            question=f"question {q}",
            options=("a", "b"),
            letters=("A", "B"),
            gold="A",
            n_agents=1,
            n_rounds=1,
            agents=agents,
            turns=(Turn(1, 0, "A"),),
            model="m",
        )
        for q in range(n_questions)
        for r in range(per_question)
    ]


@pytest.mark.parametrize(("text", "fold"), [("1/3", Fold(1, 3)), (" 3/3 ", Fold(3, 3)), (None, None)])
def test_parse_fold(text: str | None, fold: Fold | None) -> None:
    assert parse_fold(text) == fold
    if fold is not None:
        assert str(fold) == text.strip()  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("3", "--fold must be k/K"),
        ("a/3", "--fold must be k/K"),
        ("0/3", "k in 1..K"),
        ("4/3", "k in 1..K"),
        ("1/1", "K must be >= 2"),
    ],
)
def test_parse_fold_errors_name_the_form(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_fold(text)


def test_the_folds_of_one_seed_hold_out_each_question_once() -> None:
    """Ten questions of two debates each, three folds: the held-out sets are disjoint, cover all ten
    questions, have 4, 3 and 3 questions, and each fold's fitting set is exactly the other questions."""
    ds = _debates(10)
    held_sets = []
    for k in (1, 2, 3):
        fit, held = split_questions(ds, seed=5, fold=Fold(k, 3))
        fit_q, held_q = {d.question for d in fit}, {d.question for d in held}
        assert not fit_q & held_q and len(fit) + len(held) == len(ds)
        assert all(sum(d.question == q for d in held) == 2 for q in held_q)  # whole questions
        held_sets.append(held_q)
    assert sorted(len(h) for h in held_sets) == [3, 3, 4]
    assert set().union(*held_sets) == {f"question {q}" for q in range(10)}
    assert sum(len(h) for h in held_sets) == 10  # disjoint
    # the order of the input does not matter, and select_debates holds out the same fold
    assert (
        split_questions(ds[::-1], seed=5, fold=Fold(2, 3))[1]
        == split_questions(ds, seed=5, fold=Fold(2, 3))[1][::-1]
    )
    assert {d.question for d in select_debates(ds, held_out=True, seed=5, fold=Fold(2, 3))} == held_sets[1]
    # another seed, other folds
    assert {d.question for d in split_questions(ds, seed=6, fold=Fold(1, 3))[1]} != held_sets[0]


def test_more_folds_than_questions_is_an_error() -> None:
    with pytest.raises(ValueError, match="--fold 1/4: 4 folds but only 3 questions"):
        split_questions(_debates(3), fold=Fold(1, 4))


def test_the_debates_benchmark_reads_a_fold_s_fitting_questions() -> None:
    """Two folds of the fixture's questions: fold 1's fitting questions are fold 2's held-out ones."""
    from tomacs.transcripts.benchmark import DebateQuestions

    fit = DebateQuestions(transcripts=str(MAA), part="fit", fold="1/2").questions()
    held = DebateQuestions(transcripts=str(MAA), part="held_out", fold="1/2").questions()
    other = DebateQuestions(transcripts=str(MAA), part="held_out", fold="2/2").questions()
    assert fit and held
    assert {q.id for q in fit} == {q.id for q in other}
    assert not {q.id for q in fit} & {q.id for q in held}
    with pytest.raises(ValueError, match=r"benchmark 'debates': fold='3/2'.*k in 1..K"):
        DebateQuestions(transcripts=str(MAA), fold="3/2")


def _fold(k: int, of: int, gap: float, draws: list[float], **extra: Any) -> dict[str, Any]:
    real = 0.8
    return {
        "fold": f"{k}/{of}",
        "model": "m",
        "embedder": "hashing",
        "real_models": ["m"],
        "seed": 0,
        "replies": {"real": {"questions": 10 + k}},
        "real_adversary_auc": real,
        "sim_adversary_auc": 0.99,
        "sim_adversary_auc_matched": real + gap,
        "sim_adversary_auc_matched_draws": [real + gap] * 5,
        "real_sets_auc_sd": 0.02 + 0.01 * k,
        "adversary_gap": gap,
        "adversary_gap_ci": [min(draws), max(draws)],
        "adversary_gap_draws": draws,
        "transfer_auc": 0.7 + 0.1 * k,
        "real_trained_auc": 0.8,
        "two_sample_auc": 0.9,
        **extra,
    }


def _write(tmp_path: Path, *results: dict[str, Any]) -> list[str]:
    paths = []
    for i, res in enumerate(results):
        p = tmp_path / f"f{i}.json"
        p.write_text(json.dumps(res))
        paths.append(str(p))
    return paths


def test_pooled_gap_is_the_folds_mean_and_its_draws_average_one_draw_of_each(tmp_path: Path) -> None:
    """Two folds: gaps +0.10 and -0.04 (mean +0.03). Fold 1's draws are all 0.10, fold 2's are -0.06 and
    -0.02, half each: every pooled draw is (0.10 - 0.06) / 2 = 0.02 or (0.10 - 0.02) / 2 = 0.04, so the
    95 % interval is [0.02, 0.04], within the target; the simulated AUC is taken at the real side's size."""
    d2 = [-0.06, -0.02] * 200
    res = pool(read_folds(_write(tmp_path, _fold(2, 2, -0.04, d2), _fold(1, 2, 0.10, [0.10] * 400))))
    assert [r["fold"] for r in res["rows"]] == ["1/2", "2/2"]  # in fold order, whatever the order given
    assert res["adversary_gap"] == pytest.approx(0.03)
    assert res["adversary_gap_ci"] == pytest.approx((0.02, 0.04))
    assert res["adversary_gap_verdict"] == "within the target, the whole interval too"
    assert res["mean"]["sim_adversary_auc"] == pytest.approx(0.83)  # (0.90 + 0.76) / 2, the matched ones
    assert res["mean"]["transfer_auc"] == pytest.approx(0.85) and res["transfer_auc_range"] == pytest.approx(
        [0.8, 0.9]
    )
    assert res["real_questions"] == 23 and res["missing_folds"] == []
    text = format_pool(res)
    assert "2 of 2 folds" in text and "23 real questions" in text
    assert "+0.030  [+0.020, +0.040]" in text
    assert (
        "0.850  (folds 0.800-0.900; trained on the real fitting questions instead: 0.800)" in text
        and "within the target, the whole interval too" in text
    )
    # the wider reading: each fold's real AUC spread by its sets' SD (0.03, 0.04), the simulated draws equal:
    # 1.96 x sqrt(0.03^2 + 0.04^2) / 2 = 0.049 either side of +0.03
    assert res["adversary_gap_ci_refitted"] == pytest.approx([0.03 - 0.049, 0.03 + 0.049])
    assert res["adversary_gap_verdict_refitted"] == "within the target; the interval reaches beyond it"
    assert "+0.030  [-0.019, +0.079]   (within the target; the interval reaches beyond it)" in text


def test_by_round_means_over_the_folds_that_have_the_round(tmp_path: Path) -> None:
    """Fold 1 has rounds 1 and 2, fold 2 only round 1 (its round 2 had too few replies to be a row): round
    1's means are over both folds, round 2's are fold 1's; a fold with the round but not an AUC gives None."""
    r1 = {"round": 1, "transfer_auc": 0.6, "real_adversary_auc": 0.7, "sim_adversary_auc": 0.8}
    r2 = {"round": 2, "transfer_auc": 0.9, "real_adversary_auc": 0.95, "sim_adversary_auc": None}
    one = _fold(1, 2, 0.0, [0.0], by_round=[r1, r2])
    two = _fold(2, 2, 0.0, [0.0], by_round=[{**r1, "transfer_auc": 0.8, "sim_adversary_auc": 0.7}])
    res = pool(read_folds(_write(tmp_path, one, two)))
    first, second = res["by_round"]
    assert first == pytest.approx(
        {"round": 1, "folds": 2, "transfer_auc": 0.7, "real_adversary_auc": 0.7, "sim_adversary_auc": 0.75}
    )
    assert second == {
        "round": 2,
        "folds": 1,
        "transfer_auc": 0.9,
        "real_adversary_auc": 0.95,
        "sim_adversary_auc": None,
    }
    assert "  1            2     0.700               0.700              0.750" in format_pool(res)


def test_pooled_draws_are_shuffled_before_pairing() -> None:
    """Folds resampled with one seed pair draw i with draw i; shuffled first, two mirrored folds do not
    cancel draw by draw (unshuffled, every mean would be 0)."""
    a = list(np.linspace(-0.1, 0.1, 200))
    got = pooled_gap_draws([a, a[::-1]])
    assert got is not None and got.std() > 0.01
    assert pooled_gap_draws([a, []]) is None


def test_missing_folds_are_named_and_the_means_are_over_those_given(tmp_path: Path) -> None:
    res = pool(read_folds(_write(tmp_path, _fold(1, 3, 0.0, [0.0] * 10), _fold(3, 3, 0.06, [0.06] * 10))))
    assert res["missing_folds"] == [2] and res["adversary_gap"] == pytest.approx(0.03)
    assert "folds missing: 2" in format_pool(res)
    # a fold written without --held-out's sets has no refitted spread: no wider interval
    bare = _fold(2, 2, 0.0, [0.0], real_sets_auc_sd=None)
    res = pool(read_folds(_write(tmp_path, _fold(1, 2, 0.0, [0.0]), bare)))
    assert res["adversary_gap_ci_refitted"] is None and "the probe refitted)" not in format_pool(res)


@pytest.mark.parametrize(
    ("results", "message"),
    [
        ([_fold(1, 2, 0.0, [0.0], fold=None)], "not one fold of a cross-fit"),
        ([_fold(1, 2, 0.0, [0.0], fold="5")], "--fold must be k/K"),
        ([_fold(1, 2, 0.0, [0.0]), _fold(1, 2, 0.0, [0.0])], "fold 1/2 given twice"),
        ([_fold(1, 2, 0.0, [0.0]), _fold(2, 3, 0.0, [0.0])], "folds of different K"),
        ([_fold(1, 2, 0.0, [0.0]), _fold(2, 2, 0.0, [0.0], model="x")], "the folds differ in model"),
        ([_fold(1, 2, 0.0, [0.0]), _fold(2, 2, 0.0, [0.0], seed=1)], "the folds differ in seed"),
    ],
)
def test_pool_errors_name_the_file_or_the_fix(
    tmp_path: Path, results: list[dict[str, Any]], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        read_folds(_write(tmp_path, *results))


def test_pool_cli_errors_are_one_line(tmp_path: Path, tomacs_here: Callable[..., Any]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    p = tomacs_here("transcripts", "pool", str(bad))
    assert p.returncode != 0 and "bad.json: not JSON" in p.stderr and p.stderr.strip().count("\n") == 0


@pytest.mark.slow
def test_cli_cross_fit_end_to_end(
    tmp_path: Path, tomacs_here: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fit one fold's profile from the multi-agent-attack fixture (its provenance says which fold), run the
    simulator on it, check its texts against each of two folds and pool them, all through the CLI."""
    monkeypatch.setenv("TOMACS_PROFILES", str(tmp_path / "profiles"))
    p = tomacs_here("sim", "fit-episodes", str(MAA), "--name", "fold-maa", "--fold", "1/2", "--draws", "20")
    assert p.returncode == 0, p.stderr[-2000:]
    import yaml

    prov = yaml.safe_load((tmp_path / "profiles" / "fold-maa.yaml").read_text())["provenance"]
    assert prov["fold"] == "1/2" and prov["split"] == 0.5
    held = split_questions(list(_load(MAA)), fold=Fold(1, 2))[1]
    assert prov["questions_held_out"] == len({d.question_key for d in held})
    bad = tomacs_here("sim", "fit-episodes", str(MAA), "--name", "x", "--fold", "2")
    assert bad.returncode != 0 and "--fold must be k/K" in bad.stderr
    run = tmp_path / "run"
    args = ["method=debate", "attack=maa", "agents=3", "rounds=3", "backbone.profile=fold-maa"]
    p = tomacs_here(
        "evaluate", *args, "benchmark=synthetic", "eval.size=12", "embedder=hashing", f"hydra.run.dir={run}"
    )
    assert p.returncode == 0, p.stderr[-2000:]
    files = []
    for k in (1, 2):
        out = tmp_path / f"fold{k}.json"
        p = tomacs_here(
            "transcripts", "texts", "--sim", str(run), "--real", str(MAA), "--fold", f"{k}/2", "-o", str(out)
        )
        assert p.returncode == 0, p.stderr[-2000:]
        assert f"(fold {k}/2 of a cross-fit, seed 0)" in p.stdout
        got = json.loads(out.read_text())
        assert got["fold"] == f"{k}/2" and got["held_out"] is True
        fold_q = {d.question_key for d in split_questions(list(_load(MAA)), fold=Fold(k, 2))[1]}
        assert got["replies"]["real"]["questions"] == len(fold_q)
        files.append(str(out))
    p = tomacs_here(
        "transcripts", "curves", "--sim", str(run), "--real", str(MAA), "--fold", "1/2", "--reps", "20"
    )
    assert p.returncode == 0, p.stderr[-2000:]
    assert "(fold 1/2 of a cross-fit, seed 0)" in " ".join(p.stdout.split())
    pooled = tmp_path / "pool.json"
    p = tomacs_here("transcripts", "pool", *files, "-o", str(pooled))
    assert p.returncode == 0, p.stderr[-2000:]
    res = json.loads(pooled.read_text())
    assert res["folds"] == 2 and len(res["rows"]) == 2
    assert res["real_questions"] == len({d.question_key for d in _load(MAA)})
    # the fixture's 3 adversary debates: fold 2 has too few adversary replies for an AUC, so no mean gap
    gaps = [r["adversary_gap"] for r in res["rows"]]
    assert gaps[0] is not None and gaps[1] is None and res["adversary_gap"] is None
    assert "no mean gap: no adversary AUC in fold 2/2" in p.stdout
    assert "texts, cross-fit: 2 of 2 folds" in p.stdout


def _load(path: Path) -> list[Debate]:
    from tomacs.transcripts import load_debates

    return list(load_debates([path]))
