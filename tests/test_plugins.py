"""Adding a method, a benchmark or a backbone takes the files its how-to lists, and no more.

docs/howto/add-method.md, add-benchmark.md and add-backbone.md each hold one numbered list.

Each test reads its section's numbered list, copies the package and its conf/ into tmp_path, makes exactly
the listed changes (new files, and one line in the kind's registry table), checks that the files which
differ from the checkout are the listed ones, and runs a tiny job through the CLI on the copy (tmp_path
on PYTHONPATH). The toy plugins are judged by what their job writes, so a step the doc forgot fails here.
"""

from __future__ import annotations

import filecmp
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tomacs.backbones.base import BACKBONES, backbone_class, is_simulated_label
from tomacs.benchmarks.base import BENCHMARKS, get_benchmark
from tomacs.methods.registry import METHODS, method_names
from tomacs.registry import Registry, load_target

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs" / "howto"  # add-method.md, add-benchmark.md, add-backbone.md
TINY = ["eval.size=3", "train.size=4", "train.epochs=1", "embedder=hashing", "agents=3", "rounds=2"]


def doc_steps(kind: str) -> tuple[int, list[str]]:
    """The file count a section's heading gives and the files its numbered list names, in order."""
    text = (DOCS / f"add-{kind}.md").read_text()
    m = re.search(rf"^# Add a {kind} \((\d+) files\)\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert m, f"docs/howto/add-{kind}.md has no '# Add a {kind} (N files)' heading"
    files = re.findall(r"^\d+\. `([^`]+)`", m.group(2), re.M)
    return int(m.group(1)), files


def copy_package(dst: Path) -> Path:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(REPO / "tomacs", dst / "tomacs", ignore=ignore)
    shutil.copytree(REPO / "conf", dst / "conf", ignore=ignore)
    return dst


def changed_files(copy: Path) -> set[str]:
    """Files of the copy that are new or differ from the checkout."""
    out = set()
    for path in copy.rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts:
            rel = path.relative_to(copy)
            orig = REPO / rel
            if not orig.is_file() or not filecmp.cmp(orig, path, shallow=False):
                out.add(rel.as_posix())
    return out


def add_table_line(path: Path, table: str, name: str, target: str) -> None:
    """The one-line edit a step asks for: a new entry in a registry table, above its first one."""
    lines = path.read_text().splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{table}: Registry["))
    first = next(i for i in range(start, len(lines)) if re.match(r'\s+"[\w-]+": "[\w.]+:\w+",', lines[i]))
    indent = lines[first][: len(lines[first]) - len(lines[first].lstrip())]
    lines.insert(first, f'{indent}"{name}": "{target}",\n')
    path.write_text("".join(lines))


def follow(kind: str, copy: Path, name: str, module: str, conf: str, table: str, target: str) -> None:
    """Make each change the doc's list names, in its order, and only those."""
    count, files = doc_steps(kind)
    assert count == len(files), f"'Add a {kind}' says {count} files but lists {len(files)}"
    writes = {"py": module, "yaml": conf}
    for step in files:
        path = copy / step.replace("NAME", name)
        if "NAME" in step:  # a new file
            assert not path.exists(), step
            path.write_text(writes[path.suffix.lstrip(".")])
        else:  # the registry table
            add_table_line(path, table, name, target)
    assert changed_files(copy) == {f.replace("NAME", name) for f in files}


def run_cli(copy: Path, cwd: Path, *args: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(copy), "HF_HUB_OFFLINE": "1", "WANDB_MODE": "offline"}
    run = cwd / "run"
    p = subprocess.run(
        [sys.executable, "-m", "tomacs.cli", "train", *TINY, *args, f"hydra.run.dir={run}"],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
    )
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    results = json.loads((run / "results.json").read_text())
    results["_stderr"] = p.stderr
    return results


def cli_error(copy: Path, cwd: Path, *args: str) -> str:
    """`tomacs train ARGS` in the copy must fail; its stderr, stripped (the one-line error)."""
    env = {**os.environ, "PYTHONPATH": str(copy)}
    p = subprocess.run(
        [sys.executable, "-m", "tomacs.cli", "train", *args], capture_output=True, text=True, env=env, cwd=cwd
    )
    assert p.returncode != 0
    return p.stderr.strip()


TOY_METHOD = '''
from dataclasses import dataclass

from tomacs.methods.base import Method
from tomacs.methods.settings import MethodSettings, bounded
from tomacs.types import RoundGraph


@dataclass
class HubSettings(MethodSettings):
    name: str = "toy_hub"
    hub: int = bounded(0, 0.0)  # the agent every other agent reads


class Hub(Method):
    """Every agent after round 1 reads the hub agent only."""

    Settings = HubSettings

    def __init__(self, ctx, **params):
        self.settings = self.Settings.from_params(params)
        super().__init__(ctx, **self.settings.params())

    def act(self, state, t, history):
        n, hub = self.ctx.n_agents, self.settings.hub
        edges = [(hub, i) for i in range(n) if i != hub]
        return [RoundGraph(nodes=list(range(n)), edges=edges) for _ in history]
'''
TOY_METHOD_CONF = """defaults:
  - /schema/method/toy_hub@_here_
  - _self_
"""


@pytest.mark.slow  # copies the package and runs a job in a fresh interpreter
def test_add_a_method(tmp_path: Path) -> None:
    copy = copy_package(tmp_path / "copy")
    follow("method", copy, "toy_hub", TOY_METHOD, TOY_METHOD_CONF, "METHODS", "tomacs.methods.toy_hub:Hub")
    res = run_cli(copy, tmp_path, "method=toy_hub", "method.hub=1")
    assert res["method"] == "toy_hub"
    assert res["metrics"]["n_queries"] == 3
    episodes = [json.loads(line) for line in (tmp_path / "run" / "episodes.jsonl").read_text().splitlines()]
    edges = {tuple(map(tuple, g["edges"])) for ep in episodes for g in ep["graphs"] if g is not None}
    assert edges == {((1, 0), (1, 2))}  # the toy's graph from its setting, not a built-in's
    # the schema the METHODS line registered types and bounds the key: one line naming it
    err = cli_error(copy, tmp_path, "method=toy_hub", "method.hub=-1")
    assert err == "error: method.hub must be an integer >= 0, got -1 (method=toy_hub)"


TOY_BENCHMARK = '''
from dataclasses import dataclass

from tomacs.benchmarks.base import BenchmarkAdapter, BenchmarkSettings
from tomacs.types import Question


@dataclass
class SumsSettings(BenchmarkSettings):
    name: str = "toy_sums"
    path: str | None = None  # generated: no files
    source: str = "generated"
    test_subset: int | None = 2


class Sums(BenchmarkAdapter):
    """n + 1 among four numbers; the gold is always option B."""

    Settings = SumsSettings

    def load(self, split, size=None, seed=0):
        n = min(size or 5, self.test_subset or 5) if split == "test" else size or 5
        return [
            Question(f"{split}-{i}", f"What is {i} + 1?", (str(i), str(i + 1), str(i + 2), str(i + 3)),
                     "B", self.name, "mc")
            for i in range(n)
        ]
'''
TOY_BENCHMARK_CONF = """defaults:
  - /schema/benchmark/toy_sums@_here_
  - _self_
"""


@pytest.mark.slow  # copies the package and runs a job in a fresh interpreter
def test_add_a_benchmark(tmp_path: Path) -> None:
    copy = copy_package(tmp_path / "copy")
    target = "tomacs.benchmarks.toy_sums:Sums"
    follow("benchmark", copy, "toy_sums", TOY_BENCHMARK, TOY_BENCHMARK_CONF, "BENCHMARKS", target)
    res = run_cli(copy, tmp_path, "benchmark=toy_sums", "method=complete")
    assert res["benchmark"] == "toy_sums"
    assert res["metrics"]["n_queries"] == 2  # eval.size=3, capped by the toy schema's test_subset
    bench = res["config"]["benchmark"]
    assert (bench["source"], bench["roles"], bench["test_subset"]) == ("generated", "mmlu", 2)
    episodes = (tmp_path / "run" / "episodes.jsonl").read_text().splitlines()
    texts = {json.loads(line)["question"]["text"] for line in episodes}
    assert texts == {f"What is {i} + 1?" for i in range(2)}  # the toy's questions, not synthetic ones


TOY_BACKBONE = '''
from dataclasses import dataclass

from tomacs.backbones.base import BaseBackbone, GenerationReply


@dataclass
class OracleSettings:
    name: str = "oracle"
    kind: str = "oracle"
    tokens: int = 7  # tokens counted per reply


class Oracle(BaseBackbone):
    """Every agent answers the gold letter; free and local, so a simulated kind."""

    simulated = True
    Settings = OracleSettings

    def __init__(self, tokens):
        self.name = "oracle"
        self.tokens = tokens
        self.calls = 0

    @classmethod
    def from_job(cls, spec, bench):
        return cls(int(spec.backbone.tokens))

    async def generate(self, requests):
        self.calls += len(requests)
        return [GenerationReply(f"Answer: {r.question.answer}", self.tokens, self.tokens) for r in requests]

    def stats(self):
        return {"backbone": self.name, "calls": self.calls}

    async def aclose(self):
        return None
'''
TOY_BACKBONE_CONF = """defaults:
  - /schema/backbone/oracle@_here_
  - _self_
"""


@pytest.mark.slow  # copies the package and runs a job in a fresh interpreter
def test_add_a_backbone(tmp_path: Path) -> None:
    copy = copy_package(tmp_path / "copy")
    target = "tomacs.backbones.oracle:Oracle"
    follow("backbone", copy, "oracle", TOY_BACKBONE, TOY_BACKBONE_CONF, "BACKBONES", target)
    res = run_cli(copy, tmp_path, "backbone=oracle", "method=complete", "attack=none")
    assert res["backbone"] == "oracle"
    assert res["metrics"]["acc"] == 1.0  # every agent gave the gold: the toy answered, not the simulator
    assert res["backbone_stats"]["calls"] > 0
    assert res["config"]["backbone"] == {"name": "oracle", "kind": "oracle", "tokens": 7}  # the schema's
    assert "plan: oracle backbone, $0" in res["_stderr"]  # simulated: nothing to price, as for sim
    # the schema the BACKBONES line registered types the key: one line naming it
    assert cli_error(copy, tmp_path, "backbone=oracle", "backbone.tokens=many") == (
        "error: bad value 'many' for 'backbone.tokens': expected an integer, e.g. backbone.tokens=7"
    )


# -- the registry itself -------------------------------------------------------------------------------


def test_registry_is_lazy_and_lists_names_on_a_typo() -> None:
    reg: Registry[object] = Registry("widget", {"json": "json:dumps", "path": "os.path:join"})
    assert reg.names() == ["json", "path"]
    assert "json" in reg and "yaml" not in reg
    assert reg.get("path") is os.path.join
    with pytest.raises(ValueError, match=r"^unknown widget 'jsn'; valid: json, path$"):
        reg.get("jsn")
    reg.register("dumps", json.dumps)
    assert reg.get("dumps") is json.dumps
    reg.register("path", "os.path:join")  # the same target again is fine
    with pytest.raises(ValueError, match="registered twice"):
        reg.register("path", "os.path:split")
    with pytest.raises(ValueError, match="module:attr"):
        load_target("os.path.join")


def test_unknown_names_keep_their_one_line_errors() -> None:
    valid = r"valid: arc_c, debates, gsm8k, medqa, mmlu, "
    with pytest.raises(ValueError, match=rf"^unknown benchmark 'mmlux'; {valid}"):
        get_benchmark("mmlux")
    with pytest.raises(ValueError, match=r"^unknown method 'compleat'; valid: agentprune, card, chain, "):
        METHODS.get("compleat")
    with pytest.raises(ValueError, match=r"^unknown backbone 'gpt'; valid: litellm, sim$"):
        backbone_class({"name": "gpt-4.1-nano", "kind": "gpt"})


def test_tables_match_the_conf_groups() -> None:
    """Every conf/method and conf/benchmark option has a table entry and the reverse; every backbone yaml
    names a registered kind. Each entry's class carries its own name."""
    conf = REPO / "conf"
    assert method_names() == sorted(p.stem for p in (conf / "method").glob("*.yaml"))
    assert BENCHMARKS.names() == sorted(p.stem for p in (conf / "benchmark").glob("*.yaml"))
    for name in method_names():
        assert METHODS.get(name).name == name
    for name in BENCHMARKS.names():
        assert BENCHMARKS.get(name).name == name
    from tomacs.config import compose

    composed = [compose([f"backbone={p.stem}"]).backbone for p in (conf / "backbone").glob("*.yaml")]
    kinds = {backbone_class(b) for b in composed}  # a litellm preset's kind comes from its schema
    assert kinds == {BACKBONES.get("sim"), BACKBONES.get("litellm")}


def test_only_the_simulator_is_simulated() -> None:
    assert BACKBONES.get("sim").simulated and not BACKBONES.get("litellm").simulated
    assert is_simulated_label("sim") and is_simulated_label("sim:fitted")
    assert not is_simulated_label("litellm:gpt-4.1-nano") and not is_simulated_label("gpt-4.1-nano")
