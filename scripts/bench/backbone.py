"""Throughput and overhead of the litellm backbone against a loopback fake server.

Why: a real run issues thousands of chat calls; what limits it must be the server, not tomacs'
orchestration (semaphore, retries, cache bookkeeping, litellm). The fake OpenAI-compatible server
runs in its own process (so it does not share our GIL) with a fixed latency per request:

* throughput: for concurrency C and latency L the ideal rate is C / L requests/s; we print the
  achieved rate and its share of the ideal, at 200 ms (C = 8, 32, 128) and at the realistic
  latencies of hosted APIs (1 s and 2 s, C = 32 and 128);
* overhead: with a zero-latency server, the wall time and the client CPU (this process, litellm's
  worker threads included) per call, sequential and at concurrency 32;
* --options: litellm's per-call settings one at a time (tomacs.backbones.llm.FAST_CALL_SETTINGS),
  interleaved over --repeat rounds so that the machine's drifting load shows as noise.

The response cache is off (every request must reach the server). Every block prints the load.

    python scripts/bench/backbone.py                 # the tables above, about 1.5 min
    python scripts/bench/backbone.py --quick         # fewer requests
    python scripts/bench/backbone.py --options --repeat 3    # + the option comparison, about 3 min
    python scripts/bench/backbone.py --latencies     # no 1 s / 2 s rows

Measured 2026-11-23 on the 2-core dev machine, load average 2.1-3.0 (other jobs running), litellm
1.100.5; "before" = tomacs with litellm's reply redaction on (turn_off_message_logging=True).

    % of ideal          before   after  after, 2nd run    client CPU ms per call, zero latency
    200 ms, C = 8        82.8    88.2    88.7                 sequential      3.19 -> 2.89, 3.51
    200 ms, C = 32       76.6    75.3    70.9                 concurrency 32  2.38 -> 2.24, 2.33
    200 ms, C = 128      41.9    42.4    43.4               bare aiohttp client (floor): 0.19-0.24 ms
    1 s,    C = 32       91.6    92.5    93.8
    1 s,    C = 128      74.5    81.1    71.1
    2 s,    C = 32       94.2    96.0    91.1
    2 s,    C = 128      90.3    88.7    84.4

Run to run, a row moves by up to 10 points on this busy machine; before and after differ by less.

    --options, 3 rounds        cpu ms seq         cpu ms C32         200 ms C32, % ideal
    before (redaction on)      3.27 4.50 3.97     3.07 3.13 2.45     76.2 76.8 75.7
    httpx transport            4.25 4.65 4.40     4.75 4.96 5.11     64.8 62.5 67.6
    no redaction               3.57 3.67 3.41     2.25 2.34 2.13     74.7 75.6 73.6
    tomacs default (= above)   3.38 3.42 4.17     2.38 3.10 3.54     77.8 77.6 76.0

Reading: the rows "no redaction" and "tomacs default" are the same settings, so +-0.6 ms is this
machine's noise. litellm's httpx transport costs ~2 ms more per call at C = 32 and 10 points of
throughput: tomacs pins the aiohttp one. Redaction, timed alone on the same replies, costs 0.07 ms
per call (3 %): off, since tomacs registers no litellm logger to redact for. litellm already reuses
one HTTP client per (event loop, endpoint, key, timeout) (the "OpenAI clients" line), so a shared
aiohttp session buys nothing; litellm always prices each reply itself (tomacs reads that figure), and
offers no switch for the rest of its per-call work (the success-logging payload, the sync
`completion()` it runs in a worker thread). What remains is ~2.3 ms of CPU per call.

Why C = 128 falls short: a fixed-latency server answers a whole wave at once, and the single event
loop then handles the wave one call after another, so each wave takes about L + C x (CPU per call).
L / (L + C x 2.4 ms) predicts 77 % at 1 s and 87 % at 2 s for C = 128, 93 % / 96 % for C = 32, as
measured. Real servers spread their answers, which helps; beyond that, split a sweep over processes.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

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


async def throughput(
    base: str, conc: int, n: int, latency: float, timeout: float = 30
) -> tuple[float, float]:
    bb = LiteLLMBackbone(MODEL, api_base=base, cache=False, max_concurrency=conc, timeout=timeout)
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


def uptime() -> str:
    """The machine's load, printed with every figure: on a shared 2-core box it moves them."""
    try:
        with open("/proc/loadavg") as f:
            one, five, fifteen = f.read().split()[:3]
        return f"load average {one} {five} {fifteen} on {os.cpu_count()} cores"
    except OSError:
        return "load average unknown"


# The per-call settings compared by --options. Each variant is applied on top of what tomacs'
# import_litellm() sets; "before" is what tomacs set before the options were measured.
OPTION_VARIANTS: dict[str, dict[str, Any]] = {
    "before (redaction on)": {"turn_off_message_logging": True, "disable_aiohttp_transport": False},
    "httpx transport": {"turn_off_message_logging": True, "disable_aiohttp_transport": True},
    "no redaction": {"turn_off_message_logging": False, "disable_aiohttp_transport": False},
    "tomacs default": {},
}


async def cpu_per_call(base: str, conc: int, n: int, timeout: float) -> tuple[float, float]:
    """CPU ms (this process, litellm's worker threads included) and wall ms per call, zero latency."""
    bb = LiteLLMBackbone(MODEL, api_base=base, cache=False, max_concurrency=32, timeout=timeout)
    await timed(bb, requests(32, f"warm{timeout}"))
    c0, w0 = time.process_time(), time.perf_counter()
    if conc == 1:
        for r in requests(n, f"seq{timeout}"):
            await bb.generate([r])
    else:
        await bb.generate(requests(n, f"par{timeout}"))
    return (time.process_time() - c0) / n * 1e3, (time.perf_counter() - w0) / n * 1e3


