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
        ("method.hidden_size=64.5", False),  # the method's schema types it: an integer
        ("method.epsilon=1", True),  # an integer is a number
        ("method.lr=0.01", True),  # null in the schema: an optional number
        ("method.lr=null", True),
        ("method.epsilon=null", False),  # not optional in the schema (it failed later, inside the method)
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
    assert cfg["embedder"] == "hashing" and "embedder" not in cfg["method"]  # one key (issue 29)
    res = json.loads((out / "results.json").read_text())
    assert res["config"]["embedder"] == "hashing"
    ck = torch.load(out / "best.pt", weights_only=False)
    assert ck["embedder"] == "hashing" and ck["method_name"] == "todycomm"


@pytest.mark.parametrize("method", ["todycomm", "gdesigner"])
def test_checkpoint_brings_its_embedder(trained: dict[str, Path], tmp_path: Path, method: str) -> None:
    ck = trained[method] / "best.pt"
    p = tomacs("evaluate", f"method={method}", "eval.size=3", f"checkpoint={ck}", f"hydra.run.dir={tmp_path}")
    assert p.returncode == 0, p.stderr
    cfg = yaml.safe_load((tmp_path / "config.yaml").read_text())
    assert cfg["embedder"] == "hashing" and "embedder" not in cfg["method"]


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


# -- issue 27 item 8: what still escaped as a cryptic or unnamed error ---------------------------


def test_checkpoint_from_a_sweep_directory_is_accepted(trained: dict[str, Path], tmp_path: Path) -> None:
    """A sweep job's directory holds `=` and `,` (0_attack=gt50,method=todycomm): Hydra's grammar read
    them as syntax (`mismatched input '='`); the CLI quotes such a checkpoint value for Hydra."""
    import shutil

    job = tmp_path / "multirun" / "0_attack=gt50,method=todycomm"
    job.mkdir(parents=True)
    shutil.copy(trained["todycomm"] / "best.pt", job / "best.pt")
    ck = job.relative_to(tmp_path) / "best.pt"
    p = tomacs(
        "evaluate", "method=todycomm", "eval.size=3", f"checkpoint={ck}", "hydra.run.dir=r", cwd=tmp_path
    )
    assert p.returncode == 0, p.stderr
    assert json.loads((tmp_path / "r" / "results.json").read_text())["config"]["checkpoint"] == str(ck)


@pytest.mark.parametrize(
    ("given", "passed"),
    [
        (
            "checkpoint=out/0_attack=gt50,method=todycomm/best.pt",
            "checkpoint='out/0_attack=gt50,method=todycomm/best.pt'",
        ),
        ("checkpoint=it's=x/best.pt", "checkpoint='it\\'s=x/best.pt'"),
        ("checkpoint=a.pt,b.pt", "checkpoint=a.pt,b.pt"),  # no such files: a sweep over two checkpoints
        ("checkpoint='a=b/best.pt'", "checkpoint='a=b/best.pt'"),  # quoted already
        ("checkpoint=untrained", "checkpoint=untrained"),
        ("method.x=a=b", "method.x=a=b"),  # only path keys
    ],
)
def test_quote_path_values(given: str, passed: str) -> None:
    from hydra.core.override_parser.overrides_parser import OverridesParser

    from tomacs.config import quote_path_values

    assert quote_path_values([given]) == [passed]
    if "=" in given.split("=", 1)[1] and given.startswith("checkpoint"):
        value = OverridesParser.create().parse_override(passed).value()
        assert value == given.split("=", 1)[1].strip("'")


@pytest.mark.parametrize("command", ["train", "evaluate"])
def test_comma_list_without_multirun_gives_the_whole_hint(command: str) -> None:
    line = one_line_error(tomacs(command, "method=complete,random", "eval.size=3"))
    assert "add -m" in line and f"(tomacs {command} -m method=complete,random)" in line, line
    assert "Ambiguous" not in line


def test_number_for_a_config_group_names_the_group_and_its_options() -> None:
    line = one_line_error(tomacs("train", "attack=60", "eval.size=3"))
    assert "'attack=60'" in line and "attack is a config group" in line
    assert "valid attack options: crs3of5, eq50, gt50, lt50, maa, mad, none, receiver" in line
    assert "Got int" not in line


def _arc_row(i: int) -> bytes:
    row = {
        "id": f"q{i}",
        "question": f"Question {i}?",
        "choices": {"text": ["one", "two", "three", "four"], "label": ["A", "B", "C", "D"]},
        "answerKey": "ABCD"[i % 4],
    }
    return json.dumps(row).encode() + b"\n"


