"""The dynamic adversary schedule: counts, seeding, recorded fields and uniformity of the draws."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from tomacs.agents.adversary import DEFAULT_ONSET_ROUNDS, AdversarySchedule, count_from_rate
from tomacs.benchmarks.base import wrong_answers
from tomacs.launch.spec import job_spec
from tomacs.types import Question

CONF = Path(__file__).resolve().parents[1] / "conf" / "attack"
MC = Question(
    "q-mc",
    "Which gas do plants absorb?",
    ("Oxygen", "Carbon dioxide", "Nitrogen", "Helium"),
    "B",
    "mmlu",
    "mc",
)
NUM = Question("q-num", "Tom has 3 bags of 12 apples. How many apples?", None, "36", "gsm8k", "numeric")


def _shipped(name: str) -> dict:
    return yaml.safe_load((CONF / f"{name}.yaml").read_text())


def _attack(name: str) -> dict:
    """The option as a config holds it: the schema's defaults under what the file writes."""
    from omegaconf import OmegaConf

    from tomacs.config import AttackSchema

    return OmegaConf.to_container(OmegaConf.merge(OmegaConf.structured(AttackSchema), _shipped(name)))


def _sched(name: str, n: int = 6, rounds: int = 4) -> AdversarySchedule:
    return AdversarySchedule.from_config(_attack(name), n_agents=n, rounds=rounds)


@pytest.mark.parametrize(("name", "expected"), [("none", 0), ("lt50", 2), ("eq50", 3), ("gt50", 4)])
def test_paper_counts_for_six_agents(name: str, expected: int) -> None:
    assert "onset_rounds" not in _shipped(name)  # the default
    cfg = _attack(name)
    assert cfg["name"] == name and cfg["count"] is None
    s = _sched(name)
    assert s.onset_rounds == DEFAULT_ONSET_ROUNDS == (3, 4)  # TodyComm §5: round 3 or 4
    assert s.count == expected == s.k


@pytest.mark.parametrize(
    ("n", "counts"),
    [(10, (3, 5, 7)), (15, (5, 8, 10)), (20, (7, 10, 13))],
)
def test_rate_scales_with_n(n: int, counts: tuple[int, int, int]) -> None:
    got = tuple(_sched(name, n=n).count for name in ("lt50", "eq50", "gt50"))
    assert got == counts
    # the regimes keep their meaning: below, at (rounded half up), above half
    assert got[0] < n / 2 < got[2]


def test_count_overrides_rate_and_rounding_is_half_up() -> None:
    assert AdversarySchedule(6, 4, count=1, rate=2 / 3).count == 1
    assert count_from_rate(0.5, 5) == 3  # banker's round() would give 2
    assert count_from_rate(1 / 3, 6) == 2 and count_from_rate(2 / 3, 6) == 4


def test_invalid_settings_raise_clear_errors() -> None:
    with pytest.raises(ValueError, match="only 6 agents"):
        AdversarySchedule(6, 4, count=7)
    with pytest.raises(ValueError, match="rate"):
        AdversarySchedule(6, 4, rate=1.5)
    with pytest.raises(ValueError, match="onset"):
        AdversarySchedule(6, 4, count=2, onset_rounds=(0, 3))


def test_protected_and_fixed_agents_are_checked_at_construction() -> None:
    """The receiver protocol and persistent adversaries are validated where the schedule is built,
    not in the first episode's draw (issue 16: run.build used to set them after construction)."""
    s = AdversarySchedule(6, 4, count=5, protected=[5])
    assert s.protected == (5,)
    with pytest.raises(ValueError, match="only 5 unprotected agents"):
        AdversarySchedule(6, 4, count=6, protected=(5,))
    with pytest.raises(ValueError, match=r"protected agents \[6\] must lie in 0..5"):
        AdversarySchedule(6, 4, count=1, protected=(6,))
    with pytest.raises(ValueError, match="include protected agents"):
        AdversarySchedule(6, 4, count=2, protected=(5,), fixed_agents=(0, 5))


def test_persistent_adversaries_drawn_once_from_the_seed_among_unprotected() -> None:
    from tomacs.config import compose
    from tomacs.job.components import adversary_schedule

    cfg = compose(["agents=7", "attack=receiver", "attack.count=3", "attack.persistent=true", "seed=3"])
    s = adversary_schedule(job_spec(cfg))
    assert s.protected == (6,) and s.fixed_agents is not None and len(s.fixed_agents) == 3
    assert 6 not in s.fixed_agents and s.fixed_agents == adversary_schedule(job_spec(cfg)).fixed_agents
    plan = s.plan(MC, wrong_answers(MC), np.random.default_rng(0))
    assert plan.adversaries == s.fixed_agents
    assert adversary_schedule(job_spec(compose(["attack=eq50"]))).fixed_agents is None


def test_none_gives_empty_plan_without_touching_rng() -> None:
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    plan = _sched("none").plan(MC, ["A", "C", "D"], rng)
    assert plan.adversaries == () and plan.onsets == {} and plan.target is None
    assert plan.labels(6, 4) == [0] * 6
    assert rng.bit_generator.state == state


