"""`tomacs replay`: a trained TodyComm policy scores the agents of recorded debates.

The statistics against hand computations on constructed credits; the key check that a replay is the
method itself (no second implementation of its features or GRU): a tiny run's own evaluation
episodes, replayed along their recorded graphs, give back the credits, participants and voters the
run recorded live; the command end to end on the MAD-Follower fixture; the one-line errors."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from tomacs.analysis.replay import (
    ReplayError,
    check_debate_fields,
    debate_outputs,
    load_policy,
    read_graph,
    replay,
    round_stats,
)
from tomacs.methods.todycomm import inference_participation
from tomacs.transcripts import AgentInfo, Debate, Turn, load_debates, write_debates
from tomacs.types import AdversaryPlan, AgentOutput, DecisionGraph, Episode, Question, RoundGraph

REPO = Path(__file__).resolve().parents[1]
MAD = REPO / "tests" / "data" / "mad_follower_small"
LETTERS4 = ("A", "B", "C", "D")
Q = Question(id="d", text="?", options=LETTERS4, answer="A", benchmark="t", kind="mc")


def _debate(
    turns: list[Turn], n: int = 3, rounds: int = 2, agents: tuple[AgentInfo, ...] | None = None, id: str = "d"
) -> Debate:
    agents = agents or (
        AgentInfo(0),
        AgentInfo(1, role="adversary", onset=2, target="B"),
        AgentInfo(2, role="adversary", onset=1, target="B"),
    )
    return Debate(id, "A", LETTERS4, n, rounds, agents, tuple(turns))


def _full_turns(n: int, rounds: int, text: bool = True, reads: bool = True) -> list[Turn]:
    out = []
    for r in range(1, rounds + 1):
        for i in range(n):
            read = tuple((j, r - 1) for j in range(n)) if reads and r > 1 else ()
            out.append(
                Turn(
                    r, i, "ABCD"[(i + r) % 4], read, f"agent {i} says {'ABCD'[(i + r) % 4]}" if text else None
                )
            )
    return out


def _out(i: int, t: int) -> AgentOutput:
    return AgentOutput(agent=i, round=t, text="t", answer="A", participated=True, behaviour="honest")


# -- the statistics, by hand ------------------------------------------------------------------------------
def _constructed() -> tuple[Debate, Episode]:
    """3 agents, T = 2: agent 0 honest, agent 1 adversary from round 2, agent 2 from round 1.
    Exclusion by TodyComm's own rule (inference_participation: c_i > mean(c))."""
    d = _debate(_full_turns(3, 2))
    c2, c3 = [0.9, 0.2, 0.4], [0.35, 0.3, 0.55]
    part = inference_participation(np.array([c2]))[0]  # mean 0.5 -> [1, 0, 0]
    voters = [i for i, a in enumerate(inference_participation(np.array([c3]))[0]) if a]  # mean 0.4 -> [2]
    assert part.tolist() == [1, 0, 0] and voters == [2]
    ep = Episode(
        question=Q,
        plan=AdversaryPlan(adversaries=(1, 2), onsets={1: 2, 2: 1}, target="B"),
        rounds=[[_out(i, 1) for i in range(3)], [_out(i, 2) for i in range(3)]],
        graphs=[None, RoundGraph(nodes=[0, 1, 2], edges=[], credits=c2, participants=[0])],
        decision=DecisionGraph(voters=voters, weights=[1.0], credits=c3),
    )
    return d, ep


