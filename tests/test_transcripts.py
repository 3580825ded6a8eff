"""The debate transcript schema (tomacs.debate/1) and its importers (docs/transcripts.md)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from tomacs.transcripts import (
    SCHEMA,
    AgentInfo,
    Debate,
    TranscriptError,
    Turn,
    debate_from_dict,
    detect_format,
    known_formats,
    load_debates,
    read_debates,
    transcript_format,
    write_debates,
)
from tomacs.transcripts.episodes import debate_from_episode
from tomacs.transcripts.stats import source_stats
from tomacs.types import AdversaryPlan, AgentOutput, Episode, Question, RoundGraph

FIXTURE = Path(__file__).parent / "data" / "mad_follower_small"
RUN5 = "20251111_122829_n5_r5_limit10"  # qwen3-8b, 5 rounds, letters-only prompts
RUNMAX = "20251114_070404_n5_r3_limit3"  # qwen-max, 3 rounds


def tomacs(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "250"}
    return subprocess.run(
        [sys.executable, "-m", "tomacs.cli", *args], capture_output=True, text=True, timeout=600, env=env
    )


def _debate() -> Debate:
    return Debate(
        id="q1",
        gold="C",
        letters=("A", "B", "C", "D"),
        n_agents=3,
        n_rounds=2,
        agents=(
            AgentInfo(0, model="m"),
            AgentInfo(1, "adversary", onset=2, target="A", model="m"),
            AgentInfo(2),
        ),
        turns=(
            Turn(1, 0, "C", text="I say C"),
            Turn(1, 1, "B"),
            Turn(1, 2, None, text="unparseable"),
            Turn(2, 0, "C", read=((0, 1), (1, 1), (2, 1))),
            Turn(2, 1, "A"),
            Turn(2, 2, "A", read=((1, 2), (2, 1))),
        ),
        source="hand",
        model="m",
        question="Which?",
        options=("w", "x", "y", "z"),
        question_id="Q",
        meta={"note": [1, 2]},
    )


# -- schema ------------------------------------------------------------------------------------
def test_round_trip_equals(tmp_path: Path) -> None:
    d = _debate()
    minimal = Debate("q2", "A", ("A", "B"), 1, 1, (AgentInfo(0),), (Turn(1, 0, "B"),))
    f = tmp_path / "d.jsonl"
    assert write_debates(f, [d, minimal]) == 2
    back = read_debates(f)
    assert back == [d, minimal]
    assert back[0].meta == {"note": [1, 2]}  # meta is not compared by ==
    assert detect_format(f) == "native"
    first = json.loads(f.read_text().splitlines()[0])
    assert first["schema"] == SCHEMA and first["turns"][5]["read"] == [[1, 2], [2, 1]]
    assert "text" not in first["turns"][1]  # optional fields that are None stay out


def test_minimal_line_needs_only_letters_roles_answers_gold() -> None:
    d = debate_from_dict(
        {
            "id": "x",
            "gold": "B",
            "letters": ["A", "B", "C"],
            "agents": [{"role": "honest"}, {"role": "adversary", "onset": 1, "target": "C"}],
            "turns": [
                {"round": 1, "agent": 0, "answer": "B"},
                {"round": 1, "agent": 1, "answer": "C"},
                {"round": 2, "agent": 0, "answer": "C", "read": [[1, 1]]},
            ],
        },
        "mem:1",
    )
    assert (d.n_agents, d.n_rounds) == (2, 2)
    assert d.agents[1] == AgentInfo(1, "adversary", 1, "C")
    assert d.turn(0, 2) == Turn(2, 0, "C", ((1, 1),))
    assert d.is_adversarial(1, 1) and not d.is_adversarial(0, 2)
    assert d.question is None and d.options is None and d.turn(0, 1).text is None
    # options alone give the letters
    d2 = debate_from_dict(
        {
            "id": "y",
            "gold": "B",
            "options": ["p", "q"],
            "agents": [{}],
            "turns": [{"round": 1, "agent": 0, "answer": None}],
        },
        "mem:2",
    )
    assert d2.letters == ("A", "B")
    assert d2.question_key == "id:y" and _debate().question_key == "q:which?"  # wording first
    assert replace(_debate(), question=None).question_key == "id:Q"


_GOOD = {
    "schema": SCHEMA,
    "id": "q12",
    "gold": "A",
    "letters": ["A", "B", "C", "D", "E"],
    "agents": [{"role": "honest"}, {"role": "adversary", "onset": 1, "target": "B"}],
    "turns": [
        {"round": 1, "agent": 0, "answer": "A"},
        {"round": 1, "agent": 1, "answer": "B"},
        {"round": 2, "agent": 0, "answer": "A", "read": [[0, 1], [1, 1]]},
        {"round": 2, "agent": 1, "answer": "B"},
    ],
}


def _broken(**change: object) -> dict:
    d = json.loads(json.dumps(_GOOD))
    for path, value in change.items():
        keys = path.split("__")
        at = d
        for k in keys[:-1]:
            at = at[int(k)] if isinstance(at, list) else at[k]
        last = keys[-1]
        if value is _DROP:
            del at[last]
        elif isinstance(at, list):
            at[int(last)] = value
        else:
            at[last] = value
    return d


_DROP = object()


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        ({"gold": _DROP}, "gold", "missing"),
        ({"gold": "Z"}, "gold", "'Z' is not one of the letters A-E"),
        ({"turns__3__answer": "Z"}, "turns[3].answer", "'Z' is not one of the letters A-E"),
        ({"turns__2__agent": 7}, "turns[2].agent", "7 is outside 0..1"),
        ({"turns__2__read": [[5, 1]]}, "turns[2].read[0]", "agent 5 is outside 0..1"),
        ({"turns__2__read": [[0, 2]]}, "turns[2].read[0]", "(0, 2)"),
        ({"turns__1__round": 2}, "turns[3]", "a second turn of agent 1 in round 2"),
        ({"agents__1__target": "Q"}, "agents[1].target", "'Q' is not one of the letters"),
        ({"agents__1__onset": _DROP}, "agents[1].onset", "an adversary needs an onset"),
        ({"agents__0__role": "spy"}, "agents[0].role", "'spy' is not one of honest, adversary"),
        ({"agents__0__agent": 1}, "agents[0].agent", "must equal its position 0"),
        ({"turns__0__answer": _DROP}, "turns[0].answer", "missing"),
        ({"turns__0__round": "1"}, "turns[0].round", "expected an integer, got a string"),
        ({"turns__0__colour": "red"}, "turns[0].colour", "unknown field"),
        ({"letters": _DROP}, "letters", "missing"),
    ],
)
def test_bad_field_is_one_line_naming_file_line_debate_field(
    tmp_path: Path, change: dict, field: str, words: str
) -> None:
    f = tmp_path / "data.jsonl"
    f.write_text(json.dumps(_GOOD) + "\n\n" + json.dumps(_broken(**change)) + "\n")
    with pytest.raises(TranscriptError) as e:
        load_debates([f])
    msg = str(e.value)
    assert "\n" not in msg
    assert msg.startswith(f"{f}:3: debate 'q12': field '{field}': "), msg
    assert words in msg


def test_broken_json_and_binary_bytes_name_file_and_line(tmp_path: Path) -> None:
    f = tmp_path / "data.jsonl"
    f.write_text(json.dumps(_GOOD) + '\n{"id": "q2", "gold": \n')
    with pytest.raises(TranscriptError, match=r"data\.jsonl:2: debate '\?': field '<json>': invalid JSON"):
        load_debates([f])
    b = tmp_path / "bin.jsonl"
    b.write_bytes(json.dumps(_GOOD).encode() + b"\n\x89PNG\r\n\x1a\n\xff\xfe\x00\n")
    with pytest.raises(TranscriptError) as e:
        load_debates([b])
    assert str(e.value).startswith(f"{b}:2: debate '?': field '<line>': not UTF-8 text")
    # a broken first line still gets the line error, not "unknown format"
    c = tmp_path / "first.jsonl"
    c.write_bytes(b"\xff\xfe garbage\n")
    with pytest.raises(TranscriptError, match=r"first\.jsonl:1: .*not UTF-8"):
        load_debates([c])


def test_repeated_id_is_an_error(tmp_path: Path) -> None:
    f = tmp_path / "d.jsonl"
    f.write_text(json.dumps(_GOOD) + "\n" + json.dumps(_GOOD) + "\n")
    with pytest.raises(
        TranscriptError, match=r"d\.jsonl:2: debate 'q12': field 'id': repeated \(first at line 1"
    ):
        load_debates([f])


def test_unknown_format_lists_the_known_ones(tmp_path: Path) -> None:
    f = tmp_path / "notes.txt"
    f.write_text("hello\n")
    with pytest.raises(TranscriptError) as e:
        load_debates([f])
    known = "known: native, tomacs-episodes, mad-follower, multi-agent-attack"
    assert str(e.value) == f"{f}: not a known transcript format; {known} (--format chooses one)"
    with pytest.raises(TranscriptError, match=rf"^unknown transcript format 'csv'; {known}$"):
        load_debates([f], fmt="csv")
    with pytest.raises(TranscriptError, match="no such file"):
        load_debates([tmp_path / "absent"])


def test_a_forced_format_that_finds_nothing_says_so(tmp_path: Path) -> None:
    with pytest.raises(TranscriptError, match=r"no MAD-Follower run here"):
        load_debates([tmp_path], fmt="mad-follower")
    with pytest.raises(TranscriptError, match=r"no episodes\.jsonl in this directory or below it"):
        load_debates([FIXTURE], fmt="tomacs-episodes")
    with pytest.raises(TranscriptError, match=r"config\.json: not a question file of a MAD-Follower run"):
        load_debates([FIXTURE / RUNMAX / "config.json"], fmt="mad-follower")
    empty = tmp_path / "run_empty"  # a published run that stopped before its first question
    empty.mkdir()
    shutil.copy(FIXTURE / RUNMAX / "config.json", empty / "config.json")
    with pytest.raises(
        TranscriptError, match=r"run_empty: a MAD-Follower run with no questions/ folder .*leave it out"
    ):
        load_debates([empty], fmt="mad-follower")
    f = tmp_path / "x.dat"  # forced native on a name detection would not claim: the line error
    f.write_bytes(b"\x00\xff\n")
    with pytest.raises(TranscriptError, match=r"x\.dat:1: debate '\?': field '<line>': not UTF-8"):
        load_debates([f], fmt="native")


def test_a_new_format_is_one_function(tmp_path: Path) -> None:
    name = "test-letters-csv"

    @transcript_format(name, detect=lambda p: p.suffix == ".lettercsv")
    def read_csv(path: Path) -> list[Debate]:
        out = []
        for k, line in enumerate(path.read_text().splitlines()):
            gold, a1, a2 = line.split(",")
            turns = (Turn(1, 0, a1), Turn(2, 0, a2, read=((0, 1),)))
            out.append(Debate(f"row{k}", gold, ("A", "B"), 1, 2, (AgentInfo(0),), turns))
        return out

    try:
        f = tmp_path / "x.lettercsv"
        f.write_text("A,A,B\nB,B,B\n")
        ds = load_debates([f])
        assert [d.id for d in ds] == ["row0", "row1"] and ds[0].turn(0, 2).answer == "B"
        assert name in known_formats()
    finally:
        from tomacs.transcripts import formats

        formats._FORMATS.pop(name)


# -- MAD-Follower ------------------------------------------------------------------------------
def test_mad_follower_fixture_hand_checked() -> None:
    ds = load_debates([FIXTURE])
    assert detect_format(FIXTURE) == "mad-follower"
    assert [d.id for d in ds] == [
        f"{RUN5}/001_1afa02df02c908a558b4036e80242fac",
        f"{RUN5}/002_a7ab086045575bb497933726e4e6ad28",
        f"{RUN5}/003_e68fb2448fd74e402aae9982aa76e527",
        f"{RUN5}/004_b8c0a4703079cf661d7261a60a1bcbff",
        f"{RUNMAX}/001_ethics_test_3ddaf1fd0366c634",
    ]
    d = ds[0]
    assert d.source == f"mad-follower:{RUN5}" and d.model == "qwen3-8b"
    assert (d.n_agents, d.n_rounds, d.gold, d.letters) == (5, 5, "A", ("A", "B", "C", "D", "E"))
    assert d.options == ("bank", "library", "department store", "mall", "new york")
    assert d.question_id == "1afa02df02c908a558b4036e80242fac"
    assert d.question.startswith("A revolving door is convenient")
    assert d.agents == (
        AgentInfo(0, "adversary", onset=1, target="B", model="qwen3-8b"),  # attacker
        AgentInfo(1, "adversary", onset=2, target="B", model="qwen3-8b"),  # follower
        AgentInfo(2, model="qwen3-8b"),
        AgentInfo(3, model="qwen3-8b"),
        AgentInfo(4, model="qwen3-8b"),
    )
    assert d.meta["rounds"] == 5 and d.meta["attacker_compliant"] is True
    assert d.meta["benchmark"] == "commonsense_qa"  # data\\commonsense_qa_validation.jsonl
    assert [d.turn(1, r).answer for r in range(1, 6)] == ["A", "B", "B", "B", "B"]  # follower joins at 2
    assert [d.turn(2, r).answer for r in range(1, 6)] == ["A"] * 5
    assert not d.is_adversarial(1, 1) and d.is_adversarial(1, 2)
    assert d.turn(2, 1).text.startswith("#answer: A")
    full = lambda t: tuple((j, s) for j in range(5) for s in range(1, t))  # noqa: E731
    assert d.turn(2, 1).read == ()
    assert d.turn(2, 2).read == full(2)  # every agent's round-1 answer, its own included
    assert d.turn(3, 3).read == full(3)  # every earlier round, not only the last
    # rounds 4-5 of this run: the prompt shows the first message, "...", and the last 11
    window = (set(full(4)) - {(j, 1) for j in range(5)}) | {(0, 1), (4, 1)}
    assert d.turn(2, 4).read == tuple(sorted(window))
    assert d.turn(0, 5).read == (
        (0, 1), (0, 3), (0, 4), (1, 3), (1, 4), (2, 3), (2, 4), (3, 3), (3, 4), (4, 2), (4, 3), (4, 4),
    )  # fmt: skip
    q = ds[4]
    assert q.source == f"mad-follower:{RUNMAX}" and q.model == "qwen-max" and q.n_rounds == 3
    assert (q.gold, q.agents[0].target, q.agents[1].target) == ("A", "B", "B")
    assert [q.turn(i, 1).answer for i in range(5)] == ["B", "A", "A", "A", "A"]
    assert q.turn(4, 3).read == full(3)
    assert q.meta["benchmark"] == "ethics"  # data\\ethics_test.jsonl


def test_mad_follower_benchmark_from_the_dataset_path(tmp_path: Path) -> None:
    """The benchmark is the config's dataset file, split suffix dropped; no path, no benchmark."""
    from tomacs.transcripts.mad_follower import benchmark_of

    assert benchmark_of("data\\ethics_test.jsonl") == "ethics"
    assert benchmark_of("data/commonsense_qa_validation.jsonl") == "commonsense_qa"
    assert benchmark_of("/x/mmlu.jsonl") == "mmlu" and benchmark_of("gsm8k_train.json") == "gsm8k"
    assert benchmark_of(None) is None and benchmark_of("") is None
    run = tmp_path / RUNMAX
    shutil.copytree(FIXTURE / RUNMAX, run)
    cfg = json.loads((run / "config.json").read_text())
    del cfg["config"]["dataset"]
    (run / "config.json").write_text(json.dumps(cfg))
    (d,) = load_debates([run])
    assert "benchmark" not in d.meta


