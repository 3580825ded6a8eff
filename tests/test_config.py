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
