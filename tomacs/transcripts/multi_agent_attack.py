"""The published "MultiAgent Collaboration Attack" debates (github.com/amayuelas/multi-agent-attack,
folder multiagent_debate/results/; Amayuelas et al. 2024, arXiv 2406.14711).

Layout below `<dataset>/` (mmlu here), one debate per line:
`<n>_<agents>_<rounds>_<model>/<dataset>_<n>_<agents>_<rounds>_<k>.jsonl` (no adversary, repeat k) and
`adv_<n>_<agents>_<rounds>_<n_adv>-<group model>-<adversary model>/adv_<dataset>_..._<n_adv>_<k>-<group
model>-<adversary model>.jsonl` (adversaries from round 1). A path may be any folder above such files or
one file. The model, condition and repeat come from these names, since the lines do not say them.

A line keeps each agent's whole chat: an optional system message, then one user/assistant pair per
round. The adversary is the agent whose chat opens with a system message about playing an adversary;
its user messages end with "Your answer: (X)", its target. In round r >= 2 every agent's user message
quotes every other agent's round r-1 reply ("One agent solution: ```...```", in agent order) and its
own round r-1 reply is in its chat history, so each turn reads every agent's previous round, its own
included; the adversary reads the same. Answers are parsed from the replies by tomacs' own parser
(`parse_letter`, with the option texts), not by the source's "last (X)", so they are counted the way
tomacs counts its own debates.

The source's `id` is the question's position in the sample its run drew, not an MMLU id: the
gpt-4o file's 51 questions are other questions under the same ids (0-99) as the other files' 73, so
`question_id` is a hash of the question and its options (the same text in every repeat and
condition; an id the same question keeps everywhere), not the source's `id`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from tomacs.benchmarks.parsing import parse_letter
from tomacs.transcripts.formats import transcript_format
from tomacs.transcripts.jsonl import json_lines
from tomacs.transcripts.native import first_object
from tomacs.transcripts.schema import AgentInfo, Debate, TranscriptError, Turn, check_debate, fail
from tomacs.types import LETTERS

_LINE_KEYS = {"id", "question", "answer", "agent_responses"}
_ROLES = ("system", "user", "assistant")
_ADV_FILE = re.compile(
    r"^adv_(?P<ds>[A-Za-z0-9]+)_\d+_\d+_\d+_\d+_(?P<rep>\d+)-(?P<models>.+)\.jsonl$"
)  # adv_mmlu_100_3_3_1_<k>-<group>-<adversary>.jsonl
_CLEAN_FILE = re.compile(r"^(?P<ds>[A-Za-z0-9]+)_\d+_\d+_\d+_(?P<rep>\d+)\.jsonl$")  # mmlu_100_3_3_<k>.jsonl
_ADV_DIR = re.compile(r"^adv_\d+_\d+_\d+_\d+-(?P<models>.+)$")  # adv_100_3_3_1-<group>-<adversary>
_CLEAN_DIR = re.compile(r"^\d+_\d+_\d+_(?P<model>.+)$")  # 100_3_3_<model>
_TARGET = re.compile(r"Your answer: \(([A-Za-z])\)")


def _is_line(obj: object) -> bool:
    return isinstance(obj, dict) and _LINE_KEYS <= set(obj)


def _named_files(path: Path) -> Iterator[Path]:
    """The .jsonl files below `path` named as the source names its results (unsorted: detection
    stops at the first)."""
    for f in path.rglob("*.jsonl"):
        if _ADV_FILE.match(f.name) or _CLEAN_FILE.match(f.name):
            yield f


def is_multi_agent_attack(path: Path) -> bool:
    """A folder with a results file of the source's naming below it (the first one found must hold
    a debate line), or a file whose first line is one. Reads one line at most."""
    if path.is_dir():
        f = next(_named_files(path), None)
        return f is not None and _is_line(first_object(f))
    return path.suffix == ".jsonl" and _is_line(first_object(path))


def _model_pair(models: str) -> tuple[str | None, str | None]:
    """(group, adversary) from `<group>-<adversary>`. Model names hold hyphens, so only a pair of
    equal names splits for sure ("gpt-4o-gpt-4o"); (None, None) otherwise."""
    half = (len(models) - 1) // 2
    if len(models) % 2 == 1 and models[half] == "-" and models[:half] == models[half + 1 :]:
        return models[:half], models[:half]
    return None, None


class _FileInfo:
    """What a results file's name and folder say: condition, repeat, models and benchmark."""

    def __init__(self, file: Path) -> None:
        self.folder = file.parent.name
        self.condition: str | None = None  # None: a file not named as the source names them
        self.repeat: int | None = None
        self.benchmark = "mmlu"
        self.group: str | None = None
        self.adversary: str | None = None
        self.pair: str | None = None  # "<group>-<adversary>" that could not be split
        m = _ADV_FILE.match(file.name)
        if m:
            self.condition, self.repeat, self.benchmark = "adversary", int(m["rep"]), m["ds"].lower()
            self._pair(m["models"])
        elif m := _CLEAN_FILE.match(file.name):
            self.condition, self.repeat, self.benchmark = "control", int(m["rep"]), m["ds"].lower()
            d = _CLEAN_DIR.match(self.folder)
            self.group = self.adversary = d["model"] if d else None
        if self.group is None and self.pair is None and (d := _ADV_DIR.match(self.folder)):
            self._pair(d["models"])
        # what makes ids unique across files: model, condition and repeat, else the file itself
        if self.condition is not None and self.repeat is not None and (self.group or self.pair):
            cond = "adv" if self.condition == "adversary" else "clean"
            self.key = f"{self.group or self.pair}:{cond}:{self.repeat}"
        else:
            self.key = f"{self.folder}/{file.stem}"

    def _pair(self, models: str) -> None:
        self.group, self.adversary = _model_pair(models)
        if self.group is None:
            self.pair = models


