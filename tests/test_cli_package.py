"""The CLI as a package (issue 41): `tomacs sim check|fit|fit-episodes|diagnose` take only their mode's
options; the old spellings (`tomacs calibrate [--check|--diagnose|--from-episodes]`, `tomacs diagnose`)
print a one-line notice and run the same code; every module of tomacs/cli/ stays small."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tomacs.cli import app

CLI_DIR = Path(__file__).resolve().parents[1] / "tomacs" / "cli"
WIDE = {"COLUMNS": "200"}

MODE_OPTIONS = {
    "check": {"--profile", "--trials", "--seed"},
    "fit": {"--profile", "--trials", "--seed", "--write", "--jobs"},
    "fit-episodes": {
        "--mechanisms",
        "--shrink",
        "--lapse",
        "--name",
        "--split",
        "--split-seed",
        "--fold",
        "--model",
        "--honest-model",
        "--predict",
        "--draws",
        "--seed",
        "--by-benchmark",
        "--no-by-benchmark",
        "--by-sender",
        "--no-by-sender",
        "--json",
        "--out",
    },
    "diagnose": {
        "--benchmark",
        "--method",
        "--attack",
        "--size",
        "--seed",
        "--ablate",
        "--no-ablate",
        "--json",
        "--out",
    },
}
OLD_MODE_FLAGS = {"--check", "--diagnose", "--from-episodes"}


def _options(text: str) -> set[str]:
    return set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", text))


@pytest.mark.parametrize("mode", sorted(MODE_OPTIONS))
def test_sim_mode_help_has_only_its_own_options(mode: str) -> None:
    res = CliRunner().invoke(app, ["sim", mode, "--help"], env=WIDE)
    assert res.exit_code == 0, res.output
    found = _options(res.output) - {"--help"}
    assert MODE_OPTIONS[mode] <= found, MODE_OPTIONS[mode] - found
    others = set().union(*MODE_OPTIONS.values()) - MODE_OPTIONS[mode]
    assert not found & others, found & others
    assert not found & OLD_MODE_FLAGS and found <= MODE_OPTIONS[mode]
    assert not re.search(r"--(diagnose|from-episodes)( / --from-episodes)?:", res.output)


def test_old_calibrate_help_is_unchanged() -> None:
    res = CliRunner().invoke(app, ["calibrate", "--help"], env=WIDE)
    assert res.exit_code == 0, res.output
    assert OLD_MODE_FLAGS | set().union(*MODE_OPTIONS.values()) <= _options(res.output)
    assert "--diagnose: comma list of benchmarks" in res.output


def _notice(old: str, new: str) -> str:
    return f"notice: '{old}' is now '{new}'; the old spelling will be removed\n"


@pytest.mark.slow  # two full calibration checks: ~6 s on 2 idle cores
def test_calibrate_check_prints_the_notice_and_the_same_report_as_sim_check() -> None:
    args = ["-p", "mmlu", "--trials", "50"]
    old = CliRunner().invoke(app, ["calibrate", "--check", *args], env=WIDE)
    new = CliRunner().invoke(app, ["sim", "check", *args], env=WIDE)
    assert old.exit_code == 0 and new.exit_code == 0, old.output + new.output
    assert old.stderr == _notice("tomacs calibrate --check", "tomacs sim check")
    assert new.stderr == ""
    assert "mmlu" in new.stdout and "table 7: vanilla" in new.stdout
    assert old.stdout == new.stdout


@pytest.mark.parametrize(
    ("old_args", "new_args", "target", "notice"),
    [
        (
            ["calibrate", "-p", "mmlu", "--write", "--jobs", "1", "--trials", "7"],
            ["sim", "fit", "-p", "mmlu", "--write", "--jobs", "1", "--trials", "7"],
            "paper",
            ("tomacs calibrate", "tomacs sim fit"),
        ),
        (
            ["calibrate", "--from-episodes", "a", "--from-episodes", "b", "--name", "n", "--split", "0.5"],
            ["sim", "fit-episodes", "a", "b", "--name", "n", "--split", "0.5"],
            "from_episodes",
            ("tomacs calibrate --from-episodes", "tomacs sim fit-episodes"),
        ),
        (
            ["calibrate", "--diagnose", "-b", "synthetic", "--size", "3", "--no-ablate", "rounds=3"],
            ["sim", "diagnose", "-b", "synthetic", "--size", "3", "--no-ablate", "rounds=3"],
            "diagnose_debates",
            ("tomacs calibrate --diagnose", "tomacs sim diagnose"),
        ),
    ],
)
def test_both_spellings_run_the_same_function(
    monkeypatch: pytest.MonkeyPatch, old_args: list[str], new_args: list[str], target: str, notice: tuple
) -> None:
    import tomacs.cli.sim as sim

    calls: list[tuple] = []

    def record(*args: object, **kwargs: object) -> None:
        # the first argument of the mode functions that take one names the spelling in messages
        calls.append((args[1:] if target != "paper" else args, kwargs))

    monkeypatch.setattr(sim, target, record)
    old = CliRunner().invoke(app, old_args)
    new = CliRunner().invoke(app, new_args)
    assert old.exit_code == 0 and new.exit_code == 0, old.output + new.output
    assert old.stderr == _notice(*notice) and new.stderr == ""
    assert len(calls) == 2 and calls[0] == calls[1], calls


def test_errors_name_the_spelling_used(tmp_path: Path) -> None:
    old = CliRunner().invoke(app, ["calibrate", "--from-episodes", str(tmp_path)])
    new = CliRunner().invoke(app, ["sim", "fit-episodes", str(tmp_path)])
    assert old.exit_code == new.exit_code == 2
    assert old.stderr.splitlines()[1].startswith("error: --from-episodes needs --name NAME")
    assert new.stderr.splitlines() == [
        "error: `tomacs sim fit-episodes` needs --name NAME "
        "(the profile's name, used as backbone.profile=NAME)"
    ]
    new = CliRunner().invoke(app, ["sim", "diagnose", "hydra.run.dir=x"])
    assert new.exit_code == 2 and "do not apply to `tomacs sim diagnose`" in new.stderr


def test_old_diagnose_is_analyze_credits_with_a_notice(tmp_path: Path) -> None:
    args = [str(tmp_path / "run"), "--size", "0"]
    old = CliRunner().invoke(app, ["diagnose", *args])
    new = CliRunner().invoke(app, ["analyze", "credits", *args])
    assert old.exit_code == new.exit_code == 2
    assert new.stderr == "error: --size must be >= 1\n"
    assert old.stderr == _notice("tomacs diagnose", "tomacs analyze credits") + new.stderr
    old_help = CliRunner().invoke(app, ["diagnose", "--help"], env=WIDE).output
    new_help = CliRunner().invoke(app, ["analyze", "credits", "--help"], env=WIDE).output
    assert "Why a trained credit policy" in new_help

    def body(text: str) -> list[str]:  # all but the usage line, which names the command
        return [line.rstrip() for line in text.splitlines() if "Usage:" not in line]

    assert body(old_help) == body(new_help)


def test_every_cli_module_is_small() -> None:
    modules = sorted(CLI_DIR.glob("*.py"))
    assert len(modules) >= 8, modules  # one module per command group, not one file
    sizes = {p.name: len(p.read_text().splitlines()) for p in modules}
    assert all(n < 400 for n in sizes.values()), sizes
    assert not (CLI_DIR.parent / "cli.py").exists()
