"""Benchmark adapters: registry, generated questions, candidate answers, real data, configs, errors."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import numpy as np
import pytest
from omegaconf import OmegaConf

from tomacs.benchmarks import (
    BENCHMARK_KEYS,
    BenchmarkDataError,
    BenchmarkFileMissing,
    available_benchmarks,
    candidate_answers,
    get_benchmark,
    truth_index,
    wrong_answers,
)
from tomacs.benchmarks.parsing import canonical_number
from tomacs.benchmarks.synthetic import _ENDS, _MIDS, _ONSETS, _SUBJECTS, generate_mc, generate_numeric
from tomacs.types import Question

CONF = Path(__file__).resolve().parents[1] / "conf" / "benchmark"
REAL = ("mmlu", "arc_c", "gsm8k", "openbookqa", "medqa")


def _ints(text: str) -> list[int]:
    return [int(x) for x in re.findall(r"\d+", text)]


# -- registry --------------------------------------------------------------------------------------


def test_registry_lists_all_and_rejects_unknown_names_and_keys() -> None:
    assert set(available_benchmarks()) >= {"synthetic", *REAL}
    valid = r"valid: arc_c, debates, gsm8k, medqa, mmlu"
    with pytest.raises(ValueError, match=rf"unknown benchmark 'nope'; {valid}"):
        get_benchmark("nope")
    with pytest.raises(ValueError, match="unknown config key"):
        get_benchmark("synthetic", sizes=3)
    with pytest.raises(ValueError, match="variant"):
        get_benchmark("synthetic", variant="essay")


def test_adapter_attributes() -> None:
    mc = get_benchmark("synthetic")
    num = get_benchmark("synthetic", variant="numeric")
    assert (mc.kind, mc.profile, mc.roles_key) == ("mc", "mmlu", "mmlu")
    assert (num.kind, num.profile, num.roles_key) == ("numeric", "gsm8k", "gsm8k")
    expected = {"mmlu": "mc", "arc_c": "mc", "gsm8k": "numeric", "openbookqa": "mc", "medqa": "mc"}
    for name, kind in expected.items():
        b = get_benchmark(name)
        assert (b.kind, b.profile, b.roles_key) == (kind, name, name)


# -- synthetic -------------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["mc", "numeric"])
def test_synthetic_is_deterministic_prefix_stable_and_seeded(variant: str) -> None:
    b = get_benchmark("synthetic", variant=variant)
    a1, a2 = b.load("test", 30, seed=7), b.load("test", 30, seed=7)
    assert a1 == a2 and [q.text for q in a1] == [q.text for q in a2]
    assert b.load("test", 10, seed=7) == a1[:10]
    assert a1[17].id == f"synthetic-{variant}-test-00017"
    # a fixed test set: the run seed changes the training questions, never the test questions
    assert b.load("test", 30, seed=8) == a1
    t7, t8 = b.load("train", 30, seed=7), b.load("train", 30, seed=8)
    assert sum(x.text != y.text for x, y in zip(t7, t8, strict=True)) >= 28
    assert len({q.text for q in a1}) == 30
    assert len(b.load("validation")) == 200 and len(b.load("train", 5)) == 5


@pytest.mark.parametrize("variant", ["mc", "numeric"])
def test_synthetic_splits_are_disjoint(variant: str) -> None:
    b = get_benchmark("synthetic", variant=variant)
    texts = {s: {q.text for q in b.load(s, 300, seed=0)} for s in ("train", "validation", "test")}
    assert not texts["train"] & texts["test"]
    assert not texts["train"] & texts["validation"] and not texts["validation"] & texts["test"]
    # every place/entity name a split's questions can use (synthetic._name draws one of each part)
    names = {
        s: {o + m + e for o in _ONSETS[s] for m in _MIDS for e in _ENDS}
        for s in ("train", "validation", "test")
    }
    assert not names["train"] & names["test"] and not names["validation"] & names["test"]


def test_synthetic_mc_items_look_like_exam_questions() -> None:
    qs = get_benchmark("synthetic").load("train", 600, seed=0)
    words = [len(q.text.split()) for q in qs]
    assert 40 <= min(words) and max(words) <= 120 and 60 <= float(np.mean(words)) <= 100
    assert len({q.meta["subject"] for q in qs}) >= 10 and len({q.meta["template"] for q in qs}) >= 6
    for q in qs:
        assert q.kind == "mc" and q.options is not None and len(q.options) == 4
        assert len(set(q.options)) == 4 and q.answer in "ABCD"
        assert q.text.endswith(("?", ":"))
    assert {q.answer for q in qs} == set("ABCD")


def test_synthetic_mc_gold_is_the_answerable_option() -> None:
    defs = {t.lower(): d for s in _SUBJECTS for t, d in s.terms}
    checked = 0
    for q in get_benchmark("synthetic").load("test", 300, seed=3):
        gold = q.options[ord(q.answer) - 65]  # type: ignore[index]
        if q.meta["template"] in ("definition", "case"):
            assert defs[gold.lower()] in q.text
            checked += 1
        elif q.meta["template"] == "quantity":
            base, pct = _ints(q.text)[:2]
            up = "increases" in q.text
            assert int(gold.split()[0]) == base + (1 if up else -1) * base * pct // 100
            checked += 1
    assert checked > 50


def test_synthetic_numeric_answers_are_computed_from_the_text() -> None:
    qs = get_benchmark("synthetic", variant="numeric").load("train", 600, seed=0)
    words = [len(q.text.split()) for q in qs]
    assert 50 <= min(words) and max(words) <= 120
    assert len({q.meta["template"] for q in qs}) == 12
    seen = set()
    for q in qs:
        assert q.kind == "numeric" and q.options is None and canonical_number(q.answer) == q.answer
        assert int(q.answer) > 0
        n = _ints(q.text)
        t = q.meta["template"]
        if t == "shopping":  # a items at pa, b items at pb, pays with a bill
            a, pa, b, pb, bill = n
            assert int(q.answer) == bill - (a * pa + b * pb)
        elif t == "tank":
            cap, fill, leak = n
            assert int(q.answer) * (fill - leak) == cap
        elif t == "animals":
            chickens, cows, sold = n
            assert int(q.answer) == 2 * (chickens - sold) + 4 * cows
        else:
            continue
        seen.add(t)
    assert seen == {"shopping", "tank", "animals"}


# -- candidate answers -----------------------------------------------------------------------------


def test_candidates_for_multiple_choice_are_the_letters() -> None:
    q = generate_mc(0, "test", 3)
    assert candidate_answers(q) == ["A", "B", "C", "D"]
    assert truth_index(q, candidate_answers(q)) == "ABCD".index(q.answer)
    assert sorted(wrong_answers(q)) == sorted(set("ABCD") - {q.answer})


@pytest.mark.parametrize("gold", ["0", "1", "7", "18", "-5", "0.5", "1234", "1000000"])
def test_numeric_candidates_are_five_plausible_distinct_numbers(gold: str) -> None:
    q = Question(id=f"n-{gold}", text="?", options=None, answer=gold, benchmark="t", kind="numeric")
    c = candidate_answers(q)
    assert len(c) == 5 and len(set(c)) == 5 and c == candidate_answers(q)
    assert all(canonical_number(x) == x for x in c)
    assert c[truth_index(q, c)] == gold
    w = wrong_answers(q)
    assert len(w) == 4 and gold not in w
    assert all(abs(float(x)) <= max(100 * abs(float(gold)), 200) for x in w)  # plausible scale


def test_numeric_candidates_depend_on_question_id_and_put_gold_everywhere() -> None:
    qs = [generate_numeric(0, "test", i) for i in range(200)]
    positions = {truth_index(q, candidate_answers(q)) for q in qs}
    assert positions == {0, 1, 2, 3, 4}
    same_gold = [
        Question(id=f"id{i}", text="?", options=None, answer="48", benchmark="t", kind="numeric")
        for i in range(10)
    ]
    assert len({tuple(candidate_answers(x)) for x in same_gold}) >= 5  # the id varies slips and order
    a = same_gold[0]
    assert truth_index(a, ["1", "48.0"]) == 1
    with pytest.raises(ValueError):
        truth_index(a, ["1", "2"])


# -- configs ---------------------------------------------------------------------------------------


def _composed(name: str) -> dict:
    from tomacs.config import compose, to_container

    return to_container(compose([f"benchmark={name}"]))["benchmark"]


@pytest.mark.parametrize("file", sorted(CONF.glob("*.yaml")), ids=lambda p: p.stem)
def test_config_files_have_the_shared_keys_and_build(file: Path, tmp_path: Path) -> None:
    """A yaml extends its adapter's schema: the composed option has every key, and builds the adapter."""
    raw = OmegaConf.load(file)
    assert list(raw["defaults"]) == [f"/schema/benchmark/{file.stem}@_here_", "_self_"]
    cfg = _composed(file.stem)
    from dataclasses import fields

    from tomacs.benchmarks import BENCHMARKS

    # the shared keys first, then what is the adapter's own (benchmark=debates: its source's keys)
    own = [f.name for f in fields(BENCHMARKS.get(file.stem).Settings)]
    assert list(cfg) == own and own[: len(BENCHMARK_KEYS)] == list(BENCHMARK_KEYS)
    b = get_benchmark(cfg.pop("name"), **cfg)
    assert b.profile == cfg["profile"] and b.roles_key == cfg["roles"]
    assert (b.train_split, b.test_split) == (cfg["train_split"], cfg["test_split"])
    built = type(b)()  # an adapter built by hand takes the same defaults from its schema
    assert (built.profile, built.roles_key, built.train_split, built.test_subset, built.source) == (
        b.profile,
        b.roles_key,
        b.train_split,
        b.test_subset,
        b.source,
    )


