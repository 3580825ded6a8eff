"""One executor for every method (TodyComm Algorithm 3).

All methods run on the same agents, prompts, adversaries, seeds and backbone through this code,
which is what makes their numbers comparable. Rounds are synchronous over the questions of a
batch (a batched policy needs round t of every question before it decides round t+1); within a
round, the agents of one topological level run concurrently and so do all questions.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tomacs.agents.adversary import AdversarySchedule
from tomacs.agents.prompts import (
    add_persuasive_suffix,
    adversarial_debate_messages,
    adversarial_messages,
    agent_messages,
    format_message,
)
from tomacs.backbones.base import Backbone, GenerationRequest
from tomacs.benchmarks.base import wrong_answers
from tomacs.benchmarks.parsing import is_correct, parse_answer
from tomacs.execution.decision import Ballot, Concurrent, DecisionOrder, Pending, ballot_weights, rules
from tomacs.graphs import graph_violation, topological_levels
from tomacs.methods.base import BatchState, History, Method
from tomacs.seeding import episode_seed, paired_seed, stable_seed
from tomacs.types import (
    AdversaryPlan,
    AgentOutput,
    DecisionGraph,
    Episode,
    Message,
    Question,
    RoundGraph,
)

ForceFn = Callable[[Question, int], str | None]
"""(question, round) -> the text one agent is forced to output at that round, or None to let it answer.

