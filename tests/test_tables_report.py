"""Paper tables as sweeps, `tomacs report`, W&B offline runs, submitit: end to end on the simulator."""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tomacs.launch.table_sweeps import jobs, table_names, validate_table
from tomacs.report.paper import lookup

REPO = Path(__file__).resolve().parents[1]
PAPERS = REPO.parent / "shared" / "papers"

EXPECTED_JOBS = {
    "table2": 5 * 5 * 3 * 3,  # benchmarks x methods x attack rates x seeds
    "table3": 4 * 2 * 3 * 3,  # benchmarks x budgets x attack rates x seeds
    "table4": 4 * 3 * 3 * 3,  # N x attack rates x budgets x seeds
    "table5": 4 * 3 * 3,  # ablations x attack rates x seeds
    "table6": 5 * 3 * 3,  # feature sets x attack rates x seeds
    "table9": 5 * 5 * 3 * 3,
    "table10": 4 * 3 * 3,
    "peers": 2 * 9 * 3,
    "crs": 2 * 2 * 3 * 3,  # benchmarks x topologies x decisions x seeds
    "table7": 5 * 2 * 2 * 3,  # benchmarks x (alone, listening) x (0, 1 adversarial sender) x seeds
    "table8": 5 * 4 * 3,  # benchmarks x (0, 2, 3, 4 of 6 senders adversarial) x seeds
    "smoke": 2 * 2,
    "gsafeguard": 2 * 3 * 3,  # App. E.4: (todycomm, gsafeguard) x attack rates x seeds on MMLU
}


def tomacs(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tomacs.cli", *args],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **(env or {})},
    )


# composing a table's every job takes 1-2 s a table: two stay in `make test-fast`, the rest are slow
_FAST_TABLES = ("smoke", "table2")


@pytest.mark.parametrize(
    "name",
    [n if n in _FAST_TABLES else pytest.param(n, marks=pytest.mark.slow) for n in sorted(EXPECTED_JOBS)],
)
def test_every_table_composes_and_expands_to_its_job_count(name: str) -> None:
    assert validate_table(name) == EXPECTED_JOBS[name]


def test_table_list_is_the_expected_one_and_overrides_replace_an_axis() -> None:
    assert set(table_names()) == set(EXPECTED_JOBS)
    assert len(jobs("table2", ["seed=0", "benchmark=mmlu"])) == 5 * 3
    assert all("seed=0" in j for j in jobs("table2", ["seed=0"]))


def test_paper_numbers_are_traceable_and_match_the_paper_text() -> None:
    rec = lookup("todycomm", "mmlu", "gt50", "acc")
    # todycomm.txt line 493: "<td><b>64.71</b><br/><math>\pm 0.00</math></td>" (Table 2, MMLU > 50%)
    assert rec is not None and rec["value"] == 64.71 and rec["std"] == 0.0 and "Table 2" in rec["source"]
    assert lookup("todycomm", "mmlu", "lt50", "acc")["std"] == 0.82  # type: ignore[index]
    assert lookup("complete", "medqa", "lt50", "token")["value"] == 976.0  # type: ignore[index]
    assert lookup("todycomm", "avg5", "eq50", "acc")["value"] == 77.45  # type: ignore[index]  # Table 9
    assert lookup("todycomm", "arc_c", "eq50", "adacc")["value"] == 93.90  # type: ignore[index]  # Table 10
    assert lookup("receiver", "gsm8k", "receiver k=3/6", "acc")["value"] == 62.40  # type: ignore[index]  # Table 8
    assert lookup("receiver[listen=False]", "mmlu", "receiver k=0/1", "acc")["value"] == 70.60  # type: ignore[index]
    # §5.1: TodyComm's MMLU ADAcc is higher than G-Safeguard's by 7.17 / 19.63 / 3.74 (App. E.4)
    g = [lookup("gsafeguard", "mmlu", a, "adacc") for a in ("lt50", "eq50", "gt50")]
    assert [r["value"] for r in g] == [76.98, 69.26, 84.22]  # type: ignore[index]
    assert all(r["implied"] and "minus" in r["source"] for r in g)  # type: ignore[index]
    if not (PAPERS / "todycomm.txt").is_file():
        pytest.skip("shared/papers not beside the checkout")
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "tomacs.report.paper_numbers",  # `make paper-numbers ARGS=--check`
            "--papers",
            str(PAPERS),
            "--check",
        ],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr + p.stdout


