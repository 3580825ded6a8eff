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


# --- issue 27: answers as real multi-agent debaters write them (Du et al.'s "(X)" prompt, option
# texts instead of letters, every option marked, agreement with another agent). Each rule has a
# case it must read and a near miss it must not.
ACT = Question(
    id="t-act",
    text="Which act guaranteed private-sector workers the right to organise?",
    options=("The Sherman Act", "The Taft-Hartley Act", "The Wagner Act", "The Clayton Act"),
    answer="C",
    benchmark="t",
    kind="mc",
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # the filled-in placeholder: "(X)" then the option
        ("Unlike (B), which restricted unions, it protected organising.\n\n(X) C) The Wagner Act", "C"),
        ("Considering all of this, my final answer is (X) = (C).", "C"),
        ("(X) C", "C"),
        ("(X)\n\nC) The Wagner Act", "C"),
        # ... but "(X)" in prose is no answer, and never outranks a later Answer line
        ("I will put my answer in the form (X) at the end of my response.", None),
        ("(X) represents the letter of the option. The Clayton Act fits.\nAnswer: D", "D"),
        ("Where (X) stands for the option letter, I pick (B).", "B"),  # the choice, not "(X)"
    ],
)
def test_placeholder_then_option(text: str, expected: str | None) -> None:
    assert parse_answer(ACT, text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The Taft-Hartley Act restricted unions, so it cannot be that.\n\n(X) The Wagner Act.", "C"),
        ("(X) the wagner act, which created the NLRB", "C"),
        ("So the answer is the Wagner Act.", "C"),
        ("After weighing all of them, I choose the Wagner Act.", "C"),
        ("Answer: **The Wagner Act**", "C"),
        ("Both antitrust laws are about monopolies.\n\nThe Wagner Act.", "C"),  # a closing line
        ("(X) The Wagner Act, and the NLRB it created", "C"),  # "and" + a non-option is no hedge
        ("Answer: C) The Sherman Act", "C"),  # a label given outranks a mismatched text
        ("Having compared them, the Wagner Act is the most accurate answer here.", "C"),
        ("If the Wagner Act is correct, the NLRB must predate 1940.", None),  # a hypothesis
        ("Clearly the Wagner Act is correct only if the question means 1935.", None),
        # near misses: a longer phrase, a rejection, a hedge between two options' texts
        ("The answer is Wagner Act amendments of 1947, whatever they were.", None),
        ("The answer is not the Wagner Act.", None),
        ("(X) The Sherman Act is wrong here; I cannot decide between the rest.", None),
        ("(X) The Wagner Act or the Taft-Hartley Act", None),
        ("Answer: The Wagner Act / The Clayton Act", None),
        ("I really like the Wagner Act.", None),  # a closing line that is more than the option
    ],
)
def test_answer_named_by_option_text(text: str, expected: str | None) -> None:
    assert parse_answer(ACT, text) == expected


def test_option_text_matching_edge_cases() -> None:
    vit = Question(
        id="v",
        text="q",
        options=("Vitamin A", "Vitamin D", "Vitamin B12", "Vitamin C"),
        answer="D",
        benchmark="t",
        kind="mc",
    )
    assert parse_answer(vit, "Answer: Vitamin C") == "D"  # the text, not the letter "C" inside it
    assert parse_answer(vit, "Answer: C") == "C"
    city = Question(
        id="c",
        text="q",
        options=("Paris", "Paris, Texas", "Lyon", "Nice"),
        answer="B",
        benchmark="t",
        kind="mc",
    )
    assert parse_answer(city, "Answer: Paris, Texas") == "B"  # the longer option wins, no hedge
    assert parse_answer(city, "Answer: Paris") == "A"
    assert parse_answer(city, "Answer: Paris or Lyon") is None
    nums = Question(id="n", text="q", options=("2", "3", "4", "5"), answer="C", benchmark="t", kind="mc")
    assert parse_answer(nums, "Answer: 4") == "C"
    assert parse_answer(nums, "Answer: 4 + 1 = 5") is None  # a sum, not the option "4"
    same = Question(
        id="s", text="q", options=("yes", "yes", "no", "maybe"), answer="A", benchmark="t", kind="mc"
    )
    assert parse_answer(same, "Answer: yes") is None  # the same text under two letters names neither
    # without the options (parse_letter alone) no text is matched
    assert parse_letter("(X) The Wagner Act.", 4) is None
    assert parse_letter("(X) The Wagner Act.", 4, ACT.options) == "C"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "(A) The Sherman Act - incorrect\n(B) The Taft-Hartley Act - incorrect\n"
            "(C) The Wagner Act - correct\n(D) The Clayton Act - incorrect",
            "C",
        ),
        ("A) Sherman ✗\nB) Taft-Hartley ✗\nC) Wagner ✓ - it did not restrict unions\nD) Clayton ✗", "C"),
        (
            "- **A: The Sherman Act** ❌ antitrust\n- **B: The Taft-Hartley Act** ❌\n"
            "- **C: The Wagner Act** ✅",
            "C",
        ),
        # near misses: options re-listed without marks, one left unmarked, two marked right
        ("A) The Sherman Act\nB) The Taft-Hartley Act\nC) The Wagner Act\nD) The Clayton Act", None),
        ("A) The Sherman Act ✗\nB) The Taft-Hartley Act\nC) The Wagner Act ✓", None),
        ("A) Sherman ✗\nB) Taft-Hartley ✓\nC) Wagner ✓\nD) Clayton ✗", None),
    ],
)
def test_every_option_listed_with_a_mark(text: str, expected: str | None) -> None:
    assert parse_answer(ACT, text) == expected


