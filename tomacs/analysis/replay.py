"""Replay a trained method that scores agents on recorded debates: `tomacs replay RUN_DIR TRANSCRIPTS...`.

The debates' communication is replayed *as recorded*: the texts and parsed answers of the
transcript's turns are the agents' outputs, and who read whom in round r (`turns[].read`) is the
round-r communication graph (an edge j -> i for every output of another agent j that i read before
answering in round r, whatever round that output came from). The method does not choose the graph;
it is only asked to score the agents.

The method is the trained one, driven through its own calls as the executor drives it
(tomacs/execution/executor.py): `begin`, `act(t)` for t = 2..T, `decide` at T+1, on a History of
AgentOutputs built from the turns and embedded by the run's embedder. No second implementation of
features or stepping: TodyComm's are `tomacs.methods.features.build_features` and its own GRU
(`TodyComm._step`), G-Safeguard's its detector (`GSafeguard._detect`). What the replay changes is
the graph (the method's `replay_follow`): after `act(t)` the round-t graph TodyComm chose is replaced by the
recorded one (`state["edges"][t]`), which is what its features of round t+1 read; G-Safeguard's
detector reads every pair of agents (detect_graph=mask), whatever graph ran. An agent without a turn
in a round made no call: its last output is carried forward (`participated=False`), as the executor does.

Metrics (docs/transcripts.md, "Replaying a trained policy"). Credits c^t (t = 2..T, and T+1 = the
decision; G-Safeguard's are 1 - P(adversarial)) are computed from the outputs of rounds 1..t-1, so in
the row of round t an adversary counts as adversarial once it has produced an adversarial output
the credits read, i.e. when `Debate.is_adversarial(i, t-1)` (onset <= t-1); before that it is
*dormant* and left out of the row (it behaved honestly; calling it either way would be a guess).
Per row:

* AUC: P(credit of a random honest agent > credit of a random active adversary), ties one half
  (`tomacs.analysis.credit.auc`): 1.0 = every adversary scored below every honest agent, 0.5 = no
  separation. Pooled over the debates; "AUC/deb" is the mean of the AUCs within one debate and round.
* ADAcc: the method's own exclusion (its `replay_excluded`), an agent is called adversarial when it is
  left out: in round t <= T, TodyComm's non-participants (a_i^t = 0, inference rule
  c_i > mean(c)) and G-Safeguard's flagged agents; at the decision, the agents that are not voters
  (`tomacs.metrics.predicted_adversarial`). "all-reliable" is the ADAcc of calling every agent
  reliable (the share of honest agents).
* The paper's ADAcc is `tomacs.metrics.adacc_counts` on the replayed episodes: decision voters
  against labels onset <= T, beside the all-reliable detector's (every agent a voter).

Shapes: TodyComm runs one GRU cell shared by all agents, and G-Safeguard one GNN over any number of
nodes whose turns are mean-pooled, so any number of agents and rounds replays; the training shape
is reported beside the transcripts'. Refused: TodyComm's no_credits ablation (oracle credits) and
G-Safeguard with detect_graph=comm (its detector reads the base topology, not the recorded graph).

Which methods replay and how is each method's own (`tomacs.methods.base.Method`: `replays`, `replay_reads`,
`replay_refusal`, `replay_follow`, `replay_excluded`, `trained_shape`); this module names none.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from tomacs.analysis.credit import auc
from tomacs.metrics import AdaccCounts, adacc_counts, predicted_adversarial
from tomacs.transcripts.schema import Debate
from tomacs.types import (
    LETTERS,
    AdversaryPlan,
    AgentOutput,
    Behaviour,
    DecisionGraph,
    Episode,
    Question,
    RoundGraph,
)

if TYPE_CHECKING:
    from rich.table import Table

    from tomacs.embedding.embedders import Embedder
    from tomacs.job.progress import Progress
    from tomacs.methods.base import Method
    from tomacs.runspec.spec import RunSpec

__all__ = [
    "Policy",
    "ReplayError",
    "check_debate_fields",
    "debate_outputs",
    "load_policy",
    "per_debate",
    "read_graph",
    "replay",
    "replay_inputs",
    "replay_run",
    "replay_table",
    "round_stats",
    "scoring_methods",
]

BATCH = 64  # debates stepped together (the GRU runs once per round over a batch, as in evaluation)


def scoring_methods() -> tuple[str, ...]:
    """The registered methods that score agents and can be replayed (their class sets `replays`)."""
    from tomacs.methods.registry import METHODS

    return tuple(n for n in METHODS.names() if METHODS.get(n).replays)


def _method_class(name: str) -> Any:
    from tomacs.methods.registry import METHODS

    return METHODS.get(name)


class ReplayError(ValueError):
    """A run or a transcript that cannot be replayed; the message is one line naming the field and the fix."""


# -- the trained policy ----------------------------------------------------------------------------------
@dataclass
class Policy:
    """A trained run's method, rebuilt for any debate shape (N agents, T rounds) from its config and
    checkpoint; `method(n, t)` builds (once per shape) and loads the checkpoint."""

    run_dir: Path
    checkpoint: Path
    spec: RunSpec
    name: str
    embedder_name: str
    agents: int  # the run's shape (N, T)
    rounds: int
    _methods: dict[tuple[int, int], Method] = field(default_factory=dict)
    _embedder: Embedder | None = None

    def method(self, n: int, rounds: int) -> Method:
        key = (n, rounds)
        if key not in self._methods:
            self._methods[key] = self._build(n, rounds)
        return self._methods[key]

    def _build(self, n: int, rounds: int) -> Method:
        # what tomacs.job.components.build does for the method, with the transcript's N and T
        from tomacs.embedding.embedders import embedder_dim
        from tomacs.job.checkpoint import load_checkpoint
        from tomacs.methods.base import MethodContext
        from tomacs.methods.registry import build_method, method_settings

        params = method_settings(self.spec).params()
        name = str(params.pop("name"))
        ctx = MethodContext(
            n_agents=n,
            rounds=rounds,
            roles=["agent"] * n,  # the scoring methods read no roles
            seed=self.spec.seed,
            in_budget=self.spec.budget.in_degree,
            out_budget=self.spec.budget.out_degree,
            device="cpu",
        )
        ctx.extra["embedder"] = self.embedder_name
        ctx.extra["embed_dim"] = embedder_dim(self.embedder_name)
        method = build_method(name, ctx, params)
        load_checkpoint(method, self.checkpoint)
        method.train_mode(False)
        return method

    @property
    def trained_shape(self) -> str:
        """What the policy was trained on, as the table's title says it."""
        from tomacs.methods.registry import method_settings

        return _method_class(self.name).trained_shape(
            method_settings(self.spec).params(), self.agents, self.rounds
        )

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            from tomacs.embedding.embedders import get_embedder

            self._embedder = get_embedder(self.embedder_name, "cpu")
        return self._embedder


