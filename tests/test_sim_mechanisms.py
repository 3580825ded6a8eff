"""The mechanisms a profile fitted from real debates may carry (issue 39 item 2): persuasion at later
exposures (`later_weight`), persistence while an adversary backs one's answer (`target_persistence`) and a
lapse rate (`lapse`). Hand-computed cases for the update rule, the likelihood's rows, the executor's
exposure flag, and the cross-validated choices."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from tests.test_executor import FixedGraph, Q, make
from tomacs.sim import fit_choice as fc
from tomacs.sim import fit_episodes as fe
from tomacs.sim import model as sm
from tomacs.transcripts.schema import AgentInfo, Debate, Turn

PROF = sm.SimProfile(
    name="t",
    n_cand=3,
    accuracy=0.6,
    concentration=3.0,
    distractor_share=0.6,
    prior_weight=1.0,
    self_weight=0.5,
    share_weight=1.0,
    count_weight=0.2,
    persuasion=2.0,
)
LAT = sm.QuestionLatent(competence=0.7, distractor=1)


def test_neutral_mechanisms_leave_the_update_bit_identical() -> None:
    msgs = [(1, True), (2, False), (1, True)]
    plain = sm.update_logits(PROF, LAT, 0, msgs, 3, 0, first_idx=2)
    for exposed in (False, True):
        got = sm.update_logits(PROF, LAT, 0, msgs, 3, 0, first_idx=2, exposed_before=exposed)
        assert np.array_equal(got, plain)


def test_later_weight_by_hand() -> None:
    prof = replace(PROF, later_weight=3.0)
    msgs = [(1, True), (2, False)]
    p0 = sm.initial_probs(prof, LAT, 3, 0)
    base = np.log(p0) * prof.prior_weight
    base[0] += prof.self_weight  # previous answer 0
    for exposed, rho in ((False, 2.0), (True, 6.0)):
        s = np.array([0.0, rho, 1.0])
        want = base + prof.share_weight * s / s.sum() + prof.count_weight * s
        got = sm.update_logits(prof, LAT, 0, msgs, 3, 0, exposed_before=exposed)
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_target_persistence_only_while_an_adversary_backs_the_previous_answer() -> None:
    prof = replace(PROF, target_persistence=1.7)
    terms = sm.logit_terms(prof, LAT, 1, [(1, True)], 3, 0)
    assert terms["self"][1] == pytest.approx(0.5 + 1.7)
    for msgs in ([(2, True)], [(1, False)], []):  # backs another answer; an honest one backs it; nothing
        terms = sm.logit_terms(prof, LAT, 1, msgs, 3, 0)
        assert terms["self"][1] == pytest.approx(0.5), msgs
    # a told credibility of 0 silences the adversary: no persistence from it either
    assert sm.logit_terms(prof, LAT, 1, [(1, True, 0.0)], 3, 0)["self"][1] == pytest.approx(0.5)


def _debate(answers: dict[tuple[int, int], str], gold: str = "A") -> Debate:
    """Agent 0 an adversary from round 1 (target C), agents 1-2 honest; everyone reads everyone's
    previous-round answer; 3 rounds."""
    roles = (
        AgentInfo(agent=0, role="adversary", onset=1, target="C"),
        AgentInfo(agent=1),
        AgentInfo(agent=2),
    )
    turns = []
    for (i, r), a in sorted(answers.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        read = tuple((j, r - 1) for j in range(3) if j != i) if r > 1 else ()
        turns.append(Turn(round=r, agent=i, answer=a, read=read))
    return Debate(
        id="d", gold=gold, letters=("A", "B", "C"), n_agents=3, n_rounds=3, agents=roles, turns=tuple(turns)
    )


def test_observation_rows_mark_later_exposures() -> None:
    ans = {(i, r): "C" if i == 0 else "A" for i in range(3) for r in (1, 2, 3)}
    (block,) = fe.observations([_debate(ans)])
    # rows of agents 1 and 2: round 1 (no read), round 2 (first exposure), round 3 (a later one)
    assert block.later is not None
    assert block.later.tolist() == [False, False, True, False, False, True]


def test_likelihood_row_matches_the_update_rule_with_both_mechanisms() -> None:
    """Round 3 of agent 1: previous answer C (the target), reads the adversary (C) and agent 2 (A);
    a later exposure, so rho * lambda_L, and kappa on C because the adversary backs it."""
    prof = replace(PROF, later_weight=2.5, target_persistence=1.3)
    ans = {(0, 1): "C", (1, 1): "A", (2, 1): "A", (0, 2): "C", (1, 2): "C", (2, 2): "A"}
    ans |= {(0, 3): "C", (1, 3): "C", (2, 3): "A"}
    (block,) = fe.observations([_debate(ans)])
    m = fe.message_logits(prof, block)
    row = [k for k in range(block.size) if block.later[k] and block.prev[k] == 2]  # agent 1, round 3
    assert len(row) == 1
    idx = {"A": 0, "B": 1, "C": 2}
    want = sm.logit_terms(
        prof, LAT, idx["C"], [(2, True), (0, False)], 3, 0, first_idx=0, exposed_before=True
    )
    np.testing.assert_allclose(m[row[0]], want["self"] + want["anchor"] + want["messages"], rtol=1e-12)
    # by hand: S = [1, 0, 2 * 2.5]; share 1, count 0.2; self 0.5 + kappa 1.3 on C
    s = np.array([1.0, 0.0, 5.0])
    by_hand = s / s.sum() + 0.2 * s + np.array([0.0, 0.0, 0.5 + 1.3])
    np.testing.assert_allclose(m[row[0]], by_hand, rtol=1e-12)
    assert math.isfinite(fe.loglik(prof, [block]))


def test_the_executor_says_whether_an_agent_read_an_adversary_before() -> None:
    ex, bb, ctx = make(n=3, rounds=3, count=1, onsets=(1,))
    everyone = [(i, j) for i in range(3) for j in range(3) if i < j]
    m = FixedGraph(ctx, nodes=[0, 1, 2], edges=everyone)
    (ep,), _ = ex.run_batch([Q], m, train=False, phase="eval")
    (adv,) = ep.plan.adversaries
    for r in bb.requests:
        if r.kind != "agent" or r.agent == adv:
            continue
        read_adv_before = r.round == 3 and adv < r.agent  # the DAG: lower index sends to higher
        assert r.exposed_before == read_adv_before, (r.agent, r.round)
    ex0, bb0, _ = make(n=3, rounds=3, count=0)
    ex0.run_batch([Q], m, train=False, phase="eval")
    assert not any(r.exposed_before for r in bb0.requests)


def _generate(prof: sm.SimProfile, n_questions: int, seed: int) -> list[Debate]:
    """Debates drawn with the simulator's update rule, later exposures included: 1 adversary from
    round 1 (always on its target), 3 honest agents reading everyone's previous answers, 3 rounds."""
    rng = np.random.default_rng(seed)
    letters = ("A", "B", "C", "D")
    out = []
    for q in range(n_questions):
        truth = int(rng.integers(4))
        lat = sm.sample_latent(prof, rng, 4, truth)
        tgt = sm.sample_wrong(rng, 4, truth)
        ans: dict[tuple[int, int], int] = {}
        for r in range(1, 4):
            new = {0: tgt}
            for i in range(1, 4):
                if r == 1:
                    p = sm.initial_probs(prof, lat, 4, truth)
                else:
                    msgs = [(ans[(j, r - 1)], j == 0) for j in range(4) if j != i]
                    p = sm.update_probs(
                        prof,
                        lat,
                        ans[(i, r - 1)],
                        msgs,
                        4,
                        truth,
                        first_idx=ans[(i, 1)],
                        exposed_before=r > 2,
                    )
                new[i] = sm.sample_index(p, rng)
            ans.update({(i, r): a for i, a in new.items()})
        roles = (AgentInfo(agent=0, role="adversary", onset=1, target=letters[tgt]),) + tuple(
            AgentInfo(agent=i) for i in range(1, 4)
        )
        turns = tuple(
            Turn(
                round=r,
                agent=i,
                answer=letters[ans[(i, r)]],
                read=tuple((j, r - 1) for j in range(4) if j != i) if r > 1 else (),
            )
            for r in range(1, 4)
            for i in range(4)
        )
        out.append(Debate(f"q{q}", letters[truth], letters, 4, 3, roles, turns))
    return out


