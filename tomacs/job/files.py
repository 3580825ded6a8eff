"""A job's files in its run directory: what it writes, and what a re-run reads back.

episodes.jsonl grows one line per finished question (a killed evaluation resumes from it),
config.yaml records the settled config (a resume into another config is refused), results.json
is written last (a re-run of a finished job is skipped). Every rule about reading those back
lives here, next to the writing, so the two cannot drift apart.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from omegaconf import OmegaConf

from tomacs.config import ConfigError, checked_spec, flat, schema_defaults
from tomacs.job.checkpoint import UNTRAINED, settle_embedder
from tomacs.runspec.spec import RunSpec
from tomacs.types import Episode

EPISODES, CONFIG, RESULTS = "episodes.jsonl", "config.yaml", "results.json"


def git_rev(cwd: Path | None = None) -> str | None:
    """The code's revision, recorded with every result so a number can be traced to its code.

    `+dirty` marks tracked files changed since that commit: the number then came from code that
    no revision holds, which a reader of results.json must be told (untracked files do not count;
    run outputs live there)."""
    where = cwd or Path(__file__).resolve().parent

    def git(*args: str) -> str:
        out = subprocess.run(["git", *args], capture_output=True, text=True, timeout=5, cwd=where)
        return out.stdout.strip() if out.returncode == 0 else ""

    try:
        rev = git("rev-parse", "--short", "HEAD")
        if not rev:
            return None
        return rev + "+dirty" if git("status", "--porcelain", "--untracked-files=no") else rev
    except Exception:
        return None


class EpisodeLog:
    """Append-only episodes.jsonl; lets a killed evaluation resume where it stopped."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def of(cls, out_dir: Path, draw: int = 0) -> EpisodeLog:
        """The test episodes of one pass of `eval.draws`: pass 0 (the run's own draw of the agents) in
        episodes.jsonl, which every reader of a run (view, analyses, W&B) reads; pass k > 0 in
        episodes.draw<k>.jsonl beside it, read only by the evaluation that pools them."""
        return cls(out_dir / (EPISODES if draw == 0 else f"episodes.draw{draw}.jsonl"))

    @classmethod
    def discard_all(cls, out_dir: Path) -> None:
        """Drop the episodes of every draw: an earlier policy's (a resumed training changed it)."""
        cls.of(out_dir).discard()
        for extra in out_dir.glob("episodes.draw*.jsonl"):
            extra.unlink(missing_ok=True)

    def discard(self) -> None:
        """Drop episodes of an earlier policy (a resumed training changed it)."""
        self.path.unlink(missing_ok=True)

    def repair(self) -> None:
        """Cut a torn tail left by a kill, so appended episodes start on a fresh line."""
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        keep = 0
        for line in data.splitlines(keepends=True):
            try:
                json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError):
                break
            if not line.endswith(b"\n"):
                break
            keep += len(line)
        if keep != len(data):
            with self.path.open("r+b") as f:
                f.truncate(keep)

    def done_ids(self) -> set[str]:
        if not self.path.exists():
            return set()
        ids = set()
        with self.path.open() as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                try:
                    ids.add(json.loads(line)["question"]["id"])
                except (json.JSONDecodeError, KeyError):
                    break  # a torn last line from a kill: ignore it and recompute that question
        return ids

    def load(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        out = []
        with self.path.open() as f:
            for line in f:
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    break
        return out

    def append(self, episodes: list[Episode]) -> None:
        with self.path.open("a") as f:
            for e in episodes:
                f.write(json.dumps(e.to_dict()) + "\n")
            f.flush()
            os.fsync(f.fileno())


def read_log(path: Path) -> list[dict[str, object]]:
    """A train_log.jsonl's records, without a torn last line (a killed job's) or blank lines: the
    log is appended line by line while a job runs, so a reader may meet either."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(rec, dict):
            out.append(rec)
    return out


def check_distinct(ids: list[str], where: str) -> None:
    """Metrics count questions, so a question present twice would count twice (n_queries, calls,
    Acc). Duplicates mean two jobs wrote one directory (before it was locked) or a broken split:
    refuse rather than guess which copy is right."""
    first: dict[str, int] = {}
    for i, qid in enumerate(ids, start=1):
        if qid in first:
            fix = (
                f"delete {where} (or the whole run directory) and re-run to recompute it"
                if where.endswith(".jsonl")
                else "question ids must be unique; fix the data file"
            )
            raise ConfigError(
                f"{where}: question id {qid!r} appears twice (entries {first[qid]} and {i}); {fix}"
            )
        first[qid] = i


def records_to_episodes(records: list[dict[str, Any]]) -> list[Episode]:
    from tomacs.serialize import episode_from_dict

    return [episode_from_dict(r) for r in records]


def write_json(path: Path, obj: object) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(obj, indent=2, default=_json_default))
    tmp.replace(path)


def _json_default(o: Any) -> Any:
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


# Keys that may change between a run and its resume: how to run, not what is measured. More
# epochs continue training (stale evaluation episodes are then dropped); a larger eval.size adds
# questions (finished ones are per-question seeded, so batch size and order do not matter); more
# eval.draws add passes (each draw has its own episode file).
_RESUME_FREE = (
    "mode",
    "checkpoint",
    "concurrency",
    "train.epochs",
    "train.patience",
    "eval.size",
    "eval.draws",
    "eval.batch_size",
    "backbone.timeout",
    "backbone.max_concurrency",
    "backbone.max_retries",
    "backbone.backoff_base",
    "backbone.backoff_max",
    "backbone.require_api_base",  # a start-time check; gpt-4.1-nano configs before the schema lack it
    "backbone.cache",
    "embed.cache",  # cached vectors are bit-identical to fresh ones
    *(f"backbone.{k}" for k in ("max_usd", "max_calls", "sweep_max_usd", "sweep_max_calls", "rpm", "tpm")),
)
# Spend caps and rate limits: raising a cap and re-running must skip the jobs that finished; and the
# start-time api_base check, which a config saved before the backbone schema may lack.
_SKIP_FREE = ("max_usd", "max_calls", "sweep_max_usd", "sweep_max_calls", "rpm", "tpm", "require_api_base")


def _without_limits(config: dict[str, Any]) -> dict[str, object]:
    bb = config.get("backbone")
    if not isinstance(bb, dict):
        return config
    return {**config, "backbone": {k: v for k, v in bb.items() if k not in _SKIP_FREE}}


def check_resumable(out_dir: Path, resolved: dict[str, Any]) -> None:
    """Refuse to resume into a directory whose episodes came from a different config: mixing them
    would report numbers of two experiments as one."""
    old_path = out_dir / CONFIG
    if not old_path.is_file() or not any((out_dir / f).exists() for f in (EPISODES, "checkpoint.pt")):
        return
    old_cfg = read_run_config(out_dir, "remove the directory or choose another")
    old = flat(_settled(old_cfg or {}))
    new = flat(_settled(resolved))
    diff = sorted(
        k
        for k in set(old) | set(new)
        if old.get(k) != new.get(k) and not any(k == f or k.startswith(f + ".") for f in _RESUME_FREE)
    )
    ckpts = (old.get("checkpoint"), new.get("checkpoint"))
    if ckpts[0] != ckpts[1] and UNTRAINED in ckpts:
        diff.append("checkpoint")  # episodes of the untrained policy must never pass for a trained one's
    if diff:
        shown = ", ".join(f"{k}: {old.get(k)!r} -> {new.get(k)!r}" for k in diff[:4])
        more = f" (+{len(diff) - 4} more)" if len(diff) > 4 else ""
        raise ConfigError(
            f"{out_dir} holds a run with a different config ({shown}{more}); "
            "use a new hydra.run.dir, or delete that directory to start over"
        )


def read_run_config(run_dir: Path, fix: str = "pass the directory of a tomacs job") -> dict[str, Any] | None:
    """A run directory's config.yaml as a plain dict, as the job wrote it; None without one."""
    path = Path(run_dir) / CONFIG
    if not path.is_file():
        return None
    loaded = OmegaConf.to_container(OmegaConf.load(path), resolve=True)
    if not isinstance(loaded, dict):
        raise ConfigError(f"{path} holds no config mapping; {fix}")
    return {str(k): v for k, v in loaded.items()}


def tested_checkpoint(run_dir: Path) -> Path | None:
    """The checkpoint a run's test figures came from, so a later look at the run (replay, credit
    analysis, paired re-evaluation) reads the same weights: the last epoch's checkpoint.pt where
    `train.select=last` (results.json `train.tested`; before the job finished, its config), else best.pt.
    Falls back to the other file when that one is missing; None when neither exists."""
    run_dir = Path(run_dir)
    select = "best"
    results = run_dir / RESULTS
    if results.is_file():
        try:
            select = str((json.loads(results.read_text()).get("train") or {}).get("tested") or "best")
        except (json.JSONDecodeError, AttributeError):
            pass
    else:
        cfg = read_run_config(run_dir) or {}
        select = str((cfg.get("train") or {}).get("select") or "best")
    order = ("checkpoint.pt", "best.pt") if select == "last" else ("best.pt", "checkpoint.pt")
    return next((run_dir / p for p in order if (run_dir / p).is_file()), None)


def run_spec(config: Mapping[str, object]) -> RunSpec:
    """The spec of a run directory's config (`read_run_config`, edited by the caller where it asks
    for something else, such as another test size): its embedder settled (a checkpoint's recorded
    one wins), migrated to today's keys (`_settled`), validated and frozen."""
    cfg = dict(copy.deepcopy(config))
    settle_embedder(cfg)
    return checked_spec(_settled(cfg))


def write_config(out_dir: Path, resolved: dict[str, Any]) -> None:
    """config.yaml: the settled config a resume is checked against (`check_resumable`)."""
    (out_dir / CONFIG).write_text(OmegaConf.to_yaml(OmegaConf.create(resolved)))


def finished_results(out_dir: Path, resolved: dict[str, Any], mode: str) -> dict[str, object] | None:
    """The results of this exact job if it already finished in out_dir (a re-run sweep skips it)."""
    path = out_dir / RESULTS
    if not path.is_file():
        return None
    try:
        old = json.loads(path.read_text())
    except json.JSONDecodeError:
        return None
    same = isinstance(old.get("config"), dict) and _without_limits(
        _settled(old["config"])
    ) == _without_limits(_settled(resolved))
    return old if same and old.get("mode") == mode else None


TRAIN_KEYS_ADDED: dict[str, object] = {
    "samples": 1,
    "lr_schedule": "constant",
    "grad_clip": None,
    "select": "best",
}


def _settled(config: dict[str, Any]) -> dict[str, object]:
    """A config with its embedder resolved as today's runs record it (runs from before that recorded
    `embedder: null`), emb_proj in its default form (`emb_proj_as_default`) and keys added since with
    the value older runs had (`train.name`, `train.samples`, attack keys such as `attack.prompt`,
    `embed.backend`, a backbone's keys such as the sim's `draw`, a method's keys added since), so
    that resuming and skipping still recognise them; both sides of a comparison go through it."""
    from tomacs.config import emb_proj_as_default, resolve_embedder

    cfg: dict[str, Any] = copy.deepcopy(config)
    resolve_embedder(cfg)
    emb_proj_as_default(cfg)
    _fill_added_keys(cfg)
    return cfg


def with_added_keys(config: dict[str, Any]) -> dict[str, Any]:
    """A copy of a config with every key added since it was written set to the value the run had: what
    `_settled` does beyond settling the embedder, and what a report compares jobs of two dates by."""
    cfg: dict[str, Any] = copy.deepcopy(config)
    _fill_added_keys(cfg)
    return cfg


def _fill_added_keys(cfg: dict[str, Any]) -> None:
    """In place: each key added since `cfg` was written, with the value runs before it had."""
    train, attack, method, embed, backbone = (
        cfg.get(k) for k in ("train", "attack", "method", "embed", "backbone")
    )
    if isinstance(train, dict):
        train.setdefault("name", "default")  # runs from before the training budget became a choice (train=)
        # keys added since, with the value runs before them had: one episode per training question, a
        # constant learning rate, no gradient clipping
        for key, value in TRAIN_KEYS_ADDED.items():
            train.setdefault(key, value)
    if isinstance(attack, dict):
        # an attack key added since (attack.prompt, attack.target_lure) takes its default, which is the
        # behaviour before it existed (App. D's adversary; uniform targets)
        from tomacs.config import AttackSchema

        for k, v in schema_defaults(AttackSchema).items():
            attack.setdefault(k, v)
    if isinstance(method, dict) and method.get("name"):
        # a method key added since (e.g. todycomm's `comm`) is absent from older runs' files; a new key's
        # default is the behaviour before it existed (the rule every new key follows), so fill it in
        from tomacs.methods.registry import METHODS, method_defaults
        from tomacs.methods.settings import METHOD_KEYS_BEFORE

        name = str(method["name"])
        defaults = (method_defaults(name) if name in METHODS else None) or {}
        for k, v in METHOD_KEYS_BEFORE.items():
            if k in defaults:
                method.setdefault(k, v)
        for k, v in defaults.items():
            method.setdefault(k, v)
    if isinstance(cfg.get("eval"), dict):
        cfg["eval"].setdefault("draws", 1)  # one pass over the test questions, as before eval.draws existed
    if isinstance(embed, dict):
        # runs from before embed.backend existed encoded with torch, but asked for no backend: they resume
        # and skip as `auto` does today (like precision=auto, resolved where the process runs; each
        # process's backend is in results.json -> embedding[].backend, absent = torch)
        embed.setdefault("backend", "auto")
    if isinstance(backbone, dict) and backbone.get("name"):
        # a backbone key added since (the sim's `draw`) takes its default, the behaviour before it existed
        from tomacs.backbones.base import BACKBONES, backbone_kind

        kind = backbone_kind(backbone)
        schema = getattr(BACKBONES.get(kind), "Settings", None) if kind in BACKBONES else None
        for k, v in (schema_defaults(schema) if schema is not None else {}).items():
            backbone.setdefault(k, v)
