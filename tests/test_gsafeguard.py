"""G-Safeguard (issue 17): the GAT's edge update by hand, agent i's logit <-> agent i's label, flagging
cuts exactly the flagged agents' out-edges from the next round on, the conversations the executor
generates, determinism and resume of the supervised trainer, checkpoints, and one-line errors."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from test_todycomm import _one_thread  # noqa: F401 (autouse fixture: one torch thread)

from tomacs.config import ConfigError, compose, to_container
from tomacs.embedding.embedders import HashingEmbedder
from tomacs.extras.gsafeguard.data import DataSpec, draws, ensure, random_digraph, read
from tomacs.extras.gsafeguard.trainer import featurize, split, train
from tomacs.graphs import complete_dag
from tomacs.job.checkpoint import load_checkpoint, save_checkpoint
from tomacs.job.components import build
from tomacs.launch.spec import job_spec
from tomacs.methods.base import MethodContext
from tomacs.methods.gsafeguard import GSafeguard, collate, cut_flagged, detector_pairs, graph_sample
from tomacs.methods.gsafeguard.net import EdgeGATLayer
from tomacs.types import AgentOutput, Question

# tiny conversations: 2 densities x 2 counts x 2 samples = 8, of 4 agents x 3 turns
TINY_DATA = [
    "method.samples=2",
    "method.densities=[0.5,1.0]",
    "method.counts=[1,2]",
    "method.data_agents=4",
    "method.data_rounds=3",
    "method.hidden_size=16",
    "method.heads=2",
    "method.val_fraction=0.25",
]
TINY = [
    "method=gsafeguard",
    "benchmark=synthetic",
    "embedder=hashing",
    "train.size=6",
    "train.val_size=3",
    "eval.size=4",
    *TINY_DATA,
]


def tiny(*extra: str, seed: int = 0, attack: str = "eq50") -> Any:
    return compose([*TINY, f"seed={seed}", f"attack={attack}", *extra])


# -- the network -------------------------------------------------------------------------------------
def test_edge_gat_layer_matches_a_hand_computation() -> None:
    """3 nodes, edges 0->2, 1->2, 2->0; one head; W = I, W_e = 2I (message), W_a = I (attention),
    a_src = (1, 0), a_dst = (0, 1), a_edge = (1, 1), no bias.
    Scores into node 2: edge 0->2: 1 + 1 + (1+0) = 3; edge 1->2: 0 + 1 + (0+3) = 4, so
    alpha = softmax(3, 4) = (1/(1+e), e/(1+e)); h_2 = alpha_0 (x_0 + 2 e_02) + alpha_1 (x_1 + 2 e_12)
    = alpha_0 (3, 0) + alpha_1 (0, 7). Node 0 has one in-edge: h_0 = x_2 + 2 e_20 = (3, 3). Node 1 has
    none: h_1 = 0. The edge features leave the layer as 2 e."""
    layer = EdgeGATLayer(in_dim=2, head_dim=2, heads=1, edge_dim=2)
    with torch.no_grad():
        layer.gat.lin.weight.copy_(torch.eye(2))
        layer.gat.lin_edge.weight.copy_(torch.eye(2))
        layer.gat.att_src.copy_(torch.tensor([[[1.0, 0.0]]]))
        layer.gat.att_dst.copy_(torch.tensor([[[0.0, 1.0]]]))
        layer.gat.att_edge.copy_(torch.tensor([[[1.0, 1.0]]]))
        layer.gat.bias.zero_()
        layer.edge_lin.weight.copy_(2 * torch.eye(2))
    x = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    edge_index = torch.tensor([[0, 1, 2], [2, 2, 0]])
    e = torch.tensor([[1.0, 0.0], [0.0, 3.0], [1.0, 1.0]])
    h, e_new = layer(x, edge_index, e)
    a0, a1 = 1 / (1 + math.e), math.e / (1 + math.e)
    want = torch.tensor([[3.0, 3.0], [0.0, 0.0], [3 * a0, 7 * a1]])
    torch.testing.assert_close(h, want, rtol=0, atol=1e-6)
    torch.testing.assert_close(e_new, 2 * e, rtol=0, atol=0)


def _method(n: int = 4, rounds: int = 3, seed: int = 0, dim: int = 8, **params: Any) -> GSafeguard:
    ctx = MethodContext(n_agents=n, rounds=rounds, roles=["r"] * n, seed=seed)
    ctx.extra.update(embedder="hashing", embed_dim=dim)
    return GSafeguard(ctx, hidden_size=8, heads=2, dropout=0.0, **params)


def test_agent_i_logit_and_label_stay_together_under_a_permutation() -> None:
    rng = np.random.default_rng(3)
    n, turns = 5, 3
    seq = rng.normal(size=(n, turns, 8)).astype(np.float32)
    pairs = random_digraph(n, 0.6, rng)
    labels = [0, 1, 0, 0, 1]
    s = graph_sample(seq, pairs, labels)
    x, edge_index, edge_seq, y = collate([s], "cpu")
    # node i is agent i: its own turn-0 embedding, its label; an edge s->r carries r's sequence
    torch.testing.assert_close(x, torch.as_tensor(seq[:, 0]))
    assert y.tolist() == labels
    for k, (snd, rcv) in enumerate(edge_index.T.tolist()):
        assert (snd, rcv) in pairs
        torch.testing.assert_close(edge_seq[k], torch.as_tensor(seq[rcv]))
    m = _method(n=n)
    m.train_mode(False)
    perm = [3, 0, 4, 1, 2]  # old agent i becomes agent perm[i]
    seq_p = np.empty_like(seq)
    seq_p[perm] = seq
    labels_p = [0] * n
    for i, p in enumerate(perm):
        labels_p[p] = labels[i]
    s_p = graph_sample(seq_p, [(perm[a], perm[b]) for a, b in pairs], labels_p)
    with torch.no_grad():
        z, z_p = m.logits([s]), m.logits([s_p])
        loss, loss_p = m.labelled_loss([s])[0], m.labelled_loss([s_p])[0]
    torch.testing.assert_close(z_p[perm], z, rtol=0, atol=1e-5)
    assert float(loss_p) == pytest.approx(float(loss), abs=1e-6)


def test_featurize_puts_agent_i_text_and_label_at_node_i() -> None:
    texts = [[f"round {t} agent {i} says {'B' if i == 2 else 'A'}" for i in range(3)] for t in range(2)]
    rec = {"texts": texts, "pairs": [[0, 1], [2, 0]], "labels": [0, 0, 1]}
    m = _method(n=3, rounds=2, dim=64)  # the hashing embedder's size
    from tomacs.job.progress import Progress

    (s,) = featurize(m.embedder, m.emb_dim, [rec], Progress(enabled=False))
    emb = HashingEmbedder(dim=64)
    assert s.seq.shape == (3, 2, 64) and s.y.tolist() == [0.0, 0.0, 1.0]
    for i in range(3):
        for t in range(2):
            np.testing.assert_allclose(s.seq[i, t], emb.embed([texts[t][i]])[0], atol=1e-6)
    assert s.edges.T.tolist() == [[0, 1], [2, 0]]


# -- the defence ---------------------------------------------------------------------------------------
def _history(n: int, rounds: int, k: int = 1) -> list[list[list[AgentOutput]]]:
    emb = HashingEmbedder(dim=8)
    out = []
    for _ in range(k):
        rnds = []
        for t in range(1, rounds + 1):
            texts = [f"agent {i} round {t} answer A" for i in range(n)]
            vecs = emb.embed(texts)
            rnds.append(
                [
                    AgentOutput(i, t, texts[i], "A", True, "honest", embedding=vecs[i].tolist())
                    for i in range(n)
                ]
            )
        out.append(rnds)
    return out


def _scripted(m: GSafeguard, by_turns: dict[int, list[float]]) -> list[int]:
    """Replace the network's scores by a script: P(adversarial) per agent after t rounds."""
    seen: list[int] = []

    def scores(samples: list[Any]) -> np.ndarray:
        t = samples[0].seq.shape[1]
        seen.append(t)
        return np.asarray([by_turns[t] for _ in samples], dtype=np.float64)

    m.scores = scores  # type: ignore[method-assign]
    return seen


