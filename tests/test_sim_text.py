"""Simulator reply texts: answer line, lengths, content, determinism, no length giveaway."""

from __future__ import annotations

import re

import numpy as np
import pytest

from tomacs.agents.prompts import PERSUASIVE_SUFFIX, add_persuasive_suffix
from tomacs.sim import text as st
from tomacs.types import Message, Question

MC = Question(
    "q1",
    "Which of the following best explains why the price of a good rises when consumer demand increases "
    "while supply remains constant?",
    (
        "A shortage develops at the original price",
        "The government imposes a price ceiling",
        "Production costs fall sharply",
        "Consumers prefer substitutes",
    ),
    "A",
    "mmlu",
    "mc",
)
LONG = Question(
    "q2",
    "A 45-year-old man presents with chest pain radiating to the left arm for two hours, diaphoresis and "
    "nausea. ECG shows ST elevation in leads II, III and aVF. What is the most appropriate next step?",
    tuple(
        f"Option text number {i} that is deliberately very long with many words describing a management "
        "strategy in detail for this patient"
        for i in range(5)
    ),
    "C",
    "medqa",
    "mc",
)
NUM = Question(
    "g1",
    "Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May. "
    "How many clips did Natalia sell altogether in April and May?",
    None,
    "72",
    "gsm8k",
    "numeric",
)
FINAL = re.compile(r"\n\nAnswer: (\S+)$")


def _words(s: str) -> int:
    return len(s.split())


def _msgs(rng: np.random.Generator, q: Question, ans: str, target: str) -> list[Message]:
    adv = add_persuasive_suffix(st.adversarial_analysis(q, target, rng))
    return [
        Message(0, "Critic", st.honest_analysis(q, "Critic", ans, rng), ans, False),
        Message(3, "Historian", adv, target, True),
    ]


