"""Throughput and overhead of the litellm backbone against a loopback fake server.

Why: a real run issues thousands of chat calls; what limits it must be the server, not tomacs'
orchestration (semaphore, retries, cache bookkeeping, litellm). The fake OpenAI-compatible server
runs in its own process (so it does not share our GIL) with a fixed latency per request:

* throughput: for concurrency C and latency L the ideal rate is C / L requests/s; we print the
  achieved rate and its share of the ideal (goal: >= 90 % at C = 32, L = 200 ms);
* overhead: with a zero-latency server, the wall time per call of sequential calls and of calls at
  concurrency 32 - the cost of the client side alone (litellm + httpx + tomacs).

The response cache is off (every request must reach the server). Usage:

    python scripts/bench_backbone.py                 # 200 ms, C = 8, 32, 128
    python scripts/bench_backbone.py --quick         # fewer requests
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

from tomacs.backbones.base import GenerationRequest
from tomacs.backbones.llm import LiteLLMBackbone, import_litellm
from tomacs.types import Question

MODEL = "openai/bench"
Q = Question(id="bench", text="t", options=None, answer="1", benchmark="bench", kind="numeric")


@contextmanager
def fake_server(latency: float) -> Iterator[str]:
    """Start tomacs.testing.fake_openai_server in a child process; yield its base URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tomacs.testing.fake_openai_server", "--latency", str(latency)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline().strip())
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def requests(n: int, tag: str) -> list[GenerationRequest]:
    return [
        GenerationRequest(
            [{"role": "user", "content": f"{tag} request {i}"}],
            *(Q, "agent", 0, "r", 1, "honest", None, None, [], tag),
        )
        for i in range(n)
    ]


async def timed(bb: LiteLLMBackbone, reqs: list[GenerationRequest]) -> float:
    t0 = time.perf_counter()
    await bb.generate(reqs)
    return time.perf_counter() - t0


async def throughput(base: str, conc: int, n: int, latency: float) -> tuple[float, float]:
    bb = LiteLLMBackbone(MODEL, api_base=base, cache=False, max_concurrency=conc, timeout=30)
    await timed(bb, requests(conc, f"warm{conc}"))  # open the connection pool
    wall = await timed(bb, requests(n, f"c{conc}"))
    rate = n / wall
    return rate, rate / (conc / latency)


async def bare_aiohttp(base: str, conc: int, n: int) -> float:
    """Reference floor: the same POSTs with a bare aiohttp client (no SDK, no litellm, no tomacs)."""
    import aiohttp

    sem = asyncio.Semaphore(conc)
    async with aiohttp.ClientSession() as s:

        async def one(i: int) -> None:
            async with sem:
                body = {"model": "bench", "messages": [{"role": "user", "content": f"bare {i}"}]}
                async with s.post(f"{base}/chat/completions", json=body) as r:
                    await r.json()

        await asyncio.gather(*(one(i) for i in range(conc)))
        t0 = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(n)))
        return (time.perf_counter() - t0) / n * 1e3


async def overhead(base: str, n: int) -> tuple[float, float]:
    bb = LiteLLMBackbone(MODEL, api_base=base, cache=False, max_concurrency=32, timeout=30)
    await timed(bb, requests(8, "warm"))
    seq = 0.0
    for r in requests(n, "seq"):
        seq += await timed(bb, [r])
    par = await timed(bb, requests(n, "par"))
    return seq / n * 1e3, par / n * 1e3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--latency", type=float, default=0.2, help="server latency per request, seconds")
    ap.add_argument("--concurrency", type=int, nargs="+", default=[8, 32, 128])
    ap.add_argument("--waves", type=int, default=10, help="requests per run = waves x concurrency")
    ap.add_argument("--model", default=MODEL, help="litellm model string (provider prefix matters)")
    ap.add_argument("--quick", action="store_true", help="3 waves, 100 overhead calls")
    args = ap.parse_args()
    waves = 3 if args.quick else args.waves
    globals()["MODEL"] = args.model
    n_over = 100 if args.quick else 300

    t0 = time.perf_counter()
    import_litellm()
    print(f"litellm import: {time.perf_counter() - t0:.1f} s (once per process)")

    print(f"\nthroughput, server latency {args.latency * 1e3:.0f} ms, {waves} waves per concurrency")
    print(f"{'concurrency':>11} {'requests':>8} {'ideal req/s':>11} {'achieved':>9} {'% ideal':>8}")
    with fake_server(args.latency) as base:
        for c in args.concurrency:
            rate, frac = asyncio.run(throughput(base, c, waves * c, args.latency))
            print(f"{c:>11} {waves * c:>8} {c / args.latency:>11.1f} {rate:>9.1f} {100 * frac:>7.1f}%")

    print("\norchestration overhead, zero-latency server")
    with fake_server(0.0) as base:
        seq_ms, par_ms = asyncio.run(overhead(base, n_over))
    print(f"  sequential: {seq_ms:.2f} ms per call (client + loopback HTTP + server)")
    print(f"  concurrency 32: {par_ms:.2f} ms per call amortised ({1e3 / par_ms:.0f} calls/s)")
    with fake_server(0.0) as base:
        bare_ms = asyncio.run(bare_aiohttp(base, 32, 1000))
    print(f"  bare aiohttp client, concurrency 32: {bare_ms:.2f} ms per call (floor: server + loopback)")


if __name__ == "__main__":
    main()
