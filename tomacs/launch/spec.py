"""Composed config -> run spec: where a job's DictConfig ends.

Everything below tomacs.launch reads a frozen `tomacs.runspec.spec.RunSpec`; this is the one place a job's
composed config becomes one (a run directory's config.yaml becomes one in tomacs.job.files)."""

from __future__ import annotations

from omegaconf import DictConfig

from tomacs.config import to_container, validate
from tomacs.job.checkpoint import settle_embedder
from tomacs.runspec.spec import RunSpec


def job_spec(cfg: DictConfig, checkpoint: str | None = None, validated: bool = False) -> RunSpec:
    """Validate the composed config once, settle the embedder (a checkpoint's recorded one wins, as
    config.yaml must record the embedder the run really uses) and freeze it. `checkpoint` replaces
    the config's (a command's --checkpoint option); `validated`: tomacs.config.compose already did."""
    if not validated:
        validate(cfg)
    resolved = to_container(cfg)
    resolved.pop("hydra", None)
    if checkpoint is not None:
        resolved["checkpoint"] = checkpoint
    settle_embedder(resolved)
    return RunSpec.of(resolved)