Used through `Executor.run_batch(force={agent: fn})` by counterfactual analyses (do(O_i := Ô_i),
tomacs/analysis/propagation.py): a forced agent makes no backbone call, so the intervention costs
nothing and cannot be undone by the backbone."""


@dataclass
class ExecutorConfig:
    n_agents: int
    rounds: int
    roles: list[str]
    seed: int
    capabilities: list[float | None] | None = None
    # the seed of the evaluation's episodes (adversary plans, backbone draws, vote ties); None = `seed`.
    # Fixed across a seed sweep it pairs the evaluation, so seeds measure training alone.
    eval_seed: int | None = None
    # the run's constraints, checked on every graph a method returns (Table 3's budgets, masks)
    mask: np.ndarray | None = None
    in_budget: int | None = None
    out_budget: int | None = None


class Executor:
    """Runs batches of questions through a method's graphs on a backbone."""

    def __init__(
        self,
        cfg: ExecutorConfig,
        backbone: Backbone,
        schedule: AdversarySchedule,
        embedder: Any | None = None,
        crs: Any | None = None,
    ) -> None:
        self.cfg = cfg
        self.backbone = backbone
        self.schedule = schedule
        self.embedder = embedder
        self.crs = crs  # tomacs.credibility.decider.CrsDecider when decision=crs
        self.rules = rules()  # decision mode -> the rule object that takes the final answer
        # how a batch's decisions are taken: all at once, or (credibility) in stream order, learning
        self.decisions: DecisionOrder = crs if crs is not None else Concurrent()
        self._loop: asyncio.Runner | None = None

    # ------------------------------------------------------------------------------------------
    def episode_seed(self, phase: str) -> int:
        return episode_seed(self.cfg.seed, self.cfg.eval_seed, phase)

    def plan_for(self, question: Question, phase: str) -> AdversaryPlan:
        """The episode's adversaries; evaluation plans depend only on (seed, question) so every
        method is evaluated against exactly the same adversaries, targets and onsets."""
        rng = np.random.default_rng(stable_seed(self.episode_seed(phase), "plan", phase, question.id))
        lure = None
        lure_of = getattr(self.backbone, "question_lure", None)
        if self.schedule.target_lure is not None and lure_of is not None:  # a source's target rule
            lure = lure_of(question)  # the plan refuses a missing lure in one line
        return self.schedule.plan(question, wrong_answers(question), rng, lure)

    def run_batch(
        self,
        questions: Sequence[Question],
        method: Method,
        train: bool,
        phase: str,
        on_call: Callable[[int], None] | None = None,
        force: Mapping[int, ForceFn] | None = None,
        sample_index: int = 0,
    ) -> tuple[list[Episode], BatchState]:
        """Synchronous wrapper; returns the episodes and the method's batch state (for its loss).

        `phase` names the pass (seeds of plans, draws and ties: "train3", "val", "eval");
        `sample_index` tells repeated samples of the same request apart (the training epoch): it
        goes into every request, so a backbone and its cache give each epoch fresh replies.

        Every batch runs on one event loop per executor, built once: a Ctrl-C then lands in a
        running loop (which cancels the batch cleanly) or between batches, not in the middle of
        building a fresh loop per batch (which left a half-built loop's traceback at exit)."""
        if self._loop is None:
            self._loop = asyncio.Runner()
            weakref.finalize(self, _close_runner, self._loop)
        batch = self.arun_batch(
            questions, method, train, phase, on_call, force=force, sample_index=sample_index
        )
        try:
            return self._loop.run(batch)
        except KeyboardInterrupt:
            _settle(self._loop)
            raise
        except asyncio.CancelledError:
            # Nothing in tomacs cancels a batch's task: only a Ctrl-C (or a SIGTERM made one) does.
            # asyncio.Runner turns that cancellation into a KeyboardInterrupt only when it counted the
            # signal and the task's cancel count comes back to 0, and both can fail: a signal that lands
            # after Runner.run installs its SIGINT handler but before it zeroes its interrupt count
            # (CPython 3.11's order), or a task cancelled once more on the same signal. The
            # CancelledError then escaped as a traceback with exit 1 instead of the resume command and
            # 130 (seen in tests/test_run_lifecycle.py, for SIGINT and for SIGTERM)
            _settle(self._loop)
            raise KeyboardInterrupt from None
        finally:
            # a signal that lands before the loop starts the batch (between two batches, the moment a
            # progress line invites one) leaves its coroutine never awaited, and Python says so after
            # the resume command at exit; closing it is a no-op for a batch that ran
            batch.close()

    async def arun_batch(
        self,
        questions: Sequence[Question],
        method: Method,
        train: bool,
        phase: str,
        on_call: Callable[[int], None] | None = None,
        force: Mapping[int, ForceFn] | None = None,
        sample_index: int = 0,
    ) -> tuple[list[Episode], BatchState]:
        n, rounds = self.cfg.n_agents, self.cfg.rounds
        questions = list(questions)
        prepare = getattr(self.backbone, "prepare_questions", None)
        if prepare is not None:  # per-question work of the backbone, all in one go (sim topic words)
            prepare(questions)
        plans = [self.plan_for(q, phase) for q in questions]
        rng = np.random.default_rng(stable_seed(self.cfg.seed, "method", phase, *[q.id for q in questions]))
        state = method.begin(questions, train, rng)
        if isinstance(state, dict):
            if method.needs_oracle:  # only a declared oracle ablation (TodyComm w/o credits) sees them
                state["plans"] = plans
            if self.crs is not None:  # e.g. the CrS-ordered chain reads the scores of the batch start
                state["credibility"] = self.crs.state.scores.copy()
        history: History = [[] for _ in questions]
        graphs: list[list[RoundGraph | None]] = [[None] for _ in questions]
        # per question, the agents that have read an adversary's message (a sim profile may weigh
        # later exposures differently from the first; a real LLM reads its own context instead)
        exposed: list[set[int]] = [set() for _ in questions]

        # Round 1: every agent answers alone.
        first = RoundGraph(nodes=list(range(n)), edges=[])
        outs = await asyncio.gather(
            *[
                self._run_round(q, plans[k], 1, first, None, phase, sample_index, on_call, force=force)
                for k, q in enumerate(questions)
            ]
        )
        for k in range(len(questions)):
            history[k].append(outs[k])
        await self._embed(method, [h[-1] for h in history])

        for t in range(2, rounds + 1):
            round_graphs = method.act(state, t, history)
            if len(round_graphs) != len(questions):
                raise RuntimeError(
                    f"method {method.name} returned {len(round_graphs)} graphs for {len(questions)} questions"
                )
            for q, g in zip(questions, round_graphs, strict=True):
                self._verify(method, t, q, g)
            outs = await asyncio.gather(
                *[
                    self._run_round(
                        q,
                        plans[k],
                        t,
                        round_graphs[k],
                        history[k][-1],
                        phase,
                        sample_index,
                        on_call,
                        force=force,
                        first=history[k][0],
                        exposed=exposed[k],
                    )
                    for k, q in enumerate(questions)
                ]
            )
            for k in range(len(questions)):
                history[k].append(outs[k])
                graphs[k].append(round_graphs[k])
            await self._embed(method, [h[-1] for h in history])

        decisions = method.decide(state, history)
        pending = [Pending(q, plans[k], history[k], graphs[k], decisions[k]) for k, q in enumerate(questions)]
        episodes = await self.decisions.decide_batch(self, pending, phase, sample_index, on_call)
        return episodes, state

    def _verify(self, method: Method, t: int, q: Question, graph: RoundGraph) -> None:
        """Every graph a method returns obeys the run's mask and degree budgets and is a DAG: each
        method applies them itself, and this is what makes a forgotten one an error, not a
        silently different experiment (e.g. Table 3's b1 run without its budget)."""
        c = self.cfg
        problem = graph_violation(
            c.n_agents, graph.nodes, graph.edges, graph.temporal_edges, c.mask, c.in_budget, c.out_budget
        )
        if problem:
            where = f"a round-{t} graph (question {q.id})"
            raise RuntimeError(f"method '{method.name}' returned {where} that {problem}")

    # ------------------------------------------------------------------------------------------
    async def _embed(self, method: Method, outputs: list[list[AgentOutput]]) -> None:
        if not method.needs_embeddings or self.embedder is None:
            return
        todo = [o for round_out in outputs for o in round_out if o.embedding is None]
        if not todo:
            return
        vecs = await asyncio.to_thread(self.embedder.embed, [o.text for o in todo])
        for o, v in zip(todo, vecs, strict=True):
            o.embedding = [float(x) for x in v]

    def _request(
        self,
        q: Question,
        plan: AdversaryPlan,
        agent: int,
        t: int,
        incoming: list[Message],
        previous: AgentOutput | None,
        phase: str,
        sample_index: int,
        first: AgentOutput | None = None,
        exposed_before: bool = False,
    ) -> GenerationRequest:
        role = self.cfg.roles[agent]
        behaviour = plan.behaviour(agent, t)
        debating = behaviour == "adversarial" and self.schedule.prompt == "debate"
        prev_text = previous.text if previous is not None else None
        if debating:  # attack.prompt=debate: it reads the others and its own previous reply
            messages = adversarial_debate_messages(q, str(plan.target), t, incoming, prev_text)
        elif behaviour == "adversarial":
            messages = adversarial_messages(q, str(plan.target))
            prev_text = None  # App. D's prompt shows it nothing of its own
        else:
            messages = agent_messages(q, role, t, incoming, prev_text)
        caps = self.cfg.capabilities
        return GenerationRequest(
            messages=messages,
            question=q,
            kind="agent",
            agent=agent,
            role=role,
            round=t,
            behaviour=behaviour,
            target=plan.target if behaviour == "adversarial" else None,
            previous_answer=previous.answer if previous is not None else None,
            incoming=incoming if behaviour == "honest" or debating else [],
            seed_key=f"{self.episode_seed(phase)}/{phase}/{q.id}/{agent}/{t}",
            sample_index=sample_index,
            seed=paired_seed(self.cfg.eval_seed, phase),
            capability=caps[agent] if caps else None,
            first_answer=first.answer if first is not None else None,
            exposed_before=exposed_before,
            previous_text=prev_text,
        )

    async def _run_round(
        self,
        q: Question,
        plan: AdversaryPlan,
        t: int,
        graph: RoundGraph,
        prev: list[AgentOutput] | None,
        phase: str,
        sample_index: int,
        on_call: Callable[[int], None] | None,
        force: Mapping[int, ForceFn] | None = None,
        first: list[AgentOutput] | None = None,
        exposed: set[int] | None = None,
    ) -> list[AgentOutput]:
        """One round's calls, level by level of the round's DAG. `exposed` (updated at the end of the
        round): the agents that have read an adversarial message in an earlier round."""
        n = self.cfg.n_agents
        seen_now: set[int] = set()
        nodes = sorted(set(graph.nodes))  # checked against the run's agents by _verify
        levels = topological_levels(nodes, graph.edges)
        parents: dict[int, list[int]] = {i: [] for i in nodes}
        for s, r in graph.edges:
            parents[r].append(s)
        temporal_parents = self._temporal_parents(t, graph, nodes, prev)
        current: dict[int, AgentOutput] = {}
        for level in levels:
            forced = self._forced(q, t, level, force) if force else {}
            for i, text in forced.items():
                current[i] = self._forced_output(q, i, t, text, participated=True)
            if forced:
                level = [i for i in level if i not in forced]
                if not level:
                    continue
            reqs = []
            for i in level:
                incoming = [self._message(j, current[j]) for j in sorted(parents[i])]
                if prev is not None:  # temporal messages: round t-1 outputs, after the current ones
                    earlier = temporal_parents.get(i, ())
                    incoming += [self._message(j, prev[j], temporal=True) for j in earlier]
                reqs.append(
                    self._request(
                        q,
                        plan,
                        i,
                        t,
                        incoming,
                        prev[i] if prev else None,
                        phase,
                        sample_index,
                        first[i] if first else None,
                        exposed_before=exposed is not None and i in exposed,
                    )
                )
                if any(m.persuasive for m in incoming):
                    seen_now.add(i)
            replies = await self.backbone.generate(reqs)
            for i, req, rep in zip(level, reqs, replies, strict=True):
                text = rep.text
                if req.behaviour == "adversarial" and self.schedule.suffix:  # attack.suffix=false: stealthy
                    text = add_persuasive_suffix(text)
                current[i] = AgentOutput(
                    agent=i,
                    round=t,
                    text=text,
                    answer=parse_answer(q, text),
                    participated=True,
                    behaviour=req.behaviour,
                    prompt_tokens=rep.prompt_tokens,
                    completion_tokens=rep.completion_tokens,
                    cached=rep.cached,
                )
            if on_call is not None:
                on_call(len(level))
        if exposed is not None:
            exposed |= seen_now
        out: list[AgentOutput] = []
        for i in range(n):
            if i in current:
                out.append(current[i])
            elif force and (idle := self._forced(q, t, [i], force)):
                # do(O_i := Ô_i) holds in rounds the agent sits out too: the decision reads it
                out.append(self._forced_output(q, i, t, idle[i], participated=False))
            else:
                if prev is None:
                    raise RuntimeError("every agent must take part in round 1")
                p = prev[i]
                out.append(
                    AgentOutput(
                        agent=i,
                        round=t,
                        text=p.text,
                        answer=p.answer,
                        participated=False,
                        behaviour=p.behaviour,
                        embedding=p.embedding,
                    )
                )
        return out

    def _message(self, sender: int, output: AgentOutput, temporal: bool = False) -> Message:
        """f_m of one sender's output. `persuasive` follows the behaviour of the round that produced
        `output` (for a temporal message, round t-1), so a message is as persuasive as its text."""
        role = self.cfg.roles[sender]
        return Message(
            sender=sender,
            role=role,
            text=format_message(role, output.text, previous_round=temporal),
            answer=output.answer,
            persuasive=output.behaviour == "adversarial",
            temporal=temporal,
        )

    def _temporal_parents(
        self, t: int, graph: RoundGraph, nodes: list[int], prev: list[AgentOutput] | None
    ) -> dict[int, list[int]]:
        """Receiver -> senders (sorted, deduplicated) of the round's temporal edges, after checking them.

        A bad temporal edge is an error, not skipped: it would mean a method believes an agent
        reads something it never sees. Senders need not take part in round t (they spoke in
        round t-1, or carried their last output into it); receivers must, since only they make a
        call. Self edges are rejected because an agent's own previous output is always shown.
        """
        out: dict[int, list[int]] = {}
        if not graph.temporal_edges:
            return out
        if prev is None:
            raise RuntimeError(f"round {t} graph has temporal edges, but there is no previous round")
        n, members = self.cfg.n_agents, set(nodes)
        for s, r in graph.temporal_edges:
            s, r = int(s), int(r)
            if not (0 <= s < n and 0 <= r < n):
                raise RuntimeError(f"round {t} temporal edge ({s}, {r}) names an agent outside 0..{n - 1}")
            if s == r:
                raise RuntimeError(
                    f"round {t} temporal edge ({s}, {r}) is a self edge; an agent always reads its own "
                    "previous output, so self temporal edges are not allowed"
                )
            if r not in members:
                raise RuntimeError(
                    f"round {t} temporal edge ({s}, {r}): receiver {r} does not take part in the round"
                )
            senders = out.setdefault(r, [])
            if s not in senders:
                senders.append(s)
        return {r: sorted(v) for r, v in out.items()}

    @staticmethod
    def _forced(q: Question, t: int, agents: list[int], force: Mapping[int, ForceFn]) -> dict[int, str]:
        out: dict[int, str] = {}
        for i in agents:
            fn = force.get(i)
            text = fn(q, t) if fn is not None else None
            if text is not None:
                out[i] = text
        return out

    def _forced_output(self, q: Question, agent: int, t: int, text: str, participated: bool) -> AgentOutput:
        """An honest-looking output with no call behind it: zero tokens, and no persuasive flag, so
        receivers treat it like any neighbour's answer (an error or an insight, not an attack)."""
        return AgentOutput(
            agent=agent,
            round=t,
            text=text,
            answer=parse_answer(q, text),
            participated=participated,
            behaviour="honest",
        )

    async def decide_one(
        self,
        p: Pending,
        phase: str,
        sample_index: int,
        on_call: Callable[[int], None] | None,
        decision: DecisionGraph | None = None,
    ) -> Episode:
        """The final answer of one question by the rule its decision graph names (tomacs.execution.decision);
        `decision` replaces the method's graph (credibility re-weights the voters)."""
        q, plan, history, graphs = p.question, p.plan, p.history, p.graphs
        decision = decision or p.decision
        voters = [v for v in decision.voters if 0 <= v < self.cfg.n_agents] or list(range(self.cfg.n_agents))
        episode = Episode(question=q, plan=plan, rounds=history, graphs=graphs, decision=decision)
        rule = self.rules.get(decision.mode)
        if rule is None:
            raise RuntimeError(f"unknown decision mode '{decision.mode}'; valid: {', '.join(self.rules)}")
        weights, told = ballot_weights(decision, voters)
        rng = np.random.default_rng(stable_seed(self.episode_seed(phase), "tie", phase, q.id))
        ballot = Ballot(q, history[-1], voters, weights, told, rng, phase, sample_index)
        answer = await rule.answer(self, ballot, episode, on_call)
        episode.final_answer = answer
        episode.correct = answer is not None and is_correct(q, answer)
        return episode


