"""Shared rate limits: the token bucket's arithmetic on a fake clock, Retry-After in both forms, and
the bucket pacing real requests against the fake server's rpm limit."""

from __future__ import annotations

import asyncio
import email.utils
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest

from tomacs.backbones.llm import LiteLLMBackbone
from tomacs.backbones.ratelimit import (
    BucketState,
    SharedBucket,
    parse_retry_after,
    pause,
    retry_after_of,
    take,
)
from tomacs.testing.fake_openai_server import FakeOpenAIServer
from tomacs.testing.requests import plain_request as req


# -- arithmetic (hand-computed) ----------------------------------------------------------------
def test_take_from_a_new_bucket_starts_full() -> None:
    state, wait = take(None, now=100.0, rate=2.0, capacity=3.0, n=1)
    assert state == BucketState(2.0, 100.0) and wait == 0.0


def test_take_refills_at_rate_up_to_capacity() -> None:
    # 0.5 tokens left at t=10; 1 s later at 2/s: 0.5 + 2 = 2.5 (< capacity 3); take 1 -> 1.5
    state, wait = take(BucketState(0.5, 10.0), now=11.0, rate=2.0, capacity=3.0, n=1)
    assert state == BucketState(1.5, 11.0) and wait == 0.0
    # 100 s later the refill stops at capacity 3; take 1 -> 2
    state, wait = take(BucketState(0.5, 10.0), now=110.0, rate=2.0, capacity=3.0, n=1)
    assert state == BucketState(2.0, 110.0) and wait == 0.0


def test_take_beyond_the_tokens_queues_callers_in_order() -> None:
    # rpm 60 -> 1 token/s, capacity 1: four callers at the same instant wait 0, 1, 2, 3 s
    state, waits = None, []
    for _ in range(4):
        state, w = take(state, now=50.0, rate=1.0, capacity=1.0, n=1)
        waits.append(w)
    assert waits == [0.0, 1.0, 2.0, 3.0]
    assert state == BucketState(-3.0, 50.0)
    # 1.5 s later the debt is 1.5: the next caller waits 2.5 s (its slot is at 54.0 = 50 + 4)
    _, w = take(state, now=51.5, rate=1.0, capacity=1.0, n=1)
    assert w == pytest.approx(2.5)


def test_take_counts_tokens_and_gives_back_negative_amounts() -> None:
    # tpm 6000 -> 100 tokens/s, capacity 100: a 250-token request waits (250 - 100) / 100 = 1.5 s
    state, w = take(None, now=0.0, rate=100.0, capacity=100.0, n=250)
    assert w == pytest.approx(1.5) and state.tokens == pytest.approx(-150.0)
    # the reply used 50 tokens fewer than estimated: given back, the debt is 100
    state, _ = take(state, now=0.0, rate=100.0, capacity=100.0, n=-50)
    assert state.tokens == pytest.approx(-100.0)
    # so the next 1-token request waits (100 + 1) / 100 s instead of (150 + 1) / 100 s
    _, w = take(state, now=0.0, rate=100.0, capacity=100.0, n=1)
    assert w == pytest.approx(1.01)


def test_pause_makes_the_next_caller_wait_the_retry_after() -> None:
    state = pause(BucketState(1.0, 0.0), now=0.0, rate=10.0, capacity=1.0, delay=2.0)
    assert state.tokens == pytest.approx(1.0 - 20.0)
    _, w = take(state, now=0.0, rate=10.0, capacity=1.0, n=1)
    assert w == pytest.approx(2.0)
    # a bucket already owing more than the pause is left as it is
    deep = BucketState(-50.0, 0.0)
    assert pause(deep, now=0.0, rate=10.0, capacity=1.0, delay=2.0) == deep


def test_shared_bucket_on_a_fake_clock(tmp_path: Path) -> None:
    clock = [1000.0]
    b = SharedBucket(tmp_path / "rl.sqlite", clock=lambda: clock[0])
    assert [b.take("k", 2.0, 1.0) for _ in range(3)] == [0.0, 0.5, 1.0]
    clock[0] += 10.0  # refilled to capacity 1
    assert b.take("k", 2.0, 1.0) == 0.0
    assert b.take("other", 2.0, 1.0) == 0.0  # buckets are independent
    # a second handle on the same file (another process) sees the same state
    b2 = SharedBucket(tmp_path / "rl.sqlite", clock=lambda: clock[0])
    assert b2.take("k", 2.0, 1.0) == 0.5
    b.close()
    b2.close()


def test_rate_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        take(None, 0.0, 0.0, 1.0, 1)


# -- Retry-After -------------------------------------------------------------------------------
def test_parse_retry_after_seconds_and_http_date() -> None:
    assert parse_retry_after("2") == 2.0
    assert parse_retry_after(" 1.5 ") == 1.5
    assert parse_retry_after("-3") == 0.0
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None and parse_retry_after("") is None
    now = email.utils.parsedate_to_datetime("Wed, 21 Oct 2026 07:28:00 GMT").timestamp()
    assert parse_retry_after("Wed, 21 Oct 2026 07:28:05 GMT", now=now) == pytest.approx(5.0)
    assert parse_retry_after("Wed, 21 Oct 2026 07:27:00 GMT", now=now) == 0.0  # in the past
    assert parse_retry_after("99999999") == 600.0  # capped


