"""Issue 29: each default and list is written once. Each test fails if a second copy comes back
(the scanners are checked on a planted copy, so a test that finds nothing has looked)."""

from __future__ import annotations

import ast
import io
import re
import shutil
from pathlib import Path

import pytest

from tomacs.config import GROUPS, ConfigError, compose, group_defaults, group_options

REPO = Path(__file__).resolve().parents[1]
PKG, CONF = REPO / "tomacs", REPO / "conf"
ONSETS = re.compile(r"[\[(]\s*3\s*,\s*4\s*[\])]")  # (3, 4) or [3, 4], not (2, 3, 4) or [1, 2, 3, 4]


def places(pattern: re.Pattern[str], roots: list[Path]) -> list[str]:
    """`file:line` of every line of a .py or .yaml file under `roots` that matches."""
    out = []
    for root in roots:
        for path in sorted([*root.rglob("*.py"), *root.rglob("*.yaml")]):
            for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if pattern.search(line):
                    out.append(f"{path.relative_to(root.parent).as_posix()}:{i}")
    return out


def string_lists(root: Path) -> list[tuple[str, int, set[str]]]:
    """Every tuple/list/set literal of string constants in the package: (file, line, strings)."""
    out = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Tuple | ast.List | ast.Set):
                strs = {
                    e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
                }
                if strs:
                    out.append((path.relative_to(root.parent).as_posix(), node.lineno, strs))
    return out


def group_default_dicts(root: Path) -> list[str]:
    """Dict literals mapping three or more config groups to a string: a copy of config.yaml's defaults."""
    out = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Dict):
                pairs = [
                    k.value
                    for k, v in zip(node.keys, node.values, strict=True)
                    if isinstance(k, ast.Constant) and k.value in GROUPS and isinstance(v, ast.Constant)
                ]
                if len(pairs) >= 3:
                    out.append(f"{path.relative_to(root.parent).as_posix()}:{node.lineno}")
    return out


# -- the adversary onsets ----------------------------------------------------------------------------


def test_default_onsets_are_written_once() -> None:
    from tomacs.agents.adversary import DEFAULT_ONSET_ROUNDS

    found = places(ONSETS, [PKG, CONF])
    assert len(found) == 1 and found[0].startswith("tomacs/agents/adversary.py:"), (
        f"the default onsets are written at {found}; import tomacs.agents.adversary.DEFAULT_ONSET_ROUNDS"
    )
    line = int(found[0].rsplit(":", 1)[1])
    assert (
        (PKG / "agents" / "adversary.py")
        .read_text()
        .splitlines()[line - 1]
        .startswith("DEFAULT_ONSET_ROUNDS")
    )
    cfg = compose(["attack=gt50"])  # an option that leaves them out gets them from the schema
    assert list(cfg.attack.onset_rounds) == list(DEFAULT_ONSET_ROUNDS)


def test_the_onset_scanner_finds_a_planted_copy(tmp_path: Path) -> None:
    pkg = tmp_path / "tomacs"
    pkg.mkdir()
    (pkg / "a.py").write_text("ADV = (0, 2, 3, 4)\nx = f(onset_rounds=(3, 4))\n")
    (pkg / "b.yaml").write_text("counts: [1, 2, 3, 4]\nonset_rounds: [3,4]\n")
    assert places(ONSETS, [pkg]) == ["tomacs/a.py:2", "tomacs/b.yaml:2"]


# -- the attack settings are validated once ----------------------------------------------------------

BAD_ATTACKS = [
    (["attack=gt50", "attack.count=9"], "attack.count"),
    (["attack=gt50", "attack.rate=1.5"], "attack.rate"),
    (["attack=gt50", "rounds=2"], "attack.onset_rounds"),
    (["attack=eq50", "attack.onset_rounds=[]"], "attack.onset_rounds"),
]