def _settle(runner: asyncio.Runner) -> None:
    """Cancel and finish what an interrupted batch left in its loop.

    A KeyboardInterrupt that asyncio did not route itself (SIGTERM to a job whose SIGINT is
    ignored, tomacs.job.rundir) escapes from inside one request's task and leaves the others pending;
    shutting the loop at exit would then re-raise it as a traceback after the resume command."""
    loop = runner.get_loop()
    for _ in range(3):
        pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
        if not pending:
            return
        for t in pending:
            t.cancel()
        try:
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        except BaseException:  # the interrupt surfacing again through a waiting task: already handled
            pass


def _quiet_at_close(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """Tasks still pending at close are abandoned work whose outcome the run has already reported; one
    that fails as it is cancelled (a client library's wait_for once raised "cannot reuse already awaited
    coroutine" there) is said on one debug line, not as a traceback after the run's own error."""
    exc = context.get("exception")
    detail = f"{type(exc).__name__}: {exc}" if exc is not None else ""
    logging.getLogger("asyncio").debug("at close: %s %s", context.get("message", ""), detail)


def _close_runner(runner: asyncio.Runner) -> None:
    """The full shutdown when no loop is running; an executor collected while another one's loop
    runs (a collection can happen anywhere) only releases its own loop's resources."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass  # the usual case; the shutdown runs below, outside this handler, so nothing chains to it
    else:
        runner.get_loop().close()
        return
    runner.get_loop().set_exception_handler(_quiet_at_close)
    runner.close()
