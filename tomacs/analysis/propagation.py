"""Counterfactual propagation of one agent's output to the final answer: CAPE and TCTE.

The eib-learner paper (shared/papers/eib-learner.txt, §3.1) measures how strongly a topology
carries one agent's error (or insight) to the system's final answer by intervening on that agent
alone. We implement its two definitions exactly, per query:

    Eq. (5)  CAPE_i(G, Q) = I[ y_Q^cf(G, do(O_i := Ô_i)) != y_Q^orig(G) ]

    Eq. (6)  TCTE(G, Q)   = 1/N · Σ_{v_i ∈ V} 1/sqrt(d_i) · CAPE_i(G, Q),   d_i = the degree of v_i in G

where y_Q^orig ∈ {0, 1} is the correctness of the unforced run's final answer, y_Q^cf that of the run
in which only agent i's output is forced to Ô_i, and N the number of agents. Ô_i is O_error (mode
`wrong`, §3.2.1) or O_correct (mode `right`, §3.2.2). Reported numbers are means over questions:

    CAPE_i^m      = mean_Q CAPE_i(G, Q)                       (the flip rate of agent i under mode m)
    CAPE_i^m/√d   = mean_Q CAPE_i(G, Q) / sqrt(d_i(Q))        (agent i's degree-normalised term of Eq. 6)
    TCTE^m        = mean_Q TCTE(G, Q)

each over two question sets: `all` questions, and the paper's set (`paper`): the originally correct
questions for `wrong` (§3.2.1 "we focus on the 500 originally correct questions") and the originally
incorrect ones for `right` (§3.2.2).

Choices the paper leaves open (also in docs/deviations.md):
- y^orig and y^cf come from runs on the same questions, batches, seeds and adversary plans, so on the
  simulator every other agent draws with the same random numbers (common random numbers) and a flip
  is caused by the intervention, not by resampling.
- The paper changes the agent's system prompt; we force its output (no backbone call), which is the
  do(O_i := Ô_i) of Eq. 5 literally and works the same on every backbone. Ô_i is a plausible
  honest-style analysis (the simulator's text generator) ending in `Answer: X`, not flagged as
  persuasive. X is the gold answer (`right`) or the episode's adversarial target answer (`wrong`;
  with no adversaries, a wrong candidate drawn from the seed and the question id).
- The intervention holds from round `from_round` on (default 1: every round), including rounds in
  which the agent does not take part (its carried-forward output is the forced one).
- d_i is the number of distinct neighbours (in + out) of agent i in the communication graph of the
  unforced run, averaged over the communication rounds max(2, from_round)..T (round 1 has no edges;
  a dynamic method may have a different graph per round and question), floored at 1 so that an
  agent without neighbours, whose output still reaches the decision, is not divided by zero. The
  out-degree variant (`--degree out`) uses distinct receivers instead; both are in the JSON.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from rich.table import Table

from tomacs.benchmarks.base import wrong_answers
from tomacs.benchmarks.parsing import parse_answer
from tomacs.execution.batches import walk
from tomacs.execution.executor import Executor, ForceFn
from tomacs.job.progress import Progress
from tomacs.methods.base import Method
from tomacs.runspec.spec import RunSpec
from tomacs.seeding import stable_seed
from tomacs.sim.text import honest_analysis
from tomacs.types import AdversaryPlan, Episode, Question, RoundGraph

MODES = ("wrong", "right")
DEGREES = ("total", "out")
PHASE = "eval"  # the evaluation phase: same plans and backbone draws as `tomacs evaluate`


# ----------------------------------------------------------------------------------------------
def wrong_target(q: Question, plan: AdversaryPlan, seed: int) -> str:
    """O_error's answer: the adversaries' shared target when the episode has one, so an error and
    an attack point the same way; otherwise a wrong candidate fixed by (seed, question)."""
    if plan.target is not None and str(plan.target) != str(q.answer):
        return str(plan.target)
    wrong = [str(w) for w in wrong_answers(q) if str(w) != str(q.answer)]
    if not wrong:
        raise ValueError(f"question {q.id!r} has no wrong answer to force")
    rng = np.random.default_rng(stable_seed(seed, "cape-wrong", q.id))
    return wrong[int(rng.integers(len(wrong)))]


def forced_text(q: Question, role: str, answer: str, rng: np.random.Generator) -> str:
    """A reply a neighbour (or a real LLM) reads as an ordinary analysis; the answer line is
    guaranteed to parse back to `answer`, otherwise the intervention would not be the one asked."""
    text = honest_analysis(q, role, answer, rng)
    if parse_answer(q, text) != answer:
        text = f"{text.rstrip()}\nAnswer: {answer}"
    if parse_answer(q, text) != answer:
        raise ValueError(f"question {q.id!r}: forced answer {answer!r} does not parse back")
    return text


def make_force(executor: Executor, agent: int, mode: str, from_round: int) -> ForceFn:
    """The executor hook for do(O_agent := Ô) from `from_round` on."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; valid: {', '.join(MODES)}")
    seed, role = executor.cfg.seed, executor.cfg.roles[agent]

    def fn(q: Question, t: int) -> str | None:
        if t < from_round:
            return None
        answer = str(q.answer) if mode == "right" else wrong_target(q, executor.plan_for(q, PHASE), seed)
        rng = np.random.default_rng(stable_seed(seed, "cape-text", mode, q.id, agent, t))
        return forced_text(q, role, answer, rng)

    return fn


