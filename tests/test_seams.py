"""Seams instead of patches (issue 41): the parts a dry run or a diagnosis substitutes (backbone,
embedder) go into `tomacs.job.components.build` as arguments and reach every user, nothing in the
package patches a module or swaps a built part's backbone, and a job's plan line walks the job's
own build instead of building the job a second time."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tomacs.job.components as components
import tomacs.launch.run as run_mod
from tomacs.analysis.propagation import run_episodes
from tomacs.config import compose
from tomacs.embedding.embedders import HashingEmbedder
from tomacs.job.components import build, rebuild
from tomacs.launch.spec import job_spec

PKG = Path(__file__).resolve().parents[1] / "tomacs"
MOCK = re.compile(
    r"\bunittest\.mock\b|\bfrom\s+unittest\s+import\s+mock\b|\bmock\.patch\b|^\s*import\s+mock\b", re.M
)
SWAPPED = {"backbone", "embedder", "crs"}  # parts a build hands out, set only by their owner


def mock_uses(text: str) -> list[str]:
    return [m.group(0).strip() for m in MOCK.finditer(text)]


def _root(node: ast.expr) -> str:
    while isinstance(node, ast.Attribute | ast.Subscript | ast.Call):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else ""


def part_swaps(text: str) -> list[str]:
    """`x.backbone = ...` (or .embedder, .crs) on anything but `self` (or a config, whose keys
    bear the same names): a built part swapped afterwards."""
    out = []
    for node in ast.walk(ast.parse(text)):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            targets = [node.target]
        for t in targets:
            if isinstance(t, ast.Attribute) and t.attr in SWAPPED:
                owner = t.value
                if not (isinstance(owner, ast.Name) and owner.id == "self") and "cfg" not in _root(owner):
                    out.append(f"line {node.lineno}: {ast.unparse(t)} = ...")
    return out


def test_the_scanners_see_a_patch_and_a_swap() -> None:
    """The two checks below can fail: each finds what it looks for in a sample."""
    assert mock_uses("from unittest import mock\nwith mock.patch('a.b', f):\n    pass\n") == [
        "from unittest import mock",
        "mock.patch",
    ]
    assert mock_uses("import unittest.mock\n") == ["unittest.mock"]
    sample = (
        "comps.executor.backbone = pb\nex.crs.backbone = pb\nself.backbone = backbone\ncfg.embedder = 'x'\n"
    )
    assert part_swaps(sample) == ["line 1: comps.executor.backbone = ...", "line 2: ex.crs.backbone = ..."]


def test_no_module_of_the_package_patches_or_swaps_a_built_part() -> None:
    files = sorted(PKG.rglob("*.py"))
    assert len(files) > 50
    found = {}
    for path in files:
        text = path.read_text()
        bad = mock_uses(text) + part_swaps(text)
        if bad:
            found[str(path.relative_to(PKG.parent))] = bad
    assert found == {}, found


# -- the substitutes reach their users --------------------------------------------------------------
class RecordingBackbone:
    """Answers with the job's own sim backbone and records the kind of every request."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.name = inner, inner.name
        self.kinds: list[str] = []

    async def generate(self, requests: list[Any]) -> list[Any]:
        self.kinds += [r.kind for r in requests]
        return await self.inner.generate(requests)

    def stats(self) -> dict[str, Any]:
        return {}

    async def aclose(self) -> None:
        return None


