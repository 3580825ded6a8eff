"""Config schema, composition checks and one-line errors.

Hydra's own messages for a typo are long and do not list what would have been valid; a researcher
launching a sweep wants to know at once which key or option exists. So every job's overrides are
composed once up front (cheap) and any failure is turned into one line naming the fix.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING, DictConfig, OmegaConf, open_dict

from tomacs.agents.adversary import AdversarySchedule
from tomacs.paths import conf_dir
from tomacs.runspec.spec import RunSpec


class RunMode(StrEnum):
    train = "train"
    evaluate = "evaluate"


class DecisionMode(StrEnum):
    auto = "auto"
    vote = "vote"
    llm = "llm"
    crs = "crs"


# which weights a trained method is tested with: best (ours: best.pt, the epoch with the best validation
# Acc) | last (the paper's: the policy after its last iteration; TodyComm §5 names no validation set)
SELECTS = ("best", "last")


@dataclass
class TrainSchema:
    """The training budget (a config group: conf/train/default.yaml | paper.yaml); its keys are typed
    here so `train.epochs=abc` fails in one line whichever option is chosen. The values are the
    options' own (MISSING here: a default is written in one place)."""

    name: str = MISSING
    size: int = MISSING
    val_size: int = MISSING
    batch_size: int = MISSING
    epochs: int = MISSING
    lr: float = MISSING
    optimizer: str = MISSING
    patience: int | None = MISSING
    samples: int = MISSING
    lr_schedule: str = MISSING
    grad_clip: float | None = MISSING
    select: str = MISSING


def _schedule_default(key: str) -> Any:
    """A default of `AdversarySchedule` (the one validator of the attack settings), as a schema field."""
    value = AdversarySchedule.__dataclass_fields__[key].default
    if isinstance(value, tuple):
        return field(default_factory=lambda: list(value))
    return value


@dataclass
class AttackSchema:
    """The adversary schedule (config group `attack`: conf/attack/*.yaml). An option writes only what
    differs from these defaults: the ones the schedule shares with `AdversarySchedule` (count, rate,
    onset_rounds = TodyComm's rounds 3 or 4, suffix) are read from it, the switches it lacks are
    written here. The true/false keys take only true or false (`config._strict_bool_overrides`)."""

    name: str = MISSING
    # an explicit number of adversaries; wins over rate; null = use rate
    count: int | None = _schedule_default("count")
    # a fraction of N, rounded half up (tomacs.agents.adversary.count_from_rate); null = no adversary
    rate: float | None = _schedule_default("rate")
    # each adversary's onset is drawn uniformly from this list (DEFAULT_ONSET_ROUNDS: TodyComm §5)
    onset_rounds: list[int] = _schedule_default("onset_rounds")
    # true: the same agents are adversarial in every episode of the run (credibility scoring)
    persistent: bool = False
    # true: the last agent is never an adversary (receiver protocol, TodyComm Tables 7-8)
    protect_last: bool = False
    # App. D persuasive suffix appended to adversarial outputs; false = stealthy adversaries
    suffix: bool = _schedule_default("suffix")
    # the adversary's prompt: appd (TodyComm App. D) | debate (multi-agent-attack: reads the others,
    # no word limit); tomacs.agents.adversary.ADVERSARY_PROMPTS
    prompt: str = _schedule_default("prompt")
    # the source's target rule: P(the adversaries' target is the question's lure, its most attractive
    # wrong answer) | profile (the sim profile's fitted value) | null = uniform over wrong answers
    # (App. D). backbone=sim only: a real model's lure is unknown
    target_lure: Any = None
    # true: the i-th adversary turns at onset_rounds[i], one per listed round (MAD-Follower: attacker from
    # round 1, follower from round 2); false: each adversary draws its onset from onset_rounds
    ordered_onsets: bool = False
    # the target by letter, the first that is wrong (MAD-Follower: [B, A]: B, or A when B is the gold);
    # null = drawn (uniform, or target_lure). Multiple choice only
    target_letters: list[str] | None = None


@dataclass
class EvalSchema:
    size: int = MISSING
    batch_size: int = MISSING
    seed: int | None = MISSING  # the evaluation's own seed (paired evaluation); None = the run's seed
    draws: int = MISSING  # draws of the simulated agents the test is scored under (pooled); 1 = one pass