def test_mad_follower_reads_come_from_the_prompts(tmp_path: Path) -> None:
    """File 004 keeps its prompts; the others lost theirs and borrow what the run's prompts show.
    A run with no prompt left falls back to the full history."""
    ds = {d.id.split("/")[1][:3]: d for d in load_debates([FIXTURE / RUN5])}
    assert "reads_from_protocol" not in ds["004"].meta and ds["001"].meta["reads_from_protocol"] == 25
    one = load_debates([FIXTURE / RUN5 / "questions" / "001_1afa02df02c908a558b4036e80242fac.json"])
    assert one == [ds["001"]] and detect_format(FIXTURE / RUN5) == "mad-follower"
    raw = json.loads((FIXTURE / RUN5 / "questions" / "004_b8c0a4703079cf661d7261a60a1bcbff.json").read_text())
    prompt = next(
        t["prompt"] for t in raw["turns"] if (t["round_index"], t["agent_id"]) == (3, "responder_1")
    )
    assert "[Round 1] attacker (attacker): A\n...\n[Round 1] responder_3 (normal): B" in prompt
    assert "[Round 1] follower" not in prompt
    assert (1, 1) not in ds["004"].turn(2, 4).read and (4, 1) in ds["004"].turn(2, 4).read
    # without any prompt in the run: full history
    bare = tmp_path / RUN5
    shutil.copytree(FIXTURE / RUN5, bare)
    f = bare / "questions" / "004_b8c0a4703079cf661d7261a60a1bcbff.json"
    for t in raw["turns"]:
        t.pop("prompt")
    f.write_text(json.dumps(raw, indent=2))
    d = next(x for x in load_debates([bare]) if x.id.endswith("004_b8c0a4703079cf661d7261a60a1bcbff"))
    assert d.turn(2, 5).read == tuple((j, s) for j in range(5) for s in range(1, 5))


