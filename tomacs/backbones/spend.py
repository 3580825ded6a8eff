"""Spend caps for paid LLM calls: per job and per sweep, shared across processes (sqlite ledger).

Why: a real-LLM sweep can cost thousands of dollars and nothing stopped it. A cap must hold across
the parallel processes of a sweep and across resumes, so spend lives in a file, not in memory:
`<run or sweep dir>/.tomacs_spend.sqlite`, one row per scope ("job:<job dir>", "sweep"). It is
only created when a cap is set.

A paid call is a request that is not a cache hit (nor answered by an identical request in flight).
Before sending, a call *reserves*: one transaction checks every cap against what was paid plus
what is reserved by calls still in flight (in every process), and records the reservation. The
reply settles it with its real cost; a call that fails for good releases it (nothing was paid).

Guarantee (what docs/howto/paid-study.md states):
- `max_calls` / `sweep_max_calls`: never exceeded; reservations count, not completions.
- `max_usd` / `sweep_max_usd`: a call is sent only while paid + reserved + this call's estimate is
  below the cap; each in-flight call reserves the mean cost of this process's paid calls so far
  (before its first reply: the mean of what the scope paid; 0 in a fresh ledger). So the spend can
  pass the cap only by the difference between the real and the estimated cost of calls already in
  flight when it was reached: at most the cost of `max_concurrency` calls per process (plus calls
  waiting out a retry), and usually much less.
- A cap of 0 sends nothing: only cached replies are used.
Reservations of a process that died are dropped (same host: its pid is gone; any host: after the
longest time a call can take, timeout x attempts plus backoff).
"""

from __future__ import annotations

import os
import socket
import sqlite3
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tomacs.sqlite_store import SqliteStore

__all__ = [
    "LEDGER_NAME",
    "SpendCapReached",
    "SpendCaps",
    "SpendLedger",
    "current_scope",
    "raised_argv",
    "set_scope",
]

LEDGER_NAME = ".tomacs_spend.sqlite"
EXIT_CODE = 4  # documented in docs/howto/paid-study.md and outputs/README.md


class SpendLedgerError(RuntimeError):
    """The ledger could not be read or written even after retrying."""


@dataclass(frozen=True)
class SpendCaps:
    """The caps one backbone obeys; None = no cap."""

    max_usd: float | None = None
    max_calls: int | None = None
    sweep_max_usd: float | None = None
    sweep_max_calls: int | None = None

    def any(self) -> bool:
        return any(
            v is not None for v in (self.max_usd, self.max_calls, self.sweep_max_usd, self.sweep_max_calls)
        )

    def needs_price(self) -> bool:
        return self.max_usd is not None or self.sweep_max_usd is not None


@dataclass(frozen=True)
class _Cap:
    key: str  # the config key, e.g. "backbone.max_usd"
    scope: str
    limit: float
    dollars: bool


