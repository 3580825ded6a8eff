"""A learned method's checkpoint file: written, read back, and checked against the run that loads it.

Kept apart from the trainer because building a job (the embedder a checkpoint was trained with),
evaluating one and the analyses all read checkpoints, and none of them should import the trainer.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tomacs.config import ConfigError
from tomacs.runspec.spec import RunSpec

if TYPE_CHECKING:
    import torch

    from tomacs.methods.base import Method

UNTRAINED = "untrained"  # checkpoint=untrained: evaluate a learned method's initial policy, on purpose


def save_checkpoint(
    path: Path, method: Method, optimizer: torch.optim.Optimizer | None, extra: Mapping[str, object]
) -> None:
    """``method_name`` and ``embedder`` travel with the weights, so loading can say which method
    and which embedder a checkpoint needs instead of failing on tensor shapes."""
    import torch

    tmp = path.with_suffix(".tmp")
    torch.save(
        {
            "method": method.state_dict(),
            "optimizer": optimizer.state_dict() if optimizer else None,
            "method_name": getattr(method, "name", None),
            **extra,
        },
        tmp,
    )
    tmp.replace(path)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def read_checkpoint(path: Path) -> dict[str, Any]:
    """The checkpoint's dict; a missing, unreadable or foreign file fails in one line naming it."""
    import torch

    if not path.is_file():
        raise FileNotFoundError(f"checkpoint not found: {path}")
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=False)
    except Exception as exc:  # noqa: BLE001 - pickle/zip/torch errors come in many types
        raise ValueError(
            f"checkpoint {path} cannot be read ({_first_line(exc)}); pass the best.pt or checkpoint.pt "
            "of a `tomacs train` run"
        ) from None
    if not isinstance(ckpt, dict) or not isinstance(ckpt.get("method"), dict):
        raise ValueError(
            f"checkpoint {path} is not a tomacs checkpoint (no method state); pass the best.pt or "
            "checkpoint.pt of a `tomacs train` run"
        )
    return ckpt


def _embedder_hint(saved: dict[str, Any], method: Any) -> str:
    """Checkpoints written before the embedder was recorded still carry the embedding size."""
    from tomacs.embedding.embedders import EMBEDDER_DIMS

    theirs = (saved.get("meta") or {}).get("emb_dim")
    mine = (method.state_dict().get("meta") or {}).get("emb_dim") if hasattr(method, "state_dict") else None
    names = [k for k, d in EMBEDDER_DIMS.items() if d == theirs]
    if theirs is None or theirs == mine or not names:
        return ""
    emb = names[0]
    return f"was trained with embedder={emb} ({theirs}-dim embeddings, this run: {mine}); add embedder={emb}"


def load_checkpoint(
    method: Method, path: Path, optimizer: torch.optim.Optimizer | None = None
) -> dict[str, object]:
    ckpt = read_checkpoint(path)
    name = getattr(method, "name", "?")
    saved = ckpt["method"]
    theirs = ckpt.get("method_name")
    mine = (method.state_dict() or {}).get("net") or {}
    mine_net = set(mine) if isinstance(mine, Iterable) else set()
    their_net = set(saved.get("net") or {}) if isinstance(saved.get("net"), dict) else set()
    if theirs is None and mine_net and their_net and not mine_net & their_net:
        theirs = "another method"  # written before checkpoints named their method
    if theirs is not None and theirs != name:
        fix = f"add method={theirs}" if theirs != "another method" else f"pass a checkpoint of a {name} run"
        raise ValueError(f"checkpoint {path} was written by {theirs}, not method={name}; {fix}")
    if ckpt.get("embedder") and getattr(method, "embedder_name", ckpt["embedder"]) != ckpt["embedder"]:
        raise ValueError(
            f"checkpoint {path} was trained with embedder={ckpt['embedder']}; add embedder={ckpt['embedder']}"
        )
    try:
        method.load_state_dict(saved)
    except (ValueError, RuntimeError, KeyError, TypeError, AttributeError) as exc:
        why = _embedder_hint(saved, method) or f"does not fit this {name}: {_first_line(exc)}"
        raise ValueError(f"checkpoint {path} {why}") from None
    if optimizer is not None and ckpt.get("optimizer"):
        optimizer.load_state_dict(ckpt["optimizer"])
    return ckpt


def settle_embedder(cfg: MutableMapping[str, object]) -> None:
    """Resolve the run's embedder once (tomacs.config.resolve_embedder), taking a checkpoint's
    recorded embedder into account, before the spec is frozen and anything is written."""
    from tomacs.config import resolve_embedder

    given = cfg.get("checkpoint")
    path = str(given) if given else None
    saved = read_checkpoint(Path(path)).get("embedder") if path and Path(path).is_file() else None
    resolve_embedder(cfg, saved, path)


def check_checkpoint(spec: RunSpec, mode: str) -> None:
    """An evaluation of a learned method needs its trained weights: without them it scores the
    random initial policy under the method's name. Asking for that explicitly is allowed (a
    baseline for the learning curve) and the results say so."""
    from tomacs.methods.registry import is_trainable, method_settings

    ckpt = spec.checkpoint
    name = method_settings(spec).name
    if ckpt == UNTRAINED and mode == "train":
        raise ConfigError(
            "checkpoint=untrained is for `tomacs evaluate`; `tomacs train` starts from an untrained policy "
            "by itself (drop checkpoint=untrained)"
        )
    if mode == "evaluate" and not ckpt and is_trainable(name):
        raise ConfigError(
            f"method={name} is learned and no checkpoint was given: pass checkpoint=<run dir>/best.pt, "
            f"train it with `tomacs train method={name} ...`, or add checkpoint=untrained to score "
            "the untrained policy (marked untrained in results)"
        )
