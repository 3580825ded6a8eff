"""MiniLM through OpenVINO on a CPU: the same network and weights, 2-3x the texts per second of torch.

A default MiniLM job spends most of its time encoding (issue 40), so the encoder's speed is the job's
speed. OpenVINO runs the exported network with fused CPU kernels; at bf16 it is about 2.7x torch's
bf16 path on an AVX512-BF16 CPU, with the same cosine to fp32 vectors (>= 0.99995; measured by
`scripts/bench/embed.py`). The sentence-transformers model is exported once per process to ONNX
(token embeddings, mean pooling and L2 normalisation in one graph; about 2 s) and read by the
OpenVINO runtime. `openvino.convert_model` is deliberately not used: its converter sends usage
telemetry unless the user has opted out, and tomacs never phones home.
"""

from __future__ import annotations

import tempfile
import threading
from pathlib import Path
from typing import Any

import numpy as np

from tomacs.embedding.batching import INPUTS, encode_canonical

PIP_LINE = "pip install openvino==2026.4.1 onnx==1.23.2"


def missing_packages() -> list[str]:
    """The packages the OpenVINO path needs that this environment lacks (none: it can run)."""
    import importlib.util

    return [m for m in ("openvino", "onnx") if importlib.util.find_spec(m) is None]


def _pooled(module: Any) -> Any:
    """The transformer plus sentence-transformers' mean pooling and normalisation, as one module
    taking token ids, so the exported graph returns the vectors `SentenceTransformer.encode` does."""
    import torch

    class Pooled(torch.nn.Module):
        def __init__(self, bert: Any) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            h = self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            w = attention_mask.unsqueeze(-1).to(h.dtype)
            v = (h * w).sum(1) / w.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(v, dim=-1)

    return Pooled(module).eval()


class OpenVinoMiniLM:
    """The compiled network and the model's own tokenizer (same truncation as sentence-transformers)."""

    def __init__(self, st_model: Any, precision: str, threads: int) -> None:
        import warnings

        import openvino as ov
        import torch

        transformer = st_model[0]
        self.tokenizer = transformer.tokenizer
        self.max_length = int(st_model.max_seq_length)
        example = self.tokenizer(["a", "b c"], padding=True, return_tensors="pt")
        with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
            warnings.simplefilter(
                "ignore"
            )  # the exporter's tracer warnings are about control flow we do not use
            path = Path(tmp) / "minilm.onnx"
            torch.onnx.export(
                _pooled(transformer.auto_model),
                tuple(example[k] for k in INPUTS),
                str(path),
                input_names=list(INPUTS),
                output_names=["embedding"],
                dynamic_axes={k: {0: "batch", 1: "tokens"} for k in INPUTS} | {"embedding": {0: "batch"}},
                opset_version=17,
                dynamo=False,
            )
            core = ov.Core()
            hint = {"bf16": "bf16", "fp32": "f32"}[precision]
            self.compiled = core.compile_model(
                core.read_model(str(path)),
                "CPU",
                {"INFERENCE_NUM_THREADS": int(threads), "INFERENCE_PRECISION_HINT": hint},
            )
        self.output = self.compiled.output(0)
        self._lock = threading.Lock()  # one infer request per compiled model; the executor embeds off-thread

    def encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        """Batches of one padded length (`tomacs.embedding.batching`); OpenVINO's rows do not depend
        on their batch's row count (checked at 1-64 rows and 1-2 threads), so none are added."""

        def run(feed: dict[str, np.ndarray]) -> np.ndarray:
            with self._lock:
                return np.asarray(self.compiled(feed)[self.output])

        return encode_canonical(self.tokenizer, texts, self.max_length, batch_size, run, fixed_rows=False)
