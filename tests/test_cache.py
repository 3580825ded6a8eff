"""Persistent response cache: stable keys, persistence, concurrent writers, no secrets."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tomacs.backbones.cache import ResponseCache, make_key

REPO = Path(__file__).resolve().parents[1]
MSGS = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "2+2? é"}]


def rec(text: str = "4", **kw: object) -> dict[str, object]:
    return {"model": "m", "text": text, "prompt_tokens": 10, "completion_tokens": 2, "cost_usd": 1e-6, **kw}


def test_key_stable_and_canonical() -> None:
    k = make_key("m", MSGS, {"temperature": 0.2, "max_tokens": 64}, 0)
    assert k == make_key(
        "m", [dict(reversed(list(m.items()))) for m in MSGS], {"max_tokens": 64, "temperature": 0.2}
    )
    assert len(k) == 64 and int(k, 16) >= 0
    # None means "provider default": same key as leaving the parameter out
    assert make_key("m", MSGS, {"temperature": None}) == make_key("m", MSGS, {})
    # golden value: the key must not drift between versions, or every cache is silently invalidated
    assert make_key("gpt-4.1-nano", [{"role": "user", "content": "hi"}], {}, 0) == make_key(
        "gpt-4.1-nano", ({"content": "hi", "role": "user"},), None, 0
    )


def test_key_distinguishes_what_matters() -> None:
    base = make_key("m", MSGS, {"temperature": 0.2}, 0)
    assert make_key("m", MSGS, {"temperature": 0.2}, 1) != base
    assert make_key("m2", MSGS, {"temperature": 0.2}, 0) != base
    assert make_key("m", MSGS, {"temperature": 0.3}, 0) != base
    assert make_key("m", MSGS, {"temperature": 0.2, "top_p": 0.9}, 0) != base
    assert make_key("m", MSGS[:1], {"temperature": 0.2}, 0) != base


def test_agent_slot_separates_agents_and_slot_0_keeps_the_old_key() -> None:
    msgs = [{"role": "user", "content": "hi"}]
    # digests written by the key before it had a slot (commit 5f1e4c8): caches of agent 0, the
    # decision agent (-1) and the judge (-2) must still hit
    old0 = "824103e2c9eee62eac1631ba42c760b79b1145bc15ea53631abaf0fdbc14f006"
    old3 = "576409a575a899e70498577e171d97b188ecaa2e452f1ac7d607516c88419908"
    assert make_key("gpt-4.1-nano", msgs, {"temperature": 0.2}, 0) == old0
    assert make_key("gpt-4.1-nano", msgs, {"temperature": 0.2}, 0, slot=0) == old0
    assert make_key("gpt-4.1-nano", msgs, {"temperature": 0.2}, 3, slot=-1) == old3
    assert make_key("gpt-4.1-nano", msgs, {"temperature": 0.2}, 3, slot=-2) == old3
    # agents after the first: the slot joins the canonical JSON (hashed here by hand)
    doc = (
        '{"messages":[{"content":"hi","role":"user"}],"model":"gpt-4.1-nano",'
        '"params":{"temperature":0.2},"sample_index":0,"slot":1,"v":1}'
    )
    assert (
        make_key("gpt-4.1-nano", msgs, {"temperature": 0.2}, 0, slot=1)
        == hashlib.sha256(doc.encode()).hexdigest()
    )
    keys = {make_key("gpt-4.1-nano", msgs, {"temperature": 0.2}, s, slot=a) for s in (0, 1) for a in range(4)}
    assert len(keys) == 8


def test_roundtrip_and_persistence(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "c.sqlite"
    with ResponseCache(path) as c:
        assert c.get("k1") is None
        assert c.put("k1", rec("hello", tokens_estimated=True, meta={"finish_reason": "stop"}))
        assert not c.put("k1", rec("other"))  # first writer wins
        assert c.stats()["misses"] == 1
    with ResponseCache(path) as c2:
        got = c2.get("k1")
        assert got is not None
        assert got["text"] == "hello" and got["prompt_tokens"] == 10 and got["tokens_estimated"] is True
        assert got["meta"] == {"finish_reason": "stop"} and got["created"] > 0
        assert c2.stats()["hits"] == 1 and len(c2) == 1 and "k1" in c2
    mode = sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_refuses_unknown_or_secret_fields(tmp_path: Path) -> None:
    with ResponseCache(tmp_path / "c.sqlite") as c:
        with pytest.raises(ValueError, match="unknown"):
            c.put("k", rec(api_key="sk-123"))
        with pytest.raises(ValueError, match="secret"):
            c.put("k", rec(meta={"Authorization": "Bearer x"}))
        with pytest.raises(ValueError):
            c.put("k", {"model": "m"})


_WRITER = textwrap.dedent(
    """
    import sys
    from tomacs.backbones.cache import ResponseCache
    path, who, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    c = ResponseCache(path)
    for i in range(n):
        c.put(f"{who}-{i}", {"model": "m", "text": f"{who} {i}", "prompt_tokens": i, "completion_tokens": 1})
        c.put(f"shared-{i}", {"model": "m", "text": f"shared by {who}"})
        assert c.get(f"{who}-{i}")["text"] == f"{who} {i}"
    print(c.stats()["writes"])
    """
)


def test_concurrent_writers_across_processes(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    ResponseCache(path).close()  # create schema first, as a run would
    n = 300
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(path), who, str(n)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=REPO,
        )
        for who in ("a", "b")
    ]
    outs = [p.communicate(timeout=60) for p in procs]
    for p, (_, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err
    writes = sum(int(o.strip()) for o, _ in outs)
    with ResponseCache(path) as c:
        assert len(c) == 3 * n  # a-*, b-*, shared-* (each shared key stored once)
        assert writes == 3 * n
        shared = c.get("shared-7")
        assert shared is not None and shared["text"] in ("shared by a", "shared by b")
