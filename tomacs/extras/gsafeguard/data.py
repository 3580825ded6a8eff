"""Labelled conversations for a supervised adversary detector (G-Safeguard), made by the executor.

G-Safeguard's public code never released its training conversations; its gen_graph.py scripts make
them with an LLM: for every edge density in {0.2, ..., 1.0} and 1-4 attackers, random directed
graphs over 8 agents, attackers with a wrong target and a persuasive prompt, one initial turn and 3
re-generation turns in which each agent reads its in-neighbours' previous answers, 40 samples per
setting; the labels are the attackers' indices. Here the same recipe runs through tomacs' one
executor on the run's backbone (the simulator by default, any LLM backbone alike), so generating
the data is a command, not a download:

* a turn-2..T graph is the random graph's pairs as *temporal* edges (the receiver reads the
  sender's previous-turn output, exactly the public code's re-generation turns; cycles allowed);
* attackers, their shared wrong target and the persuasive behaviour are the run's adversary
  schedule with `count` attackers, from turn 1 (`regime=static`, the public code) or from the
  run's onset rounds (`regime=dynamic`, tomacs' adversaries that turn at round 3 or 4);
* labels = `AdversaryPlan.labels` (adversarial iff its onset <= T), written with every record.

Labels flow only from here into `tomacs.extras.gsafeguard.trainer`'s loss: the method itself never reads an
adversary plan (it does not declare `needs_oracle`), and at evaluation it gets none.

The file is JSON Lines: a header `{"meta": ...}` (the generation settings, checked on reuse) and
one record per conversation, appended batch by batch, so a killed generation resumes where it
stopped (records are keyed by id and drawn up front from the seed, so a resumed file equals an
uninterrupted one). An flock on `<file>.lock` lets parallel jobs share one file.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np

from tomacs.agents.adversary import AdversarySchedule
from tomacs.agents.roles import assign_roles
from tomacs.backbones.base import Backbone
from tomacs.config import ConfigError
from tomacs.execution.executor import Executor, ExecutorConfig
from tomacs.graphs import Edge
from tomacs.job.files import EpisodeLog
from tomacs.job.progress import Progress, Task
from tomacs.methods.base import BatchState, History, Method, MethodContext
from tomacs.methods.registry import method_settings
from tomacs.runspec.spec import RunSpec
from tomacs.seeding import stable_seed
from tomacs.types import DecisionGraph, Question, RoundGraph

__all__ = ["DataSpec", "default_path", "ensure", "random_digraph", "read"]

FORMAT = 1


@dataclass(frozen=True)
class DataSpec:
    """What a conversation file is made of; two files with equal specs hold equal conversations."""

    benchmark: str
    backbone: str
    seed: int
    agents: int
    rounds: int
    densities: tuple[float, ...]
    counts: tuple[int, ...]
    samples: int
    regime: str
    onsets: tuple[int, ...]
    suffix: bool
    questions: tuple[str, ...]  # the pool's question ids (the run's training split)

    @classmethod
    def of(cls, run: RunSpec, backbone: str, questions: list[Question]) -> DataSpec:
        m: Any = method_settings(run)  # GSafeguardSettings
        regime = m.regime
        onsets = (1,) if regime == "static" else tuple(int(r) for r in run.attack.onset_rounds)
        rounds = int(m.data_rounds)
        if any(not 1 <= r <= rounds for r in onsets):
            raise ConfigError(
                f"method.regime=dynamic draws onsets from attack.onset_rounds={list(onsets)}, which must "
                f"lie in 1..method.data_rounds={rounds}"
            )
        if not questions:
            raise ConfigError("gsafeguard's conversations need training questions: set train.size >= 1")
        return cls(
            benchmark=str(run.benchmark.name),
            backbone=backbone,
            seed=run.seed,
            agents=int(m.data_agents),
            rounds=rounds,
            densities=tuple(float(d) for d in m.densities),
            counts=tuple(int(c) for c in m.counts),
            samples=int(m.samples),
            regime=regime,
            onsets=onsets,
            suffix=bool(run.attack.suffix),
            questions=tuple(q.id for q in questions),
        )

    def meta(self) -> dict[str, object]:
        return json.loads(json.dumps(asdict(self)))

    @property
    def total(self) -> int:
        return len(self.densities) * len(self.counts) * self.samples


def default_path(spec: DataSpec) -> Path:
    """Where `tomacs gsafeguard-data` writes without method.data: named by what makes it differ."""
    backbone = spec.backbone.replace(":", "-").replace("/", "-")
    return Path("outputs") / "gsafeguard" / f"{spec.benchmark}_{backbone}_s{spec.seed}_{spec.regime}.jsonl"


@dataclass(frozen=True)
class Draw:
    """One conversation to make: drawn up front from the seed, so resuming redraws it identically."""

    id: str
    count: int
    density: float
    question: int  # index into the question pool
    phase: str  # distinct questions within one phase (the executor keys its draws by phase + id)
    pairs: tuple[Edge, ...]


def random_digraph(n: int, density: float, rng: np.random.Generator) -> list[Edge]:
    """The public code's graphs: each ordered pair (i != j) an edge with probability `density`."""
    adj = rng.random((n, n)) <= density
    return [(i, j) for i in range(n) for j in range(n) if i != j and adj[i, j]]