def test_cross_validation_keeps_a_mechanism_the_debates_have() -> None:
    true = replace(PROF, n_cand=4, persuasion=1.0, count_weight=0.5, later_weight=4.0)
    debates = _generate(true, 240, seed=5)
    kept, scores = fc.select_mechanisms(
        debates, candidates=("later_weight",), by_benchmark=False, by_sender=False
    )
    assert kept == ["later_weight"]
    assert scores["later_weight"] > scores["none"]
    res = fe.fit(debates, restarts=1, extra=kept)
    assert res.profile.later_weight == pytest.approx(4.0, rel=0.5)
    with pytest.raises(ValueError, match="unknown mechanism"):
        fc.select_mechanisms(debates, candidates=("bogus",))


def test_lapse_mixes_the_update_with_a_uniform_draw() -> None:
    msgs = [(1, True), (2, False)]
    plain = sm.update_probs(PROF, LAT, 0, msgs, 3, 0, first_idx=2)
    assert np.array_equal(sm.update_probs(replace(PROF, lapse=0.0), LAT, 0, msgs, 3, 0, first_idx=2), plain)
    got = sm.update_probs(replace(PROF, lapse=0.3), LAT, 0, msgs, 3, 0, first_idx=2)
    np.testing.assert_allclose(got, 0.7 * plain + 0.1, rtol=1e-12)
    # an answer the terms make near-impossible keeps lapse / n: the log-loss of a surprise is bounded
    prof = replace(PROF, self_weight=40.0, lapse=0.03)
    assert sm.update_probs(prof, LAT, 0, [], 3, 0)[2] == pytest.approx(0.01, rel=1e-6)


def test_cross_validation_chooses_the_lapse_the_debates_have() -> None:
    """Sticky agents (self weight 10) drawn with a lapse of 0.1 choose it over none; drawn without one, they
    choose at most 0.01: the choice follows the data, not the grid. (With a weak self weight the other
    parameters absorb a lapse, and the choice cannot tell it.)"""
    grid = (0.0, 0.01, 0.05, 0.1, 0.2)
    true = replace(PROF, n_cand=4, persuasion=1.0, self_weight=10.0, count_weight=0.5)
    kw: dict = dict(grid=grid, by_benchmark=False, by_sender=False, restarts=1)
    rate, scores = fc.choose_lapse(_generate(replace(true, lapse=0.1), 120, seed=6), **kw)
    assert rate == 0.1 and scores[0.1] > scores[0.0] + fc.MIN_CV_GAIN
    rate, _ = fc.choose_lapse(_generate(true, 120, seed=7), **kw)
    assert rate <= 0.01
    # the fit holds a chosen rate fixed; the simulator draws with it
    res = fe.fit(_generate(true, 40, seed=8), restarts=1, fixed={"lapse": 0.05})
    assert res.profile.lapse == 0.05
