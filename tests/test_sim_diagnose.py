"""`tomacs calibrate --diagnose` (tomacs/sim/diagnose.py): hand-computed statistics, an exact term
decomposition, a recorder that changes nothing, and the CLI on a tiny size."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest

from tomacs.analysis.sim_debates import diagnose
from tomacs.launch.spec import job_spec
from tomacs.sim.diagnose import (
    TERMS,
    RecordingBackbone,
    UpdateRecord,
    conformity_by_lure,
    decompose_logits,
    round_stats,
    term_stats,
    truth_without,
)
from tomacs.sim.model import QuestionLatent, SimProfile, load_profiles, update_logits
from tomacs.types import AdversaryPlan, AgentOutput, DecisionGraph, Episode, Question

PROF = SimProfile(
    name="t",
    n_cand=4,
    accuracy=0.7,
    concentration=4.0,
    distractor_share=0.5,
    prior_weight=1.5,
    self_weight=0.8,
    share_weight=3.0,
    count_weight=0.5,
    persuasion=2.0,
)


def _q(qid: str, answer: str = "A") -> Question:
    return Question(id=qid, text="?", options=("w", "x", "y", "z"), answer=answer, benchmark="t", kind="mc")


def _episode(
    q: Question,
    plan: AdversaryPlan,
    answers: list[list[str | None]],
    final: str,
    mode: str,
) -> Episode:
    """answers[agent][round]; an agent is adversarial from its onset in the plan."""
    n, rounds = len(answers), len(answers[0])
    outs = [
        [
            AgentOutput(
                agent=i,
                round=t + 1,
                text="",
                answer=answers[i][t],
                participated=True,
                behaviour=plan.behaviour(i, t + 1),
            )
            for i in range(n)
        ]
        for t in range(rounds)
    ]
    return Episode(
        question=q,
        plan=plan,
        rounds=outs,
        graphs=[None] * rounds,
        decision=DecisionGraph(voters=list(range(n)), mode=mode),  # type: ignore[arg-type]
        final_answer=final,
        correct=final == q.answer,
    )


def _hand_episodes() -> list[Episode]:
    # episode 1: agent 2 turns adversarial at round 2 with target B; honest agents are 0 and 1
    e1 = _episode(
        _q("q1"),
        AdversaryPlan(adversaries=(2,), onsets={2: 2}, target="B"),
        [["A", "B", "B"], ["C", "A", "B"], ["A", "B", "B"]],
        final="B",
        mode="llm",
    )
    # episode 2: no adversary (no target); agent 2's first answer did not parse
    e2 = _episode(
        _q("q2"),
        AdversaryPlan(adversaries=(), onsets={}, target=None),
        [["A", "A", "C"], ["B", "A", "A"], [None, "A", "A"]],
        final="A",
        mode="vote",
    )
    return [e1, e2]


def test_round_stats_hand_computed() -> None:
    st = round_stats(_hand_episodes())
    r1, r2, r3 = st["rounds"]
    # 5 honest agent-rounds per round: ep1 agents 0-1, ep2 agents 0-2; conformity only over ep1's 2
    assert [r["n"] for r in (r1, r2, r3)] == [5, 5, 5]
    # round 1: right = ep1 a0, ep2 a0 -> 2/5; nobody on target B
    assert r1["acc"] == pytest.approx(0.4) and r1["conformity"] == pytest.approx(0.0)
    assert r1["r2w"] is None and r1["fall"] is None
    # round 2: ep1 a0 A->B (r->w, ->target), ep1 a1 C->A, ep2 a1 B->A, ep2 a2 None->A (3 w->r)
    assert r2["acc"] == pytest.approx(4 / 5)
    assert r2["conformity"] == pytest.approx(1 / 2)
    assert r2["r2w"] == pytest.approx(1 / 5) and r2["w2r"] == pytest.approx(3 / 5)
    assert r2["to_target"] == pytest.approx(1 / 2) and r2["from_target"] == pytest.approx(0.0)
    assert r2["fall"] == pytest.approx(1 / 2)  # 1 of the 2 right at round 1
    assert r2["recover"] == pytest.approx(1.0)  # all 3 wrong at round 1
    assert r2["stay"] is None  # nobody was on the target at round 1
    # round 3: ep1 a0 stays B, ep1 a1 A->B, ep2 a0 A->C; right = ep2 a1, a2
    assert r3["acc"] == pytest.approx(2 / 5)
    assert r3["conformity"] == pytest.approx(1.0)
    assert r3["r2w"] == pytest.approx(2 / 5) and r3["w2r"] == pytest.approx(0.0)
    assert r3["to_target"] == pytest.approx(1 / 2)
    assert r3["fall"] == pytest.approx(2 / 4) and r3["recover"] == pytest.approx(0.0)
    assert r3["stay"] == pytest.approx(1.0)
    assert r3["counts"]["r2w"] == 2 and r3["counts"]["prev_target"] == 1
    d = st["decision"]
    assert d["acc"] == pytest.approx(0.5) and d["conformity"] == pytest.approx(1.0)
    assert d["modes"] == ["llm", "vote"]


def test_round_stats_numeric_target_compares_numbers() -> None:
    q = Question(id="n1", text="?", options=None, answer="3", benchmark="t", kind="numeric")
    ep = _episode(
        q,
        AdversaryPlan(adversaries=(1,), onsets={1: 2}, target="2"),
        [["3", "2.0"], ["3", "2"]],
        final="2",
        mode="llm",
    )
    st = round_stats([ep])
    assert st["rounds"][1]["conformity"] == pytest.approx(1.0)  # "2.0" is the target 2
    assert st["rounds"][1]["acc"] == pytest.approx(0.0) and st["rounds"][0]["acc"] == pytest.approx(1.0)


def test_decomposition_hand_computed() -> None:
    lat = QuestionLatent(competence=0.6, distractor=2)
    # truth 1, distractor 2; messages: two persuasive for 3, one honest for 1; prev = 0
    terms = decompose_logits(PROF, lat, 0, [(3, True), (3, True), (1, False)], 4, truth_idx=1)
    # p0 = [0.1, 0.6, 0.2, 0.1]; even wrong mass p0' = [0.4/3, 0.6, 0.4/3, 0.4/3]
    assert terms["competence"] == pytest.approx(1.5 * np.log([0.4 / 3, 0.6, 0.4 / 3, 0.4 / 3]))
    assert terms["distractor"] == pytest.approx(
        1.5 * np.log(np.array([0.1, 0.6, 0.2, 0.1]) * 3 / [0.4, 1.8, 0.4, 0.4])
    )
    assert terms["distractor"][1] == pytest.approx(0.0)
    assert terms["self"] == pytest.approx([0.8, 0, 0, 0])
    # H = [0,1,0,0], A = [0,0,0,2] (face value), W = 1 + 2 * 2 = 5
    assert terms["share_honest"] == pytest.approx([0, 3.0 / 5, 0, 0])
    assert terms["share_adv"] == pytest.approx([0, 0, 0, 3.0 * 2 / 5])
    assert terms["count_honest"] == pytest.approx([0, 0.5, 0, 0])
    assert terms["count_adv"] == pytest.approx([0, 0, 0, 1.0])
    assert terms["persuasion"] == pytest.approx([0, 0, 0, (2.0 - 1) * 2 * (3.0 / 5 + 0.5)])
    total = sum(terms.values())
    assert total == pytest.approx(update_logits(PROF, lat, 0, [(3, True), (3, True), (1, False)], 4, 1))


@pytest.mark.parametrize("n_cand", [2, 4, 5])
def test_decomposition_sums_to_model_logits(n_cand: int) -> None:
    rng = np.random.default_rng(n_cand)
    for _ in range(200):
        prof = replace(
            PROF,
            n_cand=n_cand,
            distractor_share=float(rng.uniform(1.0 / (n_cand - 1), 1.0)),
            prior_weight=float(rng.uniform(0, 5)),
            self_weight=float(rng.uniform(0, 3)),
            share_weight=float(rng.uniform(0, 20)),
            count_weight=float(rng.uniform(0, 1)),
            persuasion=float(rng.uniform(1, 12)),
        )
        truth = int(rng.integers(n_cand))
        lat = QuestionLatent(competence=float(rng.uniform(0.01, 0.99)), distractor=int(rng.integers(n_cand)))
        prev = None if rng.random() < 0.3 else int(rng.integers(n_cand))
        msgs = [
            (int(rng.integers(n_cand)), bool(rng.random() < 0.5), float(rng.choice([1.0, 0.5, 0.0])))
            for _ in range(int(rng.integers(0, 7)))
        ]
        cap = float(rng.choice([1.0, 0.5, 3.0]))
        terms = decompose_logits(prof, lat, prev, msgs, n_cand, truth, capability=cap)
        assert set(terms) == set(TERMS)
        u = update_logits(prof, lat, prev, msgs, n_cand, truth, capability=cap)
        assert sum(terms.values()) == pytest.approx(u, abs=1e-9)


def test_term_stats_margins() -> None:
    ep = _hand_episodes()[0]  # target B (index 1), truth A (index 0); honest agents 0 and 1
    terms = {k: np.zeros(4) for k in TERMS}
    terms["self"][1] = 2.0
    terms["share_adv"][1] = 1.0
    terms["competence"][0] = 0.5
    probs = np.array([0.2, 0.7, 0.05, 0.05])
    base = dict(
        question_id="q1", round=3, kind="agent", cands=list("ABCD"), truth=0, messages=[], probs=probs
    )
    recs = [
        UpdateRecord(agent=0, prev=1, chosen=1, terms=terms, **base),  # stuck on the target
        UpdateRecord(agent=2, prev=1, chosen=1, terms=terms, **base),  # the adversary: not counted
    ]
    rows = {(r["round"], r["slice"]): r for r in term_stats(recs, [ep])}
    for sl in ("target", "wrong_pick", "prev_wrong"):
        r = rows[(3, sl)]
        assert r["n"] == 1
        assert r["self"] == pytest.approx(2.0) and r["share_adv"] == pytest.approx(1.0)
        assert r["competence"] == pytest.approx(-0.5) and r["total"] == pytest.approx(2.5)
        assert r["p_truth"] == pytest.approx(0.2) and r["p_target"] == pytest.approx(0.7)


def test_truth_without_hand_computed() -> None:
    terms = {k: np.zeros(2) for k in TERMS}
    terms["self"][0] = 2.0  # sticky to the wrong answer 0
    terms["competence"][1] = 1.0  # pulled to the truth 1
    rec = UpdateRecord(
        question_id="q",
        agent=0,
        round=2,
        kind="agent",
        cands=["A", "B"],
        truth=1,
        prev=0,
        messages=[],
        chosen=0,
        terms=terms,
        probs=np.array([0.0, 0.0]),
    )
    d = truth_without(rec)
    p = 1 / (1 + np.exp(1.0))  # u = [2, 1]
    assert d["self"] == pytest.approx(1 / (1 + np.exp(-1.0)) - p)  # u = [0, 1]
    assert d["competence"] == pytest.approx(1 / (1 + np.exp(2.0)) - p)  # u = [2, 0]
    assert d["persuasion"] == pytest.approx(0.0)


def test_conformity_by_lure_splits_on_the_latent_distractor() -> None:
    eps = _hand_episodes()  # only episode 1 has a target (B), reached by honest agent 0 at round 2

    class FakeSim:
        def __init__(self, distractor: int) -> None:
            self.d = distractor

        def _question_state(self, q: Question) -> tuple[list[str], int, QuestionLatent]:
            return list("ABCD"), 0, QuestionLatent(competence=0.5, distractor=self.d)

    lure = conformity_by_lure(eps, FakeSim(1))  # B is the distractor
    assert lure["lure"]["episodes"] == 1 and lure["other"]["episodes"] == 0
    assert lure["lure"]["conformity"] == pytest.approx([0.0, 0.5, 1.0])
    assert lure["lure"]["decision_conformity"] == pytest.approx(1.0)
    other = conformity_by_lure(eps, FakeSim(2))
    assert other["lure"]["episodes"] == 0 and other["other"]["conformity"] == pytest.approx([0.0, 0.5, 1.0])


def _cfg(*extra: str) -> object:
    from tomacs.config import compose

    return compose(["benchmark=synthetic", "method=complete", "attack=gt50", "eval.size=6", *extra])


def test_recorder_changes_nothing_and_decomposes_every_honest_update() -> None:
    from tomacs.analysis.propagation import run_episodes
    from tomacs.job.components import build

    cfg = _cfg()
    comps = build(job_spec(cfg), need_train=False)
    plain = run_episodes(comps.executor, comps.method, comps.test_qs, 4)
    rec = RecordingBackbone(comps.backbone)
    comps.executor.backbone = rec
    recorded = run_episodes(comps.executor, comps.method, comps.test_qs, 4)
    assert [[o.answer for r in e.rounds for o in r] for e in plain] == [
        [o.answer for r in e.rounds for o in r] for e in recorded
    ]
    assert [e.final_answer for e in plain] == [e.final_answer for e in recorded]
    # every honest agent answers rounds 2..4 (complete graph: all take part) + one LLM decision each
    honest = sum(1 for e in recorded for r in e.rounds[1:] for a in r if a.behaviour == "honest")
    assert len(rec.records) == honest + len(recorded)
    assert max(r.error for r in rec.records) < 1e-9
    # the recorded choice is what the executor parsed
    by = {(e.question.id, a.agent, a.round): a.answer for e in recorded for r in e.rounds for a in r}
    for r in rec.records:
        if r.kind == "agent":
            assert r.cands[r.chosen] == by[(r.question_id, r.agent, r.round)]


def test_diagnose_result_and_profiles_untouched() -> None:
    before = load_profiles()
    res = diagnose(job_spec(_cfg()), ablate=True)
    assert load_profiles() == before
    assert res["profile"] == "mmlu" and res["n_questions"] == 6 and len(res["per_round"]) == 4
    assert res["decomposition_max_error"] < 1e-9
    names = [a["name"] for a in res["ablations"]]
    assert names[0] == "fitted" and "no self" in names and "no persuasion" in names
    fitted = res["ablations"][0]
    assert fitted["acc"] == [r["acc"] for r in res["per_round"]] and fitted["final_acc"] == res["final_acc"]
    # round 1 draws from the prior only: every ablation except the distractor's leaves it unchanged
    for a in res["ablations"]:
        if a["name"] != "no distractor":
            assert a["acc"][0] == pytest.approx(fitted["acc"][0])


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tomacs.cli", "calibrate", "--diagnose", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_cli_prints_tables() -> None:
    p = _cli("--benchmark", "synthetic", "--attack", "lt50,gt50", "--size", "4", "--no-ablate")
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "per round (always-honest agents)" in out and "model terms" in out
    assert "synthetic / complete / gt50" in out and "synthetic / complete / lt50" in out
    assert "final (llm)" in out and "final (vote)" in out
    assert "summary" in out and "ΔP(tr) w/o" in out and "conf|lure" in out


def test_cli_json() -> None:
    p = _cli("--benchmark", "synthetic", "--size", "3", "--json", "rounds=3", "attack.onset_rounds=[3]")
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    (run,) = data["runs"]
    assert run["attack"] == "gt50" and run["method"] == "complete" and run["rounds"] == 3
    assert [r["round"] for r in run["per_round"]] == [1, 2, 3]
    assert run["ablations"][0]["name"] == "fitted" and len(run["ablations"]) > 1
    assert {t["slice"] for t in run["terms"]} >= {"target", "drop"}
    lure = run["conformity_by_lure"]
    assert lure["lure"]["episodes"] + lure["other"]["episodes"] == 3


def test_cli_rejects_overrides_without_diagnose() -> None:
    p = subprocess.run(
        [sys.executable, "-m", "tomacs.cli", "calibrate", "--check", "rounds=3"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode != 0 and "--diagnose" in p.stderr
