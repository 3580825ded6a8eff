"""Questions walked in batches through the executor: the one loop under training, validation,
evaluation, the credibility warm-up and the analyses.

What differs between those callers (a loss step, appending to episodes.jsonl, a progress line) is
their `on_batch` hook; how questions are cut into batches and handed to the executor is written
once, so a change to the executor's call (a new argument) is made in one place.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from tomacs.execution.executor import Executor, ForceFn
from tomacs.methods.base import BatchState, Method
from tomacs.types import Episode, Question

T = TypeVar("T")


def split(items: Sequence[T], size: int) -> list[list[T]]:
    """Consecutive batches of `size` (the last may be shorter); the order is kept."""
    if size < 1:
        raise ValueError(f"batch size must be >= 1, got {size}")
    items = list(items)
    return [items[i : i + size] for i in range(0, len(items), size)]


@dataclass(frozen=True)
class Batch:
    """One finished batch as a hook sees it; `state` is the method's batch state (its loss reads it)."""

    number: int  # 1-based
    total: int  # batches in this walk
    questions: list[Question]
    episodes: list[Episode]
    state: BatchState


def walk(
    executor: Executor,
    method: Method,
    questions: Sequence[Question],
    batch_size: int,
    *,
    train: bool,
    phase: str,
    sample_index: int = 0,
    on_call: Callable[[int], None] | None = None,
    on_batch: Callable[[Batch], None] | None = None,
    force: Mapping[int, ForceFn] | None = None,
) -> list[Episode]:
    """Run every question once, batch by batch, and return the episodes in question order.

    `on_batch` runs after each batch and before the next starts, so a training step there updates
    the policy that the next batch samples from. `on_call` counts LLM calls (a progress task).
    `sample_index` tells repeated passes over the same questions apart (a training epoch): the
    backbone draws, and caches, a fresh sample for each index."""
    chunks = split(questions, batch_size)
    episodes: list[Episode] = []
    for number, qs in enumerate(chunks, start=1):
        eps, state = executor.run_batch(
            qs, method, train=train, phase=phase, sample_index=sample_index, on_call=on_call, force=force
        )
        episodes.extend(eps)
        if on_batch is not None:
            on_batch(Batch(number, len(chunks), qs, eps, state))
    return episodes
