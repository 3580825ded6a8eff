"""A transcript source's own questions as a benchmark: the simulator in the source's protocol.

Why: a profile fitted from real debates says how that model's agents move, but on MMLU its adversaries
argue different option texts from question to question. Some sources fix what an adversary argues
(MAD-Follower's attacker always rates the behaviour "Mostly acceptable"), so a detector of real debates
reads a stance that MMLU cannot give. Simulating the source's own questions, with its options and its
target rule (`attack.target_letters`), puts that stance in the simulated debates too.

Which questions: those of `part` in calibrate's split by question (`split`, `split_seed`, and `model`,
the honest agents' model; or `fold`, k/K, for one fit of a cross-fit): `fit` (the default) are the
questions a profile fitted with the same split saw, so the held-out real debates stay unseen by the
simulated side. Each question is offered `repeats` times, as a source repeats its runs; the copies share
one simulated latent (the question's difficulty and lure, `Question.meta[SAME_QUESTION]`) and differ in
their draws. Train, validation and test read the same
questions in disjoint copies: the judgement of a policy trained here is the replay on the source's
held-out real debates (`tomacs replay`), not this test split.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from tomacs.benchmarks.base import (
    SAME_QUESTION,
    BenchmarkAdapter,
    BenchmarkDataError,
    BenchmarkFileMissing,
    BenchmarkSettings,
)
from tomacs.benchmarks.real import SUBSET_SEED, data_dir
from tomacs.transcripts.schema import Debate
from tomacs.transcripts.split import parse_fold
from tomacs.types import LETTERS, Question

__all__ = ["PARTS", "DebateQuestions", "DebatesSettings"]

PARTS = ("fit", "held_out", "all")
SPLITS = ("train", "validation", "test")


@dataclass
class DebatesSettings(BenchmarkSettings):
    name: str = "debates"
    # a transcript file or folder any registered format reads (tomacs transcripts formats); relative to
    # `path` (the data directory, $TOMACS_DATA) unless absolute
    transcripts: str = "debates/mad-follower"
    model: str | None = None  # only debates whose honest agents ran on this model; null = all
    part: str = "fit"  # fit | held_out | all: calibrate's split by question (--split, --split-seed)
    split: float = 0.7  # calibrate's --split: the fitting share of the questions
    split_seed: int = 0  # calibrate's --split-seed
    fold: str | None = None  # sim fit-episodes' --fold k/K (a cross-fit): replaces `split`
    repeats: int = 1  # copies of each question per split (a source's repeated runs)
    # true: `repeats` copies per debate the source ran on the question, so each question weighs in the run as
    # in the source (MAD-Follower ran qwen3-8b's ten questions off the answer scale 4 times, its 30 on it 2.4)
    per_debate: bool = False
    # only the source's debates of this many rounds (their questions, and with per_debate their count): set
    # it with the run's `rounds`, one run per round count the source has, to simulate a source that mixes
    # them; null = every debate
    rounds: int | None = None
    train_split: str = "train"  # whose copies training reads: train | validation | test
    test_split: str = "test"  # whose copies the test reads


class DebateQuestions(BenchmarkAdapter):
    """The questions of real debates (text, options, gold), for a simulated run in their protocol."""

    Settings = DebatesSettings
    own_keys: ClassVar[tuple[str, ...]] = (
        "transcripts",
        "model",
        "part",
        "split",
        "split_seed",
        "fold",
        "repeats",
        "per_debate",
        "rounds",
    )

    def __init__(self, **cfg: Any) -> None:
        d = DebatesSettings
        own = {k: cfg.pop(k) for k in self.own_keys if k in cfg}
        super().__init__(**cfg)
        self.transcripts = str(own.get("transcripts") or d.transcripts)
        model = own.get("model", d.model)
        self.model = None if model in (None, "", "null", "None") else str(model)
        self.part = str(own.get("part", d.part))
        if self.part not in PARTS:
            raise ValueError(f"benchmark 'debates': part={self.part!r} is not one of {', '.join(PARTS)}")
        self.split = float(own.get("split", d.split))
        if not 0.0 < self.split < 1.0:
            raise ValueError(f"benchmark 'debates': split={self.split} must be between 0 and 1 (exclusive)")
        self.split_seed = int(own.get("split_seed", d.split_seed))
        fold = own.get("fold", d.fold)
        try:
            self.fold = parse_fold(None if fold in (None, "", "null", "None") else str(fold))
        except ValueError as exc:
            raise ValueError(f"benchmark 'debates': fold={fold!r}: {exc}") from None
        self.repeats = int(own.get("repeats", d.repeats))
        if self.repeats < 1:
            raise ValueError(f"benchmark 'debates': repeats={self.repeats} must be at least 1")
        self.per_debate = bool(own.get("per_debate", d.per_debate))
        rounds = own.get("rounds", d.rounds)
        self.rounds = None if rounds in (None, "", "null", "None") else int(str(rounds))
        if self.rounds is not None and self.rounds < 1:
            raise ValueError(f"benchmark 'debates': rounds={self.rounds} must be at least 1 (or null: all)")
        for key in ("train_split", "test_split"):
            if getattr(self, key) not in SPLITS:
                raise ValueError(
                    f"benchmark 'debates': {key}={getattr(self, key)!r} is not one of {', '.join(SPLITS)}"
                )
        self._questions: list[Question] | None = None

    def source_path(self) -> Path:
        """The transcripts, absolute or under the data directory."""
        p = Path(self.transcripts).expanduser()
        if p.is_absolute():
            return p
        base = data_dir(self.path)
        return p if base is None else base / p

    def questions(self) -> list[Question]:
        """One record per question of the chosen part, in the order of its question key."""
        if self._questions is None:
            self._questions = self._read()
        return self._questions

    def _read(self) -> list[Question]:
        from tomacs.transcripts import TranscriptError, load_debates
        from tomacs.transcripts.split import select_debates, split_questions

        src = self.source_path()
        if not src.exists():
            raise BenchmarkFileMissing(
                f"benchmark 'debates': no transcripts at {src}; set benchmark.transcripts=<file or folder> "
                "(relative to benchmark.path or $TOMACS_DATA, or absolute)"
            )
        try:
            debates = load_debates(src)
        except TranscriptError as exc:
            raise BenchmarkDataError(str(exc)) from None
        try:
            debates = select_debates(debates, self.model)
        except ValueError as exc:
            raise BenchmarkDataError(f"benchmark 'debates': {src}: {exc}") from None
        if self.part != "all":  # split on every debate, as calibrate does, before `rounds` picks some
            fit, held = split_questions(debates, self.split, self.split_seed, self.fold)
            debates = fit if self.part == "fit" else held
        if self.rounds is not None:
            have = sorted({d.n_rounds for d in debates})
            debates = [d for d in debates if d.n_rounds == self.rounds]
            if not debates:
                raise BenchmarkDataError(
                    f"benchmark 'debates': {src}: no debate of rounds={self.rounds} in part {self.part!r}; "
                    f"its debates have {', '.join(map(str, have))} rounds (or set benchmark.rounds=null)"
                )
        first: dict[str, Debate] = {}
        count: dict[str, int] = {}
        for d in debates:
            first.setdefault(d.question_key, d)
            count[d.question_key] = count.get(d.question_key, 0) + 1
        return [self._question(key, first[key], count[key]) for key in sorted(first)]

    def _question(self, key: str, d: Debate, debates: int = 1) -> Question:
        where = f"benchmark 'debates': {self.source_path()}: debate {d.id!r}"
        if not d.question or d.options is None:
            raise BenchmarkDataError(
                f"{where}: field 'question'/'options': a simulated debate needs the question's text and "
                "options, which this source lacks; use one that has them (MAD-Follower, multi-agent-attack)"
            )
        if tuple(d.letters) != tuple(LETTERS[: len(d.letters)]):
            raise BenchmarkDataError(f"{where}: field 'letters': {list(d.letters)} are not A, B, ... in turn")
        qid = d.question_id or d.id
        return Question(
            id=f"debates-{qid}",
            text=d.question,
            options=tuple(d.options),
            answer=d.gold,
            benchmark=self.name,
            kind="mc",
            meta={
                SAME_QUESTION: key,
                "source": d.source,
                "question_id": qid,
                "of": d.meta.get("benchmark"),
                "debates": debates,  # the source's debates of it (of `rounds` rounds where set)
            },
        )

    def copies(self, q: Question) -> int:
        """How many copies of `q` each split holds: `repeats`, times its source debates under `per_debate`."""
        return self.repeats * (int(q.meta.get("debates", 1)) if self.per_debate else 1)

    def load(self, split: str, size: int | None = None, seed: int = 0) -> list[Question]:
        """`copies` of every question, the copies of `split` only (disjoint between splits)."""
        if split not in SPLITS:
            raise ValueError(f"benchmark 'debates': split {split!r} is not one of {', '.join(SPLITS)}")
        block = {"train": self.train_split, "test": self.test_split}.get(split, split)
        base = self.questions()
        n = {q.id: self.copies(q) for q in base}
        out = []
        for r in range(max(n.values(), default=0)):  # copy by copy, as `repeats` alone did
            for q in base:
                if r < n[q.id]:
                    k = SPLITS.index(block) * n[q.id] + r + 1
                    out.append(replace(q, id=f"{q.id}#{k}", meta={**q.meta, "repeat": k, "split": block}))
        if size is not None:
            if int(size) < 0:
                raise ValueError(f"benchmark 'debates': size must be >= 0, got {size}")
            if int(size) < len(out):
                sub = SUBSET_SEED if split == "test" else int(seed)  # one test set for every run seed
                pick = np.random.default_rng(sub).choice(len(out), int(size), replace=False)
                out = [out[int(i)] for i in sorted(pick)]
        return out

    def config(self) -> dict[str, object]:
        cfg = super().config()
        cfg.update({k: getattr(self, k) for k in self.own_keys})
        cfg["questions"] = len(self.questions()) if self._questions is not None else None
        return cfg