def test_round_stats_by_hand() -> None:
    s = round_stats([_constructed()])
    rows = {r["round"]: r for r in s["rows"]}
    assert list(rows) == ["2", "decision", "all"]
    # round 2 reads round 1: agent 2 (onset 1) is adversarial, agent 1 (onset 2) is dormant, left out
    r2 = rows["2"]
    assert (r2["honest"], r2["adversarial"], r2["dormant"]) == (1, 1, 1)
    assert r2["auc"] == 1.0  # 0.9 (honest) > 0.4 (agent 2)
    assert r2["adacc"] == 1.0  # agent 0 kept, agent 2 left out; agent 1 (left out too) not counted
    assert r2["all_reliable"] == 0.5
    # the decision reads rounds 1..2: both adversaries count; 0.35 (honest) vs 0.3, 0.55 -> AUC 1/2
    dec = rows["decision"]
    assert (dec["honest"], dec["adversarial"], dec["dormant"]) == (1, 2, 0)
    assert dec["auc"] == 0.5 and dec["credit_adversarial"] == pytest.approx(0.425)
    # voters [2]: agent 0 wrongly excluded, agent 1 rightly, agent 2 wrongly kept -> 1/3
    assert dec["adacc"] == pytest.approx(1 / 3) and dec["adacc_tpr"] == 0.5 and dec["adacc_tnr"] == 0.0
    # all rows pooled: honest [0.9, 0.35] vs adversarial [0.4, 0.3, 0.55]: (3 + 1) / 6
    al = rows["all"]
    assert al["auc"] == pytest.approx(4 / 6) and al["auc_in_debate"] == pytest.approx(0.75)
    assert al["adacc"] == pytest.approx(3 / 5) and al["all_reliable"] == pytest.approx(2 / 5)
    # the paper's ADAcc: tomacs.metrics on the decision voters, labels onset <= T
    assert s["adacc"] == pytest.approx(1 / 3) and s["adacc_all_reliable"] == pytest.approx(1 / 3)
    assert (s["debates"], s["adversaries"], s["agents"]) == (1, 2, 3)


def test_ties_and_a_missing_class() -> None:
    d, ep = _constructed()
    ep.graphs[1].credits = [0.5, 0.5, 0.5]  # type: ignore[union-attr]
    ep.graphs[1].participants = [0, 1, 2]  # type: ignore[union-attr]  # all equal: everyone kept
    honest_only = dataclasses.replace(d, agents=(AgentInfo(0), AgentInfo(1), AgentInfo(2)))
    ep2 = dataclasses.replace(ep, plan=AdversaryPlan((), {}, None))
    rows = {r["round"]: r for r in round_stats([(d, ep)])["rows"]}
    assert rows["2"]["auc"] == 0.5 and rows["2"]["adacc"] == 0.5  # a tie counts one half
    rows = {r["round"]: r for r in round_stats([(honest_only, ep2)])["rows"]}
    assert rows["2"]["auc"] is None and rows["2"]["adacc_tpr"] is None and rows["2"]["all_reliable"] == 1.0


def test_graph_and_outputs_from_turns() -> None:
    turns = [
        Turn(1, 0, "A", (), "a"),
        Turn(1, 1, "B", (), "b"),
        Turn(1, 2, None, (), "c"),
        Turn(2, 0, "A", ((0, 1), (1, 1), (2, 1)), "a2"),  # own earlier answer: no edge
        Turn(2, 2, "C", ((0, 2), (0, 1)), "c2"),  # a same-round read and an earlier one: one edge
    ]
    d = _debate(turns)
    assert read_graph(d, 1) == [] and read_graph(d, 2) == [(0, 2), (1, 0), (2, 0)]
    rounds = debate_outputs(d, lambda text: [float(len(text))])
    assert [o.answer for o in rounds[0]] == ["A", "B", None]
    # agent 1 made no call in round 2: its round-1 output is carried forward, as the executor does
    o = rounds[1][1]
    assert (o.text, o.answer, o.participated, o.embedding, o.round) == ("b", "B", False, [1.0], 2)
    assert rounds[1][2].behaviour == "adversarial" and rounds[0][1].behaviour == "honest"


def test_letters_map_by_position() -> None:
    turns = [Turn(1, 0, "z", (), "x"), Turn(1, 1, "w", (), "y"), Turn(1, 2, "x", (), "z")]
    d = Debate("d", "w", ("w", "x", "y", "z"), 3, 1, (AgentInfo(0), AgentInfo(1), AgentInfo(2)), tuple(turns))
    assert [o.answer for o in debate_outputs(d, lambda _: [0.0])[0]] == ["D", "A", "B"]


def test_missing_fields_are_one_line_errors() -> None:
    with pytest.raises(ReplayError, match=r"field 'turns\[0\]\.text' is missing"):
        check_debate_fields(_debate(_full_turns(3, 2, text=False)), "todycomm")
    with pytest.raises(ReplayError, match=r"field 'turns\[\]\.read' is empty in every round"):
        check_debate_fields(_debate(_full_turns(3, 2, reads=False)), "todycomm")
    with pytest.raises(ReplayError, match="agent 1 has no round-1 turn"):
        check_debate_fields(
            _debate([t for t in _full_turns(3, 2) if (t.agent, t.round) != (1, 1)]), "todycomm"
        )
    check_debate_fields(_debate(_full_turns(3, 2)), "todycomm")
    check_debate_fields(_debate(_full_turns(3, 2, reads=False)), "gsafeguard")  # its detector reads all pairs


