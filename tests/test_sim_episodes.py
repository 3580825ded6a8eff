"""The vectorised debate simulator (tomacs/sim/episodes.py) and the joint Tables 7-8 + Table 2 fit:
agreement with the executor path, determinism, recovery of known parameters from model-made data."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from tomacs.launch.spec import job_spec
from tomacs.sim.calibrate import expected_cells, fit_profile
from tomacs.sim.episodes import ATTACK_COUNTS, initial_probs_batch, make_draws, simulate, table2_cells
from tomacs.sim.model import QuestionLatent, SimProfile, initial_probs

# Every term switched on, memory split between self and anchor, weak competence in updates: a
# profile where the decision agent's own answer and the anchor matter (as for ARC-C).
PROF = SimProfile(
    name="mmlu",
    n_cand=4,
    accuracy=0.75,
    concentration=3.0,
    distractor_share=0.6,
    prior_weight=0.3,
    self_weight=0.8,
    share_weight=2.5,
    count_weight=0.2,
    persuasion=2.0,
    anchor_weight=1.5,
)


def test_initial_probs_batch_matches_model() -> None:
    u = np.array([0.1, 0.5, 0.9])
    d = np.array([1, 2, 3])
    got = initial_probs_batch(PROF, u, d)
    from scipy import special

    for row, (uu, dd) in enumerate(zip(u, d, strict=True)):
        c = float(special.betaincinv(*PROF.beta_ab, uu))
        ref = initial_probs(PROF, QuestionLatent(competence=c, distractor=int(dd)), 4, truth_idx=0)
        assert got[row] == pytest.approx(ref)


@pytest.mark.parametrize("field,value", [("later_weight", 2.0), ("target_persistence", 1.0), ("lapse", 0.05)])
def test_a_fitted_mechanism_is_refused_not_dropped(field: str, value: float) -> None:
    """The batch simulator writes the paper profiles' rule only: a profile that carries a mechanism of a
    fitted profile is refused in one line, not simulated without it."""
    draws = make_draws(20, seed=0)
    simulate(PROF, 2, draws)  # neutral: runs
    with pytest.raises(ValueError, match=f"carries {field}, which tomacs.sim.episodes does not simulate"):
        simulate(replace(PROF, **{field: value}), 2, draws)


def test_deterministic_per_seed() -> None:
    a = table2_cells(PROF, make_draws(500, 7))
    b = table2_cells(PROF, make_draws(500, 7))
    c = table2_cells(PROF, make_draws(500, 8))
    assert a == b
    assert a != c


def test_decision_modes_and_graphs_differ_where_they_should() -> None:
    d = make_draws(2000, 0)
    vote = simulate(PROF, 3, d, decision="vote")
    llm = simulate(PROF, 3, d, decision="llm")
    assert simulate(PROF, 3, d)["mode"] == "llm" and simulate(PROF, 2, d)["mode"] == "vote"
    assert vote["acc"] != llm["acc"]
    # the random graph keeps fewer edges: a different debate, same round-1 draws
    rnd = simulate(PROF, 2, d, graph="random")
    com = simulate(PROF, 2, d, graph="complete")
    assert rnd["honest_acc"][0] == com["honest_acc"][0]
    assert rnd["honest_acc"][-1] != com["honest_acc"][-1]
    # no adversaries, no messages that matter: accuracy stays near the single agent's
    assert simulate(PROF, 0, d)["honest_acc"][0] == pytest.approx(PROF.accuracy, abs=0.02)


def _executor_run(prof: SimProfile, method: str, attack: str, size: int) -> dict:
    from tomacs.analysis.propagation import run_episodes
    from tomacs.config import compose
    from tomacs.job.components import build
    from tomacs.sim.backbone import SimBackbone
    from tomacs.sim.diagnose import round_stats

    cfg = compose(
        ["benchmark=synthetic", f"method={method}", f"attack={attack}", f"eval.size={size}", "logger=none"]
    )
    comps = build(job_spec(cfg), need_train=False)
    comps.executor.backbone = SimBackbone("mmlu", int(cfg.seed), profiles={"mmlu": prof})
    eps = run_episodes(comps.executor, comps.method, comps.test_qs, int(cfg.eval.batch_size))
    return round_stats(eps)


@pytest.mark.slow  # 600 questions through the executor per case: ~5 s each
@pytest.mark.parametrize(
    ("method", "attack", "decision_weight", "compliance"),
    [
        ("complete", "eq50", 1.0, 1.0),
        ("complete", "lt50", 1.0, 1.0),
        ("random", "gt50", 1.0, 1.0),
        ("complete", "gt50", 0.4, 1.0),
        ("complete", "lt50", 1.0, 0.5),
        ("random", "gt50", 1.0, 0.5),
    ],
)
def test_vectorised_sim_agrees_with_executor(
    method: str, attack: str, decision_weight: float, compliance: float
) -> None:
    size = 600
    prof = replace(PROF, decision_weight=decision_weight, compliance=compliance)
    st = _executor_run(prof, method, attack, size)
    vec = simulate(prof, ATTACK_COUNTS[attack], make_draws(20000, 1), graph=method)
    p = vec["acc"]
    se = math.sqrt(p * (1 - p) / size)
    assert abs(st["decision"]["acc"] - p) < 4 * se + 0.01, (st["decision"]["acc"], p)
    for t, r in enumerate(st["rounds"]):
        q = vec["honest_acc"][t]
        se_r = math.sqrt(q * (1 - q) / size)  # per-question clustering: agents share the latent
        assert abs(r["acc"] - q) < 4 * se_r + 0.01, (t + 1, r["acc"], q)


def test_executor_check_has_power_against_the_old_decision_agent() -> None:
    # The pre-fix decision agent (no own answer) is far from the executor path on this profile:
    # the agreement test above could detect that bug.
    d = make_draws(20000, 1)
    new = simulate(PROF, 4, d)["acc"]
    old = simulate(replace(PROF, self_weight=0.0, anchor_weight=0.0), 4, d)["acc"]
    assert new - old > 0.08


def test_decision_weight_moves_only_the_llm_decision_cells() -> None:
    d = make_draws(4000, 2)
    low, high = replace(PROF, decision_weight=0.5), replace(PROF, decision_weight=2.0)
    assert simulate(low, 2, d)["acc"] == simulate(high, 2, d)["acc"]  # lt50: a vote, no decision agent
    assert simulate(low, 4, d)["acc"] > simulate(high, 4, d)["acc"] + 0.05  # gt50: it reads less


def _fit_one(true: SimProfile, param: str, start: SimProfile) -> SimProfile:
    """Fit one parameter from `start` to cells the model itself made with `true` (Tables 7-8 exact,
    Table 2 Complete from 1,500 vectorised episodes)."""
    episodes, seed = 1500, 5
    targets = dict(expected_cells(true))
    targets.update({f"t2_{a}": v for a, v in table2_cells(true, make_draws(episodes, seed)).items()})
    return fit_profile(
        "arc_c", seed=seed, episodes=episodes, targets=targets, free=(param,), start=start, max_nfev=30
    )


def test_fit_recovers_the_decision_weight_from_model_made_data() -> None:
    true = replace(PROF, name="arc_c", decision_weight=1.6)
    start = replace(true, decision_weight=1.0)
    assert expected_cells(start) == expected_cells(true)  # Tables 7-8 have no decision agent
    got = _fit_one(true, "decision_weight", start)
    assert got.decision_weight == pytest.approx(1.6, abs=0.2)


def test_fit_recovers_known_memory_split_from_model_made_data() -> None:
    # a regime where the split moves Table 2 (lt50 by ~7 points over the range; in others it
    # hardly does, see docs/deviations.md): prior 1, share 1
    true = replace(PROF, name="arc_c", prior_weight=1.0, share_weight=1.0, self_weight=0.5, anchor_weight=2.5)
    episodes, seed = 1500, 5
    targets = dict(expected_cells(true))
    targets.update({f"t2_{a}": v for a, v in table2_cells(true, make_draws(episodes, seed)).items()})
    start = replace(true, self_weight=2.5, anchor_weight=0.5)  # same sum: Tables 7-8 cannot tell
    assert expected_cells(start)["adv3"] == pytest.approx(targets["adv3"], abs=1e-9)
    got = fit_profile(
        "arc_c",
        seed=seed,
        episodes=episodes,
        targets=targets,
        free=("self_weight", "anchor_weight"),
        start=start,
        max_nfev=30,
    )
    assert got.self_weight == pytest.approx(0.5, abs=0.4)
    assert got.anchor_weight == pytest.approx(2.5, abs=0.4)
    assert got.prior_weight == true.prior_weight  # not free: untouched


def test_compliance_one_is_the_old_adversary_and_lower_compliance_helps_the_vote() -> None:
    d = make_draws(4000, 3)
    assert PROF.compliance == 1.0
    # at pi = 1 the compliance draws are never read: other values there change nothing
    other = replace(d, u_comply=np.ones_like(d.u_comply), u_defect=1.0 - d.u_defect)  # all defect
    full = simulate(PROF, 2, d)
    assert simulate(PROF, 2, other) == full
    half = simulate(replace(PROF, compliance=0.5), 2, d)
    assert simulate(replace(PROF, compliance=0.5), 2, other) != half  # and below 1 they are
    # defectors state their own (mostly right) belief: the vote of 4 honest + 2 adversaries gains
    assert half["acc"] > full["acc"] + 0.03
    assert half["honest_acc"][0] == full["honest_acc"][0]  # round 1: nobody is adversarial yet


@pytest.mark.slow
def test_expected_tables_7_8_agree_with_sampled_under_partial_compliance() -> None:
    from tomacs.sim.calibrate import simulate_cells

    prof = replace(PROF, compliance=0.6)
    exp = expected_cells(prof)
    sim = simulate_cells(prof, 20000, 11)
    for cell, v in exp.items():
        assert sim[cell] == pytest.approx(v, abs=1.4), cell  # SE <= 0.35 points per cell
    # and compliance is visible in every adversarial cell (the check has power)
    full = expected_cells(PROF)
    for cell in ("attacked", "adv2", "adv3", "adv4"):
        assert exp[cell] > full[cell] + 2.0, cell
    assert exp["adv0"] == pytest.approx(full["adv0"])  # no adversary, nothing to comply with


@pytest.mark.slow
def test_fit_recovers_compliance_from_model_made_data() -> None:
    true = replace(PROF, name="arc_c", compliance=0.7)
    got = _fit_one(true, "compliance", replace(true, compliance=0.95))
    assert got.compliance == pytest.approx(0.7, abs=0.05)
