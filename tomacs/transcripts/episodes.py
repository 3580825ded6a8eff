"""tomacs' own episodes.jsonl (any backbone, the sim's too) read as debates.

What an agent read is rebuilt from the executor's rules (tomacs/execution/executor.py), not from prompts:

- round 1: nothing (every agent answers alone);
- from round 2, an honest agent that makes a call reads its own previous output, the round-t
  output of each sender of a spatial edge (sender, receiver) of the round's graph, and the
  previous output of each sender of a temporal edge;
- an adversary from its onset on reads nothing (App. D's prompt is the question and its target only),
  except in a run with `attack.prompt=debate`, where it reads as an honest agent does;
- an agent that is not among the round's graph nodes makes no call: the executor carries its last
  output forward (`participated: false`), and that is no turn here. A later read of its
  "previous output" points to the round that produced it, so every read names a real turn;
- with `isolated=answer` a method's non-selected agents still answer alone: they are nodes with
  no edges, so they read their own previous output only; the round graph's `participants` (the
  selected agents) are kept in `meta.participants`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from tomacs.backbones.base import BACKBONES, BaseBackbone, backbone_kind
from tomacs.serialize import episode_from_dict
from tomacs.transcripts.formats import transcript_format
from tomacs.transcripts.jsonl import json_lines
from tomacs.transcripts.native import first_object
from tomacs.transcripts.schema import AgentInfo, Debate, TranscriptError, Turn, check_debate, fail
from tomacs.types import Episode

EPISODES = "episodes.jsonl"


def _is_episode(obj: object) -> bool:
    return isinstance(obj, dict) and {"question", "plan", "rounds"} <= set(obj)


def is_episodes(path: Path) -> bool:
    if path.is_dir():
        return (path / EPISODES).is_file() or next(path.rglob(EPISODES), None) is not None
    return _is_episode(first_object(path))


def run_model(run_dir: Path) -> str | None:
    """The model a run's agents ran on, from its config.yaml: `backbone.model`, or
    `sim:<profile>` for the simulator. Only these keys are read, so no secret can leak into a
    transcript; None when the run has no config.yaml."""
    cfg = _run_config(run_dir)
    if cfg is None:
        return None
    kind = backbone_kind(cfg.get("backbone") or {})
    return (BACKBONES.get(kind) if kind in BACKBONES else BaseBackbone).run_model(cfg)


def _run_config(run_dir: Path) -> dict[str, Any] | None:
    """A run's config.yaml as a plain mapping; None without one (or with no mapping in it)."""
    cfg_file = run_dir / "config.yaml"
    if not cfg_file.is_file():
        return None
    import yaml

    loaded = yaml.safe_load(cfg_file.read_text(encoding="utf-8"))
    return loaded if isinstance(loaded, dict) else None


def adversaries_read(run_dir: Path) -> bool:
    """Whether the run's adversaries read the others (`attack.prompt=debate` in its config.yaml)."""
    attack = (_run_config(run_dir) or {}).get("attack") or {}
    return str(attack.get("prompt") or "appd") == "debate"


def debate_from_episode(
    ep: Episode, id: str, source: str, model: str | None, where: str, adversary_reads: bool = False
) -> Debate:
    """One episode as a debate, reads rebuilt as the module docstring says."""
    q = ep.question
    if q.kind != "mc" or not q.options:
        raise fail(
            where, id, "question.kind", f"{q.kind!r}: only multiple-choice episodes have option letters"
        )
    n, rounds = ep.n_agents, len(ep.rounds)
    onsets = {int(k): int(v) for k, v in ep.plan.onsets.items()}
    agents = tuple(
        AgentInfo(agent=i, role="adversary", onset=onsets[i], target=ep.plan.target, model=model)
        if i in onsets
        else AgentInfo(agent=i, model=model)
        for i in range(n)
    )
    last = [0] * n  # the last round each agent made a call in, as of the round before this one
    turns: list[Turn] = []
    participants: dict[str, list[int]] = {}
    for t, outs in enumerate(ep.rounds, start=1):
        graph = ep.graphs[t - 1] if t - 1 < len(ep.graphs) else None
        if graph is not None and graph.participants is not None:
            participants[str(t)] = sorted(int(i) for i in graph.participants)
        for o in outs:
            if not o.participated:
                continue
            i = o.agent
            read: set[tuple[int, int]] = set()
            if t > 1 and (o.behaviour == "honest" or adversary_reads):
                if last[i]:
                    read.add((i, last[i]))
                if graph is not None:
                    read.update((int(s), t) for s, r in graph.edges if int(r) == i)
                    read.update((int(s), last[int(s)]) for s, r in graph.temporal_edges if int(r) == i)
            turns.append(Turn(round=t, agent=i, answer=o.answer, read=tuple(sorted(read)), text=o.text))
        for o in outs:
            if o.participated:
                last[o.agent] = t
    meta: dict[str, Any] = {"benchmark": q.benchmark, "final_answer": ep.final_answer, "correct": ep.correct}
    if participants:
        meta["participants"] = participants
    d = Debate(
        id=id,
        gold=q.answer,
        letters=q.labels,
        n_agents=n,
        n_rounds=rounds,
        agents=agents,
        turns=tuple(turns),
        source=source,
        model=model,
        question=q.text,
        options=tuple(q.options),
        question_id=q.id,
        meta=meta,
    )
    return check_debate(d, where)


def _episode_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    top = path / EPISODES
    return [top] if top.is_file() else sorted(path.rglob(EPISODES))


def _debates_of_file(file: Path, label: str) -> Iterator[Debate]:
    model = run_model(file.parent)
    reads = adversaries_read(file.parent)
    source = f"tomacs:{label}"
    for where, obj in json_lines(file):
        q = obj.get("question") if isinstance(obj, dict) else None
        qid = q.get("id") if isinstance(q, dict) and isinstance(q.get("id"), str) else None
        try:
            ep = episode_from_dict(obj)
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise fail(where, qid, "<episode>", f"not a tomacs episode ({type(e).__name__}: {e})") from None
        yield debate_from_episode(ep, f"{label}/{ep.question.id}", source, model, where, reads)


@transcript_format(
    "tomacs-episodes", detect=is_episodes, help="a run's episodes.jsonl, a run or a sweep directory"
)
def read_episodes(path: Path) -> Iterable[Debate]:
    """Debates of one episodes file, a run directory or a sweep (every episodes.jsonl below it).
    Ids are `<run>/<question id>` with <run> the run directory relative to the sweep (its name
    for a single run), so one question answered by several jobs stays several debates."""
    out: list[Debate] = []
    files = _episode_files(path)
    if not files:
        raise TranscriptError(f"{path}: no {EPISODES} in this directory or below it")
    for file in files:
        if path.is_dir() and file.parent != path:
            label = f"{path.resolve().name}/{file.parent.relative_to(path).as_posix()}"
        else:
            label = file.parent.resolve().name
        out.extend(_debates_of_file(file, label))
    return out