class SpendCapReached(RuntimeError):
    """A cap refuses the next paid call. Everything paid for is cached; the job resumes."""

    def __init__(self, key: str, limit: float, paid_usd: float, paid_calls: int, reserved: int) -> None:
        self.key, self.limit, self.paid_usd, self.paid_calls, self.reserved = (
            key,
            limit,
            paid_usd,
            paid_calls,
            reserved,
        )
        whose = "this sweep's jobs have" if key.startswith("backbone.sweep_") else "this job has"
        shown = f"{limit:g}" if key.endswith("_usd") else f"{int(limit)}"
        super().__init__(
            f"spend cap reached: {key}={shown} ({whose} paid ${paid_usd:.4f} for {paid_calls} calls"
            + (f", {reserved} still in flight" if reserved else "")
            + ")"
        )

    def raised(self) -> str:
        """The override that lets the job go on: the cap doubled (a cap of 0: no cap)."""
        new = (
            "null"
            if self.limit <= 0
            else (f"{self.limit * 2:g}" if self.key.endswith("_usd") else str(int(self.limit) * 2))
        )
        return f"{self.key}={new}"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class SpendLedger(SqliteStore):
    """Paid and reserved calls and dollars per scope, shared by every process of a sweep."""

    error = SpendLedgerError
    label = "spend ledger"

    def _create_tables(self, c: sqlite3.Connection) -> None:
        c.execute(
            "CREATE TABLE IF NOT EXISTS paid "
            "(scope TEXT PRIMARY KEY, calls INTEGER NOT NULL, usd REAL NOT NULL)"
        )
        c.execute(
            """CREATE TABLE IF NOT EXISTS reserved (
                   id TEXT NOT NULL, scope TEXT NOT NULL, usd REAL NOT NULL,
                   host TEXT NOT NULL, pid INTEGER NOT NULL, expires REAL NOT NULL,
                   PRIMARY KEY (id, scope))"""
        )
        c.execute(
            "CREATE TABLE IF NOT EXISTS stops (time REAL NOT NULL, job TEXT NOT NULL, key TEXT NOT NULL, "
            "cap REAL NOT NULL, message TEXT NOT NULL)"
        )

    def _txn(self, fn: Any) -> Any:
        def run() -> Any:
            c = self._connection()
            c.execute("BEGIN IMMEDIATE")
            try:
                out = fn(c)
                c.execute("COMMIT")
                return out
            except BaseException:
                c.execute("ROLLBACK")
                raise

        return self._retrying(run)

    @staticmethod
    def _purge(c: sqlite3.Connection, now: float) -> None:
        c.execute("DELETE FROM reserved WHERE expires < ?", (now,))
        host = socket.gethostname()
        for (pid,) in c.execute("SELECT DISTINCT pid FROM reserved WHERE host = ?", (host,)).fetchall():
            if pid != os.getpid() and not _alive(int(pid)):
                c.execute("DELETE FROM reserved WHERE host = ? AND pid = ?", (host, pid))

    @staticmethod
    def _totals(c: sqlite3.Connection, scope: str) -> tuple[int, float, int, float]:
        row = c.execute("SELECT calls, usd FROM paid WHERE scope = ?", (scope,)).fetchone()
        res = c.execute(
            "SELECT COUNT(*), COALESCE(SUM(usd), 0) FROM reserved WHERE scope = ?", (scope,)
        ).fetchone()
        calls, usd = row if row else (0, 0.0)
        return int(calls), float(usd), int(res[0]), float(res[1])

    def reserve(self, caps: list[_Cap], estimate_usd: float | None, ttl_s: float, scopes: list[str]) -> str:
        """Reserve one call in every scope of `scopes` (the job's and the sweep's, capped or not, so
        that a cap added on a resume counts what was paid before), checking every cap at once;
        or raise SpendCapReached naming the first one it would break (nothing is reserved then)."""
        rid = uuid.uuid4().hex
        scopes = sorted({*scopes, *(cap.scope for cap in caps)})

        def txn(c: sqlite3.Connection) -> str:
            now = time.time()
            self._purge(c, now)
            est: dict[str, float] = {}
            for scope in scopes:
                calls, usd, _, _ = self._totals(c, scope)
                # a process with no reply yet estimates by what the scope's calls cost so far
                est[scope] = estimate_usd if estimate_usd is not None else (usd / calls if calls else 0.0)
            for cap in caps:
                calls, usd, r_calls, r_usd = self._totals(c, cap.scope)
                over = (
                    usd + r_usd + est[cap.scope] >= cap.limit
                    if cap.dollars
                    else calls + r_calls + 1 > cap.limit
                )
                if over:
                    raise SpendCapReached(cap.key, cap.limit, usd, calls, r_calls)
            for scope in scopes:
                c.execute(
                    "INSERT INTO reserved (id, scope, usd, host, pid, expires) VALUES (?, ?, ?, ?, ?, ?)",
                    (rid, scope, est[scope], socket.gethostname(), os.getpid(), now + ttl_s),
                )
            return rid

        return str(self._txn(txn))

    def settle(self, rid: str, usd: float) -> None:
        """The reserved call was paid `usd`: count it in every scope it reserved in."""

        def txn(c: sqlite3.Connection) -> None:
            rows = c.execute("SELECT scope FROM reserved WHERE id = ?", (rid,)).fetchall()
            for (scope,) in rows:
                c.execute(
                    "INSERT INTO paid (scope, calls, usd) VALUES (?, 1, ?) "
                    "ON CONFLICT(scope) DO UPDATE SET calls = calls + 1, usd = usd + excluded.usd",
                    (scope, usd),
                )
            c.execute("DELETE FROM reserved WHERE id = ?", (rid,))

        self._txn(txn)

    def release(self, rid: str) -> None:
        """The reserved call was never paid (it failed for good, or was cancelled)."""
        self._txn(lambda c: c.execute("DELETE FROM reserved WHERE id = ?", (rid,)))

    def record_stop(self, job: str, exc: SpendCapReached) -> None:
        """A job of a sweep stopped on a cap: the sweep's end reads this to print the one resume line."""
        row = (time.time(), job, exc.key, exc.limit, str(exc))
        self._txn(
            lambda c: c.execute(
                "INSERT INTO stops (time, job, key, cap, message) VALUES (?, ?, ?, ?, ?)", row
            )
        )

    def stops_since(self, t: float) -> list[SpendCapReached]:
        """The caps that stopped jobs since `t`, one per cap key (the last one recorded)."""
        rows = self._txn(
            lambda c: c.execute("SELECT key, cap FROM stops WHERE time >= ? ORDER BY time", (t,)).fetchall()
        )
        return [SpendCapReached(k, float(cap), 0.0, 0, 0) for k, cap in dict(rows).items()]

    def paid(self, scope: str) -> tuple[int, float]:
        """(calls, usd) paid so far in `scope`."""
        calls, usd, _, _ = self._txn(lambda c: self._totals(c, scope))
        return calls, usd