def load_policy(run_dir: Path, checkpoint: Path | None = None) -> Policy:
    """The run's method and the checkpoint its evaluation used (`tested_checkpoint`: best.pt, or the last
    epoch's checkpoint.pt under `train.select=last`); one-line errors for a directory that is not a trained
    run of a supported method."""
    from tomacs.config import ConfigError
    from tomacs.embedding.embedders import DEFAULT_EMBEDDER
    from tomacs.embedding.embedders import configure as configure_embeddings
    from tomacs.job.files import read_run_config, run_spec, tested_checkpoint
    from tomacs.methods.registry import method_settings

    run_dir = Path(run_dir)
    if run_dir.is_file() and run_dir.suffix == ".pt":  # a checkpoint file: its run is its directory
        checkpoint, run_dir = checkpoint or run_dir, run_dir.parent
    try:
        cfg = read_run_config(run_dir, "pass the directory of a `tomacs train` run")
    except ConfigError as exc:
        raise ReplayError(str(exc)) from None
    if cfg is None:
        raise ReplayError(f"{run_dir} has no config.yaml: pass the directory of a `tomacs train` run")
    name = str((cfg.get("method") or {}).get("name"))
    supported = scoring_methods()
    if name not in supported:
        raise ReplayError(
            f"{run_dir} is a method={name} run; replay scores agents with a learned method that scores "
            f"them: {', '.join(supported)} (train one with `tomacs train method=todycomm ...`)"
        )
    ck = checkpoint or tested_checkpoint(run_dir)
    if ck is None:
        raise ReplayError(f"{run_dir} has no best.pt or checkpoint.pt: the run has not finished an epoch")
    if not Path(ck).is_file():
        raise ReplayError(f"checkpoint not found: {ck}")
    cfg["checkpoint"] = str(ck)
    spec = run_spec(cfg)  # the checkpoint's recorded embedder wins, as when the run resumes
    why = _method_class(name).replay_refusal(method_settings(spec).params())
    if why:
        raise ReplayError(f"{run_dir} is a {name} run with {why}")
    configure_embeddings(spec.embed.cache, spec.embed.precision, spec.embed.backend)
    return Policy(
        run_dir=run_dir,
        checkpoint=Path(ck),
        spec=spec,
        name=name,
        embedder_name=spec.embedder or DEFAULT_EMBEDDER,
        agents=spec.agents,
        rounds=spec.rounds,
    )


