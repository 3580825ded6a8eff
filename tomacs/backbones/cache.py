"""Content-addressed persistent response cache (sqlite).

Why: LLM calls cost money and time, and tomacs re-runs the same prompts constantly (resumed jobs,
sweeps that share a baseline, evaluation of several methods on the same agents). Every response is
written the moment it arrives, so a crash or a stopped run loses nothing already paid for, and any
later run - in this process or another - that asks the identical question gets it back for free.

Design choices:
* Key = sha256 of canonical JSON of {model, messages, sampling params, sample_index, slot} (see
  `make_key`). Parameters whose value is None are dropped, so "provider default" keys the same
  whether the field is absent or null. `sample_index` separates independent samples of the same
  prompt (self-consistency, repeated seeds) that would otherwise collide. `slot` (the agent's
  index) does the same for agents whose prompts are byte-identical (adversaries of one question,
  repeated roles): each is its own call, as in the papers. Slot 0 (and the decision agent and
  judge) leave it out, so their keys are the ones written before the slot existed.
* One row per key, `INSERT OR IGNORE`: the first response stored for a key wins, so concurrent
  workers that race on one prompt all end up reading the same answer.
* WAL journal + `busy_timeout` + our own retry loop make concurrent writers in several processes
  (Hydra multirun / submitit sweeps sharing `outputs/cache/responses.sqlite`) safe; each insert is
  its own transaction, committed immediately.
* Only an allow-list of fields is stored (text, token usage, cost, model, created time and a small
  `meta` dict checked for secret-looking keys). Request headers and API keys are never stored.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Mapping, Sequence
from typing import Any

from tomacs.sqlite_store import SqliteStore

__all__ = ["CacheError", "ResponseCache", "canonical_json", "make_key"]

SCHEMA_VERSION = 1
_FIELDS = ("model", "text", "prompt_tokens", "completion_tokens", "cost_usd", "tokens_estimated", "meta")
_SECRET_HINTS = ("api_key", "apikey", "secret", "authorization", "header", "password", "bearer", "credential")


class CacheError(RuntimeError):
    """The cache could not be read or written even after retrying."""


def canonical_json(obj: object) -> str:
    """Deterministic JSON: sorted keys, no whitespace, UTF-8 kept as is, None-valued keys dropped."""
    return json.dumps(_drop_none(obj), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _drop_none(obj: object) -> Any:
    if isinstance(obj, Mapping):
        return {str(k): _drop_none(v) for k, v in obj.items() if v is not None}
    if isinstance(obj, (list, tuple)):
        return [_drop_none(v) for v in obj]
    return obj


def make_key(
    model: str,
    messages: Sequence[Mapping[str, object]],
    params: Mapping[str, object] | None = None,
    sample_index: int = 0,
    slot: int = 0,
) -> str:
    """sha256 hex digest identifying one completion request.

    `params` are the sampling parameters that change the output distribution (temperature, top_p,
    max_tokens, stop, seed, ...). Never pass transport settings (api_base, timeouts, keys) here:
    they do not change the answer and keys must not influence anything persisted.
    `slot` is the asking agent's index: two agents asking the same thing draw two samples, one
    agent asking again (a resumed run) gets its own back. Slots <= 0 (agent 0, the decision agent
    -1, the judge -2) are not part of the key, which keeps caches written before it valid.
    """
    payload: dict[str, Any] = {
        "v": SCHEMA_VERSION,
        "model": model,
        "messages": [dict(m) for m in messages],
        "params": dict(params or {}),
        "sample_index": int(sample_index),
    }
    if int(slot) > 0:
        payload["slot"] = int(slot)
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


def _check_meta(meta: Mapping[str, object]) -> None:
    for k in meta:
        low = str(k).lower()
        if any(h in low for h in _SECRET_HINTS):
            raise ValueError(f"refusing to store meta field {k!r} in the response cache (looks secret)")


class ResponseCache(SqliteStore):
    """A sqlite-backed map key -> response record, safe across threads and processes.

    Records are dicts with `text`, `prompt_tokens`, `completion_tokens`, `cost_usd`,
    `tokens_estimated`, `model`, optional `meta` (small JSON-able dict); `get` adds `created`
    (unix time the row was written) and `key`.
    """

    error = CacheError
    label = "response cache"

    def _create_tables(self, c: sqlite3.Connection) -> None:
        c.execute(
            """CREATE TABLE IF NOT EXISTS responses (
                   key TEXT PRIMARY KEY,
                   model TEXT,
                   text TEXT NOT NULL,
                   prompt_tokens INTEGER NOT NULL DEFAULT 0,
                   completion_tokens INTEGER NOT NULL DEFAULT 0,
                   cost_usd REAL NOT NULL DEFAULT 0,
                   tokens_estimated INTEGER NOT NULL DEFAULT 0,
                   meta TEXT,
                   created REAL NOT NULL
               )"""
        )

    # -- API --------------------------------------------------------------------------------
    def get(self, key: str) -> dict[str, Any] | None:
        """The stored record for `key`, or None; counts a hit or a miss."""
        row = self._retrying(self._get, key)
        with self._lock:
            if row is None:
                self.misses += 1
            else:
                self.hits += 1
        return row

    def _get(self, key: str) -> dict[str, object] | None:
        cur = self._connection().execute(
            "SELECT model, text, prompt_tokens, completion_tokens, cost_usd, tokens_estimated, meta, created "
            "FROM responses WHERE key = ?",
            (key,),
        )
        row = cur.fetchone()
        if row is None:
            return None
        model, text, pt, ct, cost, est, meta, created = row
        return {
            "key": key,
            "model": model,
            "text": text,
            "prompt_tokens": int(pt),
            "completion_tokens": int(ct),
            "cost_usd": float(cost),
            "tokens_estimated": bool(est),
            "meta": json.loads(meta) if meta else {},
            "created": float(created),
        }

    def put(self, key: str, record: Mapping[str, Any]) -> bool:
        """Store `record` under `key` and commit at once. Returns False if the key already existed.

        Unknown fields raise ValueError rather than being stored silently: the allow-list is what
        guarantees that nothing secret (API keys, headers) ever reaches the file.
        """
        unknown = set(record) - set(_FIELDS) - {"key", "created"}
        if unknown:
            raise ValueError(f"unknown response-cache fields {sorted(unknown)}; allowed: {list(_FIELDS)}")
        if "text" not in record or not isinstance(record["text"], str):
            raise ValueError("a cached response needs a string `text`")
        meta = dict(record.get("meta") or {})
        _check_meta(meta)
        row = (
            key,
            record.get("model"),
            record["text"],
            int(record.get("prompt_tokens") or 0),
            int(record.get("completion_tokens") or 0),
            float(record.get("cost_usd") or 0.0),
            1 if record.get("tokens_estimated") else 0,
            canonical_json(meta) if meta else None,
            time.time(),
        )
        inserted = self._retrying(self._put, row)
        if inserted:
            with self._lock:
                self.writes += 1
        return bool(inserted)

    def _put(self, row: tuple[Any, ...]) -> bool:
        cur = self._connection().execute(
            "INSERT OR IGNORE INTO responses (key, model, text, prompt_tokens, completion_tokens, cost_usd, "
            "tokens_estimated, meta, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            row,
        )
        return cur.rowcount == 1  # autocommit (isolation_level=None): committed on return

    def __contains__(self, key: str) -> bool:
        return self._retrying(self._get, key) is not None

    def __len__(self) -> int:
        def count() -> int:
            return int(self._connection().execute("SELECT COUNT(*) FROM responses").fetchone()[0])

        return int(self._retrying(count))

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.path)!r}, hits={self.hits}, misses={self.misses})"