class RecordingEmbedder(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__(64)  # the hashing embedder's width
        self.texts: list[str] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.texts += list(texts)
        return super().embed(texts)


SMALL = ["agents=3", "rounds=2", "attack=gt50", "attack.onset_rounds=[2]", "eval.size=1", "eval.batch_size=1"]


def _no_global_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    """A build given an embedder must never make one of its own."""

    def refuse(*_: Any, **__: Any) -> None:
        raise AssertionError("get_embedder called although the build was given an embedder")

    monkeypatch.setattr("tomacs.embedding.embedders.get_embedder", refuse)
    monkeypatch.setattr("tomacs.methods.learned.get_embedder", refuse)


@pytest.mark.parametrize("overrides", [["method=complete"], ["method=crs"]])
def test_a_substitute_backbone_answers_the_executor_and_the_credibility_judge(overrides: list[str]) -> None:
    cfg = compose([*SMALL, *overrides])
    rec = RecordingBackbone(build(job_spec(cfg), need_train=False).backbone)
    comps = build(job_spec(compose([*SMALL, *overrides])), need_train=False, backbone=rec)
    assert comps.backbone is rec and comps.executor.backbone is rec
    if comps.executor.crs is not None:
        assert comps.executor.crs.backbone is rec
    (ep,) = run_episodes(comps.executor, comps.method, comps.test_qs, 1)
    assert ep.final_answer is not None
    assert rec.kinds.count("agent") >= 3  # every agent of round 1 asked the substitute


def test_a_substitute_backbone_is_the_judge_of_an_llm_credibility_run() -> None:
    """On an LLM config the credibility judge calls its backbone: the substitute's, not a built one
    (no server exists at the configured address)."""
    llm = [
        "backbone=openai_compatible",
        "backbone.api_base=http://127.0.0.1:9/v1",
        "backbone.model=openai/fake",
    ]
    sim = build(job_spec(compose([*SMALL, "method=crs"])), need_train=False).backbone
    rec = RecordingBackbone(sim)
    comps = build(
        job_spec(
            compose([*SMALL, *llm, "method=crs", "crs.contribution=judge", "backbone.cache.enabled=false"])
        ),
        False,
        backbone=rec,
    )
    run_episodes(comps.executor, comps.method, comps.test_qs, 1)
    assert "judge" in rec.kinds and "agent" in rec.kinds


@pytest.mark.parametrize(
    "overrides",
    [
        ["method=todycomm"],  # the executor embeds the agents' messages
        ["method=gdesigner"],  # the method embeds roles and queries itself
        ["method=crs", "crs.aggregation=centroid"],  # the credibility centroid
    ],
)
def test_a_substitute_embedder_is_the_only_embedder(
    overrides: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    emb = RecordingEmbedder()
    comps = build(job_spec(compose([*SMALL, "embedder=hashing", *overrides])), need_train=False, embedder=emb)
    _no_global_embedder(monkeypatch)
    assert comps.ctx.embedder is emb
    run_episodes(comps.executor, comps.method, comps.test_qs, 1)
    assert emb.texts, "the substitute embedder was never asked"
    assert rebuild(comps).ctx.embedder is emb  # a rebuild keeps the job's parts unless told otherwise


# -- one build per job ---------------------------------------------------------------------------------
class Stop(Exception):
    pass


def _count_builds(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    n = {"build": 0, "benchmark": 0, "backbone": 0}
    real_build, real_bench, real_backbone = (
        components.build,
        components.get_benchmark,
        components.build_backbone,
    )

    def counted(name: str, fn: Any) -> Any:
        def wrapper(*a: Any, **k: Any) -> Any:
            n[name] += 1
            return fn(*a, **k)

        return wrapper

    monkeypatch.setattr(components, "build", counted("build", real_build))
    monkeypatch.setattr(run_mod, "build", components.build)
    monkeypatch.setattr(components, "get_benchmark", counted("benchmark", real_bench))
    monkeypatch.setattr(components, "build_backbone", counted("backbone", real_backbone))
    return n


def test_a_sim_job_is_built_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    n = _count_builds(monkeypatch)
    res = run_mod.run_job(compose([*SMALL, "method=complete", "eval.size=2"]), "evaluate", tmp_path / "run")
    assert res["metrics"]["n_queries"] == 2
    assert n == {"build": 1, "benchmark": 1, "backbone": 1}


def test_an_llm_jobs_plan_line_walks_the_jobs_own_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The plan line of an LLM job is a dry run; it reuses the job's build (config, benchmark,
    questions, backbone) instead of building the job again. Stopped before any call is made."""
    n = _count_builds(monkeypatch)
    lines: list[str] = []
    real_line = run_mod.job_plan_line

    def line(*a: Any, **k: Any) -> str:
        lines.append(real_line(*a, **k))
        return lines[-1]

    def stop() -> None:
        raise Stop

    monkeypatch.setattr(run_mod, "job_plan_line", line)
    cfg = compose(
        [
            *SMALL,
            "method=complete",
            "eval.size=3",
            "backbone=openai_compatible",
            "backbone.api_base=http://127.0.0.1:9/v1",
            "backbone.model=openai/fake",
            f"backbone.cache.path={tmp_path / 'cache.sqlite'}",
        ]
    )
    with pytest.raises(Stop):
        run_mod.run_job(cfg, "evaluate", tmp_path / "run", on_start=stop)
    (plan_line,) = lines
    assert plan_line.startswith("plan: ") and "LLM calls" in plan_line, plan_line
    assert n == {"build": 1, "benchmark": 1, "backbone": 1}, n
