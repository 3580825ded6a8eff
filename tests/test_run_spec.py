"""The run spec (issue 41 item 3): a job's config is composed and validated above `launch/`, frozen into a
typed `RunSpec`, and no code below sees a DictConfig."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from tomacs.config import ConfigError, compose, to_container
from tomacs.job.files import read_run_config, run_spec, write_config
from tomacs.launch.spec import job_spec
from tomacs.runspec.spec import EvalSpec, Params, RunSpec, TrainSpec

PKG = Path(__file__).resolve().parents[1] / "tomacs"
# The composition layer: where Hydra's config is made, checked and turned into a spec.
ABOVE = ("launch/", "cli/", "config.py")
# The one module below it that reads and writes run directories' config.yaml with omegaconf's YAML (its
# loader reads the floats OmegaConf wrote), returning plain dicts.
YAML_IO = "job/files.py"


def _omegaconf_imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("omegaconf"):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.Import) and any(a.name.startswith("omegaconf") for a in node.names):
            names.add("omegaconf")
    return names


def test_no_module_below_launch_handles_a_dictconfig() -> None:
    found = {}
    for path in PKG.rglob("*.py"):
        rel = path.relative_to(PKG).as_posix()
        if rel.startswith(ABOVE):
            continue
        # MISSING marks schema fields whose default lives in a yaml (schemas are config, not run state)
        names = _omegaconf_imports(path) - {"MISSING"}
        if rel == YAML_IO:
            names -= {"OmegaConf"}
        if names:
            found[rel] = sorted(names)
    assert found == {}, f"modules below launch/ that import omegaconf: {found}"
    assert "OmegaConf" in _omegaconf_imports(PKG / YAML_IO)  # the check reads imports at all


def test_the_check_finds_a_dictconfig_import(tmp_path: Path) -> None:
    f = tmp_path / "m.py"
    f.write_text("def f():\n    from omegaconf import DictConfig, MISSING\n    return DictConfig\n")
    assert _omegaconf_imports(f) - {"MISSING"} == {"DictConfig"}


def test_a_spec_is_typed_and_frozen() -> None:
    spec = job_spec(compose(["method=todycomm", "embedder=hashing", "attack=gt50", "train=paper"]))
    assert isinstance(spec.train, TrainSpec) and isinstance(spec.eval, EvalSpec)
    assert (spec.train.epochs, spec.train.patience, spec.eval.seed) == (3, None, None)
    assert isinstance(spec.agents, int) and spec.mode == "train" and spec.device == "auto"
    assert spec.budget.in_degree is None and spec.embedder == "hashing"
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.seed = 1  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.train.epochs = 9  # type: ignore[misc]
    with pytest.raises(AttributeError, match="frozen"):
        spec.method.lr = 1.0
    with pytest.raises(TypeError):
        spec.attack["rate"] = 0.1  # type: ignore[index]
    assert isinstance(spec.attack.onset_rounds, tuple)  # lists freeze into tuples
    assert spec.method.name == "todycomm" and spec.method["name"] == "todycomm"
    with pytest.raises(AttributeError):
        _ = spec.method.no_such_key


def test_the_spec_records_what_was_composed() -> None:
    cfg = compose(["method=random", "attack=lt50", "seed=4", "eval.seed=7"])
    spec = job_spec(cfg)
    resolved = to_container(cfg)
    assert spec.as_dict() == resolved  # nothing added or lost (a static run embeds nothing: no embedder)
    mutable = spec.as_dict()
    mutable["attack"]["onset_rounds"].append(9)  # a caller's copy, not the spec
    assert spec.attack.onset_rounds == tuple(resolved["attack"]["onset_rounds"])
    assert spec.eval.seed == 7 and spec.seed == 4


def test_job_spec_validates_and_settles_the_embedder() -> None:
    spec = job_spec(compose(["method=todycomm"]))
    assert spec.embedder == "minilm"  # a learned method's default embedder, settled into the record
    assert spec.as_dict()["embedder"] == "minilm"
    cfg = compose(["method=complete"])
    cfg.agents = 1  # an edit that skipped compose's checks
    with pytest.raises(ConfigError, match="agents must be >= 2"):
        job_spec(cfg)


def test_a_run_directory_config_becomes_a_spec(tmp_path: Path) -> None:
    """An old config.yaml (written before train.samples and embed existed) migrates in tomacs.job.files."""
    resolved = to_container(compose(["method=todycomm", "embedder=hashing"]))
    del resolved["train"]["samples"], resolved["train"]["lr_schedule"], resolved["embed"]
    write_config(tmp_path, resolved)
    spec = run_spec(read_run_config(tmp_path) or {})
    assert (spec.train.samples, spec.train.lr_schedule) == (1, "constant")
    assert (spec.embed.cache, spec.embed.backend) == (None, "auto")
    assert read_run_config(tmp_path / "nowhere") is None


def test_a_config_that_lacks_a_typed_key_is_one_line() -> None:
    resolved = to_container(compose(["method=complete"]))
    del resolved["eval"]["size"]
    with pytest.raises(ValueError, match="EvalSpec: missing keys size"):
        RunSpec.of(resolved)
    resolved = to_container(compose(["method=complete"]))
    resolved["budget"]["in_dgree"] = 1
    with pytest.raises(ValueError, match="BudgetSpec: unknown keys in_dgree; valid: in_degree"):
        RunSpec.of(resolved)


def test_params_compare_and_thaw() -> None:
    p = Params({"a": [1, {"b": 2}], "c": None})
    assert p == {"a": [1, {"b": 2}], "c": None} and p.plain() == {"a": [1, {"b": 2}], "c": None}
    assert isinstance(p["a"][1], Params) and len(p) == 2 and list(p) == ["a", "c"]


def test_a_spec_copies_and_pickles() -> None:
    import copy
    import pickle

    spec = job_spec(compose(["method=complete", "attack=gt50"]))
    for twin in (copy.deepcopy(spec), pickle.loads(pickle.dumps(spec))):
        assert twin == spec and twin.as_dict() == spec.as_dict() and isinstance(twin.attack, Params)


def test_a_successful_compose_composes_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The defaults are composed only to explain a failure (issue 41: one `tomacs train` composed
    three times)."""
    import hydra

    calls = []
    real = hydra.compose

    def counting(*args: object, **kwargs: object) -> object:
        calls.append(kwargs.get("overrides"))
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(hydra, "compose", counting)
    compose(["method=complete"])
    assert len(calls) == 1
    with pytest.raises(ConfigError, match="valid"):
        compose(["method=nope"])
    assert len(calls) > 2  # the failure composed the defaults to name the valid options


