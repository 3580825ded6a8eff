"""One LLM request with nothing but a user message, for tests and benchmarks of the LLM backbone.

Why here: the backbone's cache, spend caps and rate limits see only the messages and the sample
index, so their tests and `scripts/bench/ratelimit.py` need the same minimal request."""

from __future__ import annotations

from tomacs.backbones.base import GenerationRequest
from tomacs.types import Question

QUESTION = Question(id="q1", text="2+2?", options=("3", "4"), answer="B", benchmark="t", kind="mc")


def plain_request(content: str, sample_index: int = 0) -> GenerationRequest:
    """A round-1 honest agent's request whose only message is `content` (also its seed key)."""
    return GenerationRequest(
        messages=[{"role": "user", "content": content}],
        question=QUESTION,
        kind="agent",
        agent=0,
        role="math",
        round=1,
        behaviour="honest",
        target=None,
        previous_answer=None,
        incoming=[],
        seed_key=content,
        sample_index=sample_index,
    )
