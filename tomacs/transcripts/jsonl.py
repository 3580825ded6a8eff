"""The native JSON Lines form of `tomacs.debate/1`: one debate per line (docs/transcripts.md).

Reading checks every field and fails on the first bad one with a one-line `TranscriptError`
naming the file, line, debate and field, because a fitter fed a silently mis-read answer would
learn the wrong behaviour without any sign of it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal, overload

from tomacs.transcripts.schema import SCHEMA, AgentInfo, Debate, TranscriptError, Turn, check_debate, fail
from tomacs.types import LETTERS

_DEBATE_KEYS = {
    "schema",
    "id",
    "source",
    "model",
    "gold",
    "letters",
    "question",
    "question_id",
    "options",
    "n_agents",
    "n_rounds",
    "agents",
    "turns",
    "meta",
}
_AGENT_KEYS = {"agent", "role", "onset", "target", "model"}
_TURN_KEYS = {"round", "agent", "answer", "read", "text"}


def debate_to_dict(d: Debate) -> dict[str, object]:
    """The JSON object of one line; optional fields that are None are left out to keep lines short."""
    out: dict[str, Any] = {"schema": SCHEMA, "id": d.id}
    if d.source:
        out["source"] = d.source
    if d.model is not None:
        out["model"] = d.model
    out["gold"] = d.gold
    out["letters"] = list(d.letters)
    if d.question_id is not None:
        out["question_id"] = d.question_id
    if d.question is not None:
        out["question"] = d.question
    if d.options is not None:
        out["options"] = list(d.options)
    out["n_agents"] = d.n_agents
    out["n_rounds"] = d.n_rounds
    agents = []
    for a in d.agents:
        row: dict[str, Any] = {"agent": a.agent, "role": a.role}
        if a.role == "adversary":
            row["onset"] = a.onset
            row["target"] = a.target
        if a.model is not None:
            row["model"] = a.model
        agents.append(row)
    out["agents"] = agents
    turns = []
    for t in d.turns:
        row = {"round": t.round, "agent": t.agent, "answer": t.answer, "read": [list(r) for r in t.read]}
        if t.text is not None:
            row["text"] = t.text
        turns.append(row)
    out["turns"] = turns
    if d.meta:
        out["meta"] = d.meta
    return out


class _Fields:
    """Typed access to one JSON object, raising the one-line error with the field's full path."""

    def __init__(self, where: str, debate: str | None) -> None:
        self.where, self.debate = where, debate

    def bad(self, name: str, problem: str) -> TranscriptError:
        return fail(self.where, self.debate, name, problem)

    def obj(self, v: Any, name: str, known: set[str]) -> dict[str, object]:
        if not isinstance(v, dict):
            raise self.bad(name or "<line>", f"expected a JSON object, got {_kind(v)}")
        extra = sorted(set(v) - known)
        if extra:
            raise self.bad(
                f"{name}.{extra[0]}" if name else extra[0],
                f"unknown field; valid: {', '.join(sorted(known))}",
            )
        return v

    def int_(self, v: Any, name: str) -> int:
        if isinstance(v, bool) or not isinstance(v, int):
            raise self.bad(name, f"expected an integer, got {_kind(v)}")
        return v

    @overload
    def str_(self, v: Any, name: str, optional: Literal[False] = False) -> str: ...
    @overload
    def str_(self, v: Any, name: str, optional: bool) -> str | None: ...
    def str_(self, v: Any, name: str, optional: bool = False) -> str | None:
        if v is None and optional:
            return None
        if not isinstance(v, str):
            raise self.bad(name, f"expected a string, got {_kind(v)}")
        return v

    def list_(self, v: Any, name: str) -> list[Any]:
        if not isinstance(v, list):
            raise self.bad(name, f"expected a list, got {_kind(v)}")
        return v


_KIND_NAMES: dict[type, str] = {dict: "an object", list: "a list", str: "a string"}


def _kind(v: object) -> str:
    return "null" if v is None else _KIND_NAMES.get(type(v), type(v).__name__)


