"""Issue 15 items 7 and 9 as a user meets them: each bad input is one line on stderr and a
non-zero exit (no traceback), and a checkpoint carries the embedder it was trained with."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.slow

TINY = ["train.size=8", "train.val_size=4", "train.batch_size=8", "train.epochs=1", "eval.size=3"]


def tomacs(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tomacs.cli", *args], capture_output=True, text=True, timeout=600, cwd=cwd
    )


def one_line_error(p: subprocess.CompletedProcess[str]) -> str:
    """The single stderr line of a failed command (asserts there is exactly one, and no traceback)."""
    assert p.returncode != 0, p.stdout
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in p.stderr, p.stderr
    return lines[0]


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A TodyComm and a G-Designer run trained with the hashing embedder (chosen by `embedder=`)."""
    root = tmp_path_factory.mktemp("trained")
    runs = {}
    for method in ("todycomm", "gdesigner"):
        out = root / method
        p = tomacs("train", f"method={method}", "embedder=hashing", *TINY, f"hydra.run.dir={out}")
        assert p.returncode == 0, p.stderr
        runs[method] = out
    return runs


# -- item 7: tracebacks become one line ---------------------------------------------------------


def test_checkpoint_of_another_method(trained: dict[str, Path], tmp_path: Path) -> None:
    ck = trained["gdesigner"] / "best.pt"
    line = one_line_error(
        tomacs("evaluate", "method=todycomm", "eval.size=3", f"checkpoint={ck}", f"hydra.run.dir={tmp_path}")
    )
    assert str(ck) in line and "gdesigner" in line and "add method=gdesigner" in line


def _pre_naming_checkpoint(best: Path, tmp_path: Path) -> Path:
    """A copy of a todycomm checkpoint as written before checkpoints named their method and embedder."""
    import torch

    ck = torch.load(best, weights_only=False)
    del ck["method_name"], ck["embedder"]
    old = tmp_path / "old.pt"
    torch.save(ck, old)
    return old


def test_checkpoint_of_another_method_written_before_checkpoints_named_it(
    trained: dict[str, Path], tmp_path: Path
) -> None:
    old = _pre_naming_checkpoint(trained["todycomm"] / "best.pt", tmp_path)
    p = tomacs(
        "evaluate", "method=gdesigner", "eval.size=3", f"checkpoint={old}", f"hydra.run.dir={tmp_path / 'r'}"
    )
    line = one_line_error(p)
    assert str(old) in line and "another method" in line and "state_dict" not in line


def test_garbage_checkpoint_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "garbage.pt"
    bad.write_text("garbage\n")
    p = tomacs(
        "evaluate", "method=todycomm", "eval.size=3", f"checkpoint={bad}", f"hydra.run.dir={tmp_path / 'r'}"
    )
    line = one_line_error(p)
    assert f"checkpoint {bad} cannot be read" in line and "tomacs train" in line


def test_unwritable_output_directory_fails_before_the_job(tmp_path: Path) -> None:
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    line = one_line_error(tomacs("evaluate", "eval.size=3", f"hydra.run.dir={blocker}/run"))
    assert f"{blocker} is a file" in line and "hydra.run.dir=" in line
    line = one_line_error(
        tomacs("train", "-m", "seed=0,1", "eval.size=3", f"hydra.sweep.dir={blocker}/sweep")
    )
    assert "hydra.sweep.dir=" in line


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs /proc (a directory nobody can write)")
def test_read_only_output_directory(tmp_path: Path) -> None:
    line = one_line_error(tomacs("evaluate", "eval.size=3", "hydra.run.dir=/proc/tomacs_test/run"))
    assert "cannot create files in /proc" in line


def test_analyze_propagation_checks_its_output_before_the_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The analysis used to run to the end and then lose its results to an OSError."""
    from typer.testing import CliRunner

    import tomacs.analysis.propagation as prop
    from tomacs.cli import app

    def must_not_run(*a: object, **k: object) -> None:
        raise AssertionError("the analysis ran although its output cannot be written")

    monkeypatch.setattr(prop, "run_propagation", must_not_run)
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    res = CliRunner().invoke(app, ["analyze", "propagation", "-n", "2", "--out", f"{blocker}/p.json"])
    assert res.exit_code == 2
    assert f"{blocker} is a file" in res.output and "--out" in res.output


def test_unwritable_reason_reports_a_refused_create(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A read-only mount refuses the create even for root; simulated, since tests may run as root."""
    import tempfile

    from tomacs.paths import unwritable_reason

    assert unwritable_reason(tmp_path / "new" / "deeper") is None
    assert not (tmp_path / "new").exists()  # the check creates nothing

    def refuse(*a: object, **k: object) -> None:
        raise PermissionError(30, "Read-only file system")

    monkeypatch.setattr(tempfile, "TemporaryFile", refuse)
    assert unwritable_reason(tmp_path / "x") == f"cannot create files in {tmp_path} (Read-only file system)"


