"""`tomacs report` pools only seeds of one experiment (issue 15 item 1), and the sweep summary lists
jobs in numeric order with nothing cut (issue 15 item 11)."""

from __future__ import annotations

import copy
import io
import json
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from tomacs.launch.sweep import print_summary, summary
from tomacs.report.build import build_report
from tomacs.report.collect import CellKey, cells, find_jobs, setting_keys

CONFIG = {
    "benchmark": {"name": "mmlu", "path": "/data/a"},
    "method": {"name": "todycomm", "embedder": "hashing", "decision_credit": "auto", "updates": None},
    "attack": {"name": "gt50", "count": None, "rate": 0.6667},
    "budget": {"name": "none"},
    "backbone": {"name": "sim", "cache": {"path": "outputs/cache/x.sqlite"}},
    "embed": {"cache": "outputs/cache/embeddings.sqlite", "precision": "auto"},
    "device": {"name": "cpu"},
    "logger": {"name": "none", "project": None},
    "agents": 6,
    "rounds": 4,
    "seed": 0,
    "mode": "train",
    "checkpoint": None,
    "concurrency": 64,
    "eval": {"size": 5},
    "table_name": None,
}


def fake_job(
    root: Path, name: str, acc: float, git_rev: str = "abc", extra: dict | None = None, **over: object
) -> Path:
    """A finished job directory: results.json with the resolved config, as run_job writes it
    (`extra`: further results.json fields)."""
    cfg = copy.deepcopy(CONFIG)
    for key, value in over.items():
        *parents, last = key.split("__")
        d = cfg
        for p in parents:
            d = d[p]
        d[last] = value
    d = root / name
    d.mkdir(parents=True)
    results = {
        "backbone": "sim",
        "benchmark": cfg["benchmark"]["name"],
        "method": cfg["method"]["name"],
        "attack": cfg["attack"]["name"],
        "budget": cfg["budget"]["name"],
        "agents": cfg["agents"],
        "rounds": cfg["rounds"],
        "seed": cfg["seed"],
        "decision": "auto",
        "mode": cfg["mode"],
        "git_rev": git_rev,
        "metrics": {"acc": acc, "token": 500.0, "adacc": 0.5, "adacc_baseline": 1 / 3},
        "config": cfg,
        **(extra or {}),
    }
    (d / "results.json").write_text(json.dumps(results))
    return d


def test_cells_split_on_every_setting_but_the_seed(tmp_path: Path) -> None:
    fake_job(tmp_path, "a0", 0.50, seed=0)
    # seed 1 of the same experiment: bookkeeping keys differ (log project, cache path, sweep name,
    # calls in flight, the checkpoint it resumed from) and must not split it off
    fake_job(
        tmp_path,
        "a1",
        0.70,
        seed=1,
        logger__project="p",
        backbone__cache__path="elsewhere.sqlite",
        embed__cache=None,
        table_name="table2",
        concurrency=8,
        checkpoint="/tmp/run1/checkpoint.pt",
    )
    fake_job(tmp_path, "b0", 0.90, seed=0, eval__size=153)  # another experiment, same seed
    fake_job(tmp_path, "c0", 0.10, seed=0, agents=10)
    jobs = find_jobs(tmp_path)
    assert setting_keys(jobs) == ["agents", "eval.size"]
    cs = cells(jobs)
    assert sorted(k.setting for k in cs) == [
        "agents=10, eval.size=5",
        "agents=6, eval.size=153",
        "agents=6, eval.size=5",
    ]
    pooled = cs[CellKey("todycomm", "mmlu", "gt50", "none", "agents=6, eval.size=5")]
    assert pooled.seeds == [0, 1]
    mean, std = pooled.mean_std("acc", 100.0)
    assert mean == 60.0 and abs(std - statistics.stdev([50.0, 70.0])) < 1e-9  # sample std, n-1
    assert pooled.warnings() == []


def test_evaluating_an_untrained_policy_is_another_experiment(tmp_path: Path) -> None:
    fake_job(tmp_path, "t", 0.5, mode="evaluate", checkpoint="/runs/s0/best.pt")
    fake_job(tmp_path, "u", 0.2, mode="evaluate", checkpoint="untrained", seed=1)
    assert setting_keys(find_jobs(tmp_path)) == ["checkpoint"]


def test_cell_warns_on_same_seed_twice_and_on_code_version(tmp_path: Path) -> None:
    fake_job(tmp_path, "x", 0.5, git_rev="aaa")
    fake_job(tmp_path, "y", 0.6, git_rev="bbb")
    (cell,) = cells(find_jobs(tmp_path)).values()
    text = " ".join(cell.warnings())
    assert "seed 0 appears more than once" in text and "git_rev" in text and "aaa (1 job)" in text


def test_cell_warns_when_its_jobs_ran_on_different_devices(tmp_path: Path) -> None:
    """`device=auto` reads the same on a CPU and on a GPU, so where a job ran comes from results.json:
    its own `device` field, or, in jobs written before it, the device its MiniLM embedder ran on."""
    fake_job(tmp_path, "cpu_old", 0.5, extra={"embedding": [{"embedder": "minilm", "device": "cpu"}]})
    fake_job(tmp_path, "cpu_new", 0.6, seed=1, extra={"device": "cpu"})
    (same,) = cells(find_jobs(tmp_path)).values()
    assert not any("device" in w for w in same.warnings())
    fake_job(tmp_path, "gpu", 0.7, seed=2, extra={"device": "cuda"})
    fake_job(tmp_path, "old", 0.7, seed=3)  # an old job without an embedder: where it ran is unknown
    (mixed,) = cells(find_jobs(tmp_path)).values()
    text = " ".join(mixed.warnings())
    assert "jobs disagree in device" in text and "<unset> (1 job), cpu (2 jobs), cuda (1 job)" in text, text


