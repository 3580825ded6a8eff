"""Issue 15 item 11: what a new user reads before running anything: `tomacs tables` and `tomacs list`
answer at once and completely, `calibrate --check` says which cells are Table 7 and which Table 8, and
outputs/README.md (in every clone) documents every key a job writes into results.json."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tomacs.config import compose
from tomacs.launch.run import run_job

REPO = Path(__file__).resolve().parents[1]
README = REPO / "outputs" / "README.md"


def _documented() -> set[str]:
    return set(re.findall(r"`([A-Za-z_][\w.]*)`", README.read_text(encoding="utf-8")))


def _keys(results: dict[str, Any]) -> set[str]:
    """Top-level keys and the keys of the nested blocks the README documents one by one."""
    keys = {k for k in results if k != "skipped"}
    for block in ("metrics", "train", "backbone_stats", "credibility"):
        keys |= set(results.get(block) or {})
    return {re.sub(r"agent\d+$", "agentN", k) for k in keys}


@pytest.mark.parametrize(
    "overrides",
    [
        ["method=complete", "attack=gt50", "eval.size=3"],
        [
            "method=todycomm",
            "embedder=hashing",
            "train.size=8",
            "train.val_size=4",
            "train.epochs=1",
            "eval.size=3",
        ],
        ["method=complete", "decision=crs", "attack=crs3of5", "agents=5", "train.size=4", "eval.size=3"],
        [
            "method=gsafeguard",
            "embedder=hashing",
            "attack=gt50",
            "train.size=4",
            "train.val_size=2",
            "eval.size=3",
            "method.samples=1",
            "method.densities=[0.5]",
            "method.counts=[1,2]",
            "method.epochs=1",
            "method.hidden_size=16",
            "method.val_fraction=0.5",
        ],
    ],
    ids=["static", "learned", "credibility", "supervised"],
)
def test_every_results_key_is_documented(tmp_path: Path, overrides: list[str]) -> None:
    res = run_job(compose(overrides), "train", tmp_path)
    missing = sorted(_keys(res) - _documented())
    assert not missing, f"results.json keys not documented in outputs/README.md: {missing}"


def test_outputs_readme_is_tracked_and_the_rest_ignored() -> None:
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    check = subprocess.run(
        ["git", "check-ignore", "-q", "outputs/README.md"], cwd=REPO, capture_output=True, check=False
    )
    assert check.returncode == 1  # not ignored
    check = subprocess.run(
        ["git", "check-ignore", "-q", "outputs/runs/x/results.json"],
        cwd=REPO,
        capture_output=True,
        check=False,
    )
    assert check.returncode == 0  # ignored


def test_tables_lists_without_composing_configs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Listing reads conf/table/*.yaml; composing every table took 33-41 s."""
    import tomacs.launch.table_sweeps as pt
    from tomacs.cli import app

    def no_compose(*a: object, **k: object) -> None:
        raise AssertionError("tomacs tables composed a config just to list the tables")

    monkeypatch.setattr(pt, "validate_table", no_compose)
    res = CliRunner().invoke(app, ["tables"])
    assert res.exit_code == 0, res.output
    rows = [line.split("│")[1:3] for line in res.output.splitlines() if line.startswith("│ ")]
    counts = {name.strip(): n.strip() for name, n in rows if name.strip()}
    assert counts["table2"] == "225" and counts["table7"] == "60" and counts["smoke"] == "4"
    names = [n for n in counts if n.startswith("table")]
    assert names == sorted(names, key=lambda n: int(n[5:]))  # table2 ... table9, table10


def test_list_shows_table_and_decision() -> None:
    from tomacs.cli import app

    res = CliRunner().invoke(app, ["list"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    lines = {line.split("│")[1].strip(): line for line in res.output.splitlines() if line.startswith("│ ")}
    assert "table7" in lines["table"] and "table8" in lines["table"]
    assert all(d in lines["decision"] for d in ("auto", "vote", "llm", "crs"))
    # TodyComm's option file chooses the paper's budget for itself (conf/method/todycomm.yaml)
    assert "paper (default of todycomm)" in lines["train"], lines["train"]


def test_method_budgets_read_the_option_files(tmp_path: Path) -> None:
    from tomacs.config import method_budgets

    assert method_budgets() == {"todycomm": "paper"}
    (tmp_path / "method").mkdir()
    (tmp_path / "method" / "a.yaml").write_text("defaults:\n  - override /train@_global_.train: short\n")
    (tmp_path / "method" / "b.yaml").write_text("defaults:\n  - _self_\nname: b\n")
    assert method_budgets(tmp_path) == {"a": "short"}


def test_calibrate_check_says_which_cells_are_table_7_and_8() -> None:
    from tomacs.sim.calibrate import format_report, stored_rows

    text = format_report(stored_rows(trials=50, episodes=50, table2=False))
    assert "table 7: vanilla" in text and "table 8: advK" in text
    rows = [line.split("|")[1:4] for line in text.splitlines() if re.match(r"\| [78] \|", line)]
    assert {c.strip() for t, _, c in rows if t.strip() == "7"} == {"vanilla", "attacked"}
    assert {c.strip() for t, _, c in rows if t.strip() == "8"} == {"adv0", "adv2", "adv3", "adv4"}