def test_mad_follower_malformed(tmp_path: Path) -> None:
    run = tmp_path / RUN5
    shutil.copytree(FIXTURE / RUN5, run)
    f = run / "questions" / "002_a7ab086045575bb497933726e4e6ad28.json"
    raw = json.loads(f.read_text())
    raw["turns"][7]["agent_id"] = "responder_9"
    f.write_text(json.dumps(raw))
    did = f"{RUN5}/002_a7ab086045575bb497933726e4e6ad28"
    with pytest.raises(TranscriptError) as e:
        load_debates([run])
    assert str(e.value).startswith(f"{f}: debate '{did}': field 'turns[7].agent_id': 'responder_9' is not")
    del raw["ground_truth"]
    f.write_text(json.dumps(raw))
    with pytest.raises(TranscriptError, match=rf"debate '{did}': field 'ground_truth': missing"):
        load_debates([f])
    f.write_bytes(b"\x00\xff\xfe binary")
    with pytest.raises(TranscriptError, match=r"002_a7ab086045575bb497933726e4e6ad28\.json: .*not UTF-8"):
        load_debates([run])
    f.write_text('{"turns": [1, 2,,]}')
    with pytest.raises(TranscriptError, match=r"\.json:1: debate '\?': field '<json>': invalid JSON"):
        load_debates([run])


