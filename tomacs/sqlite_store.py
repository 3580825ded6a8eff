"""One sqlite file shared by threads and processes: the base of tomacs' persistent caches.

Why: the response cache (LLM replies) and the embedding cache (MiniLM vectors) must both survive
a killed job and be written by every job of a parallel sweep at once. What makes that safe is the
same for both, so it lives here once: WAL journal (DELETE where the filesystem has no shared
memory), `busy_timeout`, autocommit (each write is its own transaction, committed on return), one
connection per instance guarded by a lock, and a jittered retry loop for the lock conflicts that
return SQLITE_BUSY at once instead of waiting (WAL recovery, read-to-write upgrades).
"""

from __future__ import annotations

import random
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Self

__all__ = ["SqliteStore"]

_RETRYABLE = ("locked", "busy")


class SqliteStore:
    """A sqlite file with retrying access; subclasses create their tables and name their error."""

    error: type[Exception] = RuntimeError  # raised when the file stays unusable after retrying
    label = "sqlite store"  # how errors name the file's role ("response cache", ...)

    def __init__(self, path: str | Path, busy_timeout_s: float = 30.0, max_retries: int = 20) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.busy_timeout_s = busy_timeout_s
        self.max_retries = max_retries
        self.hits = 0
        self.misses = 0
        self.writes = 0
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = sqlite3.connect(
            str(self.path), timeout=busy_timeout_s, isolation_level=None, check_same_thread=False
        )
        self._retrying(self._init_db)

    def _init_db(self) -> None:
        c = self._connection()
        c.execute(f"PRAGMA busy_timeout={int(self.busy_timeout_s * 1000)}")
        mode = c.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if str(mode).lower() != "wal":  # e.g. a network filesystem without shared memory
            c.execute("PRAGMA journal_mode=DELETE")
        # NORMAL in WAL mode: a commit survives a process crash (only an OS crash can lose the last
        # few), and commit-per-insert stays cheap enough for hundreds of writes per second.
        c.execute("PRAGMA synchronous=NORMAL")
        self._create_tables(c)

    def _create_tables(self, c: sqlite3.Connection) -> None:
        raise NotImplementedError

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise self.error(f"{self.label} {self.path} is closed")
        return self._conn

    def _retrying(self, fn: Any, *args: Any) -> Any:
        """Run `fn` under the lock, retrying with jittered backoff while the database is locked.

        sqlite's busy_timeout already waits for locks, but some lock conflicts (e.g. WAL recovery,
        upgrading a read to a write transaction) return SQLITE_BUSY immediately; we retry those.
        """
        delay = 0.01
        for attempt in range(self.max_retries + 1):
            try:
                with self._lock:
                    return fn(*args)
            except sqlite3.OperationalError as e:
                msg = str(e).lower()
                if not any(s in msg for s in _RETRYABLE) or attempt == self.max_retries:
                    raise self.error(f"{self.label} {self.path}: {e}") from e
                time.sleep(delay * (0.5 + random.random()))
                delay = min(delay * 2, 1.0)
        raise AssertionError("unreachable")

    def stats(self) -> dict[str, object]:
        """This instance's counters (other processes keep their own)."""
        with self._lock:
            return {"path": str(self.path), "hits": self.hits, "misses": self.misses, "writes": self.writes}

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
