"""Benchmarks: adapters that turn datasets into ``Question``s, answer parsing and scoring.

``get_benchmark(name, **cfg)`` builds an adapter from a ``conf/benchmark/*.yaml`` entry;
``synthetic`` (generated, no files) is the default, the real datasets (mmlu, arc_c, gsm8k,
openbookqa, medqa) read local JSONL copies in Hugging Face schemas.
"""

from tomacs.benchmarks.base import (
    BENCHMARK_KEYS,
    BENCHMARKS,
    BenchmarkAdapter,
    BenchmarkDataError,
    BenchmarkFileMissing,
    available_benchmarks,
    candidate_answers,
    get_benchmark,
    truth_index,
    wrong_answers,
)
from tomacs.benchmarks.parsing import (
    canonical_number,
    is_correct,
    numbers_equal,
    parse_answer,
    parse_letter,
    parse_number,
)

__all__ = [
    "BENCHMARKS",
    "BENCHMARK_KEYS",
    "BenchmarkAdapter",
    "BenchmarkDataError",
    "BenchmarkFileMissing",
    "available_benchmarks",
    "candidate_answers",
    "canonical_number",
    "get_benchmark",
    "is_correct",
    "numbers_equal",
    "parse_answer",
    "parse_letter",
    "parse_number",
    "truth_index",
    "wrong_answers",
]
