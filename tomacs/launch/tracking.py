"""Experiment tracking: W&B (`logger=wandb`), offline by default, and a reader for offline runs.

Why offline by default: a sweep on a cluster node or a laptop on a train must never hang or fail
for lack of internet; `wandb sync --include-offline <dir>/wandb/offline-run-*` uploads later, or
`WANDB_MODE=online` syncs live. One W&B run per job: group = the sweep, name = the job's overrides,
config = the resolved config (it never holds API keys: keys live only in the environment).
`finish()` is always called, also when the job fails, so no run is left open.
"""

from __future__ import annotations

import io
import json
import logging
import os
import struct
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

__all__ = ["EPISODE_COLUMNS", "NullTracker", "WandbTracker", "make_tracker", "read_offline_run"]

log = logging.getLogger(__name__)

# the W&B `episodes` table: one row per logged episode, as `tomacs view` shows it
EPISODE_COLUMNS = (
    "question",
    "gold",
    "target",  # the adversaries' target(s), "" where there is no adversary
    "final",  # the final decision's answer
    "final_mark",  # right / wrong / target / unparsed
    "wrong",
    "adversary_win",  # final = the target
    "flip_to_target",  # some not (yet) adversarial agent switched to the target
    "flips",  # each flip as r<round>:a<agent>
    "excluded",  # per round (JSON list of lists): the agents that made no call or were left out
    "decision_excluded",  # agents whose output the decision did not count
    "graphs",  # an image: one small graph per round and one for the decision (tomacs.view.images)
)


class Tracker(Protocol):
    """What a job reports to while it runs (`Components.tracker`): training-log records, then the
    results and the episodes file."""

    def log(self, record: Mapping[str, object], step: int | None = None) -> None: ...

    def finish(self, results: Mapping[str, object] | None, episodes_path: Path, failed: bool) -> None: ...


class NullTracker:
    """logger=none: the local files (train_log.jsonl, results.json) are the record."""

    def log(self, record: Mapping[str, object], step: int | None = None) -> None:
        return None

    def finish(self, results: Mapping[str, object] | None, episodes_path: Path, failed: bool) -> None:
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
        self.graph_queries = int(cfg.get("graph_queries", 5))  # episodes logged (graphs, episodes tables)
        self.episode_seed = int(cfg.get("episode_seed", 0))  # which ones: as `tomacs view --seed`
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

    def log(self, record: Mapping[str, object], step: int | None = None) -> None:
        """Per-iteration curves: train Acc/ADAcc, loss, tokens; validation after each epoch."""
        vals = {k: v for k, v in record.items() if isinstance(v, (int, float)) and v is not None}
        self.run.log(vals, step=step)

    def finish(self, results: Mapping[str, object] | None, episodes_path: Path, failed: bool) -> None:
        try:
            if results is not None:
                metrics = results.get("metrics", {})
                for k, v in (metrics if isinstance(metrics, Mapping) else {}).items():
                    if isinstance(v, (int, float)):
                        self.run.summary[k] = v
                self.run.summary["backbone"] = results.get("backbone")
                self._log_episodes(episodes_path.parent)
        finally:
            self.run.finish(exit_code=1 if failed else 0)

    def _log_episodes(self, run_dir: Path) -> None:
        """The `graph_queries` episodes `tomacs view` would show (chosen by question with
        `episode_seed`, so every job of a sweep logs the same questions): a table `graphs` of the
        method's raw per-round graphs and a table `episodes` of the view's records, one row per
        episode with its flags and an image of its per-round graphs (tomacs.view.images)."""
        from tomacs.view.sources import episode_records, sampled_raw

        picked, _total = sampled_raw(run_dir, self.graph_queries, self.episode_seed)
        rows = []
        for _i, ep in picked:
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
        if not picked:
            return
        try:
            records = episode_records(run_dir, run_dir.name, picked)
            data = [self._episode_row(r) for r in records]
        except Exception as exc:  # a picture must never fail a finished job: its results are written
            log.warning("W&B episodes table not logged: %s: %s", type(exc).__name__, exc)
            return
        self.run.log({"episodes": self.wandb.Table(columns=list(EPISODE_COLUMNS), data=data)})

    def _episode_row(self, rec: dict[str, Any]) -> list[Any]:
        from PIL import Image

        from tomacs.view.images import episode_png

        fl, fin = rec["flags"], rec["final"]
        excluded = [[n["agent"] for n in r["nodes"] if n["excluded"]] for r in rec["rounds"]]
        image = Image.open(io.BytesIO(episode_png(rec)))
        return [
            rec["question_id"],
            rec["gold"],
            ", ".join(rec["targets"]),
            fin["answer"],
            fin["mark"],
            fl["wrong"],
            fl["adversary_win"],
            bool(fl["flips"]),
            ", ".join(f"r{t}:a{i}" for t, i in fl["flips"]),
            json.dumps(excluded),
            json.dumps(fin.get("excluded", [])),
            self.wandb.Image(image, caption=f"{rec['question_id']}: final {fin['answer']} ({fin['mark']})"),
        ]


def make_tracker(
    logger_cfg: dict[str, Any], resolved: dict[str, Any], out_dir: Path, job: dict[str, str]
) -> Tracker:
    name = str(logger_cfg.get("name", "none"))
    if name == "none":
        return NullTracker()
    if name == "wandb":
        return WandbTracker(logger_cfg, resolved, out_dir, job)
    raise ValueError(f"unknown logger '{name}'; valid: none, wandb")


def read_offline_run(run_dir: Path) -> dict[str, object]:
    """Decode an offline W&B run (its run-*.wandb file: LevelDB-log framing of protobuf records)
    into {name, group, config, history, summary, artifacts}. Lets tests and users check what a run
    holds without syncing it. A logged table is an artifact (W&B stages its files, images included,
    outside the run directory until `wandb sync`): `artifacts` lists each one's type, name and files
    as {path in the artifact: local staged file}."""
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
    out: dict[str, Any] = {
        "name": None,
        "group": None,
        "config": {},
        "history": [],
        "summary": {},
        "artifacts": [],
    }
    for raw in chunks:
        rec = pb.Record()  # type: ignore[attr-defined]  # protobuf builds its message classes at import
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
        elif kind == "artifact":
            staged = {e.path: e.local_path for e in rec.artifact.manifest.contents}
            out["artifacts"].append({"type": rec.artifact.type, "name": rec.artifact.name, "files": staged})
    return out
