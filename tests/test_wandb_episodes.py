"""W&B logs the episodes `tomacs view` shows (issue 42 item 6): a table of the sampled episodes with
their flags and exclusions and an image of their per-round graphs, built from the view's records.
Offline: the run is read back with `read_offline_run`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from matplotlib.colors import to_hex
from test_view import _debate

from tomacs.launch.tracking import EPISODE_COLUMNS, read_offline_run
from tomacs.testing.browser import TINY_SIM_RUN as TINY
from tomacs.view import view_data
from tomacs.view.debates import episode_record
from tomacs.view.images import ROLE_COLOUR, episode_figure, episode_png


@pytest.fixture(scope="module")
def wandb_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny sim TodyComm job trained with logger=wandb (offline, staging kept in the tmp dir)."""
    from tomacs.config import compose
    from tomacs.launch.run import run_job

    root = tmp_path_factory.mktemp("wandb")
    mp = pytest.MonkeyPatch()
    mp.setenv("WANDB_MODE", "offline")
    mp.setenv("WANDB_DATA_DIR", str(root / "wandb_data"))  # where W&B stages table files until a sync
    try:
        run_job(compose(["method=todycomm", *TINY, "logger=wandb"]), "train", root / "run")
    finally:
        mp.undo()
    return root / "run"


def _table(data: dict, name: str) -> tuple[dict, dict[str, str]]:
    art = next(a for a in data["artifacts"] if a["name"].endswith(f"-{name}"))
    return json.loads(Path(art["files"][f"{name}.table.json"]).read_text()), art["files"]


def test_episodes_table_holds_the_views_sampled_episodes(wandb_run: Path) -> None:
    data = read_offline_run(next(wandb_run.rglob("offline-run-*")))
    hist = {k: v for h in data["history"] for k, v in h.items() if k.startswith("episodes/")}
    assert hist["episodes/_type"] == "table-file"
    assert hist["episodes/ncols"] == len(EPISODE_COLUMNS) and hist["episodes/nrows"] == 5  # graph_queries
    table, files = _table(data, "episodes")
    assert table["columns"] == list(EPISODE_COLUMNS)
    # the same episodes, chosen alike, as the view shows with seed 0
    view = view_data(wandb_run, max_episodes=5, seed=0)["groups"][0]["episodes"]
    assert [r[0] for r in table["data"]] == [e["question_id"] for e in view]
    col = {c: i for i, c in enumerate(EPISODE_COLUMNS)}
    for row, e in zip(table["data"], view, strict=True):
        assert row[col["gold"]] == e["gold"] and row[col["target"]] == ", ".join(e["targets"])
        assert row[col["final"]] == e["final"]["answer"] and row[col["final_mark"]] == e["final"]["mark"]
        assert row[col["wrong"]] is e["flags"]["wrong"]
        assert row[col["adversary_win"]] is e["flags"]["adversary_win"]
        assert row[col["flip_to_target"]] is bool(e["flags"]["flips"])
        excluded = [[n["agent"] for n in r["nodes"] if n["excluded"]] for r in e["rounds"]]
        assert json.loads(row[col["excluded"]]) == excluded
        assert json.loads(row[col["decision_excluded"]]) == e["final"]["excluded"]
        image = row[col["graphs"]]
        assert image["_type"] == "image-file" and Path(files[image["path"]]).stat().st_size > 1000
    # the method's raw graphs are logged for the same questions
    graphs, _ = _table(data, "graphs")
    assert {r[0] for r in graphs["data"]} == {e["question_id"] for e in view}


def test_episode_image_draws_a_panel_per_round_and_the_decision() -> None:
    rec = episode_record(_debate(final_answer="A"))
    fig = episode_figure(rec)
    titles = [ax.get_title() for ax in fig.axes]
    assert titles[:3] == ["round 1 · 0 edges", "round 2 · 3 edges", "round 3 · 1 edge"]
    assert titles[3].startswith("decision: A")
    # round 3: agent 1 an adversary from its onset (red), agent 2 absent (an open marker)
    r3 = fig.axes[2].collections
    assert to_hex(r3[1].get_facecolor()[0]) == ROLE_COLOUR["adversary"]
    assert len(r3[2].get_facecolor()) == 0 and to_hex(r3[2].get_edgecolor()[0]) == ROLE_COLOUR["honest"]
    assert episode_png(rec).startswith(b"\x89PNG")
