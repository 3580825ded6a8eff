"""The published MAD-Follower outputs (github.com/Qi-Smile/MAD-Follower, folder outputs/).

Layout: `<run>/config.json` and `<run>/questions/<nnn>_<id>.json`, one debate per file; a path may
be the top folder (every run below it), one run folder or one question file.

Roles: `attacker` argues for `attacker_target` from round 1; `follower` answers on its own in
round 1 and backs the attacker from round 2 (an adversary with onset 2 and the attacker's target);
`normal` agents are honest. Agents are numbered in the order of the run's config.json.

Reads come from each turn's prompt: its "Conversation so far" lists `[Round k] <agent> ...` for
every agent, the agent itself included, and every earlier round, not only the last one (runs
before 2025-11-11 12:46 show answer letters only, later ones the full replies under anonymous
names `agent_<n>`, n = config order + 1). One early letters-only 5-round run
(20251111_122829) shows a window from round 4 on: the first message, "...", and the last 11. A
turn whose prompt is missing (a copy that dropped prompts) or is an error message (failed calls)
gets what the run's readable prompts show for the same round and agent, else the full history.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from tomacs.transcripts.formats import transcript_format
from tomacs.transcripts.schema import AgentInfo, Debate, TranscriptError, Turn, check_debate, fail

_ROUND_LINE = re.compile(r"^\[Round (\d+)\] ([A-Za-z0-9_\-]+)(?: \([^)]*\))?:", re.MULTILINE)
_ROLES = {"attacker": "adversary", "follower": "adversary", "normal": "honest"}


def _json(file: Path, what: str) -> Any:
    try:
        return json.loads(file.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as e:
        raise fail(str(file), None, "<file>", f"not UTF-8 text (byte {e.start}); is this a {what}?") from None
    except json.JSONDecodeError as e:
        raise fail(
            f"{file}:{e.lineno}", None, "<json>", f"invalid JSON ({e.msg}: column {e.colno})"
        ) from None


def _is_run(path: Path) -> bool:
    return (path / "config.json").is_file() and (path / "questions").is_dir()


def _looks_like_question(path: Path) -> bool:
    if path.suffix != ".json" or path.parent.name != "questions":
        return False
    if not (path.parent.parent / "config.json").is_file():
        return False
    try:
        head = path.open("rb").read(4096)
    except OSError:
        return False
    return b'"attacker_target"' in head or b'"turns"' in head


def is_mad_follower(path: Path) -> bool:
    if path.is_dir():
        return _is_run(path) or any(_is_run(p) for p in path.iterdir() if p.is_dir())
    return _looks_like_question(path)


class _Run:
    """One run folder's config: agent order, roles, models and the rounds count."""

    def __init__(self, run_dir: Path) -> None:
        self.dir = run_dir
        file = run_dir / "config.json"
        raw = _json(file, "MAD-Follower config.json")
        cfg = raw.get("config") if isinstance(raw, dict) else None
        if not isinstance(cfg, dict) or not isinstance(cfg.get("agents"), list):
            raise fail(
                str(file),
                None,
                "config.agents",
                "missing (a MAD-Follower run's config.json lists its agents)",
            )
        default_model = (cfg.get("llm") or {}).get("model")
        self.benchmark = benchmark_of((cfg.get("dataset") or {}).get("path"))
        self.rounds = (cfg.get("debate") or {}).get("rounds")
        self.ids: list[str] = []
        self.roles: list[str] = []
        self.models: list[str | None] = []
        for k, a in enumerate(cfg["agents"]):
            role = a.get("role") if isinstance(a, dict) else None
            if role not in _ROLES:
                raise fail(
                    str(file), None, f"config.agents[{k}].role", f"{role!r} is not one of {', '.join(_ROLES)}"
                )
            self.ids.append(str(a.get("agent_id")))
            self.roles.append(role)
            self.models.append(a.get("model") or default_model)
        # names in prompts: agent ids in early runs, anonymous agent_<n> (config order) later
        self.index = {name: k for k, name in enumerate(self.ids)}
        for k in range(len(self.ids)):
            self.index.setdefault(f"agent_{k + 1}", k)
        self._protocol: dict[tuple[int, int], tuple[tuple[int, int], ...]] | None = None
        if self.roles.count("attacker") != 1:
            raise fail(
                str(file), None, "config.agents", f"{self.roles.count('attacker')} attackers; expected one"
            )

    def protocol_reads(self, rnd: int, agent: int) -> tuple[tuple[int, int], ...]:
        """What the run's own readable prompts show this agent reading in this round, for a turn
        whose prompt is gone; the full history when no prompt of the run shows it."""
        if self._protocol is None:
            self._protocol = {}
            for f in sorted((self.dir / "questions").glob("*.json")):
                raw = _json(f, "MAD-Follower question file")
                for t in raw.get("turns") or [] if isinstance(raw, dict) else []:
                    if not isinstance(t, dict) or t.get("agent_id") not in self.index:
                        continue
                    r = t.get("round_index")
                    if not isinstance(r, int):
                        continue
                    try:
                        read = _reads(t.get("prompt"), self, r + 1, len(self.ids))
                    except TranscriptError:
                        continue  # that file's own import reports it
                    if read is not None:
                        self._protocol.setdefault((r + 1, self.index[t["agent_id"]]), read)
        return self._protocol.get((rnd, agent)) or _full_history(rnd, len(self.ids))

    def model(self) -> str | None:
        models = sorted({m for m in self.models if m})
        return models[0] if len(models) == 1 else None


