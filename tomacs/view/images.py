"""An episode's small per-round graphs as one static image, for places that cannot run the page's
script: W&B tables (tomacs.launch.tracking).

Why a second drawing of the same graphs: W&B shows images and tables, not the page. It draws the
page's records (tomacs.view.debates.episode_record), with the page's colours, marks and agent
places (tomacs.view.build.positions), so both say the same; matplotlib draws it (no pyplot: no
global state inside a running job).
"""

from __future__ import annotations

import io
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from tomacs.view.build import positions

# as the page (tomacs/view/assets/view.js: ROLE_COLOUR, MARK_SYMBOL)
ROLE_COLOUR = {"honest": "#2b83ba", "dormant": "#fdae61", "adversary": "#d7191c"}
MARK_MARKER = {"right": "o", "wrong": "s", "target": "D", "unparsed": "X", "absent": "o"}
SAME_ROUND, EARLIER_ROUND = "#333333", "#8fbbd9"  # a spatial message; an earlier round's output
PANEL_IN = 1.8  # inches per panel


def _ans(a: Any) -> str:
    return "?" if a is None else str(a)


def _nodes(ax: Any, nodes: list[dict[str, Any]], pos: list[list[float]]) -> None:
    credits = [n["credit"] for n in nodes if "credit" in n]
    lo, hi = (min(credits), max(credits)) if credits else (0.0, 0.0)
    for n in nodes:
        x, y = pos[n["agent"]]
        size = 95.0 if "credit" not in n or hi == lo else 45.0 + 120.0 * (n["credit"] - lo) / (hi - lo)
        colour = ROLE_COLOUR.get(n["role"], "grey")
        open_ = n["mark"] == "absent"
        ax.scatter(
            [x],
            [y],
            s=size,
            marker=MARK_MARKER.get(n["mark"], "o"),
            facecolors="none" if open_ else colour,
            edgecolors=colour if open_ else "white",
            linewidths=1.2 if open_ else 0.6,
            alpha=0.35 if n.get("excluded") else 1.0,
            zorder=3,
        )
        ax.annotate(
            f"{n['agent']}:{_ans(n.get('answer'))}",
            (x, y),
            xytext=(0, 6.5),
            textcoords="offset points",
            ha="center",
            fontsize=6,
        )


def _arrow(ax: Any, src: list[float], dst: list[float], colour: str) -> None:
    ax.annotate(
        "",
        xy=dst,
        xytext=src,
        arrowprops={"arrowstyle": "-|>", "color": colour, "lw": 0.7, "shrinkA": 6, "shrinkB": 6},
        zorder=2,
    )


def _panel(ax: Any, title: str) -> None:
    ax.set_title(title, fontsize=7)
    ax.set_xlim(-1.45, 1.45)
    ax.set_ylim(-1.45, 1.45)
    ax.set_aspect("equal")
    ax.axis("off")


def episode_figure(rec: dict[str, Any]) -> Figure:
    """One panel per round (nodes coloured by role, shaped by answer mark, faded where excluded,
    sized by credit; edges sender -> reader) and one for the decision (voters -> the final answer)."""
    pos = positions(int(rec["n_agents"]))
    rounds = rec["rounds"]
    fig = Figure(figsize=(PANEL_IN * (len(rounds) + 1), PANEL_IN + 0.25))
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(rounds) + 1, squeeze=False)[0]
    for ax, r in zip(axes, rounds, strict=False):
        for e in r["edges"]:
            _arrow(ax, pos[e["src"]], pos[e["dst"]], SAME_ROUND if e["same"] else EARLIER_ROUND)
        _nodes(ax, r["nodes"], pos)
        k = len(r["edges"])
        _panel(ax, f"round {r['round']} · {k} edge{'s' * (k != 1)}")
    fin, ax = rec["final"], axes[-1]
    last = rounds[-1]["nodes"] if rounds else []
    voters = fin.get("voters")
    if voters is None:
        voters = [n["agent"] for n in last if n["mark"] != "absent"]
    credits = fin.get("credits")
    nodes = []
    for n in last:
        node = {**n, "excluded": n["agent"] not in voters}
        node.pop("credit", None)
        if credits is not None and n["agent"] < len(credits):
            node["credit"] = credits[n["agent"]]
        nodes.append(node)
    for v in voters:
        _arrow(ax, pos[v], [0.0, 0.0], "#555555")
    _nodes(ax, nodes, pos)
    ax.scatter([0], [0], s=260, marker=MARK_MARKER.get(fin["mark"], "o"), color="#444444", zorder=3)
    ax.text(0, 0, _ans(fin.get("answer")), color="white", ha="center", va="center", fontsize=7, zorder=4)
    _panel(ax, f"decision: {_ans(fin.get('answer'))} ({fin['mark']})")
    fig.subplots_adjust(left=0.01, right=0.99, bottom=0.01, top=0.86, wspace=0.05)
    return fig


def episode_png(rec: dict[str, Any], dpi: int = 100) -> bytes:
    """`episode_figure` as PNG bytes (about 20 kB for 4 rounds of 6 agents)."""
    buf = io.BytesIO()
    episode_figure(rec).savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()
