"""LLM-as-judge contribution scores (credibility-scoring §5.A(ii)): prompt, validation, fallback.

The judge sees the question, the team's final answer, the dialogue (every round's outputs) and
returns one contribution per agent. Judges are LLMs and make format mistakes: a reply that is not
a list of N non-negative numbers summing to 1 (within 5 %, then renormalised) is rejected and the
fallback is used - equal shares among the agents whose final answer is the team's answer (all
agents if none) - and counted, so a report can say how often the judge failed.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence

import numpy as np

from tomacs.agents.prompts import format_question
from tomacs.types import AgentOutput, Question

__all__ = ["fallback_contributions", "judge_messages", "parse_contributions", "simulated_judge"]

SUM_TOLERANCE = 0.05


def judge_messages(
    question: Question,
    final_answer: str | None,
    history: Sequence[Sequence[AgentOutput]],
    roles: Sequence[str],
) -> list[dict[str, str]]:
    n = len(history[0]) if history else 0
    log = []
    for t, outs in enumerate(history, start=1):
        for o in outs:
            if o.participated or t == 1:
                log.append(f"[round {t}] Agent {o.agent} ({roles[o.agent]}), answer {o.answer}:\n{o.text}")
    system = (
        "You are an impartial judge of a team of AI agents. You measure how much each agent contributed "
        "to the team's final answer, from the dialogue: who proposed it, who convinced others, who changed "
        "their answer after reading whom. You do not judge whether the answer is right."
    )
    user = "\n\n".join(
        [
            f"Question:\n{format_question(question)}",
            f"Team's final answer: {final_answer}",
            "Dialogue log:\n" + "\n\n".join(log),
            f'Return only JSON: {{"contributions": [c_0, ..., c_{n - 1}]}} with one non-negative number per '
            f"agent (agents 0..{n - 1} in order), summing to 1.",
        ]
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def parse_contributions(text: str | None, n: int) -> np.ndarray | None:
    """The judge's contributions if they are valid, else None (the caller falls back and counts)."""
    if not text:
        return None
    values = None
    for m in re.finditer(r"\{.*?\}|\[.*?\]", text, flags=re.DOTALL):
        try:
            obj = json.loads(m.group(0))
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            obj = obj.get("contributions")
        if isinstance(obj, list):
            values = obj
            break
    if values is None or len(values) != n:
        return None
    try:
        arr = np.array([float(x) for x in values], dtype=float)
    except (TypeError, ValueError):
        return None
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        return None
    total = float(arr.sum())
    if not math.isclose(total, 1.0, abs_tol=SUM_TOLERANCE):
        return None
    return arr / total


def fallback_contributions(answers: Sequence[str | None], final_answer: str | None) -> np.ndarray:
    """Equal shares among the agents who gave the team's answer; everyone if nobody did."""
    n = len(answers)
    support = np.array([a is not None and a == final_answer for a in answers], dtype=float)
    if support.sum() == 0:
        support = np.ones(n)
    return support / support.sum()


def simulated_judge(
    true_csc: np.ndarray, error_rate: float, rng: np.random.Generator
) -> tuple[np.ndarray, bool]:
    """The simulator's judge: the exact contributions of the output game, except that with
    probability `error_rate` it returns a uniformly random split (a confidently wrong judgement).
    Returns (contributions, erred)."""
    if not 0.0 <= error_rate <= 1.0:
        raise ValueError(f"crs.judge_error_rate must lie in [0, 1], got {error_rate}")
    n = len(true_csc)
    if rng.random() < error_rate:
        return rng.dirichlet(np.ones(n)), True
    c = np.clip(np.asarray(true_csc, dtype=float), 0.0, None)
    return (c / c.sum() if c.sum() > 0 else np.full(n, 1.0 / n)), False