@pytest.mark.parametrize("base", ["complete", "debate"])
def test_flagging_cuts_exactly_the_flagged_agents_out_edges_from_the_next_round(base: str) -> None:
    m = _method(n=4, rounds=3, base=base)
    # after round 1 agent 2 scores 0.9 (flagged); after round 2 it drops to 0.2 (stays flagged) and
    # agent 0 reaches exactly the threshold (flagged); after round 3 nobody scores high
    seen = _scripted(m, {1: [0.1, 0.1, 0.9, 0.1], 2: [0.5, 0.1, 0.2, 0.1], 3: [0.0, 0.0, 0.0, 0.0]})
    hist = _history(4, 3)
    qs = [Question("q0", "?", ("a", "b"), "A", "t", "mc")]
    state = m.begin(qs, False, np.random.default_rng(0))
    g2 = m.act(state, 2, [h[:1] for h in hist])[0]
    g3 = m.act(state, 3, [h[:2] for h in hist])[0]
    (d,) = m.decide(state, hist)
    assert seen == [1, 2, 3]  # the detector re-reads all utterances so far, after every round
    full = complete_dag([0, 1, 2, 3])
    every = [(i, j) for i in range(4) for j in range(4) if i != j]
    spatial, temporal = (full, []) if base == "complete" else ([], every)
    assert g2.edges == [e for e in spatial if e[0] != 2]
    assert g2.temporal_edges == [e for e in temporal if e[0] != 2]
    assert g3.edges == [e for e in spatial if e[0] not in (0, 2)]
    assert g3.temporal_edges == [e for e in temporal if e[0] not in (0, 2)]
    assert sorted(g2.nodes) == sorted(g3.nodes) == [0, 1, 2, 3]  # flagged agents still answer
    if base == "complete":
        assert (1, 2) in g3.edges and (0, 1) not in g3.edges  # a flagged agent still reads others
    assert d.voters == [1, 3] and d.weights is None
    assert d.mode == "vote"  # decision=auto with no adversaries configured: the baselines' vote