def test_expected_config_files_exist() -> None:
    stems = {p.stem for p in CONF.glob("*.yaml")}
    assert stems >= {"synthetic", "synthetic_numeric", *REAL}
    assert _composed("mmlu")["test_subset"] == 153


# -- real data -------------------------------------------------------------------------------------


def test_row_counts_match_the_data_readme(data_dir: Path) -> None:
    def n(name: str, split: str, **cfg: object) -> int:
        return len(get_benchmark(name, path=str(data_dir), **cfg).load(split))

    assert (n("mmlu", "dev"), n("mmlu", "validation")) == (285, 1531)
    assert n("mmlu", "test", test_subset=None) == 14042
    assert (n("mmlu", "train"), n("mmlu", "test")) == (285, 153)
    assert (n("arc_c", "train"), n("arc_c", "validation"), n("arc_c", "test")) == (1119, 299, 1172)
    assert n("gsm8k", "train") + n("gsm8k", "validation") == 7473 and n("gsm8k", "test") == 1319
    obqa = (n("openbookqa", "train"), n("openbookqa", "validation"), n("openbookqa", "test"))
    assert obqa == (4957, 500, 500)
    assert (n("medqa", "train"), n("medqa", "validation"), n("medqa", "test")) == (246, 27, 1000)


@pytest.mark.parametrize("name", REAL)
def test_logical_splits_are_disjoint(name: str, data_dir: Path) -> None:
    b = get_benchmark(name, path=str(data_dir))
    ids = {s: {q.id for q in b.load(s)} for s in ("train", "validation", "test")}
    assert not ids["train"] & ids["test"] and not ids["train"] & ids["validation"]
    assert not ids["validation"] & ids["test"]