def test_same_seed_same_plan_and_seeds_differ() -> None:
    s = _sched("eq50")
    a = s.plan(MC, ["A", "C", "D"], np.random.default_rng(123))
    b = s.plan(MC, ["A", "C", "D"], np.random.default_rng(123))
    assert a == b and a.to_dict() == b.to_dict()
    plans = {str(s.plan(MC, ["A", "C", "D"], np.random.default_rng(k)).to_dict()) for k in range(50)}
    assert len(plans) > 20


@pytest.mark.parametrize("name", ["lt50", "eq50", "gt50"])
def test_recorded_fields(name: str) -> None:
    s = _sched(name)
    rng = np.random.default_rng(7)
    for _ in range(200):
        plan = s.plan(MC, wrong_answers(MC), rng)
        assert len(plan.adversaries) == s.count == len(set(plan.adversaries))
        assert list(plan.adversaries) == sorted(plan.adversaries)
        assert all(0 <= a < 6 for a in plan.adversaries)
        assert set(plan.onsets) == set(plan.adversaries)
        assert set(plan.onsets.values()) <= {3, 4}
        assert plan.target in {"A", "C", "D"} and plan.target != MC.answer
        d = plan.to_dict()
        assert set(d) == {"adversaries", "onsets", "target"}
        # ground truth: adversarial iff onset <= T
        assert plan.labels(6, 4) == [int(i in plan.adversaries) for i in range(6)]
        late = [a for a, o in plan.onsets.items() if o == 4]
        assert plan.labels(6, 3) == [int(i in plan.adversaries and i not in late) for i in range(6)]
        for a, o in plan.onsets.items():
            assert plan.behaviour(a, o - 1) == "honest" and plan.behaviour(a, o) == "adversarial"


def test_target_never_gold_even_if_offered() -> None:
    s = _sched("gt50")
    rng = np.random.default_rng(3)
    targets = {s.plan(MC, ["A", "B", "C", "D"], rng).target for _ in range(300)}
    assert targets == {"A", "C", "D"}
    with pytest.raises(ValueError, match="no wrong answer"):
        s.plan(MC, ["B"], rng)


def _chi2(counts: np.ndarray) -> float:
    exp = counts.sum() / len(counts)
    return float(((counts - exp) ** 2 / exp).sum())


def test_positions_onsets_and_targets_are_uniform() -> None:
    """6000 plans: every position equally likely (no index-0 bias), onsets 50/50, targets uniform.

    Thresholds are chi-square critical values at p = 0.001 (df 5 -> 20.5, df 2 -> 13.8).
    """
    s = _sched("lt50")
    rng = np.random.default_rng(2024)
    pos = np.zeros(6)
    onset3 = 0
    tgt = {"A": 0, "C": 0, "D": 0}
    n_plans = 6000
    for _ in range(n_plans):
        plan = s.plan(MC, ["A", "C", "D"], rng)
        for a in plan.adversaries:
            pos[a] += 1
        onset3 += sum(1 for o in plan.onsets.values() if o == 3)
        tgt[plan.target] += 1
    assert pos.sum() == 2 * n_plans
    assert _chi2(pos) < 20.5, pos
    assert abs(pos[0] / pos.sum() - 1 / 6) < 0.01
    assert abs(onset3 / (2 * n_plans) - 0.5) < 0.02
    assert _chi2(np.array(list(tgt.values()), dtype=float)) < 13.8, tgt


def test_onset_rounds_configurable() -> None:
    s = AdversarySchedule(10, 6, count=4, onset_rounds=[2, 5, 6])
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(100):
        seen |= set(s.plan(MC, ["A"], rng).onsets.values())
    assert seen == {2, 5, 6}


def test_numeric_target_is_one_of_the_benchmarks_wrong_candidates() -> None:
    """The executor's pool (tomacs.benchmarks.base.wrong_answers): the target is never the gold."""
    wrong = wrong_answers(NUM)
    assert len(wrong) == 4 and "36" not in wrong
    targets = {
        AdversarySchedule(6, 4, count=3).plan(NUM, [*wrong, "36"], np.random.default_rng(k)).target
        for k in range(200)
    }
    assert targets == set(wrong)  # the gold, even when offered, is dropped; every wrong one is drawn


def test_ordered_onsets_give_one_adversary_per_listed_round() -> None:
    """MAD-Follower's protocol: an attacker from round 1 and a follower from round 2, in every episode;
    which agents they are stays random."""
    s = AdversarySchedule(n_agents=5, rounds=3, count=2, onset_rounds=(1, 2), ordered_onsets=True)
    firsts = set()
    for i in range(200):
        plan = s.plan(MC, wrong_answers(MC), np.random.default_rng(i))
        assert sorted(plan.onsets.values()) == [1, 2]
        firsts.add(next(a for a, r in plan.onsets.items() if r == 1))
    assert firsts == set(range(5))
    drawn = AdversarySchedule(n_agents=5, rounds=3, count=2, onset_rounds=(1, 2))
    both = [
        sorted(drawn.plan(MC, wrong_answers(MC), np.random.default_rng(i)).onsets.values())
        for i in range(200)
    ]
    assert [1, 1] in both and [2, 2] in both  # the default draws each onset: not always one of each
    with pytest.raises(ValueError, match="one onset per adversary"):
        AdversarySchedule(n_agents=5, rounds=3, count=2, onset_rounds=(1,), ordered_onsets=True)
