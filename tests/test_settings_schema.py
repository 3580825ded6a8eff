"""Issue 29 item 1: a method's settings schema is the one place its defaults are written; the yaml
extends it and keeps only what differs, and every setting is checked in one place."""

from __future__ import annotations

import dataclasses
import importlib
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from omegaconf import OmegaConf

from tomacs.config import ConfigError, compose, group_options, resolve_embedder, to_container
from tomacs.methods.registry import method_class, method_settings, settings_class
from tomacs.methods.settings import LearnedSettings, MethodSettings, OpenSettings, SettingsError
from tomacs.paths import conf_dir

METHODS = group_options()["method"]
TYPED = [m for m in METHODS if settings_class(m) is not OpenSettings]
SCHEMA_ENTRY = "/schema/method/{}@_here_"


def _shipped(name: str) -> dict[str, object]:
    return yaml.safe_load((conf_dir() / "method" / f"{name}.yaml").read_text()) or {}


def test_every_method_has_a_schema() -> None:
    assert TYPED == METHODS
    learned = {"todycomm", "gdesigner", "agentprune", "eib", "card", "gsafeguard"}
    for name in TYPED:
        assert issubclass(settings_class(name), LearnedSettings) == (name in learned)
        module = importlib.import_module(method_class(name).__module__)
        assert not hasattr(module, "DEFAULTS"), f"{module.__name__} still writes a DEFAULTS dict"


def _repeated_defaults(name: str, shipped: dict[str, object]) -> list[str]:
    """The keys of an option file (less its defaults list) whose value is its schema's default."""
    defaults = settings_class(name)().params()
    unknown = set(shipped) - set(defaults) - {"defaults"}
    assert not unknown, f"{name}.yaml sets keys its schema lacks: {sorted(unknown)}"
    return sorted(k for k, v in shipped.items() if k != "defaults" and v == defaults[k])


@pytest.mark.parametrize("name", TYPED)
def test_yaml_extends_its_schema_and_repeats_no_default(name: str) -> None:
    """Fails if conf/method/<name>.yaml writes a value its schema already has (a default written twice)."""
    shipped = _shipped(name)
    # the schema first, _self_ last; between them only a budget of the method's own (train=...)
    first, *between, last = shipped["defaults"]
    assert (first, last) == (SCHEMA_ENTRY.format(name), "_self_")
    assert all(list(e) == ["override /train@_global_.train"] for e in between), between
    repeated = _repeated_defaults(name, shipped)
    assert not repeated, f"{name}.yaml repeats schema defaults {repeated}: delete them from the yaml"


def test_a_repeated_default_would_be_caught() -> None:
    """The check above is not vacuous: a yaml that writes `epsilon: 0.1` again is flagged, a changed
    value is not."""
    shipped = {**_shipped("todycomm"), "epsilon": 0.1, "gamma": 0.5}
    assert _repeated_defaults("todycomm", shipped) == ["epsilon"]
    with pytest.raises(AssertionError, match="lacks"):
        _repeated_defaults("todycomm", {"epsilom": 0.1})


@pytest.mark.parametrize("name", TYPED)
def test_settings_round_trip(name: str) -> None:
    cls = settings_class(name)
    s = cls()
    assert cls.from_params(s.params()) == s
    assert OmegaConf.to_object(OmegaConf.structured(cls)) == s  # Hydra's view of the schema
    cfg = compose([f"method={name}"])
    assert method_settings(cfg) == s  # the shipped config is the schema's defaults
    # a run directory's config.yaml (plain yaml, no schema attached) reads back the same settings
    saved = OmegaConf.create(OmegaConf.to_yaml(OmegaConf.create(to_container(cfg))))
    assert method_settings(saved) == s
    built = method_class(name)
    assert built.Settings is cls and built.name == s.name == name  # type: ignore[attr-defined]


def test_non_default_values_round_trip_through_compose_and_the_method() -> None:
    cfg = compose(["method=todycomm", "method.epsilon=0.25", "method.baseline=none", "method.emb_proj=8"])
    s = method_settings(cfg)
    assert (s.epsilon, s.baseline, s.emb_proj) == (0.25, "none", 8)  # type: ignore[attr-defined]
    assert type(s).from_params(dataclasses.asdict(s)) == s
    assert dict(cfg.method)["epsilon"] == 0.25