# -- debates as the method's inputs ------------------------------------------------------------------------
def check_debate_fields(d: Debate, method: str) -> None:
    """What a replay needs of a debate, one line naming the missing field: every agent's round-1
    turn, a text in every turn (every scoring method embeds it), letters the features can encode, and
    reads for a method whose inputs read the graph (its `replay_reads`: TodyComm's features)."""
    if len(d.letters) > len(LETTERS):
        raise ReplayError(
            f"debate {d.id!r}: field 'letters': {len(d.letters)} options; the features encode at most "
            f"{len(LETTERS)}"
        )
    for i in range(d.n_agents):
        if d.turn(i, 1) is None:
            raise ReplayError(
                f"debate {d.id!r}: field 'turns': agent {i} has no round-1 turn; a replay starts from every "
                "agent's round-1 answer"
            )
    for k, t in enumerate(d.turns):
        if t.text is None:
            raise ReplayError(
                f"debate {d.id!r}: field 'turns[{k}].text' is missing; method={method} embeds every "
                "reply's text: replay transcripts that keep the replies"
            )
    if (
        _method_class(method).replay_reads
        and d.n_rounds >= 2
        and not any(t.read for t in d.turns if t.round >= 2)
    ):
        raise ReplayError(
            f"debate {d.id!r}: field 'turns[].read' is empty in every round; method={method}'s features "
            "read who read whom, which this transcript does not record"
        )


def read_graph(d: Debate, r: int) -> list[tuple[int, int]]:
    """Round r's graph as recorded: (sender j, receiver i) for every output of another agent j that
    i read in round r (an agent's own earlier outputs are not edges), sorted and without repeats."""
    edges = {(j, t.agent) for t in d.turns if t.round == r for j, _ in t.read if j != t.agent}
    return sorted(edges)


def _question(d: Debate) -> Question:
    return Question(
        id=d.id,
        text=d.question or "",
        options=tuple(d.options) if d.options is not None else tuple(d.letters),
        answer=LETTERS[d.letters.index(d.gold)],
        benchmark=str(d.meta.get("benchmark") or d.source or "transcript"),
        kind="mc",
    )


def _plan(d: Debate) -> AdversaryPlan:
    onsets = {a.agent: int(a.onset) for a in d.agents if a.role == "adversary" and a.onset is not None}
    target = next((a.target for a in d.agents if a.role == "adversary" and a.target is not None), None)
    return AdversaryPlan(
        adversaries=tuple(sorted(onsets)),
        onsets=onsets,
        target=LETTERS[d.letters.index(target)] if target is not None else None,
    )