def test_cut_flagged_and_detector_pairs_by_hand() -> None:
    assert cut_flagged([(0, 1), (1, 2), (2, 0), (2, 1)], {2}) == [(0, 1), (1, 2)]
    mask = np.ones((3, 3), dtype=int)
    mask[0, 2] = 0
    assert detector_pairs(3, mask) == [(0, 1), (1, 0), (1, 2), (2, 0), (2, 1)]


def test_the_defence_runs_through_the_executor_within_mask_and_budget() -> None:
    """On the simulator under budget b1: every round graph is the complete baseline's graph minus the
    out-edges of the agents flagged before that round (the executor checks the budget itself)."""
    cfg = tiny("budget=b1", attack="gt50")
    comps = build(job_spec(cfg), need_train=False)
    m = comps.method
    _scripted(m, {1: [0.0, 0.9, 0, 0, 0, 0], 2: [0.0, 0, 0, 0.7, 0, 0], 3: [0.0] * 6, 4: [0.0] * 6})
    eps, state = comps.executor.run_batch(comps.test_qs[:2], m, train=False, phase="eval")
    base = m.base.begin(comps.test_qs[:2], False, np.random.default_rng(0))
    for q, ep in enumerate(eps):
        want = {2: {1}, 3: {1, 3}, 4: {1, 3}}
        for t, flagged in want.items():
            g = ep.graphs[t - 1]
            assert g.edges == [e for e in base["edges"][q] if e[0] not in flagged]
        assert ep.decision.voters == [0, 2, 4, 5]  # 4 of 6 adversarial: the LLM decision agent reads them
        assert ep.decision.mode == "llm"
        assert ep.plan.adversaries  # the plan exists for the metrics, never in the method's state
    assert "plans" not in state


# -- the conversations -----------------------------------------------------------------------------------
def _data_comps(*extra: str) -> Any:
    return build(job_spec(tiny(*extra)), need_train=True)