def test_mad_follower_full_data(data_dir: Path) -> None:
    root = data_dir / "debates" / "mad-follower"
    if not root.is_dir():
        pytest.skip("shared/data/debates/mad-follower not found")
    ds = load_debates([root])
    runs = [p for p in root.iterdir() if (p / "config.json").is_file()]
    assert len(ds) == 209 and len(runs) == 16  # the README's counts (two runs hold no debate)
    assert len({d.source for d in ds}) == 14
    assert {d.n_rounds for d in ds} == {3, 5}
    # what the prompts show (docs/transcripts.md): everyone's every earlier round, the reader's own
    # included; in the letters-only 5-round run from round 4 on only the first entry and the last 11
    for d in ds:
        for t in d.turns:
            history = [(j, s) for s in range(1, t.round) for j in range(d.n_agents)]
            if d.source.endswith(RUN5) and len(history) > 12:
                history = history[:1] + history[-11:]
            assert t.read == tuple(sorted(history)), (d.id, t.round, t.agent)
    # the fixture's files, prompts dropped or not, import exactly as the originals
    full = {d.id: d for d in ds}
    assert all(full[d.id] == d for d in load_debates([FIXTURE]))
    # quirks: the run whose honest (baichuan2) agents failed every call; the 'LABEL' target
    bad = [d for d in ds if d.source.endswith("20251114_073326_n5_r3_limit30")]
    honest = [t for d in bad for t in d.turns if d.agents[t.agent].role == "honest"]
    assert len(bad) == 30 and len(honest) == 270 and all(t.answer is None for t in honest)
    assert {d.agents[2].model for d in bad} == {"baichuan2-7b-chat-v1"} and bad[0].model is None
    label = [d for d in ds if d.meta.get("attacker_target") == "LABEL"]
    assert len(label) == 1 and label[0].agents[0].target is None and label[0].meta["excluded"] is True