def compare_options(repeat: int, n: int, waves: int) -> None:
    """Each variant in turn, `repeat` rounds interleaved, so drift in machine load shows as noise."""
    litellm = import_litellm()
    keys = sorted({k for v in OPTION_VARIANTS.values() for k in v})
    default = {k: getattr(litellm, k) for k in keys}
    print(f"\nlitellm per-call options ({repeat} rounds; {n} calls per CPU figure; 200 ms: {waves} waves)")
    print(f"{'variant':<24} {'round':>5} {'cpu ms seq':>10} {'cpu ms C32':>10} {'200ms C32':>9}   load")
    with fake_server(0.0) as b0, fake_server(0.2) as b2:
        for rnd in range(repeat):
            for i, (name, settings) in enumerate(OPTION_VARIANTS.items()):
                for k in keys:
                    setattr(litellm, k, settings.get(k, default[k]))
                # a distinct timeout per variant and round gives a distinct litellm client-cache key,
                # so the transport setting of this variant builds its own client
                t = 30.0 + rnd + i / 100
                seq, _ = asyncio.run(cpu_per_call(b0, 1, n // 2, t))
                par, _ = asyncio.run(cpu_per_call(b0, 32, n, t))
                _, frac = asyncio.run(throughput(b2, 32, waves * 32, 0.2, t))
                print(f"{name:<24} {rnd + 1:>5} {seq:>10.2f} {par:>10.2f} {100 * frac:>8.1f}%   {uptime()}")
    for k in keys:
        setattr(litellm, k, default[k])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--latency", type=float, default=0.2, help="server latency of the first table, seconds")
    ap.add_argument("--concurrency", type=int, nargs="+", default=[8, 32, 128])
    ap.add_argument(
        "--latencies",
        type=float,
        nargs="*",
        default=[1.0, 2.0],
        help="realistic latencies (s) measured at --realistic-concurrency; none to skip",
    )
    ap.add_argument("--realistic-concurrency", type=int, nargs="+", default=[32, 128])
    ap.add_argument("--waves", type=int, default=10, help="requests per run = waves x concurrency")
    ap.add_argument("--model", default=MODEL, help="litellm model string (provider prefix matters)")
    ap.add_argument("--quick", action="store_true", help="3 waves, 100 overhead calls")
    ap.add_argument("--options", action="store_true", help="also compare litellm's per-call options")
    ap.add_argument("--repeat", type=int, default=2, help="rounds of the --options comparison")
    args = ap.parse_args()
    waves = 3 if args.quick else args.waves
    globals()["MODEL"] = args.model
    n_over = 100 if args.quick else 300

    print(f"machine: {uptime()}")
    t0 = time.perf_counter()
    litellm = import_litellm()
    print(f"litellm import: {time.perf_counter() - t0:.1f} s (once per process)")

    print(f"\nthroughput, server latency {args.latency * 1e3:.0f} ms, {waves} waves per concurrency")
    print(f"{'latency':>7} {'concurrency':>11} {'requests':>8} {'ideal/s':>8} {'achieved':>8} {'% ideal':>8}")
    rows = [(args.latency, c) for c in args.concurrency]
    rows += [(lat, c) for lat in args.latencies for c in args.realistic_concurrency]
    servers: dict[float, str] = {}
    with ExitStack() as stack:
        for lat, c in rows:
            if lat not in servers:
                servers[lat] = stack.enter_context(fake_server(lat))
            rate, frac = asyncio.run(throughput(servers[lat], c, waves * c, lat))
            print(f"{lat:>6.1f}s {c:>11} {waves * c:>8} {c / lat:>8.1f} {rate:>8.1f} {100 * frac:>7.1f}%")
    cached = litellm.in_memory_llm_clients_cache.cache_dict.values()
    n_clients = sum(type(c).__name__ == "AsyncOpenAI" for c in cached)
    n_calls = sum((waves + 1) * c for _, c in rows)
    print(f"  ({uptime()}; litellm built {n_clients} OpenAI clients for {n_calls} calls, {len(rows)} loops)")

    print("\norchestration overhead, zero-latency server")
    with fake_server(0.0) as base:
        seq_ms, par_ms = asyncio.run(overhead(base, n_over))
        cpu_seq, _ = asyncio.run(cpu_per_call(base, 1, n_over // 2, 30.0))
        cpu_par, _ = asyncio.run(cpu_per_call(base, 32, n_over, 30.0))
    print(f"  sequential: {seq_ms:.2f} ms per call (client + loopback + server); client CPU {cpu_seq:.2f} ms")
    print(f"  concurrency 32: {par_ms:.2f} ms per call amortised ({1e3 / par_ms:.0f} calls/s)", end="")
    print(f"; client CPU {cpu_par:.2f} ms")
    with fake_server(0.0) as base:
        bare_ms = asyncio.run(bare_aiohttp(base, 32, 1000))
    print(f"  bare aiohttp client, concurrency 32: {bare_ms:.2f} ms per call (floor: server + loopback)")
    print(f"  ({uptime()})")

    if args.options:
        compare_options(args.repeat, n_over, waves)


if __name__ == "__main__":
    main()
