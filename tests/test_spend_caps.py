"""Spend caps: stop before the next paid call, resume without repaying, one cap over a sweep's processes."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tomacs.backbones.base import GenerationRequest
from tomacs.backbones.llm import LiteLLMBackbone
from tomacs.backbones.spend import SpendCapReached, SpendCaps, SpendLedger
from tomacs.testing.fake_openai_server import FakeOpenAIServer
from tomacs.testing.requests import plain_request as req

PRICE = {"input_per_mtok": 1000.0, "output_per_mtok": 1000.0}  # $0.001 per token: costs easy to read


def make(srv: FakeOpenAIServer, tmp_path: Path, **kw: Any) -> LiteLLMBackbone:
    opts: dict[str, Any] = {
        "api_base": srv.base_url,
        "cache": tmp_path / "cache.sqlite",
        "spend_ledger": tmp_path / "spend.sqlite",
        "backoff_base": 0.01,
        "backoff_max": 0.05,
        "timeout": 5,
        "max_concurrency": 4,
        "price": PRICE,
    }
    opts.update(kw)
    return LiteLLMBackbone("openai/fake", **opts)


def run(bb: LiteLLMBackbone, requests: list[GenerationRequest]) -> Any:
    return asyncio.run(bb.generate(requests))


# -- the ledger alone --------------------------------------------------------------------------
def test_ledger_counts_reservations_not_completions(tmp_path: Path) -> None:
    from tomacs.backbones.spend import SpendGuard

    ledger = SpendLedger(tmp_path / "l.sqlite")
    guard = SpendGuard(SpendCaps(max_calls=3), ledger, "job:a", ttl_s=60)
    r1, r2, r3 = guard.reserve(0.0), guard.reserve(0.0), guard.reserve(0.0)  # three in flight
    with pytest.raises(
        SpendCapReached, match=r"backbone.max_calls=3 \(this job has paid \$0.0000 for 0 calls, 3"
    ):
        guard.reserve(0.0)
    guard.release(r3)  # failed for good: not paid, its slot is free again
    r4 = guard.reserve(0.0)
    for r in (r1, r2, r4):
        guard.settle(r, 0.25)
    assert ledger.paid("job:a") == (3, 0.75)
    with pytest.raises(SpendCapReached) as e:
        guard.reserve(0.0)
    assert e.value.raised() == "backbone.max_calls=6"


def test_dollar_cap_counts_the_estimates_of_calls_in_flight(tmp_path: Path) -> None:
    from tomacs.backbones.spend import SpendGuard

    guard = SpendGuard(SpendCaps(max_usd=1.0), SpendLedger(tmp_path / "l.sqlite"), "job:a", ttl_s=60)
    guard.settle(guard.reserve(0.0), 0.5)  # paid 0.5
    guard.reserve(0.2)  # in flight, estimated 0.2: 0.7 committed
    guard.reserve(0.2)  # 0.9
    with pytest.raises(SpendCapReached, match="max_usd=1 "):
        guard.reserve(0.2)  # 0.9 + 0.2 would reach 1.0
    guard.reserve(0.05)  # 0.95 < 1: allowed


def test_zero_cap_sends_nothing_and_the_sweep_scope_is_shared(tmp_path: Path) -> None:
    from tomacs.backbones.spend import SpendGuard

    ledger = SpendLedger(tmp_path / "l.sqlite")
    with pytest.raises(SpendCapReached) as e:
        SpendGuard(SpendCaps(max_usd=0), ledger, "job:a", 60).reserve(0.0)
    assert e.value.raised() == "backbone.max_usd=null"
    a = SpendGuard(SpendCaps(sweep_max_calls=2), ledger, "job:a", 60)
    b = SpendGuard(SpendCaps(sweep_max_calls=2), SpendLedger(tmp_path / "l.sqlite"), "job:b", 60)
    a.settle(a.reserve(0.0), 0.1)
    b.reserve(0.0)
    with pytest.raises(SpendCapReached, match="sweep_max_calls=2 \\(this sweep's jobs have paid"):
        a.reserve(0.0)
    assert ledger.paid("sweep") == (1, 0.1) and ledger.paid("job:a") == (1, 0.1)


def test_reservations_of_a_dead_process_are_dropped(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite"
    code = textwrap.dedent(
        f"""
        from tomacs.backbones.spend import SpendCaps, SpendGuard, SpendLedger
        g = SpendGuard(SpendCaps(max_calls=1), SpendLedger({str(path)!r}), "job:a", 3600)
        g.reserve(0.0)  # then the process ends without settling (a kill -9)
        """
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    from tomacs.backbones.spend import SpendGuard

    SpendGuard(SpendCaps(max_calls=1), SpendLedger(path), "job:a", 3600).reserve(0.0)  # the slot is free


# -- through the backbone and the fake server ---------------------------------------------------
def test_job_cap_stops_before_the_next_paid_call_and_resumes_without_repaying(tmp_path: Path) -> None:
    requests = [req(f"question {i}") for i in range(10)]
    with FakeOpenAIServer() as srv:
        bb = make(srv, tmp_path, caps=SpendCaps(max_calls=6))
        with pytest.raises(SpendCapReached, match=r"max_calls=6 \(this job has paid \$[0-9.]+ for 6 calls\)"):
            run(bb, requests)
        assert srv.requests == 6  # reservations, not completions: never more than the cap
        first = {json.dumps(b["messages"]) for b in srv.bodies}
        asyncio.run(bb.aclose())
        # the cap raised, a new process (same cache and ledger): only the 4 unpaid ones are sent
        bb2 = make(srv, tmp_path, caps=SpendCaps(max_calls=12))
        replies = run(bb2, requests)
        assert srv.requests == 10
        second = {json.dumps(b["messages"]) for b in srv.bodies[6:]}
    assert not first & second and len(first | second) == 10
    assert sum(r.cached for r in replies) == 6 and bb2.stats()["calls"] == 4


def test_dollar_cap_overshoots_by_at_most_the_calls_in_flight(tmp_path: Path) -> None:
    with FakeOpenAIServer(latency=0.05) as srv:
        bb = make(srv, tmp_path, caps=SpendCaps(max_usd=0.1), max_concurrency=4)
        with pytest.raises(SpendCapReached) as e:
            run(bb, [req(f"q {i}") for i in range(60)])
        sent = srv.requests
    per_call = bb.stats()["cost_usd"] / bb.stats()["calls"]
    assert e.value.paid_usd == pytest.approx(bb.stats()["cost_usd"])
    assert 0.1 - per_call <= e.value.paid_usd <= 0.1 + 4 * per_call * 1.5
    assert sent == bb.stats()["calls"] < 60


def test_dollar_cap_needs_a_price(tmp_path: Path) -> None:
    from tomacs.backbones.llm import BackboneError

    with FakeOpenAIServer() as srv:
        bb = LiteLLMBackbone(
            "openai/no-such-model-xyz",
            api_base=srv.base_url,
            cache=tmp_path / "c.sqlite",
            caps=SpendCaps(max_usd=5),
        )
        with pytest.raises(BackboneError, match="needs a price.*backbone.price"):
            run(bb, [req("x")])
    assert len(bb.cache) == 1  # the reply it paid for is kept


SWEEP_WORKER = textwrap.dedent(
    """
    import asyncio, json, sys
    sys.path.insert(0, {tests!r})
    from test_spend_caps import req, PRICE
    from tomacs.backbones.llm import LiteLLMBackbone
    from tomacs.backbones.spend import SpendCapReached, SpendCaps
    base, ledger, tag = sys.argv[1], sys.argv[2], sys.argv[3]
    bb = LiteLLMBackbone("openai/fake", api_base=base, cache=False, price=PRICE, spend_ledger=ledger,
                         job_scope="job:" + tag, max_concurrency=8,
                         caps=SpendCaps(sweep_max_calls=30, sweep_max_usd=0.5))
    try:
        asyncio.run(bb.generate([req(f"{{tag}} {{i}}") for i in range(40)]))
        print(json.dumps({{"stopped": None, **bb.stats()}}))
    except SpendCapReached as e:
        print(json.dumps({{"stopped": e.key, **bb.stats()}}))
    """
)


@pytest.mark.slow
def test_sweep_cap_holds_over_two_processes(tmp_path: Path) -> None:
    script = SWEEP_WORKER.format(tests=str(Path(__file__).parent))
    ledger = tmp_path / "sweep" / ".tomacs_spend.sqlite"
    with FakeOpenAIServer(latency=0.1) as srv:
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", script, srv.base_url, str(ledger), t],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for t in ("a", "b")
        ]
        outs = [p.communicate(timeout=120) for p in procs]
        assert all(p.returncode == 0 for p in procs), [o[1][-1000:] for o in outs]
        sent = srv.requests
    stats = [json.loads(o[0]) for o in outs]
    assert all(s["stopped"] for s in stats)  # 80 requests wanted, both stopped by a sweep cap
    calls, usd = SpendLedger(ledger).paid("sweep")
    assert calls == sent == sum(s["calls"] for s in stats)
    assert usd == pytest.approx(sum(s["cost_usd"] for s in stats))
    assert calls <= 30  # a call cap is never exceeded, whatever is in flight
    per_call = usd / calls
    assert usd <= 0.5 + 2 * 8 * per_call * 1.5  # in flight: at most 8 per process
    assert all(s["calls"] > 0 for s in stats)  # both processes drew from the one cap


@pytest.mark.parametrize(
    ("override", "want"),
    [
        ("backbone.max_calls=2.5", "expected a whole number >= 0 or null"),
        ("backbone.max_usd=-1", "expected a number >= 0 or null"),
        ("backbone.rpm=0", "expected a number > 0 or null"),
        ("backbone.sweep_max_usd=abc", "'backbone.sweep_max_usd'"),
    ],
)
def test_bad_caps_and_limits_are_one_line_config_errors(override: str, want: str) -> None:
    from tomacs.config import ConfigError, compose

    with pytest.raises(ConfigError, match=want):
        compose(["backbone=gpt-4.1-nano", override])
    cfg = compose(
        ["backbone=gpt-4.1-nano", "backbone.max_usd=2.5", "backbone.sweep_max_calls=0", "backbone.rpm=500"]
    )
    assert cfg.backbone.max_usd == 2.5 and cfg.backbone.max_calls is None


def test_a_new_process_estimates_by_what_the_scope_paid(tmp_path: Path) -> None:
    from tomacs.backbones.spend import SpendGuard

    path = tmp_path / "l.sqlite"
    first = SpendGuard(SpendCaps(max_usd=1.0), SpendLedger(path), "job:a", 60)
    for _ in range(3):
        first.settle(first.reserve(0.0), 0.3)  # paid 0.9, 0.3 a call
    # a resume with the same cap: 0.9 + 0.3 >= 1, refused before any call (a zero estimate would send)
    with pytest.raises(SpendCapReached, match=r"paid \$0.9000 for 3 calls"):
        SpendGuard(SpendCaps(max_usd=1.0), SpendLedger(path), "job:a", 60).reserve(None)
    SpendGuard(SpendCaps(max_usd=1.25), SpendLedger(path), "job:a", 60).reserve(None)  # 0.9 + 0.3 < 1.25
