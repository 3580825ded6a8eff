"""The generated reference (issue 41: docs/reference/config.md and cli.md) matches the code: regenerated in
memory it equals the committed files, every group option has its section, and a key's default, valid values
and comment come through as the schema writes them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tomacs.cli import app
from tomacs.cli.docs import REGENERATE, reference_files
from tomacs.report.comments import field_comments, yaml_comments
from tomacs.report.reference import NOT_GROUPS, render_config_reference

REPO = Path(__file__).resolve().parents[1]
REFERENCE = REPO / "docs" / "reference"
CONF = REPO / "conf"


@pytest.fixture(scope="module")
def generated() -> dict[str, str]:
    return reference_files()


@pytest.mark.parametrize("name", ["config.md", "cli.md"])
def test_committed_reference_is_current(generated: dict[str, str], name: str) -> None:
    path = REFERENCE / name
    assert path.is_file(), f"docs/reference/{name} is missing; generate it with `{REGENERATE}` (make docs)"
    assert path.read_text(encoding="utf-8") == generated[name], (
        f"docs/reference/{name} is stale; regenerate it with `{REGENERATE}` (make docs)"
    )


def test_every_group_option_has_a_section(generated: dict[str, str]) -> None:
    text = generated["config.md"]
    groups = sorted(p for p in CONF.iterdir() if p.is_dir() and p.name not in NOT_GROUPS)
    assert {g.name for g in groups} >= {
        "method",
        "attack",
        "backbone",
        "benchmark",
        "budget",
        "train",
        "table",
    }
    missing = [
        f"{g.name}={o.stem}"
        for g in groups
        for o in sorted(g.glob("*.yaml"))
        if f"### `{g.name}={o.stem}`" not in text
    ]
    assert not missing, f"no section for {missing}"
    for key in (
        "agents",
        "rounds",
        "seed",
        "mode",
        "decision",
        "embedder",
        "embed.cache",
        "crs.eta",
        "eval.seed",
    ):
        assert f"| `{key}` |" in text, key


def _row(text: str, key: str) -> list[str]:
    """The cells of the first table row of `key`."""
    line = next(line for line in text.splitlines() if line.startswith(f"| `{key}` |"))
    return [c.strip() for c in line.strip("|").split(" | ")]


def test_a_key_shows_its_default_choices_and_comment(generated: dict[str, str]) -> None:
    text = generated["config.md"].split("### `method=todycomm`", 1)[1]
    key, kind, default, valid, meaning = _row(text, "method.tie_tol")
    assert (kind, default, valid) == ("float", "`0.0`", ">= 0")
    assert meaning.startswith("inference a_i = 1 iff c_i > mean(c) - tie_tol; 0 = the paper's rule")
    _, _, default, valid, meaning = _row(text, "method.baseline")
    assert default == "`batch_mean`"
    assert valid == "one of `none`, `batch_mean`, `moving_avg`, `per_question`"
    assert "Eq. 7 reward baseline" in meaning and "\\|" in meaning  # a `|` in a comment is escaped
    _, _, default, valid, _ = _row(text, "method.gamma")
    assert (default, valid) == ("`null`", "in (0, 1]")


def test_an_option_value_over_its_schema_default_shows_both(generated: dict[str, str]) -> None:
    text = generated["config.md"].split("### `backbone=llamacpp`", 1)[1]
    _, kind, default, _, meaning = _row(text, "backbone.max_concurrency")
    assert (kind, default) == ("int", "`4` (schema: `16`)")
    assert (
        meaning
        == "requests in flight to this endpoint *This option:* llama.cpp's server runs few slots in parallel"
    )
    # a default read from the environment is shown as written, not as this machine resolves it
    text = generated["config.md"].split("### `benchmark=mmlu`", 1)[1]
    assert _row(text, "benchmark.path")[2] == "`${oc.env:TOMACS_DATA,null}`"


def test_a_new_option_file_gets_its_section(tmp_path: Path) -> None:
    conf = tmp_path / "conf"
    shutil.copytree(CONF, conf)
    (conf / "budget" / "b3.yaml").write_text(
        "# Three messages each way.\nname: b3\nin_degree: 3  # messages in\nout_degree: 3\n"
    )
    text = render_config_reference(conf)
    section = text.split("### `budget=b3`", 1)[1].split("###", 1)[0]
    assert "Three messages each way." in section
    assert _row(section, "budget.in_degree") == ["`budget.in_degree`", "number", "`3`", "", "messages in"]
    assert "`b3`" in text.split("## Config groups", 1)[1].split("## Top-level keys", 1)[0]


def test_comments_above_inside_and_after_a_field_are_read() -> None:
    from tomacs.benchmarks.base import BenchmarkSettings
    from tomacs.methods.todycomm import TodyCommSettings

    todycomm = field_comments(TodyCommSettings)
    assert todycomm["gamma"].startswith("Eq. 7 discount")  # the line above
    assert todycomm["norm_clip"].startswith("running only")  # after a field written over three lines
    assert "name" not in todycomm
    assert field_comments(BenchmarkSettings)["profile"].startswith("simulator profile")  # inside the value
    header, keys = yaml_comments(
        "# head\n#   a command\nx: 1      # one\n          # continued\n# above y\ny:\n  z: 2  # zed\n"
    )
    assert header == ["head", "  a command"]
    assert keys == {"x": "one continued", "y": "above y", "y.z": "zed"}


def test_cli_reference_has_every_command_and_marks_old_spellings(generated: dict[str, str]) -> None:
    text = generated["cli.md"]
    for path in ("train", "evaluate", "sim fit-episodes", "analyze credits", "docs reference", "show-config"):
        assert f"`tomacs {path}`" in text, path
    calibrate = text.split("## `tomacs calibrate`", 1)[1].split("\n## ", 1)[0]
    assert "**Old spelling**" in calibrate and "--from-episodes" in calibrate
    assert "**Old spelling**" in text.split("## `tomacs diagnose`", 1)[1].split("\n## ", 1)[0]
    assert "**Old spelling**" not in text.split("## `tomacs train`", 1)[1].split("\n## ", 1)[0]
    assert str(REPO) not in text and str(REPO) not in generated["config.md"]


def test_docs_reference_check_and_write(tmp_path: Path, generated: dict[str, str]) -> None:
    res = CliRunner().invoke(app, ["docs", "reference", "--check", "--out", str(tmp_path)])
    assert res.exit_code == 1 and "regenerate with `tomacs docs reference`" in res.stderr, res.output
    assert not list(tmp_path.iterdir())
    res = CliRunner().invoke(app, ["docs", "reference", "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert {p.name: p.read_text() for p in tmp_path.iterdir()} == generated
    res = CliRunner().invoke(app, ["docs", "reference", "--check", "--out", str(tmp_path)])
    assert res.exit_code == 0 and "up to date" in res.stdout, res.output
