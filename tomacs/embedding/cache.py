"""Persistent embedding cache (sqlite): a text is embedded once per model and precision, ever.

Why: MiniLM dominates the time of a paper-table sweep, and most of what it embeds repeats across
jobs (round-1 analyses and honest rounds are the same texts at every attack rate; a re-run of a job
embeds exactly what it embedded before). Every job of a sweep shares one file, by default
`outputs/cache/embeddings.sqlite` (config `embed.cache`; null turns it off).

Design (the response cache, tomacs/backbones/cache.py, is the model):
* Key = (model, precision, sha256 of the UTF-8 text). `model` names the weights and the library
  versions that compute them, `precision` the arithmetic, device, backend and batch shape
  ("bf16-cpu-openvino-pad16", ...), so a vector is only ever reused where a fresh computation
  would give the same bits.
* The value is the raw float32 bytes of the vector the embedder returned: a hit is bit-identical
  to the vector computed when the entry was written (no float16 or quantised storage).
* WAL journal + `busy_timeout` + a jittered retry loop, and `INSERT OR IGNORE` (the first vector
  stored for a key wins): parallel jobs of a sweep (joblib, submitit) can share the file. A job
  whose new vector lost that race reads the winner back and uses it (`MiniLMEmbedder.embed`), so a
  re-run from the cache sees exactly the vectors the first run used.
* Each batch of new vectors is one transaction, committed at once, so a killed job keeps what it paid for.

Clear it with `python -m tomacs.embedding.cache clear` (or delete the file); `stats` counts its rows.
"""

from __future__ import annotations

import argparse
import hashlib
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tomacs.sqlite_store import SqliteStore

__all__ = ["DEFAULT_PATH", "EmbeddingCache", "text_key"]

DEFAULT_PATH = "outputs/cache/embeddings.sqlite"
_CHUNK = 500  # keys per SELECT ... IN (...), well under sqlite's variable limit


class EmbeddingCacheError(RuntimeError):
    """The cache could not be read or written even after retrying."""


def text_key(text: str) -> bytes:
    """sha256 of the text: fixed-size keys, and the file holds no analysis text."""
    return hashlib.sha256(text.encode("utf-8")).digest()


class EmbeddingCache(SqliteStore):
    """(model, precision, text) -> float32 vector of `dim` values, shared across processes."""

    error = EmbeddingCacheError
    label = "embedding cache"

    def _create_tables(self, c: sqlite3.Connection) -> None:
        c.execute(
            """CREATE TABLE IF NOT EXISTS embeddings (
                   model TEXT NOT NULL,
                   precision TEXT NOT NULL,
                   text_sha256 BLOB NOT NULL,
                   dim INTEGER NOT NULL,
                   vec BLOB NOT NULL,
                   created REAL NOT NULL,
                   PRIMARY KEY (model, precision, text_sha256)
               ) WITHOUT ROWID"""
        )

    # -- API --------------------------------------------------------------------------------
    def get_many(self, model: str, precision: str, dim: int, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vectors of those `texts` that have one (read-only float32 arrays)."""
        keys = {text_key(t): t for t in texts}
        found: dict[str, np.ndarray] = {}
        items = list(keys)
        for i in range(0, len(items), _CHUNK):
            rows = self._retrying(self._select, model, precision, dim, items[i : i + _CHUNK])
            for k, blob in rows:
                found[keys[bytes(k)]] = np.frombuffer(blob, dtype=np.float32)
        with self._lock:
            self.hits += len(found)
            self.misses += len(keys) - len(found)
        return found

    def _select(self, model: str, precision: str, dim: int, keys: list[bytes]) -> list[tuple[bytes, bytes]]:
        marks = ",".join("?" * len(keys))
        cur = self._connection().execute(
            f"SELECT text_sha256, vec FROM embeddings WHERE model = ? AND precision = ? AND dim = ? "
            f"AND text_sha256 IN ({marks})",
            (model, precision, dim, *keys),
        )
        return [(k, v) for k, v in cur.fetchall() if len(v) == 4 * dim]

    def put_many(self, model: str, precision: str, texts: Sequence[str], vecs: np.ndarray) -> int:
        """Store one float32 row per text in one transaction; returns how many rows were new."""
        vecs = np.asarray(vecs)
        if vecs.dtype != np.float32 or vecs.ndim != 2 or len(vecs) != len(texts):
            raise ValueError(
                f"put_many needs a ({len(texts)}, dim) float32 array, got {vecs.dtype} {vecs.shape}"
            )
        now = time.time()
        dim = int(vecs.shape[1])
        rows = [
            (model, precision, text_key(t), dim, np.ascontiguousarray(v).tobytes(), now)
            for t, v in zip(texts, vecs, strict=True)
        ]
        new = int(self._retrying(self._insert, rows))
        with self._lock:
            self.writes += new
        return new

    def _insert(self, rows: list[tuple[Any, ...]]) -> int:
        c = self._connection()
        c.execute("BEGIN IMMEDIATE")
        try:
            before = c.total_changes
            c.executemany(
                "INSERT OR IGNORE INTO embeddings (model, precision, text_sha256, dim, vec, created) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                rows,
            )
            new = c.total_changes - before
            c.execute("COMMIT")
        except BaseException:
            c.execute("ROLLBACK")
            raise
        return new

    def clear(self) -> int:
        """Delete every entry; returns how many there were."""

        def wipe() -> int:
            c = self._connection()
            n = int(c.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0])
            c.execute("DELETE FROM embeddings")
            return n

        n = int(self._retrying(wipe))
        self._retrying(lambda: self._connection().execute("VACUUM"))
        return n

    def counts(self) -> dict[tuple[str, str], int]:
        """Rows per (model, precision)."""

        def q() -> list[tuple[str, str, int]]:
            return (
                self._connection()
                .execute("SELECT model, precision, COUNT(*) FROM embeddings GROUP BY model, precision")
                .fetchall()
            )

        return {(m, p): int(n) for m, p, n in self._retrying(q)}

    def __len__(self) -> int:
        return sum(self.counts().values())


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(
        prog="python -m tomacs.embedding.cache",
        description="Inspect or clear the persistent embedding cache.",
    )
    ap.add_argument("action", choices=("stats", "clear"))
    ap.add_argument("--path", default=DEFAULT_PATH, help=f"cache file (default: {DEFAULT_PATH})")
    a = ap.parse_args(argv)
    path = Path(a.path)
    if not path.exists():
        print(f"{path}: no embedding cache there (nothing to {a.action})")
        return
    with EmbeddingCache(path) as cache:
        if a.action == "clear":
            print(f"{path}: removed {cache.clear()} cached embeddings")
            return
        counts = cache.counts()
        if not counts:
            print(f"{path}: empty")
        for (model, precision), n in sorted(counts.items()):
            print(f"{path}: {n} embeddings  model={model}  precision={precision}")


if __name__ == "__main__":
    main()