@pytest.mark.parametrize(("overrides", "key"), BAD_ATTACKS)
def test_the_attack_settings_are_validated_by_the_schedule_alone(
    overrides: list[str], key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The config's one-line error comes from AdversarySchedule: switch its check off and the config
    accepts the bad value, so no second check of it is left in tomacs.config."""
    from tomacs.agents import adversary

    with pytest.raises(ConfigError, match=re.escape(key)) as ei:
        compose(overrides)
    assert "\n" not in str(ei.value)
    monkeypatch.setattr(adversary.AdversarySchedule, "__post_init__", lambda self: None)
    monkeypatch.setattr(adversary, "count_from_rate", lambda rate, n: 0)
    compose(overrides)


# -- the static method names -------------------------------------------------------------------------


def _copies_of(names: set[str], root: Path, least: int = 5) -> list[str]:
    return [f"{f}:{line}" for f, line, strs in string_lists(root) if len(strs & names) >= least]


def test_static_method_names_are_listed_once() -> None:
    from tomacs.methods.gsafeguard import BASES
    from tomacs.methods.registry import method_names
    from tomacs.methods.static import STATIC_METHODS

    names = set(STATIC_METHODS)
    assert len(names) == 7
    copies = _copies_of(names, PKG)
    assert copies == [], (
        f"static method names listed again at {copies}; use tomacs.methods.static.STATIC_METHODS"
    )
    assert names <= set(method_names()) and BASES == tuple(STATIC_METHODS)


def test_the_name_list_scanner_finds_a_planted_copy(tmp_path: Path) -> None:
    pkg = tmp_path / "tomacs"
    pkg.mkdir()
    (pkg / "m.py").write_text(
        'A = ("chain", "star", "complete", "none")\nB = ["complete", "random", "chain", "star", "layered"]\n'
    )
    names = {"complete", "random", "chain", "star", "layered", "none", "debate"}
    assert _copies_of(names, pkg) == ["tomacs/m.py:2"]  # a subset (G-Designer's anchors) is not a copy


# -- a method's name ----------------------------------------------------------------------------------


def class_names_beside_a_schema(root: Path) -> list[str]:
    """Classes that set both `Settings` and a `name = "..."`: the name written again beside its schema."""
    out = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef):
                continue
            assigned = {
                t.id: stmt.value
                for stmt in node.body
                if isinstance(stmt, ast.Assign | ast.AnnAssign)
                for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target])
                if isinstance(t, ast.Name)
            }
            if "Settings" in assigned and isinstance(assigned.get("name"), ast.Constant):
                out.append(f"{path.relative_to(root.parent).as_posix()}:{node.lineno}")
    return out


def test_a_method_name_is_written_in_its_schema_only() -> None:
    from tomacs.methods.registry import METHODS, method_names, settings_class

    assert class_names_beside_a_schema(PKG) == []
    for name in method_names():  # the class reads it from its Settings (Method.__init_subclass__)
        assert METHODS.get(name).name == settings_class(name)().name == name


def test_the_class_name_scanner_finds_a_planted_copy(tmp_path: Path) -> None:
    from tomacs.methods.base import Method
    from tomacs.methods.static import ChainSettings

    pkg = tmp_path / "tomacs"
    pkg.mkdir()
    (pkg / "m.py").write_text(
        'class A(M):\n    name = "a"\n    Settings = ASettings\n\n'
        'class B(M):\n    Settings = BSettings\n\nclass C(M):\n    name = "static"\n'
    )
    assert class_names_beside_a_schema(pkg) == ["tomacs/m.py:1"]
    with pytest.raises(TypeError, match="write the name once"):
        type("Chain2", (Method,), {"name": "star", "Settings": ChainSettings})
    assert type("Chain3", (Method,), {"Settings": ChainSettings}).name == "chain"


# -- each group's default option ---------------------------------------------------------------------


def test_no_module_copies_the_group_defaults() -> None:
    assert group_default_dicts(PKG) == []
    assert set(group_defaults()) == set(GROUPS)


def test_the_groups_are_listed_once(tmp_path: Path) -> None:
    """GROUPS is read from conf/config.yaml's defaults list: no module lists the groups again, and a
    group added there is a group (its options listed) with no other edit."""
    assert GROUPS == tuple(group_defaults()) and len(GROUPS) == 8
    least = len(GROUPS) - 1  # results.json's five setting fields (report/settings.py) are no copy
    copies = _copies_of(set(GROUPS), PKG, least)
    assert copies == [], f"the config groups are listed again at {copies}; use tomacs.config.GROUPS"
    conf = tmp_path / "conf"
    shutil.copytree(CONF, conf)
    text = (conf / "config.yaml").read_text()
    (conf / "config.yaml").write_text(
        text.replace("  - logger: none\n", "  - logger: none\n  - judge: plain\n")
    )
    (conf / "judge").mkdir()
    (conf / "judge" / "plain.yaml").write_text("name: plain\n")
    assert group_defaults(conf)["judge"] == "plain" and group_options(conf)["judge"] == ["plain"]
    planted = tmp_path / "tomacs"
    planted.mkdir()
    (planted / "g.py").write_text(f"GROUPS = {GROUPS!r}\n")
    (planted / "h.py").write_text(f"SOME = {GROUPS[:3]!r}\n")
    assert _copies_of(set(GROUPS), planted, least) == ["tomacs/g.py:1"]


def test_the_group_default_scanner_finds_a_planted_copy(tmp_path: Path) -> None:
    pkg = tmp_path / "tomacs"
    pkg.mkdir()
    (pkg / "c.py").write_text('d = {"benchmark": "synthetic", "method": "complete", "attack": "none"}\n')
    assert group_default_dicts(pkg) == ["tomacs/c.py:1"]


def test_tomacs_list_marks_the_defaults_config_yaml_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Change a default in a copy of conf/config.yaml and `tomacs list` follows it."""
    from rich.console import Console

    import tomacs.cli.config as cli  # the module of `tomacs list`
    import tomacs.config as config

    conf = tmp_path / "conf"
    shutil.copytree(CONF, conf)
    text = (conf / "config.yaml").read_text()
    assert "  - method: complete\n" in text and "\ndecision: auto " in text
    text = text.replace("  - method: complete\n", "  - method: star\n")
    (conf / "config.yaml").write_text(text.replace("\ndecision: auto ", "\ndecision: vote "))
    monkeypatch.setattr(config, "conf_dir", lambda: conf)
    out = io.StringIO()
    monkeypatch.setattr(cli, "console", Console(file=out, width=400, no_color=True))
    cli.list_options()
    rows = {
        line.split("│")[1].strip(): line.split("│")[2] for line in out.getvalue().splitlines() if "│" in line
    }
    assert "star (default)" in rows["method"] and "complete (default)" not in rows["method"]
    assert "vote (default)" in rows["decision"] and "auto (default)" not in rows["decision"]
    assert group_options(conf)["method"] == group_options()["method"]


# -- one embedder key --------------------------------------------------------------------------------


@pytest.mark.parametrize("method", group_options()["method"])
def test_the_embedder_has_one_key(method: str) -> None:
    from omegaconf import DictConfig

    def leaves(node: DictConfig, prefix: str = "") -> list[str]:
        out = []
        for k, v in node.items():
            key = f"{prefix}{k}"
            out.extend(leaves(v, key + ".") if isinstance(v, DictConfig) else [key])
        return out

    keys = [k for k in leaves(compose([f"method={method}"])) if k.rsplit(".", 1)[-1] == "embedder"]
    assert keys == ["embedder"]


# -- the config schema and the yaml files ------------------------------------------------------------


def schema_defaults(cls: type, prefix: str = "") -> dict[str, object]:
    """Dotted key -> default of every field of a schema dataclass that has one (MISSING has none)."""
    import dataclasses

    from omegaconf import MISSING

    out: dict[str, object] = {}
    for f in dataclasses.fields(cls):
        if f.default_factory is not dataclasses.MISSING:
            made = f.default_factory()
            if dataclasses.is_dataclass(made):
                out.update(schema_defaults(type(made), f"{prefix}{f.name}."))
            else:
                out[f"{prefix}{f.name}"] = made
        elif f.default is not dataclasses.MISSING and f.default != MISSING:
            out[f"{prefix}{f.name}"] = f.default
    return out


def test_config_yaml_and_the_schema_do_not_both_write_a_default() -> None:
    from tomacs.config import Schema, flat, shipped_config

    written = {
        k: v for k, v in flat(shipped_config()).items() if k.split(".")[0] not in ("defaults", "hydra")
    }
    both = sorted(set(written) & set(schema_defaults(Schema)))
    assert both == [], f"{both} have a default both in conf/config.yaml and in tomacs.config.Schema"
    assert "crs" not in shipped_config()  # its defaults are CrsSchema's
    assert "crs.eta" in schema_defaults(Schema)  # the scan sees nested defaults


def option_schema(group: str, shipped: dict[str, object]) -> type | None:
    """The schema an option file extends: its defaults list's `/schema/<kind>/<name>@_here_`, or the
    group's field type in tomacs.config.Schema (attack, train); None for a group without one."""
    from tomacs.backbones.base import BACKBONES
    from tomacs.benchmarks.base import BENCHMARKS
    from tomacs.config import AttackSchema, TrainSchema
    from tomacs.methods.registry import METHODS

    for entry in shipped.get("defaults") or []:
        m = re.fullmatch(r"/schema/(\w+)/([\w.-]+)@_here_", str(entry))
        if m:
            table = {"method": METHODS, "benchmark": BENCHMARKS, "backbone": BACKBONES}[m.group(1)]
            return table.schemas()[m.group(2)]
    return {"attack": AttackSchema, "train": TrainSchema}.get(group)


def repeated_defaults(group: str, shipped: dict[str, object]) -> list[str]:
    """`group.key` of every value an option file writes that its schema already has as default
    (nested keys dotted: backbone.cache.path)."""
    from tomacs.config import flat

    schema = option_schema(group, shipped)
    if schema is None:
        return []
    defaults = schema_defaults(schema)
    written = flat({k: v for k, v in shipped.items() if k != "defaults"})
    return sorted(f"{group}.{k}" for k, v in written.items() if k in defaults and v == defaults[k])


SCHEMA_GROUPS = ("attack", "train", "method", "benchmark", "backbone")


def test_no_option_file_repeats_its_schema_default() -> None:
    """An option writes only what differs from its schema (crs3of5's onsets [1] do; a litellm preset's
    model and api_base do). Every option of a group with a schema extends one."""
    import yaml

    from tomacs.config import AttackSchema

    repeats = []
    for group in SCHEMA_GROUPS:
        for path in sorted((CONF / group).glob("*.yaml")):
            shipped = yaml.safe_load(path.read_text()) or {}
            assert option_schema(group, shipped) is not None, f"{group}/{path.name} extends no schema"
            repeats += [f"{path.name}: {k}" for k in repeated_defaults(group, shipped)]
    assert repeats == [], f"option files repeat their schema's defaults: {repeats}"
    attack = schema_defaults(AttackSchema)
    assert attack["onset_rounds"] == [3, 4]
    assert {"count", "rate", "persistent", "protect_last", "suffix"} <= set(attack)  # the switches too


@pytest.mark.parametrize(
    ("group", "option", "planted", "flagged"),
    [
        ("attack", "gt50", {"suffix": True, "persistent": True}, ["attack.suffix"]),
        ("benchmark", "mmlu", {"source": "local", "test_subset": 153, "profile": "arc_c"}, [
            "benchmark.source", "benchmark.test_subset"
        ]),
        ("backbone", "vllm", {"max_retries": 6, "kind": "litellm", "cache": {"enabled": True}}, [
            "backbone.cache.enabled", "backbone.kind", "backbone.max_retries"
        ]),
        ("backbone", "sim", {"profile": None}, ["backbone.profile"]),
        ("method", "todycomm", {"epsilon": 0.1, "gamma": 0.5}, ["method.epsilon"]),
    ],
)  # fmt: skip
def test_the_repeated_default_scanner_finds_a_planted_copy(
    group: str, option: str, planted: dict[str, object], flagged: list[str]
) -> None:
    """A default written both in the schema and in a yaml is caught, for every kind; a value that
    differs from the schema's (persistent: true, profile: arc_c, gamma: 0.5) is not."""
    import yaml

    shipped = yaml.safe_load((CONF / group / f"{option}.yaml").read_text()) or {}
    assert repeated_defaults(group, {**shipped, **planted}) == flagged