# -- a tiny trained run -----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """TodyComm with the hashing embedder, 6 agents x 4 rounds, adversaries from round 3 or 4."""
    from tomacs.config import compose
    from tomacs.launch.run import run_job

    out = tmp_path_factory.mktemp("replay") / "run"
    cfg = compose(
        [
            "method=todycomm",
            "embedder=hashing",
            "attack=eq50",
            "train.size=4",
            "train.val_size=0",
            "train.batch_size=4",
            "train.epochs=1",
            "eval.size=5",
        ]
    )
    run_job(cfg, "train", out)
    return out


def _followed(debates: list[Debate], episodes: dict[str, dict]) -> list[Debate]:
    """The debates with every edge of the recorded graphs as a read. The episodes format leaves out
    the reads of an adversary (its prompt holds none), but the policy's features saw the edges the
    graph sent it: with them, the replay follows the graph the run recorded."""
    out = []
    for d in debates:
        graphs = episodes[d.question_id]["graphs"]
        turns = []
        for t in d.turns:
            g = graphs[t.round - 1]
            if g is not None:
                extra = {(int(s), t.round) for s, r in g["edges"] if int(r) == t.agent}
                t = dataclasses.replace(t, read=tuple(sorted(set(t.read) | extra)))
            turns.append(t)
        out.append(dataclasses.replace(d, turns=tuple(turns)))
    return out


@pytest.mark.slow
def test_replay_gives_back_the_live_credits(run: Path) -> None:
    """No second implementation: the run's evaluation episodes, replayed along their recorded graphs
    (tomacs-episodes transcripts), give back every credit the policy computed live (6 decimals are
    recorded), its participants in every round and its voters."""
    episodes = {json.loads(x)["question"]["id"]: json.loads(x) for x in (run / "episodes.jsonl").open()}
    debates = load_debates(run)
    assert {d.id for d in debates} and all(d.source.startswith("tomacs:") for d in debates)
    assert any(a.role == "adversary" for d in debates for a in d.agents)
    pairs = replay(load_policy(run), _followed(debates, episodes))
    assert len(pairs) == len(episodes) == 5
    for d, ep in pairs:
        live = episodes[d.question_id]
        for t in range(2, d.n_rounds + 1):
            g, mine = live["graphs"][t - 1], ep.graphs[t - 1]
            assert mine is not None and mine.credits is not None
            np.testing.assert_allclose(mine.credits, g["credits"], atol=2e-6)
            assert mine.participants == g["participants"]
        assert ep.decision is not None and ep.decision.credits is not None
        np.testing.assert_allclose(ep.decision.credits, live["decision"]["credits"], atol=2e-6)
        assert ep.decision.voters == live["decision"]["voters"]
    results = json.loads((run / "results.json").read_text())
    s = round_stats(pairs)
    assert s["adacc"] == pytest.approx(results["metrics"]["adacc"])
    assert s["adacc_all_reliable"] == pytest.approx(results["metrics"]["adacc_baseline"])
    # as imported (adversaries read nothing), round 2 still matches: round 1 has no graph
    for d, ep in replay(load_policy(run), debates):
        g = ep.graphs[1]
        assert g is not None and g.credits is not None
        np.testing.assert_allclose(g.credits, episodes[d.question_id]["graphs"][1]["credits"], atol=2e-6)


@pytest.fixture(scope="module")
def gsafeguard_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """G-Safeguard's detector trained on 8 tiny generated conversations (4 agents x 3 turns)."""
    from tomacs.config import compose
    from tomacs.launch.run import run_job

    out = tmp_path_factory.mktemp("replay_gsafeguard") / "run"
    tiny = ["method.samples=2", "method.densities=[0.5,1.0]", "method.counts=[1,2]", "method.data_agents=4"]
    tiny += ["method.data_rounds=3", "method.hidden_size=16", "method.heads=2", "method.val_fraction=0.25"]
    cfg = compose(
        ["method=gsafeguard", "embedder=hashing", "attack=eq50", "train.size=6", "train.val_size=3"]
        + ["eval.size=4", "method.epochs=2", *tiny]
    )
    run_job(cfg, "train", out)
    return out


