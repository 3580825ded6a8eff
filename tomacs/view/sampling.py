"""Which episodes a page shows when a run has more than it can carry.

Why by question and not by position: the runs of a sweep answer the same test questions, so a
choice made per question shows the same questions in every run of the page, and methods can be
compared debate by debate. Each key is ranked by a hash of (seed, key): the choice is fixed by the
seed alone, independent of file order and of Python's per-process string hashing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence


def _rank(seed: int, key: str) -> str:
    return hashlib.sha256(f"{seed}\0{key}".encode()).hexdigest()


def sample_indices(keys: Sequence[str], n: int, seed: int = 0) -> list[int]:
    """Indices (ascending) of the `n` entries whose (seed, key) hashes rank first; all of them
    when there are at most `n`. Equal keys (one question twice) keep their file order as the tie."""
    if n < 0:
        raise ValueError(f"max_episodes must be >= 0, got {n}")
    if len(keys) <= n:
        return list(range(len(keys)))
    ranked = sorted(range(len(keys)), key=lambda i: (_rank(seed, keys[i]), i))
    return sorted(ranked[:n])


def per_group(n_groups: int, max_episodes: int, max_total: int | None) -> int:
    """Episodes per run (or transcript source): `max_episodes`, lowered so that a page of many runs
    keeps at most about `max_total` in all (at least one per run, so every run has its page)."""
    if max_total is None or n_groups <= 0:
        return max_episodes
    return max(1, min(max_episodes, max_total // n_groups))
