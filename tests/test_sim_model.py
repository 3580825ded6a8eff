"""The simulator's behavioural model: hand-checkable properties of tomacs.sim.model."""

from __future__ import annotations

import numpy as np
import pytest

from tomacs.sim.model import (
    QuestionLatent,
    SimProfile,
    adversarial_answer,
    effective_competence,
    initial_probs,
    logit_terms,
    message_support,
    sample_latent,
    sample_wrong,
    update_logits,
    update_probs,
)

PROF = SimProfile(
    name="t",
    n_cand=4,
    accuracy=0.7,
    concentration=4.0,
    distractor_share=0.5,
    prior_weight=1.0,
    self_weight=1.0,
    share_weight=2.0,
    count_weight=0.5,
    persuasion=2.0,
)


def test_initial_probs_hand_computed() -> None:
    lat = QuestionLatent(competence=0.6, distractor=2)
    p = initial_probs(PROF, lat, 4, truth_idx=1)
    # truth 0.6; wrong mass 0.4, half on the distractor (0.2), rest split over 2 others (0.1 each)
    assert p == pytest.approx([0.1, 0.6, 0.2, 0.1])


def test_mean_competence_is_single_agent_accuracy() -> None:
    rng = np.random.default_rng(0)
    cs = [sample_latent(PROF, rng, 4, 0).competence for _ in range(20000)]
    assert np.mean(cs) == pytest.approx(PROF.accuracy, abs=0.01)


def test_capability_scales_odds() -> None:
    assert effective_competence(0.5, 1.0) == pytest.approx(0.5)
    assert effective_competence(0.5, 3.0) == pytest.approx(0.75)  # odds 1 -> 3
    with pytest.raises(ValueError):
        effective_competence(0.5, 0.0)


def test_update_logits_hand_computed() -> None:
    lat = QuestionLatent(competence=0.6, distractor=2)
    u = update_logits(PROF, lat, prev_idx=1, messages=[(3, True), (1, False)], n_cand=4, truth_idx=1)
    p0 = np.array([0.1, 0.6, 0.2, 0.1])
    support = np.array([0.0, 1.0, 0.0, 2.0])  # persuasive message weighs rho = 2
    expected = np.log(p0) + np.array([0, 1.0, 0, 0]) + 2.0 * support / 3.0 + 0.5 * support
    assert u == pytest.approx(expected)


def test_logit_terms_name_the_rule_hand_computed() -> None:
    lat = QuestionLatent(competence=0.6, distractor=2)
    t = logit_terms(PROF, lat, 1, [(3, True), (1, False)], 4, 1, first_idx=0, message_scale=0.5)
    support = np.array([0.0, 1.0, 0.0, 2.0])
    assert list(t) == ["prior", "self", "anchor", "messages"]
    assert t["prior"] == pytest.approx(np.log([0.1, 0.6, 0.2, 0.1]))
    assert list(t["self"]) == [0.0, 1.0, 0.0, 0.0]
    assert list(t["anchor"]) == [0.0] * 4  # anchor_weight 0 in PROF
    assert t["messages"] == pytest.approx(0.5 * (2.0 * support / 3.0 + 0.5 * support))
    assert message_support([(3, True), (1, False), (3, False, 0.5)], 4, 2.0)[0].tolist() == [0, 1, 0, 2.5]
    assert message_support([(3, True), (3, False, 0.5)], 4, 2.0)[1].tolist() == [0, 0, 0, 0.5]
    assert message_support([(3, True), (3, False, 0.5)], 4, 2.0)[2].tolist() == [0, 0, 0, 1.0]


def _update_logits_as_first_written(prof, lat, prev, msgs, n, truth, cap, first, scale):  # type: ignore[no-untyped-def]
    """The element-wise update the rule had before it was split into named terms (reference)."""
    u = prof.prior_weight * np.log(np.maximum(initial_probs(prof, lat, n, truth, cap), 1e-300))
    if prev is not None:
        u[prev] += prof.self_weight
    if first is not None:
        u[first] += prof.anchor_weight
    support = np.zeros(n)
    for m in msgs:
        support[m[0]] += (float(m[2]) if len(m) > 2 else 1.0) * (prof.persuasion if m[1] else 1.0)
    if msgs and support.sum() > 0:
        u += scale * (prof.share_weight * support / support.sum() + prof.count_weight * support)
    return u


