"""`tomacs diagnose`: its statistics on hand-built episodes against hand computations, and the
command end to end on a tiny trained run."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from tomacs.analysis.credit import (
    auc,
    credit_stats,
    participation_stats,
    probe_accuracy,
    visibility_stats,
)
from tomacs.types import AdversaryPlan, AgentOutput, DecisionGraph, Episode, Question, RoundGraph

Q = Question(id="q", text="?", options=("w", "x", "y"), answer="A", benchmark="t", kind="mc")


def _out(i: int, t: int, beh: str, part: bool = True) -> AgentOutput:
    return AgentOutput(agent=i, round=t, text="t", answer="A", participated=part, behaviour=beh)  # type: ignore[arg-type]


def _episode() -> Episode:
    """3 agents, T = 3. Agent 2 is adversarial from round 3 and speaks then; agent 1 is adversarial
    from round 3 too but sits round 3 out (silent), so it is never seen misbehaving."""
    plan = AdversaryPlan(adversaries=(1, 2), onsets={1: 3, 2: 3}, target="B")
    rounds = [
        [_out(0, 1, "honest"), _out(1, 1, "honest"), _out(2, 1, "honest")],
        [_out(0, 2, "honest"), _out(1, 2, "honest"), _out(2, 2, "honest")],
        [_out(0, 3, "honest"), _out(1, 3, "honest", part=False), _out(2, 3, "adversarial")],
    ]
    graphs = [
        None,
        RoundGraph(nodes=[0, 1, 2], edges=[], credits=[0.6, 0.5, 0.4], participants=[0, 1]),
        RoundGraph(nodes=[0, 2], edges=[(0, 2)], credits=[0.7, 0.2, 0.6]),
    ]
    decision = DecisionGraph(voters=[0, 1], weights=[0.5, 0.5], credits=[0.9, 0.3, 0.1])
    return Episode(question=Q, plan=plan, rounds=rounds, graphs=graphs, decision=decision)


def test_auc_by_hand() -> None:
    assert auc([0.9, 0.8], [0.1, 0.2]) == 1.0
    assert auc([0.1], [0.9]) == 0.0
    assert auc([0.5, 0.7], [0.5]) == pytest.approx((0.5 + 1.0) / 2)
    assert math.isnan(auc([], [0.3]))


def test_credit_stats_by_hand() -> None:
    rows = {r["round"]: r for r in credit_stats([_episode()], 3, 3)}
    assert set(rows) == {2, 3, 4}
    assert rows[2]["honest_mean"] == pytest.approx(0.6) and rows[2]["adv_mean"] == pytest.approx(0.45)
    assert rows[2]["gap"] == pytest.approx(0.15) and rows[2]["auc"] == 1.0
    assert rows[3]["adv_mean"] == pytest.approx(0.4) and rows[3]["adv_std"] == pytest.approx(0.2)
    assert rows[4]["honest_mean"] == pytest.approx(0.9) and rows[4]["adv_mean"] == pytest.approx(0.2)


def test_participation_stats_use_participants_then_nodes_then_voters() -> None:
    rows = {r["round"]: r for r in participation_stats([_episode()], 3, 3)}
    assert rows[2]["honest"] == 1.0 and rows[2]["adversarial"] == 0.5  # participants [0, 1]
    assert rows[3]["honest"] == 1.0 and rows[3]["adversarial"] == 0.5  # nodes [0, 2]
    assert rows[4]["honest"] == 1.0 and rows[4]["adversarial"] == 0.5  # voters [0, 1]


def test_visibility_by_hand() -> None:
    v = visibility_stats([_episode()], 3, 3)
    assert v["adversaries"] == 2 and v["visible_fraction"] == 0.5
    # flags agent 2 only: right on 0 and 2, wrong on 1
    assert v["adacc_ceiling"] == pytest.approx(2 / 3)
    # knowing k = 2: the unseen agents {0, 1} hold one adversary (share 0.5, not > 0.5): keep them
    assert v["adacc_ceiling_known_rate"] == pytest.approx(2 / 3)


def test_probe_separates_separable_data_and_not_noise() -> None:
    rng = np.random.default_rng(0)
    y = np.tile([0, 1], 100)
    groups = np.repeat(np.arange(50), 4)
    x_sep = np.c_[y + 0.1 * rng.normal(size=200), rng.normal(size=200)]
    x_noise = rng.normal(size=(200, 2))
    assert probe_accuracy(x_sep, y, groups)["balanced"] > 0.95
    assert abs(probe_accuracy(x_noise, y, groups)["balanced"] - 0.5) < 0.15


@pytest.mark.slow
def test_diagnose_command_on_a_tiny_run(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from tomacs.cli import app
    from tomacs.config import compose
    from tomacs.launch.run import run_job

    run = tmp_path / "run"
    cfg = compose(
        [
            "method=todycomm",
            "embedder=hashing",
            "attack=gt50",
            "train.size=32",
            "train.val_size=0",
            "train.epochs=1",
            "eval.size=20",
            "eval.batch_size=10",
            "method.normalize=running",
        ]
    )
    run_job(cfg, "train", run)
    res = CliRunner().invoke(app, ["diagnose", str(run), "--size", "20"])
    assert res.exit_code == 0, res.output
    assert "credits by ground truth" in res.output and "supervised probe" in res.output
    d = json.loads((run / "diagnosis.json").read_text())
    assert d["questions"] == 20 and len(d["credits"]) == 4 and len(d["participation"]) == 4
    assert {r["tensor"] for r in d["drift"]} >= {"gru.weight_ih", "mlp.2.weight"}
    assert 0.0 <= d["probe_last_round"]["balanced"] <= 1.0
    c = d["supervised_curve"]
    assert c["run_steps"] == 1 and c["lr"] == 5e-4 and c["curve"][0]["step"] == 0
    assert c["curve"][-1]["step"] == 96 and "supervised learning curve" in res.output
    bad = CliRunner().invoke(app, ["diagnose", str(tmp_path / "nowhere")])
    assert bad.exit_code == 2 and "config.yaml" in bad.output
    run_job(compose(["method=complete", "eval.size=4"]), "evaluate", tmp_path / "static")
    static = CliRunner().invoke(app, ["diagnose", str(tmp_path / "static")])
    assert static.exit_code == 2 and "no credit policy" in static.output


def test_training_curves_pool_seeds_into_a_band(tmp_path: Path) -> None:
    """Fig. 2 of the paper: per benchmark and attack, train curves per iteration (seeds -> min/max
    band) and validation points per epoch."""
    from tomacs.report.collect import Job
    from tomacs.report.plots import curve_series, training_curves

    jobs = []
    for seed, accs in ((0, [0.5, 0.6]), (1, [0.7, 0.8])):
        d = tmp_path / f"s{seed}"
        d.mkdir()
        logs = [{"iteration": k, "train_acc": a, "train_adacc": 0.5} for k, a in enumerate(accs)]
        logs.append({"epoch": 0, "iteration": 2, "val_acc": 0.4 + 0.1 * seed, "val_adacc": 0.9})
        (d / "train_log.jsonl").write_text("\n".join(json.dumps(x) for x in logs) + "\n{torn")
        res = {"method": "todycomm", "benchmark": "mmlu", "attack": "gt50", "seed": seed, "metrics": {}}
        jobs.append(Job(path=d, results=res))
    s = curve_series(jobs)
    assert s[("mmlu", "gt50", "todycomm", "train_acc")] == {0: [50.0, 70.0], 1: [60.0, 80.0]}
    # logged after iteration 1 as "iteration": 2 (iterations done); plotted on the epoch's last one
    assert s[("mmlu", "gt50", "todycomm", "val_acc")] == {1: [40.0, 50.0]}
    figs = training_curves(jobs, tmp_path)
    assert [f.name for f in figs] == ["training_curves_mmlu.png"] and figs[0].stat().st_size > 1000


def _toy_features(signal: float, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    q, n, r, f = 80, 6, 4, 5
    labels = np.zeros((q, n))
    for i in range(q):
        labels[i, rng.choice(n, 4, replace=False)] = 1
    feats = rng.normal(size=(q, n, r, f)).astype(np.float32)
    feats[:, :, -1, 0] += signal * labels  # the label shows in the decision round only
    return feats, labels


def test_supervised_curve_learns_a_visible_label_and_not_noise() -> None:
    from tomacs.analysis.credit import supervised_curve
    from tomacs.methods.nets import CreditNet

    def net() -> object:
        return CreditNet(5, 16, 8, "running")

    feats, labels = _toy_features(signal=6.0)
    c = supervised_curve(feats, labels, net, lr=1e-2, steps=48, batch=16, every=8)
    assert c["held_out_questions"] == 20 and c["train_questions"] == 60
    assert [p["step"] for p in c["curve"]] == [0, 8, 16, 24, 32, 40, 48]
    assert c["best"] >= 0.95 and c["curve"][0]["adacc"] < 0.8
    gain = c["best"] - c["curve"][0]["adacc"]
    first = next(p for p in c["curve"] if p["adacc"] >= c["curve"][0]["adacc"] + 0.9 * gain)
    assert c["steps_to_90pct_of_gain"] == first["step"]
    assert supervised_curve(feats, labels, net, lr=1e-2, steps=48, batch=16, every=8) == c  # seeded
    noise, nl = _toy_features(signal=0.0)
    flat = supervised_curve(noise, nl, net, lr=1e-2, steps=48, batch=16, every=8)
    assert flat["best"] <= 0.75  # nothing to learn: near the rule's chance level
    slow = supervised_curve(feats, labels, net, lr=1e-4, steps=48, batch=16, every=8)
    assert slow["curve"][-1]["adacc"] < c["curve"][-1]["adacc"]  # the learning rate shows


def test_train_steps_counts_loss_lines_and_survives_a_torn_log(tmp_path: Path) -> None:
    from tomacs.analysis.credit import _train_steps

    log = tmp_path / "train_log.jsonl"
    recs = [
        {"epoch": 0, "iteration": 0, "loss": 0.3},
        {"epoch": 0, "iteration": 1, "loss": 0.2},
        {"epoch": 0, "iteration": 2, "val_acc": 0.5},  # validation: not an optimiser step
    ]
    log.write_text("\n".join(json.dumps(r) for r in recs) + "\n\n" + '{"epoch": 1, "iter')
    assert _train_steps(log) == 2
    assert _train_steps(tmp_path / "missing.jsonl") is None


def test_diagnose_runs_its_tiny_networks_on_one_thread(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Issue 27: on a busy 2-core machine torch's second thread spin-waited through every op of the
    96-step supervised curve (57 s for a 20-question run; 1.5 s on one thread). The curve is the
    same on one thread as on two, and the caller's thread count comes back afterwards."""
    import torch
    from threadpoolctl import threadpool_info

    import tomacs.analysis.credit as diag
    from tomacs.methods.nets import CreditNet

    def net() -> object:
        return CreditNet(5, 16, 8, "running")

    feats, labels = _toy_features(signal=1.0)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        two = diag.supervised_curve(feats, labels, net, lr=1e-2, steps=16, batch=16, every=8)
        seen: dict[str, object] = {}

        def record(*a: object, **k: object) -> dict[str, object]:
            seen["torch"] = torch.get_num_threads()
            seen["blas"] = {i["num_threads"] for i in threadpool_info()}
            raise RuntimeError("stop here")

        monkeypatch.setattr(diag, "_diagnose", record)
        with pytest.raises(RuntimeError, match="stop here"):
            diag.diagnose(tmp_path)
        assert seen["torch"] == 1 and seen["blas"] <= {1}
        assert torch.get_num_threads() == 2
        monkeypatch.undo()
        with diag._one_thread():
            one = diag.supervised_curve(feats, labels, net, lr=1e-2, steps=16, batch=16, every=8)
        assert one == two
    finally:
        torch.set_num_threads(before)