def _arc_copy(root: Path, train: bytes) -> Path:
    """An ARC-Challenge directory of 6 made-up rows per split, with the given training file."""
    d = root / "arc_challenge"
    d.mkdir(parents=True)
    for split in ("validation", "test"):
        (d / f"{split}.jsonl").write_bytes(b"".join(_arc_row(i) for i in range(6)))
    (d / "train.jsonl").write_bytes(train)
    return d / "train.jsonl"


ARC_TRAIN = ["method=todycomm", "embedder=hashing", "benchmark=arc_c", *TINY]


def test_binary_bytes_in_a_data_file_name_the_file_and_line(tmp_path: Path) -> None:
    train = _arc_copy(tmp_path / "data", _arc_row(0) + _arc_row(1) + b'{"id": "\xff\xfe"}\n' + _arc_row(2))
    line = one_line_error(tomacs("train", *ARC_TRAIN, f"benchmark.path={tmp_path / 'data'}", cwd=tmp_path))
    assert f"{train}:3: not UTF-8 text (byte 0xff at column 9)" in line and "codec" not in line, line


def test_empty_training_split_names_the_file(tmp_path: Path) -> None:
    train = _arc_copy(tmp_path / "data", b"")
    line = one_line_error(tomacs("train", *ARC_TRAIN, f"benchmark.path={tmp_path / 'data'}", cwd=tmp_path))
    assert f"benchmark 'arc_c': its training split 'train' ({train}) has no rows" in line, line


def test_train_size_zero_says_what_to_do(tmp_path: Path) -> None:
    line = one_line_error(
        tomacs("train", "method=todycomm", "embedder=hashing", "train.size=0", cwd=tmp_path)
    )
    assert "train.size=0 gives it no training questions" in line and "checkpoint=untrained" in line, line


# -- stub run directories ------------------------------------------------------------------------


def _stub(d: Path, log: str = "") -> Path:
    (d / ".hydra").mkdir(parents=True)
    for name in ("config.yaml", "hydra.yaml", "overrides.yaml"):
        (d / ".hydra" / name).write_text("x: 1\n")
    (d / ".tomacs.lock").write_text("{}\n")
    (d / "hydra_app.log").write_text(log)
    return d


def test_holds_only_stubs(tmp_path: Path) -> None:
    from tomacs.job.rundir import holds_only_stubs, remove_stub

    stub = _stub(tmp_path / "stub")
    assert holds_only_stubs(stub)
    logged = _stub(tmp_path / "logged", log="[2026-01-01] a previous run\n")
    assert not holds_only_stubs(logged) and holds_only_stubs(logged, empty_logs=False)
    for extra in ("results.json", "episodes.jsonl", "best.pt", "train_log.jsonl", "config.yaml", "wandb/run"):
        d = _stub(tmp_path / extra.replace("/", "_"))
        (d / extra).parent.mkdir(exist_ok=True)
        (d / extra).write_text("1")
        assert not holds_only_stubs(d, empty_logs=False), extra
        assert not remove_stub(d) and (d / extra).exists() and (d / ".hydra" / "config.yaml").exists()
    assert not holds_only_stubs(tmp_path / "absent")
    assert remove_stub(stub) and not stub.exists()


def test_a_refused_job_leaves_no_stub_run_directory(tmp_path: Path) -> None:
    p = tomacs("evaluate", "method=todycomm", "checkpoint=nothere.pt", "eval.size=3", cwd=tmp_path)
    assert "checkpoint not found" in one_line_error(p)
    runs = tmp_path / "outputs" / "runs"
    assert not runs.exists() or not any(runs.iterdir()), list(runs.iterdir())


def test_a_refused_job_keeps_a_previous_runs_directory(trained: dict[str, Path], tmp_path: Path) -> None:
    import shutil

    prev = tmp_path / "prev"
    shutil.copytree(trained["todycomm"], prev)
    before = sorted(p.relative_to(prev).as_posix() for p in prev.rglob("*") if p.parent.name != ".hydra")
    p = tomacs("train", "method=todycomm", "embedder=hashing", "train.size=0", f"hydra.run.dir={prev}")
    assert "train.size=0" in one_line_error(p)
    after = sorted(p.relative_to(prev).as_posix() for p in prev.rglob("*") if p.parent.name != ".hydra")
    assert after == before and "results.json" in after
    # a stub directory a previous command left, with that command's log, stays too
    old = _stub(tmp_path / "old", log="[2026-01-01] a previous run\n")
    p = tomacs("evaluate", "method=todycomm", "checkpoint=nothere.pt", "eval.size=3", f"hydra.run.dir={old}")
    assert "checkpoint not found" in one_line_error(p)
    assert "a previous run" in (old / "hydra_app.log").read_text()