def test_update_logits_is_bit_identical_to_the_element_wise_rule() -> None:
    rng = np.random.default_rng(3)
    for _ in range(300):
        n = int(rng.integers(2, 7))
        truth = int(rng.integers(n))
        prof = SimProfile(
            "r", n, 0.6, 3.0, float(rng.uniform(0.2, 0.9)), float(rng.uniform(0, 2)),
            float(rng.uniform(0, 3)), float(rng.uniform(0, 4)), float(rng.uniform(0, 2)),
            float(rng.uniform(1, 9)), anchor_weight=float(rng.uniform(0, 2)),
        )  # fmt: skip
        lat = sample_latent(prof, rng, n, truth)
        msgs = [
            (int(rng.integers(n)), bool(rng.random() < 0.4), float(rng.choice([0.0, 0.3, 1.0])))
            for _ in range(int(rng.integers(0, 6)))
        ]
        prev = None if rng.random() < 0.2 else int(rng.integers(n))
        first = None if rng.random() < 0.3 else int(rng.integers(n))
        scale = float(rng.choice([1.0, 0.7, 1.53]))
        args = (prof, lat, prev, msgs, n, truth, 1.3, first, scale)
        got = update_logits(*args)
        assert got.tobytes() == _update_logits_as_first_written(*args).tobytes()
        terms = logit_terms(*args)
        assert (
            got.tobytes() == (terms["prior"] + terms["self"] + terms["anchor"] + terms["messages"]).tobytes()
        )


def test_message_scale_weighs_only_the_messages() -> None:
    # the LLM decision agent reads with weight decision_weight (message_scale); prior, self and
    # anchor terms are untouched
    lat = QuestionLatent(competence=0.6, distractor=2)
    msgs = [(3, True), (1, False)]
    base = update_logits(PROF, lat, 1, [], 4, 1, first_idx=0)
    full = update_logits(PROF, lat, 1, msgs, 4, 1, first_idx=0)
    half = update_logits(PROF, lat, 1, msgs, 4, 1, first_idx=0, message_scale=0.5)
    assert half - base == pytest.approx(0.5 * (full - base))
    assert PROF.decision_weight == 1.0  # default: the decision agent reads like a receiver


def test_more_adversaries_push_harder() -> None:
    lat = QuestionLatent(competence=0.7, distractor=2)
    truth_p = []
    for k in range(5):
        msgs = [(3, True)] * k + [(0, False)] * (6 - k)
        truth_p.append(update_probs(PROF, lat, 0, msgs, 4, 0)[0])
    assert all(a > b for a, b in zip(truth_p, truth_p[1:], strict=False))


def test_bad_indices_fail() -> None:
    lat = QuestionLatent(competence=0.7, distractor=2)
    with pytest.raises(ValueError):
        initial_probs(PROF, lat, 4, truth_idx=4)
    with pytest.raises(ValueError):
        update_probs(PROF, lat, 0, [(7, False)], 4, 0)


def test_sample_wrong_never_truth_and_covers_all() -> None:
    rng = np.random.default_rng(1)
    seen = {sample_wrong(rng, 4, 2) for _ in range(200)}
    assert seen == {0, 1, 3}


def test_compliant_adversary_answers_its_target_without_drawing() -> None:
    lat = QuestionLatent(competence=0.6, distractor=2)
    rng = np.random.default_rng(3)
    state = rng.bit_generator.state
    assert adversarial_answer(PROF, lat, 3, 4, 1, rng) == 3  # compliance defaults to 1
    assert rng.bit_generator.state == state  # no number drawn: old runs keep their draws


def test_defecting_adversary_states_its_own_first_answer_belief() -> None:
    from dataclasses import replace

    lat = QuestionLatent(competence=0.6, distractor=2)
    rng = np.random.default_rng(4)
    never = replace(PROF, compliance=0.0 + 1e-12)  # effectively never complies
    got = np.bincount([adversarial_answer(never, lat, 3, 4, 1, rng) for _ in range(20000)], minlength=4)
    assert got / 20000 == pytest.approx([0.1, 0.6, 0.2, 0.1], abs=0.015)  # p0, hand-computed above
    half = replace(PROF, compliance=0.5)
    got = np.bincount([adversarial_answer(half, lat, 3, 4, 1, rng) for _ in range(20000)], minlength=4)
    # target 3: 0.5 + 0.5 * 0.1; truth 1: 0.5 * 0.6
    assert got / 20000 == pytest.approx([0.05, 0.30, 0.10, 0.55], abs=0.015)


def test_sample_index_is_generator_choice_draw_for_draw() -> None:
    """sample_index skips Generator.choice's argument checks for speed; it must draw the same index and
    leave the generator where choice leaves it, or every seeded sim number would move."""
    from tomacs.sim.model import sample_index

    ours, numpy_s, shapes = np.random.default_rng(5), np.random.default_rng(5), np.random.default_rng(1)
    for i in range(20000):
        n = int(shapes.integers(2, 7))
        p = shapes.dirichlet(np.full(n, 0.3))
        if i % 7 == 0:  # a certain answer: all mass on one option
            p = np.zeros(n)
            p[int(shapes.integers(n))] = 1.0
        assert sample_index(p, ours) == int(numpy_s.choice(n, p=p)), (i, p)
    assert ours.random() == numpy_s.random()
    for bad in ([0.5, 0.6], [1.2, -0.2], [np.nan, 1.0]):
        with pytest.raises(ValueError, match="sum to 1"):
            sample_index(np.array(bad), ours)
