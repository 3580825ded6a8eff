"""Read what a path holds into the page's groups: tomacs runs (a run or a sweep directory) or
transcripts (any path the transcript registry reads).

Why each run's episodes go through `debate_from_episode`: that is the importer `tomacs transcripts`
uses, so the page shows a run's debate exactly as a fitter reads it, and a real transcript through
the same records (tomacs.view.debates). Only what a transcript cannot hold (credits, the decision)
is taken from the episode itself.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tomacs.job.files import EPISODES, RESULTS, EpisodeLog
from tomacs.report.collect import Job
from tomacs.report.tables import natural_key
from tomacs.serialize import episode_from_dict
from tomacs.transcripts.episodes import adversaries_read, debate_from_episode, run_model
from tomacs.transcripts.formats import load_debates
from tomacs.transcripts.schema import Debate
from tomacs.types import Episode
from tomacs.view.debates import Decision, Extras, episode_record, final_decision, flags
from tomacs.view.runs import run_record, sweep_warnings
from tomacs.view.sampling import per_group, sample_indices


@dataclass(frozen=True)
class _ValuesAsOptions:
    """A numeric question seen as a choice among the values its agents gave: the transcript schema
    needs letters, and any distinct strings are letters to it, so GSM8K debates are shown too (the
    importer itself keeps to multiple choice, whose letters a fitter compares across sources)."""

    id: str
    text: str
    answer: str
    benchmark: str
    values: tuple[str, ...]
    kind: str = "mc"

    @property
    def options(self) -> tuple[str, ...]:
        return self.values

    @property
    def labels(self) -> tuple[str, ...]:
        return self.values


def _as_choices(ep: Episode) -> Episode:
    q = ep.question
    if q.kind == "mc" and q.options:
        return ep
    seen = {q.answer, *(o.answer for r in ep.rounds for o in r if o.answer is not None)}
    if ep.plan.target is not None:
        seen.add(ep.plan.target)
    if ep.final_answer is not None:
        seen.add(ep.final_answer)

    def key(v: str) -> tuple[int, float, str]:
        try:
            return (0, float(v), v)
        except ValueError:
            return (1, 0.0, v)

    values = tuple(sorted(seen, key=key))
    return replace(ep, question=_ValuesAsOptions(q.id, q.text, q.answer, q.benchmark, values))  # type: ignore[arg-type]


def extras_of(ep: Episode) -> Extras:
    """The per-round credits (rounds 2..T) and the decision of a tomacs episode."""
    credits = {
        t: tuple(g.credits)
        for t, g in enumerate(ep.graphs, start=1)
        if g is not None and g.credits is not None
    }
    dec = ep.decision
    decision = (
        None
        if dec is None
        else Decision(
            voters=tuple(dec.voters),
            weights=None if dec.weights is None else tuple(dec.weights),
            mode=str(dec.mode),
            credits=None if dec.credits is None else tuple(dec.credits),
        )
    )
    text = ep.decision_output.text if ep.decision_output is not None else None
    return Extras(credits=credits, decision=decision, decision_text=text)


def run_dirs(root: Path) -> list[Path]:
    """Every run directory at or below `root`: one with a results.json (finished) or an
    episodes.jsonl (still running, or killed)."""
    if (root / RESULTS).is_file() or (root / EPISODES).is_file():
        return [root]
    found = {p.parent for p in root.rglob(RESULTS)} | {p.parent for p in root.rglob(EPISODES)}
    return sorted(found, key=lambda p: natural_key(p.relative_to(root).as_posix()))


def is_runs(path: Path) -> bool:
    """Whether `path` is a tomacs run (finished or not) or a directory of runs (else: a transcript
    path; a tree of unfinished runs only is read as one, through the episodes importer)."""
    if not path.is_dir():
        return False
    top = (path / RESULTS).is_file() or (path / EPISODES).is_file()
    return top or next(path.rglob(RESULTS), None) is not None


def _job(run: Path) -> Job:
    try:
        res = json.loads((run / RESULTS).read_text())
    except (OSError, json.JSONDecodeError):
        res = {}
    return Job(run, res if isinstance(res, dict) else {})


def sampled_raw(run: Path, n: int, seed: int) -> tuple[list[tuple[int, dict[str, Any]]], int]:
    """The episodes of one run a page (or a W&B table) shows: (line index, raw episode dict) of the
    at most `n` chosen by question (tomacs.view.sampling), and how many the run has."""
    raw = EpisodeLog.of(run).load()  # a torn last line (a killed job) is dropped, not fatal
    keys = [str((r.get("question") or {}).get("id", i)) for i, r in enumerate(raw)]
    return [(i, raw[i]) for i in sample_indices(keys, n, seed)], len(raw)


def episode_records(
    run: Path, label: str, picked: list[tuple[int, dict[str, Any]]]
) -> list[dict[str, object]]:
    """Page records (tomacs.view.debates.episode_record) of raw episodes of one run, through the
    transcript importer. Ids are the importer's: `<label>/<question id>`."""
    model, reads = run_model(run), adversaries_read(run)
    out = []
    for i, rec in picked:
        ep = episode_from_dict(rec)
        d = debate_from_episode(
            _as_choices(ep),
            f"{label}/{ep.question.id}",
            f"tomacs:{label}",
            model,
            f"{run / EPISODES}:{i + 1}",
            reads,
        )
        out.append(episode_record(d, extras_of(ep)))
    return out


