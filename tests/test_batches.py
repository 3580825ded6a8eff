"""The one batch loop (tomacs.execution.batches.walk) that training, validation, evaluation, the credibility
warm-up and the propagation analysis share."""

from __future__ import annotations

from typing import Any

import pytest

from tomacs.execution.batches import Batch, split, walk
from tomacs.types import Question


def _qs(k: int) -> list[Question]:
    return [Question(f"q{i}", "?", ("a", "b"), "A", "synthetic", "mc") for i in range(k)]


class Recorder:
    """Stands in for the executor: records each call and returns one fake episode per question."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def run_batch(self, questions: list[Question], method: Any, **kw: Any) -> tuple[list[str], Any]:
        self.calls.append({"ids": [q.id for q in questions], **kw})
        return [f"ep-{q.id}" for q in questions], {"batch": len(self.calls)}


def test_split_keeps_order_and_refuses_a_zero_size() -> None:
    assert split([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]
    assert split([], 3) == []
    with pytest.raises(ValueError, match="batch size must be >= 1"):
        split([1], 0)


def test_walk_hands_each_batch_to_the_hook_before_the_next_runs() -> None:
    ex = Recorder()
    seen: list[tuple[int, int, list[str], Any, int]] = []

    def hook(b: Batch) -> None:
        seen.append((b.number, b.total, [q.id for q in b.questions], b.state, len(ex.calls)))

    eps = walk(ex, None, _qs(5), 2, train=True, phase="train3", on_batch=hook)  # type: ignore[arg-type]
    assert eps == [f"ep-q{i}" for i in range(5)]
    assert [c["ids"] for c in ex.calls] == [["q0", "q1"], ["q2", "q3"], ["q4"]]
    # the hook of batch k ran when exactly k batches had run: a training step lands before the next
    assert seen == [
        (1, 3, ["q0", "q1"], {"batch": 1}, 1),
        (2, 3, ["q2", "q3"], {"batch": 2}, 2),
        (3, 3, ["q4"], {"batch": 3}, 3),
    ]
    assert all(c["train"] is True and c["phase"] == "train3" for c in ex.calls)


def test_walk_passes_the_sample_index_explicitly() -> None:
    ex = Recorder()
    walk(ex, None, _qs(2), 4, train=False, phase="eval")  # type: ignore[arg-type]
    assert ex.calls[-1]["sample_index"] == 0
    walk(ex, None, _qs(2), 4, train=False, phase="train7")  # type: ignore[arg-type]
    assert ex.calls[-1]["sample_index"] == 0  # never read from the phase's digits
    walk(ex, None, _qs(2), 4, train=True, phase="train", sample_index=2)  # type: ignore[arg-type]
    assert ex.calls[-1]["sample_index"] == 2
