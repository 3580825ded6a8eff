"""Request and token rate limits shared by every process that talks to one endpoint (no daemon).

Why: a sweep runs its jobs in parallel processes (joblib, SLURM array on one node), and each opens
`max_concurrency` connections. A provider's limit (requests or tokens per minute) is per account,
so per-process pacing cannot respect it: two workers each at the limit send twice the limit and
collect 429s. The shared state is one sqlite row per bucket (WAL, `BEGIN IMMEDIATE`), next to the
response cache, so every process on the machine draws from the same bucket.

The bucket reserves ahead: `take` always succeeds and returns how long the caller must wait before
sending, leaving the bucket negative by what is owed. Callers therefore queue in the order they
asked, with one sqlite transaction per request and no polling. The arithmetic is the pure function
`take` (tested with a fake clock); `SharedBucket` only stores its result.

- rpm: capacity 1 request, refill rpm/60 per second: requests are spaced evenly, 60/rpm s apart
  over all processes. A provider that quantizes its per-minute limit into seconds then never sees
  a burst above the limit.
- tpm: capacity one second's worth of tokens (tpm/60). A request takes its estimated tokens
  (prompt + max_tokens or the mean completion so far); the difference to the real usage is settled
  after the reply (`adjust`), so later callers wait for what was really used.
- A 429 with Retry-After pauses the whole bucket (every process) until then (`pause`).
"""

from __future__ import annotations

import email.utils
import socket
import sqlite3
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tomacs.sqlite_store import SqliteStore

__all__ = ["RateLimitError", "SharedBucket", "parse_retry_after", "retry_after_of", "take"]

RETRY_AFTER_MAX_S = 600.0  # a provider asking for longer than this is treated as asking for this


class RateLimitError(RuntimeError):
    """The shared rate-limit file could not be read or written even after retrying."""


@dataclass(frozen=True)
class BucketState:
    tokens: float  # may be negative: what callers already promised to wait for
    updated: float  # clock time of the last change


def take(
    state: BucketState | None, now: float, rate: float, capacity: float, n: float
) -> tuple[BucketState, float]:
    """Refill `state` up to `now`, take `n`, and say how long the caller waits before sending.

    A bucket seen for the first time is full. Tokens refill at `rate` per second up to
    `capacity`; taking more than there is leaves a debt that the caller (and every later one)
    waits out: wait = debt / rate."""
    if rate <= 0:
        raise ValueError(f"a rate limit must be positive (got {rate})")
    tokens = capacity if state is None else min(capacity, state.tokens + max(0.0, now - state.updated) * rate)
    tokens -= n
    return BucketState(tokens, now), max(0.0, -tokens / rate)


def pause(state: BucketState | None, now: float, rate: float, capacity: float, delay: float) -> BucketState:
    """The bucket after a provider said "retry after `delay` s": the next `take` of one token waits
    at least `delay`, whoever asks. A bucket already owing more is left as it is."""
    tokens = capacity if state is None else min(capacity, state.tokens + max(0.0, now - state.updated) * rate)
    return BucketState(min(tokens, 1.0 - delay * rate), now)


class SharedBucket(SqliteStore):
    """Token buckets in one sqlite file, keyed by name (endpoint, model and what is counted)."""

    error = RateLimitError
    label = "rate-limit state"

    def __init__(self, path: str | Path, clock: Callable[[], float] = time.time) -> None:
        super().__init__(path)
        self.clock = clock  # wall time: the same in every process on the machine

    def _create_tables(self, c: sqlite3.Connection) -> None:
        c.execute(
            "CREATE TABLE IF NOT EXISTS buckets "
            "(key TEXT PRIMARY KEY, tokens REAL NOT NULL, updated REAL NOT NULL)"
        )

    def _update(
        self, key: str, change: Callable[[BucketState | None, float], tuple[BucketState, float]]
    ) -> float:
        def txn() -> float:
            c = self._connection()
            c.execute("BEGIN IMMEDIATE")
            try:
                row = c.execute("SELECT tokens, updated FROM buckets WHERE key = ?", (key,)).fetchone()
                new, out = change(BucketState(*row) if row else None, self.clock())
                c.execute(
                    "INSERT OR REPLACE INTO buckets (key, tokens, updated) VALUES (?, ?, ?)",
                    (key, new.tokens, new.updated),
                )
                c.execute("COMMIT")
                return out
            except BaseException:
                c.execute("ROLLBACK")
                raise

        return float(self._retrying(txn))

    def take(self, key: str, rate: float, capacity: float, n: float = 1.0) -> float:
        """Take `n` tokens; returns the seconds to wait before sending."""
        return self._update(key, lambda s, now: take(s, now, rate, capacity, n))

    def adjust(self, key: str, rate: float, capacity: float, delta: float) -> None:
        """Settle an estimate: take `delta` more tokens (negative: give back), waiting for nothing."""
        self._update(key, lambda s, now: take(s, now, rate, capacity, delta))

    def pause(self, key: str, rate: float, capacity: float, delay: float) -> None:
        self._update(key, lambda s, now: (pause(s, now, rate, capacity, delay), 0.0))

    def tokens(self, key: str) -> BucketState | None:
        def get() -> BucketState | None:
            row = (
                self._connection()
                .execute("SELECT tokens, updated FROM buckets WHERE key = ?", (key,))
                .fetchone()
            )
            return BucketState(*row) if row else None

        return self._retrying(get)


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After value: delta-seconds ("2", "1.5") or an HTTP-date
    ("Wed, 21 Oct 2026 07:28:00 GMT"), counted from `now` (default: the clock). A date in the
    past means 0; garbage means None (the caller's own backoff applies)."""
    if value is None:
        return None
    text = str(value).strip()
    if not text:
        return None
    try:
        secs = float(text)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None or when.tzinfo is None:
            return None
        secs = when.timestamp() - (time.time() if now is None else now)
    if secs != secs:  # NaN
        return None
    return min(RETRY_AFTER_MAX_S, max(0.0, secs))


def _header(headers: Any, name: str) -> str | None:
    if not headers:
        return None
    try:
        if isinstance(headers, Mapping) and not hasattr(headers, "getlist"):
            lower = {str(k).lower(): v for k, v in headers.items()}
            v = lower.get(name)
        else:
            v = headers.get(name)
    except (AttributeError, TypeError):
        return None
    return None if v is None else str(v)


def retry_after_of(exc: BaseException, now: float | None = None) -> float | None:
    """The wait a rate-limit error asks for, from wherever litellm put the provider's headers:
    `exc.response.headers` (the vendor's, on litellm.RateLimitError), `exc.headers`,
    `exc.litellm_response_headers`. `retry-after-ms` (OpenAI) wins over `retry-after`."""
    sources = (
        getattr(getattr(exc, "response", None), "headers", None),
        getattr(exc, "headers", None),
        getattr(exc, "litellm_response_headers", None),
    )
    for headers in sources:
        ms = _header(headers, "retry-after-ms")
        if ms is not None:
            secs = parse_retry_after(ms, now)
            if secs is not None:
                return min(RETRY_AFTER_MAX_S, secs / 1000.0)
        secs = parse_retry_after(_header(headers, "retry-after"), now)
        if secs is not None:
            return secs
    return None


def default_state_path(cache_path: str | Path | None) -> Path:
    """Beside the response cache (the file every job of a sweep already shares), one per host:
    a bucket in a file that processes on other machines also write would pace them all as one."""
    base = Path(cache_path).parent if cache_path else Path("outputs/cache")
    return base / f"ratelimit-{socket.gethostname()}.sqlite"