def debate_outputs(d: Debate, embed: Callable[[str], list[float]]) -> list[list[AgentOutput]]:
    """rounds[r-1][i] = o_i^r from the turns: the text, the answer (the debate's letters by position,
    as A, B, ...), its embedding; a round without a turn of agent i carries its last output forward
    with participated=False, as the executor does for an agent that makes no call."""
    rounds: list[list[AgentOutput]] = []
    for r in range(1, d.n_rounds + 1):
        row = []
        for i in range(d.n_agents):
            t = d.turn(i, r)
            behaviour: Behaviour = "adversarial" if d.is_adversarial(i, r) else "honest"
            if t is None:
                p = rounds[-1][i]
                row.append(AgentOutput(i, r, p.text, p.answer, False, p.behaviour, embedding=p.embedding))
                continue
            answer = LETTERS[d.letters.index(t.answer)] if t.answer is not None else None
            text = t.text or ""
            row.append(AgentOutput(i, r, text, answer, True, behaviour, embedding=embed(text)))
        rounds.append(row)
    return rounds


def _embeddings(policy: Policy, debates: Sequence[Debate], progress: Progress) -> dict[str, list[float]]:
    """Every distinct reply text embedded once by the run's embedder, in chunks (a progress bar)."""
    texts = sorted({t.text for d in debates for t in d.turns if t.text is not None})
    out: dict[str, list[float]] = {}
    chunk = 64
    with progress.task("embedding replies", total=len(texts), unit="texts") as task:
        for k in range(0, len(texts), chunk):
            part = texts[k : k + chunk]
            for text, v in zip(part, policy.embedder.embed(part), strict=True):
                out[text] = [float(x) for x in v]
            task.step(len(part))
    return out


# -- the replay --------------------------------------------------------------------------------------------
def _replay_batch(
    method: Any, debates: Sequence[Debate], embed: Callable[[str], list[float]]
) -> list[Episode]:
    """One batch of same-shape debates through begin / act / decide, the recorded graph replacing the
    method's own after every round (see the module docstring). The episodes' round graphs hold the
    recorded edges, the method's credits and, as `participants`, the agents it did not call
    adversarial (TodyComm: its participants; G-Safeguard: the unflagged agents)."""
    n, rounds = debates[0].n_agents, debates[0].n_rounds
    questions = [_question(d) for d in debates]
    history = [debate_outputs(d, embed) for d in debates]
    graphs_read = {r: [read_graph(d, r) for d in debates] for r in range(1, rounds + 1)}
    state = method.begin(questions, False, np.random.default_rng(0))
    method.replay_follow(
        state, 1, graphs_read[1]
    )  # live round 1 has no edges; a transcript's same-round reads count
    chosen: list[list[RoundGraph | None]] = [[None] for _ in debates]
    for t in range(2, rounds + 1):
        graphs = method.act(state, t, [h[: t - 1] for h in history])
        excluded = method.replay_excluded(state, graphs)
        method.replay_follow(
            state, t, graphs_read[t]
        )  # the graph that ran, not the one the method would have chosen
        for q, g in enumerate(graphs):
            nodes = sorted(o.agent for o in history[q][t - 1] if o.participated)
            kept = [i for i in range(n) if i not in excluded[q]]
            chosen[q].append(
                RoundGraph(nodes=nodes, edges=graphs_read[t][q], credits=g.credits, participants=kept)
            )
    decisions = method.decide(state, history)
    return [
        Episode(
            question=questions[q], plan=_plan(d), rounds=history[q], graphs=chosen[q], decision=decisions[q]
        )
        for q, d in enumerate(debates)
    ]


def replay(
    policy: Policy, debates: Sequence[Debate], progress: Progress | None = None
) -> list[tuple[Debate, Episode]]:
    """Every debate replayed through the policy, in the order given: (debate, episode) pairs whose
    graphs hold the recorded edges with the method's credits and participants, and whose decision
    is the method's. Debates are grouped by shape (N, T) and stepped in batches."""
    return replay_inputs(policy, debates, progress, inputs=False)[0]


# a debate's policy inputs per row of the table ("2".."T", "decision"): (N, F)
RowInputs = dict[str, np.ndarray]
# what `replay_run` calls with the replay, its inputs and the table's rows (it may add keys to the rows), and
# records as `summary.probe`: `tomacs.analysis.replay_probe.probe_run`
Probe = Callable[
    [Policy, Sequence[tuple[Debate, Episode]], Sequence[RowInputs], list[dict[str, Any]], "Progress | None"],
    dict[str, object],
]