class SpendGuard:
    """A backbone's caps bound to its ledger and scopes."""

    def __init__(self, caps: SpendCaps, ledger: SpendLedger, job_scope: str, ttl_s: float) -> None:
        self.caps = caps
        self.ledger = ledger
        self.job_scope = job_scope
        self.ttl_s = ttl_s
        listed = [
            ("backbone.max_calls", job_scope, caps.max_calls, False),
            ("backbone.max_usd", job_scope, caps.max_usd, True),
            ("backbone.sweep_max_calls", "sweep", caps.sweep_max_calls, False),
            ("backbone.sweep_max_usd", "sweep", caps.sweep_max_usd, True),
        ]
        self._caps = [_Cap(k, s, float(v), d) for k, s, v, d in listed if v is not None]

    def reserve(self, estimate_usd: float | None) -> str:
        """`estimate_usd`: what the call is expected to cost; None = the mean the scope paid so far."""
        return self.ledger.reserve(self._caps, estimate_usd, self.ttl_s, [self.job_scope, "sweep"])

    def settle(self, rid: str, usd: float) -> None:
        self.ledger.settle(rid, usd)

    def release(self, rid: str) -> None:
        self.ledger.release(rid)

    def final(self, exc: SpendCapReached) -> SpendCapReached:
        """The same refusal with the totals once the calls in flight have landed (what the user
        is told is what was paid, not what was known when the cap was first refused)."""
        scope = "sweep" if exc.key.startswith("backbone.sweep_") else self.job_scope
        calls, usd, r_calls, _ = self.ledger._txn(lambda c: self.ledger._totals(c, scope))
        return SpendCapReached(exc.key, exc.limit, usd, calls, r_calls)


# Where the ledger of the job running in this process lives, set by the Hydra entry point for
# every job (a joblib worker runs its jobs one after another, so a module value is the job's).
_scope: dict[str, Any] = {"dir": None, "job": "job:."}


def set_scope(ledger_dir: Path | None, job: str = ".") -> None:
    """The run (single job) or sweep directory that holds the ledger, and this job's path in it."""
    _scope["dir"] = None if ledger_dir is None else Path(ledger_dir)
    _scope["job"] = f"job:{job}"


def current_scope() -> tuple[Path | None, str]:
    """(ledger file or None, this job's scope)."""
    d = _scope["dir"]
    return (None if d is None else d / LEDGER_NAME), str(_scope["job"])


def raised_argv(argv: list[str], stops: list[SpendCapReached]) -> list[str]:
    """`argv` (the command as typed) with every cap that stopped a job doubled (see
    SpendCapReached.raised). The caller reads the command line: a backbone knows no run directory."""
    for exc in stops:
        key = exc.key
        argv = [a for a in argv if not a.lstrip("+").startswith(key + "=")] + [exc.raised()]
    return argv
