"""Where `backbone.profile` finds a simulator profile: the paper's, a shipped one, the store's, a file.

The paper profiles (conf/backbone/sim.yaml) are fitted to TodyComm's tables and stay the default. The
shipped profiles (conf/profiles/NAME.yaml, in the package) are fitted from the real debates beside the
checkout (`make profiles` refits them all). A user profile is fitted from real debate episodes
(`tomacs sim fit-episodes PATH --name NAME`) and lives in the profile store, ``outputs/profiles/NAME.yaml``
under the directory tomacs runs from (like every other output; ``$TOMACS_PROFILES`` names another
directory), so that any later run in the same checkout finds it by name: ``backbone=sim
backbone.profile=NAME``. A value with a ``/`` or ending in ``.yaml``/``.yml`` is a file path instead.

A name resolves in that order: paper, shipped, store, and a path. Neither a paper nor a shipped name can
be fitted into the store (the fitter's ``--name`` is refused before the fit), so a user profile never
hides behind one; only `make profiles`, whose store IS the shipped directory, writes shipped names.

One file holds one profile::

    # <comment header: fitted from real episodes, not a paper profile>
    name: NAME
    profile: {n_cand: 4, accuracy: 0.62, ...}      # every SimProfile field except name
    provenance: {sources: [...], fit_date: ..., ...}  # free mapping written by the fitter
    text: {source: ..., phases: {honest: {first: ..., later: ...}, adversary: ...}}  # optional

`text` (optional) is the profile's text model (`tomacs.sim.text_model`): how the model's honest agents
and adversaries write, fitted from the same transcripts' texts; without it the simulator writes App. D's
texts, as for a paper profile.

A paper profile's name is never a user profile's: results label a user or shipped profile ``sim:NAME``
and a paper profile plain ``sim``, and the two must not be confused.
"""

from __future__ import annotations

import datetime as _dt
import logging
import os
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from tomacs.sim.model import PROFILE_NAMES, SimProfile, default_profiles_path, load_profiles
from tomacs.sim.text_model import TextModel

STORE_ENV = "TOMACS_PROFILES"
DEFAULT_STORE = Path("outputs") / "profiles"
PAPER = "paper"  # the source label of a paper profile (else: the file's absolute path)
SHIPPED = "shipped"  # the kinds `tomacs list` shows: paper, shipped, user
USER = "user"
PAPER_SOURCE = "TodyComm Tables 7-8, Table 2 Complete"  # what the paper profiles are fitted to
# The real debates under $TOMACS_DATA/debates (its README.md): a profile fitted from them holds fragments
# of their replies in its text model, so its file names the repository, commit and licence they came from.
DEBATE_SOURCES: dict[
    str, tuple[str, str]
] = {  # key (a folder there) -> (repository and folder, commit and licence)
    "mad-follower": (
        "github.com/Qi-Smile/MAD-Follower, folder outputs/",
        "commit b0c0c89c840a16644841bdd5248205a643dd0c34; MIT License (stated in its README)",
    ),
    "multi-agent-attack": (
        "github.com/amayuelas/multi-agent-attack, folder multiagent_debate/results/mmlu/",
        "commit ce8ab36f7621914a51cb3b148368028a9979bd81; MIT License, Copyright (c) 2024 Alfonso Amayuelas",
    ),
}
log = logging.getLogger(__name__)
MAKE_ONE = "fit one with `tomacs sim fit-episodes PATH --name NAME`"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
HEADER = (
    "# A `sim` backbone profile FITTED FROM REAL DEBATE EPISODES (`tomacs sim fit-episodes`),\n"
    "# not a paper profile: the paper profiles, fitted to TodyComm's tables, are in conf/backbone/sim.yaml.\n"
    "# `provenance` says which episodes, models and split it was fitted on, and how well it predicts\n"
    "# held-out questions. Use it with: backbone=sim backbone.profile={name}\n"
    "# (or backbone.profile=<this file>).\n"
)


def store_dir() -> Path:
    """The profile store: ``$TOMACS_PROFILES`` if set, else outputs/profiles of the working directory."""
    return Path(os.environ.get(STORE_ENV) or DEFAULT_STORE)


def shipped_dir() -> Path:
    """The shipped profiles: conf/profiles of the package (tomacs/conf/profiles in a wheel)."""
    from tomacs.paths import conf_dir

    return conf_dir() / "profiles"


def _same_dir(a: Path, b: Path) -> bool:
    return a.expanduser().resolve() == b.expanduser().resolve()


def store_is_shipped() -> bool:
    """True when the store is the shipped directory (`make profiles` sets TOMACS_PROFILES=conf/profiles)."""
    return _same_dir(store_dir(), shipped_dir())


def shipped_names() -> list[str]:
    """Names of the shipped profiles (file stems of conf/profiles/*.yaml)."""
    return stored_names(shipped_dir())


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