# -- tomacs episodes ---------------------------------------------------------------------------
def _out(i: int, t: int, ans: str, behaviour: str = "honest", participated: bool = True) -> AgentOutput:
    return AgentOutput(i, t, f"Answer: {ans}", ans, participated, behaviour)  # type: ignore[arg-type]


def test_episode_reads_follow_the_executor_rules() -> None:
    """Hand-built: round 2 has a spatial edge 0->1, a temporal edge 2->1, agent 3 sits out; in
    round 3 agent 3 is back and reads agent 3's carried output (made in round 1), agent 2 is the
    adversary from round 3, agent 0 answers alone (isolated=answer)."""
    q = Question("q", "Which?", ("a", "b", "c"), "B", "mmlu", "mc")
    plan = AdversaryPlan(adversaries=(2,), onsets={2: 3}, target="C")
    rounds = [
        [_out(0, 1, "B"), _out(1, 1, "A"), _out(2, 1, "B"), _out(3, 1, "A")],
        [_out(0, 2, "B"), _out(1, 2, "B"), _out(2, 2, "B"), _out(3, 2, "A", participated=False)],
        [_out(0, 3, "B"), _out(1, 3, "C"), _out(2, 3, "C", "adversarial"), _out(3, 3, "B")],
    ]
    graphs = [
        None,
        RoundGraph(nodes=[0, 1, 2], edges=[(0, 1)], temporal_edges=[(2, 1)]),
        RoundGraph([0, 1, 2, 3], [(2, 1)], temporal_edges=[(3, 1), (0, 3)], participants=[1, 2, 3]),
    ]
    ep = Episode(q, plan, rounds, graphs, final_answer="B", correct=True)
    d = debate_from_episode(ep, "run/q", "tomacs:run", "openai/x", "f:1")
    assert d.agents[2] == AgentInfo(2, "adversary", onset=3, target="C", model="openai/x")
    assert d.turn(3, 2) is None  # sat out: no call, no turn
    assert d.turn(0, 1).read == ()
    assert d.turn(1, 2).read == ((0, 2), (1, 1), (2, 1))  # spatial (0, 2); temporal (2, 1); own (1, 1)
    assert d.turn(0, 2).read == ((0, 1),)
    assert d.turn(1, 3).read == ((1, 2), (2, 3), (3, 1))  # agent 3's "previous" output is round 1's
    assert d.turn(3, 3).read == ((0, 2), (3, 1))
    assert d.turn(2, 3).read == ()  # the adversary's prompt is the question and its target
    assert d.turn(0, 3).read == ((0, 2),)
    assert d.meta["participants"] == {"3": [1, 2, 3]} and d.meta["correct"] is True
    assert (d.gold, d.letters, d.question_id) == ("B", ("A", "B", "C"), "q")


