"""A loopback OpenAI-compatible chat server with scripted faults, for tests and benchmarks.

Why it exists: the real-LLM path (retries, backoff, usage accounting, the response cache) must be
tested without network access or API keys. The server listens on 127.0.0.1 on a free port, runs
its own event loop in a background thread (or as a separate process for benchmarks, so that the
server does not compete with the client for the GIL), and answers `POST /v1/chat/completions`.

Faults are a script consumed one per request, in arrival order; when the script is exhausted every
request gets the default behaviour ("ok"). Actions:

    "ok"          a normal completion (with usage unless `include_usage=False`)
    "no_usage"    a normal completion without the `usage` field
    "429"         HTTP 429 rate limit (with a Retry-After: 0 header)
    "429:<s>"     HTTP 429 with Retry-After: <s> (delta-seconds)
    "429-date:<s>" HTTP 429 with Retry-After as an HTTP-date <s> seconds ahead
    "500" / "503" HTTP 5xx
    "400" / "401" HTTP 4xx that a client must not retry
    "malformed"   HTTP 200 with a body that is not JSON
    "empty"       HTTP 200 with empty message content
    "sleep:<s>"   wait <s> seconds, then answer normally (exercises client timeouts)

Rate-limit mode (`rpm=`): a token bucket of `rpm_burst_s` seconds' worth of requests
(rpm / 60 x rpm_burst_s, at least 1), refilled at rpm / 60 per second, like a provider that
quantizes its per-minute limit. A request finding it empty is answered 429 at once, with
Retry-After the whole seconds until a token is back; `GET /stats` counts ok and 429 answers.
Latency is drawn uniformly from [latency, latency_max] when latency_max is given. `sampled=True`
numbers every reply, as a model sampled at temperature > 0 answers one prompt differently each call.

Run standalone (prints the port on the first stdout line):
    python -m tomacs.testing.fake_openai_server --latency 1 --latency-max 2 --rpm 600
"""

from __future__ import annotations

import argparse
import asyncio
import email.utils
import json
import math
import random
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable
from typing import Any

from aiohttp import web