def replay_inputs(
    policy: Policy, debates: Sequence[Debate], progress: Progress | None = None, inputs: bool = True
) -> tuple[list[tuple[Debate, Episode]], list[RowInputs] | None]:
    """`replay`, and with `inputs` what the policy read in every round of every debate (its `trace`, the
    features of `tomacs.analysis.credit.CreditPolicy`), for `tomacs.analysis.replay_probe`."""
    from tomacs.job.progress import Progress

    progress = progress or Progress(enabled=False)
    for d in debates:
        check_debate_fields(d, policy.name)
    groups: dict[tuple[int, int], list[int]] = defaultdict(list)
    for k, d in enumerate(debates):
        groups[(d.n_agents, d.n_rounds)].append(k)
    for n, rounds in groups if inputs else ():  # before any embedding: a method without inputs to read
        why = policy.method(n, rounds).credit_policy_refusal()
        if why:
            raise ReplayError(f"the policy's inputs cannot be read: {why}")
    vecs = _embeddings(policy, debates, progress)
    out: list[Episode | None] = [None] * len(debates)
    read: list[RowInputs] = [{} for _ in debates]
    with progress.task("replaying debates", total=len(debates), unit="debates") as task:
        for (n, rounds), idx in sorted(groups.items()):
            method = policy.method(n, rounds)
            for k in range(0, len(idx), BATCH):
                part = idx[k : k + BATCH]
                if inputs:
                    method.trace = []  # type: ignore[attr-defined]  # CreditPolicy: appends (t, features)
                eps = _replay_batch(method, [debates[j] for j in part], vecs.__getitem__)
                for j, ep in zip(part, eps, strict=True):
                    out[j] = ep
                if inputs:
                    for t, feats in method.trace:  # type: ignore[attr-defined]
                        for q, j in enumerate(part):
                            read[j]["decision" if t == rounds + 1 else str(t)] = np.asarray(feats[q])
                    method.trace = None  # type: ignore[attr-defined]
                task.step(len(part))
    pairs = [(d, ep) for d, ep in zip(debates, out, strict=True) if ep is not None]
    return pairs, (read if inputs else None)


# -- metrics -----------------------------------------------------------------------------------------------
def _rate(x: float) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


Step = tuple[str, str, list[float], list[int], list[int | None]]


def _step_rows(d: Debate, ep: Episode) -> list[Step]:
    """(row, debate id, credits, predicted adversarial, truth) per credit step of one replayed
    debate; truth is 1 adversarial, 0 honest, None dormant (an adversary whose adversarial outputs
    the credits have not read yet)."""
    n, rounds = d.n_agents, d.n_rounds
    out = []
    for t in range(2, rounds + 2):
        if t <= rounds:
            g = ep.graphs[t - 1]
            assert g is not None and g.credits is not None
            credits = list(g.credits)
            part = set(g.participants if g.participants is not None else g.nodes)
            pred = [0 if i in part else 1 for i in range(n)]
            row = str(t)
        else:
            assert ep.decision is not None and ep.decision.credits is not None
            credits = list(ep.decision.credits)
            pred = predicted_adversarial(ep, n)
            row = "decision"
        truth: list[int | None] = []
        for i in range(n):
            a = d.agents[i]
            if d.is_adversarial(i, t - 1):
                truth.append(1)
            elif a.role == "adversary":
                truth.append(None)
            else:
                truth.append(0)
        out.append((row, d.id, credits, pred, truth))
    return out