def test_a_config_yaml_written_before_the_schema_still_loads() -> None:
    """Keys and values exactly as conf/method/todycomm.yaml shipped them before issue 29 (run dirs
    and results.json of older runs hold them). Its method.embedder settles to the run's one key first
    (resolve_embedder, as tomacs.job.components does); the schema itself has no embedder."""
    old = {
        "method": {
            "name": "todycomm", "hidden_size": 64, "mlp_hidden": 32, "epsilon": 0.1, "gamma": 0.9,
            "baseline": "batch_mean", "baseline_momentum": 0.9, "features": "full", "ablation": "none",
            "embedder": "hashing", "emb_dim": None, "decision_tau": 1.0, "normalize": "running",
            "norm_clip": 5.0, "isolated": "answer", "emb_proj": 0, "tie_tol": 0.0, "lr": None,
        }
    }  # fmt: skip
    cfg = OmegaConf.create(old)
    with pytest.raises(ValueError, match=r"unknown todycomm parameters \['embedder'\]"):
        method_settings(cfg)  # unsettled: the schema has no embedder field
    resolve_embedder(cfg)
    assert cfg.embedder == "hashing"
    # today's defaults but emb_proj, whose default became null (by width) in issue 28: the old 0 is kept,
    # and gamma, whose default became null (0.1 with the expected decision) in issue 40: the old 0.9 is kept
    assert method_settings(cfg) == settings_class("todycomm")(emb_proj=0, gamma=0.9)


def test_an_old_run_directory_config_builds() -> None:
    """`tomacs diagnose` builds a job from a run directory's config.yaml as saved: one written before the
    embedder became one key holds method.embedder, which its spec (tomacs.job.files.run_spec) settles
    before the schema checks it."""
    from tomacs.job.components import build
    from tomacs.job.files import run_spec

    old = to_container(compose(["method=todycomm", "eval.size=3", "agents=3", "rounds=2"]))
    old["embedder"] = None
    old["method"]["embedder"] = "hashing"
    spec = run_spec(old)
    assert spec.embedder == "hashing" and "embedder" not in spec.method
    assert old["method"]["embedder"] == "hashing"  # the caller's config is left as it was
    comps = build(spec, need_train=False)
    assert comps.method.embedder_name == "hashing"  # type: ignore[attr-defined]


# -- validation: one line naming the key and what it must be -----------------------------------------
@pytest.mark.parametrize(
    ("name", "params", "message"),
    [
        ("todycomm", {"baseline": "critic"},
         "todycomm: baseline must be one of none, batch_mean, moving_avg, per_question, got 'critic'"),
        ("todycomm", {"epsilon": 1.5}, "todycomm: epsilon must be a number in [0, 1], got 1.5"),
        ("todycomm", {"gamma": 0}, "todycomm: gamma must be a number in (0, 1] or null, got 0.0"),
        ("todycomm", {"decision_tau": 0.0}, "todycomm: decision_tau must be a number > 0, got 0.0"),
        ("todycomm", {"emb_proj": 2.5}, "todycomm: emb_proj must be an integer >= 0 or null, got 2.5"),
        ("todycomm", {"emb_proj": True}, "todycomm: emb_proj must be an integer >= 0 or null, got True"),
        ("todycomm", {"emb_dim": "big"}, "todycomm: emb_dim must be an integer or null, got 'big'"),
        ("agentprune", {"max_prune_fraction": 1.5}, "agentprune: max_prune_fraction must be a number in "
         "[0, 1] or null, got 1.5"),
        ("agentprune", {"temporal": "yes"}, "agentprune: temporal must be true or false, got 'yes'"),
        ("eib", {"gnn_layers": 0}, "eib: gnn_layers must be an integer >= 1, got 0"),
        ("gsafeguard", {"heads": 16, "hidden_size": 8},
         "gsafeguard: hidden_size must be >= heads (16), got 8"),
        ("gsafeguard", {"densities": [0.5, "x"]}, "gsafeguard: densities must be a list of numbers, "
         "got [0.5, 'x']"),
        ("card", {"name": "gdesigner"}, "card: name must be 'card', got 'gdesigner'"),
    ],
)  # fmt: skip
def test_bad_values_are_one_line_errors(name: str, params: dict[str, object], message: str) -> None:
    with pytest.raises(SettingsError) as err:
        settings_class(name).from_params(params)
    assert str(err.value) == message


