"""Every option of every config group composes; typos fail in one line naming the valid choices."""

from __future__ import annotations

import pytest

from tomacs.config import GROUPS, ConfigError, compose, expand_sweep, group_options


def test_every_group_has_options() -> None:
    opts = group_options()
    for group in GROUPS:
        assert opts[group], f"config group {group} has no options"


@pytest.mark.parametrize("group,option", [(g, o) for g, opts in group_options().items() for o in opts])
def test_every_option_composes(group: str, option: str) -> None:
    cfg = compose([f"{group}={option}"])
    assert cfg[group].name is not None
    # the option file's own name key agrees with the file name (results and run dirs use it)
    assert str(cfg[group].name) == option


def test_defaults() -> None:
    cfg = compose([])
    assert (cfg.agents, cfg.rounds, cfg.train.batch_size, cfg.train.lr) == (6, 4, 32, 5e-4)
    assert cfg.method.name == "complete" and cfg.backbone.name == "sim" and cfg.benchmark.name == "synthetic"


def test_unknown_option_lists_valid_ones() -> None:
    with pytest.raises(ConfigError) as ei:
        compose(["method=compleat"])
    msg = str(ei.value)
    assert "\n" not in msg
    assert "unknown method 'compleat'" in msg and "complete" in msg and "did you mean 'complete'" in msg


def test_unknown_key_lists_valid_keys() -> None:
    with pytest.raises(ConfigError) as ei:
        compose(["agentz=3"])
    msg = str(ei.value)
    assert "unknown config key 'agentz'" in msg and "agents" in msg and "rounds" in msg
    with pytest.raises(ConfigError) as ei:
        compose(["train.bach_size=3"])
    assert "batch_size" in str(ei.value) and "'train'" in str(ei.value)


def test_bad_values() -> None:
    with pytest.raises(ConfigError, match="agents"):
        compose(["agents=many"])
    with pytest.raises(ConfigError, match="decision"):
        compose(["decision=majority"])
    with pytest.raises(ConfigError, match="attack.count"):
        compose(["attack=gt50", "attack.count=9"])
    with pytest.raises(ConfigError, match="onset_rounds"):
        compose(["attack=gt50", "rounds=2"])


def test_sweep_expansion_checks_every_value() -> None:
    lists = expand_sweep(["method=complete,none,random", "attack=lt50,gt50", "seed=0"])
    flat = {o for ovs in lists for o in ovs}
    assert {"method=complete", "method=none", "method=random", "attack=lt50", "attack=gt50"} <= flat
    assert len(lists) == 1 + 2 + 1


def test_sub_key_typo_lists_the_chosen_options_keys() -> None:
    """Issue 15 item 8: the keys of method=todycomm, not of the default method."""
    with pytest.raises(ConfigError) as ei:
        compose(["method=todycomm", "method.ablaton=none"])
    msg = str(ei.value)
    assert "did you mean 'ablation'" in msg and "epsilon" in msg and "order" not in msg
    with pytest.raises(ConfigError) as ei:
        compose(["benchmark=mmlu", "benchmark.pth=/x"])
    assert "did you mean 'path'" in str(ei.value)
    with pytest.raises(ConfigError) as ei:
        compose(["attack=gt50", "attack.rat=0.2"])
    assert "did you mean 'rate'" in str(ei.value) and "onset_rounds" in str(ei.value)


def test_bad_type_names_the_expected_type() -> None:
    for override, want in (
        ("eval.size=abc", "expected an integer, e.g. eval.size=153"),
        ("train.lr=fast", "expected a number"),
        ("agents=1.5", "expected an integer"),
    ):
        with pytest.raises(ConfigError) as ei:
            compose([override])
        assert want in str(ei.value) and "\n" not in str(ei.value)


@pytest.mark.parametrize(
    ("args", "fix"),
    [
        (["--epochs", "1"], "train.epochs=1"),
        (["--epochs=3"], "train.epochs=3"),
        (["--seed", "2"], "seed=2"),
        (["--size", "4"], "train.size=4, eval.size=4"),
    ],
)
def test_flags_are_refused_with_the_override_they_meant(args: list[str], fix: str) -> None:
    with pytest.raises(ConfigError) as ei:
        compose(args)
    assert "Hydra overrides" in str(ei.value) and fix in str(ei.value)
    with pytest.raises(ConfigError, match="Hydra overrides"):
        expand_sweep(["method=complete,none", *args])


def test_embedder_is_resolved_into_its_one_key() -> None:
    from tomacs.config import resolve_embedder

    cfg = compose(["method=todycomm", "embedder=hashing"])
    resolve_embedder(cfg)
    assert cfg.embedder == "hashing" and "embedder" not in cfg.method
    cfg = compose(["method=todycomm"])
    resolve_embedder(cfg)
    assert cfg.embedder == "minilm"
    cfg = compose(["method=complete"])  # no embedder anywhere: nothing is invented
    resolve_embedder(cfg)
    assert cfg.embedder is None
    cfg = compose(["decision=crs", "crs.aggregation=centroid"])  # centroids embed: the default
    resolve_embedder(cfg)
    assert cfg.embedder == "minilm" and "embedder" not in cfg.crs
    cfg = compose(["method=todycomm"])
    resolve_embedder(cfg, from_checkpoint="hashing", checkpoint="c.pt")
    assert cfg.embedder == "hashing"
    cfg = compose(["method=todycomm", "embedder=minilm"])
    with pytest.raises(ConfigError, match="c.pt was trained with embedder=hashing"):
        resolve_embedder(cfg, from_checkpoint="hashing", checkpoint="c.pt")


@pytest.mark.parametrize("override", ["method.embedder=hashing", "+crs.embedder=minilm"])
def test_removed_embedder_keys_name_the_one_key(override: str) -> None:
    with pytest.raises(ConfigError) as ei:
        compose(["method=todycomm", override])
    msg = str(ei.value)
    assert "was removed" in msg and f"set embedder={override.split('=')[1]}" in msg and "\n" not in msg


def test_a_config_saved_with_the_old_embedder_keys_settles_to_one_key() -> None:
    """Run directories from before the embedder was one key wrote it three times (embedder: null
    in the oldest); they settle to the same config a run writes today, so they still resume."""
    from omegaconf import OmegaConf

    from tomacs.config import resolve_embedder, to_container

    new = compose(["method=todycomm", "embedder=hashing"])
    resolve_embedder(new)
    old = OmegaConf.create(to_container(new))
    old.embedder = None
    old.method.embedder = "hashing"
    old.crs.embedder = None
    resolve_embedder(old)
    assert to_container(old) == to_container(new)