@pytest.mark.slow
def test_gsafeguard_replay_gives_back_the_live_scores(gsafeguard_run: Path) -> None:
    """G-Safeguard's detector reads every pair of agents, so its own episodes replay as imported:
    the same scores (1 - P(adversarial)) after every round, the same voters, the run's ADAcc."""
    run = gsafeguard_run
    episodes = {json.loads(x)["question"]["id"]: json.loads(x) for x in (run / "episodes.jsonl").open()}
    policy = load_policy(run)
    assert policy.trained_shape == "trained on 4x3 conversations, run 6x4"
    pairs = replay(policy, load_debates(run))
    assert len(pairs) == 4
    for d, ep in pairs:
        live = episodes[d.question_id]
        for t in range(2, d.n_rounds + 1):
            mine = ep.graphs[t - 1]
            assert mine is not None and mine.credits is not None
            np.testing.assert_allclose(mine.credits, live["graphs"][t - 1]["credits"], atol=2e-6)
        assert ep.decision is not None and ep.decision.credits is not None
        np.testing.assert_allclose(ep.decision.credits, live["decision"]["credits"], atol=2e-6)
        assert ep.decision.voters == live["decision"]["voters"]
    results = json.loads((run / "results.json").read_text())
    assert round_stats(pairs)["adacc"] == pytest.approx(results["metrics"]["adacc"])
    # flagged agents are the round's exclusions: once flagged, for good
    for _, ep in pairs:
        kept = [set(g.participants or []) for g in ep.graphs[1:] if g is not None]
        assert all(b <= a for a, b in zip(kept, kept[1:], strict=False))
    mad = replay(policy, load_debates(MAD))
    assert round_stats(mad)["shapes"] == {"5x3": 1, "5x5": 4}


@pytest.mark.slow
def test_any_shape_replays(run: Path, tmp_path: Path) -> None:
    """One GRU cell shared by all agents: a 6 x 4 policy scores 3 x 3 and 5 x 5 debates."""
    policy = load_policy(run)
    assert (policy.agents, policy.rounds, policy.embedder_name) == (6, 4, "hashing")
    small = _debate(_full_turns(3, 3), rounds=3, id="small")
    pairs = replay(policy, [small, *load_debates(MAD)])
    shapes = round_stats(pairs)["shapes"]
    assert shapes == {"3x3": 1, "5x3": 1, "5x5": 4}
    d, ep = pairs[0]
    assert d.id == "small" and len(ep.graphs) == 3 and ep.decision is not None
    g = ep.graphs[1]
    assert g is not None and g.edges == sorted((j, i) for i in range(3) for j in range(3) if j != i)


