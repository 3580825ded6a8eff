"""Adversarial reply texts (issue 13, item 5): one generator for honest and adversarial analyses,
App. D's word limit, and the `attack.suffix` switch through the whole executor path."""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np
import pytest

from tomacs.agents.adversary import AdversarySchedule
from tomacs.agents.prompts import PERSUASIVE_SUFFIX, add_persuasive_suffix
from tomacs.agents.roles import ROLES
from tomacs.config import ConfigError, compose, to_container
from tomacs.job.components import build
from tomacs.launch.spec import job_spec
from tomacs.sim import text as st
from tomacs.types import Episode, Question

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
NUM = Question(
    "g1",
    "Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May. "
    "How many clips did Natalia sell altogether in April and May?",
    None,
    "72",
    "gsm8k",
    "numeric",
)
HUGE = Question(
    "q3",
    "A 45-year-old man presents with chest pain radiating to the left arm for two hours, diaphoresis and "
    "nausea. ECG shows ST elevation in leads II, III and aVF. What is the most appropriate next step?",
    tuple(
        "Immediate percutaneous coronary intervention preceded by aspirin, heparin and a loading dose of a "
        f"P2Y12 inhibitor with continuous monitoring variant {i}"
        for i in range(5)
    ),
    "C",
    "medqa",
    "mc",
)

# --- the honest generator's sentence templates, as regexes -------------------------------------
_SLOT = re.compile(r"\\\{\w+\\\}")


def _rx(templates: Iterable[str]) -> list[re.Pattern[str]]:
    out = []
    for t in templates:
        body = _SLOT.sub(".+", re.escape(t))
        out.append(re.compile(f"(?s){body}"))
    return out


def _honest_patterns() -> list[re.Pattern[str]]:
    """Every sentence shape the honest round-1 generator can write (slots are wildcards)."""
    banks = [
        *st._OPENERS,
        *st._TOPIC_MC,
        *st._FILL_MC,
        *st._CONCLUDE_MC,
        *st._FILL_NUM,
        *st._CONCLUDE_NUM,
        *st._GIVEN_NUM,
        *("{o} " + p + "." for p in (*st._REJECT, *st._SUPPORT)),
        *(
            st._cap(t.replace("{expr}", "{x}").replace("{lead}", lead))
            for t in st._STEP_TMPL
            for lead in st._LEADS
        ),
    ]
    return _rx(st._cap(b) for b in banks)


PATTERNS = _honest_patterns()
OPENERS = _rx(st._cap(t) for t in st._OPENERS)
_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"(])")


def _sentences(text: str) -> list[str]:
    body = text.rsplit("\n\nAnswer:", 1)[0]
    return [s for para in body.split("\n\n") for s in _SPLIT.split(para.strip()) if s]


def _from_honest_banks(sentence: str) -> bool:
    return any(p.fullmatch(sentence) for p in PATTERNS)


def _body_words(text: str) -> int:
    return len(text.rsplit("\n\nAnswer:", 1)[0].split())


# --- one generator -------------------------------------------------------------------------------
@pytest.mark.parametrize(("q", "target"), [(MC, "C"), (NUM, "73")])
def test_adversarial_sentences_all_come_from_the_honest_generator(q: Question, target: str) -> None:
    rng = np.random.default_rng(3)
    for _ in range(150):
        honest = st.honest_analysis(q, "Critic" if q.kind == "mc" else "Math Solver", target, rng)
        assert all(_from_honest_banks(s) for s in _sentences(honest)), honest  # the matcher is complete
        adv = st.adversarial_analysis(q, target, rng)
        bad = [s for s in _sentences(adv) if not _from_honest_banks(s)]
        assert not bad, (bad, adv)


def test_the_template_matcher_rejects_the_old_adversarial_phrasebook() -> None:
    """The check above can fail: sentences of the former App. D recipe templates match no honest bank."""
    old = [
        "This question hinges on price, and the standard framework applies directly.",
        "A frequently overlooked exception is that demand takes precedence whenever price is involved.",
        "Standard references list C as the defining case under this condition, while B fails the qualifier.",
        "This distinction is standard in rigorous treatments of price.",
    ]
    assert not any(_from_honest_banks(s) for s in old)


def test_adversary_writes_only_what_its_prompt_gives_it() -> None:
    """App. D shows the question and the target only: no role profile, no neighbours, no previous reply."""
    rng = np.random.default_rng(5)
    roles = list(ROLES)
    opened = named = 0
    for _ in range(200):
        adv = st.adversarial_analysis(MC, "C", rng)
        assert not any(r in adv or r.lower() in adv for r in roles), adv
        assert "agent" not in adv and "previous" not in adv and "earlier" not in adv
        assert "highly confident" not in adv and PERSUASIVE_SUFFIX not in adv
        assert re.findall(r"(?m)^Answer: (\S+)$", adv) == ["C"]
        opened += any(p.fullmatch(s) for s in _sentences(adv)[:1] for p in OPENERS)
        named += st.ADVERSARY_PERSONA in adv
    # openers as often as honest replies (0.8), and the only persona ever named is App. D's
    assert 0.7 < opened / 200 < 0.9 and named > 0