def _check_name(name: str, where: str, into: Path | None = None) -> None:
    """A name a profile may be written under into ``into`` (None: the store), so that `backbone.profile=NAME`
    finds it there: a plain name, no paper profile's, and no shipped profile's unless ``into`` is the
    shipped directory itself (`make profiles`). The fitter checks its ``--name`` here before the fit."""
    _check_plain_name(name, where)
    directory = store_dir() if into is None else into
    if name in shipped_names() and not _same_dir(directory, shipped_dir()):
        raise ValueError(
            f"{where}: {name!r} is a shipped profile's name ({shipped_dir() / name}.yaml), which "
            f"backbone.profile={name} finds before the profile store {directory}; "
            f"choose another --name, e.g. --name {name}-mine"
        )


def _check_plain_name(name: str, where: str) -> None:
    """A plain name (no path, no .yaml) that is not a paper profile's."""
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
    profile: SimProfile,
    provenance: Mapping[str, object],
    text: TextModel | None = None,
    shipped: bool = False,
) -> str:
    """The YAML text of one stored profile (format: module docstring). The header also names the
    repository, commit and licence of any known real debates it was fitted from, and says so when the
    file is a shipped profile."""
    import yaml

    body = {k: v for k, v in asdict(profile).items() if k != "name"}
    doc = {"name": profile.name, "profile": body, "provenance": _plain(dict(provenance), profile.name)}
    if text is not None:
        doc["text"] = _plain(text.to_dict(), profile.name)
    header = HEADER.format(name=profile.name)
    if shipped:
        header += (
            "# Shipped with tomacs (conf/profiles/); `make profiles` refits it: do not edit it by hand.\n"
        )
    origins = debate_sources(provenance.get("sources"))
    if origins:
        header += (
            "# Fitted on the FITTING questions only (`provenance`: split, split_seed) of real debates from:\n"
        )
        header += "".join(
            f"#   {key}: {DEBATE_SOURCES[key][0]},\n#     {DEBATE_SOURCES[key][1]}\n" for key in origins
        )
        if text is not None:
            header += (
                "# Its text model (`text`) holds template fragments of those replies, under that licence.\n"
            )
    return header + yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)


def debate_sources(sources: object) -> list[str]:
    """The known real-debate sources (DEBATE_SOURCES keys) that provenance `sources` paths point into."""
    if not isinstance(sources, (list, tuple)):
        return []
    found = {part for src in sources for part in Path(str(src)).parts if part in DEBATE_SOURCES}
    return sorted(found)


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
    `tomacs sim fit --write`, into conf/backbone/sim.yaml. So is a shipped profile's, anywhere but in
    the shipped directory (`make profiles`): a user profile would carry the same `sim:NAME` label."""
    path = Path(dest) if dest is not None else store_dir() / f"{profile.name}.yaml"
    _check_name(profile.name, "save_profile", into=path.parent)
    if not isinstance(provenance, dict):
        raise TypeError(f"save_profile: provenance must be a mapping, got {type(provenance).__name__}")
    body = profile_file_text(profile, provenance, text, shipped=_same_dir(path.parent, shipped_dir()))
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
    _check_plain_name(name, str(p))
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


def _read_named(path: Path, value: str) -> tuple[SimProfile, dict[str, Any] | None, str]:
    profile, prov = load_profile_file(path)
    if profile.name != value:
        raise ValueError(
            f"{path}: `name: {profile.name}` but the file is {value}.yaml; rename one so they agree"
        )
    return profile, prov, str(path.resolve())


def resolve_profile(name_or_path: str | Path) -> tuple[SimProfile, dict[str, Any] | None, str]:
    """(profile, provenance or None, source): a paper profile first, then a shipped one, then the store,
    or a file.

    ``source`` is ``"paper"`` for a paper profile, else the absolute path of the file it was read
    from. An unknown name fails in one line that lists the paper, shipped and stored profiles."""
    value = str(name_or_path)
    if isinstance(name_or_path, Path) or is_path(value):
        profile, prov = load_profile_file(value)
        return profile, prov, str(Path(value).resolve())
    papers = paper_profiles()
    if value in papers:
        return papers[value], None, PAPER
    shipped = shipped_dir() / f"{value}.yaml"
    stored = store_dir() / f"{value}.yaml"
    if shipped.is_file():
        if stored.is_file() and not store_is_shipped():
            log.warning(
                "sim profile %s: using the shipped %s, not %s (a shipped name comes first); rename the "
                "stored file and its `name` to use it",
                value,
                shipped,
                stored,
            )
        return _read_named(shipped, value)
    if stored.is_file():
        return _read_named(stored, value)
    ships, users = shipped_names(), stored_names()
    raise ValueError(
        f"unknown sim profile {value!r}; paper profiles: {', '.join(sorted(papers))}; "
        f"shipped: {', '.join(ships) if ships else '(none)'}; "
        f"stored in {store_dir()}: {', '.join(users) if users else '(none)'}; "
        f"{MAKE_ONE}, or give a profile file (backbone.profile=path/to/profile.yaml)"
    )


def describe(profile: SimProfile, provenance: Mapping[str, object] | None, source: str) -> dict[str, object]:
    """What results.json (`backbone_stats`) and the W&B config record about the profile a run used:
    its name, where it came from (`paper`, `shipped`, `store` or `file`), that file, and the fit date."""
    if source == PAPER:
        kind, file = PAPER, str(default_profiles_path())
    elif _same_dir(Path(source).parent, shipped_dir()):
        kind, file = SHIPPED, source
    else:
        kind, file = ("store" if Path(source).parent == store_dir().resolve() else "file"), source
    fit_date = (provenance or {}).get("fit_date")
    return {
        "profile": profile.name,
        "profile_source": kind,
        "profile_file": file,
        "profile_fit_date": fit_date if fit_date is None or isinstance(fit_date, str) else str(fit_date),
    }


@dataclass(frozen=True)
class ProfileEntry:
    """One row of `tomacs list`'s profile table: a profile, where it is, what it was fitted on and its
    held-out scorecard (None where a profile has none: a paper one, or a fit with no held-out share)."""

    name: str
    kind: str  # PAPER, SHIPPED or USER
    source: str  # short: what it was fitted to
    file: str
    debates_fit: int | None = None
    questions_fit: int | None = None
    cells_inside: int | None = None
    cells_total: int | None = None
    loglik: dict[str, float] = field(
        default_factory=dict
    )  # per held-out answer: fitted, keep_previous, paper
    note: str = ""  # why `backbone.profile=NAME` does not find this file, or why it could not be read


_TEXT_SECTION = re.compile(r"^text:", re.MULTILINE)


def _read_head(path: Path) -> dict[str, object]:
    """A stored profile's `name`, `profile` and `provenance`, without parsing its (long) `text` section."""
    import yaml

    raw = path.read_text(encoding="utf-8")
    cut = _TEXT_SECTION.search(raw)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    doc = yaml.load(raw[: cut.start()] if cut else raw, Loader=loader)  # a safe loader, C if built
    if not isinstance(doc, dict):
        raise ValueError("not a mapping")
    return doc