def _honest_samples(q: Question, ans: str, other: str, n: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        t = 1 + i % 4
        inc = _msgs(rng, q, ans, other) if t > 1 else []
        changed = t > 1 and i % 3 == 0
        out.append(st.honest_analysis(q, "Doctor", ans if not changed else other, rng, t, changed, inc, ans))
    return out


@pytest.mark.parametrize(("q", "ans", "other"), [(MC, "A", "C"), (NUM, "72", "73"), (LONG, "C", "E")])
def test_every_text_ends_with_the_answer_line(q: Question, ans: str, other: str) -> None:
    rng = np.random.default_rng(1)
    for text in _honest_samples(q, ans, other, 40):
        m = FINAL.search(text)
        assert m is not None and m.group(1) in {ans, other}, text
    adv = st.adversarial_analysis(q, other, rng)
    assert FINAL.search(adv).group(1) == other
    assert PERSUASIVE_SUFFIX not in adv and "highly confident" not in adv
    # the executor's suffix follows the answer line; the last "Answer:" is still the target
    assert re.findall(r"(?m)^Answer: (\S+)$", add_persuasive_suffix(adv)) == [other]
    dec = st.decision_text(q, ans, rng)
    assert FINAL.search(dec).group(1) == ans
    assert 20 <= _words(dec) <= 100


def test_texts_parse_with_the_benchmark_parser() -> None:
    parsing = pytest.importorskip("tomacs.benchmarks.parsing")
    rng = np.random.default_rng(5)
    for q, ans, other in [(MC, "A", "C"), (NUM, "72", "73"), (LONG, "C", "E")]:
        for text in _honest_samples(q, ans, other, 20, seed=3):
            assert parsing.parse_answer(q, text) == FINAL.search(text).group(1)
        adv = add_persuasive_suffix(st.adversarial_analysis(q, other, rng))
        assert parsing.parse_answer(q, adv) == other
        assert parsing.parse_answer(q, st.decision_text(q, ans, rng)) == ans


@pytest.mark.parametrize("q", [MC, NUM, LONG])
def test_lengths(q: Question) -> None:
    ans, other = (q.answer, "73") if q.kind == "numeric" else (q.answer, "B")
    honest = [_words(t) for t in _honest_samples(q, ans, other, 200)]
    lo, hi = st.HONEST_WORDS
    assert lo <= min(honest) and max(honest) <= hi, (min(honest), max(honest))
    rng = np.random.default_rng(9)
    adv_texts = [st.adversarial_analysis(q, other, rng) for _ in range(200)]
    bodies = [_words(t.rsplit("\n\nAnswer:", 1)[0]) for t in adv_texts]
    assert max(bodies) < 100 and min(bodies) >= 25  # Appendix D: "shorter than 100 words"


@pytest.mark.parametrize("q", [MC, NUM])
def test_length_alone_does_not_separate_honest_from_adversarial(q: Question) -> None:
    """As received (suffix appended), no length threshold classifies honest vs adversarial well."""
    other = "73" if q.kind == "numeric" else "C"
    honest = np.array([_words(t) for t in _honest_samples(q, q.answer, other, 300)])
    rng = np.random.default_rng(11)
    adv = np.array(
        [_words(add_persuasive_suffix(st.adversarial_analysis(q, other, rng))) for _ in range(300)]
    )
    values = np.concatenate([honest, adv])
    labels = np.r_[np.zeros(len(honest)), np.ones(len(adv))]
    best = max(
        max(np.mean((values <= t) == labels), np.mean((values > t) == labels)) for t in np.unique(values)
    )
    assert best < 0.8, best
    # and the raw adversarial bodies fall inside the honest range often enough
    raw = np.array([_words(st.adversarial_analysis(q, other, rng)) for _ in range(300)])
    assert np.mean(raw >= honest.min()) > 0.5


def test_deterministic_given_rng_state_and_varied_across_states() -> None:
    def make(seed: int) -> tuple[str, str, str]:
        rng = np.random.default_rng(seed)
        inc = _msgs(rng, MC, "A", "C")
        return (
            st.honest_analysis(MC, "Critic", "C", rng, 3, True, inc, "A"),
            st.adversarial_analysis(MC, "C", rng),
            st.decision_text(MC, "A", rng),
        )

    assert make(42) == make(42)
    texts = [make(s) for s in range(100)]
    for k in range(3):
        assert len({t[k] for t in texts}) >= 90
    first_sentences = {t[0].split(".")[0] for t in texts}
    assert len(first_sentences) >= 20


def test_honest_text_mentions_question_content() -> None:
    rng = np.random.default_rng(2)
    for _ in range(50):
        text = st.honest_analysis(MC, "Critic", "A", rng)
        assert "A shortage develops at the original price" in text  # the chosen option's content
    for _ in range(50):
        text = st.honest_analysis(NUM, "Math Solver", "72", rng)
        assert "48" in text and "72" in text.rsplit("\n\nAnswer:", 1)[0]
    for _ in range(20):
        adv = st.adversarial_analysis(MC, "C", rng)
        assert "Production costs fall sharply" in adv


def test_changed_answer_cites_a_neighbour_backing_it() -> None:
    rng = np.random.default_rng(4)
    backer = Message(2, "Historian", "Costs fall sharply, which shifts supply.\n\nAnswer: C", "C", False)
    other = Message(1, "Critic", "A shortage forms at the old price.\n\nAnswer: A", "A", False)
    for _ in range(30):
        text = st.honest_analysis(MC, "Doctor", "C", rng, 2, True, [other, backer], "A")
        head = text.split("\n\n")[0] + text.split("\n\n")[1]
        assert "Historian" in head and "Critic" not in head
    # keeping an answer against a dissenting neighbour names the dissenter
    for _ in range(30):
        text = st.honest_analysis(MC, "Doctor", "A", rng, 2, False, [backer], "A")
        assert "Historian" in text


def test_round_one_does_not_talk_about_other_agents() -> None:
    rng = np.random.default_rng(8)
    for _ in range(50):
        text = st.honest_analysis(MC, "Psychologist", "A", rng, 1, False, [])
        assert "agents" not in text and "previous" not in text
