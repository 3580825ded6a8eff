"""In process: the run-directory lock, the resume command, duplicate episodes, untrained
evaluation, progress lines."""

from __future__ import annotations

import io
import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from tomacs.config import ConfigError, compose
from tomacs.job.progress import Progress
from tomacs.job.rundir import LOCK_NAME, RunDirBusy, acquire, hold, hydra_value, resume_command
from tomacs.launch.run import run_job
from tomacs.report.collect import method_label

HOLDER = """
import sys, time
from pathlib import Path
from tomacs.job.rundir import acquire
acquire(Path(sys.argv[1]))
print("held", flush=True)
time.sleep(120)
"""


def test_a_held_directory_names_its_holder_and_a_killed_holder_leaves_no_lock(tmp_path: Path) -> None:
    run = tmp_path / "run"
    p = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(run), "train", "method=x"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert p.stdout is not None and p.stdout.readline().strip() == "held"
        with pytest.raises(RunDirBusy, match=rf"in use by another job \(pid {p.pid} on .*started .*method=x"):
            acquire(run)
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    assert (run / LOCK_NAME).exists()  # the file stays, the lock died with its process
    with hold(run):
        with hold(run):  # re-entrant within the process that holds it
            pass
        assert json.loads((run / LOCK_NAME).read_text())["pid"] != p.pid


def test_resume_command_sets_the_run_dir_and_quotes() -> None:
    argv = ["/venv/bin/tomacs", "train", "method=todycomm", "hydra.run.dir=old", "train.lr=5e-4"]
    assert (
        resume_command(Path("/o/r"), argv=argv)
        == "tomacs train method=todycomm train.lr=5e-4 hydra.run.dir=/o/r"
    )
    cmd = resume_command(Path("/o/a b=c"), argv=["/x/tomacs", "evaluate", "-m", "method=a,b"], multirun=True)
    assert cmd == "tomacs evaluate -m method=a,b 'hydra.sweep.dir='\"'\"'/o/a b=c'\"'\"''"
    assert hydra_value("/o/a b=c") == "'/o/a b=c'"
    mod = resume_command(Path("/r"), argv=["/repo/tomacs/cli.py", "evaluate"])
    assert mod == f"{sys.executable} -m tomacs.cli evaluate hydra.run.dir=/r"


def test_duplicate_episodes_are_an_error_not_counted_twice(tmp_path: Path) -> None:
    cfg = ["method=random", "attack=gt50", "eval.size=4"]
    run_job(compose(cfg), "evaluate", tmp_path)
    lines = (tmp_path / "episodes.jsonl").read_text().splitlines()
    (tmp_path / "episodes.jsonl").write_text("\n".join([*lines, lines[1]]) + "\n")
    (tmp_path / "results.json").unlink()
    with pytest.raises(
        ConfigError, match=r"episodes\.jsonl: question id .* appears twice \(entries 2 and 5\)"
    ):
        run_job(compose(cfg), "evaluate", tmp_path)


TODY = ["method=todycomm", "embedder=hashing", "attack=gt50", "eval.size=6", "eval.batch_size=4"]


def test_untrained_evaluation_is_refused_unless_asked_and_then_labelled(tmp_path: Path) -> None:
    with pytest.raises(
        ConfigError, match=r"method=todycomm is learned and no checkpoint.*checkpoint=untrained"
    ):
        run_job(compose(TODY), "evaluate", tmp_path / "refused")
    assert not (tmp_path / "refused" / "config.yaml").exists()  # refused before writing anything
    res = run_job(compose([*TODY, "checkpoint=untrained"]), "evaluate", tmp_path / "ok")
    assert res["untrained"] is True and res["method"] == "todycomm"
    assert method_label(res) == "todycomm[untrained]"
    # a trained policy must not resume from the untrained one's episodes
    with pytest.raises(ConfigError, match="checkpoint"):
        run_job(compose([*TODY, "checkpoint=/nowhere/best.pt"]), "evaluate", tmp_path / "ok")
    with pytest.raises(ConfigError, match="checkpoint=untrained is for `tomacs evaluate`"):
        run_job(compose([*TODY, "checkpoint=untrained"]), "train", tmp_path / "train")
    static = run_job(compose(["method=complete", "eval.size=2"]), "evaluate", tmp_path / "static")
    assert static["untrained"] is False and method_label(static) == "complete"


def test_progress_lines_and_a_bar_whose_total_is_reached(tmp_path: Path) -> None:
    """The sparse, vote-deciding TodyComm makes far fewer calls than agents x rounds + 1 per
    question: a total in questions still ends at 100 %."""
    out = io.StringIO()
    run_job(compose([*TODY, "checkpoint=untrained"]), "evaluate", tmp_path / "lines", Progress(stream=out))
    lines = out.getvalue().splitlines()
    assert [ln.split(" | ")[1] for ln in lines] == ["questions 4/6", "questions 6/6"]
    assert all(
        " | Acc " in ln and " | ADAcc " in ln and " | calls " in ln and " | ETA " in ln for ln in lines
    )
    con = Console(file=io.StringIO(), force_terminal=True, color_system=None, width=200)
    res = run_job(
        compose([*TODY, "checkpoint=untrained"]),
        "evaluate",
        tmp_path / "bar",
        Progress(console=con, style="bar"),
    )
    assert res["metrics"]["llm_calls"] < 6 * (6 * 4 + 1)
    shown = con.file.getvalue()
    assert "6/6 questions" in shown and "Acc " in shown


def test_git_rev_says_when_tracked_files_differ_from_the_commit(tmp_path: Path) -> None:
    from tomacs.job.files import git_rev

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "a.py").write_text("x = 1\n")
    git("add", "a.py")
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "one")
    clean = git_rev(tmp_path)
    assert clean and "+" not in clean
    (tmp_path / "untracked.txt").write_text("outputs live here\n")
    assert git_rev(tmp_path) == clean  # untracked files are not the code
    (tmp_path / "a.py").write_text("x = 2\n")
    assert git_rev(tmp_path) == clean + "+dirty"


@pytest.mark.parametrize("quiet", [False, True])
def test_after_an_interrupt_abandoned_coroutines_print_nothing_at_exit(quiet: bool) -> None:
    """A SIGTERM raised between a coroutine's creation and its scheduling leaves it unawaited; its
    warning at exit used to follow the resume command (the last line a script reads for it)."""
    code = (
        "import gc\n"
        "from tomacs.job.rundir import quiet_abandoned_coroutines\n"
        "async def request():\n    pass\n"
        f"if {quiet}:\n    quiet_abandoned_coroutines()\n"
        "c = request()\ndel c\ngc.collect()\nprint('resume line')\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and p.stdout == "resume line\n"
    assert ("was never awaited" in p.stderr) is not quiet, p.stderr
