"""Adapters for the five real benchmarks of the TodyComm paper, read from local JSONL copies.

Data layout: ``<dir>/<dataset>/<split>.jsonl`` in the Hugging Face field schemas, where ``<dir>``
is ``benchmark.path`` or the environment variable ``TOMACS_DATA`` (the project ships a checked
copy under ``shared/data``; see its README for provenance and row counts). Nothing is ever
downloaded unless the user opts in with ``benchmark.source=hub`` and ``TOMACS_ONLINE=1`` (the CLI
sets HF_HUB_OFFLINE=1 otherwise; HF_HUB_OFFLINE must not be set),
in which case the same rows come from ``datasets.load_dataset``.

Split choices, and why:

* **MMLU** (``mmlu``): train on ``dev`` (285 rows, the few-shot split); test on a 153-question
  subset of ``test`` drawn with a fixed seed, the test size of the G-Designer line of work that
  TodyComm follows. The subset is ``sorted(numpy.random.default_rng(0).choice(n_rows, 153,
  replace=False))`` over row positions, identical for every run, method and seed.
* **ARC-Challenge** (``arc_c``), **GSM8K** (``gsm8k``), **OpenBookQA** (``openbookqa``): their own
  ``train`` / ``test`` splits.
* **MedQA** (``medqa``, 4-option USMLE): only ``test`` (1,273 rows) is available offline, so train
  and test are a seeded disjoint partition of it: a fixed permutation (seed 0) gives 273 training
  rows and 1,000 test rows. This is a departure from the paper, which does not state its split.

Validation (used to pick the best checkpoint): the dataset's own ``validation`` file for MMLU,
ARC-Challenge and OpenBookQA; GSM8K and MedQA have none, so a fixed-seed 10% (at most 300 rows) of
the training rows is held out and removed from 'train' (GSM8K: 7,173 train / 300 validation;
MedQA: 246 train / 27 validation / 1,000 test).

``size`` sampling: when ``size`` is smaller than a split, ``numpy.random.default_rng(seed)``
chooses which training or validation rows (returned in file order), and ``default_rng(0)`` which
test rows: the test questions never depend on the run seed (nor do the subsets and partitions
above), so the seeds of a sweep are scored on the same questions.

Normalisation: options become letters A.. by *position* (ARC sometimes labels them "1".."4"; its
answer key is mapped through the same position, so the answer stays consistent; 3-5 choices are
kept as they are). GSM8K's gold is the number after ``####`` with thousands commas removed, in
canonical form. Every malformed line raises ``BenchmarkDataError`` with one line
``<file>:<line>: field '<field>': <problem>``.

Loading parses and checks every row of a split, not only the rows a run samples, so a corrupted
line anywhere fails at once (the 7.5 MB MMLU test file takes about 0.1 s, once per process).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from tomacs.benchmarks.base import (
    BenchmarkAdapter,
    BenchmarkDataError,
    BenchmarkFileMissing,
    BenchmarkSettings,
)
from tomacs.benchmarks.parsing import canonical_number
from tomacs.types import LETTERS, Question, QuestionKind

__all__ = [
    "ARCChallenge",
    "GSM8K",
    "MMLU",
    "MedQA",
    "OpenBookQA",
    "SUBSET_SEED",
    "data_dir",
]

SUBSET_SEED = 0  # fixed seed for test subsets and shared-split partitions (never the run seed)
MAX_HELDOUT_VALIDATION = 300
_OFFLINE_VALUES = ("1", "true", "yes", "on")
_ONLINE_VALUES = ("1", "true", "True")  # TOMACS_ONLINE values the CLI takes (tomacs.cli._offline_env)


class _FieldError(Exception):
    def __init__(self, field: str, problem: str) -> None:
        super().__init__(problem)
        self.field = field
        self.problem = problem


def data_dir(path: str | None) -> Path | None:
    """The data directory: ``path`` if given, else ``$TOMACS_DATA``, else None."""
    p = path if path not in (None, "", "null", "None") else os.environ.get("TOMACS_DATA") or None
    return Path(p).expanduser() if p else None


# ---------------------------------------------------------------------------------------------
# field helpers: each raises _FieldError naming the field


def _get(row: Mapping[str, object], key: str) -> Any:
    if key not in row:
        raise _FieldError(key, "missing")
    return row[key]


def _text(row: Mapping[str, object], key: str) -> str:
    v = _get(row, key)
    if not isinstance(v, str) or not v.strip():
        raise _FieldError(key, f"expected a non-empty string, got {type(v).__name__} {str(v)[:40]!r}")
    return v.strip()


def _str_list(v: Any, field: str, lo: int, hi: int) -> list[str]:
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise _FieldError(field, f"expected a list of strings, got {str(v)[:60]!r}")
    if not lo <= len(v) <= hi:
        raise _FieldError(field, f"expected {lo}-{hi} entries, got {len(v)}")
    return [x.strip() for x in v]


def _labelled_choices(row: Mapping[str, object], key_field: str) -> tuple[tuple[str, ...], str, list[str]]:
    """ARC/OBQA ``choices: {text, label}`` + answer key -> (options, letter, original labels)."""
    choices = _get(row, "choices")
    if not isinstance(choices, dict):
        got = type(choices).__name__
        raise _FieldError("choices", f"expected an object with 'text' and 'label', got {got}")
    if "text" not in choices:
        raise _FieldError("choices.text", "missing")
    if "label" not in choices:
        raise _FieldError("choices.label", "missing")
    texts = _str_list(choices["text"], "choices.text", 3, 5)
    labels = [str(x).strip() for x in _str_list(choices["label"], "choices.label", 3, 5)]
    if len(texts) != len(labels):
        raise _FieldError("choices", f"{len(texts)} texts but {len(labels)} labels")
    if len(set(labels)) != len(labels):
        raise _FieldError("choices.label", f"duplicate labels {labels}")
    key = _get(row, key_field)
    key = str(key).strip() if isinstance(key, str | int) and not isinstance(key, bool) else None
    if key is None or key not in labels:
        raise _FieldError(key_field, f"{row.get(key_field)!r} is not one of the labels {labels}")
    return tuple(texts), LETTERS[labels.index(key)], labels


# ---------------------------------------------------------------------------------------------
# the shared loader


class _JsonlAdapter(BenchmarkAdapter):
    """Reads ``<dir>/<dir_name>/<split>.jsonl`` (or the hub) and selects rows without parsing the rest."""

    dir_name: ClassVar[str] = ""
    hub: ClassVar[tuple[str, str | None]] = ("", None)
    shared_train_size: ClassVar[int | None] = None  # rows for train when train_split == test_split
    validation_split: ClassVar[str | None] = "validation"  # None: validation is held out of train

    def _convert(self, row: Mapping[str, object], split: str, index: int) -> Question:
        raise NotImplementedError

    # -- public --------------------------------------------------------------------------------
    def load(self, split: str, size: int | None = None, seed: int = 0) -> list[Question]:
        """Logical 'train' | 'validation' | 'test' (mapped as the module docstring says) or a raw split."""
        logical = split in ("train", "test") or (split == "validation" and self.validation_split is None)
        if logical:
            file_split = self.test_split if split == "test" else self.train_split
            source = _RowSource.open(self, file_split)
            positions = self._logical_positions(split, source.n_rows)
        else:  # a raw file split; 'validation' reads the dataset's own validation file
            raw = (
                self.validation_split
                if split == "validation" and self.validation_split is not None
                else split
            )
            source = _RowSource.open(self, raw)
            positions = list(range(source.n_rows))
        if size is not None:
            if int(size) < 0:
                raise ValueError(f"benchmark '{self.name}': size must be >= 0, got {size}")
            if int(size) < len(positions):
                # a test subset is the same for every run seed (a fixed test set, as the papers use):
                # seeds then differ in training and sampling, not in which questions are scored
                sub = SUBSET_SEED if split == "test" else int(seed)
                pick = np.random.default_rng(sub).choice(len(positions), int(size), replace=False)
                positions = [positions[int(i)] for i in sorted(pick)]
        return source.read(positions)

    def _logical_positions(self, split: str, n_rows: int) -> list[int]:
        """Row positions of a logical split, all drawn with fixed seeds so every run sees the same rows."""
        positions = list(range(n_rows))
        if self.train_split == self.test_split:
            positions = self._shared_partition(n_rows)[1 if split == "test" else 0]
        if split == "test":
            if self.test_subset is not None and self.test_subset < len(positions):
                rng = np.random.default_rng(SUBSET_SEED)
                pick = rng.choice(len(positions), self.test_subset, replace=False)
                positions = [positions[int(i)] for i in sorted(pick)]
            return positions
        if self.validation_split is None:  # no validation file: hold out part of the training rows
            n_val = min(max(1, len(positions) // 10), MAX_HELDOUT_VALIDATION)
            perm = np.random.default_rng(SUBSET_SEED + 1).permutation(len(positions))
            val = {int(i) for i in perm[:n_val]}
            positions = [p for i, p in enumerate(positions) if (i in val) == (split == "validation")]
        return positions

    def _shared_partition(self, n_rows: int) -> tuple[list[int], list[int]]:
        """Disjoint train/test row positions when a dataset has one usable split (MedQA)."""
        k = self.shared_train_size if self.shared_train_size is not None else n_rows // 5
        k = min(k, n_rows // 2)
        perm = np.random.default_rng(SUBSET_SEED).permutation(n_rows)
        return sorted(int(i) for i in perm[:k]), sorted(int(i) for i in perm[k:])

    def file_path(self, split: str) -> Path | None:
        """Where the local JSONL file of a file split lives (None when no directory is configured)."""
        d = data_dir(self.path)
        return None if d is None else d / self.dir_name / f"{split}.jsonl"

    def _how_to_get(self) -> str:
        # the data directory's own README (layout, provenance) where it has one, by its real path
        d = data_dir(self.path)
        readme = d / "README.md" if d is not None else None
        see = f"; see {readme.resolve()}" if readme is not None and readme.is_file() else ""
        return (
            f"set benchmark.path=<dir> or TOMACS_DATA=<dir> with files <dir>/{self.dir_name}/<split>.jsonl "
            f"(the Hugging Face dataset's fields{see}), or download from the Hugging Face hub with "
            f"benchmark.source=hub (needs network and TOMACS_ONLINE=1)"
        )


class _RowSource:
    """Rows of one split: line positions of a JSONL file, or an in-memory list from the hub."""

    def __init__(
        self,
        adapter: _JsonlAdapter,
        split: str,
        label: str,
        n_rows: int,
        file: Path | None,
        questions: list[Question],
    ) -> None:
        self.adapter, self.split, self.label = adapter, split, label
        self.n_rows, self.file, self.questions = n_rows, file, questions

    @classmethod
    def open(cls, adapter: _JsonlAdapter, split: str) -> _RowSource:
        if adapter.source == "hub":
            rows = _hub_rows(adapter, split)
            repo, config = adapter.hub
            label = f"hub:{repo}/{config or 'default'}/{split}"
            questions = [_convert_row(adapter, split, r, i, f"{label} row {i}") for i, r in enumerate(rows)]
            return cls(adapter, split, label, len(questions), None, questions)
        file = adapter.file_path(split)
        if file is None:
            raise BenchmarkFileMissing(
                f"benchmark '{adapter.name}': no data directory configured; {adapter._how_to_get()}"
            )
        if not file.is_file():
            have = sorted(p.stem for p in file.parent.glob("*.jsonl")) if file.parent.is_dir() else []
            extra = f" (available splits there: {', '.join(have)})" if have else ""
            raise BenchmarkFileMissing(
                f"benchmark '{adapter.name}': {file} not found{extra}; {adapter._how_to_get()}"
            )
        stat = file.stat()
        key = (type(adapter), adapter.name, split, str(file.resolve()), stat.st_mtime_ns, stat.st_size)
        cached = _VALIDATED.get(key)
        if cached is not None:
            questions = cached
        else:
            questions = _validated_file(adapter, split, file)
            if len(_VALIDATED) >= _VALIDATED_MAX:
                _VALIDATED.pop(next(iter(_VALIDATED)))
            _VALIDATED[key] = questions
        return cls(adapter, split, str(file), len(questions), file, questions)

    def read(self, positions: list[int]) -> list[Question]:
        return [self.questions[p] for p in positions]


# A split is validated whole once per process (train/validation of one file, every seed of a sweep
# job, the propagation analysis re-loading the test set): keyed on the file's identity and mtime.
_VALIDATED: dict[tuple[Any, ...], list[Question]] = {}
_VALIDATED_MAX = 16


def _validated_file(adapter: _JsonlAdapter, split: str, file: Path) -> list[Question]:
    """Every non-blank line parsed and converted, so a broken row fails the load wherever it is,
    not only when a run happens to sample it (about 0.1 s for MMLU's 14k-row test file)."""
    out: list[Question] = []
    try:
        with file.open("r", encoding="utf-8", newline="") as f:
            for lineno, line in enumerate(f, start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as e:
                    raise BenchmarkDataError(
                        f"{file}:{lineno}: field '<json>': invalid JSON ({e.msg}: column {e.colno})"
                    ) from None
                out.append(_convert_row(adapter, split, row, len(out), f"{file}:{lineno}"))
    except UnicodeDecodeError:  # raised for a whole read-ahead chunk: find the line it is on
        raise BenchmarkDataError(_not_utf8(file)) from None
    return out


def _not_utf8(file: Path) -> str:
    """The first line of a file that is not UTF-8, named as the JSON errors are (file:line)."""
    with file.open("rb") as f:
        for lineno, raw in enumerate(f, start=1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as e:
                return (
                    f"{file}:{lineno}: not UTF-8 text (byte 0x{raw[e.start]:02x} at column {e.start + 1}); "
                    "a JSONL data file must be UTF-8: re-export it, or remove that line"
                )
    return f"{file}: not UTF-8 text; a JSONL data file must be UTF-8"


def _convert_row(adapter: _JsonlAdapter, split: str, row: Any, pos: int, where: str) -> Question:
    if not isinstance(row, dict):
        raise BenchmarkDataError(f"{where}: field '<row>': expected a JSON object, got {type(row).__name__}")
    try:
        return adapter._convert(row, split, pos)
    except _FieldError as e:
        raise BenchmarkDataError(f"{where}: field '{e.field}': {e.problem}") from None


def _hub_rows(adapter: _JsonlAdapter, split: str) -> list[dict[str, object]]:
    """Rows from the Hugging Face hub; only on explicit opt-in (source=hub, TOMACS_ONLINE=1, HF_HUB_OFFLINE
    unset)."""
    repo, config = adapter.hub
    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in _OFFLINE_VALUES:
        # the tomacs command sets HF_HUB_OFFLINE=1 itself unless TOMACS_ONLINE=1 (tomacs.cli._offline_env):
        # unsetting it would not help there
        if os.environ.get("TOMACS_ONLINE", "") in _ONLINE_VALUES:
            fix = "HF_HUB_OFFLINE is set in your environment; unset it (TOMACS_ONLINE=1 is set)"
        else:
            fix = (
                "the tomacs command sets HF_HUB_OFFLINE=1 unless TOMACS_ONLINE=1; run it with "
                "TOMACS_ONLINE=1 (and HF_HUB_OFFLINE not set in your environment)"
            )
        raise BenchmarkFileMissing(
            f"benchmark '{adapter.name}': benchmark.source=hub but downloads are off: {fix} to "
            f"download {repo}, or use local files: {adapter._how_to_get()}"
        )
    try:
        import datasets  # lazy: heavy, and only needed on the opt-in path
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise BenchmarkFileMissing(
            f"benchmark '{adapter.name}': benchmark.source=hub needs the 'datasets' package ({e})"
        ) from None
    try:
        ds = datasets.load_dataset(repo, config, split=split)
    except Exception as e:  # noqa: BLE001 - network/hub errors come in many types
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise BenchmarkFileMissing(
            f"benchmark '{adapter.name}': could not load {repo} ({config}) split '{split}' "
            f"from the hub: {msg}"
        ) from None
    return [dict(r) for r in ds]


# ---------------------------------------------------------------------------------------------
# the five adapters and their settings (conf/benchmark/<name>.yaml extends each; BenchmarkSettings
# holds the keys' shared defaults)


@dataclass
class MMLUSettings(BenchmarkSettings):
    name: str = "mmlu"
    train_split: str = "dev"  # 285 questions; validation = the `validation` file
    test_subset: int | None = 153  # the fixed subset of the G-Designer line of work


@dataclass
class ARCSettings(BenchmarkSettings):
    name: str = "arc_c"
    profile: str = "arc_c"


@dataclass
class OpenBookQASettings(BenchmarkSettings):
    name: str = "openbookqa"
    profile: str = "openbookqa"


@dataclass
class GSM8KSettings(BenchmarkSettings):
    name: str = "gsm8k"  # validation = 300 rows held out of train
    profile: str = "gsm8k"


@dataclass
class MedQASettings(BenchmarkSettings):
    name: str = "medqa"
    profile: str = "medqa"
    # only `test` exists offline: train_split == test_split means a fixed disjoint partition
    # (246 train / 27 validation / 1000 test)
    train_split: str = "test"


class MMLU(_JsonlAdapter):
    """MMLU (57 subjects, 4 options). Train = ``dev``; test = fixed 153-question subset of ``test``."""

    Settings = MMLUSettings
    dir_name: ClassVar[str] = "mmlu"
    hub: ClassVar[tuple[str, str | None]] = ("cais/mmlu", "all")

    def _convert(self, row: Mapping[str, object], split: str, index: int) -> Question:
        text = _text(row, "question")
        choices = _str_list(_get(row, "choices"), "choices", 4, 4)
        ans = _get(row, "answer")
        if isinstance(ans, bool) or not isinstance(ans, int) or not 0 <= ans < len(choices):
            raise _FieldError("answer", f"expected an int 0-{len(choices) - 1}, got {ans!r}")
        subject = row.get("subject")
        return Question(
            id=f"mmlu-{split}-{index:05d}",
            text=text,
            options=tuple(choices),
            answer=LETTERS[ans],
            benchmark=self.name,
            kind="mc",
            meta={"subject": subject if isinstance(subject, str) else None, "split": split, "row": index},
        )


class _LabelledMC(_JsonlAdapter):
    """ARC / OpenBookQA: ``choices: {text, label}`` and a label-valued ``answerKey``."""

    stem_field: ClassVar[str] = "question"

    def _convert(self, row: Mapping[str, object], split: str, index: int) -> Question:
        text = _text(row, self.stem_field)
        options, answer, labels = _labelled_choices(row, "answerKey")
        rid = row.get("id")
        rid = str(rid) if isinstance(rid, str | int) and str(rid) else f"{index:05d}"
        meta: dict[str, Any] = {"source_id": rid, "split": split, "row": index}
        if labels != list(LETTERS[: len(labels)]):
            meta["source_labels"] = labels
        return Question(
            id=f"{self.name}-{split}-{rid}",
            text=text,
            options=options,
            answer=answer,
            benchmark=self.name,
            kind="mc",
            meta=meta,
        )


class ARCChallenge(_LabelledMC):
    """ARC-Challenge. Labels "1".."4" are mapped to letters by position; 3-5 choices kept."""

    Settings = ARCSettings
    dir_name: ClassVar[str] = "arc_challenge"
    hub: ClassVar[tuple[str, str | None]] = ("allenai/ai2_arc", "ARC-Challenge")
    stem_field: ClassVar[str] = "question"


class OpenBookQA(_LabelledMC):
    """OpenBookQA (HF config ``main``): the question is in ``question_stem``."""

    Settings = OpenBookQASettings
    dir_name: ClassVar[str] = "openbookqa"
    hub: ClassVar[tuple[str, str | None]] = ("allenai/openbookqa", "main")
    stem_field: ClassVar[str] = "question_stem"


def gsm8k_gold(answer: str) -> str | None:
    """The canonical number after the last ``####`` of a GSM8K solution ('1,234' -> '1234')."""
    if "####" not in answer:
        return None
    tail = answer.rsplit("####", 1)[1].strip().replace(",", "")
    return canonical_number(tail) if tail else None


class GSM8K(_JsonlAdapter):
    """GSM8K grade-school math; gold = the number after ``####``."""

    Settings = GSM8KSettings
    default_kind: ClassVar[QuestionKind] = "numeric"
    dir_name: ClassVar[str] = "gsm8k"
    hub: ClassVar[tuple[str, str | None]] = ("openai/gsm8k", "main")
    validation_split: ClassVar[str | None] = None

    def _convert(self, row: Mapping[str, object], split: str, index: int) -> Question:
        text = _text(row, "question")
        solution = _text(row, "answer")
        gold = gsm8k_gold(solution)
        if gold is None:
            raise _FieldError("answer", f"no number after '####' in {solution[-60:]!r}")
        return Question(
            id=f"gsm8k-{split}-{index:05d}",
            text=text,
            options=None,
            answer=gold,
            benchmark=self.name,
            kind="numeric",
            meta={"split": split, "row": index},
        )


class MedQA(_JsonlAdapter):
    """MedQA-USMLE, 4 options. Only ``test`` exists offline: train = 273 seeded rows, test = 1,000 others."""

    Settings = MedQASettings
    shared_train_size: ClassVar[int | None] = 273
    dir_name: ClassVar[str] = "medqa"
    hub: ClassVar[tuple[str, str | None]] = ("GBaker/MedQA-USMLE-4-options", None)
    validation_split: ClassVar[str | None] = None

    def _convert(self, row: Mapping[str, object], split: str, index: int) -> Question:
        text = _text(row, "question")
        options = _get(row, "options")
        if not isinstance(options, dict) or not all(isinstance(v, str) for v in options.values()):
            raise _FieldError("options", f"expected an object letter -> text, got {str(options)[:60]!r}")
        keys = sorted(options)
        if keys != list(LETTERS[: len(keys)]) or not 3 <= len(keys) <= 5:
            raise _FieldError("options", f"expected consecutive letters A.. (3-5 options), got {keys}")
        idx = _get(row, "answer_idx")
        if not isinstance(idx, str) or idx.strip() not in options:
            raise _FieldError("answer_idx", f"{idx!r} is not one of {keys}")
        return Question(
            id=f"medqa-{split}-{index:05d}",
            text=text,
            options=tuple(options[k].strip() for k in keys),
            answer=idx.strip(),
            benchmark=self.name,
            kind="mc",
            meta={"split": split, "row": index},
        )