def test_mmlu_test_subset_is_the_fixed_seed_draw(data_dir: Path) -> None:
    t0 = time.perf_counter()
    qs = get_benchmark("mmlu", path=str(data_dir)).load("test")
    assert time.perf_counter() - t0 < 2.0  # the whole 14k-row split is checked, still fast
    rows = sorted(int(i) for i in np.random.default_rng(0).choice(14042, 153, replace=False))
    assert [q.meta["row"] for q in qs] == rows
    first = json.loads((data_dir / "mmlu" / "test.jsonl").open().readlines()[rows[0]])
    assert qs[0].text == first["question"].strip() and qs[0].answer == "ABCD"[first["answer"]]
    assert list(qs[0].options) == [c.strip() for c in first["choices"]]  # type: ignore[arg-type]


def test_arc_numeric_labels_map_to_letters_by_position(data_dir: Path) -> None:
    raw = {}
    for line in (data_dir / "arc_challenge" / "test.jsonl").open():
        row = json.loads(line)
        raw[row["id"]] = row
    qs = {q.meta["source_id"]: q for q in get_benchmark("arc_c", path=str(data_dir)).load("test")}
    numeric = [k for k, r in raw.items() if r["choices"]["label"][0] == "1"]
    assert len(numeric) == 22  # README: 22 test questions use labels 1-4
    for k in numeric:
        r, q = raw[k], qs[k]
        pos = r["choices"]["label"].index(r["answerKey"])
        assert q.answer == "ABCDE"[pos] and q.options[pos] == r["choices"]["text"][pos].strip()  # type: ignore[index]
        assert q.meta["source_labels"] == r["choices"]["label"]
    # hand-checked row: answerKey "2" -> B ("Kinetic energy increases and potential energy decreases.")
    q = qs["NYSEDREGENTS_2008_8_34"]
    assert raw["NYSEDREGENTS_2008_8_34"]["answerKey"] == "2" and q.answer == "B"
    assert q.options[1].startswith("Kinetic energy increases")  # type: ignore[index]
    sizes = {len(q.options or ()) for q in qs.values()}
    assert sizes >= {3, 4, 5}