def _ensure(comps: Any, path: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    spec = DataSpec.of(comps.spec, comps.backbone.name, comps.train_qs)
    return ensure(spec, path, comps.train_qs, comps.backbone, comps.bench.roles_key, 3)


def test_generated_conversations_follow_the_recipe(tmp_path: Path) -> None:
    comps = _data_comps()
    recs, stats = _ensure(comps, tmp_path / "d.jsonl")
    assert len(recs) == 8 and stats["generated"] == 8 and stats["calls"] == 8 * 4 * 3
    for r in recs:
        n_adv = sum(r["labels"])
        assert n_adv == r["count"] and r["labels"] == [int(str(i) in r["plan"]["onsets"]) for i in range(4)]
        # static regime: an attacker is adversarial from the first turn, everyone else honest throughout
        for t, beh in enumerate(r["behaviour"]):
            assert beh == ["adversarial" if y else "honest" for y in r["labels"]], (t, beh)
        assert len(r["texts"]) == 3 and all(len(turn) == 4 for turn in r["texts"])
        assert all(a != b for a, b in r["pairs"])
        if r["density"] == 1.0:
            assert len(r["pairs"]) == 12  # every ordered pair
    # the adversary's target is one wrong answer, and its texts carry it
    r = next(r for r in recs if r["count"] == 2)
    adv = [i for i in range(4) if r["labels"][i]]
    assert {r["answers"][0][i] for i in adv} == {r["plan"]["target"]}


def test_dynamic_regime_uses_the_runs_onsets(tmp_path: Path) -> None:
    comps = _data_comps("method.regime=dynamic", "attack.onset_rounds=[2,3]")
    recs, _ = _ensure(comps, tmp_path / "d.jsonl")
    onsets = {int(v) for r in recs for v in r["plan"]["onsets"].values()}
    assert onsets <= {2, 3} and onsets
    for r in recs:
        for i, onset in r["plan"]["onsets"].items():
            assert [b[int(i)] for b in r["behaviour"]] == [
                "honest" if t < onset else "adversarial" for t in (1, 2, 3)
            ]


def test_a_killed_generation_resumes_to_the_same_file_and_a_foreign_file_is_refused(tmp_path: Path) -> None:
    comps = _data_comps()
    full, part = tmp_path / "full.jsonl", tmp_path / "part.jsonl"
    _ensure(comps, full)
    lines = full.read_text().splitlines(keepends=True)
    part.write_text("".join(lines[:4]) + lines[4][:30])  # header + 3 records + a torn line
    recs, stats = _ensure(_data_comps(), part)
    assert stats["generated"] == 5
    assert recs == read(full)[1]
    assert sorted(part.read_text().splitlines()) == sorted(full.read_text().splitlines())
    with pytest.raises(ConfigError) as err:
        _ensure(_data_comps("method.samples=3"), full)
    msg = str(err.value)
    assert "\n" not in msg and "samples: file 2 vs run 3" in msg and "method.data" in msg


def test_draws_are_seeded_and_distinct_questions_share_a_phase() -> None:
    comps = _data_comps()
    spec = DataSpec.of(comps.spec, comps.backbone.name, comps.train_qs)
    a, b = draws(spec), draws(spec)
    assert a == b and len(a) == spec.total == 8
    by_phase: dict[str, list[int]] = {}
    for d in a:
        by_phase.setdefault(d.phase, []).append(d.question)
    assert all(len(v) == len(set(v)) for v in by_phase.values())
    other = DataSpec.of(job_spec(tiny(seed=1)), comps.backbone.name, comps.train_qs)
    assert [d.pairs for d in draws(other)] != [d.pairs for d in a]


def test_split_is_seeded_and_cuts_like_the_public_code() -> None:
    tr, va = split(10, 0.2, seed=0)
    assert len(tr) == 8 and len(va) == 2 and sorted(tr + va) == list(range(10))
    assert split(10, 0.2, seed=0) == (tr, va) and split(10, 0.2, seed=1) != (tr, va)
    assert split(4, 0.0, seed=0) == ([0, 1, 2, 3], [])


# -- training: determinism, resume, checkpoints ------------------------------------------------------------
def _train(out: Path, epochs: int) -> tuple[dict[str, Any], Any]:
    comps = build(job_spec(tiny(f"method.epochs={epochs}")), need_train=True)
    out.mkdir(parents=True, exist_ok=True)
    return train(comps, out), comps.method


def _log(out: Path) -> list[dict[str, Any]]:
    rows = [json.loads(x) for x in (out / "train_log.jsonl").read_text().splitlines()]
    return [{k: v for k, v in r.items() if k != "wall_s"} for r in rows]


def test_training_is_deterministic_and_a_resumed_run_equals_an_uninterrupted_one(tmp_path: Path) -> None:
    info, m = _train(tmp_path / "a", 3)
    assert info["epochs_run"] == 3 and info["iterations"] == 3  # 6 training conversations, batch 32
    assert info["train_conversations"] == 6 and info["val_conversations"] == 2
    assert info["data"]["conversations"] == 8 and info["data"]["regime"] == "static"
    _, m_again = _train(tmp_path / "b", 3)
    assert _log(tmp_path / "a") == _log(tmp_path / "b")
    _train(tmp_path / "c", 1)  # stopped after one epoch ...
    info_c, m_c = _train(tmp_path / "c", 3)  # ... and resumed from its checkpoint.pt
    assert info_c["resumed_from_epoch"] == 1 and info_c["data"]["generated"] == 0
    assert _log(tmp_path / "c") == _log(tmp_path / "a")
    for k, v in m.state_dict()["net"].items():
        torch.testing.assert_close(m_c.state_dict()["net"][k], v, rtol=0, atol=0)
        torch.testing.assert_close(m_again.state_dict()["net"][k], v, rtol=0, atol=0)
    log = _log(tmp_path / "a")
    assert [r["epoch"] for r in log] == [0, 1, 2]
    assert {"train_adacc", "data_val_adacc", "val_adacc", "val_acc", "loss", "lr"} <= set(log[0])
    best = max(range(3), key=lambda e: (log[e]["data_val_adacc"], -e))
    assert info["best_epoch"] == best and sum(r["best"] for r in log) >= 1
    assert log[1]["lr"] < log[0]["lr"]  # the cosine schedule steps once per epoch


def test_checkpoint_round_trip_restores_the_detector(tmp_path: Path) -> None:
    a = _method(seed=0)
    opt = torch.optim.Adam(a.parameters(), lr=0.05)
    samples = [
        graph_sample(np.ones((4, 2, 8), np.float32) * i, detector_pairs(4, None), [0, 1, 0, 1])
        for i in (1, 2)
    ]
    loss = a.labelled_loss(samples)[0]
    loss.backward()
    opt.step()
    save_checkpoint(tmp_path / "c.pt", a, opt, {"embedder": "hashing"})
    b = _method(seed=7)
    assert not np.allclose(a.scores(samples), b.scores(samples))
    load_checkpoint(b, tmp_path / "c.pt")
    np.testing.assert_array_equal(a.scores(samples), b.scores(samples))
    with pytest.raises(ValueError, match="does not fit"):
        load_checkpoint(_method_with_hidden(32), tmp_path / "c.pt")


def _method_with_hidden(hidden: int) -> GSafeguard:
    ctx = MethodContext(n_agents=4, rounds=3, roles=["r"] * 4, seed=0)
    ctx.extra.update(embedder="hashing", embed_dim=8)
    return GSafeguard(ctx, hidden_size=hidden, heads=2)


@pytest.mark.parametrize(
    ("override", "needle"),
    [
        ("method.base=ring", "base must be one of"),
        ("method.detect_graph=all", "detect_graph must be one of"),
        ("method.counts=[0,9]", "counts must be a non-empty list"),
        ("method.threshold=1.5", "threshold must be a number in (0, 1)"),
    ],
)
def test_bad_options_are_one_line_errors_naming_the_valid_values(override: str, needle: str) -> None:
    with pytest.raises(ConfigError) as err:  # the schema refuses it when the config is composed
        compose(["method=gsafeguard", override])
    assert f"method.{needle}" in str(err.value) and "\n" not in str(err.value)
    params = to_container(compose(["method=gsafeguard"]).method)
    key, value = override.removeprefix("method.").split("=")
    params[key] = json.loads(value) if value[0] in "[0123456789" else value
    with pytest.raises(ValueError) as err:  # and a method built by hand alike
        _method_with_params(params)
    assert needle in str(err.value) and "\n" not in str(err.value)


def _method_with_params(params: dict[str, Any]) -> GSafeguard:
    ctx = MethodContext(n_agents=4, rounds=3, roles=["r"] * 4, seed=0)
    ctx.extra.update(embedder="hashing", embed_dim=8)
    return GSafeguard(ctx, **params)


# -- the commands a user types -----------------------------------------------------------------------------
def test_data_then_train_then_evaluate_then_report_from_the_command_line(
    tmp_path: Path, tomacs_here: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In process (tests/conftest.py tomacs_here): what the commands do, not the console script."""
    monkeypatch.chdir(tmp_path)
    data = tmp_path / "conv.jsonl"
    common = ["benchmark=synthetic", "embedder=hashing", "train.size=6", *TINY_DATA]
    p = tomacs_here("gsafeguard-data", *common, f"method.data={data}")
    assert p.returncode == 0, p.stderr[-2000:]
    assert "8 conversations (8 generated now, 96 LLM calls" in p.stdout and "backbone=sim" in p.stdout
    import shlex

    typed = " ".join(shlex.quote(o) for o in [*common, f"method.data={data}"])
    assert f"train: tomacs train method=gsafeguard {typed}\n" in p.stdout  # ready to paste into a shell
    header = json.loads(data.read_text().splitlines()[0])["meta"]
    assert header["regime"] == "static" and header["agents"] == 4 and header["counts"] == [1, 2]

    run = tmp_path / "run"
    job = ["method=gsafeguard", *common, "train.val_size=3", "eval.size=4", "attack=gt50", "method.epochs=2"]
    p = tomacs_here("train", *job, f"method.data={data}", f"hydra.run.dir={run}")
    assert p.returncode == 0, p.stderr[-2000:]
    res = json.loads((run / "results.json").read_text())
    assert res["backbone"] == "sim" and res["method"] == "gsafeguard" and res["oracle"] is False
    assert res["train"]["data"]["generated"] == 0 and res["train"]["data"]["path"] == str(data)
    assert res["train"]["epochs_run"] == 2 and "gsafeguard epoch 2/2" in p.stderr
    assert len((run / "train_log.jsonl").read_text().splitlines()) == 2

    again = tmp_path / "eval"
    p = tomacs_here(
        "evaluate",
        "method=gsafeguard",
        "benchmark=synthetic",
        "eval.size=4",
        "attack=gt50",
        *TINY_DATA,
        f"checkpoint={run / 'best.pt'}",
        f"hydra.run.dir={again}",
    )
    assert p.returncode == 0, p.stderr[-2000:]
    ev = json.loads((again / "results.json").read_text())
    assert ev["metrics"]["acc"] == res["metrics"]["acc"] and ev["metrics"]["adacc"] == res["metrics"]["adacc"]
    assert ev["config"]["embedder"] == "hashing"  # the checkpoint's embedder, no override needed

    p = tomacs_here("report", str(tmp_path))
    assert p.returncode == 0, p.stderr[-2000:]
    report = tmp_path / "report"
    assert (report / "detector_curves_synthetic.png").is_file()
    md = (report / "report.md").read_text()
    cell = f"| ADAcc % | **{100 * res['metrics']['adacc']:.2f} (n=1)** / *—* |"
    assert any(line.startswith("| gsafeguard[") and line.endswith(cell) for line in md.splitlines()), md

    p = tomacs_here(
        "train",
        *job,
        "method.samples=3",
        f"method.data={data}",
        f"hydra.run.dir={tmp_path / 'x'}",
    )
    assert p.returncode != 0
    line = p.stderr.strip().splitlines()[-1]
    assert "samples: file 2 vs run 3" in line and "Traceback" not in p.stderr


def test_gap_section_and_fig4_series_from_logs(tmp_path: Path) -> None:
    """The report's App. E.4 pieces from hand-made job files: the gap row is ours (TodyComm - G-Safeguard)
    beside the paper's 88.89 - 69.26 = +19.63, and Fig. 4's series are the logged values in % per epoch."""
    from tomacs.extras.gsafeguard.report import curve_series, gap_markdown
    from tomacs.report.collect import cells, find_jobs

    def job(name: str, method: str, seed: int, adacc: float, log: list[dict[str, Any]] | None = None) -> None:
        d = tmp_path / name
        d.mkdir()
        res = {
            "method": method,
            "benchmark": "mmlu",
            "attack": "eq50",
            "budget": "none",
            "agents": 6,
            "rounds": 4,
            "seed": seed,
            "backbone": "sim",
            "metrics": {"acc": 0.5, "adacc": adacc, "token": 100.0},
        }
        (d / "results.json").write_text(json.dumps(res))
        if log:
            (d / "train_log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in log))

    log0 = [
        {"epoch": 0, "train_adacc": 0.9, "data_val_adacc": 0.8, "val_adacc": 0.5},
        {"epoch": 1, "train_adacc": 1.0, "data_val_adacc": 0.85, "val_adacc": 0.6},
    ]
    log1 = [{"epoch": 0, "train_adacc": 0.7, "data_val_adacc": 0.8, "val_adacc": 0.4}]
    job("t0", "todycomm", 0, 0.90)
    job("t1", "todycomm", 1, 0.80)
    job("g0", "gsafeguard", 0, 0.60, log0)
    job("g1", "gsafeguard", 1, 0.50, log1)
    jobs = find_jobs(tmp_path)
    md = gap_markdown(cells(jobs))
    ours, paper = "**85.00 / 55.00 / +30.00** (2/2)", "*88.89 / 69.26 (implied) / +19.63*"
    assert f"| MMLU | = 50% | gsafeguard | none | {ours} | {paper} |" in md
    series = curve_series(jobs)
    assert series[("mmlu", "eq50", "gsafeguard", "train_adacc")] == {1: [90.0, 70.0], 2: [100.0]}
    assert series[("mmlu", "eq50", "gsafeguard", "val_adacc")][2] == [60.0]
    assert not any(k[2] == "todycomm" for k in series)  # REINFORCE logs are not a detector's