# ----------------------------------------------------------------------------------------------
def graph_degrees(graph: RoundGraph, n: int) -> tuple[list[int], list[int]]:
    """(distinct neighbours, distinct receivers) of every agent in one round's graph.

    Temporal edges count too: a forced output travels along them one round later, and without
    them a debate topology (temporal edges only) would have degree 0 everywhere."""
    nbrs: list[set[int]] = [set() for _ in range(n)]
    outs: list[set[int]] = [set() for _ in range(n)]
    for s, r in [*graph.edges, *graph.temporal_edges]:
        if s == r:
            continue
        nbrs[s].add(r)
        nbrs[r].add(s)
        outs[s].add(r)
    return [len(x) for x in nbrs], [len(x) for x in outs]


def episode_degrees(ep: Episode, n: int, from_round: int) -> tuple[list[float], list[float]]:
    """Mean (total, out) degree per agent over the rounds in which the forced output can travel."""
    tot, out = np.zeros(n), np.zeros(n)
    k = 0
    for t in range(max(2, from_round), len(ep.graphs) + 1):
        g = ep.graphs[t - 1]
        if g is None:
            continue
        a, b = graph_degrees(g, n)
        tot += a
        out += b
        k += 1
    if k:
        tot, out = tot / k, out / k
    return [float(x) for x in tot], [float(x) for x in out]


def _inv_sqrt(d: float) -> float:
    return 1.0 / math.sqrt(max(d, 1.0))


def _mean(xs: Sequence[float]) -> float | None:
    return float(np.mean(xs)) if len(xs) else None


# ----------------------------------------------------------------------------------------------
def run_episodes(
    executor: Executor,
    method: Method,
    questions: Sequence[Question],
    batch_size: int,
    force: dict[int, ForceFn] | None = None,
    on_call: Callable[[int], None] | None = None,
) -> list[Episode]:
    """One full pass in the evaluation phase; a learned credibility stream is restored first, so
    every pass starts from the same state and only the intervention differs between passes."""
    crs = executor.crs
    saved = crs.state.to_dict() if crs is not None else None
    method.train_mode(False)
    eps = walk(
        executor, method, questions, batch_size, train=False, phase=PHASE, on_call=on_call, force=force
    )
    if crs is not None and saved is not None:
        crs.state.load(saved)
    return eps


def _agent_row(
    i: int,
    role: str,
    modes: Sequence[str],
    y_orig: list[bool],
    degs: list[tuple[list[float], list[float]]],
    cf: dict[str, list[list[bool]]],
    calls: dict[str, list[int]],
) -> dict[str, object]:
    """Agent i's CAPE (Eq. 5) per mode, over all questions and the paper's set, plain and divided
    by the square root of its degree (its term of Eq. 6), with the flips behind them."""
    row: dict[str, Any] = {
        "agent": i,
        "role": role,
        "degree": _mean([d[0][i] for d in degs]),
        "out_degree": _mean([d[1][i] for d in degs]),
    }
    everyone = list(range(len(y_orig)))
    for m in modes:
        cape = [int(cf[m][i][k] != y_orig[k]) for k in everyone]
        paper = [k for k in everyone if y_orig[k] == (m == "wrong")]
        stats: dict[str, Any] = {
            "llm_calls": calls[m][i],
            "acc_cf": _mean([float(x) for x in cf[m][i]]),
            "flips_to_wrong": sum(1 for k in everyone if y_orig[k] and not cf[m][i][k]),
            "flips_to_right": sum(1 for k in everyone if not y_orig[k] and cf[m][i][k]),
            "n_paper": len(paper),
        }
        for name, ks in (("all", everyone), ("paper", paper)):
            stats[f"cape_{name}"] = _mean([cape[k] for k in ks])
            stats[f"cape_norm_{name}"] = _mean([cape[k] * _inv_sqrt(degs[k][0][i]) for k in ks])
            stats[f"cape_norm_out_{name}"] = _mean([cape[k] * _inv_sqrt(degs[k][1][i]) for k in ks])
        row[m] = stats
    return row