def test_retry_after_is_read_where_litellm_keeps_it() -> None:
    vendor = SimpleNamespace(response=httpx.Response(429, headers={"Retry-After": "3"}))
    assert retry_after_of(vendor) == 3.0
    assert retry_after_of(SimpleNamespace(response=None, headers={"retry-after": "4"})) == 4.0
    ms = SimpleNamespace(response=httpx.Response(429, headers={"retry-after-ms": "250", "retry-after": "1"}))
    assert retry_after_of(ms) == 0.25
    assert retry_after_of(ValueError("x")) is None


@pytest.mark.parametrize(("action", "least"), [("429:1", 0.95), ("429-date:2", 0.9)])
def test_retry_after_is_honoured_beyond_backoff_max(tmp_path: Path, action: str, least: float) -> None:
    with FakeOpenAIServer() as srv:
        bb = LiteLLMBackbone(
            "openai/fake", api_base=srv.base_url, cache=False, backoff_base=0.01, backoff_max=0.05, timeout=5
        )
        asyncio.run(bb.generate([req("warm-up")]))  # litellm's lazy setup is not part of the wait
        srv.push(action)
        t0 = time.monotonic()
        (reply,) = asyncio.run(bb.generate([req("limited")]))
        elapsed = time.monotonic() - t0
    assert reply.retries == 1 and bb.stats()["rate_limited"] == 1
    assert elapsed >= least, elapsed  # today's code waited at most backoff_max = 0.05 s


# -- pacing real requests, across processes ----------------------------------------------------
WORKER = textwrap.dedent(
    """
    import asyncio, json, sys
    from tomacs.backbones.llm import LiteLLMBackbone
    from tomacs.testing.requests import plain_request as req
    base, state, tag = sys.argv[1], sys.argv[2], sys.argv[3]
    # litellm's first call sets itself up for a second or more; a request paced before that would
    # be sent late, bunched with the next ones (a real sweep pays this once per process)
    warm = LiteLLMBackbone("openai/fake", api_base=base, cache=False)
    asyncio.run(warm.generate([req(f"warm-up {tag}")]))
    bb = LiteLLMBackbone("openai/fake", api_base=base, cache=False, rpm=600, rate_state=state,
                         max_concurrency=8, backoff_base=0.01, backoff_max=0.05, timeout=10)
    asyncio.run(bb.generate([req(f"{tag} {i}") for i in range(25)]))
    print(json.dumps(bb.stats()))
    """
)


@pytest.mark.slow
def test_two_processes_share_one_rpm_bucket(tmp_path: Path) -> None:
    # server: 600 rpm = 10/s with a 1 s burst; clients: 2 x 25 requests, 8 in flight each. Paced
    # together they need >= 49 / 10 s and get no 429; each alone at 600 rpm would send 20/s.
    script = WORKER
    state = tmp_path / "rl.sqlite"
    with FakeOpenAIServer(rpm=600, latency=0.2) as srv:
        t0 = time.monotonic()
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", script, srv.base_url, str(state), t], stdout=subprocess.PIPE
            )
            for t in ("a", "b")
        ]
        outs = [p.communicate(timeout=120)[0] for p in procs]
        elapsed = time.monotonic() - t0
        assert all(p.returncode == 0 for p in procs)
        assert srv.ok == 52 and srv.rate_limited == 0, (srv.ok, srv.rate_limited)
    assert elapsed >= 4.9
    assert all(b'"rate_limited": 0' in o for o in outs)


def test_tpm_paces_by_estimated_tokens(tmp_path: Path) -> None:
    from tomacs.tokens import count_chat_tokens

    # tpm 6000 = 100 tokens/s, bucket of 100; each request is estimated at its prompt + max_tokens 50.
    # Four taken at once (concurrency 4): the k-th waits (k * est - 100) / 100 s when positive.
    requests = [req(f"count the tokens of request {i}") for i in range(4)]
    est = count_chat_tokens(requests[0].messages) + 50
    waits = [max(0.0, (k * est - 100) / 100) for k in range(1, 5)]
    with FakeOpenAIServer() as srv:
        warm = LiteLLMBackbone("openai/fake", api_base=srv.base_url, cache=False)
        asyncio.run(warm.generate([req("warm-up")]))
        bb = LiteLLMBackbone(
            "openai/fake",
            api_base=srv.base_url,
            cache=False,
            tpm=6000,
            max_tokens=50,
            max_concurrency=4,
            rate_state=tmp_path / "rl.sqlite",
        )
        bb._bucket.clock = lambda: 1000.0  # type: ignore[union-attr]  # no refill: the waits are exact
        settled: list[float] = []
        adjust = bb._bucket.adjust  # type: ignore[union-attr]
        bb._bucket.adjust = lambda key, rate, cap, delta: (
            settled.append(delta),
            adjust(key, rate, cap, delta),
        )[1]  # type: ignore[union-attr]
        t0 = time.monotonic()
        asyncio.run(bb.generate(requests))
        elapsed = time.monotonic() - t0
    assert waits[-1] > 1.0  # the case is a real test of pacing
    assert bb.stats()["rate_wait_s"] == pytest.approx(sum(waits))
    assert elapsed >= waits[-1] - 0.05
    # each reply settled its estimate with the real usage (fewer tokens: given back to the bucket)
    used = bb.stats()["prompt_tokens"] + bb.stats()["completion_tokens"]
    assert len(settled) == 4 and sum(settled) == used - 4 * est < 0