@pytest.fixture(scope="module")
def sim_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sweep") / "job0"
    p = tomacs(
        "train",
        "method=debate",
        "attack=gt50",
        "eval.size=3",
        "train.size=4",
        "train.epochs=1",
        "embedder=hashing",
        f"hydra.run.dir={out}",
    )
    assert p.returncode == 0, p.stderr[-3000:]
    return out


@pytest.mark.slow
def test_sim_episodes_import_with_the_debate_graph(sim_run: Path) -> None:
    eps = [json.loads(x) for x in (sim_run / "episodes.jsonl").read_text().splitlines()]
    ds = load_debates([sim_run])
    assert detect_format(sim_run) == "tomacs-episodes" == detect_format(sim_run / "episodes.jsonl")
    assert len(ds) == len(eps) == 3
    assert load_debates([sim_run / "episodes.jsonl"]) == ds
    for d, ep in zip(ds, eps, strict=True):
        assert d.id == f"job0/{ep['question']['id']}" and d.source == "tomacs:job0"
        assert d.model == "sim:mmlu" and all(a.model == "sim:mmlu" for a in d.agents)
        assert d.gold == ep["question"]["answer"] and d.n_rounds == len(ep["rounds"])
        onsets = {int(k): v for k, v in ep["plan"]["onsets"].items()}
        for a in d.agents:
            assert (a.role == "adversary") == (a.agent in onsets)
            assert a.onset == onsets.get(a.agent)
            assert a.target == (ep["plan"]["target"] if a.agent in onsets else None)
        n = d.n_agents
        for t in d.turns:
            o = ep["rounds"][t.round - 1][t.agent]
            assert t.answer == o["answer"] and t.text == o["text"]
            if t.round == 1 or d.is_adversarial(t.agent, t.round):
                assert t.read == ()
            else:  # debate: every agent's previous answer, its own included
                assert t.read == tuple((j, t.round - 1) for j in range(n))
    # a sweep directory: every job below it, ids prefixed by the sweep's name
    sweep = load_debates([sim_run.parent])
    assert [d.id for d in sweep] == [f"{sim_run.parent.name}/job0/{ep['question']['id']}" for ep in eps]
    bad = sim_run.parent / "broken.jsonl"
    bad.write_text(json.dumps({"question": {"id": "z"}, "plan": {}, "rounds": []}) + "\n")
    with pytest.raises(
        TranscriptError, match=r"broken\.jsonl:1: debate 'z': field '<episode>': not a tomacs"
    ):
        load_debates([bad])
    bad.unlink()


