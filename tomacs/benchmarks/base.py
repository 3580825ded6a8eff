"""The benchmark adapter interface, its registry, and the candidate-answer space.

An adapter turns one dataset into ``Question`` records and says which simulator profile and role
pool fit it; everything downstream (executor, methods, metrics) sees only ``Question``s, so every
method is compared on identical items.

Candidate answers exist because the behavioural simulator and the adversary need a *finite*
answer space: for multiple choice it is the option letters; for numeric questions it is the gold
plus four plausible slips (off by one step, x10, sign, ...) derived deterministically from the
gold and the question id, so the same question always offers the same wrong answers in every run,
method and seed. The adversary's shared wrong target is drawn from ``wrong_answers``.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from dataclasses import dataclass, fields
from decimal import Decimal
from typing import Any, ClassVar

import numpy as np

from tomacs.benchmarks.parsing import canonical_number, numbers_equal
from tomacs.registry import Registry
from tomacs.seeding import stable_seed
from tomacs.types import Question, QuestionKind

__all__ = [
    "BENCHMARKS",
    "BENCHMARK_KEYS",
    "BenchmarkAdapter",
    "BenchmarkSettings",
    "BenchmarkDataError",
    "BenchmarkFileMissing",
    "SAME_QUESTION",
    "available_benchmarks",
    "candidate_answers",
    "get_benchmark",
    "truth_index",
    "wrong_answers",
]


@dataclass
class BenchmarkSettings:
    """The keys of a benchmark config, their types and defaults: the schema conf/benchmark/<name>.yaml
    extends (`defaults: [/schema/benchmark/<name>@_here_, _self_]`), so a yaml keeps only what differs.
    An adapter's `Settings` subclasses it with what is that adapter's (its name, profile, splits); the
    defaults are written there only and the adapter reads them when a key is not given."""

    name: str = ""  # the registry name (BENCHMARKS) and Question.benchmark
    profile: str = (
        "mmlu"  # simulator profile (conf/backbone/sim.yaml): mmlu | arc_c | gsm8k | openbookqa | medqa
    )
    variant: str | None = None  # synthetic only: mc | numeric
    # the data directory: <path>/<dataset>/<split>.jsonl; null = none ($TOMACS_DATA unset)
    path: str | None = "${oc.env:TOMACS_DATA,null}"
    source: str = "local"  # local | hub (needs network and TOMACS_ONLINE=1) | generated (synthetic)
    train_split: str = "train"  # the file split training (and validation, if held out) reads
    test_split: str = "test"
    test_subset: int | None = None  # a fixed test subset of this many questions; null = the whole split
    roles: str = "${.profile}"  # role pool (tomacs.agents.roles); by default the profile's


# Keys every conf/benchmark/*.yaml carries: the schema's fields.
BENCHMARK_KEYS = tuple(f.name for f in fields(BenchmarkSettings))
SOURCES = ("local", "hub", "generated")
SAME_QUESTION = "same_question"
"""`Question.meta` key: copies of one question (a source's repeats, tomacs.transcripts.benchmark) share the
simulator's latent of the question (its difficulty and lure), which is otherwise keyed by the id."""
N_NUMERIC_CANDIDATES = 5


class _Unset:
    """Marks a config key that was not given (None is a real value: 'no test subset')."""

    def __repr__(self) -> str:
        return "<unset>"


_UNSET = _Unset()


class BenchmarkDataError(ValueError):
    """A dataset file is malformed or unusable; the message is one line naming file, line, field."""


class BenchmarkFileMissing(BenchmarkDataError, FileNotFoundError):
    """A dataset file is absent; the message says how to provide it."""


class BenchmarkAdapter(ABC):
    """One dataset as a source of ``Question``s.

    Attributes: ``name`` (registry key, also ``Question.benchmark``), ``profile`` (simulator
    profile: mmlu|arc_c|gsm8k|openbookqa|medqa), ``kind`` (mc|numeric) and ``roles_key`` (which
    role pool of ``tomacs.agents`` applies). Config keys and their defaults are the adapter's
    ``Settings`` (a ``BenchmarkSettings`` subclass; ``BENCHMARK_KEYS``); an unknown key is
    an error so that a typo in a sweep does not silently run the default. ``test_subset`` left out
    means the adapter's default (MMLU: 153); an explicit None means the whole test split.
    """

    name: ClassVar[str]  # set from Settings.name (__init_subclass__)
    Settings: ClassVar[type[BenchmarkSettings]] = BenchmarkSettings
    default_kind: ClassVar[QuestionKind] = "mc"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """An adapter's name is its schema's (`Settings.name`), written there only."""
        super().__init_subclass__(**kwargs)
        named = cls.__dict__.get("Settings")
        if named is not None and named.name:
            cls.name = named.name

    def __init__(
        self,
        *,
        name: str | None = None,
        profile: str | None = None,
        variant: str | None = None,
        path: str | None = None,
        source: str | None = None,
        train_split: str | None = None,
        test_split: str | None = None,
        test_subset: int | None | _Unset = _UNSET,
        roles: str | None = None,
        **unknown: Any,
    ) -> None:
        if unknown:
            raise ValueError(
                f"benchmark '{self.name}': unknown config key(s) {', '.join(sorted(unknown))}; "
                f"valid: {', '.join(f.name for f in fields(self.Settings))}"
            )
        if name is not None and name != self.name:
            raise ValueError(f"benchmark config name '{name}' does not match adapter '{self.name}'")
        if source is not None and source not in SOURCES:
            raise ValueError(
                f"benchmark '{self.name}': source must be one of {', '.join(SOURCES)}, got '{source}'"
            )
        d = self.Settings  # the schema's defaults, for a key not given (an adapter built by hand)
        if isinstance(test_subset, _Unset):
            test_subset = d.test_subset  # key absent: the adapter's paper default
        if test_subset is not None and int(test_subset) <= 0:
            raise ValueError(f"benchmark '{self.name}': test_subset must be a positive int or null")
        self.variant = variant
        self.profile: str = profile or d.profile
        self.kind: QuestionKind = self.default_kind
        self.roles_key: str = roles or self.profile
        self.path = None if path in (None, "", "null", "None") else str(path)
        self.source = source or d.source
        self.train_split = train_split or d.train_split
        self.test_split = test_split or d.test_split
        self.test_subset: int | None = None if test_subset is None else int(test_subset)

    @abstractmethod
    def load(self, split: str, size: int | None = None, seed: int = 0) -> list[Question]:
        """Questions of a split ('train' | 'validation' | 'test', or a raw file split name).

        ``size`` caps the number of questions (None = all); when it truncates, ``seed`` chooses
        which ones. Callers that want one evaluation set across run seeds pass a fixed seed.
        """

    def config(self) -> dict[str, object]:
        """The effective configuration, for results.json."""
        return {
            "name": self.name,
            "profile": self.profile,
            "variant": self.variant,
            "path": self.path,
            "source": self.source,
            "train_split": self.train_split,
            "test_split": self.test_split,
            "test_subset": self.test_subset,
            "roles": self.roles_key,
            "kind": self.kind,
        }

    def __repr__(self) -> str:
        return f"{type(self).__name__}(profile={self.profile!r}, kind={self.kind!r})"


# ---------------------------------------------------------------------------------------------
# registry

# Adapter name -> class, as "module:class" strings imported on first use: this module never imports
# the adapters that subclass it (no import circle). A new benchmark adds one line here.
BENCHMARKS: Registry[type[BenchmarkAdapter]] = Registry(
    "benchmark",
    {
        "synthetic": "tomacs.benchmarks.synthetic:SyntheticBenchmark",
        "synthetic_numeric": "tomacs.benchmarks.synthetic:SyntheticNumericBenchmark",
        "mmlu": "tomacs.benchmarks.real:MMLU",
        "arc_c": "tomacs.benchmarks.real:ARCChallenge",
        "openbookqa": "tomacs.benchmarks.real:OpenBookQA",
        "gsm8k": "tomacs.benchmarks.real:GSM8K",
        "medqa": "tomacs.benchmarks.real:MedQA",
        "debates": "tomacs.transcripts.benchmark:DebateQuestions",
    },
)


def available_benchmarks() -> list[str]:
    """Registered benchmark names, sorted."""
    return BENCHMARKS.names()


def get_benchmark(name: str, **cfg: Any) -> BenchmarkAdapter:
    """Build the adapter registered as ``name`` from config keys (see ``BENCHMARK_KEYS``)."""
    cls = BENCHMARKS.get(name)
    cfg.pop("name", None)
    return cls(name=name, **cfg)


# ---------------------------------------------------------------------------------------------
# candidate answers


def _fmt(d: Decimal) -> str | None:
    return canonical_number(format(d, "f"))


def _numeric_candidates(question: Question) -> list[str]:
    gold = canonical_number(question.answer)
    if gold is None:
        raise ValueError(f"question {question.id}: numeric gold {question.answer!r} is not a number")
    return list(_numeric_candidates_cached(question.id, gold))


@functools.lru_cache(maxsize=65536)
def _numeric_candidates_cached(qid: str, gold: str) -> tuple[str, ...]:
    # cached: the simulator asks for the same question's candidates once per agent and round
    g = Decimal(gold)
    rng = np.random.default_rng(stable_seed("candidates", qid, gold))
    mag = abs(g)
    digits = len(str(int(mag)))
    step = Decimal(10) ** max(1, digits - 2) if mag >= 20 else Decimal(1)
    small = Decimal(int(rng.integers(2, 6)))
    slips = [
        g + 1,  # off by one
        g - 1,
        g + step,  # off by one step of the leading digits
        g - step,
        g * 10,  # unit / place-value slips
        g / 10,
        g * 2,  # doubled / halved (a skipped or repeated step)
        g / 2,
        -g,  # sign slip
        g + small,
        g - small,
        g + 10,
        g - 10,
        g * 100 if mag < 1 else g + 100,  # percent vs fraction
    ]
    order = rng.permutation(len(slips))
    wrong: list[str] = []
    nonneg = g >= 0
    for i in order:
        v = slips[int(i)]
        if nonneg and v < 0 and int(i) != 8:
            continue  # keep wrong answers as plausible as the gold: no stray negatives
        if g == g.to_integral_value() and v != v.to_integral_value():
            continue  # an integer gold gets integer slips
        s = _fmt(v)
        if s is None or numbers_equal(s, gold) or s in wrong:
            continue
        if int(i) == 8 and rng.random() < 0.5:
            continue  # sign slips only sometimes, so candidates are not always symmetric
        wrong.append(s)
        if len(wrong) == N_NUMERIC_CANDIDATES - 1:
            break
    k = 2
    while len(wrong) < N_NUMERIC_CANDIDATES - 1:  # tiny golds: fill with further offsets
        s = _fmt(g + k)
        if s is not None and s not in wrong and not numbers_equal(s, gold):
            wrong.append(s)
        k += 1
    cands = [gold, *wrong]
    perm = rng.permutation(len(cands))
    return tuple(cands[int(i)] for i in perm)


def candidate_answers(question: Question) -> list[str]:
    """The finite answer space of a question, deterministic per question.

    Multiple choice: the option letters in order. Numeric: 5 canonical number strings, the gold
    and 4 plausible wrong ones derived from the gold and the question id, in a seeded order.
    """
    if question.kind == "numeric":
        return _numeric_candidates(question)
    return list(question.labels)


def truth_index(question: Question, candidates: list[str]) -> int:
    """Index of the gold answer in ``candidates`` (numbers compared numerically)."""
    for i, c in enumerate(candidates):
        if question.kind == "numeric":
            if numbers_equal(c, question.answer):
                return i
        elif c.strip().upper() == question.answer.strip().upper():
            return i
    raise ValueError(f"question {question.id}: gold {question.answer!r} not among candidates {candidates}")


def wrong_answers(question: Question) -> list[str]:
    """All candidate answers except the gold; the adversary's shared target is drawn from these."""
    cands = candidate_answers(question)
    t = truth_index(question, cands)
    return [c for i, c in enumerate(cands) if i != t]