def test_a_single_run_composes_and_validates_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 41, item 3: `tomacs train` composed its config twice (the CLI's one-line check, then
    hydra.main) and validated it twice; now Hydra runs the config the CLI composed."""
    import sys

    from hydra._internal.config_loader_impl import ConfigLoaderImpl
    from typer.testing import CliRunner

    import tomacs.config
    import tomacs.launch.spec
    from tomacs.cli import app
    from tomacs.job.rundir import ARGV_ENV

    monkeypatch.setattr(sys, "argv", list(sys.argv))
    monkeypatch.setenv(ARGV_ENV, "")
    composed, validated = [], []
    real_load, real_validate = ConfigLoaderImpl.load_configuration, tomacs.config.validate

    def load(self: ConfigLoaderImpl, *args: object, **kwargs: object) -> object:
        composed.append(kwargs.get("overrides"))
        return real_load(self, *args, **kwargs)  # type: ignore[arg-type]

    def check(cfg: object) -> None:
        validated.append(cfg)
        real_validate(cfg)  # type: ignore[arg-type]

    monkeypatch.setattr(ConfigLoaderImpl, "load_configuration", load)
    monkeypatch.setattr(tomacs.config, "validate", check)
    monkeypatch.setattr(tomacs.launch.spec, "validate", check)
    run = tmp_path / "run"
    res = CliRunner().invoke(
        app, ["train", "method=complete", "benchmark=synthetic", "eval.size=2", f"hydra.run.dir={run}"]
    )
    assert res.exit_code == 0, res.output
    assert (run / "results.json").is_file() and (run / ".hydra" / "hydra.yaml").is_file()
    assert len(composed) == 1, composed
    assert len(validated) == 1
    # what hydra.main recorded is recorded still: the job's name (its log file) and the run mode
    hydra_yaml = (run / ".hydra" / "hydra.yaml").read_text()
    assert "- hydra.mode=RUN" in hydra_yaml and "name: hydra_app" in hydra_yaml
    assert (run / "hydra_app.log").is_file()
