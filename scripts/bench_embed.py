"""MiniLM embedding time per precision, agreement with fp32, and the persistent cache's effect.

    python scripts/bench_embed.py                 # 524 analyses (one TodyComm iteration's worth), 2 repeats
    python scripts/bench_embed.py --texts 128 --repeat 3

The texts are simulator analyses of synthetic questions (the length TodyComm embeds: about 150
tokens). For each precision this CPU can run fast (fp32 always; bf16 where it has native bf16) it
prints the encode time of all texts in one embedder call, and the cosine of every vector to its fp32
vector (min and mean). Then it times the same call against a cold and a warm persistent cache. The
load average is printed with each figure, because timings on a shared machine are noisy.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def analyses(n: int) -> list[str]:
    from tomacs.benchmarks.base import get_benchmark
    from tomacs.sim.text import honest_analysis

    qs = get_benchmark("synthetic").load("test", 200, 0)
    rng = np.random.default_rng(0)
    out: list[str] = []
    roles = ("Knowledgeable Expert", "Critic", "Mathematician", "Psychologist", "Historian", "Doctor")
    while len(out) < n:
        q = qs[len(out) % len(qs)]
        label = q.labels[int(rng.integers(len(q.labels)))]
        out.append(honest_analysis(q, roles[len(out) % len(roles)], label, rng))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--texts", type=int, default=524)
    ap.add_argument("--repeat", type=int, default=2)
    a = ap.parse_args()
    from tomacs.embedding.cache import EmbeddingCache
    from tomacs.embedding.embedders import MiniLMEmbedder, cpu_bf16_flags
    from tomacs.tokens import count_tokens

    texts = analyses(a.texts)
    toks = [count_tokens(t) for t in texts]
    flags = sorted(cpu_bf16_flags())
    print(
        f"{len(texts)} texts, {np.mean(toks):.0f} tokens on average; CPU bf16 flags: {flags or 'none'}; "
        f"torch threads: {__import__('torch').get_num_threads()}"
    )
    precisions = ["fp32"] + (["bf16"] if flags else [])
    vecs: dict[str, np.ndarray] = {}
    MiniLMEmbedder(precision="fp32").embed(["warm-up: load the model once"])
    for rep in range(a.repeat):
        for p in precisions:
            e = MiniLMEmbedder(precision=p)
            t0 = time.perf_counter()
            vecs[p] = e.embed(texts)
            wall = time.perf_counter() - t0
            print(
                f"  [{rep + 1}] {p}: {wall:6.2f} s ({1000 * wall / len(texts):.1f} ms/text)  load {load()}",
                flush=True,
            )
    for p in precisions[1:]:
        cos = np.sum(vecs[p] * vecs["fp32"], axis=1)
        print(f"{p} vs fp32: cosine min {cos.min():.6f}, mean {cos.mean():.6f}")
    best = precisions[-1]
    got = []
    with tempfile.TemporaryDirectory() as tmp, EmbeddingCache(Path(tmp) / "e.sqlite") as store:
        for label in ("cold cache (encode + store)", "warm cache (a re-run)"):
            e = MiniLMEmbedder(precision=best, cache=store)
            t0 = time.perf_counter()
            got.append(e.embed(texts))
            wall = time.perf_counter() - t0
            print(f"{best}, {label}: {wall:6.2f} s, {e.encoded} texts encoded  load {load()}")
    print(f"warm-cache vectors bit-identical to the ones stored: {np.array_equal(got[0], got[1])}")


if __name__ == "__main__":
    main()