def _tcte(
    mode: str,
    y_orig: list[bool],
    degs: list[tuple[list[float], list[float]]],
    cf: list[list[bool]],
    n: int,
) -> dict[str, object]:
    """TCTE (Eq. 6) of one mode, by in+out degree and by out-degree, over all questions and the
    paper's set; `cf[i][k]` is question k's correctness with agent i forced."""
    everyone = list(range(len(y_orig)))
    paper = [k for k in everyone if y_orig[k] == (mode == "wrong")]
    entry: dict[str, Any] = {"n_all": len(everyone), "n_paper": len(paper)}
    for name, ks in (("all", everyone), ("paper", paper)):
        for dname, di in (("", 0), ("out_", 1)):
            per_q = [
                sum(int(cf[i][k] != y_orig[k]) * _inv_sqrt(degs[k][di][i]) for i in range(n)) / n for k in ks
            ]
            entry[f"{dname}{name}"] = _mean(per_q)
    return entry


def measure_propagation(
    executor: Executor,
    method: Method,
    questions: Sequence[Question],
    *,
    modes: Sequence[str] = MODES,
    from_round: int = 1,
    batch_size: int = 32,
    progress: Progress | None = None,
) -> dict[str, object]:
    """CAPE (Eq. 5) per agent and mode, its degree-normalised terms and TCTE (Eq. 6); see module doc."""
    n, rounds = executor.cfg.n_agents, executor.cfg.rounds
    if not 1 <= from_round <= rounds:
        raise ValueError(f"from_round must lie in 1..rounds={rounds} (got {from_round})")
    for m in modes:
        if m not in MODES:
            raise ValueError(f"unknown mode {m!r}; valid: {', '.join(MODES)}")
    qs = list(questions)
    per_run = len(qs) * (n * rounds + 1)
    runs = 1 + n * len(modes)
    with (progress or Progress(enabled=False)).task("propagation", total=runs * per_run) as advance:

        def one(force: dict[int, ForceFn] | None) -> tuple[list[Episode], int]:
            calls = [0]

            def count(k: int) -> None:
                calls[0] += k
                advance(k)

            eps = run_episodes(executor, method, qs, batch_size, force, count)
            advance(max(0, per_run - calls[0]))  # forced agents make no call: close the run's share
            return eps, calls[0]

        base, base_calls = one(None)
        y_orig = [bool(e.correct) for e in base]
        degs = [episode_degrees(e, n, from_round) for e in base]
        cf: dict[str, list[list[bool]]] = {}
        calls: dict[str, list[int]] = {}
        for m in modes:
            cf[m], calls[m] = [], []
            for i in range(n):
                eps, c = one({i: make_force(executor, i, m, from_round)})
                if [e.question.id for e in eps] != [q.id for q in qs]:
                    raise RuntimeError("forced run returned questions in another order")
                cf[m].append([bool(e.correct) for e in eps])
                calls[m].append(c)

    roles = executor.cfg.roles
    agents = [_agent_row(i, roles[i], modes, y_orig, degs, cf, calls) for i in range(n)]
    tcte = {m: _tcte(m, y_orig, degs, cf[m], n) for m in modes}

    return {
        "from_round": from_round,
        "modes": list(modes),
        "n_questions": len(qs),
        "baseline": {
            "acc": _mean([float(y) for y in y_orig]),
            "correct": int(sum(y_orig)),
            "llm_calls": base_calls,
        },
        "agents": agents,
        "tcte": tcte,
        "questions": [
            {
                "id": q.id,
                "orig_correct": y_orig[k],
                "orig_answer": base[k].final_answer,
                "degree": degs[k][0],
                "out_degree": degs[k][1],
                "cf_correct": {m: [cf[m][i][k] for i in range(n)] for m in modes},
            }
            for k, q in enumerate(qs)
        ],
    }