def draws(spec: DataSpec) -> list[Draw]:
    out = []
    nq = len(spec.questions)
    for count in spec.counts:
        for density in spec.densities:
            rng = np.random.default_rng(
                stable_seed(spec.seed, "gsafeguard-data", spec.regime, count, density)
            )
            passes = -(-spec.samples // nq)
            order = np.concatenate([rng.permutation(nq) for _ in range(passes)])
            for i in range(spec.samples):
                pairs = tuple(random_digraph(spec.agents, density, rng))
                phase = f"gsafeguard-data/{spec.regime}/k{count}/d{density:g}/p{i // nq}"
                out.append(Draw(f"k{count}-d{density:g}-{i}", count, density, int(order[i]), phase, pairs))
    return out


class UtteranceGraphs(Method):
    """Every round 2..T, each agent reads its in-neighbours' previous-turn answers along the
    conversation's random graph (temporal edges); everyone votes (the decision is not used)."""

    name = "gsafeguard-data"

    def __init__(self, ctx: MethodContext) -> None:
        super().__init__(ctx)
        self.graphs: dict[str, tuple[Edge, ...]] = {}

    def act(self, state: BatchState, t: int, history: History) -> list[RoundGraph]:
        nodes = list(range(self.ctx.n_agents))
        questions = cast("list[Question]", state["questions"])  # Method.begin's record
        return [
            RoundGraph(nodes=list(nodes), edges=[], temporal_edges=list(self.graphs[q.id])) for q in questions
        ]

    def decide(self, state: BatchState, history: History) -> list[DecisionGraph]:
        return [DecisionGraph(voters=list(range(self.ctx.n_agents)), mode="vote") for _ in history]


def read(path: Path) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """(meta, records) of a file; a torn last line (a killed writer) is ignored."""
    meta, items = None, []
    with path.open() as f:
        for line in f:
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                break
            if "meta" in rec:
                meta = rec["meta"]
            else:
                items.append(rec)
    return meta, items


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One writer per file; another job wanting the same file waits, then reads what it wrote."""
    fd = os.open(str(path) + ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _mismatch(path: Path, have: dict[str, Any], want: dict[str, Any]) -> str:
    diff = sorted(k for k in set(have) | set(want) if have.get(k) != want.get(k))
    shown = ", ".join(f"{k}: file {have.get(k)!r} vs run {want.get(k)!r}" for k in diff if k != "questions")
    if "questions" in diff:
        shown = (shown + ", " if shown else "") + "the question pool (benchmark, train.size or seed) differs"
    return (
        f"{path} holds conversations generated with other settings ({shown}); delete it, or set "
        "method.data to another file"
    )


def _record(d: Draw, q: Question, ep: Any, n: int, rounds: int) -> dict[str, object]:
    return {
        "id": d.id,
        "count": d.count,
        "density": d.density,
        "question": q.id,
        "pairs": [list(p) for p in d.pairs],
        "plan": ep.plan.to_dict(),
        "labels": ep.plan.labels(n, rounds),
        "texts": [[o.text for o in r] for r in ep.rounds],
        "answers": [[o.answer for o in r] for r in ep.rounds],
        "behaviour": [[o.behaviour for o in r] for r in ep.rounds],
    }


def ensure(
    spec: DataSpec,
    path: Path,
    questions: list[Question],
    backbone: Backbone,
    roles_key: str,
    batch_size: int = 32,
    progress: Progress | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The spec's conversations, in draw order: read from `path`, generating (or finishing) what is
    missing. Returns (records, stats: generated, calls, wall seconds)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    want = spec.meta()
    calls = [0]
    with _locked(path):
        if path.exists():
            EpisodeLog(path).repair()
            meta, items = read(path)
        else:
            meta, items = None, []
        if meta is None and items:
            raise ConfigError(f"{path} has no header line; it is not a gsafeguard conversation file")
        if meta is not None and meta != want:
            raise ConfigError(_mismatch(path, meta, want))
        if meta is None:
            path.write_text(json.dumps({"meta": want, "format": FORMAT}) + "\n")
        done = {r["id"]: r for r in items}
        todo = [d for d in draws(spec) if d.id not in done]
        if todo:
            _generate(spec, todo, path, questions, backbone, roles_key, batch_size, progress, calls)
            done = {r["id"]: r for r in read(path)[1]}
    records = [done[d.id] for d in draws(spec)]
    stats = {"generated": len(todo), "calls": calls[0], "wall_s": round(time.perf_counter() - t0, 3)}
    return records, stats


def _generate(
    spec: DataSpec,
    todo: list[Draw],
    path: Path,
    questions: list[Question],
    backbone: Backbone,
    roles_key: str,
    batch_size: int,
    progress: Progress | None,
    calls: list[int],
) -> None:
    roles = assign_roles(roles_key, spec.agents)
    ctx = MethodContext(
        n_agents=spec.agents, rounds=spec.rounds, roles=roles, seed=spec.seed, decision="vote"
    )
    method = UtteranceGraphs(ctx)
    executors: dict[int, Executor] = {}

    groups: dict[tuple[int, str], list[Draw]] = {}
    for d in todo:
        groups.setdefault((d.count, d.phase), []).append(d)
    with _task(progress, "gsafeguard conversations", len(todo)) as task:

        def count_call(k: int) -> None:
            calls[0] += k
            if task is not None:
                task(k)

        for (count, phase), group in groups.items():
            if count not in executors:
                schedule = AdversarySchedule(
                    n_agents=spec.agents,
                    rounds=spec.rounds,
                    count=count,
                    onset_rounds=spec.onsets,
                    name=f"gsafeguard-data-k{count}",
                    suffix=spec.suffix,
                )
                cfg = ExecutorConfig(spec.agents, spec.rounds, roles, spec.seed)
                executors[count] = Executor(cfg, backbone, schedule)
            for i in range(0, len(group), batch_size):
                chunk = group[i : i + batch_size]
                qs = [questions[d.question] for d in chunk]
                method.graphs = {q.id: d.pairs for q, d in zip(qs, chunk, strict=True)}
                eps, _ = executors[count].run_batch(qs, method, train=False, phase=phase, on_call=count_call)
                with path.open("a") as f:
                    for d, q, ep in zip(chunk, qs, eps, strict=True):
                        f.write(json.dumps(_record(d, q, ep, spec.agents, spec.rounds)) + "\n")
                    f.flush()
                    os.fsync(f.fileno())
                if task is not None:
                    task.step(len(chunk))


@contextmanager
def _task(progress: Progress | None, title: str, total: int) -> Iterator[Task | None]:
    if progress is None:
        yield None
        return
    with progress.task(title, total=total, unit="conversations") as t:
        yield t
