"""MiniLM encoders on a CPU: texts per second and cosine to fp32 vectors, and the persistent cache.

    python scripts/bench/embed.py                 # 524 analyses (one TodyComm iteration's worth), 3 repeats
    python scripts/bench/embed.py --texts 128 --repeat 2

The texts are simulator analyses of synthetic questions (the length TodyComm embeds: about 150
tokens). Each encoder embeds all texts in one embedder call, `--repeat` times in turn (best time
printed, with every run's time and the load average, because timings on a shared machine are noisy):

- torch at fp32 (the reference vectors) and, where the CPU has native bf16, at bf16;
- OpenVINO (`embed.backend=openvino`, what `auto` picks on a CPU) at fp32 and bf16;
- torch bf16 with the model's sequence length cut to 128 tokens (a truncation: fast but lossy);
- onnxruntime's dynamic int8 quantisation, only where onnxruntime is installed (not a dependency).

For each it prints the cosine of every vector to its torch fp32 vector (min and mean). Then it times
one call against a cold and a warm persistent cache.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any

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


def int8_onnxruntime(texts: list[str]) -> Any:
    """onnxruntime's dynamic int8 quantisation of the exported network, or None without it."""
    try:
        import onnxruntime as ort
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError:
        return None
    import torch

    from tomacs.embedding.embedders import MiniLMEmbedder
    from tomacs.embedding.openvino_minilm import INPUTS, _pooled

    st = MiniLMEmbedder(precision="fp32")._load()
    tok = st[0].tokenizer
    tmp = Path(tempfile.mkdtemp())
    ex = tok(["a", "b c"], padding=True, return_tensors="pt")
    torch.onnx.export(
        _pooled(st[0].auto_model),
        tuple(ex[k] for k in INPUTS),
        str(tmp / "m.onnx"),
        input_names=list(INPUTS),
        output_names=["embedding"],
        dynamic_axes={k: {0: "b", 1: "t"} for k in INPUTS} | {"embedding": {0: "b"}},
        opset_version=17,
        dynamo=False,
    )
    quantize_dynamic(str(tmp / "m.onnx"), str(tmp / "q.onnx"), weight_type=QuantType.QInt8)
    so = ort.SessionOptions()
    so.intra_op_num_threads = torch.get_num_threads()
    sess = ort.InferenceSession(str(tmp / "q.onnx"), so, providers=["CPUExecutionProvider"])

    def run() -> np.ndarray:
        out = np.zeros((len(texts), 384), np.float32)
        order = np.argsort([-len(t) for t in texts], kind="stable")
        for i in range(0, len(texts), 64):
            idx = order[i : i + 64]
            enc = tok(
                [texts[j] for j in idx], padding=True, truncation=True, max_length=256, return_tensors="np"
            )
            out[idx] = sess.run(None, {k: np.asarray(enc[k], dtype=np.int64) for k in INPUTS})[0]
        return out

    return run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--texts", type=int, default=524)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    import torch

    from tomacs.embedding.cache import EmbeddingCache
    from tomacs.embedding.embedders import MiniLMEmbedder, cpu_bf16_flags
    from tomacs.embedding.openvino_minilm import missing_packages
    from tomacs.tokens import count_tokens

    texts = analyses(a.texts)
    toks = [count_tokens(t) for t in texts]
    flags = sorted(cpu_bf16_flags())
    print(
        f"{len(texts)} texts, {np.mean(toks):.0f} tokens on average; CPU bf16 flags: {flags or 'none'}; "
        f"torch threads: {torch.get_num_threads()}"
    )
    precisions = ["fp32"] + (["bf16"] if flags else [])

    def embedder(backend: str, precision: str, max_len: int | None = None) -> Any:
        def run() -> np.ndarray:
            e = MiniLMEmbedder(precision=precision, backend=backend)
            model = e._load()
            full = model.max_seq_length
            model.max_seq_length = max_len or full
            try:
                return e.embed(texts)
            finally:
                model.max_seq_length = full

        return run

    cases: dict[str, Any] = {f"torch {p}": embedder("torch", p) for p in precisions}
    if missing_packages():
        print(f"openvino: skipped, missing {', '.join(missing_packages())}")
    else:
        cases |= {f"openvino {p}": embedder("openvino", p) for p in precisions}
    cases[f"torch {precisions[-1]}, 128 tokens"] = embedder("torch", precisions[-1], 128)
    q8 = int8_onnxruntime(texts)
    if q8 is None:
        print("onnxruntime int8: skipped, onnxruntime is not installed")
    else:
        cases["onnxruntime int8"] = q8
    for run in cases.values():  # load and compile every encoder before timing any
        run()
    walls: dict[str, list[float]] = {k: [] for k in cases}
    vecs: dict[str, np.ndarray] = {}
    for _ in range(a.repeat):
        for name, run in cases.items():
            t0 = time.perf_counter()
            vecs[name] = run()
            walls[name].append(time.perf_counter() - t0)
    ref = vecs["torch fp32"]
    for name, ws in walls.items():
        cos = np.sum(vecs[name] * ref, axis=1)
        print(
            f"  {name:24s} {len(texts) / min(ws):6.1f} texts/s  (runs {' '.join(f'{w:.1f}' for w in ws)} s)"
            f"  cosine to torch fp32: min {cos.min():.6f} mean {cos.mean():.6f}  load {load()}",
            flush=True,
        )
    best = precisions[-1]
    got = []
    with tempfile.TemporaryDirectory() as tmp, EmbeddingCache(Path(tmp) / "e.sqlite") as store:
        for label in ("cold cache (encode + store)", "warm cache (a re-run)"):
            e = MiniLMEmbedder(precision=best, cache=store, backend="auto")
            t0 = time.perf_counter()
            got.append(e.embed(texts))
            wall = time.perf_counter() - t0
            print(f"{e.backend} {best}, {label}: {wall:6.2f} s, {e.encoded} texts encoded  load {load()}")
    print(f"warm-cache vectors bit-identical to the ones stored: {np.array_equal(got[0], got[1])}")


if __name__ == "__main__":
    main()