# ----------------------------------------------------------------------------------------------
def run_propagation(
    spec: RunSpec,
    *,
    from_round: int = 1,
    modes: Sequence[str] = MODES,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Build the components of a run spec (as `tomacs evaluate` does; its checkpoint, if any, is
    loaded) and measure them."""
    from tomacs.job.checkpoint import load_checkpoint
    from tomacs.job.components import backbone_label, build
    from tomacs.job.files import git_rev

    t0 = time.perf_counter()
    comps = build(spec, need_train=False)
    ckpt = Path(spec.checkpoint) if spec.checkpoint else None
    if ckpt is not None:
        load_checkpoint(comps.method, ckpt)
    res = measure_propagation(
        comps.executor,
        comps.method,
        comps.test_qs,
        modes=modes,
        from_round=from_round,
        batch_size=spec.eval.batch_size,
        progress=progress,
    )
    return {
        "analysis": "propagation",
        "backbone": backbone_label(spec, comps.backbone),
        "benchmark": comps.bench.name,
        "method": comps.method.name,
        "attack": str(spec.attack.name),
        "n_agents": comps.ctx.n_agents,
        "rounds": comps.ctx.rounds,
        "seed": spec.seed,
        "decision": comps.ctx.decision,
        "checkpoint": None if ckpt is None else str(ckpt),
        "untrained": bool(comps.method.trainable and ckpt is None),
        "definitions": {
            "cape": "Eq. 5: CAPE_i(G,Q) = I[y_cf(G, do(O_i := O_hat_i)) != y_orig(G)], mean over questions",
            "tcte": "Eq. 6: TCTE(G,Q) = 1/N sum_i CAPE_i(G,Q) / sqrt(d_i), mean over questions",
            "degree": "d_i: distinct neighbours (in+out) in the unforced run's graphs, mean over rounds "
            "max(2, from_round)..T, floored at 1; *_out_* use distinct receivers",
            "paper_subset": "wrong: originally correct questions (3.2.1); right: originally wrong (3.2.2)",
        },
        **res,
        "git_rev": git_rev(),
        "wall_s": round(time.perf_counter() - t0, 3),
        "config": spec.as_dict(),
    }


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def propagation_table(results: dict[str, Any], degree: str = "total") -> Table:
    """Agents x metrics; the paper's question sets, plus CAPE over all questions for context."""
    if degree not in DEGREES:
        raise ValueError(f"unknown degree {degree!r}; valid: {', '.join(DEGREES)}")
    d = "" if degree == "total" else "out_"
    sets = ", ".join(
        f"{m}: originally {'correct' if m == 'wrong' else 'wrong'} (n={results['tcte'][m]['n_paper']})"
        for m in results["modes"]
    )
    t = Table(
        title=(
            f"CAPE/TCTE: {results.get('method', '?')} on {results.get('benchmark', '?')} | "
            f"backbone={results.get('backbone', '?')} | "
            f"{results['n_questions']} questions, baseline acc {_fmt(results['baseline']['acc'])} | "
            f"forced from round {results['from_round']}"
        ),
        caption=f"all = every question; ppr = the paper's set ({sets}); ÷√d = CAPE_i/sqrt(d_i) (Eq. 6)",
    )
    t.add_column("agent")
    t.add_column("role", max_width=12, overflow="ellipsis", no_wrap=True)
    t.add_column("deg" if degree == "total" else "out\ndeg", justify="right")
    for m in results["modes"]:
        t.add_column(f"{m}\nCAPE all", justify="right")
        t.add_column(f"{m}\nCAPE ppr", justify="right")
        t.add_column(f"{m}\n÷√d ppr", justify="right")
    for row in results["agents"]:
        cells = [str(row["agent"]), row["role"], _fmt(row["degree" if degree == "total" else "out_degree"])]
        for m in results["modes"]:
            s = row[m]
            cells += [_fmt(s["cape_all"]), _fmt(s["cape_paper"]), _fmt(s[f"cape_norm_{d}paper"])]
        t.add_row(*cells)
    cells = ["TCTE", "Eq. 6", ""]
    for m in results["modes"]:
        e = results["tcte"][m]
        cells += [_fmt(e[f"{d}all"]), "", _fmt(e[f"{d}paper"])]
    t.add_section()
    t.add_row(*cells)
    return t