def run_episodes(run: Path, label: str, n: int, seed: int) -> tuple[list[dict[str, Any]], int]:
    """The sampled episodes of one run as page records, and how many the run has."""
    picked, total = sampled_raw(run, n, seed)
    return episode_records(run, label, picked), total


def run_groups(root: Path, n: int, seed: int) -> tuple[list[dict[str, Any]], list[str]]:
    """One group per run directory under `root`, and the sweep's warnings."""
    runs = run_dirs(root)
    jobs = [_job(r) for r in runs]
    groups = []
    for job in jobs:
        if job.path == root:
            label = root.resolve().name
        else:
            label = f"{root.resolve().name}/{job.path.relative_to(root).as_posix()}"
        rec = run_record(job, root) if job.results else _unfinished(job, root)
        eps, total = run_episodes(job.path, label, n, seed)
        groups.append({"kind": "run", **rec, "episodes": eps, "episodes_total": total})
    finished = [j for j in jobs if j.results.get("metrics") and "method" in j.results]
    return groups, sweep_warnings(finished)


def _unfinished(job: Job, root: Path) -> dict[str, object]:
    rel = job.path.relative_to(root).as_posix() if job.path != root else "."
    return {
        "path": rel,
        "label": job.path.resolve().name if rel == "." else rel,
        "finished": False,
        "settings": [],
        "metrics": [],
        "curves": {},
        "cost": [],
    }


def transcript_groups(
    path: Path, max_episodes: int, max_total: int | None, seed: int
) -> tuple[list[dict[str, Any]], int]:
    """One group per transcript source (a run folder, a results file's folder), each sampled, and
    the number sampled per source."""
    by_source: dict[str, list[Debate]] = defaultdict(list)
    for d in load_debates([path]):
        by_source[d.source or path.name].append(d)
    n = per_group(len(by_source), max_episodes, max_total)
    groups = []
    for source, debates in sorted(by_source.items()):
        finals = [final_decision(d) for d in debates]
        fl = [flags(d, f) for d, f in zip(debates, finals, strict=True)]
        models = sorted({d.model or "?" for d in debates})
        shown = sample_indices([d.id for d in debates], n, seed)
        total = len(debates)
        groups.append(
            {
                "kind": "transcripts",
                "path": source,
                "label": source,
                "finished": True,
                "settings": [
                    ("source", source),
                    ("model", ", ".join(models)),
                    ("agents N", ", ".join(sorted({str(d.n_agents) for d in debates}))),
                    ("rounds T", ", ".join(sorted({str(d.n_rounds) for d in debates}))),
                    (
                        "debates with an adversary",
                        str(sum(1 for d in debates if any(a.role == "adversary" for a in d.agents))),
                    ),
                ],
                # over every debate of the source, not only the sampled ones
                "summary": [
                    ("final answer right %", _pct(sum(1 for x in fl if not x["wrong"]), total)),
                    ("adversary wins %", _pct(sum(1 for x in fl if x["adversary_win"]), total)),
                    ("debates with a flip to the target %", _pct(sum(1 for x in fl if x["flips"]), total)),
                ],
                "metrics": [],
                "curves": {},
                "cost": [],
                "episodes": [episode_record(debates[i]) for i in shown],
                "episodes_total": total,
            }
        )
    return groups, n


def _pct(k: int, n: int) -> str:
    return f"{100.0 * k / n:.1f} ({k} of {n})" if n else "—"
