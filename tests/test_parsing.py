"""Answer parsing and scoring: hand-written replies, the formats agents actually produce."""

from __future__ import annotations

import random
import string

import pytest

from tomacs.benchmarks.parsing import (
    canonical_number,
    is_correct,
    numbers_equal,
    parse_answer,
    parse_letter,
    parse_number,
)
from tomacs.types import Question

MC = Question(
    id="t-mc",
    text="Which organelle?",
    options=("Nucleus", "Mitochondria", "Ribosome", "Golgi body"),
    answer="B",
    benchmark="t",
    kind="mc",
)
NUM = Question(id="t-num", text="How many?", options=None, answer="1234.5", benchmark="t", kind="numeric")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Answer: (B)", "B"),
        ("**B**", "B"),
        ("The answer is B.", "B"),
        ("After weighing everything I pick Option B", "B"),
        ("so the answer is: b)", "B"),
        ("Option A looks good, and (C) too.\nAnswer: B", "B"),  # final Answer line wins
        ("The answer is C.\nOn reflection that ignores the data.\nAnswer: D", "D"),
        ("**Answer:** C", "C"),
        ("- **Answer**: B) Mitochondria", "B"),
        ("Final answer: (a)", "A"),
        ("Answer: [D]", "D"),
        ("answer: c.", "C"),
        ("Answer: A", "A"),
        ("Answer: A good option is D", "D"),  # the article "A" is not an option
        ("Answer: I think it's C", "C"),  # nor is the pronoun "I"
        ("Answer:\nB", "B"),
        ("(c)", "C"),
        ("B", "B"),
        ("C. the volume of the student", "C"),  # SmolLM2 replies that open with the listed option
        ("(B) Mitochondria, because it makes ATP", "B"),
        ("D) Golgi body", "D"),
        ("A student stands on a scale.", None),  # the article, not option A
        ("E. Neither", None),
        ("Answer: E", None),  # beyond the 4 options
        ("The answer is a bit unclear to me.", None),
        ("I cannot decide.", None),
        ("", None),
    ],
)
def test_parse_letter(text: str, expected: str | None) -> None:
    assert parse_letter(text, 4) == expected


def test_parse_letter_respects_option_count() -> None:
    assert parse_letter("Answer: E", 5) == "E"
    assert parse_letter("Answer: E\nAnswer: C", 4) == "C"  # the last *valid* answer line
    assert parse_letter("Answer: C", 3) == "C"
    assert parse_letter("Answer: D", 3) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Answer: $1,234.50", "1234.5"),
        ("She had 5 then 7.\nAnswer: 18 dollars", "18"),
        ("\\boxed{42}", "42"),
        ("The result is \\boxed{\\frac{1}{2}}", "0.5"),
        ("so #### 1,000", "1000"),
        ("Answer: -3.0", "-3"),
        ("Answer: −7", "-7"),  # unicode minus
        ("The answer is 25%.", "25"),
        ("Answer: 5 + 3 = 8", "8"),
        ("We get 12 apples, then 15.", "15"),  # no marker: last number
        ("I computed 3 and 4\nAnswer: 12\nCheck: 3*4=12 and 100", "12"),  # Answer line preferred
        ("Total = 2,500 - 300 = 2,200. The answer is 2200.", "2200"),
        ("Answer: .5", "0.5"),
        ("Answer: $-5", "-5"),
        ("no digits here", None),
        ("", None),
    ],
)
def test_parse_number(text: str, expected: str | None) -> None:
    assert parse_number(text) == expected


@pytest.mark.parametrize(
    ("raw", "canon"),
    [
        ("1,234.50", "1234.5"),
        ("-3.0", "-3"),
        ("-0", "0"),
        ("100", "100"),
        ("007", "7"),
        ("$12", "12"),
        ("3.14159", "3.14159"),
        ("1,000,000", "1000000"),
        ("abc", None),
        (None, None),
    ],
)
def test_canonical_number(raw: str | None, canon: str | None) -> None:
    assert canonical_number(raw) == canon


def test_is_correct_multiple_choice() -> None:
    assert is_correct(MC, "B") and is_correct(MC, "b")
    assert not is_correct(MC, "C")
    assert not is_correct(MC, None)


def test_is_correct_numeric_keeps_sign_and_decimals() -> None:
    assert is_correct(NUM, "1234.5") and is_correct(NUM, "1,234.50")
    assert is_correct(NUM, "1234.5000001")  # within 1e-6
    assert not is_correct(NUM, "1234.51")
    assert not is_correct(NUM, "1234")  # decimals kept
    assert not is_correct(NUM, "-1234.5")  # sign kept
    assert not is_correct(NUM, None) and not is_correct(NUM, "n/a")
    assert numbers_equal("-3", "-3.0") and not numbers_equal("3", "-3")


def test_parse_answer_dispatches_and_falls_back_to_option_text() -> None:
    assert parse_answer(MC, "Reasoning...\nAnswer: (B)") == "B"
    assert parse_answer(MC, "Reasoning...\nAnswer: Mitochondria") == "B"  # text of option B
    assert parse_answer(MC, "Answer: chloroplast") is None
    assert parse_answer(NUM, "Working...\nAnswer: 1,234.50") == "1234.5"
    assert parse_answer(MC, None) is None


def test_parsers_never_raise_on_garbage() -> None:
    rng = random.Random(0)
    alphabet = string.printable + "—−×÷¼\\{}()$#*%"
    for _ in range(500):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 300)))
        parse_letter(text, 4)
        parse_number(text)
        parse_answer(MC, text)
        parse_answer(NUM, text)
    assert parse_letter(None, 4) is None and parse_number(None) is None  # type: ignore[arg-type]
    assert parse_letter("Answer: B", 0) is None
    assert parse_number("\\boxed{" * 50) is None
