"""Where `backbone.profile` finds a simulator profile: the paper's, the user's store, or a file.

The paper profiles (conf/backbone/sim.yaml) are fitted to TodyComm's tables and stay the default. A user
profile is fitted from real debate episodes (`tomacs calibrate --from-episodes PATH --name NAME`) and
lives in the profile store, ``outputs/profiles/NAME.yaml`` under the directory tomacs runs from (like
every other output; ``$TOMACS_PROFILES`` names another directory), so that any later run in the same
checkout finds it by name: ``backbone=sim backbone.profile=NAME``. A value with a ``/`` or ending in
``.yaml``/``.yml`` is a file path instead.

One file holds one profile::

    # <comment header: fitted from real episodes, not a paper profile>
    name: NAME
    profile: {n_cand: 4, accuracy: 0.62, ...}      # every SimProfile field except name
    provenance: {sources: [...], fit_date: ..., ...}  # free mapping written by the fitter
    text: {source: ..., phases: {honest: {first: ..., later: ...}, adversary: ...}}  # optional

`text` (optional) is the profile's text model (`tomacs.sim.text_model`): how the model's honest agents
and adversaries write, fitted from the same transcripts' texts; without it the simulator writes App. D's
texts, as for a paper profile.

A paper profile's name is never a user profile's: results label a user profile ``sim:NAME`` and a
paper profile plain ``sim``, and the two must not be confused.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from collections.abc import Mapping
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

from tomacs.sim.model import PROFILE_NAMES, SimProfile, default_profiles_path, load_profiles
from tomacs.sim.text_model import TextModel

STORE_ENV = "TOMACS_PROFILES"
DEFAULT_STORE = Path("outputs") / "profiles"
PAPER = "paper"  # the source label of a paper profile (else: the file's absolute path)
MAKE_ONE = "fit one with `tomacs sim fit-episodes PATH --name NAME`"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
HEADER = (
    "# A `sim` backbone profile FITTED FROM REAL DEBATE EPISODES (`tomacs calibrate --from-episodes`),\n"
    "# not a paper profile: the paper profiles, fitted to TodyComm's tables, are in conf/backbone/sim.yaml.\n"
    "# `provenance` says which episodes, models and split it was fitted on, and how well it predicts\n"
    "# held-out questions. Use it with: backbone=sim backbone.profile={name}\n"
    "# (or backbone.profile=<this file>).\n"
)


def store_dir() -> Path:
    """The profile store: ``$TOMACS_PROFILES`` if set, else outputs/profiles of the working directory."""
    return Path(os.environ.get(STORE_ENV) or DEFAULT_STORE)


def paper_profiles() -> dict[str, SimProfile]:
    """The profiles fitted to the paper's tables (conf/backbone/sim.yaml)."""
    return load_profiles()


def paper_names() -> list[str]:
    return sorted(set(PROFILE_NAMES) | set(paper_profiles()))


def stored_names(directory: str | Path | None = None) -> list[str]:
    """Names of the profiles in the store (file stems of its *.yaml)."""
    d = Path(directory) if directory is not None else store_dir()
    return sorted(p.stem for p in d.glob("*.yaml")) if d.is_dir() else []


def is_path(value: str) -> bool:
    """A `backbone.profile` value names a file when it has a / or ends in .yaml/.yml."""
    return "/" in value or os.sep in value or value.lower().endswith((".yaml", ".yml"))


def _check_name(name: str, where: str) -> None:
    if not _NAME.match(name) or name.lower().endswith((".yaml", ".yml")):
        raise ValueError(
            f"{where}: profile name {name!r} must be letters, digits, '_', '-' or '.' (no '/', no .yaml)"
        )
    if name in paper_names():
        raise ValueError(
            f"{where}: {name!r} is a paper profile's name (conf/backbone/sim.yaml: "
            f"{', '.join(paper_names())}); choose another name, e.g. {name}_mine"
        )


def _plain(value: Any, where: str) -> Any:
    """Provenance as plain YAML (numpy scalars, paths, tuples and dates made plain)."""
    if isinstance(value, dict):
        return {str(k): _plain(v, where) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v, where) for v in value]
    if value is None or isinstance(value, str):
        return value
    for kind in (bool, int, float):  # exact built-ins: np.float64 subclasses float, YAML refuses it
        if isinstance(value, kind):
            return kind(value)
    if isinstance(value, (_dt.date, _dt.datetime)):
        return value.isoformat()
    if isinstance(value, Path):
        return str(value)
    if hasattr(value, "item") and callable(value.item):  # numpy scalar
        return _plain(value.item(), where)
    if hasattr(value, "tolist") and callable(value.tolist):  # numpy array
        return _plain(value.tolist(), where)
    raise TypeError(f"{where}: provenance value {value!r} ({type(value).__name__}) cannot be written to YAML")


def profile_file_text(
    profile: SimProfile, provenance: Mapping[str, object], text: TextModel | None = None
) -> str:
    """The YAML text of one stored profile (format: module docstring)."""
    import yaml

    body = {k: v for k, v in asdict(profile).items() if k != "name"}
    doc = {"name": profile.name, "profile": body, "provenance": _plain(dict(provenance), profile.name)}
    if text is not None:
        doc["text"] = _plain(text.to_dict(), profile.name)
    return HEADER.format(name=profile.name) + yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)


