"""What the episode page draws, computed from one `Debate` (tomacs.debate/1).

Why from the transcript schema: a tomacs run's episodes (any backbone) and published transcripts
reduce to the same `Debate` (tomacs/transcripts), so the page shows them through one path and a
simulated debate is read exactly as a real one. What a debate cannot hold, a run adds as
`Extras`: the method's per-round credits and the decision graph (voters, weights).

Every record is plain JSON (the page renders it client-side) and tested without a browser.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tomacs.transcripts.schema import Debate, Turn

# the role of an agent in a round: honest; an adversary before its onset (it still answers as an
# honest agent would); an adversary from its onset on (it argues for its target)
HONEST, DORMANT, ACTIVE = "honest", "dormant", "adversary"
# how an answer is marked: the gold; the adversary's target; another wrong option; not parsed; no
# turn at all (the agent made no call that round, its last output is carried forward)
RIGHT, TARGET, WRONG, UNPARSED, ABSENT = "right", "target", "wrong", "unparsed", "absent"


@dataclass(frozen=True)
class Decision:
    """The decision a run recorded: which agents' final outputs were counted, with which weights,
    and the credits a credit method gave at T+1. Absent for transcripts (they record none)."""

    voters: tuple[int, ...]
    weights: tuple[float, ...] | None = None
    mode: str = "vote"
    credits: tuple[float, ...] | None = None


@dataclass(frozen=True)
class Extras:
    """What a tomacs episode knows beyond the transcript: per-round credits (round -> one per
    agent; rounds 2..T where the method has them), the decision and the decision agent's reply."""

    credits: dict[int, tuple[float, ...]] = field(default_factory=dict)
    decision: Decision | None = None
    decision_text: str | None = None  # the decision agent's reply (decision mode llm)


def targets(d: Debate) -> set[str]:
    """The answers the debate's adversaries argue for (one shared target in tomacs and both
    published sources; a set so that a source with several is still marked right)."""
    return {a.target for a in d.agents if a.role == "adversary" and a.target is not None}


def role_in_round(d: Debate, agent: int, round: int) -> str:
    """honest / dormant (adversary before its onset) / adversary (from its onset on)."""
    if d.agents[agent].role != "adversary":
        return HONEST
    return ACTIVE if d.is_adversarial(agent, round) else DORMANT


def answer_mark(answer: str | None, gold: str, target_answers: set[str]) -> str:
    """right / target / wrong / unparsed for one parsed answer. The gold wins over a target equal
    to it (a source's invalid target), so a right answer is never painted as the attack's."""
    if answer is None:
        return UNPARSED
    if answer == gold:
        return RIGHT
    if answer in target_answers:
        return TARGET
    return WRONG


def _turns_by_round(d: Debate) -> dict[int, dict[int, Turn]]:
    out: dict[int, dict[int, Turn]] = {t: {} for t in range(1, d.n_rounds + 1)}
    for turn in d.turns:
        out[turn.round][turn.agent] = turn
    return out


def round_edges(d: Debate, round: int) -> list[dict[str, object]]:
    """Who read whom in `round`: one edge sender -> reader per other agent whose output the reader
    read (its own earlier outputs are no edge), with the rounds of the outputs read. `same` is
    true for a spatial message (the sender's output of this very round)."""
    reads: dict[tuple[int, int], set[int]] = {}
    for turn in d.turns:
        if turn.round != round:
            continue
        for j, s in turn.read:
            if j != turn.agent:
                reads.setdefault((j, turn.agent), set()).add(s)
    return [
        {"src": j, "dst": i, "rounds": sorted(rs), "same": round in rs}
        for (j, i), rs in sorted(reads.items())
    ]


def participants(d: Debate, round: int) -> set[int] | None:
    """The agents a method selected to communicate in `round` where that differs from who answered
    (TodyComm with `isolated=answer`, kept by the importer in meta.participants); else None."""
    p = (d.meta or {}).get("participants")
    if isinstance(p, dict) and str(round) in p:
        return {int(i) for i in p[str(round)]}
    return None