def test_arc_validation_keeps_the_e_answer(data_dir: Path) -> None:
    qs = get_benchmark("arc_c", path=str(data_dir)).load("validation")
    e = [q for q in qs if q.answer == "E"]
    assert len(e) == 1 and len(e[0].options or ()) == 5


def test_gsm8k_gold_is_the_number_after_hashes(data_dir: Path) -> None:
    b = get_benchmark("gsm8k", path=str(data_dir))
    test = b.load("test")
    assert test[0].answer == "18"  # Janet's ducks: (16 - 3 - 4) * 2
    assert test[0].text.startswith("Janet")
    lines = (data_dir / "gsm8k" / "test.jsonl").open().readlines()
    for q in test:
        tail = json.loads(lines[q.meta["row"]])["answer"].rsplit("####", 1)[1].strip()
        assert q.answer == canonical_number(tail.replace(",", "")), q.id
    with_comma = [q for q in test if "," in json.loads(lines[q.meta["row"]])["answer"].rsplit("####", 1)[1]]
    assert with_comma and all("," not in q.answer for q in with_comma)
    assert all(candidate_answers(q) for q in test[:100])


def test_medqa_partition_is_fixed_and_options_in_letter_order(data_dir: Path) -> None:
    b = get_benchmark("medqa", path=str(data_dir))
    t1, t2 = b.load("test"), get_benchmark("medqa", path=str(data_dir)).load("test")
    assert [q.id for q in t1] == [q.id for q in t2]
    row = json.loads((data_dir / "medqa" / "test.jsonl").open().readline())
    q0 = [q for q in t1 + b.load("train") + b.load("validation") if q.meta["row"] == 0][0]
    assert q0.options == tuple(row["options"][k].strip() for k in "ABCD") and q0.answer == row["answer_idx"]


def test_size_sampling_is_seeded_and_a_subset(data_dir: Path) -> None:
    b = get_benchmark("openbookqa", path=str(data_dir))
    full = {q.id for q in b.load("train")}
    s1, s2, s3 = b.load("train", 20, 1), b.load("train", 20, 1), b.load("train", 20, 2)
    assert s1 == s2 and s1 != s3 and len(s1) == 20 and {q.id for q in s1} <= full
    # test subsets are the seed-0 draw for every run seed: seeds are scored on the same questions
    t1, t2 = b.load("test", 20, 1), b.load("test", 20, 2)
    assert t1 == t2 == b.load("test", 20, 0) and len(t1) == 20
    assert [q.id for q in t1] != [q.id for q in b.load("test")][:20]  # a draw, not the first rows