def load_text_model(path: str | Path) -> TextModel | None:
    """The `text` section of a stored profile file, None when it has none (the App. D texts)."""
    import yaml

    p = Path(path)
    try:
        doc = yaml.safe_load(p.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ValueError(f"{p}: not a readable profile file ({exc})") from None
    section = doc.get("text") if isinstance(doc, dict) else None
    if section is None:
        return None
    return TextModel.from_dict(section, where=f"{p}: `text`")


def save_profile(
    profile: SimProfile,
    provenance: Mapping[str, object],
    dest: str | Path | None = None,
    text: TextModel | None = None,
) -> Path:
    """Write a fitted profile with its provenance; returns the file written.

    ``dest`` None = the store, ``<store>/<profile.name>.yaml`` (a refit under the same name replaces
    it). A paper profile's name is refused: the paper profiles are only ever refitted by
    `tomacs calibrate --write`, into conf/backbone/sim.yaml."""
    _check_name(profile.name, "save_profile")
    if not isinstance(provenance, dict):
        raise TypeError(f"save_profile: provenance must be a mapping, got {type(provenance).__name__}")
    path = Path(dest) if dest is not None else store_dir() / f"{profile.name}.yaml"
    body = profile_file_text(profile, provenance, text)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_text(body, encoding="utf-8")
    os.replace(tmp, path)  # a reader never sees half a profile
    return path


def load_profile_file(path: str | Path) -> tuple[SimProfile, dict[str, Any] | None]:
    """Read one stored profile file; bad content fails in one line naming the file and the field."""
    import yaml

    p = Path(path)
    try:
        doc = yaml.safe_load(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"sim profile file {p} not found; {MAKE_ONE}") from None
    except (OSError, yaml.YAMLError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(f"{p}: not a readable profile file ({first})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("profile"), dict):
        raise ValueError(f"{p}: expected a mapping with `name`, `profile` (a mapping) and `provenance`")
    name = doc.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"{p}: `name` must be a non-empty string")
    _check_name(name, str(p))
    body = dict(doc["profile"])
    if body.pop("name", name) != name:
        raise ValueError(f"{p}: `profile.name` differs from `name` ({name!r}); drop `profile.name`")
    known = [f.name for f in fields(SimProfile) if f.name != "name"]
    unknown = sorted(set(body) - set(known))
    if unknown:
        raise ValueError(f"{p}: unknown `profile` field(s) {unknown}; valid: {', '.join(known)}")
    try:
        profile = SimProfile.from_dict(body, name=name)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{p}: `profile`: {exc}") from None
    if profile.n_cand < 2:
        raise ValueError(f"{p}: `profile.n_cand` must be >= 2, got {profile.n_cand}")
    prov = doc.get("provenance")
    if prov is not None and not isinstance(prov, dict):
        raise ValueError(f"{p}: `provenance` must be a mapping")
    return profile, (None if prov is None else _plain(prov, str(p)))


def resolve_profile(name_or_path: str | Path) -> tuple[SimProfile, dict[str, Any] | None, str]:
    """(profile, provenance or None, source): a paper profile first, then the store, or a file.

    ``source`` is ``"paper"`` for a paper profile, else the absolute path of the file it was read
    from. An unknown name fails in one line that lists the paper and the stored profiles."""
    value = str(name_or_path)
    if isinstance(name_or_path, Path) or is_path(value):
        profile, prov = load_profile_file(value)
        return profile, prov, str(Path(value).resolve())
    papers = paper_profiles()
    if value in papers:
        return papers[value], None, PAPER
    path = store_dir() / f"{value}.yaml"
    if path.is_file():
        profile, prov = load_profile_file(path)
        if profile.name != value:
            raise ValueError(
                f"{path}: `name: {profile.name}` but the file is {value}.yaml; rename one so they agree"
            )
        return profile, prov, str(path.resolve())
    stored = stored_names()
    raise ValueError(
        f"unknown sim profile {value!r}; paper profiles: {', '.join(sorted(papers))}; "
        f"stored in {store_dir()}: {', '.join(stored) if stored else '(none)'}; "
        f"{MAKE_ONE}, or give a profile file (backbone.profile=path/to/profile.yaml)"
    )


def describe(profile: SimProfile, provenance: Mapping[str, object] | None, source: str) -> dict[str, object]:
    """What results.json (`backbone_stats`) and the W&B config record about the profile a run used:
    its name, where it came from (`paper`, `store` or `file`), that file, and the fit date."""
    if source == PAPER:
        kind, file = PAPER, str(default_profiles_path())
    else:
        kind, file = ("store" if Path(source).parent == store_dir().resolve() else "file"), source
    fit_date = (provenance or {}).get("fit_date")
    return {
        "profile": profile.name,
        "profile_source": kind,
        "profile_file": file,
        "profile_fit_date": fit_date if fit_date is None or isinstance(fit_date, str) else str(fit_date),
    }