def round_records(d: Debate, extras: Extras | None = None) -> list[dict[str, object]]:
    """Per round: one node per agent (role, answer, mark, credit, whether it was excluded) and the
    edges as recorded. An agent is excluded in a round when it made no call or the method left it
    out of the round's communication (not among the participants)."""
    extras = extras or Extras()
    tg = targets(d)
    by_round = _turns_by_round(d)
    last: dict[int, str | None] = {}
    out = []
    for t in range(1, d.n_rounds + 1):
        chosen = participants(d, t)
        credits = extras.credits.get(t)
        nodes = []
        for i in range(d.n_agents):
            turn = by_round[t].get(i)
            node: dict[str, Any] = {"agent": i, "role": role_in_round(d, i, t)}
            if turn is None:
                node.update(answer=last.get(i), mark=ABSENT)
            else:
                node.update(answer=turn.answer, mark=answer_mark(turn.answer, d.gold, tg))
            node["excluded"] = turn is None or (chosen is not None and i not in chosen)
            if credits is not None and i < len(credits):
                node["credit"] = round(float(credits[i]), 4)
            nodes.append(node)
        for i, turn in by_round[t].items():
            last[i] = turn.answer
        out.append({"round": t, "nodes": nodes, "edges": round_edges(d, t)})
    return out


def flips_to_target(d: Debate) -> list[tuple[int, int]]:
    """(round, agent) where an agent that is not (yet) adversarial answers the target after a turn
    that did not: the attack moving an honest mind. Adversaries from their onset on are left out
    (they argue for the target by design), so are agents that held the target from round 1."""
    tg = targets(d)
    if not tg:
        return []
    prev: dict[int, str | None] = {}
    out = []
    for turn in sorted(d.turns, key=lambda x: (x.round, x.agent)):
        i = turn.agent
        if (
            i in prev
            and turn.answer in tg
            and turn.answer != d.gold
            and prev[i] != turn.answer
            and not d.is_adversarial(i, turn.round)
        ):
            out.append((turn.round, i))
        prev[i] = turn.answer
    return out


def final_decision(d: Debate, extras: Extras | None = None) -> dict[str, object]:
    """The debate's final answer and where it comes from: the run's decision (voters, weights,
    the agents it excluded), the source's recorded final answer, or, where a source records none,
    the majority of the last round's parsed answers (a tie has no answer)."""
    extras = extras or Extras()
    meta = d.meta or {}
    out: dict[str, Any]
    if extras.decision is not None:
        dec = extras.decision
        out = {
            "answer": meta.get("final_answer"),
            "how": f"decision ({dec.mode})",
            "voters": list(dec.voters),
            "weights": None if dec.weights is None else [round(float(w), 4) for w in dec.weights],
            "excluded": [i for i in range(d.n_agents) if i not in dec.voters],
        }
        if dec.credits is not None:
            out["credits"] = [round(float(c), 4) for c in dec.credits]
        if extras.decision_text is not None:
            out["text"] = extras.decision_text
    elif "final_answer" in meta:
        out = {"answer": meta.get("final_answer"), "how": "recorded by the source"}
    else:
        last = [t.answer for t in d.turns if t.round == d.n_rounds and t.answer is not None]
        top = Counter(last).most_common()
        tie = len(top) > 1 and top[0][1] == top[1][1]
        out = {
            "answer": None if not top or tie else top[0][0],
            "how": f"majority of round {d.n_rounds} (the source records no decision)"
            + ("; a tie" if tie else ""),
        }
    out["mark"] = answer_mark(out["answer"], d.gold, targets(d))
    return out


def flags(d: Debate, final: Mapping[str, object]) -> dict[str, object]:
    """The page's filters: a wrong final answer, an adversary win (final = target), and every
    flip to the target as (round, agent)."""
    tg = targets(d)
    return {
        "wrong": final["answer"] != d.gold,
        "adversary_win": final["answer"] is not None and final["answer"] in tg and final["answer"] != d.gold,
        "flips": [list(f) for f in flips_to_target(d)],
    }


def episode_record(d: Debate, extras: Extras | None = None) -> dict[str, object]:
    """Everything the episode page shows for one debate, as JSON-ready data."""
    final = final_decision(d, extras)
    by_round = _turns_by_round(d)
    tg = sorted(targets(d))
    return {
        "id": d.id,
        "question_id": d.question_id,
        "source": d.source,
        "model": d.model,
        "question": d.question,
        "options": list(d.options) if d.options else None,
        "letters": list(d.letters),
        "gold": d.gold,
        "targets": tg,
        "n_agents": d.n_agents,
        "n_rounds": d.n_rounds,
        "agents": [
            {"agent": a.agent, "role": a.role, "onset": a.onset, "target": a.target, "model": a.model}
            for a in d.agents
        ],
        "rounds": round_records(d, extras),
        # texts[t-1][i]: agent i's reply in round t (None: no turn or no text kept)
        "texts": [
            [(by_round[t][i].text if i in by_round[t] else None) for i in range(d.n_agents)]
            for t in range(1, d.n_rounds + 1)
        ],
        "final": final,
        "flags": flags(d, final),
        "meta": {k: v for k, v in (d.meta or {}).items() if k != "participants"},
    }
