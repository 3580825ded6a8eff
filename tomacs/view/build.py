"""`build_view`: a run, a sweep or transcripts as one HTML page.

Why a sample and not every episode: a sweep of 45 jobs x 153 questions holds about 7,000 debates
of 24 replies each, far more text than a page that opens fast can carry. The page states what it
shows ("showing N of M episodes") and which seed chose them, so nothing is hidden silently.
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Any

from tomacs.view.page import render
from tomacs.view.sampling import per_group
from tomacs.view.sources import is_runs, run_dirs, run_groups, transcript_groups

DEFAULT_MAX_EPISODES = 50  # per run (or transcript source)
DEFAULT_MAX_TOTAL = 400  # per page: a sweep of 45 runs shows 8 per run (about 12 MB)
PAGE = "view.html"


def layouts(groups: list[dict[str, Any]]) -> dict[str, list[list[float]]]:
    """Node positions per agent count (networkx's circular layout, agent 0 first), shared by every
    round graph of that size so an agent keeps its place from round to round and run to run."""
    sizes = {int(e["n_agents"]) for g in groups for e in g["episodes"]}
    return {str(n): positions(n) for n in sorted(sizes)}


def positions(n: int) -> list[list[float]]:
    """Where agent i of an n-agent debate is drawn: networkx's circular layout, agent 0 first (the
    page and the W&B images, tomacs.view.images, place agents alike)."""
    import networkx as nx  # lazy: only drawing needs it

    pos = nx.circular_layout(nx.empty_graph(n))
    return [[round(float(pos[i][0]), 4), round(float(pos[i][1]), 4)] for i in range(n)]


def sampling_text(kind: str, shown: int, total: int, per_group: int, seed: int) -> str:
    """The page's statement of what it shows, e.g. "showing 8 of 153 episodes: ..."."""
    what = "debates" if kind == "transcripts" else "episodes"
    if shown == total:
        return f"showing {shown} of {total} {what}: all"
    if kind == "transcripts":
        return f"showing {shown} of {total} {what}: at most {per_group} per source, chosen by seed {seed}"
    return (
        f"showing {shown} of {total} {what}: at most {per_group} per run, chosen by seed {seed} per "
        "question (every run shows the same questions)"
    )


def view_data(
    path: Path,
    *,
    max_episodes: int = DEFAULT_MAX_EPISODES,
    max_total: int | None = DEFAULT_MAX_TOTAL,
    seed: int = 0,
) -> dict[str, object]:
    """The page's JSON blob for `path` (see build_view)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist")
    if is_runs(path):
        n = per_group(len(run_dirs(path)), max_episodes, max_total)
        groups, warnings = run_groups(path, n, seed)
        kind = "run" if len(groups) == 1 and groups[0]["path"] == "." else "sweep"
    else:
        groups, n = transcript_groups(path, max_episodes, max_total, seed)
        warnings, kind = [], "transcripts"
    shown = sum(len(g["episodes"]) for g in groups)
    total = sum(int(g["episodes_total"]) for g in groups)
    return {
        "schema": "tomacs.view/1",
        "title": f"tomacs view: {path.resolve().name}",
        "path": str(path),
        "kind": kind,
        "generated": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "sampling": {
            "seed": seed,
            "per_group": n,
            "max_total": max_total,
            "shown": shown,
            "total": total,
            "text": sampling_text(kind, shown, total, n, seed),
        },
        "warnings": warnings,
        "groups": groups,
        "layouts": layouts(groups),
    }


def default_out(path: Path) -> Path:
    """Where a page goes without `out`: inside a run or sweep it views, but never into a transcript
    source (shared data is read-only and must not collect derived files): `outputs/views/`."""
    from tomacs.view.sources import is_runs

    if is_runs(path):
        return path / PAGE
    return Path("outputs") / "views" / f"{path.stem or path.name}.{PAGE}"


def build_view(
    path: Path,
    out: Path | None = None,
    *,
    max_episodes: int = DEFAULT_MAX_EPISODES,
    max_total: int | None = DEFAULT_MAX_TOTAL,
    seed: int = 0,
) -> Path:
    """Write one self-contained HTML page for `path` and return where it went.

    `path`: a run directory, a sweep or outputs tree (every run below it), or anything the
    transcript registry reads (tomacs.transcripts.load_debates). `out`: the file to write (default
    `default_out`). At most `max_episodes`
    episodes per run (or transcript source) are embedded, fewer where the page would otherwise
    hold more than `max_total` (None: no page cap); which ones is decided by `seed`, per question,
    so every run shows the same questions."""
    path = Path(path)
    data = view_data(path, max_episodes=max_episodes, max_total=max_total, seed=seed)
    if out is None:
        out = default_out(path)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render(data), encoding="utf-8")
    return out
