"""Experiment tracking: W&B (`logger=wandb`), offline by default, and a reader for offline runs.

Why offline by default: a sweep on a cluster node or a laptop on a train must never hang or fail
for lack of internet; `wandb sync --include-offline <dir>/wandb/offline-run-*` uploads later, or
`WANDB_MODE=online` syncs live. One W&B run per job: group = the sweep, name = the job's overrides,
config = the resolved config (it never holds API keys: keys live only in the environment).
`finish()` is always called, also when the job fails, so no run is left open.
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path
from typing import Any

__all__ = ["NullTracker", "WandbTracker", "make_tracker", "read_offline_run"]


class NullTracker:
    """logger=none: the local files (train_log.jsonl, results.json) are the record."""

    def log(self, record: dict[str, Any], step: int | None = None) -> None:
        return None

    def finish(self, results: dict[str, Any] | None, episodes_path: Path, failed: bool) -> None:
        return None


class WandbTracker:
    def __init__(
        self, cfg: dict[str, Any], resolved: dict[str, Any], out_dir: Path, job: dict[str, str]
    ) -> None:
        os.environ.setdefault("WANDB_MODE", "offline")
        os.environ.setdefault("WANDB_ERROR_REPORTING", "false")
        os.environ.setdefault("WANDB_SILENT", "true")
        import wandb

        self.wandb = wandb
        self.graph_queries = int(cfg.get("graph_queries", 5))
        self.run = wandb.init(
            project=str(cfg.get("project") or "tomacs"),
            entity=cfg.get("entity") or None,
            group=job.get("group") or None,
            name=job.get("name") or out_dir.name,
            job_type=str(resolved.get("mode", "train")),
            tags=[str(t) for t in (cfg.get("tags") or [])] + [f"backbone={resolved['backbone']['name']}"],
            config=resolved,
            dir=str(out_dir),
            mode=os.environ.get("WANDB_MODE", "offline"),  # type: ignore[arg-type]
            reinit="finish_previous",
        )

    def log(self, record: dict[str, Any], step: int | None = None) -> None:
        """Per-iteration curves: train Acc/ADAcc, loss, tokens; validation after each epoch."""
        vals = {k: v for k, v in record.items() if isinstance(v, (int, float)) and v is not None}
        self.run.log(vals, step=step)

    def finish(self, results: dict[str, Any] | None, episodes_path: Path, failed: bool) -> None:
        try:
            if results is not None:
                episodes = _first_records(episodes_path, self.graph_queries)
                for k, v in results.get("metrics", {}).items():
                    if isinstance(v, (int, float)):
                        self.run.summary[k] = v
                self.run.summary["backbone"] = results.get("backbone")
                rows = []
                for ep in episodes:
                    for t, g in enumerate(ep.get("graphs") or [], start=1):
                        if g is not None:
                            rows.append(
                                [
                                    ep["question"]["id"],
                                    t,
                                    json.dumps(g.get("participants", g.get("nodes"))),
                                    json.dumps(g.get("nodes")),
                                    json.dumps(g.get("edges")),
                                    json.dumps(g.get("temporal_edges") or []),
                                ]
                            )
                if rows:
                    table = self.wandb.Table(
                        columns=["question", "round", "participants", "callers", "edges", "temporal_edges"],
                        data=rows,
                    )
                    self.run.log({"graphs": table})
        finally:
            self.run.finish(exit_code=1 if failed else 0)


def _first_records(path: Path, k: int) -> list[dict[str, Any]]:
    """The first k episodes only: the log of a long run is large and only a few are tabled."""
    out: list[dict[str, Any]] = []
    if k <= 0 or not path.is_file():
        return out
    with path.open() as f:
        for line in f:
            if len(out) >= k:
                break
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                break
    return out


def make_tracker(
    logger_cfg: dict[str, Any], resolved: dict[str, Any], out_dir: Path, job: dict[str, str]
) -> Any:
    name = str(logger_cfg.get("name", "none"))
    if name == "none":
        return NullTracker()
    if name == "wandb":
        return WandbTracker(logger_cfg, resolved, out_dir, job)
    raise ValueError(f"unknown logger '{name}'; valid: none, wandb")


def read_offline_run(run_dir: Path) -> dict[str, Any]:
    """Decode an offline W&B run (its run-*.wandb file: LevelDB-log framing of protobuf records)
    into {name, group, config, history, summary}. Lets tests and users check what a run holds
    without syncing it."""
    from wandb.proto import wandb_internal_pb2 as pb

    files = sorted(Path(run_dir).glob("run-*.wandb"))
    if not files:
        raise FileNotFoundError(f"no run-*.wandb file in {run_dir}")
    data = files[0].read_bytes()
    block, pos, chunks, buf = 32768, 7, [], b""  # 7 = the ':W&B' file header
    while pos + 7 <= len(data):
        left = block - pos % block
        if left < 7:
            pos += left
            continue
        _crc, length, kind = struct.unpack("<IHB", data[pos : pos + 7])
        pos += 7
        chunk = data[pos : pos + length]
        pos += length
        if kind == 0 and length == 0:
            break
        if kind == 1:
            chunks.append(chunk)
        elif kind == 2:
            buf = chunk
        elif kind == 3:
            buf += chunk
        elif kind == 4:
            chunks.append(buf + chunk)
    out: dict[str, Any] = {"name": None, "group": None, "config": {}, "history": [], "summary": {}}
    for raw in chunks:
        rec = pb.Record()
        rec.ParseFromString(raw)
        kind = rec.WhichOneof("record_type")
        if kind == "run":
            out["name"], out["group"] = rec.run.display_name, rec.run.run_group
            out["config"].update({i.key: json.loads(i.value_json) for i in rec.run.config.update})
        elif kind == "config":
            out["config"].update({i.key: json.loads(i.value_json) for i in rec.config.update})
        elif kind == "history":
            out["history"].append(
                {i.key or "/".join(i.nested_key): json.loads(i.value_json) for i in rec.history.item}
            )
        elif kind == "summary":
            out["summary"].update({i.key: json.loads(i.value_json) for i in rec.summary.update if i.key})
    return out