@pytest.mark.slow
def test_real_backbone_model_from_config_never_a_key(sim_run: Path, tmp_path: Path) -> None:
    from omegaconf import OmegaConf

    run = tmp_path / "real"
    run.mkdir()
    shutil.copy(sim_run / "episodes.jsonl", run / "episodes.jsonl")
    cfg = OmegaConf.load(sim_run / "config.yaml")
    cfg.backbone = {"name": "llamacpp", "model": "openai/smollm2", "api_key": "sk-SECRET-123"}
    OmegaConf.save(cfg, run / "config.yaml")
    ds = load_debates([run])
    assert {d.model for d in ds} == {"openai/smollm2"} and ds[0].source == "tomacs:real"
    out = tmp_path / "d.jsonl"
    write_debates(out, ds)
    assert "sk-SECRET" not in out.read_text()


@pytest.mark.slow
def test_episodes_with_agents_sitting_out(tmp_path: Path) -> None:
    """TodyComm with isolated=silent: a non-participant makes no call, so it has no turn, and a
    later read of its previous output names the round that produced it."""
    out = tmp_path / "tody"
    p = tomacs(
        "train",
        "method=todycomm",
        "method.isolated=silent",
        "attack=gt50",
        "eval.size=3",
        "train.size=4",
        "train.epochs=1",
        "embedder=hashing",
        f"hydra.run.dir={out}",
    )
    assert p.returncode == 0, p.stderr[-3000:]
    eps = [json.loads(x) for x in (out / "episodes.jsonl").read_text().splitlines()]
    ds = load_debates([out])
    sat_out = 0
    for d, ep in zip(ds, eps, strict=True):
        made = {(o["agent"], o["round"]) for r in ep["rounds"] for o in r if o["participated"]}
        assert {(t.agent, t.round) for t in d.turns} == made
        sat_out += d.n_agents * d.n_rounds - len(made)
        for t in d.turns:
            assert all((j, s) in made for j, s in t.read)  # every read names a real turn
            if t.round == 1 or d.is_adversarial(t.agent, t.round):
                continue
            g = ep["graphs"][t.round - 1]
            spatial = {(s_, t.round) for s_, r in g["edges"] if r == t.agent}
            own = max(s for (i, s) in made if i == t.agent and s < t.round)
            assert set(t.read) == spatial | {(t.agent, own)}  # todycomm: no temporal edges
            assert d.meta["participants"][str(t.round)] == g["participants"]
    assert sat_out > 0  # the run did exercise sitting out