def _question_id(benchmark: str, stem: str, options: tuple[str, ...]) -> str:
    """The same for the same question and options in any file (see the module docstring)."""
    digest = hashlib.sha256(json.dumps([stem, *options], ensure_ascii=False).encode("utf-8")).hexdigest()
    return f"{benchmark}:{digest[:12]}"


def _chats(raw: Any, bad: Any) -> list[list[dict[str, str]]]:
    """agent_responses checked: a list of chats, each a list of {role, content} messages."""
    if not isinstance(raw, list) or not raw:
        raise bad("agent_responses", "expected a list with one chat (list of messages) per agent")
    for i, chat in enumerate(raw):
        if not isinstance(chat, list):
            raise bad(f"agent_responses[{i}]", "expected a chat (a list of {role, content} messages)")
        for k, m in enumerate(chat):
            at = f"agent_responses[{i}][{k}]"
            if not (isinstance(m, dict) and m.get("role") in _ROLES and isinstance(m.get("content"), str)):
                raise bad(at, f"expected a message {{role: {'|'.join(_ROLES)}, content: text}}")
    return raw


def _adversary_target(chat: list[dict[str, str]], letters: tuple[str, ...]) -> tuple[bool, str | None]:
    """(is it the adversary, its target): the chat opens with the adversary system message; the
    target is the last "Your answer: (X)" of its first user message, None when unreadable."""
    if not chat or chat[0]["role"] != "system" or "adversary" not in chat[0]["content"].lower():
        return False, None
    first_user = next((m["content"] for m in chat if m["role"] == "user"), "")
    found = _TARGET.findall(first_user)
    target = found[-1].upper() if found else None
    return True, target if target in letters else None