@dataclass
class CrsSchema:
    """Credibility scoring (`crs.*`, used by decision=crs; shared/papers/credibility-scoring.txt and
    tomacs/credibility). Its defaults are written here only (conf/config.yaml leaves the block out):
    the decider and the report's non-default labels read them from this class."""

    eta: float = 0.5  # learning rate of Eq. 2 (the paper does not report its value; ours)
    init: float = 0.5  # default score of every agent (§5)
    # vote (CrS-weighted) | centroid (CrS-weighted embedding centroid, §4a) | llm (coordinator, §4b)
    aggregation: str = "vote"
    # shapley (exact up to shapley_exact_max agents, Monte-Carlo beyond) | judge (LLM-as-judge)
    contribution: str = "shapley"
    shapley_exact_max: int = 10
    shapley_samples: int = 200  # Monte-Carlo permutations beyond shapley_exact_max
    judge_error_rate: float = 0.1  # sim backbone only: chance the simulated judge returns a random split


@dataclass
class EmbedSchema:
    cache: str | None = MISSING
    precision: str = MISSING
    backend: str = MISSING


@dataclass
class Schema:
    """Top-level keys and their types; group contents are checked by their own yaml keys. The values
    are conf/config.yaml's (MISSING here), so each default is written once; `crs` is the exception,
    its defaults live in CrsSchema."""

    benchmark: Any = MISSING
    method: Any = MISSING
    attack: AttackSchema = MISSING
    budget: Any = MISSING
    backbone: Any = MISSING
    device: Any = MISSING
    logger: Any = MISSING
    agents: int = MISSING
    rounds: int = MISSING
    seed: int = MISSING
    mode: RunMode = MISSING
    decision: DecisionMode = MISSING
    embedder: str | None = MISSING
    embed: EmbedSchema = field(default_factory=EmbedSchema)
    checkpoint: str | None = MISSING
    concurrency: int = MISSING
    train: TrainSchema = field(default_factory=TrainSchema)
    eval: EvalSchema = field(default_factory=EvalSchema)
    crs: CrsSchema = field(default_factory=CrsSchema)
    conditions: Any = MISSING
    table_name: str | None = MISSING


_registered = False


def register_schema() -> None:
    global _registered
    if not _registered:
        from tomacs.backbones.base import BACKBONES
        from tomacs.benchmarks.base import BENCHMARKS
        from tomacs.methods.registry import METHODS

        ConfigStore.instance().store(name="base_config", node=Schema)
        for table in (METHODS, BENCHMARKS, BACKBONES):  # conf/<kind>/*.yaml extend /schema/<kind>/<name>
            table.store_schemas()
        _registered = True


class ConfigError(ValueError):
    """A bad config or override; its message is one line that names the fix."""


def group_options(root: Path | None = None) -> dict[str, list[str]]:
    """Options of every config group, read from the shipped conf directory."""
    root = root or conf_dir()
    out: dict[str, list[str]] = {}
    for group in group_defaults(root):
        d = root / group
        out[group] = sorted(p.stem for p in d.glob("*.yaml")) if d.is_dir() else []
    return out


@functools.lru_cache(maxsize=64)
def _option_file(path: str) -> dict[str, object]:
    """A shipped option file, read once per process (validate runs for every job of a sweep)."""
    import yaml

    return yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}


def shipped_config(root: Path | None = None) -> dict[str, Any]:
    """conf/config.yaml as written (not composed): the one place each group's default option and
    each top-level default is written, for code that shows them without composing a config."""
    return _option_file(str((root or conf_dir()) / "config.yaml"))


def group_defaults(root: Path | None = None) -> dict[str, str]:
    """Each config group and its default option, in the order of conf/config.yaml's defaults list:
    the one place the groups are listed (`GROUPS` is read from it)."""
    out: dict[str, str] = {}
    for entry in shipped_config(root).get("defaults", []):
        if isinstance(entry, dict):
            out.update({str(k): str(v) for k, v in entry.items() if "/" not in str(k) and " " not in str(k)})
    return out


# The config groups (benchmark, method, attack, ...): the group entries of conf/config.yaml's defaults list.
GROUPS: tuple[str, ...] = tuple(group_defaults())
# How a method's option file chooses its own training budget (conf/method/todycomm.yaml)
_OWN_BUDGET = "override /train@_global_.train"