@pytest.mark.slow
def test_replay_command_on_mad_follower(run: Path, tmp_path: Path) -> None:
    out = tmp_path / "replay.json"
    p = subprocess.run(
        [sys.executable, "-m", "tomacs.cli", "replay", str(run), str(MAD), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=REPO,
    )
    assert p.returncode == 0, p.stderr
    assert "AUC" in p.stdout and "all-reliable detector" in p.stdout and "T+1" in p.stdout
    res = json.loads(out.read_text())
    s = res["summary"]
    assert (
        res["method"] == "todycomm" and res["policy_shape"] == "trained 6x4" and res["embedder"] == "hashing"
    )
    assert s["debates"] == 5 and s["adversaries"] == 10 and s["shapes"] == {"5x3": 1, "5x5": 4}
    rows = {r["round"]: r for r in s["rows"]}
    assert list(rows) == ["2", "3", "4", "5", "decision", "all"]
    # MAD-Follower: the attacker from round 1, the follower from round 2 (dormant in the round-2 row)
    assert (rows["2"]["honest"], rows["2"]["adversarial"], rows["2"]["dormant"]) == (15, 5, 5)
    assert (rows["3"]["adversarial"], rows["3"]["dormant"]) == (10, 0)
    assert rows["4"]["debates"] == 4 and rows["decision"]["all_reliable"] == pytest.approx(0.6)
    assert s["adacc_all_reliable"] == pytest.approx(0.6) and 0.0 <= s["adacc"] <= 1.0
    assert rows["decision"]["adacc"] == pytest.approx(s["adacc"])
    assert len(res["debates"]) == 5 and set(res["debates"][0]["credits"]) >= {"2", "decision"}
    # --limit
    p = subprocess.run(
        [sys.executable, "-m", "tomacs.cli", "replay", str(run), str(MAD), "--limit", "2"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=REPO,
    )
    assert p.returncode == 0 and "replayed on 2 debates" in p.stdout, p.stderr


@pytest.mark.slow
def test_replay_command_over_a_sweep(run: Path, tmp_path: Path) -> None:
    """A directory of runs: each replayed as alone, then the mean and range per row. A link to a run and a
    copy of it must give back that run's figures, with no spread (a second link to it would be the same
    run, counted once)."""
    sweep = tmp_path / "sweep"
    sweep.mkdir()
    (sweep / "seed=0").symlink_to(run, target_is_directory=True)
    shutil.copytree(run, sweep / "seed=1")
    (sweep / "seed=2-link").symlink_to(run, target_is_directory=True)
    one, many = tmp_path / "one.json", tmp_path / "many.json"
    cli = [sys.executable, "-m", "tomacs.cli", "replay"]
    p = subprocess.run([*cli, str(run), str(MAD), "-o", str(one)], capture_output=True, text=True, cwd=REPO)
    assert p.returncode == 0, p.stderr
    q = subprocess.run([*cli, str(sweep), str(MAD), "-o", str(many)], capture_output=True, text=True)
    assert q.returncode == 0, q.stderr
    assert "over 2 runs: mean [min-max]" in q.stdout and "seed=0 (seed 0): AUC by row 2 " in q.stdout
    assert "seed=1 (seed 0): AUC by row" in q.stdout  # the seed its results.json records, not its name
    single, res = json.loads(one.read_text()), json.loads(many.read_text())
    assert [r["summary"] for r in res["runs"]] == [single["summary"]] * 2
    over = res["over_runs"]
    assert over["runs"] == 2 and over["debates"] == 5
    for mine, theirs in zip(over["rows"], single["summary"]["rows"], strict=True):
        assert mine["round"] == theirs["round"] and mine["honest"] == theirs["honest"]
        if theirs["auc"] is not None:
            auc = mine["auc"]
            assert auc["mean"] == auc["min"] == auc["max"] == pytest.approx(theirs["auc"])
    assert over["adacc"]["mean"] == pytest.approx(single["summary"]["adacc"])
    assert "--checkpoint names one run's checkpoint" in replay_error(
        str(sweep), str(MAD), "--checkpoint", str(run / "best.pt")
    )


def replay_error(*args: str) -> str:
    """`tomacs replay ARGS`, which must fail with exit code 2 and one line: that line."""
    from tomacs.cli import app

    res = CliRunner().invoke(app, ["replay", *args])
    assert res.exit_code == 2, res.output
    lines = [x for x in res.output.strip().splitlines() if x.strip()]
    assert len(lines) == 1 and "Traceback" not in res.output, res.output
    return lines[0]


@pytest.mark.slow
def test_command_errors_are_one_line(run: Path, gsafeguard_run: Path, tmp_path: Path) -> None:
    err = replay_error
    no_text = tmp_path / "no_text.jsonl"
    write_debates(no_text, [_debate(_full_turns(3, 2, text=False))])
    assert "field 'turns[0].text' is missing" in err(str(run), str(no_text))
    no_reads = tmp_path / "no_reads.jsonl"
    write_debates(no_reads, [_debate(_full_turns(3, 2, reads=False))])
    assert "field 'turns[].read'" in err(str(run), str(no_reads))
    assert "no config.yaml" in err(str(tmp_path), str(MAD))
    assert "no such file" in err(str(run), str(tmp_path / "nowhere"))
    assert "--limit must be >= 1" in err(str(run), str(MAD), "--limit", "0")
    other = tmp_path / "complete"
    other.mkdir()
    (other / "config.yaml").write_text(
        (run / "config.yaml").read_text().replace("name: todycomm", "name: complete")
    )
    assert "method=complete" in err(str(other), str(MAD))
    comm = tmp_path / "comm"
    comm.mkdir()
    (comm / "config.yaml").write_text(
        (gsafeguard_run / "config.yaml").read_text().replace("detect_graph: mask", "detect_graph: comm")
    )
    (comm / "best.pt").write_bytes((gsafeguard_run / "best.pt").read_bytes())
    assert "detect_graph=comm" in err(str(comm), str(MAD))
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "config.yaml").write_text((run / "config.yaml").read_text())
    assert "no best.pt or checkpoint.pt" in err(str(tmp_path / "empty"), str(MAD))
