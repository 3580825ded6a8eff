"""benchmark=debates: a transcript source's own questions, to simulate the source in its own protocol
(issue 38 item 4). What matters: the fitting part is exactly the questions calibrate fits on (so the
held-out real debates stay unseen), a question's text, options and gold are the source's, copies of a
question share its simulated latent, and a bad source fails in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tomacs.benchmarks import BenchmarkDataError, BenchmarkFileMissing, get_benchmark
from tomacs.benchmarks.base import SAME_QUESTION
from tomacs.sim import fit_episodes as fe
from tomacs.transcripts import load_debates, write_debates

REPO = Path(__file__).resolve().parents[1]
MAD = REPO / "tests" / "data" / "mad_follower_small"


def _bench(**cfg: object):  # noqa: ANN202
    return get_benchmark("debates", transcripts=str(MAD), **cfg)


def test_parts_are_calibrates_split_by_question() -> None:
    debates = load_debates(MAD)
    fit, held = fe.split_questions(debates, 0.7, 0)
    keys = {
        part: {q.meta[SAME_QUESTION] for q in _bench(part=part).questions()} for part in ("fit", "held_out")
    }
    assert keys["fit"] == {d.question_key for d in fit}
    assert keys["held_out"] == {d.question_key for d in held}
    assert keys["fit"].isdisjoint(keys["held_out"]) and keys["held_out"]
    every = {q.meta[SAME_QUESTION] for q in _bench(part="all").questions()}
    assert every == keys["fit"] | keys["held_out"] == {d.question_key for d in debates}


def test_a_question_is_the_sources_text_options_and_gold() -> None:
    by_key = {d.question_key: d for d in load_debates(MAD)}
    qs = _bench(part="all").questions()
    assert qs
    for q in qs:
        d = by_key[q.meta[SAME_QUESTION]]
        assert (q.text, q.options, q.answer, q.kind) == (d.question, d.options, d.gold, "mc")
        assert q.id == f"debates-{d.question_id or d.id}" and q.benchmark == "debates"


def test_repeats_are_disjoint_copies_per_split_and_a_subset_is_seeded() -> None:
    b = _bench(part="all", repeats=3)
    n = len(b.questions())
    splits = {s: b.load(s) for s in ("train", "validation", "test")}
    assert all(len(v) == 3 * n for v in splits.values())
    ids = [q.id for v in splits.values() for q in v]
    assert len(set(ids)) == len(ids)  # no copy in two splits
    assert sorted({q.meta["repeat"] for q in splits["test"]}) == [7, 8, 9]
    assert all(q.id.endswith(f"#{q.meta['repeat']}") for q in splits["test"])
    # a copy is its question: same key, text and gold as the record it copies
    base = {q.meta[SAME_QUESTION]: q for q in b.questions()}
    assert all(
        (q.text, q.answer) == (base[q.meta[SAME_QUESTION]].text, base[q.meta[SAME_QUESTION]].answer)
        for q in splits["train"]
    )
    # size: the test subset is the same for every seed, a training subset follows the seed
    assert [q.id for q in b.load("test", 4, seed=1)] == [q.id for q in b.load("test", 4, seed=2)]
    picks = {tuple(q.id for q in b.load("train", 4, seed=s)) for s in range(6)}
    assert len(picks) > 1
    assert len(b.load("train", 10**6)) == 3 * n  # more than there are: all of them
    # test_split names whose copies the test reads (here the training copies)
    same = _bench(part="all", repeats=3, test_split="train")
    assert [q.id for q in same.load("test")] == [q.id for q in splits["train"]]
    with pytest.raises(ValueError, match="test_split='dev' is not one of train, validation, test"):
        _bench(test_split="dev")


def test_copies_per_debate_and_a_round_count_follow_the_source(tmp_path: Path) -> None:
    """`per_debate`: a question the source ran twice weighs twice in the run (MAD-Follower ran qwen3-8b's
    ten questions off the answer scale 4 times, its 30 on it 2.4 times, mostly in 5 rounds against 3);
    `rounds`: only the questions, and debates, of one round count, for one run per round count the source
    has."""
    from collections import Counter

    debates = load_debates(MAD)
    five = [d for d in debates if d.n_rounds == 5]
    twice = five[0].question_key
    f = tmp_path / "src.jsonl"
    write_debates(f, [*debates, five[0].__class__(**{**five[0].__dict__, "id": f"{five[0].id}-again"})])

    def bench(**cfg: object):  # noqa: ANN202
        return get_benchmark("debates", transcripts=str(f), part="all", **cfg)

    plain = Counter(q.meta[SAME_QUESTION] for q in bench(repeats=2).load("test"))
    assert set(plain.values()) == {2}  # as before: `repeats` copies of each
    b = bench(repeats=2, per_debate=True)
    splits = {s: b.load(s) for s in ("train", "validation", "test")}
    n = Counter(q.meta[SAME_QUESTION] for q in splits["test"])
    assert n[twice] == 4 and {v for k, v in n.items() if k != twice} == {2}
    ids = [q.id for v in splits.values() for q in v]
    assert len(set(ids)) == len(ids)  # no copy in two splits
    assert all(q.id.endswith(f"#{q.meta['repeat']}") for q in splits["validation"])
    again = [q.meta["repeat"] for q in splits["validation"] if q.meta[SAME_QUESTION] == twice]
    assert sorted(again) == [5, 6, 7, 8]
    assert {q.meta[SAME_QUESTION] for q in bench(rounds=5).questions()} == {d.question_key for d in five}
    assert [q.meta["debates"] for q in bench(rounds=3).questions()] == [1]
    assert Counter(q.meta[SAME_QUESTION] for q in bench(rounds=5, per_debate=True).load("test"))[twice] == 2
    with pytest.raises(BenchmarkDataError, match=r"rounds=4 in part 'all'; its debates have 3, 5 rounds"):
        bench(rounds=4).load("test")
    with pytest.raises(ValueError, match="rounds=0 must be at least 1"):
        bench(rounds=0)


def test_copies_of_a_question_share_the_simulated_latent() -> None:
    from tomacs.sim.backbone import SimBackbone

    sim = SimBackbone(profile="mad-qwen-max", seed=0)
    b = _bench(part="all", repeats=8)
    lures: dict[str, set[str]] = {}
    for q in b.load("train"):
        lures.setdefault(q.meta[SAME_QUESTION], set()).add(sim.question_lure(q))
    assert all(len(v) == 1 for v in lures.values())
    # without the shared key each copy would draw its own latent: the ids alone give different lures
    fresh = SimBackbone(profile="mad-qwen-max", seed=0)  # its own cache of latents
    bare = [type(q)(q.id, q.text, q.options, q.answer, q.benchmark, q.kind) for q in b.load("train")]
    assert any(len({fresh.question_lure(q) for q in bare if q.text == t}) > 1 for t in {q.text for q in bare})


def test_the_split_matches_a_shipped_profiles_fit(data_dir: Path) -> None:
    """benchmark.model=qwen-max reads the 21 questions conf/profiles/mad-qwen-max.yaml was fitted on."""
    prov = yaml.safe_load((REPO / "conf" / "profiles" / "mad-qwen-max.yaml").read_text())["provenance"]
    b = get_benchmark("debates", model="qwen-max", split=prov["split"], split_seed=prov["split_seed"])
    assert len(b.questions()) == prov["questions_fit"]
    held = get_benchmark("debates", model="qwen-max", part="held_out")
    assert len(held.questions()) == prov["questions_held_out"]
    assert {q.options[1] for q in b.questions()} == {"Mostly acceptable"}  # the scale the target sits on


def test_bad_sources_and_keys_fail_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(BenchmarkFileMissing, match="no transcripts at .*; set benchmark.transcripts="):
        get_benchmark("debates", transcripts=str(tmp_path / "none")).load("test")
    with pytest.raises(BenchmarkDataError, match=r"model 'gpt-9'; models there: qwen-max, qwen3-8b"):
        _bench(model="gpt-9").load("test")
    with pytest.raises(ValueError, match="part='train' is not one of fit, held_out, all"):
        _bench(part="train")
    with pytest.raises(ValueError, match=r"unknown config key\(s\) repeat; valid: .*repeats"):
        _bench(repeat=2)
    with pytest.raises(ValueError, match="repeats=0 must be at least 1"):
        _bench(repeats=0)
    # a source without question text (tomacs.debate/1 keeps it optional) cannot be simulated
    bare = [d.__class__(**{**d.__dict__, "question": None}) for d in load_debates(MAD)]
    f = tmp_path / "bare.jsonl"
    write_debates(f, bare)
    with pytest.raises(BenchmarkDataError, match="field 'question'/'options': a simulated debate needs"):
        get_benchmark("debates", transcripts=str(f), part="all").load("test")
    # a malformed transcript: the importer's one-line error, as a benchmark data error
    f.write_text(json.dumps({"schema": "tomacs.debate/1", "id": "x"}) + "\n")
    with pytest.raises(BenchmarkDataError, match="bare.jsonl"):
        get_benchmark("debates", transcripts=str(f), part="all").load("test")


def test_a_simulated_run_in_the_sources_protocol(tomacs_here, tmp_path: Path) -> None:  # noqa: ANN001
    """End to end: the source's questions, its fixed target (B, or A when B is the gold) and its onsets."""
    out = tmp_path / "run"
    args = [
        *("evaluate", "method=debate", "benchmark=debates", f"benchmark.transcripts={MAD}"),
        *("benchmark.part=all", "benchmark.repeats=2", "attack=mad", "attack.target_letters=[B,A]"),
        *("attack.ordered_onsets=true", "agents=5", "rounds=3", "backbone.profile=mad-qwen-max"),
    ]
    ran = tomacs_here(*args, f"hydra.run.dir={out}")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    episodes = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    n = len(_bench(part="all").questions())
    assert len(episodes) == 2 * n
    for ep in episodes:
        q, plan = ep["question"], ep["plan"]
        assert q["id"].startswith("debates-") and q["benchmark"] == "debates"
        assert plan["target"] == ("A" if q["answer"] == "B" else "B")
        assert sorted(plan["onsets"].values()) == [1, 2]
    results = json.loads((out / "results.json").read_text())
    assert results["config"]["benchmark"]["transcripts"] == str(MAD)
