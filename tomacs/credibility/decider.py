"""`decision=crs`: CrS-aware aggregation and the on-the-fly credibility update, for any method.

Why a separate object the executor consults (not a method): credibility is learned across the
stream of queries, whatever topology produced the answers, so it must wrap every method's decision
and outlive batches. The executor hands it each question in stream order; it aggregates the
voters' final outputs with the current scores, and once the answer is known computes the agents'
contribution scores and updates their credibility (credibility-scoring §4-5).

The contribution game (Shapley): players are the voters; a coalition S is worth
v(S) = 1 if aggregating only S's final outputs (same aggregation, current scores, no new LLM call)
reproduces the team's final answer o_t, else 0; v(empty) = 0. So the contributions are each
agent's share of producing o_t (they sum to 1 when o_t came from the voters' answers), and the
reward r_t = +1 (correct) / -1 (wrong) carries the sign in CrS <- CrS (1 + eta CSc r)
(docs/deviations.md explains why this reading of the paper's R(Sigma(S))).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tomacs.config import CrsSchema
from tomacs.credibility.judge import (
    fallback_contributions,
    judge_messages,
    parse_contributions,
    simulated_judge,
)
from tomacs.credibility.scores import CredibilityState
from tomacs.credibility.shapley import shapley
from tomacs.execution.centroid import centroid_choice
from tomacs.execution.decision import DecisionHost, Pending
from tomacs.seeding import stable_seed
from tomacs.types import AgentOutput, DecisionGraph, Episode

if TYPE_CHECKING:
    from tomacs.backbones.base import Backbone
    from tomacs.embedding.embedders import Embedder

AGGREGATIONS = ("vote", "centroid", "llm")
CONTRIBUTIONS = ("shapley", "judge")


@dataclass
class CrsConfig(CrsSchema):
    """The `crs` block of the config schema (its fields and defaults), validated."""

    def __post_init__(self) -> None:
        if self.aggregation not in AGGREGATIONS:
            raise ValueError(
                f"unknown crs.aggregation '{self.aggregation}'; valid: {', '.join(AGGREGATIONS)}"
            )
        if self.contribution not in CONTRIBUTIONS:
            raise ValueError(
                f"unknown crs.contribution '{self.contribution}'; valid: {', '.join(CONTRIBUTIONS)}"
            )
        if self.shapley_samples < 1:
            raise ValueError(f"crs.shapley_samples must be >= 1, got {self.shapley_samples}")
        if not 0.0 <= self.judge_error_rate <= 1.0:
            raise ValueError(f"crs.judge_error_rate must lie in [0, 1], got {self.judge_error_rate}")


def vote_share(answers: Sequence[str | None], weights: Sequence[float], target: str) -> float:
    """P(the weighted vote elects `target`) when ties are broken uniformly at random: 1 for a clear
    win, 1/k for a k-way tie that includes it, else 0. The game uses this expectation instead of
    one draw per coalition, so symmetric agents get equal contributions."""
    totals: dict[str, float] = {}
    for a, w in zip(answers, weights, strict=True):
        if a is not None:
            totals[a] = totals.get(a, 0.0) + float(w)
    if target not in totals:
        return 0.0
    best = max(totals.values())
    tied = [a for a, w in totals.items() if abs(w - best) <= 1e-12 * max(1.0, abs(best))]
    return 1.0 / len(tied) if target in tied else 0.0


class CrsDecider:
    """Owns the credibility state of a run; see the module docstring."""

    def __init__(
        self,
        cfg: CrsConfig,
        n_agents: int,
        roles: Sequence[str],
        seed: int,
        backbone: Backbone,
        simulated: bool,
        embedder: Embedder | None = None,
    ) -> None:
        self.cfg = cfg
        self.n = n_agents
        self.roles = list(roles)
        self.seed = seed
        self.backbone = backbone
        self.simulated = simulated
        self.embedder = embedder
        if cfg.aggregation == "centroid" and embedder is None:
            raise ValueError("crs.aggregation=centroid needs an embedder")
        self.state = CredibilityState(n_agents, eta=cfg.eta, init=cfg.init)
        self.counters = {"updates": 0, "judge_calls": 0, "judge_fallbacks": 0, "judge_simulated_errors": 0}

    # -- aggregation ---------------------------------------------------------------------------
    def weights(self, voters: Sequence[int]) -> list[float]:
        """The voters' scores relative to the largest (aggregation is scale-free, and scores that
        decayed towards 0 over a long stream must still be told apart); all zero -> equal."""
        s = np.asarray([float(self.state.scores[v]) for v in voters])
        top = float(s.max()) if s.size else 0.0
        return [float(x) for x in (s / top if top > 0 else np.ones_like(s))]

    def decision_graph(self, base: DecisionGraph) -> DecisionGraph:
        """The method's voters, weighted by their current credibility."""
        voters = [v for v in base.voters if 0 <= v < self.n] or list(range(self.n))
        scores = [float(self.state.scores[v]) for v in voters]
        mode = "llm" if self.cfg.aggregation == "llm" else self.cfg.aggregation
        return DecisionGraph(voters=voters, weights=self.weights(voters), mode=mode, credibility=scores)  # type: ignore[arg-type]

    async def decide_batch(
        self,
        ex: DecisionHost,
        pending: list[Pending],
        phase: str,
        sample_index: int,
        on_call: Callable[[int], None] | None,
    ) -> list[Episode]:
        """Credibility is learned across the stream: decide and update one question at a time, in
        order, so each decision uses the scores the previous question left (the executor's
        `decisions` object under decision=crs; `tomacs.execution.decision.Concurrent` otherwise)."""
        if self.cfg.aggregation == "centroid":
            todo = [o for p in pending for o in p.history[-1] if o.embedding is None]
            if todo:
                vecs = await self.embed([o.text for o in todo])
                for o, v in zip(todo, vecs, strict=True):
                    o.embedding = [float(x) for x in v]
        episodes = []
        for p in pending:
            ep = await ex.decide_one(
                p, phase, sample_index, on_call, decision=self.decision_graph(p.decision)
            )
            await self.learn(ep, phase, sample_index)
            episodes.append(ep)
        return episodes

    async def embed(self, texts: list[str]) -> np.ndarray:
        assert self.embedder is not None
        return np.asarray(await asyncio.to_thread(self.embedder.embed, texts), dtype=float)

    def _value(
        self,
        members: Sequence[int],
        answers: Sequence[str | None],
        weights: Sequence[float],
        embeddings: np.ndarray | None,
        target: str,
        rng: np.random.Generator,
    ) -> float:
        """v(S): does aggregating positions `members` of the voter list give `target`? (No LLM: the
        coordinator's game uses the credibility-weighted vote as its stand-in, docs/deviations.md.)"""
        live = [k for k in members if answers[k] is not None]
        if not live:
            return 0.0
        if self.cfg.aggregation == "centroid" and embeddings is not None:
            pick = centroid_choice(embeddings[live], [weights[k] for k in live], rng)
            return 1.0 if answers[live[pick]] == target else 0.0
        return vote_share([answers[k] for k in live], [weights[k] for k in live], target)

    # -- learning ------------------------------------------------------------------------------
    async def learn(self, ep: Episode, phase: str, sample_index: int) -> None:
        """Contributions of this query, reward, and the credibility update (stored in ep.extra)."""
        dec = ep.decision
        assert dec is not None
        voters = list(dec.voters)
        final = ep.rounds[-1]
        answers = [final[v].answer for v in voters]
        weights = self.weights(voters)
        embeddings = None
        if self.cfg.aggregation == "centroid":
            embeddings = np.asarray([final[v].embedding for v in voters], dtype=float)
        o_t = ep.final_answer
        q = ep.question

        def value(s: frozenset[int]) -> float:
            if not s or o_t is None:
                return 0.0
            members = sorted(s)
            rng = np.random.default_rng(stable_seed(self.seed, "crs-game", phase, q.id, *members))
            return self._value(members, answers, weights, embeddings, o_t, rng)

        rng = np.random.default_rng(stable_seed(self.seed, "crs-shapley", phase, q.id))
        exact = shapley(value, len(voters), self.cfg.shapley_exact_max, self.cfg.shapley_samples, rng)
        source = "shapley"
        csc_v = exact
        if self.cfg.contribution == "judge":
            csc_v, source = await self._judge(ep, voters, exact, answers, phase, sample_index)
        csc = np.zeros(self.n)
        csc[voters] = csc_v
        reward = 1.0 if ep.correct else -1.0
        before = self.state.scores.copy()
        self.state.update(csc, reward)
        self.counters["updates"] += 1
        ep.extra["crs"] = {
            "before": [round(float(x), 8) for x in before],
            "csc": [round(float(x), 8) for x in csc],
            "reward": reward,
            "source": source,
            "after": [round(float(x), 8) for x in self.state.scores],
        }

    async def _judge(
        self,
        ep: Episode,
        voters: list[int],
        exact: np.ndarray,
        answers: list[str | None],
        phase: str,
        sample_index: int,
    ) -> tuple[np.ndarray, str]:
        q = ep.question
        if self.simulated:
            rng = np.random.default_rng(stable_seed(self.seed, "crs-judge", phase, q.id))
            csc, erred = simulated_judge(exact, self.cfg.judge_error_rate, rng)
            self.counters["judge_simulated_errors"] += int(erred)
            return csc, "judge_sim_error" if erred else "judge_sim"
        from tomacs.backbones.base import GenerationRequest

        history = [[out for out in r] for r in ep.rounds]
        sub = [[_renumber(o, k) for k, o in enumerate(r[v] for v in voters)] for r in history]
        req = GenerationRequest(
            messages=judge_messages(q, ep.final_answer, sub, [self.roles[v] for v in voters]),
            question=q,
            kind="judge",
            agent=-2,
            role="Judge",
            round=len(ep.rounds) + 1,
            behaviour="honest",
            target=None,
            previous_answer=None,
            incoming=[],
            seed_key=f"{self.seed}/{phase}/{q.id}/judge",
            sample_index=sample_index,
        )
        (rep,) = await self.backbone.generate([req])
        self.counters["judge_calls"] += 1
        ep.extra["judge_tokens"] = [rep.prompt_tokens, rep.completion_tokens]
        parsed = parse_contributions(rep.text, len(voters))
        if parsed is None:
            self.counters["judge_fallbacks"] += 1
            return fallback_contributions(answers, ep.final_answer), "judge_fallback"
        return parsed, "judge"

    def stats(self) -> dict[str, object]:
        return {**self.state.to_dict(), **self.counters, "config": self.cfg.__dict__.copy()}


def _renumber(o: AgentOutput, k: int) -> AgentOutput:
    """A copy of o as agent k of the judged sub-team (the judge sees voters 0..m-1)."""
    from dataclasses import replace

    return replace(o, agent=k)
