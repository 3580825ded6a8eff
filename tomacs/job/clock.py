"""A job's wall time over all the processes that ran it.

A job killed, interrupted or stopped by an error and run again in the same directory goes on where it
stopped; its results.json must then say how long the job took, not only its last process. Each process
keeps its seconds in the run directory's wall.json, rewritten as the job makes progress (at most every
few seconds: after a finished batch or training iteration) and when the process ends however it ends,
so a killed process loses only the seconds since its last write. A process that ran before wall.json
existed (older run directories) is not counted.
"""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path
from typing import Any

WALL = "wall.json"


def earlier_processes(out_dir: Path) -> list[dict[str, Any]]:
    """The processes of the job in out_dir that wall.json records (none: no file, or an unreadable one)."""
    try:
        data = json.loads((Path(out_dir) / WALL).read_text())
    except (OSError, json.JSONDecodeError):
        return []
    procs = data.get("processes") if isinstance(data, dict) else None
    return [p for p in procs or [] if isinstance(p, dict) and isinstance(p.get("wall_s"), (int, float))]


class JobClock:
    """This process's share of the job's wall time, counted from `t0` (time.perf_counter), beside the
    seconds of the processes before it."""

    def __init__(self, out_dir: Path, t0: float | None = None, every_s: float = 5.0) -> None:
        self.path = Path(out_dir) / WALL
        self.t0 = time.perf_counter() if t0 is None else t0
        self.every_s = every_s
        self.earlier = earlier_processes(Path(out_dir))
        self.before = sum(float(p["wall_s"]) for p in self.earlier)
        self.entry: dict[str, Any] = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
            "wall_s": 0.0,
        }
        self._written = -float("inf")

    def this_process(self) -> float:
        return round(time.perf_counter() - self.t0, 3)

    def total(self, own: float | None = None) -> float:
        """Seconds of every process of the job, this one so far included; pass `own` (a reading of
        `this_process`) so the two figures a result prints come from one clock reading, not two that a
        millisecond tick can split."""
        return round(self.before + (self.this_process() if own is None else own), 3)

    def tick(self, force: bool = False) -> None:
        """Record this process's seconds so far (every `every_s` at most, unless forced)."""
        now = time.perf_counter()
        if not force and now - self._written < self.every_s:
            return
        self._written = now
        self.entry["wall_s"] = self.this_process()
        tmp = self.path.with_suffix(".json.tmp")
        try:
            tmp.write_text(json.dumps({"processes": [*self.earlier, self.entry]}, indent=1) + "\n")
            tmp.replace(self.path)
        except OSError:
            pass  # a full or read-only disk: the job's own files report that; the clock only loses time