def test_tomacs_data_env_is_used_when_path_is_null(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOMACS_DATA", str(data_dir))
    assert len(get_benchmark("medqa", path=None).load("test", 5)) == 5


# -- errors ----------------------------------------------------------------------------------------


def _write(tmp: Path, dataset: str, split: str, lines: list[str]) -> Path:
    d = tmp / dataset
    d.mkdir(parents=True, exist_ok=True)
    f = d / f"{split}.jsonl"
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return f


GOOD_MMLU = json.dumps({"question": "Q?", "subject": "s", "choices": ["a", "b", "c", "d"], "answer": 1})


@pytest.mark.parametrize(
    ("dataset", "name", "bad", "field"),
    [
        ("mmlu", "mmlu", {"question": "Q?", "choices": ["a", "b", "c", "d"], "answer": 7}, "answer"),
        ("mmlu", "mmlu", {"question": "Q?", "choices": ["a", "b"], "answer": 0}, "choices"),
        ("mmlu", "mmlu", {"choices": ["a", "b", "c", "d"], "answer": 0}, "question"),
        (
            "arc_challenge",
            "arc_c",
            {
                "id": "x",
                "question": "Q?",
                "choices": {"text": ["a", "b", "c"], "label": ["1", "2", "3"]},
                "answerKey": "4",
            },
            "answerKey",
        ),
        ("gsm8k", "gsm8k", {"question": "Q?", "answer": "so it is 5"}, "answer"),
        (
            "medqa",
            "medqa",
            {"question": "Q?", "answer": "x", "options": {"A": "a", "C": "c"}, "answer_idx": "A"},
            "options",
        ),
    ],
)
def test_malformed_line_names_file_line_and_field(
    tmp_path: Path, dataset: str, name: str, bad: dict, field: str
) -> None:
    split = "test"
    good = {
        "mmlu": GOOD_MMLU,
        "arc_challenge": json.dumps(
            {
                "id": "g",
                "question": "Q?",
                "answerKey": "A",
                "choices": {"text": ["a", "b", "c"], "label": ["A", "B", "C"]},
            }
        ),
        "gsm8k": json.dumps({"question": "Q?", "answer": "ok\n#### 3"}),
        "medqa": json.dumps(
            {
                "question": "Q?",
                "answer": "a",
                "answer_idx": "A",
                "options": {"A": "a", "B": "b", "C": "c", "D": "d"},
            }
        ),
    }[dataset]
    f = _write(tmp_path, dataset, split, [good, "", json.dumps(bad)])
    b = get_benchmark(name, path=str(tmp_path), test_subset=None, train_split="x")
    with pytest.raises(BenchmarkDataError) as e:
        b.load("test")
    msg = str(e.value)
    assert f"{f}:3:" in msg and f"field '{field}'" in msg and "\n" not in msg


def test_invalid_json_names_file_and_line(tmp_path: Path) -> None:
    f = _write(tmp_path, "mmlu", "dev", [GOOD_MMLU, GOOD_MMLU, '{"question": "Q?", "choices": [', GOOD_MMLU])
    with pytest.raises(BenchmarkDataError, match=re.escape(f"{f}:3: field '<json>': invalid JSON")):
        get_benchmark("mmlu", path=str(tmp_path)).load("train")


def test_invalid_json_message_reads_once(tmp_path: Path) -> None:
    f = _write(tmp_path, "mmlu", "dev", ['{"question": "Q?", "choices": ["a'])
    with pytest.raises(BenchmarkDataError) as e:
        get_benchmark("mmlu", path=str(tmp_path)).load("train")
    assert "at at" not in str(e.value) and f"{f}:1:" in str(e.value)


def test_corrupted_line_far_from_the_sampled_rows_fails_at_load(data_dir: Path, tmp_path: Path) -> None:
    """A truncated line that no run would sample (the test subset is 153 fixed rows of 14,042) must
    still fail the load: a corrupted copy of a dataset is not something to run on."""
    sampled = {q.meta["row"] for q in get_benchmark("mmlu", path=str(data_dir)).load("test")}
    bad_row = 13000
    assert bad_row not in sampled
    lines = (data_dir / "mmlu" / "test.jsonl").read_text(encoding="utf-8").rstrip("\n").split("\n")
    lines[bad_row] = lines[bad_row][: len(lines[bad_row]) // 2]  # truncated mid-line
    f = _write(tmp_path, "mmlu", "test", lines)
    (tmp_path / "mmlu" / "dev.jsonl").write_text(GOOD_MMLU + "\n", encoding="utf-8")
    b = get_benchmark("mmlu", path=str(tmp_path))
    with pytest.raises(BenchmarkDataError) as e:
        b.load("test", size=5, seed=0)
    msg = str(e.value)
    assert msg.startswith(f"{f}:{bad_row + 1}: field '<json>': invalid JSON") and "\n" not in msg


def test_wrong_field_far_from_the_sampled_rows_fails_at_load(tmp_path: Path) -> None:
    rows = [GOOD_MMLU] * 50
    rows[10] = json.dumps({"question": "Q?", "choices": ["a", "b", "c", "d"], "answer": 7})  # not drawn
    f = _write(tmp_path, "mmlu", "test", rows)
    with pytest.raises(BenchmarkDataError, match=re.escape(f"{f}:11: field 'answer'")):
        get_benchmark("mmlu", path=str(tmp_path), test_subset=3).load("test")


def test_missing_file_says_how_to_get_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(BenchmarkFileMissing) as e:
        get_benchmark("gsm8k", path=str(tmp_path)).load("test")
    msg = str(e.value)
    assert "gsm8k/test.jsonl not found" in msg and "TOMACS_DATA" in msg and "benchmark.path" in msg
    assert "benchmark.source=hub" in msg and "\n" not in msg
    assert isinstance(e.value, FileNotFoundError)
    monkeypatch.delenv("TOMACS_DATA", raising=False)
    with pytest.raises(BenchmarkFileMissing, match="no data directory configured"):
        get_benchmark("mmlu", path=None).load("train")


def test_hub_source_refuses_when_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("TOMACS_ONLINE", raising=False)
    # the wording since issue 41 (item 5): the hint names TOMACS_ONLINE=1 (tests/test_newcomer.py checks it)
    with pytest.raises(BenchmarkFileMissing, match="source=hub but downloads are off: the tomacs command"):
        get_benchmark("gsm8k", source="hub").load("test")
