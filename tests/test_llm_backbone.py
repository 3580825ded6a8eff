"""LiteLLMBackbone against a loopback fake OpenAI server: retries, cache, usage, secrets, offline."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tomacs.backbones.base import GenerationRequest
from tomacs.backbones.llm import BackboneError, LiteLLMBackbone
from tomacs.testing.fake_openai_server import FakeOpenAIServer
from tomacs.tokens import count_chat_tokens, count_tokens
from tomacs.types import Question

REPO = Path(__file__).resolve().parents[1]
SECRET = "sk-test-SECRET-0123456789abcdef"
Q = Question(id="q1", text="2+2?", options=("3", "4"), answer="B", benchmark="t", kind="mc")


def req(content: str, sample_index: int = 0, agent: int = 0) -> GenerationRequest:
    return GenerationRequest(
        messages=[{"role": "system", "content": "You are an agent."}, {"role": "user", "content": content}],
        question=Q,
        kind="agent",
        agent=agent,
        role="math",
        round=1,
        behaviour="honest",
        target=None,
        previous_answer=None,
        incoming=[],
        seed_key=f"0/q1/0/1/{content}",
        sample_index=sample_index,
    )


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as srv:
        yield srv


def make(srv: FakeOpenAIServer, tmp_path: Path, **kw: Any) -> LiteLLMBackbone:
    opts: dict[str, Any] = {
        "model": "openai/fake-model",
        "api_base": srv.base_url,
        "cache": tmp_path / "cache.sqlite",
        "backoff_base": 0.01,
        "backoff_max": 0.05,
        "timeout": 5,
        "max_concurrency": 4,
    }
    opts.update(kw)
    return LiteLLMBackbone(**opts)


def run(bb: LiteLLMBackbone, requests: list[GenerationRequest]) -> list[Any]:
    return asyncio.run(bb.generate(requests))


def test_faults_are_retried_counted_and_run_completes(server: FakeOpenAIServer, tmp_path: Path) -> None:
    server.push("429", "500", "malformed", "empty", "503", "no_usage")
    bb = make(server, tmp_path)
    replies = run(bb, [req(f"question {i}") for i in range(8)])
    assert all("Final answer" in r.text for r in replies)
    assert all(not r.cached for r in replies)
    st = bb.stats()
    assert st["retries"] == 5 and st["failures"] == 5
    assert st["calls"] == 8 and st["attempts"] == 13 and st["errors"] == 0
    assert sum(r.retries for r in replies) == 5
    assert server.requests == 13
    assert st["cache_misses"] == 8 and st["cache_hits"] == 0
    assert st["prompt_tokens"] > 0 and st["completion_tokens"] > 0 and st["tokens_estimated"] == 1


def test_timeout_is_retried(server: FakeOpenAIServer, tmp_path: Path) -> None:
    run(make(server, tmp_path, cache=False), [req("warm-up")])  # first call pays litellm's lazy setup
    server.push("sleep:3")
    bb = make(server, tmp_path, timeout=1.0)
    (reply,) = run(bb, [req("slow")])
    assert reply.retries == 1 and bb.stats()["retries"] == 1
    assert server.actions[-2:] == ["sleep:3", "ok"]


def test_second_run_makes_zero_server_calls(server: FakeOpenAIServer, tmp_path: Path) -> None:
    requests = [req(f"q{i}") for i in range(5)]
    first = run(make(server, tmp_path), requests)
    n = server.requests
    assert n == 5
    bb2 = make(server, tmp_path)  # a new process would look the same: fresh object, same file
    second = run(bb2, requests)
    assert server.requests == n
    assert [r.text for r in second] == [r.text for r in first]
    assert all(r.cached for r in second)
    assert [r.prompt_tokens for r in second] == [r.prompt_tokens for r in first]
    assert bb2.stats()["cache_hits"] == 5 and bb2.stats()["calls"] == 0


def test_sample_index_and_sampling_params_make_new_calls(server: FakeOpenAIServer, tmp_path: Path) -> None:
    run(make(server, tmp_path), [req("same", 0), req("same", 1)])
    assert server.requests == 2
    run(make(server, tmp_path, temperature=0.7), [req("same", 0)])
    assert server.requests == 3
    assert server.bodies[-1]["temperature"] == 0.7
    assert "temperature" not in server.bodies[0]  # None = provider default: not sent at all


def test_identical_inflight_requests_share_one_call(server: FakeOpenAIServer, tmp_path: Path) -> None:
    replies = run(make(server, tmp_path, cache=False), [req("dup")] * 3)
    assert server.requests == 1
    assert len({r.text for r in replies}) == 1
    # one agent's repeats share a call whatever its slot; another agent's same prompt is its own call
    run(make(server, tmp_path, cache=False), [req("dup", agent=2)] * 3 + [req("dup", agent=1)])
    assert server.requests == 3


def test_agents_with_identical_prompts_draw_their_own_samples(tmp_path: Path) -> None:
    same = [req("the adversary's prompt", agent=a) for a in range(3)]
    with FakeOpenAIServer(latency=0.05, sampled=True) as srv:
        first = run(make(srv, tmp_path), same)  # in flight together, and yet three calls
        assert srv.requests == 3 and all(b["messages"] == srv.bodies[0]["messages"] for b in srv.bodies)
        assert len({r.text for r in first}) == 3 and not any(r.cached for r in first)
        bb = make(srv, tmp_path)  # the resumed run: every agent gets its own sample back, no call
        again = run(bb, same)
        assert srv.requests == 3 and bb.stats()["calls"] == 0 and bb.stats()["cache_hits"] == 3
        assert [r.text for r in again] == [r.text for r in first] and all(r.cached for r in again)


def test_api_key_from_env_never_persisted(
    server: FakeOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOMACS_TEST_KEY", SECRET)
    bb = make(server, tmp_path, api_key_env="TOMACS_TEST_KEY")
    run(bb, [req(f"k{i}") for i in range(3)])
    assert server.auth_headers and all(h == f"Bearer {SECRET}" for h in server.auth_headers)
    texts = [str(bb.stats()), str(bb), repr(bb), str(vars(bb))]
    assert all(SECRET not in t for t in texts)
    asyncio.run(bb.aclose())
    files = list(tmp_path.iterdir())
    assert any(f.name == "cache.sqlite" for f in files)
    for f in files:  # db, and -wal/-shm if any are left
        assert SECRET.encode() not in f.read_bytes(), f


def test_missing_key_is_clear_but_cache_needs_none(
    server: FakeOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(make(server, tmp_path), [req("cached one")])
    monkeypatch.delenv("TOMACS_ABSENT_KEY", raising=False)
    bb = make(server, tmp_path, api_key_env="TOMACS_ABSENT_KEY")
    assert run(bb, [req("cached one")])[0].cached
    with pytest.raises(BackboneError, match="TOMACS_ABSENT_KEY is not set"):
        run(bb, [req("new one")])


def test_missing_usage_is_estimated(tmp_path: Path) -> None:
    with FakeOpenAIServer(include_usage=False) as srv:
        r = req("count me")
        bb = make(srv, tmp_path)
        (reply,) = run(bb, [r])
    assert reply.tokens_estimated
    assert reply.prompt_tokens == count_chat_tokens(r.messages)
    assert reply.completion_tokens == count_tokens(reply.text)
    assert bb.stats()["tokens_estimated"] == 1


def test_usage_from_server_is_used(server: FakeOpenAIServer, tmp_path: Path) -> None:
    (reply,) = run(make(server, tmp_path), [req("one two three")])
    assert not reply.tokens_estimated
    assert reply.prompt_tokens == len("You are an agent. one two three".split())


def test_permanent_error_is_not_retried(server: FakeOpenAIServer, tmp_path: Path) -> None:
    server.push("401")
    bb = make(server, tmp_path)
    with pytest.raises(BackboneError, match="permanent error"):
        run(bb, [req("x")])
    assert server.requests == 1 and bb.stats()["retries"] == 0 and bb.stats()["errors"] == 1


def test_gives_up_after_max_retries_and_keeps_cache(server: FakeOpenAIServer, tmp_path: Path) -> None:
    bb = make(server, tmp_path, max_retries=2)
    run(bb, [req("good")])
    server.push("500", "500", "500")
    with pytest.raises(BackboneError, match="gave up after 3 attempts"):
        run(bb, [req("bad")])
    assert server.requests == 4
    again = make(server, tmp_path)
    assert run(again, [req("good")])[0].cached
    assert server.requests == 4


def test_cost_price_override_and_unknown_model(server: FakeOpenAIServer, tmp_path: Path) -> None:
    bb = make(server, tmp_path, cache=False)
    (r,) = run(bb, [req("c")])
    assert r.cost_usd == 0.0 and bb.stats()["cost_known"] is False
    priced = make(server, tmp_path, cache=False, price={"input_per_mtok": 1e6, "output_per_mtok": 2e6})
    (r2,) = run(priced, [req("c")])
    assert r2.cost_usd == pytest.approx(r2.prompt_tokens * 1.0 + r2.completion_tokens * 2.0)
    assert priced.stats()["cost_usd"] == pytest.approx(r2.cost_usd)


def _preset(name: str) -> dict[str, Any]:
    """A conf/backbone preset as a job reads it: its schema (LiteLLMSettings) under what the file writes."""
    from tomacs.config import compose, to_container

    return to_container(compose([f"backbone={name}"]).backbone)


def test_name_and_from_config(server: FakeOpenAIServer, tmp_path: Path) -> None:
    cfg = _preset("llamacpp")
    cfg["api_base"] = server.base_url
    cfg["cache"]["path"] = str(tmp_path / "from_cfg.sqlite")
    bb = LiteLLMBackbone.from_config(cfg)
    assert bb.name == "litellm:openai/smollm2" and bb.max_concurrency == 4
    assert run(bb, [req("cfg")])[0].text
    assert (tmp_path / "from_cfg.sqlite").exists()
    off = LiteLLMBackbone.from_config(
        {"model": "openai/x", "api_base": "http://127.0.0.1:1/v1", "cache": False}
    )
    assert off.cache is None
    with pytest.raises(ValueError, match="api_base"):
        LiteLLMBackbone.from_config({"model": "openai/x", "require_api_base": True, "cache": False})


@pytest.mark.parametrize("preset", ["gpt-4.1-nano", "openai_compatible", "vllm", "ollama", "llamacpp"])
def test_presets_build(preset: str, tmp_path: Path) -> None:
    cfg = _preset(preset)
    for key in ("name", "model", "api_base", "api_key_env", "temperature", "max_tokens", "timeout"):
        assert key in cfg
    assert cfg["cache"]["enabled"] is True and cfg["cache"]["path"] == "outputs/cache/responses.sqlite"
    cfg["cache"]["path"] = str(tmp_path / "c.sqlite")
    bb = LiteLLMBackbone.from_config(cfg)
    assert bb.name.startswith("litellm:")
    if preset == "gpt-4.1-nano":
        assert bb.temperature is None and bb.api_key_env == "OPENAI_API_KEY"


@pytest.mark.slow  # a fresh interpreter
def test_no_network_outside_loopback(tmp_path: Path) -> None:
    """Importing litellm through tomacs and calling a loopback server opens no other connection."""
    code = textwrap.dedent(
        """
        import asyncio, socket, sys
        from tomacs.testing.fake_openai_server import FakeOpenAIServer
        attempts = []
        _connect = socket.socket.connect
        _getaddrinfo = socket.getaddrinfo
        def guarded_connect(self, addr):
            if isinstance(addr, tuple) and addr[0] not in ("127.0.0.1", "::1", "localhost"):
                attempts.append(addr)
                raise OSError(f"blocked non-loopback connect to {addr}")
            return _connect(self, addr)
        def guarded_getaddrinfo(host, *a, **k):
            if host not in ("127.0.0.1", "::1", "localhost", None):
                attempts.append(host)
                raise OSError(f"blocked DNS lookup of {host}")
            return _getaddrinfo(host, *a, **k)
        socket.socket.connect = guarded_connect
        socket.getaddrinfo = guarded_getaddrinfo
        from tomacs.backbones.base import GenerationRequest
        from tomacs.backbones.llm import LiteLLMBackbone, import_litellm
        from tomacs.types import Question
        import_litellm()
        q = Question(id="q", text="t", options=None, answer="1", benchmark="t", kind="numeric")
        r = GenerationRequest([{"role": "user", "content": "hi"}], q, "agent", 0, "r", 1, "honest",
                              None, None, [], "k")
        with FakeOpenAIServer() as srv:
            bb = LiteLLMBackbone("gpt-4.1-nano", api_base=srv.base_url, cache=sys.argv[1])
            out = asyncio.run(bb.generate([r]))
        assert out[0].text and out[0].cost_usd > 0, out  # priced from the bundled (offline) cost map
        assert not attempts, attempts
        print("OK")
        """
    )
    env = {k: v for k, v in os.environ.items() if k != "LITELLM_LOCAL_MODEL_COST_MAP"}
    env["PYTHONPATH"] = str(REPO)
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "c.sqlite")],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=REPO,
    )
    assert out.returncode == 0 and "OK" in out.stdout, out.stdout + out.stderr


def test_fast_call_settings_are_applied(
    server: FakeOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each adopted per-call setting is in force on a real call (aiohttp transport, one reused
    client, no redaction work), the redaction check can fail (turned back on, it counts), and the
    cost still comes from litellm's price table."""
    import litellm.litellm_core_utils.redact_messages as redact
    from litellm.litellm_core_utils.logging_worker import GLOBAL_LOGGING_WORKER

    import tomacs.backbones.llm as llm_module
    from tomacs.backbones.llm import FAST_CALL_SETTINGS, import_litellm

    litellm = import_litellm()
    # set the opposite of every setting, then configure again: import_litellm must apply them
    monkeypatch.setattr(llm_module, "_litellm_module", None)
    for name, value in FAST_CALL_SETTINGS.items():
        monkeypatch.setattr(litellm, name, not value)
    monkeypatch.setattr(litellm, "success_callback", ["langfuse"])
    assert import_litellm() is litellm
    assert FAST_CALL_SETTINGS == {
        "disable_aiohttp_transport": False,
        "use_aiohttp_transport": True,
        "turn_off_message_logging": False,
    }
    for name, value in FAST_CALL_SETTINGS.items():
        assert getattr(litellm, name) is value, name
    for name in ("callbacks", "input_callback", "success_callback", "failure_callback", "service_callback"):
        assert getattr(litellm, name) == [], name  # nothing to redact for
    redactions: list[int] = []
    real = redact.perform_redaction
    monkeypatch.setattr(redact, "perform_redaction", lambda *a, **k: redactions.append(1) or real(*a, **k))
    bb = make(server, tmp_path, model="gpt-4.1-nano", cache=False)

    def openai_clients() -> list[Any]:
        cached = litellm.in_memory_llm_clients_cache.cache_dict.values()
        return [
            c
            for c in cached
            if type(c).__name__ == "AsyncOpenAI" and str(c.base_url).startswith(server.base_url)
        ]

    async def run(tag: str) -> list[Any]:
        out = await bb.generate([req(f"{tag} {i}") for i in range(4)])
        await asyncio.sleep(0.05)  # litellm schedules its success logging after returning
        await GLOBAL_LOGGING_WORKER.flush()
        return out

    async def scenario() -> tuple[int, int, int, int]:
        out = await run("a")
        assert all(r.cost_usd > 0 for r in out)  # priced by litellm's bundled table
        n_clients = len(openai_clients())
        await run("b")
        fast = len(redactions)
        monkeypatch.setattr(litellm, "turn_off_message_logging", True)
        await run("c")
        return n_clients, len(openai_clients()), fast, len(redactions)

    n1, n2, fast, slow = asyncio.run(scenario())
    assert n1 == n2 == 1  # one client, reused by the second batch
    transport = openai_clients()[0]._client._transport
    assert type(transport).__name__ == "LiteLLMAiohttpTransport"
    assert fast == 0 and slow > 0


def test_litellm_logging_worker_runs_nothing() -> None:
    """litellm re-queued already started logging coroutines onto a new loop, and cancelled at shutdown they
    printed a traceback after a run's one-line error (CI, stop 69): with no callbacks registered, each
    coroutine it is handed is closed unrun."""
    import inspect

    from litellm.litellm_core_utils.logging_worker import GLOBAL_LOGGING_WORKER

    from tomacs.backbones.llm import import_litellm

    import_litellm()
    ran: list[int] = []

    async def log() -> None:
        ran.append(1)

    async def scenario() -> Any:
        coro = log()
        GLOBAL_LOGGING_WORKER.ensure_initialized_and_enqueue(async_coroutine=coro)
        await asyncio.sleep(0.05)
        return coro

    coro = asyncio.run(scenario())
    assert inspect.getcoroutinestate(coro) == inspect.CORO_CLOSED
    assert ran == []
