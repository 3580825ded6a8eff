"""Batches of a fixed shape per text, so that a MiniLM vector depends on its text alone.

In bf16 a vector moved by up to about 3e-4 with the padded length of the batch it was computed in
(OpenVINO and torch autocast), and under torch also with the batch's row count (1 or 2 rows against
3 or more, on one CPU). A job's texts were batched with whatever other texts were not yet in the
embedding cache, so the same job read other vectors from another cache state, and 24 REINFORCE
iterations turned that into another policy (docs/embedding.md). Here every text is padded to its own
token count rounded up to `PAD_MULTIPLE`, batches hold texts of one padded length only, and torch
batches are filled to a fixed row count with copies of their first row. A re-run then reads the same
bits whatever the cache held, on the same machine and library versions. Fewer pad tokens than
padding to a batch's longest text also made OpenVINO faster (8.5-9.3 s against 10.5-12.6 s for
1,500 analyses on 2 cores).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

PAD_MULTIPLE = 16
INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def padded_length(tokens: int, max_length: int, multiple: int = PAD_MULTIPLE) -> int:
    """The length a text of `tokens` tokens (already truncated to `max_length`) is padded to."""
    return min(-(-tokens // multiple) * multiple, max(max_length, tokens))


def canonical_batches(
    token_counts: Sequence[int], batch_size: int, max_length: int, multiple: int = PAD_MULTIPLE
) -> list[tuple[int, list[int]]]:
    """(padded length, indices) per batch: one padded length per batch, at most `batch_size`
    indices, longest first, and within a length in the order given."""
    lengths = [padded_length(t, max_length, multiple) for t in token_counts]
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    out: list[tuple[int, list[int]]] = []
    for i in order:
        if out and out[-1][0] == lengths[i] and len(out[-1][1]) < batch_size:
            out[-1][1].append(i)
        else:
            out.append((lengths[i], [i]))
    return out


def encode_canonical(
    tokenizer: Any,
    texts: list[str],
    max_length: int,
    batch_size: int,
    run: Callable[[dict[str, np.ndarray]], np.ndarray],
    fixed_rows: bool,
) -> np.ndarray:
    """`run` on every batch of `canonical_batches`; rows back in the order of `texts`.

    `run` takes int64 arrays of `INPUTS` and returns one float row per input row. With `fixed_rows`
    every batch has `batch_size` rows (the first row repeated), for backends whose rows depend on
    the row count."""
    if not texts:
        raise ValueError("encode_canonical needs at least one text (the width of a row comes from `run`)")
    # tokenised once; each batch is padded from these ids (3x faster than tokenising it again)
    ids = tokenizer(texts, truncation=True, max_length=max_length)
    out: np.ndarray | None = None
    for length, idx in canonical_batches([len(x) for x in ids["input_ids"]], batch_size, max_length):
        enc = tokenizer.pad(
            {k: [ids[k][i] for i in idx] for k in INPUTS},
            padding="max_length",
            max_length=length,
            return_tensors="np",
        )
        feed = {k: np.asarray(enc[k], dtype=np.int64) for k in INPUTS}
        if fixed_rows and len(idx) < batch_size:
            feed = {
                k: np.concatenate([v, np.repeat(v[:1], batch_size - len(idx), axis=0)])
                for k, v in feed.items()
            }
        rows = np.asarray(run(feed), dtype=np.float32)[: len(idx)]
        if out is None:
            out = np.zeros((len(texts), rows.shape[1]), dtype=np.float32)
        out[idx] = rows
    assert out is not None  # at least one batch ran
    return out