def test_flags_are_explained_as_overrides() -> None:
    line = one_line_error(tomacs("train", "--epochs", "1"))
    assert "Hydra overrides" in line and "train.epochs=1" in line and "LexerNoViableAlt" not in line


def test_bad_value_names_the_expected_type() -> None:
    line = one_line_error(tomacs("train", "eval.size=abc"))
    assert "'eval.size'" in line and "expected an integer" in line


def test_bad_value_inside_a_group_option_names_the_key() -> None:
    """Keys of a chosen option are free-form to Hydra: the shipped option file gives their type."""
    line = one_line_error(tomacs("train", "method=todycomm", "method.epsilon=abc"))
    assert line == "error: bad value 'abc' for 'method.epsilon': expected a number, e.g. method.epsilon=0.1"


@pytest.mark.parametrize(
    ("override", "ok"),
    [
        ("method.hidden_size=abc", False),  # a number key
        ("method.hidden_size=true", False),
        ("method.hidden_size=64.5", True),  # a number in the file promises a number, not an integer
        ("method.epsilon=1", True),  # an integer is a number
        ("method.lr=0.01", True),  # null in the shipped file: any value
        ("method.epsilon=null", True),
        ("budget.in_degree=many", False),
        ("attack.suffix=yes", False),  # true/false only
    ],
)
def test_option_types_follow_the_shipped_option_file(override: str, ok: bool) -> None:
    from tomacs.config import ConfigError, compose

    overrides = ["method=todycomm", "attack=gt50", "budget=b1", override]
    if ok:
        compose(overrides)
    else:
        with pytest.raises(ConfigError, match="bad value .* expected"):
            compose(overrides)


# -- item 9: one embedder, recorded, and used on load --------------------------------------------


def test_config_records_the_embedder_the_run_used(trained: dict[str, Path]) -> None:
    import torch

    out = trained["todycomm"]
    cfg = yaml.safe_load((out / "config.yaml").read_text())
    assert cfg["embedder"] == "hashing" and cfg["method"]["embedder"] == "hashing"
    res = json.loads((out / "results.json").read_text())
    assert res["config"]["method"]["embedder"] == "hashing"
    ck = torch.load(out / "best.pt", weights_only=False)
    assert ck["embedder"] == "hashing" and ck["method_name"] == "todycomm"


@pytest.mark.parametrize("method", ["todycomm", "gdesigner"])
def test_checkpoint_brings_its_embedder(trained: dict[str, Path], tmp_path: Path, method: str) -> None:
    ck = trained[method] / "best.pt"
    p = tomacs("evaluate", f"method={method}", "eval.size=3", f"checkpoint={ck}", f"hydra.run.dir={tmp_path}")
    assert p.returncode == 0, p.stderr
    cfg = yaml.safe_load((tmp_path / "config.yaml").read_text())
    assert cfg["embedder"] == "hashing" and cfg["method"]["embedder"] == "hashing"


def test_conflicting_embedder_names_the_override(trained: dict[str, Path], tmp_path: Path) -> None:
    ck = trained["todycomm"] / "best.pt"
    p = tomacs(
        "evaluate",
        "method=todycomm",
        "embedder=minilm",
        "eval.size=3",
        f"checkpoint={ck}",
        f"hydra.run.dir={tmp_path}",
    )
    line = one_line_error(p)
    assert "trained with embedder=hashing" in line and "set embedder=hashing" in line


def test_old_checkpoint_without_a_recorded_embedder_says_which_to_add(
    trained: dict[str, Path], tmp_path: Path
) -> None:
    old = _pre_naming_checkpoint(trained["todycomm"] / "best.pt", tmp_path)
    p = tomacs(
        "evaluate", "method=todycomm", "eval.size=3", f"checkpoint={old}", f"hydra.run.dir={tmp_path / 'r'}"
    )
    line = one_line_error(p)
    assert "add embedder=hashing" in line and "shape" not in line and "{" not in line