class FakeOpenAIServer:
    """Background-thread aiohttp server; use as a context manager or call start()/stop()."""

    def __init__(
        self,
        script: Iterable[str] = (),
        latency: float = 0.0,
        include_usage: bool = True,
        reply: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        latency_max: float | None = None,
        rpm: float | None = None,
        rpm_burst_s: float = 1.0,
        sampled: bool = False,
    ) -> None:
        self.script: deque[str] = deque(script)
        self.sampled = sampled
        self._drawn = 0
        self.latency = latency
        self.latency_max = latency_max
        self.rpm = rpm
        self._capacity = max(1.0, (rpm or 0) / 60.0 * rpm_burst_s)
        self._tokens = self._capacity
        self._refilled = time.monotonic()
        self.ok = 0  # completions answered 200
        self.rate_limited = 0  # 429s, scripted or from the rpm limit
        self.include_usage = include_usage
        self.reply = reply
        self.host = host
        self.port = port
        self.requests = 0  # every POST to /v1/chat/completions, faults included
        self.actions: list[str] = []  # the action taken for each request, in order
        self.auth_headers: list[str] = []
        self.bodies: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._ready = threading.Event()
        self._startup_error: BaseException | None = None

    # -- public -----------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def push(self, *actions: str) -> None:
        """Append actions to the fault script (thread-safe)."""
        with self._lock:
            self.script.extend(actions)

    def start(self) -> FakeOpenAIServer:
        self._thread = threading.Thread(target=self._run, name="fake-openai-server", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("fake OpenAI server did not start within 10 s")
        if self._startup_error is not None:
            raise RuntimeError("fake OpenAI server failed to start") from self._startup_error
        return self

    def stop(self) -> None:
        loop = self._loop
        if loop is None:
            return
        fut = asyncio.run_coroutine_threadsafe(self._shutdown(), loop)
        try:
            fut.result(5)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            if self._thread is not None:
                self._thread.join(5)
            self._loop = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- internals --------------------------------------------------------------------------
    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self._startup())
        except BaseException as e:  # noqa: BLE001 - reported to start()
            self._startup_error = e
            self._ready.set()
            return
        self._ready.set()
        loop.run_forever()
        loop.close()

    async def _startup(self) -> None:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._handle)
        app.router.add_post("/chat/completions", self._handle)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/stats", self._stats)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(
            self._runner, self.host, self.port, backlog=1024, reuse_address=True, shutdown_timeout=0.5
        )
        await site.start()
        server = site._server  # noqa: SLF001 - the only way to read the bound port of port=0
        # a TCPSite's server is an asyncio.Server (aiohttp types it as the abstract base)
        assert isinstance(server, asyncio.Server)
        self.port = server.sockets[0].getsockname()[1]

    async def _shutdown(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        # handlers still sleeping on an injected delay: cancel them so none is left pending
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _stats(self, request: web.Request) -> web.Response:
        with self._lock:
            body = {"requests": self.requests, "ok": self.ok, "rate_limited": self.rate_limited}
        return web.json_response(body)

    def _over_limit(self) -> float | None:
        """Seconds until the rpm bucket has a token again, or None when it had one (taken)."""
        if self.rpm is None:
            return None
        rate = self.rpm / 60.0
        now = time.monotonic()
        self._tokens = min(self._capacity, self._tokens + (now - self._refilled) * rate)
        self._refilled = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return None
        return (1.0 - self._tokens) / rate

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "fake-model", "object": "model"}]})

    async def _handle(self, request: web.Request) -> web.Response:
        raw = await request.read()
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            body = {}
        with self._lock:  # one lock: requests/actions/bodies/auth_headers stay aligned by index
            self.requests += 1
            action = self.script.popleft() if self.script else "ok"
            wait = self._over_limit() if action == "ok" else None
            if wait is not None:
                action = f"429:{math.ceil(wait)}"
            self.actions.append(action)
            self.auth_headers.append(request.headers.get("Authorization", ""))
            self.bodies.append(body)
            if action.startswith("429"):
                self.rate_limited += 1
        if action.startswith("429"):  # a provider refuses at once, before any work
            kind, _, secs = action.partition(":")
            when = float(secs or 0)
            after = (
                email.utils.formatdate(time.time() + when, usegmt=True) if kind == "429-date" else secs or "0"
            )
            err: dict[str, dict[str, object]] = {
                "error": {"message": "rate limit (fake)", "type": "requests", "code": "rate_limit_exceeded"}
            }
            return web.json_response(err, status=429, headers={"Retry-After": after})
        if self.latency_max is not None:
            await asyncio.sleep(random.uniform(self.latency, self.latency_max))
        elif self.latency > 0:
            await asyncio.sleep(self.latency)
        if action.startswith("sleep:"):
            await asyncio.sleep(float(action.split(":", 1)[1]))
            action = "ok"
        if action.isdigit():
            code = int(action)
            err = {"error": {"message": f"injected {code}", "type": "fake", "code": code}}
            return web.json_response(err, status=code)
        if action == "malformed":
            return web.Response(status=200, text="{not json at all", content_type="application/json")
        text = "" if action == "empty" else self._text(body)
        usage = self.include_usage and action != "no_usage"
        if action != "malformed" and text:
            with self._lock:
                self.ok += 1
        return web.json_response(self._completion(body, text, usage))

    def _text(self, body: dict[str, Any]) -> str:
        if self.reply is not None:
            return self.reply
        msgs = body.get("messages") or [{}]
        last = str(msgs[-1].get("content", ""))
        if self.sampled:
            with self._lock:
                self._drawn += 1
                return f"Sample {self._drawn}: I considered: {last[:60]}\nFinal answer: (A)"
        return f"I considered: {last[:60]}\nFinal answer: (A)"

    def _completion(self, body: dict[str, Any], text: str, usage: bool) -> dict[str, object]:
        out: dict[str, Any] = {
            "id": f"chatcmpl-fake-{self.requests}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "fake-model"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
        }
        if usage:
            prompt = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
            completion = len(text.split())
            out["usage"] = {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            }
        return out


def main(argv: list[str] | None = None) -> None:
    """Serve until stdin closes or the process is killed; first stdout line is the port."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--latency", type=float, default=0.0)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--no-usage", action="store_true")
    ap.add_argument("--latency-max", type=float, default=None, help="latency drawn from [latency, this]")
    ap.add_argument("--rpm", type=float, default=None, help="answer 429 beyond this many requests per minute")
    ap.add_argument(
        "--rpm-burst-s", type=float, default=1.0, help="seconds' worth of requests allowed at once"
    )
    args = ap.parse_args(argv)
    server = FakeOpenAIServer(
        latency=args.latency,
        include_usage=not args.no_usage,
        port=args.port,
        latency_max=args.latency_max,
        rpm=args.rpm,
        rpm_burst_s=args.rpm_burst_s,
    ).start()
    print(server.port, flush=True)
    try:
        sys.stdin.read()  # parent closes the pipe -> exit
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


if __name__ == "__main__":
    main()