_SPLIT_SUFFIX = re.compile(r"[_\-.](validation|valid|val|test|train|dev)$", re.IGNORECASE)


def benchmark_of(dataset_path: object) -> str | None:
    """The benchmark a run asked, from its config's `dataset.path` (a Windows or POSIX path):
    the file's stem without a split suffix, `data\\ethics_test.jsonl` -> `ethics`,
    `data\\commonsense_qa_validation.jsonl` -> `commonsense_qa`. None when the config has no path."""
    if not isinstance(dataset_path, str) or not dataset_path.strip():
        return None
    stem = re.split(r"[\\/]", dataset_path.strip())[-1]
    stem = re.sub(r"\.(jsonl|json|csv|parquet|tsv)$", "", stem, flags=re.IGNORECASE)
    return _SPLIT_SUFFIX.sub("", stem) or None


def _letters_and_options(q: Mapping[str, object], bad: Any) -> tuple[tuple[str, ...], tuple[str, ...] | None]:
    """Options come as [{label, text}, ...], or in the earliest runs as two entries holding the
    string forms of the label and text lists ({label: "label", text: "['A', ...]"})."""
    choices = q.get("choices")
    if not isinstance(choices, list) or not choices:
        raise bad("question.choices", "missing (the options)")
    labels = [c.get("label") for c in choices if isinstance(c, dict)]
    if labels == ["label", "text"]:
        try:
            letters = ast.literal_eval(choices[0]["text"])
            texts = ast.literal_eval(choices[1]["text"])
        except (ValueError, SyntaxError, KeyError):
            raise bad("question.choices", "label/text lists that are not Python lists") from None
        if len(letters) != len(texts):
            raise bad("question.choices", f"{len(letters)} labels for {len(texts)} texts")
        return tuple(str(x) for x in letters), tuple(str(x) for x in texts)
    texts = [c.get("text") for c in choices if isinstance(c, dict)]
    if any(not isinstance(x, str) for x in labels) or len(labels) != len(choices):
        raise bad("question.choices", "each choice needs a label")
    return tuple(labels), tuple(str(t) for t in texts)  # type: ignore[arg-type]


def _reads(prompt: Any, run: _Run, t: int, n: int) -> tuple[tuple[int, int], ...] | None:
    """(agent, round) pairs the prompt's conversation lists; None when there is no prompt to read."""
    if not isinstance(prompt, str) or prompt.startswith("ERROR:") or not prompt.strip():
        return None
    out = set()
    for m in _ROUND_LINE.finditer(prompt):
        k, name = int(m.group(1)), m.group(2)
        if name not in run.index:
            raise TranscriptError(f"unknown agent '{name}' in a round-{t} prompt")
        out.add((run.index[name], k))
    return tuple(sorted(out))


def _full_history(t: int, n: int) -> tuple[tuple[int, int], ...]:
    return tuple((j, s) for j in range(n) for s in range(1, t))  # sorted, as parsed reads are