def test_report_of_a_mixed_folder_keeps_configs_apart_and_names_them(tmp_path: Path) -> None:
    fake_job(tmp_path, "n6s0", 0.60)
    fake_job(tmp_path, "n6s1", 0.70, seed=1)
    fake_job(tmp_path, "n10", 0.20, agents=10)
    res = build_report(tmp_path)
    md = (tmp_path / "report" / "table.md").read_text()
    rows = [
        ln for ln in md.splitlines() if ln.startswith("| todycomm |") and "| Acc % |" in ln and "(n=" in ln
    ]
    assert len(rows) == 2, md
    n10 = next(r for r in rows if "| agents=10 |" in r)
    n6 = next(r for r in rows if "| agents=6 |" in r)
    assert "**20.00 (n=1)**" in n10 and "(n=3)" not in md
    assert f"**65.00 ± {statistics.stdev([60.0, 70.0]):.2f} (n=2)**" in n6
    # the paper's Table 2 is N=6: its number stands beside agents=6 only, never beside N=10
    assert "*64.71 ± 0.00*" in n6 and n10.endswith("/ *—* |")
    assert "sample std" in md and res["varying"] == ["agents"]


def tomacs(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tomacs.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=os.environ,
    )


@pytest.mark.slow
def test_the_issue_reproduction_two_agent_counts_at_seed_0_are_two_rows(tmp_path: Path) -> None:
    """`tomacs train -m agents=4,8 attack=gt50` then `tomacs report`: was one cell `(n=2)`."""
    sweep = tmp_path / "sweep"
    p = tomacs(
        "train",
        "-m",
        "agents=4,8",
        "attack=gt50",
        "eval.size=5",
        "embedder=hashing",
        f"hydra.sweep.dir={sweep}",
    )
    assert p.returncode == 0, p.stderr[-2000:]
    accs = {
        json.loads(f.read_text())["agents"]: 100 * json.loads(f.read_text())["metrics"]["acc"]
        for f in sweep.rglob("results.json")
    }
    rep = tomacs("report", str(sweep))
    assert rep.returncode == 0, rep.stderr
    assert "agents" in rep.stdout  # the CLI names the setting it kept apart
    md = (sweep / "report" / "table.md").read_text()
    assert "(n=2)" not in md
    for n, acc in accs.items():
        row = next(line for line in md.splitlines() if f"| agents={n} | Acc % |" in line)
        assert f"**{acc:.2f} (n=1)**" in row


def test_report_cli_warns_loudly_when_a_cell_mixes_code_versions(tmp_path: Path) -> None:
    fake_job(tmp_path, "x", 0.5, git_rev="aaa")
    fake_job(tmp_path, "y", 0.6, git_rev="bbb", seed=1)
    rep = tomacs("report", str(tmp_path))
    assert rep.returncode == 0, rep.stderr
    assert "WARNING:" in rep.stderr and "git_rev" in rep.stderr
    assert "## WARNINGS" in (tmp_path / "report" / "report.md").read_text()


# ---------------------------------------------------------------- sweep summary (item 11)

LONG = "train.size=16,train.val_size=8,train.batch_size=8,method.hidden_size=64,method.gamma=0.9"


def _sweep(root: Path, n: int) -> None:
    for i in range(n):
        d = fake_job(root, f"{i}_seed={i},{LONG},agents={4 + i}", 0.5, seed=i, agents=4 + i)
        (d / ".hydra").mkdir()
        overrides = [f"seed={i}", *LONG.split(","), f"agents={4 + i}", "mode=train"]
        (d / ".hydra" / "overrides.yaml").write_text("".join(f"- {o}\n" for o in overrides))


def test_sweep_summary_is_in_job_number_order(tmp_path: Path) -> None:
    _sweep(tmp_path, 12)
    table = summary(tmp_path).table
    assert list(table.columns[0]._cells) == [str(i) for i in range(12)]  # not 0, 1, 10, 11, 2
    assert list(table.columns[-1]._cells) == [f"agents={4 + i}" for i in range(12)]


def test_sweep_summary_in_a_log_file_cuts_nothing(tmp_path: Path) -> None:
    _sweep(tmp_path, 3)
    buf = io.StringIO()
    print_summary(Console(file=buf, width=80), tmp_path)  # not a terminal: a log under nohup/SLURM
    out = buf.getvalue()
    assert "…" not in out
    assert f"every job: {LONG}" in out
    rows = [line for line in out.splitlines() if re.match(r"│ \d", line)]
    assert [r.split("│")[1].strip() for r in rows] == ["0", "1", "2"]
    assert all("todycomm" in r and f"agents={4 + i}" in r for i, r in enumerate(rows))


def test_sweep_summary_on_a_narrow_terminal_folds_but_keeps_names_whole(tmp_path: Path) -> None:
    _sweep(tmp_path, 2)
    for d in tmp_path.iterdir():
        (d / ".hydra" / "overrides.yaml").write_text(
            (d / ".hydra" / "overrides.yaml").read_text() + f"- method.decision_tau={d.name[0]}.123456789\n"
        )
    buf = io.StringIO()
    print_summary(Console(file=buf, width=60, force_terminal=True, color_system=None), tmp_path)
    out = buf.getvalue()
    assert "…" not in out and "todycomm" in out and "benchmark" in out