def test_marked_list_ignores_mark_words_inside_option_texts() -> None:
    tf = Question(
        id="tf", text="q", options=("True", "False", "Not given"), answer="B", benchmark="t", kind="mc"
    )
    assert parse_answer(tf, "A) True - incorrect\nB) False - correct\nC) Not given - incorrect") == "B"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Agent 1 says the answer is (A), and agent 2 argues for (B). Both overlook the organising "
            "clause. I agree with agent 3: C.",
            "C",
        ),
        (
            "One agent's answer is (B). Having weighed it, I agree with the other agents that the "
            "Wagner Act fits.",
            "C",
        ),
        ("I concur with the second agent's choice of (C) over (A).", "C"),
        (
            "Agent 1 argues (A), but I believe the answer is (C).",
            "C",
        ),  # my own statement is not reported speech
        # near misses: an agent named by a letter, several options, a rejection
        ("I agree with Agent B's reasoning in general.", None),
        ("I agree with the others that both (A) and (C) have merit.", None),
        ("I agree with agent 2 that (A) is wrong.", None),
    ],
)
def test_agreement_with_another_agent(text: str, expected: str | None) -> None:
    assert parse_answer(ACT, text) == expected


ETHICS = Question(
    id="t-eth",
    text="How acceptable is this behavior?",
    options=(
        "Completely acceptable",
        "Mostly acceptable",
        "Neutral/Situation-dependent",
        "Mostly unacceptable",
        "Completely unacceptable",
    ),
    answer="B",
    benchmark="t",
    kind="mc",
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Therefore, I agree with agent_1 that this behavior is mostly acceptable.", "B"),
        ('I agree with agent_2 that it is "Neutral/Situation-dependent".', "C"),
        # an option's text set aside ("not always X", "rather than X") is not the one agreed with
        ("I agree with agent_1 that it is a serious issue, but not always completely unacceptable.", None),
        ("I agree with agent_1 that it is mostly acceptable rather than completely unacceptable.", "B"),
    ],
)
def test_agreement_names_an_option_by_text(text: str, expected: str | None) -> None:
    assert parse_answer(ETHICS, text) == expected


def test_a_list_heading_is_no_commitment() -> None:
    # "each option:" heads a list; the first listed option is not the answer, the restated one is
    text = "Let me check each option:\n(A) is too broad.\n(B) is too narrow.\n\nC) the volume of the student"
    assert parse_letter(text, 4) == "C"
    assert parse_letter("The correct option: C", 4) == "C"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # real qwen3-8b prose (MAD-Follower): the options it concedes are not the one it names
        (
            "While options like learning (B) or talking (E) may occur, they are secondary to the job.",
            None,
        ),
        ("While options like the mouth (D) refer to consumption, the question asks where it is sold.", None),
        ("#rationale: While completing tasks (A) is a component of work, it is not the aim.", None),
        # near misses: a mention after the concession's comma, or outside any concession, still counts
        ("Although (A) is popular, (C) fits the evidence.", "C"),
        ("While the others argue at length, I think (C) fits best.", "C"),
        ("The others argue for (B).", "B"),
        # real qwen3-8b prose: an option called unrelated is rejected, like one called irrelevant
        ("Great Britain (C) fits. Option (E) is unrelated.", "C"),
        ("Great Britain fits. Option (E) is related to it.", "E"),
    ],
)
def test_a_conceded_mention_is_no_commitment(text: str, expected: str | None) -> None:
    assert parse_letter(text, 5) == expected
