"""`tomacs view` (issue 42): the records the page is drawn from, a page for a tiny sim run and a sweep,
one for real transcripts, the seeded sampling, and the loopback server."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tomacs.transcripts.schema import AgentInfo, Debate, Turn
from tomacs.view import build_view, serve, view_data
from tomacs.view.debates import Decision, Extras, episode_record, final_decision, flags, round_records
from tomacs.view.page import DATA_ID
from tomacs.view.sampling import per_group, sample_indices

REPO = Path(__file__).resolve().parents[1]
MAA_SMALL = REPO / "tests" / "data" / "multi_agent_attack_small"


# ---------------------------------------------------------------- records of a hand-built debate


def _debate(**meta: Any) -> Debate:
    """3 agents, 3 rounds, gold C; agent 1 an adversary from round 2 with target A.

    r1: 0 C, 1 C (before its onset), 2 B; nothing read.
    r2: 0 C after reading 1 and 2 (round 1) and itself; 1 A (reads nothing); 2 unparsed after reading
        agent 1's round-2 output (spatial) and its own.
    r3: 0 flips to A after reading agent 1 (round 2); 1 A; 2 makes no call."""
    agents = (AgentInfo(0), AgentInfo(1, role="adversary", onset=2, target="A"), AgentInfo(2))
    turns = (
        Turn(1, 0, "C", (), "zero r1"),
        Turn(1, 1, "C", (), "one r1"),
        Turn(1, 2, "B", (), "two r1"),
        Turn(2, 0, "C", ((0, 1), (1, 1), (2, 1)), "zero r2"),
        Turn(2, 1, "A", (), "one r2"),
        Turn(2, 2, None, ((1, 2), (2, 1)), "two r2 <script>"),
        Turn(3, 0, "A", ((0, 2), (1, 2)), "zero r3"),
        Turn(3, 1, "A", (), "one r3"),
    )
    return Debate("d1", "C", ("A", "B", "C", "D"), 3, 3, agents, turns, source="hand", meta=dict(meta))


def test_round_records_mark_roles_answers_and_exclusions() -> None:
    rounds = round_records(_debate(final_answer="A"), Extras(credits={2: (0.5, 0.3, 0.2)}))
    r1, r2, r3 = ({n["agent"]: n for n in r["nodes"]} for r in rounds)
    assert [r1[i]["role"] for i in range(3)] == ["honest", "dormant", "honest"]
    assert [r2[i]["role"] for i in range(3)] == ["honest", "adversary", "honest"]
    assert [r1[i]["mark"] for i in range(3)] == ["right", "right", "wrong"]
    assert [r2[i]["mark"] for i in range(3)] == ["right", "target", "unparsed"]
    # agent 0 answers the target in round 3; agent 2 made no call: absent, excluded, answer carried
    assert r3[0]["mark"] == "target" and r3[2]["mark"] == "absent" and r3[2]["excluded"]
    assert r3[2]["answer"] is None and not r3[0]["excluded"]
    assert [r2[i]["credit"] for i in range(3)] == [0.5, 0.3, 0.2] and "credit" not in r3[0]


def test_edges_are_the_recorded_reads_without_own_outputs() -> None:
    d = _debate()
    rounds = round_records(d)
    for r in rounds:
        drawn = {(e["src"], e["dst"], s) for e in r["edges"] for s in e["rounds"]}
        read = {(j, t.agent, s) for t in d.turns if t.round == r["round"] for j, s in t.read if j != t.agent}
        assert drawn == read
    assert rounds[0]["edges"] == []
    r2 = {(e["src"], e["dst"]): e for e in rounds[1]["edges"]}
    assert set(r2) == {(1, 0), (2, 0), (1, 2)}
    assert r2[(1, 2)]["same"] and not r2[(1, 0)]["same"]  # a spatial message vs an earlier round's


def test_participants_exclude_selected_out_agents() -> None:
    d = _debate(participants={"2": [0, 1]})
    r2 = {n["agent"]: n for n in round_records(d)[1]["nodes"]}
    assert r2[2]["excluded"] and not r2[0]["excluded"]


def test_flags_adversary_win_and_flip_to_target() -> None:
    d = _debate(final_answer="A")
    final = final_decision(d, Extras(decision=Decision(voters=(0, 1), weights=(0.6, 0.4))))
    assert final["answer"] == "A" and final["mark"] == "target" and final["excluded"] == [2]
    f = flags(d, final)
    # the adversary's own switch to A (round 2, from its onset) is no flip; agent 0's in round 3 is
    assert f == {"wrong": True, "adversary_win": True, "flips": [[3, 0]]}
    right = _debate(final_answer="C")
    g = flags(right, final_decision(right))
    assert g["wrong"] is False and g["adversary_win"] is False


def test_final_without_a_record_is_the_last_rounds_majority() -> None:
    d = _debate()  # no final_answer: round 3 has A, A (agent 2 made no call)
    final = final_decision(d)
    assert final["answer"] == "A" and "majority" in final["how"]
    rec = episode_record(d)
    assert rec["texts"][1][2] == "two r2 <script>" and rec["texts"][2][2] is None
    assert rec["targets"] == ["A"] and rec["flags"]["adversary_win"]


def test_a_target_equal_to_gold_is_marked_right() -> None:
    agents = (AgentInfo(0), AgentInfo(1, role="adversary", onset=1, target="C"))
    d = Debate("g", "C", ("A", "B", "C"), 2, 1, agents, (Turn(1, 0, "C"), Turn(1, 1, "C")))
    assert [n["mark"] for n in round_records(d)[0]["nodes"]] == ["right", "right"]


# ---------------------------------------------------------------- sampling


def test_sampling_is_exact_and_seeded() -> None:
    keys = [f"q{i}" for i in range(20)]
    a = sample_indices(keys, 5, seed=0)
    assert len(a) == 5 and a == sorted(a) and a == sample_indices(keys, 5, seed=0)
    assert sample_indices(keys, 5, seed=1) != a
    assert sample_indices(keys, 50, seed=0) == list(range(20))
    # chosen by key, not by position: the same questions in another order are the same choice
    rev = list(reversed(keys))
    assert sorted(rev[i] for i in sample_indices(rev, 5, 0)) == sorted(keys[i] for i in a)
    assert per_group(45, 50, 400) == 8 and per_group(1, 50, 400) == 50 and per_group(900, 50, 400) == 1


# ---------------------------------------------------------------- pages


def _blob(html: str) -> dict[str, Any]:
    m = re.search(rf'<script type="application/json" id="{DATA_ID}">(.*?)</script>', html, re.S)
    assert m, "no data blob"
    return json.loads(m.group(1))


def _self_contained(html: str) -> None:
    assert not re.search(r"<script[^>]*\bsrc\s*=", html, re.I)
    assert not re.search(r"<link[^>]*\bhref\s*=\s*[\"']?(https?:)?//", html, re.I)
    assert not re.search(r"<(img|iframe)[^>]*\bsrc\s*=\s*[\"']?(https?:)?//", html, re.I)
    assert "Plotly" in html  # the library is inlined


def test_run_page_end_to_end(view_sweep: Path, tmp_path: Path) -> None:
    run = view_sweep / "todycomm"
    out = build_view(run, tmp_path / "run.html")
    html = out.read_text(encoding="utf-8")
    _self_contained(html)
    data = _blob(html)
    assert data["kind"] == "run" and len(data["groups"]) == 1
    g = data["groups"][0]
    res = json.loads((run / "results.json").read_text())
    ours = {m["metric"]: m["ours"] for m in g["metrics"]}
    assert ours["acc"] == round(res["metrics"]["acc"] * 100, 2)
    assert ours["adacc"] == round(res["metrics"]["adacc"] * 100, 2)
    settings = dict(g["settings"])
    assert settings["backbone"] == "sim" and settings["embedder"] == "hashing" and settings["device"] == "cpu"
    assert settings["seed"] == "0" and settings["revision"] == str(res["git_rev"])
    assert settings["profile"].startswith("mmlu")
    assert g["curves"]["epoch"] == [0, 1] and len(g["curves"]["val_acc"]) == 2
    assert "credit_gap" in g["curves"] and "loss" in g["curves"]
    assert dict(g["cost"])["LLM calls (evaluation)"] == f"{res['metrics']['llm_calls']:.0f}"
    assert g["episodes_total"] == 6 and len(g["episodes"]) == 6
    for e in g["episodes"]:
        assert e["id"] in html
        assert e["final"]["voters"] is not None  # the run's decision, not a guess
        assert any("credit" in n for r in e["rounds"][1:] for n in r["nodes"])  # TodyComm's credits
    assert "showing 6 of 6 episodes" in html


def test_sweep_page_lists_runs_and_the_reports_warnings(view_sweep: Path, tmp_path: Path) -> None:
    # the complete job again, as if run a second time on a GPU: the report warns about both
    copy = tmp_path / "sweep"
    shutil.copytree(view_sweep, copy)
    shutil.copytree(copy / "complete", copy / "complete_again")
    res_file = copy / "complete_again" / "results.json"
    res = json.loads(res_file.read_text())
    res_file.write_text(json.dumps({**res, "device": "cuda"}))
    html = build_view(copy, tmp_path / "sweep.html").read_text(encoding="utf-8")
    data = _blob(html)
    assert data["kind"] == "sweep"
    assert [g["path"] for g in data["groups"]] == ["complete", "complete_again", "todycomm"]
    from tomacs.report.collect import cell_warnings, cells, find_jobs

    for w in cell_warnings(cells(find_jobs(copy))):
        assert w in data["warnings"]
    assert any("appears more than once" in w for w in data["warnings"])
    assert any("jobs disagree in device" in w for w in data["warnings"])
    # the same questions in every run (sampling by question)
    small = view_data(copy, max_episodes=2)
    qids = [sorted(e["question_id"] for e in g["episodes"]) for g in small["groups"]]
    assert all(q == qids[0] for q in qids) and len(qids[0]) == 2


def test_sampled_page_says_n_of_m(view_sweep: Path, tmp_path: Path) -> None:
    run = view_sweep / "complete"
    a = build_view(run, tmp_path / "a.html", max_episodes=2, seed=3).read_text(encoding="utf-8")
    b = build_view(run, tmp_path / "b.html", max_episodes=2, seed=3).read_text(encoding="utf-8")
    ea = [e["id"] for e in _blob(a)["groups"][0]["episodes"]]
    eb = [e["id"] for e in _blob(b)["groups"][0]["episodes"]]
    assert len(ea) == 2 and ea == eb
    assert "showing 2 of 6 episodes" in a and all(i in a for i in ea)
    other = view_data(run, max_episodes=5, seed=3)["groups"][0]["episodes"]
    assert len(other) == 5


def test_an_unfinished_run_shows_its_episodes(view_sweep: Path, tmp_path: Path) -> None:
    run = tmp_path / "killed"
    shutil.copytree(view_sweep / "complete", run)
    (run / "results.json").unlink()
    lines = (run / "episodes.jsonl").read_text().splitlines()
    (run / "episodes.jsonl").write_text("\n".join(lines[:3]) + "\n" + lines[3][:40])  # a torn tail
    data = view_data(run)
    assert data["kind"] == "run" and data["groups"][0]["finished"] is False
    assert data["groups"][0]["episodes_total"] == 3 and data["warnings"] == []


def test_real_transcripts_open_in_the_same_page(tmp_path: Path) -> None:
    html = build_view(MAA_SMALL, tmp_path / "maa.html").read_text(encoding="utf-8")
    _self_contained(html)
    data = _blob(html)
    assert data["kind"] == "transcripts"
    episodes = [e for g in data["groups"] for e in g["episodes"]]
    assert len(episodes) == data["sampling"]["total"] == 5
    for e in episodes:
        assert e["id"] in html and len(e["rounds"]) == e["n_rounds"] == 3
        assert e["final"]["how"].startswith("majority")  # the source records no decision
    adv = [e for e in episodes if e["targets"]]
    assert adv and all(e["agents"][0]["role"] == "adversary" for e in adv)
    marks = {n["mark"] for e in adv for r in e["rounds"] for n in r["nodes"]}
    assert "target" in marks
    # every agent reads every agent's previous reply from round 2 on (docs/transcripts.md)
    r2 = adv[0]["rounds"][1]["edges"]
    assert {(x["src"], x["dst"]) for x in r2} == {(j, i) for i in range(3) for j in range(3) if i != j}


def test_page_script_is_valid_javascript(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node not installed")
    js = REPO / "tomacs" / "view" / "assets" / "view.js"
    p = subprocess.run([node, "--check", str(js)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr


# ---------------------------------------------------------------- serving


def test_serve_answers_on_loopback(tmp_path: Path) -> None:
    page = tmp_path / "view.html"
    page.write_text("<!DOCTYPE html><p>hello view</p>", encoding="utf-8")
    with serve(page, port=0) as server:
        assert server.url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(server.url, timeout=10) as r:
            assert r.status == 200 and "hello view" in r.read().decode()
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(server.url + "etc/passwd", timeout=10)
        assert e.value.code == 404
    with pytest.raises(OSError):  # stopped: nothing answers any more
        urllib.request.urlopen(server.url, timeout=2)


def test_cli_view_writes_the_page_and_prints_its_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`tomacs view` in-process: the path on stdout (so `> out.txt` captures it), transcripts viewed
    without --out go under outputs/views/ (never into the data folder), a missing path is one line."""
    from typer.testing import CliRunner

    from tomacs.cli import app

    monkeypatch.chdir(tmp_path)
    src = tmp_path / "maa"
    shutil.copytree(MAA_SMALL, src)
    before = sorted(p.name for p in src.rglob("*"))
    r = CliRunner().invoke(app, ["view", str(src), "--max-episodes", "2"])
    assert r.exit_code == 0, r.output
    page = Path(r.stdout.strip())
    assert page == Path("outputs/views/maa.view.html") and page.is_file()
    assert sorted(p.name for p in src.rglob("*")) == before
    blob = _blob(page.read_text(encoding="utf-8"))
    assert [len(g["episodes"]) for g in blob["groups"]] == [2, 2]  # the fixture's two sources: 2 and 3
    r = CliRunner().invoke(app, ["view", str(tmp_path / "nope")])
    assert r.exit_code == 2 and "does not exist" in r.output and len(r.output.strip().splitlines()) == 1