# -- CLI and stats -----------------------------------------------------------------------------
def test_stats_counts_by_hand() -> None:
    rows = source_stats([_debate()])
    (r,) = rows
    assert (r.source, r.model, r.debates, r.agents, r.rounds) == ("hand", "m", 1, {3}, {2})
    # agents 0 and 2 are honest (agent 1 is an adversary from round 2): C right, None wrong
    assert r.honest_r1 == 2 and r.honest_r1_accuracy == pytest.approx(1 / 2)
    assert r.unparsed_share == pytest.approx(1 / 6) and r.unparsed_honest_share == pytest.approx(1 / 4)


@pytest.mark.slow
def test_cli_convert_and_stats(tmp_path: Path) -> None:
    out = tmp_path / "mf.jsonl"
    p = tomacs("transcripts", "convert", str(FIXTURE), "--out", str(out))
    assert p.returncode == 0, p.stderr
    assert "5 debates" in p.stdout
    assert read_debates(out) == load_debates([FIXTURE])
    p = tomacs("transcripts", "stats", str(out))
    assert p.returncode == 0, p.stderr
    # honest round-1 accuracy of the qwen-max run, counted from the raw file
    raw = json.loads((FIXTURE / RUNMAX / "questions" / "001_ethics_test_3ddaf1fd0366c634.json").read_text())
    r1 = [t for t in raw["turns"] if t["round_index"] == 0 and t["role"] == "normal"]
    acc = 100 * sum(t["parsed_answer"] == raw["ground_truth"] for t in r1) / len(r1)
    line = next(x for x in p.stdout.splitlines() if RUNMAX in x)
    assert "qwen-max" in line and f"{acc:.1f}" in line and "0.0" in line
    p = tomacs("transcripts", "stats", str(FIXTURE), "--format", "csv")
    assert p.returncode == 2
    known = "known: native, tomacs-episodes, mad-follower, multi-agent-attack"
    assert p.stderr.strip() == f"error: unknown transcript format 'csv'; {known}"
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(_broken(gold="Z")) + "\n")
    p = tomacs("transcripts", "convert", str(bad), "--out", str(tmp_path / "x.jsonl"))
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1
    assert "bad.jsonl:1: debate 'q12': field 'gold'" in p.stderr