def read_line(obj: object, where: str, info: _FileInfo) -> Debate:
    """One line as a checked debate (reads, roles and answers as the module docstring says)."""
    if not isinstance(obj, dict):
        raise fail(where, None, "<line>", "expected a JSON object (one debate per line)")
    qid = obj.get("id")
    debate_id = f"maa:{info.key}:{qid}" if isinstance(qid, int) and not isinstance(qid, bool) else None

    def bad(field_name: str, problem: str) -> TranscriptError:
        return fail(where, debate_id, field_name, problem)

    for key in ("id", "answer", "raw_task", "agent_responses"):
        if key not in obj:
            raise bad(key, "missing")
    if debate_id is None:
        raise bad("id", f"expected an integer (the question's position in its file), got {qid!r}")
    task = obj["raw_task"]
    if not isinstance(task, list) or len(task) < 4 or not all(isinstance(x, str) for x in task):
        raise bad("raw_task", "expected [question, option, option, ..., gold letter] (MMLU's form)")
    stem, options = task[0], tuple(task[1:-1])
    if len(options) > len(LETTERS):
        raise bad("raw_task", f"{len(options)} options; at most {len(LETTERS)} have letters")
    letters = tuple(LETTERS[: len(options)])
    gold = obj["answer"]
    if not isinstance(gold, str) or gold not in letters:
        raise bad("answer", f"{gold!r} is not one of the letters {letters[0]}-{letters[-1]}")
    if task[-1] != gold:
        raise bad("answer", f"{gold!r}, but raw_task's last item (the gold) is {task[-1]!r}")
    chats = _chats(obj["agent_responses"], bad)
    replies = [[m["content"] for m in chat if m["role"] == "assistant"] for chat in chats]
    n, n_rounds = len(chats), len(replies[0])
    if n_rounds == 0:
        raise bad("agent_responses[0]", "no assistant message (one reply per round)")
    for i, r in enumerate(replies):
        # every agent answers once per round in the source; a short chat is a cut line, not a
        # sat-out round, so it is an error rather than missing turns
        if len(r) != n_rounds:
            raise bad(f"agent_responses[{i}]", f"{len(r)} replies, agent 0 has {n_rounds} (one per round)")
    group = info.group
    agents = []
    for i, chat in enumerate(chats):
        adversary, target = _adversary_target(chat, letters)
        if adversary:
            agents.append(AgentInfo(agent=i, role="adversary", onset=1, target=target, model=info.adversary))
        else:
            agents.append(AgentInfo(agent=i, model=group))
    turns = []
    for rnd in range(1, n_rounds + 1):
        read = tuple((j, rnd - 1) for j in range(n)) if rnd > 1 else ()  # the others' quoted + own history
        for i in range(n):
            text = replies[i][rnd - 1]
            turns.append(Turn(rnd, i, parse_letter(text, len(options), options), read=read, text=text))
    condition = info.condition or ("adversary" if any(a.role == "adversary" for a in agents) else "control")
    meta: dict[str, Any] = {"condition": condition, "repeat": info.repeat, "benchmark": info.benchmark}
    if info.pair is not None:
        meta["models"] = info.pair  # "<group>-<adversary>", not split (model names hold hyphens)
    d = Debate(
        id=debate_id,
        gold=gold,
        letters=letters,
        n_agents=n,
        n_rounds=n_rounds,
        agents=tuple(agents),
        turns=tuple(turns),
        source=f"multi-agent-attack:{info.folder}",
        model=group if group == info.adversary else None,
        question=stem,
        options=options,
        question_id=_question_id(info.benchmark, stem, options),
        meta=meta,
    )
    return check_debate(d, where)


def read_file(file: Path) -> list[Debate]:
    info = _FileInfo(file)
    out: list[Debate] = []
    seen: dict[str, str] = {}
    for where, obj in json_lines(file):
        d = read_line(obj, where, info)
        if d.id in seen:
            raise fail(where, d.id, "id", f"repeated (first at {seen[d.id]})")
        seen[d.id] = where
        out.append(d)
    return out


@transcript_format(
    "multi-agent-attack",
    detect=is_multi_agent_attack,
    help="multi-agent-attack results (MMLU, 3 agents x 3 rounds): any folder above them or one file",
)
def read_multi_agent_attack(path: Path) -> Iterable[Debate]:
    if path.is_file():
        return read_file(path)
    files = sorted(_named_files(path))
    if not files:
        raise TranscriptError(
            f"{path}: no multi-agent-attack results here (files like mmlu_100_3_3_<k>.jsonl or "
            "adv_mmlu_100_3_3_1_<k>-<model>-<model>.jsonl below it)"
        )
    return [d for f in files for d in read_file(f)]
