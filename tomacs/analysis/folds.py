"""The files of a cross-fit's folds, read and checked before `tomacs transcripts pool` joins them.

Why one reader for both kinds: a texts check (`transcripts texts --fold k/K -o F`) and a policy replay
(`replay --fold k/K -o F`) are cross-fitted alike, one fold per profile fitted without it, and a pool of
them is only a cross-fit when the files are the K folds of one split, of one model, read alike.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from tomacs.transcripts.split import Fold, parse_fold

Kind = Literal["texts", "replay"]
WRITE: dict[str, str] = {
    "texts": "`tomacs transcripts texts --fold k/K -o FILE`",
    "replay": "`tomacs replay RUN TRANSCRIPTS --fold k/K -o FILE` (one run per fold)",
}
# what every fold of one cross-fit shares (seed: the split's)
SAME: dict[str, tuple[str, ...]] = {
    "texts": ("model", "embedder", "real_models", "seed"),
    "replay": ("model", "embedder", "method", "seed"),
}


def _fold_kind(res: dict[str, Any]) -> Kind | Literal["sweep"] | None:
    """Which command wrote `res`: a texts check, a one-run replay, a replay of several runs; None: neither."""
    if "summary" in res and "debates" in res:
        return "replay"
    if "runs" in res and "over_runs" in res:
        return "sweep"
    if "replies" in res and "two_sample_auc" in res:
        return "texts"
    return None


def _load(path: str) -> dict[str, Any]:
    try:
        res = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not JSON ({exc.msg}, line {exc.lineno})") from None
    if not isinstance(res, dict):
        raise ValueError(f"{path}: not the JSON of {WRITE['texts']} or of {WRITE['replay']}")
    return res


def _kind_of(path: str, res: dict[str, Any]) -> Kind:
    kind = _fold_kind(res)
    if kind == "sweep":
        raise ValueError(f"{path}: a replay of several runs; replay each fold's run alone, {WRITE['replay']}")
    if kind is None:
        raise ValueError(f"{path}: not the JSON of {WRITE['texts']} or of {WRITE['replay']}")
    return kind


def _fold_of(path: str, res: dict[str, Any], kind: Kind) -> Fold:
    try:
        fold = parse_fold(res.get("fold"))
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None
    if fold is None:
        raise ValueError(f"{path}: not one fold of a cross-fit; write each fold with {WRITE[kind]}")
    return fold


FoldFiles = list[tuple[Fold, dict[str, object]]]  # each fold's JSON


def read_fold_files(paths: Sequence[str], expect: Kind | None = None) -> tuple[Kind, FoldFiles]:
    """The files' kind, and each file's fold and result in fold order; a clear error for a file that is
    not a fold, files of both kinds (or not of `expect`), a fold given twice, folds of different K, or
    folds that differ in what one cross-fit shares (`SAME`: model, embedder, split seed, ...)."""
    if not paths:
        hint = WRITE[expect] if expect else f"{WRITE['texts']}, or {WRITE['replay']}"
        raise ValueError(f"give the JSON files of the folds ({hint})")
    loaded = [(path, _load(path)) for path in paths]
    kinds = {path: _kind_of(path, res) for path, res in loaded}
    if len(set(kinds.values())) > 1:
        raise ValueError(
            "the files are of two kinds: "
            + "; ".join(f"{path}: {kind}" for path, kind in kinds.items())
            + "; pool the texts checks and the replays apart"
        )
    kind = next(iter(kinds.values()))
    if expect is not None and kind != expect:
        raise ValueError(f"{paths[0]}: a {kind} fold, not one of {WRITE[expect]}")
    out = [(_fold_of(path, res, kind), res) for path, res in loaded]
    if len({f.of for f, _ in out}) > 1:
        raise ValueError(f"folds of different K: {', '.join(str(f) for f, _ in out)}; pool one cross-fit")
    seen: dict[int, int] = {}
    for i, (f, _) in enumerate(out):
        if f.k in seen:
            raise ValueError(f"fold {f} given twice: {paths[seen[f.k]]} and {paths[i]}")
        seen[f.k] = i
    for key in SAME[kind]:
        vals = {json.dumps(r.get(key)) for _, r in out}
        if len(vals) > 1:
            raise ValueError(f"the folds differ in {key}: {', '.join(sorted(vals))}; pool one cross-fit")
    return kind, sorted(out, key=lambda fr: fr[0].k)


def fold_mean(vals: Sequence[float | None]) -> float | None:
    """The mean over the folds, or None where any is missing: a mean over some folds is not the
    cross-fit's."""
    if not vals or any(v is None for v in vals):
        return None
    return float(np.mean(np.asarray(vals, dtype=float)))