def test_unknown_key_lists_the_valid_ones_with_did_you_mean() -> None:
    with pytest.raises(ValueError) as err:
        settings_class("todycomm").from_params({"epsilonn": 0.2})
    msg = str(err.value)
    assert msg.startswith("unknown todycomm parameters ['epsilonn'] (did you mean 'epsilon'?); valid: [")
    assert "'tie_tol'" in msg and "\n" not in msg


def test_the_method_holds_its_validated_settings() -> None:
    from tomacs.methods.base import MethodContext

    ctx = MethodContext(n_agents=3, rounds=2, roles=["r"] * 3, seed=0)
    ctx.extra.update(embedder="hashing", embed_dim=8)
    m = method_class("agentprune")(ctx, prune_rate=0.5)
    assert isinstance(m.settings, settings_class("agentprune"))  # type: ignore[attr-defined]
    assert m.settings.prune_rate == 0.5 and m.prune_rate == 0.5  # type: ignore[attr-defined]
    assert m.settings.lr == 0.1  # type: ignore[attr-defined]  # the public code's, not train.lr


def test_compose_refuses_a_bad_value_in_one_line() -> None:
    with pytest.raises(ConfigError) as err:
        compose(["method=eib", "method.ablation=no_gate"])
    assert str(err.value) == (
        "method.ablation must be one of none, no_dense, no_sparse, no_fusion, got 'no_gate' (method=eib)"
    )


def test_static_settings_and_their_study_option() -> None:
    from tomacs.methods.base import MethodContext

    s = method_settings(compose(["method=random", "method.temporal=random"]))
    assert (s.name, s.temporal, s.edge_prob) == ("random", "random", 0.5)  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match=r"^method.temporal must be one of none, full, got 'random'"):
        compose(["method=complete", "method.temporal=random"])  # only random offers a random mask
    ctx = MethodContext(n_agents=3, rounds=2, roles=["r"] * 3, seed=0)
    m = method_class("random")(ctx, per_round=True, edge_prob=0.25)  # per_round: not a config key
    assert m.per_round and m.settings.edge_prob == 0.25  # type: ignore[attr-defined]


def test_a_method_without_a_schema_keeps_its_keys_unchecked() -> None:
    """A plugin that declares no `Settings` still runs: its name and its keys as given."""
    s = OpenSettings.from_params({"name": "toy", "width": 3})
    assert isinstance(s, MethodSettings) and s.name == "toy" and s.params() == {"name": "toy", "width": 3}


@pytest.mark.slow
def test_cli_names_the_key_and_its_range(tmp_path: Path) -> None:
    p = subprocess.run(
        [sys.executable, "-m", "tomacs.cli", "train", "method=todycomm", "method.gamma=1.5", "eval.size=3"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    lines = p.stderr.strip().splitlines()
    assert p.returncode != 0 and len(lines) == 1 and "Traceback" not in p.stderr, p.stderr
    assert lines[0] == "error: method.gamma must be a number in (0, 1] or null, got 1.5 (method=todycomm)"


@pytest.mark.parametrize(
    ("override", "ok"),
    [
        ("method.listen=yes", False),  # OmegaConf alone would read these as true
        ("method.listen=2", False),
        ("method.listen=null", False),  # not optional
        ("method.listen=false", True),
    ],
)
def test_true_false_keys_take_only_true_or_false(override: str, ok: bool) -> None:
    if ok:
        assert compose(["method=receiver", override]).method.listen is False
        return
    with pytest.raises(ConfigError, match=r"^bad value '\w+' for 'method.listen': expected "):
        compose(["method=receiver", override])