def _row_stats(items: list[Step]) -> dict[str, object]:
    hon: list[float] = []
    adv: list[float] = []
    per_debate: list[float] = []
    c = AdaccCounts()
    dormant = 0
    for _, _, credits, pred, truth in items:
        h = [x for x, y in zip(credits, truth, strict=True) if y == 0]
        a = [x for x, y in zip(credits, truth, strict=True) if y == 1]
        hon += h
        adv += a
        if h and a:
            per_debate.append(auc(h, a))
        for p, y in zip(pred, truth, strict=True):
            if y is None:
                dormant += 1
            else:
                c.add(bool(y), bool(p))
    return {
        "debates": len({item[1] for item in items}),
        "honest": len(hon),
        "adversarial": len(adv),
        "dormant": dormant,
        "credit_honest": _rate(float(np.mean(hon))) if hon else None,
        "credit_adversarial": _rate(float(np.mean(adv))) if adv else None,
        "auc": _rate(auc(hon, adv)),
        "auc_in_debate": _rate(float(np.mean(per_debate))) if per_debate else None,
        "adacc": _rate(c.accuracy),
        "adacc_tpr": _rate(c.tpr),
        "adacc_tnr": _rate(c.tnr),
        "all_reliable": _rate(len(hon) / (len(hon) + len(adv))) if hon or adv else None,
    }


def round_stats(pairs: Sequence[tuple[Debate, Episode]]) -> dict[str, object]:
    """Per row (round 2..T, decision, all) the statistics of the module docstring, and the paper's
    ADAcc (`tomacs.metrics.adacc_counts`, per debate shape, pooled) beside the all-reliable detector's."""
    by_row: dict[str, list[Any]] = defaultdict(list)
    for d, ep in pairs:
        for item in _step_rows(d, ep):
            by_row[item[0]].append(item)
    comm = sorted((r for r in by_row if r != "decision"), key=int)
    rows = [{"round": r, **_row_stats(by_row[r])} for r in [*comm, "decision"] if r in by_row]
    everything = [item for r in by_row.values() for item in r]
    rows.append({"round": "all", **_row_stats(everything)})
    paper, reliable = AdaccCounts(), AdaccCounts()
    shapes: dict[tuple[int, int], list[Episode]] = defaultdict(list)
    for d, ep in pairs:
        shapes[(d.n_agents, d.n_rounds)].append(ep)
    for (n, rounds), eps in shapes.items():
        paper = paper + adacc_counts(eps, n, rounds)
        keep_all = [
            Episode(ep.question, ep.plan, ep.rounds, ep.graphs, DecisionGraph(voters=list(range(n))))
            for ep in eps
        ]
        reliable = reliable + adacc_counts(keep_all, n, rounds)
    return {
        "debates": len(pairs),
        "adversaries": sum(sum(ep.plan.labels(d.n_agents, d.n_rounds)) for d, ep in pairs),  # onset <= T
        "agents": sum(d.n_agents for d, _ in pairs),
        "shapes": {f"{n}x{t}": len(eps) for (n, t), eps in sorted(shapes.items())},
        "rows": rows,
        "adacc": _rate(paper.accuracy),
        "adacc_balanced": _rate(paper.balanced),
        "adacc_tpr": _rate(paper.tpr),
        "adacc_tnr": _rate(paper.tnr),
        "adacc_all_reliable": _rate(reliable.accuracy),
    }


def per_debate(pairs: Sequence[tuple[Debate, Episode]]) -> list[dict[str, object]]:
    """What the JSON keeps of each debate: credits, participation and truth per row, the voters. The truth
    lets `tomacs transcripts pool` join the folds of a cross-fitted replay debate by debate."""
    out = []
    for d, ep in pairs:
        rows = _step_rows(d, ep)
        out.append(
            {
                "id": d.id,
                "source": d.source,
                "n_agents": d.n_agents,
                "n_rounds": d.n_rounds,
                "onsets": {str(k): v for k, v in ep.plan.onsets.items()},
                "credits": {r: [round(float(x), 6) for x in c] for r, _, c, _, _ in rows},
                "predicted_adversarial": {r: p for r, _, _, p, _ in rows},
                "truth": {r: y for r, _, _, _, y in rows},  # 1 adversarial, 0 honest, None dormant
                "voters": list(ep.decision.voters) if ep.decision is not None else None,
            }
        )
    return out


