"""MiniLM's speed on this machine as finished jobs measured it: what `tomacs plan` times embedding by.

A short encode timed by the plan itself swung 3.5x with the machine's load; the jobs that ran here
measured the rate over every text they encoded. Each job that encoded texts with MiniLM adds its
count and seconds (results.json -> embedding: `encoded`, `encode_s`) to a small JSON file beside
the embedding cache (`embed.cache`: outputs/cache/minilm_rate.json by default), keeping the latest
jobs; the plan pools those of this host, device kind, precision and backend. No embedding cache
(embed.cache=null): nothing is stored, and the plan times a sample of its own.
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tomacs.runspec.spec import RunSpec

if TYPE_CHECKING:
    from tomacs.embedding.embedders import EmbedderInfo

RATE_FILE = "minilm_rate.json"
KEEP = 20  # the latest jobs kept in the file
POOL = 10  # the latest matching jobs the rate pools
MIN_TEXTS = 32  # a job that encoded fewer says little about the rate (first-call overheads)


def rate_path(spec: RunSpec) -> Path | None:
    """The rate file of the job's embedding cache; None when the cache is off."""
    cache = spec.embed.cache
    if cache is None or str(cache).strip().lower() in ("", "null", "none", "false", "off"):
        return None
    return Path(str(cache)).expanduser().parent / RATE_FILE


def _device_kind(device: str) -> str:
    return "cuda" if str(device).startswith("cuda") else str(device)


def _read(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return []
    jobs = data.get("jobs") if isinstance(data, dict) else None
    return [j for j in jobs or [] if isinstance(j, dict)]


def record_embed_rate(spec: RunSpec, embedded: Sequence[EmbedderInfo]) -> None:
    """Add a finished job's MiniLM encoding (results.json -> embedding) to the rate file. Never fails the
    job: a file it cannot write only leaves the plan to time a sample."""
    path = rate_path(spec)
    encoded = sum(int(e.get("encoded") or 0) for e in embedded)
    seconds = sum(float(e.get("encode_s") or 0.0) for e in embedded)
    if path is None or encoded < MIN_TEXTS or seconds <= 0:
        return
    first = embedded[0]
    rec = {
        "finished": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "host": socket.gethostname(),
        "device": _device_kind(str(first.get("device", "cpu"))),
        "precision": first.get("precision"),
        "backend": first.get("backend"),
        "encoded": encoded,
        "encode_s": round(seconds, 3),
    }
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        jobs = [*_read(path), rec][-KEEP:]
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")  # parallel jobs: the last to finish wins
        tmp.write_text(json.dumps({"jobs": jobs}, indent=1) + "\n")
        tmp.replace(path)
    except OSError:
        pass


def measured_rate(
    spec: RunSpec, device: str, precision: str | None = None, backend: str | None = None
) -> tuple[float, int, Path] | None:
    """(texts per second, jobs it pools, the file) for MiniLM on this host and device kind (and
    precision and backend when given), from the latest jobs that recorded it; None when none has."""
    path = rate_path(spec)
    if path is None:
        return None
    host, kind = socket.gethostname(), _device_kind(device)
    jobs = [
        j
        for j in _read(path)
        if j.get("host") == host
        and j.get("device") == kind
        and (precision is None or j.get("precision") == precision)
        and (backend is None or j.get("backend") == backend)
        and float(j.get("encode_s") or 0) > 0
    ][-POOL:]
    if not jobs:
        return None
    texts = sum(int(j["encoded"]) for j in jobs)
    seconds = sum(float(j["encode_s"]) for j in jobs)
    return texts / seconds, len(jobs), path