def read_question_file(file: Path, run: _Run) -> Debate:
    raw = _json(file, "MAD-Follower question file")
    debate_id = f"{run.dir.name}/{file.stem}"
    where = str(file)

    def bad(field_name: str, problem: str) -> TranscriptError:
        return fail(where, debate_id, field_name, problem)

    if not isinstance(raw, dict):
        raise bad("<file>", "expected a JSON object")
    for key in ("question", "ground_truth", "attacker_target", "turns"):
        if key not in raw:
            raise bad(key, "missing")
    q = raw["question"]
    if not isinstance(q, dict):
        raise bad("question", "expected an object with text and choices")
    letters, options = _letters_and_options(q, bad)
    target = raw["attacker_target"]
    if target not in letters:  # one early debate has 'LABEL' (the source's own bug; it flags it excluded)
        target = None
    n = len(run.ids)
    agents = []
    for k, role in enumerate(run.roles):
        if role == "normal":
            agents.append(AgentInfo(agent=k, model=run.models[k]))
        else:
            onset = 1 if role == "attacker" else 2
            agents.append(
                AgentInfo(agent=k, role="adversary", onset=onset, target=target, model=run.models[k])
            )
    turns = []
    unreadable = 0
    n_rounds = run.rounds if isinstance(run.rounds, int) else 0
    for k, t in enumerate(raw["turns"] if isinstance(raw["turns"], list) else []):
        at = f"turns[{k}]"
        if not isinstance(t, dict):
            raise bad(at, "expected an object")
        r = t.get("round_index")
        if isinstance(r, bool) or not isinstance(r, int) or r < 0:
            raise bad(f"{at}.round_index", f"{r!r} is not a round index (0-based)")
        name = t.get("agent_id")
        if name not in run.index:
            raise bad(f"{at}.agent_id", f"{name!r} is not an agent of config.json ({', '.join(run.ids)})")
        i = run.index[name]
        if t.get("role") not in (None, run.roles[i]):
            raise bad(f"{at}.role", f"{t.get('role')!r}, but config.json makes {name} a {run.roles[i]}")
        rnd = r + 1
        n_rounds = max(n_rounds, rnd)
        try:
            read = _reads(t.get("prompt"), run, rnd, n)
        except TranscriptError as e:
            raise bad(f"{at}.prompt", str(e)) from None
        if read is None:
            read = run.protocol_reads(rnd, i)
            unreadable += 1
        answer = t.get("parsed_answer")
        turns.append(
            Turn(
                round=rnd,
                agent=i,
                answer=answer if isinstance(answer, str) and answer in letters else None,
                read=read,
                text=t.get("response_text") if isinstance(t.get("response_text"), str) else None,
            )
        )
    if not turns:
        raise bad("turns", "no turns")
    meta: dict[str, Any] = {"rounds": run.rounds, "attacker_compliant": raw.get("attacker_compliant")}
    if run.benchmark:
        meta["benchmark"] = run.benchmark  # config.dataset.path's file, split suffix dropped
    if raw.get("excluded"):
        meta["excluded"] = True  # the source's own flag: attacker or follower broke role
    if target is None:
        meta["attacker_target"] = raw["attacker_target"]
    if unreadable:
        meta["reads_from_protocol"] = unreadable  # turns whose prompt was missing or an error
    if isinstance(raw.get("consensus"), dict):
        meta["final_answer"] = raw["consensus"].get("final_answer")
    d = Debate(
        id=debate_id,
        gold=raw["ground_truth"],
        letters=letters,
        n_agents=n,
        n_rounds=n_rounds,
        agents=tuple(agents),
        turns=tuple(turns),
        source=f"mad-follower:{run.dir.name}",
        model=run.model(),
        question=q.get("text") if isinstance(q.get("text"), str) else None,
        options=options,
        question_id=str(raw.get("question_id") or q.get("id") or file.stem),
        meta=meta,
    )
    return check_debate(d, where)


def _read_run(run_dir: Path) -> list[Debate]:
    run = _Run(run_dir)
    return [read_question_file(f, run) for f in sorted((run_dir / "questions").glob("*.json"))]


@transcript_format(
    "mad-follower",
    detect=is_mad_follower,
    help="MAD-Follower outputs: the top folder, a run or a question file",
)
def read_mad_follower(path: Path) -> Iterable[Debate]:
    if path.is_file():
        if not _is_run(path.parent.parent):
            raise TranscriptError(
                f"{path}: not a question file of a MAD-Follower run (<run>/questions/<file>.json)"
            )
        return [read_question_file(path, _Run(path.parent.parent))]
    if _is_run(path):
        return _read_run(path)
    if (path / "config.json").is_file():
        # A run that stopped before its first question (the published outputs hold one): say so, so a
        # glob over runs is fixed by leaving it out, not by guessing what "no run here" means.
        raise TranscriptError(
            f"{path}: a MAD-Follower run with no questions/ folder (no debate recorded); leave it out"
        )
    runs = [p for p in sorted(path.iterdir()) if p.is_dir() and _is_run(p)]
    if not runs:
        raise TranscriptError(f"{path}: no MAD-Follower run here (a folder with config.json and questions/)")
    return [d for p in runs for d in _read_run(p)]
