"""The episode fitter (tomacs/sim/fit_episodes.py) and held-out scoring (tomacs/sim/heldout.py)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from tomacs.sim import fit_choice as fc
from tomacs.sim import fit_episodes as fe
from tomacs.sim import heldout as ho
from tomacs.sim import model as sm
from tomacs.transcripts.schema import AgentInfo, Debate, Turn

LETTERS = ("A", "B", "C")


def _profile(**kw: float) -> sm.SimProfile:
    base = dict(
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
        anchor_weight=0.0,
    )
    base.update(kw)
    return sm.SimProfile(**base)  # type: ignore[arg-type]


def _debate(
    qid: str,
    answers: dict[tuple[int, int], str | None],
    roles: list[AgentInfo],
    gold: str = "A",
    n_rounds: int = 2,
    question: str | None = None,
    letters: tuple[str, ...] = LETTERS,
) -> Debate:
    """Everyone reads every other agent's previous-round answer."""
    n = len(roles)
    turns = []
    for (i, r), a in sorted(answers.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        read = tuple((j, r - 1) for j in range(n) if j != i) if r > 1 else ()
        turns.append(Turn(round=r, agent=i, answer=a, read=read))
    return Debate(
        id=qid,
        gold=gold,
        letters=letters,
        n_agents=n,
        n_rounds=n_rounds,
        agents=tuple(roles),
        turns=tuple(turns),
        question=question,
    )


HONEST2 = [AgentInfo(agent=0), AgentInfo(agent=1)]


def test_likelihood_matches_a_hand_computed_case() -> None:
    """One question, 2 honest agents, 2 rounds, a 2-point competence grid, 3 options (gold A).
    Round 1: agent 0 says A, agent 1 says B; round 2: both say A after reading each other."""
    prof = _profile()
    d = _debate("q", {(0, 1): "A", (1, 1): "B", (0, 2): "A", (1, 2): "A"}, HONEST2)
    (block,) = fe.observations([d])
    grid_c, grid_w = [0.3, 0.8], [0.25, 0.75]
    got = fe.block_loglik(prof, block, grid=(np.array(grid_c), np.array(grid_w)))

    delta, alpha, share, count = 0.6, 0.5, 1.0, 0.2
    total = 0.0
    for c, w in zip(grid_c, grid_w, strict=True):
        for dist in ("B", "C"):  # the distractor, each with probability 1/2
            p0 = {"A": c, dist: (1 - c) * delta}
            p0["C" if dist == "B" else "B"] = (1 - c) * (1 - delta)
            # round 2, agent 0: previous A, reads one honest message B (share 1, count 1)
            u0 = {j: math.log(p0[j]) for j in LETTERS}
            u0["A"] += alpha
            u0["B"] += share * 1.0 + count * 1.0
            p_a0 = math.exp(u0["A"]) / sum(math.exp(v) for v in u0.values())
            # round 2, agent 1: previous B, reads one honest message A
            u1 = {j: math.log(p0[j]) for j in LETTERS}
            u1["B"] += alpha
            u1["A"] += share + count
            p_a1 = math.exp(u1["A"]) / sum(math.exp(v) for v in u1.values())
            total += w * 0.5 * p0["A"] * p0["B"] * p_a0 * p_a1
    assert got.shape == (1,)
    assert got[0] == pytest.approx(math.log(total), rel=1e-12)


def _random_debates(rng: np.random.Generator, n: int, n_cand: int = 4) -> list[Debate]:
    letters = tuple("ABCDE"[:n_cand])
    roles = [
        AgentInfo(agent=0, role="adversary", onset=1, target="B"),
        AgentInfo(agent=1, role="adversary", onset=2, target="B"),
        AgentInfo(agent=2),
        AgentInfo(agent=3),
    ]
    out = []
    for q in range(n):
        ans = {}
        for i in range(4):
            for r in range(1, 4):
                ans[(i, r)] = None if rng.random() < 0.1 else letters[int(rng.integers(n_cand))]
        out.append(
            _debate(
                f"q{q // 2}", ans, roles, gold=letters[int(rng.integers(n_cand))], n_rounds=3, letters=letters
            )
        )
    return out


@pytest.mark.parametrize(
    "later_weight,target_persistence,lapse,n,beta,self_w",
    [
        (1.0, 0.0, 0.0, 4, 0.8, 1.3),
        (2.5, 1.5, 0.0, 4, 0.8, 1.3),
        (2.5, 1.5, 0.07, 4, 0.8, 1.3),
        (2.5, 1.5, 0.07, 2, 0.8, 1.3),
        (1.0, 0.0, 0.2, 3, 0.8, 1.3),
        # a prior and a self weight whose exponentials underflow: those lapse rows are redone in logs
        (1.0, 0.0, 0.05, 4, 400.0, 1000.0),
    ],
)
def test_likelihood_agrees_with_the_simulator_update_rule(
    later_weight: float,
    target_persistence: float,
    lapse: float,
    n: int,
    beta: float,
    self_w: float,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every honest answer's probability, summed per question, equals a brute force through
    tomacs.sim.model.initial_probs / update_probs (adversarial senders persuasive from their onset,
    unparsed answers skipped as outcomes and dropped as messages; with the mechanisms, an agent that
    read an adversarial turn in an earlier round is `exposed_before`, parsed or not)."""
    rng = np.random.default_rng(3)
    debates = _random_debates(rng, 12, n_cand=n)
    prof = _profile(
        n_cand=n,
        anchor_weight=0.7,
        self_weight=self_w,
        prior_weight=beta,
        persuasion=3.0,
        later_weight=later_weight,
        target_persistence=target_persistence,
        lapse=lapse,
    )
    (block,) = fe.observations(debates)
    c = np.array([0.2, 0.55, 0.9])
    in_logs = []
    redo = fe._lapsed_rows_in_logs
    monkeypatch.setattr(fe, "_lapsed_rows_in_logs", lambda *a: in_logs.append(1) or redo(*a))
    got = fe.group_loglik(prof, block, c)
    assert bool(in_logs) == (beta > 100)  # the rows redone in logs are those whose normaliser underflowed
    keys = block.keys
    ref = np.zeros_like(got)
    for d in debates:
        g = keys.index(d.question_key)
        idx = {letter: i for i, letter in enumerate(d.letters)}
        truth = idx[d.gold]
        for k, ck in enumerate(c):
            wrong = [j for j in range(n) if j != truth]
            for di, dist in enumerate(wrong):
                lat = sm.QuestionLatent(competence=float(ck), distractor=dist)
                for i in (2, 3):
                    for r in range(1, 4):
                        y = d.turn(i, r).answer
                        if y is None:
                            continue
                        if r == 1:
                            p = sm.initial_probs(prof, lat, n, truth)
                        else:
                            msgs = [
                                (idx[d.turn(j, rr).answer], d.is_adversarial(j, rr))
                                for j, rr in d.turn(i, r).read
                                if d.turn(j, rr).answer is not None
                            ]
                            prev, first = d.turn(i, r - 1).answer, d.turn(i, 1).answer
                            before = any(
                                d.is_adversarial(j, rr) for r0 in range(2, r) for j, rr in d.turn(i, r0).read
                            )
                            if prev is None and not msgs:
                                p = sm.initial_probs(prof, lat, n, truth)
                            else:
                                p = sm.update_probs(
                                    prof,
                                    lat,
                                    None if prev is None else idx[prev],
                                    msgs,
                                    n,
                                    truth,
                                    first_idx=None if first is None else idx[first],
                                    exposed_before=before,
                                )
                        # the fitter relabels gold -> 0 and orders distractors 1..n-1
                        dd = (dist - truth) % n - 1
                        ref[g, k, dd] += math.log(p[idx[y]])
                del di
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-10)


def _generate(prof: sm.SimProfile, n_questions: int, seed: int) -> list[Debate]:
    """Debates drawn with the simulator's own functions: 1 adversary from round 1 (compliant with
    probability `compliance`), 4 honest agents reading everyone's previous answers, 3 rounds."""
    rng = np.random.default_rng(seed)
    letters = ("A", "B", "C", "D")
    roles = [AgentInfo(agent=0, role="adversary", onset=1, target=None)] + [
        AgentInfo(agent=i) for i in range(1, 5)
    ]
    out = []
    for q in range(n_questions):
        truth = int(rng.integers(4))
        lat = sm.sample_latent(prof, rng, 4, truth)
        tgt = sm.sample_wrong(rng, 4, truth)
        ans: dict[tuple[int, int], int] = {}
        for r in range(1, 4):
            new = {0: sm.adversarial_answer(prof, lat, tgt, 4, truth, rng)}
            for i in range(1, 5):
                if r == 1:
                    p = sm.initial_probs(prof, lat, 4, truth)
                else:
                    msgs = [(ans[(j, r - 1)], j == 0) for j in range(5) if j != i]
                    p = sm.update_probs(prof, lat, ans[(i, r - 1)], msgs, 4, truth, first_idx=ans[(i, 1)])
                new[i] = sm.sample_index(p, rng)
            ans.update({(i, r): a for i, a in new.items()})
        adv = replace(roles[0], target=letters[tgt])
        out.append(
            _debate(
                f"q{q}",
                {k: letters[v] for k, v in ans.items()},
                [adv, *roles[1:]],
                letters[truth],
                3,
                letters=letters,
            )
        )
    return out


def test_parameters_are_recovered_from_synthetic_debates() -> None:
    """Fit debates generated from a known profile. Tolerances are what 400 questions (4,800 honest
    answers) pin down; weakly identified terms are checked through the likelihood instead."""
    true = _profile(
        n_cand=4,
        accuracy=0.65,
        concentration=2.0,
        distractor_share=0.6,
        prior_weight=1.0,
        self_weight=2.0,
        share_weight=3.0,
        count_weight=0.1,
        persuasion=2.5,
        anchor_weight=0.5,
        compliance=0.9,
    )
    debates = _generate(true, 400, seed=11)
    res = fe.fit(debates, restarts=1)
    got = res.profile
    assert got.accuracy == pytest.approx(true.accuracy, abs=0.05)
    assert got.concentration == pytest.approx(true.concentration, rel=0.5)
    assert got.distractor_share == pytest.approx(true.distractor_share, abs=0.15)
    assert got.self_weight + got.anchor_weight == pytest.approx(
        true.self_weight + true.anchor_weight, rel=0.35
    )
    assert got.share_weight == pytest.approx(true.share_weight, rel=0.5)
    assert got.persuasion == pytest.approx(true.persuasion, rel=0.6)
    assert got.compliance == pytest.approx(0.9, abs=0.05)  # plain rate, counts chance hits as compliant
    # the optimum is at least as likely as the truth (it is the maximum), and not far above it
    blocks = fe.observations(debates)
    ll_true = fe.loglik(true, blocks)
    assert res.loglik >= ll_true - 1e-6
    assert res.loglik - ll_true < 40.0


def test_split_is_seeded_and_question_disjoint() -> None:
    roles = HONEST2
    debates = []
    for q in range(20):
        for run in range(2):  # every question debated twice, as across MAD-Follower runs
            debates.append(
                _debate(
                    f"{q}-{run}", {(0, 1): "A", (1, 1): "B"}, roles, n_rounds=1, question=f"Question  {q}?"
                )
            )
    a_fit, a_held = fe.split_questions(debates, 0.7, seed=0)
    b_fit, b_held = fe.split_questions(list(reversed(debates)), 0.7, seed=0)
    c_fit, _ = fe.split_questions(debates, 0.7, seed=1)
    keys = lambda ds: {d.question_key for d in ds}  # noqa: E731
    assert keys(a_fit) == keys(b_fit) and keys(a_held) == keys(b_held)  # same seed, any input order
    assert keys(a_fit) != keys(c_fit)  # another seed, another split
    assert not keys(a_fit) & keys(a_held)
    assert len(keys(a_fit)) == 14 and len(keys(a_held)) == 6
    assert len(a_fit) == 28 and len(a_held) == 12  # both runs of a question on one side
    # wording decides, not the debate id (ids differ per run here)
    assert debates[0].question_key == debates[1].question_key
    with pytest.raises(ValueError, match="--split"):
        fe.split_questions(debates, 1.5)


def test_statistics_on_a_hand_case() -> None:
    """Adversary (agent 0, target B from round 1), two honest agents; 3 rounds, gold A.
    Agent 1: A, B, B (switches at its first exposure, then stays). Agent 2: C, A, B (recovers in
    round 2, switches at a later exposure in round 3)."""
    roles = [
        AgentInfo(agent=0, role="adversary", onset=1, target="B"),
        AgentInfo(agent=1),
        AgentInfo(agent=2),
    ]
    ans = {(0, 1): "B", (0, 2): "B", (0, 3): "B", (1, 1): "A", (1, 2): "B", (1, 3): "B"}
    ans.update({(2, 1): "C", (2, 2): "A", (2, 3): "B"})
    d = _debate("q", ans, roles, n_rounds=3)
    counts = ho.stat_counts(ho.layout(d), ho.observed_answers(d)[None], 3, 3)

    def rate(stat: str, r: int) -> tuple[float, float]:
        num, den = counts[ho.STATS.index(stat), :, r - 1]
        return num, den

    assert rate("accuracy", 1) == (1, 2) and rate("accuracy", 2) == (1, 2) and rate("accuracy", 3) == (0, 2)
    assert rate("conformity", 1) == (0, 2) and rate("conformity", 3) == (2, 2)
    assert rate("switch_first", 2) == (1, 2)  # both off target before round 2, agent 1 switches
    assert rate("switch_later", 3) == (1, 1)  # agent 2, exposed again, switches
    assert rate("stay_target", 3) == (1, 1)
    assert rate("recovery", 2) == (1, 1) and rate("recovery", 3) == (0, 1)
    # votes: round 1 A/B/C tie (gold among 3 tied -> 1/3), round 2 B,B,A -> wrong
    assert rate("vote_accuracy", 1) == (pytest.approx(1 / 3), 1) and rate("vote_accuracy", 2) == (0, 1)


def test_bootstrap_interval_is_never_a_point_at_zero_or_one() -> None:
    per_q = np.zeros((10, 1, 2, 1))
    per_q[:, 0, 1, 0] = 4.0  # 0 of 40 observed
    value, lo, hi, exact = ho.bootstrap(per_q, reps=200)
    assert value[0, 0] == 0.0 and exact[0, 0]
    assert lo[0, 0] == 0.0 and hi[0, 0] == pytest.approx(1 - 0.025 ** (1 / 40))


def test_fitted_profile_predicts_its_own_debates_and_beats_the_baselines() -> None:
    """On debates generated from a profile, the TRUE profile's held-out simulation lands inside the
    observed intervals in most cells and its log-likelihood beats keep-previous."""
    true = _profile(n_cand=4, accuracy=0.65, self_weight=1.0, share_weight=4.0, persuasion=3.0)
    debates = _generate(true, 120, seed=5)
    fit_d, held = fe.split_questions(debates, 0.5, seed=0)
    ev = ho.evaluate(true, held, None, fit_d, sm.load_profiles()["mmlu"], draws=200, reps=500)
    assert ev["cells_total"] >= 10
    assert ev["inside_share"] >= 0.8
    ll = ev["loglik_per_answer"]
    assert ll["fitted"] > ll["keep_previous"]
    assert ll["fitted"] > ll["paper"]


def _tomacs(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tomacs.cli", *args], capture_output=True, text=True, timeout=600, cwd=cwd
    )


@pytest.mark.slow
def test_cli_fits_mad_follower_runs_and_writes_a_profile(data_dir: Path, tmp_path: Path) -> None:
    """Two small qwen-max MAD-Follower runs (6 debates, 3 questions) through the command."""
    mad = data_dir / "debates" / "mad-follower"
    runs = [mad / "20251114_070300_n5_r3_limit3", mad / "20251114_070404_n5_r3_limit3"]
    if not all(r.is_dir() for r in runs):
        pytest.skip("MAD-Follower runs not found under TOMACS_DATA/debates")
    res_file = tmp_path / "res.json"
    args = ["calibrate", "--from-episodes", str(runs[0]), "--from-episodes", str(runs[1])]
    p = _tomacs(
        *args, "--model", "qwen-max", "--name", "qm-small", "--draws", "50", "-o", str(res_file), cwd=tmp_path
    )
    assert p.returncode == 0, p.stderr
    assert "held-out questions" in p.stdout and "keep previous answer" in p.stdout
    res = json.loads(res_file.read_text())
    held = res["held_out"]
    assert held["questions"] == 1 and held["debates"] == 2  # 3 questions, 70/30: 2 fitted, 1 held out
    assert held["cells_total"] > 0 and 0 <= held["cells_inside"] <= held["cells_total"]
    assert {"fitted", "keep_previous", "paper"} <= set(held["loglik_per_answer"])
    for c in held["cells"]:
        assert c["lo"] <= c["observed"] <= c["hi"] and 0.0 <= c["predicted"] <= 1.0
    path = Path(res["path"])
    stored = yaml.safe_load((path if path.is_absolute() else tmp_path / path).read_text())
    assert stored["name"] == "qm-small"
    prof = sm.SimProfile.from_dict(stored["profile"], name="qm-small")
    assert prof.n_cand == 5 and 0.02 <= prof.accuracy <= 0.98
    prov = stored["provenance"]
    assert prov["debates_fit"] == 4 and prov["debates_held_out"] == 2 and prov["models"] == ["qwen-max"]
    assert prov["split_seed"] == 0 and prov["held_out"]["cells_total"] == held["cells_total"]
    assert len(prov["sources"]) == 2 and prov["fit_date"]


@pytest.mark.slow
def test_cli_bad_input_fails_in_one_line(data_dir: Path, tmp_path: Path) -> None:
    run = data_dir / "debates" / "mad-follower" / "20251114_070404_n5_r3_limit3"
    if not run.is_dir():
        pytest.skip("MAD-Follower runs not found under TOMACS_DATA/debates")
    p = _tomacs("calibrate", "--from-episodes", str(run), cwd=tmp_path)
    assert p.returncode == 2 and "--name" in p.stderr
    p = _tomacs("calibrate", "--from-episodes", str(run), "--name", "x", "--model", "gpt-9", cwd=tmp_path)
    assert p.returncode == 2 and "gpt-9" in p.stderr and "qwen-max" in p.stderr  # lists the models there
    p = _tomacs("calibrate", "--from-episodes", str(run), str(run), "--name", "x", cwd=tmp_path)
    assert p.returncode == 2 and "repeat the flag" in p.stderr
    p = _tomacs("sim", "fit-episodes", str(tmp_path / "nope"), "--name", "x", cwd=tmp_path)
    assert p.returncode == 2 and "nope" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1  # the new spelling prints no notice


FIXTURE = Path(__file__).resolve().parent / "data" / "mad_follower_small"


@pytest.mark.slow
def test_cli_fits_the_small_fixture(tmp_path: Path) -> None:
    """The CI fit: the 4 qwen3-8b debates of the MAD-Follower fixture, 3 questions fitted, 1 held out."""
    res_file = tmp_path / "res.json"
    p = _tomacs(
        "calibrate",
        "--from-episodes",
        str(FIXTURE),
        "--model",
        "qwen3-8b",
        "--name",
        "fixture-q8",
        "--split",
        "0.75",
        "--draws",
        "50",
        "-o",
        str(res_file),
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr
    res = json.loads(res_file.read_text())
    assert res["fit"]["debates"] == 3 and res["held_out"]["debates"] == 1
    assert res["held_out"]["answers"] == 15  # 3 honest agents x 5 rounds
    path = Path(res["path"])
    stored = yaml.safe_load((path if path.is_absolute() else tmp_path / path).read_text())
    assert stored["provenance"]["models"] == ["qwen3-8b"] and stored["provenance"]["debates_fit"] == 3
    fitted = sm.SimProfile.from_dict(stored["profile"], name="fixture-q8")
    assert path == (tmp_path / "outputs" / "profiles" / "fixture-q8.yaml").resolve()  # the store
    # a later run in the same directory takes it by name
    env = {k: v for k, v in os.environ.items() if k != "TOMACS_PROFILES"}
    p = subprocess.run(
        [sys.executable, "-m", "tomacs.cli", "train", "method=debate", "backbone=sim",
         "backbone.profile=fixture-q8", "eval.size=3", "train.size=4", "train.epochs=1", "embedder=hashing",
         "hydra.run.dir=outputs/runs/fitted"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr[-3000:]
    run = json.loads((tmp_path / "outputs" / "runs" / "fitted" / "results.json").read_text())
    assert run["backbone"] == "sim:fixture-q8"
    st = run["backbone_stats"]
    assert st["profile"] == "fixture-q8" and st["profile_source"] == "store"
    assert st["profile_fit_date"] == stored["provenance"]["fit_date"]
    assert fitted.n_cand == 5


# -- persuasion per sender model, accuracy per benchmark (issue 26 transfer) --------------------
def test_persuasion_per_sender_model_by_hand() -> None:
    """Two adversaries of different models from round 1 (agent 0 'big' says B, agent 1 'small' says
    C), one honest agent: A in round 1, then B after reading both. Each persuasive message weighs its
    sender model's persuasion; a model missing from the table weighs the profile's."""
    prof = _profile()  # persuasion 2.0, share 1.0, count 0.2, self 0.5, delta 0.6
    roles = [
        AgentInfo(agent=0, role="adversary", onset=1, target="B", model="big"),
        AgentInfo(agent=1, role="adversary", onset=1, target="B", model="small"),
        AgentInfo(agent=2, model="h"),
    ]
    ans = {(0, 1): "B", (1, 1): "C", (2, 1): "A", (0, 2): "B", (1, 2): "C", (2, 2): "B"}
    d = _debate("q", ans, roles)
    (block,) = fe.observations([d])
    assert block.pers_models == ("big", "small")
    grid = (np.array([0.3, 0.8]), np.array([0.25, 0.75]))

    def by_hand(w_big: float, w_small: float) -> float:
        share, count, alpha, delta = 1.0, 0.2, 0.5, 0.6
        s = {"A": 0.0, "B": w_big, "C": w_small}
        tot = w_big + w_small
        total = 0.0
        for c, w in zip(*grid, strict=True):
            for dist in ("B", "C"):
                p0 = {"A": c, dist: (1 - c) * delta}
                p0["C" if dist == "B" else "B"] = (1 - c) * (1 - delta)
                u = {j: math.log(p0[j]) + share * s[j] / tot + count * s[j] for j in LETTERS}
                u["A"] += alpha  # its previous answer (first answer too, anchor weight 0)
                p_b = math.exp(u["B"]) / sum(math.exp(v) for v in u.values())
                total += w * 0.5 * p0["A"] * p_b
        return math.log(total)

    got = fe.block_loglik(prof, block, grid=grid, pers_by={"big": 3.0, "small": 0.5})
    assert got[0] == pytest.approx(by_hand(3.0, 0.5), rel=1e-12)
    # a sender model not in the table weighs the profile's persuasion (2.0)
    got = fe.block_loglik(prof, block, grid=grid, pers_by={"big": 3.0})
    assert got[0] == pytest.approx(by_hand(3.0, 2.0), rel=1e-12)
    # without a table every sender weighs the profile's persuasion, as before
    assert fe.block_loglik(prof, block, grid=grid)[0] == pytest.approx(by_hand(2.0, 2.0), rel=1e-12)
    assert by_hand(3.0, 0.5) != pytest.approx(by_hand(2.0, 2.0))
    # the held-out replay weighs them alike: P(A then B) of the replay is the likelihood's
    exact = math.exp(fe.block_loglik(prof, block, pers_by={"big": 3.0, "small": 0.5})[0])
    (sim,) = ho.simulate(prof, [d], None, 20000, 0, pers_by={"big": 3.0, "small": 0.5})
    freq = float(np.mean((sim[:, 2, 0] == 0) & (sim[:, 2, 1] == 1)))
    assert freq == pytest.approx(exact, abs=4 * math.sqrt(exact * (1 - exact) / 20000))
    msgs = fe.persuasive_messages([block])
    assert msgs == {"big": 1, "small": 1}
    assert fe.stored_persuasion({"big": 3.0, "small": 0.5}, msgs, "small") == 0.5  # own adversaries
    assert fe.stored_persuasion({"big": 3.0, "small": 0.5}, {"big": 1, "small": 4}, None) == 0.5
    assert fe.stored_persuasion({"big": 3.0, "small": 0.5}, {"big": 4, "small": 1}, "h") == 3.0


def test_accuracy_per_benchmark_by_hand() -> None:
    """Round-1 answers only: P(gold) = E[c] = the benchmark's accuracy exactly (the Gauss-Jacobi rule
    is exact for it), P(a given wrong answer) = E[1 - c] / 2 with 3 options (the distractor is either
    wrong answer). A benchmark not in the table keeps the profile's accuracy (0.6)."""
    prof = _profile(concentration=3.0)
    one = [AgentInfo(agent=0)]
    qx = replace(_debate("qx", {(0, 1): "A"}, one, n_rounds=1), meta={"benchmark": "x"})
    qy = replace(_debate("qy", {(0, 1): "B"}, one, n_rounds=1), meta={"benchmark": "y"})
    qz = replace(_debate("qz", {(0, 1): "A"}, one, n_rounds=1), meta={"benchmark": "z"})
    qn = _debate("qn", {(0, 1): "C"}, one, n_rounds=1)  # no benchmark recorded
    blocks = fe.observations([qx, qy, qz, qn])
    assert [b.benchmark for b in blocks] == ["?", "x", "y", "z"]
    acc_by = {"x": 0.8, "y": 0.3, "?": 0.5}
    got = {b.benchmark: float(fe.block_loglik(prof, b, acc_by=acc_by)[0]) for b in blocks}
    assert got["x"] == pytest.approx(math.log(0.8), rel=1e-10)
    assert got["y"] == pytest.approx(math.log(0.7 / 2), rel=1e-10)
    assert got["z"] == pytest.approx(math.log(0.6), rel=1e-10)
    assert got["?"] == pytest.approx(math.log(0.5 / 2), rel=1e-10)
    total = fe.loglik(prof, blocks, acc_by=acc_by)
    assert total == pytest.approx(math.log(0.8 * 0.35 * 0.6 * 0.25), rel=1e-10)
    # the held-out replay draws a question's competence from its benchmark's Beta
    (sx, sz) = ho.simulate(prof, [qx, qz], None, 20000, 0, acc_by=acc_by)
    assert float(np.mean(sx[:, 0, 0] == 0)) == pytest.approx(0.8, abs=4 * math.sqrt(0.16 / 20000))
    assert float(np.mean(sz[:, 0, 0] == 0)) == pytest.approx(0.6, abs=4 * math.sqrt(0.24 / 20000))
    # without the table every question has the profile's accuracy
    assert fe.loglik(prof, blocks) == pytest.approx(math.log(0.6 * 0.2 * 0.6 * 0.2), rel=1e-10)


@pytest.mark.slow
def test_fit_by_benchmark_and_by_sender() -> None:
    """Debates from two benchmarks (accuracy 0.85 and 0.45) and two adversary models (persuasion 6
    and 0.3): the split fit finds each, stores the question-weighted mean accuracy and the most-read
    sender's persuasion, and is more likely than the pooled fit."""
    kw = dict(n_cand=4, concentration=4.0, self_weight=1.0, share_weight=4.0, count_weight=0.1)
    sets = []
    for bench, acc, sender, pers, n_q, seed in (
        ("x", 0.85, "big", 6.0, 90, 1),
        ("y", 0.45, "small", 0.3, 60, 2),
        ("x", 0.85, "small", 0.3, 60, 3),
        ("y", 0.45, "big", 6.0, 90, 4),
    ):
        for d in _generate(_profile(accuracy=acc, persuasion=pers, **kw), n_q, seed=seed):  # type: ignore[arg-type]
            adv = replace(d.agents[0], model=sender)
            sets.append(
                replace(d, id=f"{seed}-{d.id}", agents=(adv, *d.agents[1:]), meta={"benchmark": bench})
            )
    pooled = fe.fit(sets, restarts=1)
    split = fe.fit(sets, restarts=1, by_benchmark=True, by_sender=True)
    acc, pers = split.accuracy_by_benchmark, split.persuasion_by_model
    assert acc is not None and pers is not None
    assert acc["x"] == pytest.approx(0.85, abs=0.07) and acc["y"] == pytest.approx(0.45, abs=0.08)
    assert pers["big"] > 3.0 > 1.0 > pers["small"]
    assert split.questions_by_benchmark == {"x": 150, "y": 150}
    assert split.profile.accuracy == pytest.approx((acc["x"] + acc["y"]) / 2)
    assert (
        split.messages_by_model is not None
        and split.messages_by_model["big"] > split.messages_by_model["small"]
    )
    assert split.profile.persuasion == pers["big"]
    assert split.loglik > pooled.loglik + 20.0


def test_one_benchmark_and_one_sender_model_are_the_plain_fit() -> None:
    """With one benchmark and one adversary model the split fit IS the plain fit, value for value
    (same parameter vector), and reports that one category's value."""
    debates = [
        replace(d, meta={"benchmark": "x"}) for d in _generate(_profile(n_cand=4, persuasion=3.0), 40, seed=2)
    ]
    plain = fe.fit(debates, restarts=1, fit_lure=True)
    split = fe.fit(debates, restarts=1, fit_lure=True, by_benchmark=True, by_sender=True)
    assert split.profile == plain.profile and split.loglik == plain.loglik
    assert split.accuracy_by_benchmark == {"x": plain.profile.accuracy}
    assert split.persuasion_by_model == {"?": plain.profile.persuasion}  # adversaries without a model


def test_the_lure_is_fitted_only_where_a_question_keeps_one_target() -> None:
    """The lure (P(the question's lure is the adversaries' target)) is identified only by questions whose
    debates share one target. Repeats that draw the target per debate (multi-agent-attack) leave it
    unfitted: None and 0 questions, not the optimiser's starting 1/3 stored as if fitted."""
    debates = _generate(_profile(n_cand=4, persuasion=3.0), 30, seed=4)
    one = fe.fit(debates, restarts=1, fit_lure=True)
    assert one.target_lure is not None and one.target_lure_questions == 30

    def other_target(d: Debate) -> Debate:
        adv = d.agents[0]
        new = next(x for x in d.letters if x not in (d.gold, adv.target))
        return replace(d, id=d.id + "-r2", agents=(replace(adv, target=new), *d.agents[1:]))

    # each question twice, under one wording, with two different targets
    worded = [replace(d, question=f"question {d.id}") for d in debates]
    repeats = worded + [other_target(d) for d in worded]
    two = fe.fit(repeats, restarts=1, fit_lure=True)
    assert two.target_lure is None and two.target_lure_questions == 0
    assert two.n_questions == 30 and two.n_debates == 60


def test_old_and_new_profile_files_load(tmp_path: Path) -> None:
    """A profile stored before the per-benchmark / per-sender fit (its provenance without those keys)
    still loads, and a new one carries both tables in its provenance beside one accuracy and one
    persuasion in the profile."""
    from tomacs.sim.profiles import load_profile_file

    old = tmp_path / "old.yaml"
    old.write_text(
        "name: old\n"
        "profile: {n_cand: 5, accuracy: 0.678, concentration: 0.308, distractor_share: 0.999,\n"
        "  prior_weight: 0.711, self_weight: 3.557, share_weight: 9.441, count_weight: 0.0,\n"
        "  persuasion: 9.672, anchor_weight: 0.0, decision_weight: 1.0, compliance: 1.0}\n"
        "provenance: {model_variant: 'tomacs.sim.model update rule (tomacs.debate/1 episodes fit, issue 26);"
        " no extensions', target_lure: 0.503, models: [qwen-max]}\n"
    )
    prof, prov = load_profile_file(old)
    assert prof.persuasion == 9.672 and prof.accuracy == 0.678
    assert prov is not None and "persuasion_by_model" not in prov
    from tomacs.sim.from_episodes import write_profile

    new_prov = {
        "persuasion_by_model": {"qwen-max": 9.8, "qwen3-8b": 8.9},
        "accuracy_by_benchmark": {"x": 0.7},
    }
    path = write_profile("new-one", replace(prof, name="new-one"), new_prov, tmp_path)
    prof2, prov2 = load_profile_file(path)
    assert prof2.persuasion == prof.persuasion and prov2 == new_prov


def test_repeats_of_a_question_without_wording_are_one_question(tmp_path: Path) -> None:
    """A file written to docs/transcripts.md's schema with per-debate ids, a shared `question_id` and
    no question text (5 repeats of 8 questions): the split keeps each question's repeats on one side,
    held-out scoring counts and bootstraps 8 questions, and the fit shares one latent per question."""
    from tomacs.transcripts.jsonl import read_debates, write_debates

    rng = np.random.default_rng(5)
    roles = [
        AgentInfo(agent=0, role="adversary", onset=1, target="B"),
        AgentInfo(agent=1),
        AgentInfo(agent=2),
    ]
    debates = []
    for q in range(8):
        for rep in range(5):
            ans = {(i, r): LETTERS[int(rng.integers(3))] for i in range(3) for r in (1, 2)}
            debates.append(replace(_debate(f"q{q}-rep{rep}", ans, roles), question_id=f"q{q}"))
    path = tmp_path / "debates.jsonl"
    write_debates(path, debates)
    read = read_debates(path)
    assert [d.question for d in read] == [None] * 40 and read[7].question_id == "q1"
    assert len({d.question_key for d in read}) == 8
    fit, held = fe.split_questions(read, 0.5, seed=0)
    assert not {d.question_key for d in fit} & {d.question_key for d in held}
    assert len(fit) % 5 == 0 and len(held) % 5 == 0 and len(fit) + len(held) == 40
    res = ho.evaluate(_profile(), held, None, draws=20, reps=50)
    assert res["questions"] == len(held) // 5 and res["debates"] == len(held)
    (block,) = fe.observations(read)
    assert len(block.keys) == 8
    # the wording, where a file has it, still decides across sources whose ids differ
    worded = [replace(debates[0], question="What is  X?"), replace(debates[5], question="what is x?")]
    assert worded[0].question_key == worded[1].question_key


def test_held_out_debates_without_a_parsed_answer_score_nan_not_a_crash() -> None:
    """A small model (SmolLM2 on llama.cpp, 6 debates) left every held-out honest answer unparsed, and
    `tomacs calibrate --from-episodes` died on a ZeroDivisionError after fitting; now the figures are NaN
    and the table says why."""
    roles = [
        AgentInfo(agent=0, role="adversary", onset=1, target="B"),
        AgentInfo(agent=1),
        AgentInfo(agent=2),
    ]
    fit = [
        _debate(f"f{q}", {(i, r): LETTERS[(q + i) % 3] for i in range(3) for r in (1, 2)}, roles)
        for q in range(4)
    ]
    held = [
        _debate(f"h{q}", {(i, r): (None if i else "B") for i in range(3) for r in (1, 2)}, roles)
        for q in range(3)
    ]
    res = ho.evaluate(_profile(), held, None, fit, sm.load_profiles()["mmlu"], draws=20, reps=50)
    assert res["answers"] == 0
    ll = res["loglik_per_answer"]
    assert math.isnan(ll["fitted"]) and math.isnan(ll["keep_previous"]) and math.isnan(ll["paper"])
    _, lls = ho.tables(res)
    assert "nothing to score" in str(lls.title)


@pytest.mark.slow  # four fits of 30 questions
def test_shrinking_pulls_a_small_fit_toward_the_prior_and_zero_changes_nothing() -> None:
    """Issue 39: a source of few questions (gpt-4o's 36) overfits; `shrink` makes the fit a maximum a
    posteriori toward a prior profile. At 0 it is the plain fit, exactly; strong, it lands on the prior;
    the reported log-likelihood is the data's alone, never the penalty's."""
    true = _profile(n_cand=4, accuracy=0.8, persuasion=3.0, share_weight=2.0, compliance=0.9)
    prior = _profile(n_cand=4, accuracy=0.5, persuasion=1.0, share_weight=0.5, self_weight=1.5)
    debates = _generate(true, 30, seed=3)
    plain = fe.fit(debates, restarts=1)
    zero = fe.fit(debates, restarts=1, prior=prior, shrink=0.0)
    assert zero.profile == plain.profile and zero.loglik == plain.loglik
    mid = fe.fit(debates, restarts=1, prior=prior, shrink=0.05)
    strong = fe.fit(debates, restarts=1, prior=prior, shrink=1e4)
    span = fe._UPPER - fe._LOWER

    def distance(r: fe.FitResult) -> float:  # to the prior, each parameter scaled to its bounds
        return sum(
            ((getattr(r.profile, k) - getattr(prior, k)) / span[i]) ** 2 for i, k in enumerate(fe.FIT_PARAMS)
        )

    assert distance(strong) < 1e-4 < distance(mid) < distance(plain)
    blocks = fe.observations(debates)
    for r in (plain, mid, strong):
        assert r.loglik == pytest.approx(fe.loglik(r.profile, blocks), rel=1e-9)
    assert plain.loglik >= mid.loglik >= strong.loglik  # in sample, the plain fit is the maximum
    with pytest.raises(ValueError, match="prior"):
        fe.fit(debates, restarts=1, shrink=0.1)


@pytest.mark.slow  # 2 strengths x 3 folds of fits, then three small fits: about 6 s
def test_choose_shrink_holds_few_questions_near_the_prior_and_records_its_choice(tmp_path: Path) -> None:
    """`--shrink auto`: the strength is chosen by cross-validation on the fitting questions, and the
    profile's provenance says which and why (a given strength, or too few questions to choose)."""
    from tomacs.sim import from_episodes as fx
    from tomacs.transcripts.jsonl import write_debates

    true = _profile(n_cand=4, accuracy=0.8, persuasion=3.0, share_weight=2.0, compliance=0.9)
    far = _profile(n_cand=4, accuracy=0.3, persuasion=0.2, share_weight=0.1, self_weight=6.0)
    debates = _generate(true, 24, seed=5)
    lam, scores = fc.choose_shrink(debates, far, grid=(0.0, 1.0))
    assert set(scores) == {0.0, 1.0} and lam == max(scores, key=lambda k: scores[k])
    assert all(np.isfinite(v) for v in scores.values())
    path = tmp_path / "d.jsonl"
    write_debates(path, debates[:10])
    res = fx.run([str(path)], "few", shrink=None, draws=5, restarts=1, out_dir=tmp_path)
    assert res["fit"]["shrink"]["strength"] == 0.0 and "too few" in res["fit"]["shrink"]["rule"]
    res = fx.run([str(path)], "given", shrink=0.5, draws=5, restarts=1, out_dir=tmp_path)
    assert res["provenance"]["shrink"] == {"strength": 0.5, "prior": "mmlu", "rule": "given (--shrink)"}
    with pytest.raises(ValueError, match="--shrink"):
        fx.run([str(path)], "bad", shrink=-1.0, draws=5, restarts=1, out_dir=tmp_path)


def test_a_bad_shrink_is_one_line(tomacs_here: Any) -> None:
    r = tomacs_here("sim", "fit-episodes", "nowhere.jsonl", "--name", "x", "--shrink", "lots")
    assert r.returncode == 2 and "--shrink: expected auto or a number >= 0, got 'lots'" in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.slow  # 3 folds x 2 strengths of fits: about 6 s
def test_choose_shrink_scores_the_fit_that_is_shipped(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The folds fit with the starts the profile's own fit uses (`run(restarts=...)`), plus the path, so
    cross-validation scores the estimator that is shipped, not a one-start version of it."""
    from tomacs.sim import from_episodes as fx
    from tomacs.transcripts.jsonl import write_debates

    true = _profile(n_cand=4, accuracy=0.8, persuasion=3.0, share_weight=2.0, compliance=0.9)
    debates = _generate(true, 24, seed=5)
    real_fit, calls = fe.fit, []

    def spy(*args: Any, **kw: Any) -> fe.FitResult:
        calls.append((kw.get("restarts"), kw.get("shrink", 0.0), kw.get("also_from") is not None))
        return real_fit(*args, **kw)

    monkeypatch.setattr(fc, "fit", spy)
    fc.choose_shrink(debates, true, grid=(0.0, 1.0), restarts=2)
    # 3 folds x (lambda 1 from scratch, then lambda 0 also from its optimum), each from 2 starts
    assert calls == [(2, 1.0, False), (2, 0.0, True)] * 3
    calls.clear()

    class Stop(Exception):
        pass

    def first_call(*args: Any, **kw: Any) -> fe.FitResult:
        calls.append((kw.get("restarts"), kw.get("shrink", 0.0), kw.get("also_from") is not None))
        raise Stop  # what `run` passes on is all this checks

    monkeypatch.setattr(fc, "fit", first_call)
    path = tmp_path / "d.jsonl"
    write_debates(path, debates)
    with pytest.raises(Stop):
        fx.run([str(path)], "spied", shrink=None, draws=5, restarts=2, out_dir=tmp_path, mechanisms=[])
    assert calls == [(2, 1.0, False)]