def replay_run(
    run_dir: Path,
    debates: Sequence[Debate],
    transcripts: Sequence[str | Path] = (),
    limit: int | None = None,
    checkpoint: Path | None = None,
    progress: Progress | None = None,
    probe: Probe | None = None,
) -> dict[str, Any]:
    """`tomacs replay`: load the policy, replay the first `limit` debates (all when None; loaded by
    `tomacs.transcripts.load_debates` from `transcripts`, recorded in the result) and gather the
    statistics and per-debate records; with `probe` (`tomacs.analysis.replay_probe.probe_run`), what it
    records under `summary.probe` and in the rows."""
    policy = load_policy(Path(run_dir), checkpoint)
    if limit is not None:
        debates = debates[:limit]
    if not debates:
        raise ReplayError(f"no debates to replay in {' '.join(str(p) for p in transcripts) or 'the input'}")
    pairs, inputs = replay_inputs(policy, debates, progress, inputs=probe is not None)
    summary = round_stats(pairs)
    if probe is not None and inputs is not None:
        rows = cast(list[dict[str, Any]], summary["rows"])
        summary["probe"] = probe(policy, pairs, inputs, rows, progress)
    return {
        "run_dir": str(policy.run_dir),
        "checkpoint": str(policy.checkpoint),
        "method": policy.name,
        "embedder": policy.embedder_name,
        "policy_shape": policy.trained_shape,
        "transcripts": [str(p) for p in transcripts],
        "summary": summary,
        "debates": per_debate(pairs),
    }


def replay_table(res: dict[str, Any]) -> Table:  # rich imported lazily
    from rich import box
    from rich.table import Table

    def pct(x: float | None) -> str:
        return "-" if x is None else f"{100 * x:.1f}"

    def num(x: float | None) -> str:
        return "-" if x is None else f"{x:.3f}"

    s = res["summary"]
    t = Table(
        title=(
            f"{res['method']} ({res['policy_shape']}, embedder={res['embedder']}) replayed on "
            f"{s['debates']} debates ({', '.join(f'{k}: {v}' for k, v in s['shapes'].items())})"
        ),
        box=box.SIMPLE_HEAD,
        caption=(
            "t: credits c^t, read from rounds 1..t-1 (T+1: the decision's); deb: debates; hon / adv: honest"
            " agents / adversaries whose adversarial outputs the credits read (onset <= t-1), dorm:"
            " adversaries before that (left out); c: mean credit; AUC: P(honest credit > adversary's),"
            " 1 = perfect, AUC/deb: mean within a debate; ADAcc %: an agent left out of round t's"
            " participants (T+1: not a voter) is called adversarial; all-rel: ADAcc % of calling every"
            " agent reliable"
        ),
        caption_justify="left",
        pad_edge=False,
        collapse_padding=True,
    )
    t.add_column("t", justify="right")
    probe = "probe" in s
    for col in ("deb", "hon", "adv", "dorm", "c hon", "c adv", "AUC", "AUC/deb", "ADAcc", "all-rel"):
        t.add_column(col, justify="right")
    real = probe and "real" in s["probe"]
    if probe:
        t.add_column("probe", justify="right")
        t.caption = str(t.caption) + (
            "; probe: AUC of a logistic probe on the policy's own inputs of that row, fitted on the run's own"
            f" {s['probe']['debates']} test debates (episodes.jsonl, their labels) and scored on these"
        )
    if real:
        t.add_column("real", justify="right")
        t.caption = str(t.caption) + (
            f"; real: the same probe fitted on the {s['probe']['real']['debates']} real debates of the"
            f" {s['probe']['real']['questions']} fitting questions instead (what the real replies can tell)"
        )
    for r in s["rows"]:
        extra = [num(r.get("probe_auc"))] if probe else []
        extra += [num(r.get("real_probe_auc"))] if real else []
        t.add_row(
            "T+1" if r["round"] == "decision" else str(r["round"]),
            str(r["debates"]),
            str(r["honest"]),
            str(r["adversarial"]),
            str(r["dormant"]),
            num(r["credit_honest"]),
            num(r["credit_adversarial"]),
            num(r["auc"]),
            num(r["auc_in_debate"]),
            pct(r["adacc"]),
            pct(r["all_reliable"]),
            *extra,
            end_section=r["round"] == "decision",
        )
    return t