def source_label(provenance: Mapping[str, object]) -> str:
    """What a fitted profile was fitted to, short: the debates' source and the honest model(s), e.g.
    ``multi-agent-attack gpt-3.5-turbo``."""
    sources = provenance.get("sources")
    parts: list[str] = []
    for src in sources if isinstance(sources, list) else []:
        path = Path(str(src))
        known = [p for p in path.parts if p in DEBATE_SOURCES]
        label = known[0] if known else path.name or str(src)
        if label not in parts:
            parts.append(label)
    models = provenance.get("models")
    model_text = ",".join(str(m) for m in models) if isinstance(models, list) else ""
    return " ".join(x for x in ("+".join(parts), model_text) if x) or "?"


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _entry(path: Path, kind: str, note: str = "") -> ProfileEntry:
    import yaml

    try:
        doc = _read_head(path)
    except (OSError, ValueError, yaml.YAMLError) as exc:  # a broken user file must not break the listing
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return ProfileEntry(path.stem, kind, "?", str(path), note=f"unreadable: {first}")
    prov = doc.get("provenance")
    prov = prov if isinstance(prov, dict) else {}
    held = prov.get("held_out")
    held = held if isinstance(held, dict) else {}
    ll = held.get("loglik_per_answer")
    loglik = (
        {str(k): float(v) for k, v in ll.items() if isinstance(v, (int, float))}
        if isinstance(ll, dict)
        else {}
    )
    name = doc.get("name")
    if name != path.stem:
        note = note or f"`name: {name}` differs from the file name: backbone.profile={path.stem} fails"
    return ProfileEntry(
        name=path.stem,
        kind=kind,
        source=source_label(prov),
        file=str(path),
        debates_fit=_int(prov.get("debates_fit")),
        questions_fit=_int(prov.get("questions_fit")),
        cells_inside=_int(held.get("cells_inside")),
        cells_total=_int(held.get("cells_total")),
        loglik=loglik,
        note=note,
    )


def list_profiles() -> list[ProfileEntry]:
    """Every profile `backbone.profile=NAME` can name: the paper ones, the shipped ones and the store's,
    in that (resolution) order, each with its source and held-out scorecard. Reads the files' heads only
    (no fit, no text model). A stored file that a paper or shipped name hides is listed with a note."""
    out = [
        ProfileEntry(n, PAPER, PAPER_SOURCE, str(default_profiles_path())) for n in sorted(paper_profiles())
    ]
    papers = {e.name for e in out}
    ships = sorted(shipped_dir().glob("*.yaml"), key=lambda p: p.stem) if shipped_dir().is_dir() else []
    out += [_entry(p, SHIPPED) for p in ships]
    if not store_is_shipped():
        shipped = {p.stem for p in ships}
        for p in sorted(store_dir().glob("*.yaml"), key=lambda p: p.stem) if store_dir().is_dir() else []:
            hidden = PAPER if p.stem in papers else SHIPPED if p.stem in shipped else ""
            note = f"hidden: backbone.profile={p.stem} finds the {hidden} one; rename it" if hidden else ""
            out.append(_entry(p, USER, note))
    return out