def debate_from_dict(d: object, where: str) -> Debate:
    """One line's object as a checked `Debate`; `where` ("file:line") starts any error message.

    Required: id, gold, agents (roles, onsets, targets), turns (round, agent, answer), and either
    letters or options. n_agents and n_rounds default to the agents listed and the last round."""
    debate = d.get("id") if isinstance(d, dict) and isinstance(d.get("id"), str) else None
    f = _Fields(where, debate)
    rec = f.obj(d, "", _DEBATE_KEYS)
    if rec.get("schema", SCHEMA) != SCHEMA:
        raise f.bad("schema", f"{rec.get('schema')!r} is not {SCHEMA!r}")
    if "id" not in rec:
        raise f.bad("id", "missing (every debate needs an id)")
    debate_id = f.str_(rec["id"], "id")
    if "gold" not in rec:
        raise f.bad("gold", "missing (the correct option's letter)")
    gold = f.str_(rec["gold"], "gold")
    options = None
    if rec.get("options") is not None:
        options = tuple(f.str_(o, f"options[{k}]") for k, o in enumerate(f.list_(rec["options"], "options")))
    if rec.get("letters") is not None:
        letters = tuple(f.str_(x, f"letters[{k}]") for k, x in enumerate(f.list_(rec["letters"], "letters")))
    elif options is not None:
        if len(options) > len(LETTERS):
            raise f.bad("options", f"{len(options)} options; give 'letters' for more than {len(LETTERS)}")
        letters = tuple(LETTERS[: len(options)])
    else:
        raise f.bad("letters", 'missing (the option letters, e.g. ["A", "B", "C", "D"]; or give options)')
    if "agents" not in rec:
        raise f.bad("agents", "missing (one entry per agent with its role)")
    agents = []
    for i, a in enumerate(f.list_(rec["agents"], "agents")):
        name = f"agents[{i}]"
        f.obj(a, name, _AGENT_KEYS)
        role = a.get("role", "honest")
        onset = a.get("onset")
        if a.get("role") == "adversary" and "target" not in a:
            raise f.bad(
                f"{name}.target", "missing (an adversary's target letter; null if the source has none)"
            )
        agents.append(
            AgentInfo(
                agent=f.int_(a.get("agent", i), f"{name}.agent"),
                role=f.str_(role, f"{name}.role"),  # type: ignore[arg-type]  # checked below
                onset=None if onset is None else f.int_(onset, f"{name}.onset"),
                target=f.str_(a.get("target"), f"{name}.target", optional=True),
                model=f.str_(a.get("model"), f"{name}.model", optional=True),
            )
        )
    if "turns" not in rec:
        raise f.bad("turns", "missing (one entry per agent and round)")
    turns = []
    for k, t in enumerate(f.list_(rec["turns"], "turns")):
        name = f"turns[{k}]"
        f.obj(t, name, _TURN_KEYS)
        for key in ("round", "agent", "answer"):
            if key not in t:
                raise f.bad(f"{name}.{key}", "missing" + (" (null when unparsed)" if key == "answer" else ""))
        read = []
        for m, r in enumerate(f.list_(t.get("read", []), f"{name}.read")):
            pair = f.list_(r, f"{name}.read[{m}]")
            if len(pair) != 2:
                raise f.bad(f"{name}.read[{m}]", f"expected [agent, round], got {len(pair)} values")
            read.append((f.int_(pair[0], f"{name}.read[{m}]"), f.int_(pair[1], f"{name}.read[{m}]")))
        turns.append(
            Turn(
                round=f.int_(t["round"], f"{name}.round"),
                agent=f.int_(t["agent"], f"{name}.agent"),
                answer=f.str_(t["answer"], f"{name}.answer", optional=True),
                read=tuple(read),
                text=f.str_(t.get("text"), f"{name}.text", optional=True),
            )
        )
    n_agents = f.int_(rec.get("n_agents", len(agents)), "n_agents")
    n_rounds = f.int_(rec.get("n_rounds", max((t.round for t in turns), default=0)), "n_rounds")
    meta = rec.get("meta") or {}
    if not isinstance(meta, dict):
        raise f.bad("meta", f"expected a JSON object, got {_kind(meta)}")
    debate_obj = Debate(
        id=debate_id,
        gold=gold,
        letters=letters,
        n_agents=n_agents,
        n_rounds=n_rounds,
        agents=tuple(agents),
        turns=tuple(turns),
        source=f.str_(rec.get("source", ""), "source") or "",
        model=f.str_(rec.get("model"), "model", optional=True),
        question=f.str_(rec.get("question"), "question", optional=True),
        question_id=f.str_(rec.get("question_id"), "question_id", optional=True),
        options=options,
        meta=meta,
    )
    return check_debate(debate_obj, where)


def write_debates(path: str | Path, debates: Iterable[Debate]) -> int:
    """Write one line per debate (UTF-8, keys in schema order); returns how many were written."""
    n = 0
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="\n") as f:
        for d in debates:
            f.write(json.dumps(debate_to_dict(d), ensure_ascii=False) + "\n")
            n += 1
    return n


def json_lines(path: str | Path) -> Iterator[tuple[str, Any]]:
    """("file:line", parsed object) for every non-blank line; undecodable bytes and broken JSON
    fail with the one-line error (shared by every JSON Lines importer)."""
    path = Path(path)
    with path.open("rb") as f:
        for lineno, raw in enumerate(f, start=1):
            where = f"{path}:{lineno}"
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise fail(
                    where, None, "<line>", f"not UTF-8 text (byte {e.start}); is this a binary file?"
                ) from None
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise fail(where, None, "<json>", f"invalid JSON ({e.msg}: column {e.colno})") from None
            yield where, obj


def read_debates(path: str | Path) -> list[Debate]:
    """All debates of one native `tomacs.debate/1` file; a repeated debate id is an error, since a
    fitter would count the debate twice."""
    out: list[Debate] = []
    seen: dict[str, int] = {}
    for where, obj in json_lines(path):
        d = debate_from_dict(obj, where)
        if d.id in seen:
            raise fail(where, d.id, "id", f"repeated (first at line {seen[d.id]})")
        seen[d.id] = int(where.rsplit(":", 1)[1])
        out.append(d)
    return out