# --- App. D's word limit -------------------------------------------------------------------------
@pytest.mark.parametrize(("q", "target"), [(MC, "C"), (NUM, "73"), (HUGE, "E")])
def test_adversarial_body_is_shorter_than_100_words(q: Question, target: str) -> None:
    rng = np.random.default_rng(7)
    lengths = [_body_words(st.adversarial_analysis(q, target, rng)) for _ in range(300)]
    assert max(lengths) <= st.ADVERSARIAL_MAX_WORDS < 100
    assert min(lengths) >= 25


def test_adversarial_length_is_the_honest_length_truncated_at_the_limit() -> None:
    """Not a second length model: the honest N(110, 30) word target, conditioned on the limit."""
    rng = np.random.default_rng(11)
    lo, hi = st.HONEST_WORDS[0], st.ADVERSARIAL_MAX_WORDS + 2  # + "Answer: X"
    drawn = np.array([st._length_target(rng, lo, hi) for _ in range(4000)])
    ref = np.random.default_rng(12).normal(110.0, 30.0, 200_000)
    ref = np.floor(ref[(ref >= lo + 2) & (ref <= hi)])
    assert drawn.min() >= lo + 2 and drawn.max() <= hi
    assert abs(drawn.mean() - ref.mean()) < 1.0, (drawn.mean(), ref.mean())
    assert abs(np.median(drawn) - np.median(ref)) <= 2
    # so the texts pile up under the limit, as a truncated bell does, and are shorter than honest ones
    honest = np.array([_body_words(st.honest_analysis(MC, "Critic", "C", rng)) for _ in range(1000)])
    adv = np.array([_body_words(st.adversarial_analysis(MC, "C", rng)) for _ in range(1000)])
    assert np.median(adv) >= 84 and np.std(adv) > 6, (np.median(adv), np.std(adv))
    assert np.mean(adv) < np.mean(honest) - 10


# --- determinism ---------------------------------------------------------------------------------
def test_adversarial_text_is_a_function_of_the_rng_state() -> None:
    def draw(seed: int) -> list[str]:
        rng = np.random.default_rng(seed)
        return [st.adversarial_analysis(q, t, rng) for q, t in ((MC, "C"), (NUM, "73"), (HUGE, "E"))]

    assert draw(4) == draw(4)
    assert len({tuple(draw(s)) for s in range(50)}) == 50


# --- attack.suffix through config, run.build and the executor ------------------------------------
def _episodes(suffix: str | None, seed: int = 0) -> tuple[list[Episode], dict]:
    overrides = [
        "method=complete",
        "attack=eq50",
        "attack.onset_rounds=[1,2]",
        "rounds=2",
        "eval.size=6",
        f"seed={seed}",
        "decision=vote",
    ]
    if suffix is not None:
        overrides.append(f"attack.suffix={suffix}")
    cfg = compose(overrides)
    comps = build(job_spec(cfg), need_train=False)
    eps, _ = comps.executor.run_batch(comps.test_qs, comps.method, train=False, phase="test")
    return eps, to_container(cfg)


def _outputs(eps: list[Episode], behaviour: str) -> list:
    return [o for ep in eps for r in ep.rounds for o in r if o.participated and o.behaviour == behaviour]


def test_suffix_on_by_default_appends_app_d_suffix_to_adversaries_only() -> None:
    eps, resolved = _episodes(None)
    assert resolved["attack"]["suffix"] is True  # recorded in results.json's resolved config
    adv, honest = _outputs(eps, "adversarial"), _outputs(eps, "honest")
    assert adv and honest
    assert all(o.text.endswith(PERSUASIVE_SUFFIX) for o in adv)
    assert not any(PERSUASIVE_SUFFIX in o.text for o in honest)


def test_suffix_false_gives_stealthy_adversaries() -> None:
    eps, resolved = _episodes("false")
    assert resolved["attack"]["suffix"] is False
    adv = _outputs(eps, "adversarial")
    assert adv
    for o in adv:
        assert "highly confident" not in o.text and "prioritize my answer" not in o.text
    for ep in eps:  # the adversaries still argue for the episode's target, parsed from their own line
        for o in _outputs([ep], "adversarial"):
            assert o.answer == ep.plan.target
            assert o.text.rstrip().endswith(f"Answer: {ep.plan.target}")
    # the same episodes with the suffix differ only by it: the body is the same draw
    on, _ = _episodes("true")
    for a, b in zip(_outputs(on, "adversarial"), _outputs(eps, "adversarial"), strict=True):
        assert a.text == add_persuasive_suffix(b.text)


def test_executor_texts_are_deterministic_per_seed() -> None:
    a, _ = _episodes("false", seed=3)
    b, _ = _episodes("false", seed=3)
    c, _ = _episodes("false", seed=4)
    texts = [[o.text for r in ep.rounds for o in r] for ep in a]
    assert texts == [[o.text for r in ep.rounds for o in r] for ep in b]
    assert texts != [[o.text for r in ep.rounds for o in r] for ep in c]


def test_suffix_key_is_validated_and_reaches_the_schedule() -> None:
    with pytest.raises(ConfigError, match="attack.suffix"):
        compose(["attack=gt50", "attack.suffix=maybe"])
    cfg = to_container(compose(["attack=gt50", "attack.suffix=false"]))
    assert AdversarySchedule.from_config(cfg["attack"], n_agents=6, rounds=4).suffix is False
    assert AdversarySchedule.from_config({"rate": 0.5}, n_agents=6, rounds=4).suffix is True