def method_budgets(root: Path | None = None) -> dict[str, str]:
    """The methods whose option file chooses their own `train` option, and that option: what `tomacs list`
    shows beside the shared default (a `train=` on the command line still wins)."""
    root = root or conf_dir()
    out: dict[str, str] = {}
    for f in sorted((root / "method").glob("*.yaml")):
        entries = _option_file(str(f)).get("defaults") or []
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, dict) and _OWN_BUDGET in entry:
                out[f.stem] = str(entry[_OWN_BUDGET])
    return out


def _closest(word: str, options: list[str]) -> str:
    close = difflib.get_close_matches(word, options, n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


_TYPE_NAMES = {
    "Integer": "an integer",
    "Float": "a number",
    "Boolean": "true or false",
    "bool": "true or false",  # OmegaConf's word for a typed (schema) field
    "String": "a string",
}


def friendly_error(exc: Exception, default_cfg: DictConfig | None = None) -> str:
    """Map Hydra/OmegaConf exceptions to one line that lists the valid choices.

    ``default_cfg`` is the config composed with the user's group choices (method=todycomm...), so
    a typo in a sub-key lists the keys of the chosen option, not of the default one."""
    chain: list[str] = []
    seen: BaseException | None = exc
    while seen is not None and len(chain) < 5:  # Hydra wraps the OmegaConf error that names the key
        chain.append(str(seen))
        seen = seen.__cause__ or seen.__context__
    msg = "\n".join(chain)
    m = re.search(r"Could not (?:find|load) '([\w\-/.]+)/([\w\-.]+)'", msg)
    if m and m.group(1) in GROUPS:
        group, opt = m.group(1), m.group(2)
        opts = group_options()[group]
        return f"unknown {group} '{opt}'{_closest(opt, opts)}; valid {group} options: {', '.join(opts)}"
    m = re.search(r"Key '([^']+)' (?:is )?not in (?:struct|'\w+')", msg)
    if m:
        full = re.search(r"full_key: ([\w.\-]+)", msg)
        full_key = full.group(1) if full else m.group(1)
        parent = full_key.rsplit(".", 1)[0] if "." in full_key else ""
        keys: list[str] = []
        if default_cfg is not None:
            node = OmegaConf.select(default_cfg, parent) if parent else default_cfg
            if isinstance(node, DictConfig):
                keys = [str(k) for k in node.keys() if k != "hydra"]
        where = f" in '{parent}'" if parent else ""
        hint = _closest(m.group(1), keys)
        return f"unknown config key '{full_key}'{hint}; valid keys{where}: {', '.join(keys)}"
    m = re.search(
        r"Value '([^']*)'(?: of type '\w+')? (?:could not be converted to|is not a valid) (\w+)",
        msg,
    )
    if m:
        full = re.search(r"full_key: ([\w.\-]+)", msg)
        key = full.group(1) if full else "?"
        valid = re.search(r"Valid values: ?\[?([^\n\]]+)", msg)
        extra = f"; valid values: {valid.group(1).strip()}" if valid else ""
        want = _TYPE_NAMES.get(m.group(2), m.group(2))
        example = OmegaConf.select(default_cfg, key, default=None) if default_cfg is not None else None
        example = str(example).lower() if isinstance(example, bool) else example
        eg = f", e.g. {key}={example}" if example is not None and not extra else ""
        return f"bad value '{m.group(1)}' for '{key}': expected {want}{eg}{extra}"
    m = re.search(r"field '([\w.\-]+)' is not Optional", msg)
    if m:
        key = m.group(1)
        example = OmegaConf.select(default_cfg, key, default=None) if default_cfg is not None else None
        eg = f", e.g. {key}={str(example).lower() if isinstance(example, bool) else example}"
        return f"bad value 'null' for '{key}': expected a value, not null{eg if example is not None else ''}"
    m = re.search(r"Invalid value '([^']*)', expected one of \[([^\]]*)\]", msg)
    if m:
        full = re.search(r"full_key: ([\w.\-]+)", msg)
        key = full.group(1) if full else "?"
        return f"bad value '{m.group(1)}' for '{key}'; valid values: {m.group(2)}"
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return f"invalid configuration: {first}"


def _is_hydra_override(ov: str) -> bool:
    key = ov.lstrip("+~").split("=", 1)[0]
    return key.startswith("hydra") or key.startswith("hydra/")


def compose(overrides: list[str], job_name: str | None = None) -> DictConfig:
    """Compose the config for the given (non-sweep) overrides, raising ConfigError on any problem.

    With `job_name`, the whole job's config: Hydra's own node and the hydra.* overrides included, under
    that job name, so `tomacs.launch.hydra_app.run_composed` can run it without composing it again."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    reject_flags(overrides)
    reject_removed_keys(overrides)
    register_schema()
    GlobalHydra.instance().clear()
    given = overrides if job_name else [o for o in overrides if not _is_hydra_override(o)]
    with initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3", job_name=job_name or "app"):
        try:
            cfg = hydra_compose(config_name="config", overrides=given, return_hydra_config=bool(job_name))
        except Exception as exc:
            bad_group = _non_string_group_choice(overrides)
            if bad_group:
                raise ConfigError(bad_group) from exc
            try:  # the defaults, composed only to explain a failure (the keys a typo was near)
                default = hydra_compose(config_name="config")
            except Exception as broken:  # a broken shipped config is a bug, say so plainly
                raise ConfigError(f"shipped config does not compose: {friendly_error(broken)}") from broken
            raise ConfigError(friendly_error(exc, _chosen_groups(hydra_compose, overrides, default))) from exc
    task = OmegaConf.masked_copy(cfg, [str(k) for k in cfg if k != "hydra"]) if job_name else cfg
    validate(task)  # without Hydra's node: its sweep keys do not resolve in a single run
    _strict_bool_overrides(overrides, task)
    return cfg


def _strict_bool_overrides(overrides: list[str], cfg: DictConfig) -> None:
    """A schema's typed true/false key would take `method.listen=yes`, `attack.suffix=on` or `=2` as
    true (OmegaConf's reading); refuse anything but true, false or null there, as for the keys the
    shipped option files type."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parser = OverridesParser.create()
    for ov in overrides:
        key = ov.lstrip("+~").split("=", 1)[0]
        parent, _, sub = key.rpartition(".")
        if parent.split(".")[0] not in GROUPS:
            continue
        bools = _bool_keys(cfg, parent)
        if sub not in bools:
            continue
        try:
            value = parser.parse_override(ov).value()
        except Exception:
            continue
        if value is not None and not isinstance(value, bool):
            eg = str(bools[sub]).lower()
            raw = ov.split("=", 1)[1]
            raise ConfigError(f"bad value '{raw}' for '{key}': expected true or false, e.g. {key}={eg}")


def _bool_keys(cfg: DictConfig, parent: str) -> dict[str, object]:
    """The true/false keys of the schema of node `parent` (`attack`, `backbone.cache`) and their
    defaults (none for a node without a schema)."""
    import dataclasses

    from tomacs.methods.registry import bool_keys, method_settings
    from tomacs.methods.settings import bool_fields

    if parent == "method":
        return bool_keys(method_settings(to_container(cfg)).name)  # validated already
    node = OmegaConf.select(cfg, parent)
    cls = OmegaConf.get_type(node) if isinstance(node, DictConfig) else None
    return bool_fields(cls) if isinstance(cls, type) and dataclasses.is_dataclass(cls) else {}


def _non_string_group_choice(overrides: list[str]) -> str | None:
    """`attack=60` reads as the integer 60, and Hydra's answer (a group override must be a string)
    names no group: name it, its options, and how a field inside the option is set."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parser = OverridesParser.create()
    for ov in overrides:
        key = ov.lstrip("+~").split("=", 1)[0]
        if key not in GROUPS:
            continue
        try:
            value = parser.parse_override(ov).value()
        except Exception:
            continue
        if not isinstance(value, str | list) and not hasattr(value, "list"):  # sweeps pass here
            opts = group_options()[key]
            return (
                f"'{ov}': {key} is a config group, so its value must name one of its options; "
                f"valid {key} options: {', '.join(opts)} (a field inside one: {key}.KEY=VALUE)"
            )
    return None


def _chosen_groups(hydra_compose: Any, overrides: list[str], default: DictConfig) -> DictConfig:
    """The config with only the user's group choices applied (method=todycomm, ...): what a
    sub-key typo is checked against. Falls back to the default config if those fail too."""
    picks = [o for o in overrides if o.lstrip("+").split("=", 1)[0] in GROUPS]
    if not picks:
        return default
    try:
        return hydra_compose(config_name="config", overrides=picks)
    except Exception:
        return default


def _leaf_keys(cfg: DictConfig, prefix: str = "") -> list[str]:
    out: list[str] = []
    for k, v in cfg.items():
        if k == "hydra":
            continue
        key = prefix + str(k)
        out.extend(_leaf_keys(v, key + ".") if isinstance(v, DictConfig) else [key])
    return out


def reject_flags(overrides: list[str]) -> None:
    """`tomacs train --epochs 1` is a natural first try; Hydra's answer is a lexer exception. Say
    that options are KEY=VALUE overrides and name the key the flag probably meant."""
    for i, ov in enumerate(overrides):
        if not ov.startswith("-") or ov in ("-", "--"):
            continue
        name, _, value = ov.lstrip("-").partition("=")
        if not value and i + 1 < len(overrides) and not overrides[i + 1].startswith("-"):
            value = overrides[i + 1] if "=" not in overrides[i + 1] else ""
        name = name.replace("-", "_")
        keys = _default_leaf_keys()
        hits = [k for k in keys if k == name or k.endswith("." + name)]
        if len(hits) == 1:
            fix = f"use {hits[0]}={value or '<value>'}"
        else:
            close = difflib.get_close_matches(name, [k.rsplit(".", 1)[-1] for k in keys], n=1)
            fix = f"e.g. {hits[0] if hits else close[0] if close else 'train.epochs'}=<value>"
            if len(hits) > 1:
                fix = f"one of {', '.join(h + '=' + (value or '<value>') for h in hits)}"
        raise ConfigError(
            f"'{ov}': options are Hydra overrides KEY=VALUE, not --flags; {fix} "
            "(all keys: `tomacs show-config`)"
        )


def _default_leaf_keys() -> list[str]:
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    register_schema()
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3"):
        return _leaf_keys(hydra_compose(config_name="config"))


def expand_sweep(overrides: list[str]) -> list[list[str]]:
    """One override list per value of every sweep override (not the full product): enough to check
    that every value composes, without composing thousands of jobs."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    reject_flags(overrides)
    parser = OverridesParser.create()
    try:
        parsed = parser.parse_overrides([o for o in overrides if not _is_hydra_override(o)])
    except Exception as exc:
        raise ConfigError(f"cannot parse overrides: {str(exc).strip().splitlines()[0]}") from exc
    firsts: list[str] = []
    choices: list[list[str]] = []
    for ov in parsed:
        key = ov.get_key_element()
        vals = (
            [str(v) for v in ov.sweep_string_iterator()]
            if ov.is_sweep_override()
            else [ov.get_value_element_as_str()]
        )
        if not vals:
            vals = [""]
        choices.append([f"{key}={v}" for v in vals])
        firsts.append(f"{key}={vals[0]}")
    out = [firsts]
    for i, ch in enumerate(choices):
        for alt in ch[1:]:
            out.append(firsts[:i] + [alt] + firsts[i + 1 :])
    return out


def check_overrides(overrides: list[str], multirun: bool, command: str = "train") -> None:
    """Compose every value of every override once; raise ConfigError on the first problem."""
    if not multirun:
        reject_sweep_without_multirun(overrides, command)
        compose(overrides)
        return
    for ovs in expand_sweep(overrides):
        compose(ovs)


def reject_sweep_without_multirun(overrides: list[str], command: str) -> None:
    """Hydra's answer to `method=complete,random` without -m is several lines, of which only the
    first ("Ambiguous value") survived; say the whole hint in one line."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parser = OverridesParser.create()
    for ov in overrides:
        if _is_hydra_override(ov):
            continue
        try:
            sweep = parser.parse_override(ov).is_sweep_override()
        except Exception:
            continue  # compose names the parse error
        if sweep:
            key, _, value = ov.partition("=")
            quote = (
                ""
                if key.lstrip("+") in GROUPS
                else f", or quote one value that holds a comma: {key}='{value}'"
            )
            raise ConfigError(
                f"'{ov}' is a sweep (a comma list, range or glob): add -m to run one job per value "
                f"(tomacs {command} -m {ov}){quote}"
            )


QUOTED_PATH_KEYS = ("checkpoint",)


def quote_path_values(overrides: list[str]) -> list[str]:
    """A checkpoint from a sweep lives under `0_attack=gt50,method=todycomm/`, and Hydra's
    grammar reads `=` and `,` in a value as syntax (`mismatched input '='`). Quote such a value
    for Hydra: a value with `=` cannot be meant otherwise, and an existing path is a path."""
    out = []
    for ov in overrides:
        key, sep, value = ov.partition("=")
        special = any(c in value for c in "=,[]{}()'\" ")
        if (
            key.lstrip("+") in QUOTED_PATH_KEYS
            and sep
            and special
            and value[:1] not in "'\""
            and ("=" in value or Path(value).exists())
        ):
            escaped = value.replace("'", "\\'")
            ov = f"{key}='{escaped}'"
        out.append(ov)
    return out


def validate(cfg: DictConfig) -> None:
    """Semantic checks Hydra cannot express; each failure is one line naming the fix."""
    check_option_types(cfg)  # first: the checks below compare values and need the right types
    _check_method_settings(cfg)
    if cfg.agents < 2:
        raise ConfigError(f"agents must be >= 2 (got {cfg.agents})")
    if cfg.rounds < 1:
        raise ConfigError(f"rounds must be >= 1 (got {cfg.rounds})")
    for key in ("size", "batch_size", "epochs"):
        if cfg.train[key] < 0 or (key == "batch_size" and cfg.train[key] < 1):
            raise ConfigError(f"train.{key} must be positive (got {cfg.train[key]})")
    if cfg.train.get("samples", 1) < 1:
        raise ConfigError(f"train.samples must be >= 1 (got {cfg.train.samples})")
    schedules = ("constant", "cosine")
    if cfg.train.get("lr_schedule", "constant") not in schedules:
        raise ConfigError(
            f"train.lr_schedule must be one of {', '.join(schedules)} (got {cfg.train.lr_schedule!r})"
        )
    if cfg.train.get("select", "best") not in SELECTS:
        raise ConfigError(f"train.select must be one of {', '.join(SELECTS)} (got {cfg.train.select!r})")
    clip = cfg.train.get("grad_clip")
    if clip is not None and clip <= 0:
        raise ConfigError(f"train.grad_clip must be > 0 or null (got {clip})")
    patience = cfg.train.get("patience")
    if patience is not None and patience < 1:
        raise ConfigError(f"train.patience must be >= 1 or null (got {patience})")
    if cfg.eval.size < 1 or cfg.eval.batch_size < 1:
        raise ConfigError("eval.size and eval.batch_size must be >= 1")
    _check_draws(cfg)
    if cfg.concurrency < 1:
        raise ConfigError(f"concurrency must be >= 1 (got {cfg.concurrency})")
    for key in ("in_degree", "out_degree"):
        v = cfg.budget.get(key)
        if v is not None and v < 0:
            raise ConfigError(f"budget.{key} must be >= 0 or null (got {v})")
    try:  # the schedule validates the attack settings, once, in the config's words
        AdversarySchedule.from_config(cfg.attack, int(cfg.agents), int(cfg.rounds))
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc
    from tomacs.backbones.base import backbone_class

    if cfg.attack.get("target_lure") is not None and cfg.attack.get("target_letters") is not None:
        raise ConfigError(
            "attack.target_letters and attack.target_lure are two target rules: set one of them to null"
        )
    if cfg.attack.get("target_lure") is not None:
        if not backbone_class(cfg.backbone).knows_lures:
            raise ConfigError(
                f"attack.target_lure={cfg.attack.target_lure} follows a question's lure, which only "
                f"backbone=sim knows (not backbone={cfg.backbone.name}): set attack.target_lure=null"
            )
    if cfg.device.name not in ("cpu", "cuda", "auto"):
        raise ConfigError(f"unknown device '{cfg.device.name}'; valid: auto, cpu, cuda")
    try:  # the backbone kind's own rules for its settings (spend caps and rate limits of litellm)
        backbone_class(cfg.backbone).check_settings(to_container(cfg.backbone))
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    precision = (cfg.get("embed") or {}).get("precision", "auto")
    if precision not in ("auto", "fp32", "bf16", "fp16"):
        raise ConfigError(f"unknown embed.precision '{precision}'; valid: auto, fp32, bf16, fp16")
    backend = (cfg.get("embed") or {}).get("backend", "auto")
    if backend not in ("auto", "torch", "openvino"):
        raise ConfigError(f"unknown embed.backend '{backend}'; valid: auto, openvino, torch")


def _check_draws(cfg: DictConfig) -> None:
    """`eval.draws` > 1 meets the same prompts again with fresh draws of the agents, which only a kind that
    redraws has (the simulator; a paid model's replies come back from its cache). Credibility's query
    stream carries scores from one test question to the next, so a second pass would start where the
    first one ended: refused rather than pooled."""
    from tomacs.backbones.base import backbone_class
    from tomacs.methods.base import resolve_decision

    draws = cfg.eval.get("draws", 1)
    if draws < 1:
        raise ConfigError(f"eval.draws must be >= 1 (got {draws})")
    if draws == 1:
        return
    if not backbone_class(cfg.backbone).redraws:
        raise ConfigError(
            f"eval.draws={draws} scores the test under fresh draws of simulated agents, which only "
            f"backbone=sim has (not backbone={cfg.backbone.name}): set eval.draws=1"
        )
    decision, _ = resolve_decision(str(cfg.decision), str(cfg.method.name), 1, 0)
    if decision == "crs":
        raise ConfigError(
            f"eval.draws={draws} cannot pool credibility's query stream (each pass would start from the "
            "scores the last one ended with): set eval.draws=1, and score other draws with backbone.draw=K"
        )


def _check_method_settings(cfg: DictConfig) -> None:
    """The method's schema checks its choices, ranges and cross-key rules (tomacs.methods.settings)."""
    from tomacs.methods.registry import method_settings
    from tomacs.methods.settings import SettingsError

    try:
        method_settings(to_container(cfg))
    except SettingsError as e:
        raise ConfigError(f"method.{e.detail} (method={e.owner})") from None
    except ValueError as e:  # an unknown key (a config.yaml edited by hand)
        raise ConfigError(f"method: {e}") from None


def _kind(value: Any) -> str | None:
    """The type a shipped option value promises; None where any value may replace it."""
    if isinstance(value, bool):
        return "Boolean"
    if isinstance(value, int | float):
        # an integer in the file is not a promise of integers (backbone.backoff_max: 30 takes 0.05)
        return "Float"
    return None


def _fits(kind: str, value: Any) -> bool:
    if kind == "Boolean":
        return isinstance(value, bool)
    return isinstance(value, int | float) and not isinstance(value, bool)


def schema_defaults(schema: type) -> dict[str, object]:
    """A config schema's plain defaults (not MISSING, not factories): what an option file's key holds
    when the file leaves it out, and what a key added since takes in an older run's config."""
    import dataclasses

    return {
        f.name: f.default
        for f in dataclasses.fields(schema)
        if f.default is not dataclasses.MISSING and f.default != MISSING
    }


def _schema_defaults(node: DictConfig) -> dict[str, object]:
    """The plain defaults of the schema a group option extends (none for an option without one): an
    `Any` field's default says what it holds, as a value in the option file would."""
    import dataclasses

    cls = OmegaConf.get_type(node)
    return schema_defaults(cls) if isinstance(cls, type) and dataclasses.is_dataclass(cls) else {}


def check_option_types(cfg: DictConfig, root: Path | None = None) -> None:
    """Keys inside a group option without a schema (budget.in_degree...) or typed `Any` in it
    (backbone.timeout) are free-form to Hydra, so `budget.in_degree=abc` would compose and fail later
    with a bare conversion error. The shipped option file, else the schema's default, says what each
    key holds; hold overrides to it (null there means any value, a null override is always allowed).
    Typed schema fields are held to their type by Hydra (tomacs.methods.settings for methods)."""
    root = root or conf_dir()
    for group in GROUPS:
        node = cfg.get(group)
        name = node.get("name") if isinstance(node, DictConfig) else None
        path = root / group / f"{name}.yaml"
        if not name or not path.is_file():
            continue
        shipped = {**_schema_defaults(node), **_option_file(str(path))}
        for key, default in shipped.items():
            kind = _kind(default)
            if kind is None or key not in node:
                continue
            value = OmegaConf.select(node, str(key), throw_on_missing=False)
            if value is None or _fits(kind, value):
                continue
            want = _TYPE_NAMES[kind]
            eg = str(default).lower() if isinstance(default, bool) else default
            dotted = f"{group}.{key}"
            raise ConfigError(f"bad value '{value}' for '{dotted}': expected {want}, e.g. {dotted}={eg}")


def flat(d: object, prefix: str = "") -> dict[str, object]:
    """Dotted keys -> leaf values of a nested dict; lists and other non-dict leaves are kept whole
    (how a resume and a report compare two resolved configs key by key)."""
    if isinstance(d, dict):
        out: dict[str, Any] = {}
        for k, v in d.items():
            out.update(flat(v, f"{prefix}{k}."))
        return out
    return {prefix[:-1]: d}


def to_container(cfg: DictConfig) -> dict[str, Any]:
    """Resolved plain dict (enums as strings) for results files."""
    return OmegaConf.to_container(cfg, resolve=True, enum_to_str=True)  # type: ignore[return-value]


def checked_spec(resolved: Mapping[str, object]) -> RunSpec:
    """The spec of a resolved config (a run directory's config.yaml, migrated by
    tomacs.job.files), validated as a composed one is."""
    validate(OmegaConf.create(dict(resolved)))
    try:
        return RunSpec.of(resolved)
    except (KeyError, ValueError, TypeError) as exc:
        raise ConfigError(f"config: {exc}; pass the directory of a job this version can read") from None


# Keys that once named the embedder beside the top-level `embedder`. A run has one embedder (no
# paper embeds with two), so one key chooses it; old run directories that wrote these still load.
REMOVED_EMBEDDER_KEYS = ("method.embedder", "crs.embedder")


def reject_removed_keys(overrides: list[str]) -> None:
    """`method.embedder=hashing` was how an embedder was chosen before it became one key: name the
    key that replaced it instead of Hydra's "not in struct"."""
    for ov in overrides:
        key, _, value = ov.lstrip("+~").partition("=")
        if key in REMOVED_EMBEDDER_KEYS:
            raise ConfigError(
                f"'{ov}': {key} was removed, a run has one embedder: set embedder={value or '<name>'} "
                "(minilm | hashing)"
            )


def resolve_embedder(
    cfg: MutableMapping[str, object], from_checkpoint: str | None = None, checkpoint: str | None = None
) -> None:
    """Settle the one embedder a run uses into the top-level ``embedder``.

    A checkpoint that records its embedder (``from_checkpoint``) decides when the user chose none, and
    must match when they did. A run that embeds text (a learned method, or crs centroids) records
    the default (``tomacs.embedding.embedders.DEFAULT_EMBEDDER``), applied here and nowhere else; a run
    that embeds nothing keeps null. A config saved before the embedder was one key also holds
    ``method.embedder`` and ``crs.embedder``: they are read as the choice when ``embedder`` is null
    and dropped, so such a run directory resumes and such a config builds."""
    from tomacs.embedding.embedders import DEFAULT_EMBEDDER
    from tomacs.methods.registry import is_trainable

    chosen = cfg.get("embedder") or None
    method, crs = cfg.get("method"), cfg.get("crs")
    embeds = isinstance(crs, MutableMapping) and crs.get("aggregation") == "centroid"
    for node in (method, crs):
        if isinstance(node, MutableMapping) and "embedder" in node:
            chosen = chosen or node.get("embedder") or None
            if isinstance(node, DictConfig):
                with open_dict(node):
                    node.pop("embedder")
            else:
                node.pop("embedder")
    if from_checkpoint:
        if chosen and chosen != from_checkpoint:
            raise ConfigError(
                f"checkpoint {checkpoint} was trained with embedder={from_checkpoint} but this run sets "
                f"embedder={chosen}; drop the override or set embedder={from_checkpoint}"
            )
        chosen = from_checkpoint
    if isinstance(method, Mapping) and is_trainable(str(method.get("name"))):
        embeds = True
    if chosen or embeds:
        cfg["embedder"] = chosen or DEFAULT_EMBEDDER


def emb_proj_as_default(cfg: MutableMapping[str, object]) -> None:
    """Write a learned method's emb_proj as null when it is the width null resolves to for the run's
    embedder (the same network), so that resuming and skipping compare networks, not spellings: a
    hashing run saved with the earlier default 0 and a MiniLM run saved with an explicit 32 are
    recognised, and a MiniLM run of the earlier unprojected default (0) is refused naming the key."""
    from tomacs.methods.todycomm import embedding_width, resolve_emb_proj

    method = cfg.get("method")
    if not isinstance(method, MutableMapping) or method.get("emb_proj") is None or not cfg.get("embedder"):
        return
    width = embedding_width(str(cfg["embedder"]), method.get("emb_dim"))
    if method["emb_proj"] == resolve_emb_proj(None, width):
        method["emb_proj"] = None
