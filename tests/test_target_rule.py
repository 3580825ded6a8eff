"""`attack.target_lure`: a source's target rule (issue 39 item 3, "the source's ... target rule"). The
adversaries' target is the question's lure with the given probability, else uniform over the other
wrong answers; only the simulator knows a question's lure; `profile` takes the fitted value."""

from __future__ import annotations

import numpy as np
import pytest

from tomacs.agents.adversary import AdversarySchedule
from tomacs.benchmarks.base import wrong_answers
from tomacs.config import ConfigError, compose, validate
from tomacs.launch.spec import job_spec
from tomacs.types import Question

Q = Question("q1", "Which?", ("a", "b", "c", "d", "e"), "B", "mmlu", "mc")
WRONG = wrong_answers(Q)  # A, C, D, E


def _plans(lure_p: float | None, n: int, lure: str | None = "D") -> list[str]:
    s = AdversarySchedule(n_agents=5, rounds=3, count=2, onset_rounds=(1, 2), target_lure=lure_p)
    return [str(s.plan(Q, WRONG, np.random.default_rng(i), lure).target) for i in range(n)]


def test_no_rule_draws_exactly_as_before() -> None:
    """target_lure=None: a lure given to the plan changes no draw (the sim goldens hold the draws of
    before the field), and targets stay uniform over every wrong answer."""
    plain = AdversarySchedule(n_agents=5, rounds=3, count=2, onset_rounds=(1, 2))
    for i in range(50):
        a = plain.plan(Q, WRONG, np.random.default_rng(i))
        b = plain.plan(Q, WRONG, np.random.default_rng(i), lure="D")  # a lure given but not asked for
        assert a == b
    assert set(_plans(None, 400)) == set(WRONG)


def test_the_target_is_the_lure_with_the_given_probability() -> None:
    assert set(_plans(1.0, 50)) == {"D"}
    never = _plans(0.0, 600)
    assert "D" not in never and set(never) == {"A", "C", "E"}  # the rest stays uniform
    share = np.mean([t == "D" for t in _plans(0.3, 4000)])
    assert share == pytest.approx(0.3, abs=0.03)  # 4 SE of 4,000 draws is 0.029


def test_a_rule_without_a_lure_fails_in_one_line() -> None:
    with pytest.raises(ValueError, match="only backbone=sim knows"):
        _plans(0.5, 1, lure=None)
    with pytest.raises(ValueError, match="not a probability"):
        AdversarySchedule(n_agents=5, rounds=3, count=1, onset_rounds=(1,), target_lure=1.5)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["attack.target_lure=2"], "not a probability"),
        (["attack.target_lure=often"], "give a probability"),
        (["attack.target_lure=0.5", "backbone=gpt-4.1-nano"], "only backbone=sim knows"),
    ],
)
def test_config_refuses_a_bad_rule(overrides: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):  # composing validates
        validate(compose(["attack=mad", "agents=5", "rounds=3", *overrides]))


def _components(*overrides: str):  # noqa: ANN202
    from tomacs.job.components import build

    base = ["method=debate", "benchmark=mmlu", "attack=mad", "agents=5", "rounds=3", "eval.size=12"]
    return build(job_spec(compose([*base, *overrides])), need_train=False)


def test_profile_takes_the_fitted_rule_and_a_paper_profile_has_none() -> None:
    comps = _components("backbone.profile=mad-qwen3-8b", "attack.target_lure=profile")
    fitted = comps.executor.backbone.fitted_target_lure()
    assert fitted is not None and 0.0 <= fitted <= 1.0
    assert comps.executor.schedule.target_lure == pytest.approx(fitted)
    with pytest.raises(ConfigError, match="no fitted target rule"):
        _components("attack.target_lure=profile")  # the benchmark's paper profile
    # multi-agent-attack's repeats draw the target per debate: no question identifies the rule
    with pytest.raises(ConfigError, match="no question keeps one adversaries' target"):
        _components("backbone.profile=maa-gpt35", "attack.target_lure=profile")


def test_the_executor_aims_at_the_simulators_lure() -> None:
    comps = _components("attack.target_lure=1.0")
    ex = comps.executor
    for q in comps.test_qs:
        plan = ex.plan_for(q, "eval")
        assert plan.target == ex.backbone.question_lure(q) != q.answer
    comps = _components("attack.target_lure=0.0")
    assert all(
        comps.executor.plan_for(q, "eval").target != comps.executor.backbone.question_lure(q)
        for q in comps.test_qs
    )


# -- attack.target_letters: a source that fixes its target by letter (MAD-Follower: B, or A when B is gold)


def _letters_plan(gold: str, letters: tuple[str, ...] = ("B", "A"), seed: int = 0) -> str:
    q = Question("q", "Which?", ("a", "b", "c", "d", "e"), gold, "debates", "mc")
    s = AdversarySchedule(n_agents=5, rounds=3, count=2, onset_rounds=(1, 2), target_letters=letters)
    return str(s.plan(q, wrong_answers(q), np.random.default_rng(seed)).target)


def test_the_target_is_the_first_listed_letter_that_is_wrong() -> None:
    # MAD-Follower's debates: gold A or E -> B; gold B -> A (shared/data/debates/mad-follower)
    assert {_letters_plan(g, seed=i) for g in "ACDE" for i in range(20)} == {"B"}
    assert {_letters_plan("B", seed=i) for i in range(20)} == {"A"}
    assert _letters_plan("B", ("b", " c ")) == "C"  # letters are read as upper-case option letters


def test_letters_fail_in_one_line_when_unusable() -> None:
    with pytest.raises(ValueError, match="list two or more distinct option letters"):
        AdversarySchedule(n_agents=5, rounds=3, count=1, onset_rounds=(1,), target_letters=("B",))
    with pytest.raises(ValueError, match="two target rules"):
        AdversarySchedule(
            n_agents=5, rounds=3, count=1, onset_rounds=(1,), target_letters=("B", "A"), target_lure=0.5
        )
    q = Question("n", "2+2?", None, "4", "gsm8k", "numeric")
    s = AdversarySchedule(n_agents=5, rounds=3, count=1, onset_rounds=(1,), target_letters=("B", "A"))
    with pytest.raises(ValueError, match="none is a wrong answer of question 'n'"):
        s.plan(q, wrong_answers(q), np.random.default_rng(0))


def test_config_takes_letters_and_refuses_both_rules() -> None:
    cfg = compose(["attack=mad", "agents=5", "rounds=3", "attack.target_letters=[B,A]"])
    validate(cfg)
    assert AdversarySchedule.from_config(cfg.attack, 5, 3).target_letters == ("B", "A")
    with pytest.raises(ConfigError, match="two target rules"):
        validate(
            compose(
                [
                    "attack=mad",
                    "agents=5",
                    "rounds=3",
                    "attack.target_letters=[B,A]",
                    "attack.target_lure=profile",
                ]
            )
        )
