"""Read episodes back from episodes.jsonl, so metrics and reports never need the live objects."""

from __future__ import annotations

from typing import Any

from tomacs.types import AdversaryPlan, AgentOutput, DecisionGraph, Episode, Question, RoundGraph


def _output(d: dict[str, Any]) -> AgentOutput:
    keys = AgentOutput.__dataclass_fields__.keys()
    return AgentOutput(**{k: v for k, v in d.items() if k in keys})


def episode_from_dict(d: dict[str, Any]) -> Episode:
    q = d["question"]
    question = Question(
        id=q["id"],
        text=q["text"],
        options=tuple(q["options"]) if q.get("options") is not None else None,
        answer=q["answer"],
        benchmark=q["benchmark"],
        kind=q["kind"],
        meta=q.get("meta") or {},
    )
    p = d["plan"]
    plan = AdversaryPlan(
        adversaries=tuple(p["adversaries"]),
        onsets={int(k): int(v) for k, v in p["onsets"].items()},
        target=p["target"],
    )
    graphs = [
        None
        if g is None
        else RoundGraph(
            nodes=g["nodes"],
            edges=[tuple(e) for e in g["edges"]],
            credits=g["credits"],
            temporal_edges=[tuple(e) for e in g.get("temporal_edges") or []],  # absent in older files
            participants=g.get("participants"),
        )
        for g in d["graphs"]
    ]
    dec = d.get("decision")
    decision = (
        None
        if dec is None
        else DecisionGraph(
            voters=dec["voters"],
            weights=dec["weights"],
            mode=dec["mode"],
            credibility=dec.get("credibility"),
            credits=dec.get("credits"),
        )
    )
    dout = d.get("decision_output")
    ep = Episode(
        question=question,
        plan=plan,
        rounds=[[_output(o) for o in r] for r in d["rounds"]],
        graphs=graphs,
        decision=decision,
        decision_output=None if dout is None else _output(dout),
        final_answer=d.get("final_answer"),
        correct=bool(d.get("correct")),
    )
    if ep.decision_output is not None:
        ep.decision_tokens = (ep.decision_output.prompt_tokens, ep.decision_output.completion_tokens)
    known = {
        "question",
        "plan",
        "rounds",
        "graphs",
        "decision",
        "decision_output",
        "final_answer",
        "correct",
        "prompt_tokens",
        "completion_tokens",
        "llm_calls",
    }
    ep.extra = {k: v for k, v in d.items() if k not in known}
    return ep