@pytest.mark.slow
def test_smoke_sweep_report_equals_job_results_and_rerun_skips(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep"
    args = ["train", "table=smoke", "seed=0,1", "eval.size=5", f"hydra.sweep.dir={sweep}"]
    p = tomacs(*args)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "table smoke: 8 jobs" in p.stderr
    assert len(re.findall(r"\[job \d\] .*\| Acc ", p.stderr)) == 8  # one line per finished job
    assert "sweep " in p.stdout and "finished jobs" in p.stdout  # the summary table: stdout
    results = [json.loads(f.read_text()) for f in sweep.rglob("results.json")]
    assert len(results) == 8 and all(r["backbone"] == "sim" and len(r["run_id"]) == 12 for r in results)

    rep = tomacs("report", str(sweep))
    assert rep.returncode == 0, rep.stderr
    md = (sweep / "report" / "report.md").read_text()
    assert "backbone=sim" in md and "gpt-4.1-nano" in md
    for method in ("random", "complete"):
        for attack, title in (("lt50", "< 50%"), ("gt50", "> 50%")):
            accs = [
                100 * r["metrics"]["acc"] for r in results if r["method"] == method and r["attack"] == attack
            ]
            assert len(accs) == 2
            cell = f"**{statistics.fmean(accs):.2f} ± {statistics.stdev(accs):.2f} (n=2)**"  # sample std
            row = next(line for line in md.splitlines() if line.startswith(f"| {method} | Acc % |"))
            cols = [c.strip() for c in row.strip("|").split("|")][2:]
            header = next(line for line in md.splitlines() if line.startswith("| method | metric |"))
            heads = [c.strip() for c in header.strip("|").split("|")][2:]
            assert cols[heads.index(f"synthetic {title}")].startswith(cell), (cols, cell)
    # a paper row we did not run is named, not faked, and not a row of dashes
    assert "paper rows not run here: gdesigner, agentprune, todycomm" in md and "| todycomm |" not in md
    assert (sweep / "report" / "table.tex").read_text().count("\\\\") >= 4
    assert (sweep / "report" / "acc_vs_tokens.png").stat().st_size > 1000

    again = tomacs(*args)
    assert again.returncode == 0, again.stderr[-2000:]
    assert again.stderr.count("skipped (finished before)") == 8


@pytest.mark.slow
def test_wandb_offline_writes_one_run_per_job(tmp_path: Path) -> None:
    from tomacs.launch.tracking import EPISODE_COLUMNS, read_offline_run

    sweep = tmp_path / "sweep"
    p = tomacs(
        "train",
        "-m",
        "method=todycomm,random",
        "embedder=hashing",
        "logger=wandb",
        "train.size=8",
        "train.val_size=4",
        "train.batch_size=4",
        "train.epochs=1",
        "eval.size=4",
        "attack=gt50",
        f"hydra.sweep.dir={sweep}",
        env={"WANDB_MODE": "offline", "OPENAI_API_KEY": "sk-should-never-appear-123"},
    )
    assert p.returncode == 0, p.stderr[-3000:]
    runs = sorted(sweep.rglob("offline-run-*"))
    assert len(runs) == 2
    by_name = {}
    for r in runs:
        data = read_offline_run(r)
        by_name[data["name"]] = data
        assert data["group"] == sweep.as_posix()
        assert data["config"]["method"]["name"] in ("todycomm", "random")
        assert (
            data["summary"]["acc"] >= 0
            and "adacc" in data["summary"]
            and data["summary"]["backbone"] == "sim"
        )
        assert b"sk-should-never-appear" not in (r / next(iter(r.glob("run-*.wandb"))).name).read_bytes()
    tody = next(d for n, d in by_name.items() if "todycomm" in n)
    curves = [h for h in tody["history"] if "train_acc" in h]
    assert len(curves) == 2 and {"loss", "train_adacc", "train_token"} <= set(curves[0])
    assert any("val_acc" in h for h in tody["history"])
    assert any(k.startswith("graphs") for h in tody["history"] for k in h)  # the per-round graph table
    # the episodes `tomacs view` shows (issue 42): one row per episode (eval.size=4 < graph_queries=5)
    eps = {k: v for h in tody["history"] for k, v in h.items() if k.startswith("episodes/")}
    assert eps["episodes/ncols"] == len(EPISODE_COLUMNS) and eps["episodes/nrows"] == 4
    art = next(a for a in tody["artifacts"] if a["name"].endswith("-episodes"))
    table = json.loads(Path(art["files"]["episodes.table.json"]).read_text())
    assert table["columns"] == list(EPISODE_COLUMNS)


@pytest.mark.slow
def test_two_job_sweep_through_submitit_local(tmp_path: Path) -> None:
    pytest.importorskip("hydra_plugins.hydra_submitit_launcher")
    sweep = tmp_path / "sweep"
    p = tomacs(
        "evaluate",
        "-m",
        "method=random,complete",
        "eval.size=4",
        "hydra/launcher=submitit_local",
        "hydra.launcher.timeout_min=5",
        f"hydra.sweep.dir={sweep}",
    )
    assert p.returncode == 0, p.stderr[-3000:]
    found = sorted(json.loads(f.read_text())["method"] for f in sweep.rglob("results.json"))
    assert found == ["complete", "random"]
    assert any(sweep.rglob("*_submitted.pkl")) or any(sweep.rglob(".submitit"))


# The axis that defines each table (kept whole); every other axis is cut to its first value.
KEY_AXES = {
    "table2": ["method"],
    "table3": ["budget"],
    "table4": ["agents"],
    "table5": ["method.ablation"],
    "table6": ["method.features"],
    "table7": ["method.listen", "attack.count"],
    "table8": ["attack.count"],
    "table9": ["method"],
    "table10": ["attack"],
    "peers": ["method"],
    "crs": ["decision"],
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(KEY_AXES))
def test_smoke_every_table_runs_end_to_end(name: str, tmp_path: Path, tomacs_here: Any) -> None:
    """What `make smoke-tables` does, cut to the table's defining axis: every job of it runs (in process:
    tests/conftest.py tomacs_here)."""
    from tomacs.launch.table_sweeps import sweep_params

    keep = [*KEY_AXES[name], "benchmark"]  # the synthetic benchmark below replaces the real ones
    cut = [f"{k}={v.split(',')[0]}" for k, v in sweep_params(name).items() if k not in keep]
    smoke = ["eval.size=2", "eval.batch_size=2", "train.size=2", "train.val_size=0", "train.batch_size=2"]
    smoke += ["train.epochs=1", "embedder=hashing", "benchmark=synthetic"]
    sweep = tmp_path / "sweep"
    p = tomacs_here("train", f"table={name}", *cut, *smoke, f"hydra.sweep.dir={sweep}")
    assert p.returncode == 0, p.stderr[-3000:]
    n = len(jobs(name, [*cut, "benchmark=synthetic"]))
    assert len(list(sweep.rglob("results.json"))) == n
    rep = tomacs_here("report", str(sweep))
    assert rep.returncode == 0, rep.stderr[-2000:]
