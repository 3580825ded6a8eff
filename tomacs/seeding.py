"""Seeds derived from named parts, so every random draw in a run is reproducible and order-free."""

from __future__ import annotations

import hashlib


def stable_seed(*parts: object) -> int:
    """A 63-bit seed from any parts, independent of Python's hash randomisation and call order.

    Keying draws by what they are about (seed, purpose, question id, ...) instead of consuming one
    shared generator is what makes results independent of batching, concurrency and resumption.
    """
    h = hashlib.sha256("/".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(h[:8], "little") >> 1


def paired_seed(eval_seed: int | None, phase: str) -> int | None:
    """`eval.seed` where it applies (the evaluation pass of a paired run), else None: what a request
    carries so a simulator draws from it instead of its own seed."""
    return eval_seed if phase == "eval" else None


def episode_seed(seed: int, eval_seed: int | None, phase: str) -> int:
    """The seed of a pass's episodes: the run's, except in the evaluation when `eval.seed` is set, where a
    paired evaluation gives every training seed the same adversaries, draws and ties."""
    paired = paired_seed(eval_seed, phase)
    return seed if paired is None else paired
