"""`tomacs check-targets`: TodyComm's targets on a hand-made tree of jobs (numbers worked out by
hand), its one-line errors, and `--run` on a tiny table2 sweep."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tomacs.report.paper import lookup

# (method, attack) -> per seed (acc, adacc, token); benchmark mmlu, 6 agents, 4 rounds, backbone sim
JOBS = {
    ("todycomm", "lt50"): [(0.80, 0.90, 100), (0.82, 0.90, 110)],
    ("todycomm", "eq50"): [(0.78, 0.85, 100), (0.80, 0.85, 110)],
    ("todycomm", "gt50"): [(0.70, 0.70, 100), (0.74, 0.72, 110)],
    ("agentprune", "eq50"): [(0.70, 0.50, 120), (0.70, 0.50, 120)],
    ("agentprune", "gt50"): [(0.75, 0.50, 100), (0.75, 0.50, 100)],
}


def tomacs(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tomacs.cli", *args], capture_output=True, text=True, timeout=600, cwd=cwd
    )


def _write_jobs(root: Path, agents: int = 6) -> None:
    for (method, attack), seeds in JOBS.items():
        for seed, (acc, adacc, token) in enumerate(seeds):
            d = root / f"{method}_{attack}_{seed}"
            d.mkdir(parents=True)
            res = {
                "method": method, "benchmark": "mmlu", "attack": attack, "seed": seed, "backbone": "sim",
                "agents": agents, "rounds": 4, "mode": "train",
                "metrics": {"acc": acc, "adacc": adacc, "token": token, "adacc_baseline": 4 / 6},
            }  # fmt: skip
            if method == "todycomm":  # the resolved config names TodyComm's embedder (null = MiniLM)
                res |= {"device": "cuda" if seed else "cpu", "config": {"embedder": None, "agents": agents}}
            (d / "results.json").write_text(json.dumps(res))


def test_targets_on_hand_made_jobs(tmp_path: Path) -> None:
    _write_jobs(tmp_path)
    p = tomacs("check-targets", str(tmp_path))
    assert p.returncode == 0, p.stderr
    out = p.stdout
    ours = "ours: backbone=sim; todycomm embedder=minilm; device=cpu,cuda; paper: gpt-4.1-nano"
    assert f"10 jobs under {tmp_path}; {ours}" in out
    row = next(line for line in out.splitlines() if line.split()[:3] == ["mmlu", "eq50", "todycomm"])
    # Acc 78, 80 -> 79.0 ± 1.4 (n=2); ADAcc 85, 85 -> 85.0 ± 0.0; Token 105; the paper's beside each
    acc, adacc, token = (lookup("todycomm", "mmlu", "eq50", m) for m in ("acc", "adacc", "token"))
    assert acc and adacc and token
    ours = ["79.0", "±", "1.4", "(n=2)", f"{acc['value']:.1f}", "85.0", "±", "0.0", f"{adacc['value']:.1f}"]
    assert row.split()[3:] == [*ours, "105", f"{token['value']:.1f}"]
    # ADAcc cell means 90, 85, 71 -> 82.0 >= 80
    assert "  [x] ADAcc mean over 3 cells >= 80 %: 82.0 %" in out
    # gt50: TodyComm 72.0 against AgentPrune 75.0 -> mmlu is not won
    assert "  [ ] Acc above every baseline at eq50 and gt50: 0 of 1 benchmarks (need 1)" in out
    # sample std of Acc: lt50 and eq50 1.41, gt50 (70, 74) 2.83
    assert "  [ ] seed std of Acc <= 2 points: worst mmlu gt50 2.83" in out
    # Token 105 <= 120 at eq50, 105 > 100 at gt50
    assert "  [ ] Token <= AgentPrune at eq50/gt50: 1 of 2 cells" in out
    # lt50: ADAcc 90.0 against the all-reliable 66.7 (4 of 6 agents honest)
    assert "  [x] ADAcc above the all-reliable detector at lt50: 1 of 1 benchmarks (mmlu 90.0 > 66.7)" in out


def test_lt50_detection_below_the_all_reliable_detector_is_not_met(tmp_path: Path) -> None:
    _write_jobs(tmp_path)
    for seed, adacc in ((0, 0.60), (1, 0.70)):  # mean 65.0, under the 66.7 of flagging nobody
        f = tmp_path / f"todycomm_lt50_{seed}" / "results.json"
        res = json.loads(f.read_text())
        res["metrics"]["adacc"] = adacc
        f.write_text(json.dumps(res))
    p = tomacs("check-targets", str(tmp_path))
    assert p.returncode == 0, p.stderr
    line = "  [ ] ADAcc above the all-reliable detector at lt50: 0 of 1 benchmarks (mmlu 65.0 <= 66.7)"
    assert line in p.stdout


def test_one_line_errors(tmp_path: Path) -> None:
    p = tomacs("check-targets", str(tmp_path))
    assert p.returncode == 2 and p.stderr.strip() == f"error: no finished jobs under {tmp_path}"
    p = tomacs("check-targets")
    assert p.returncode == 2 and "give one directory of finished jobs, or --run" in p.stderr
    _write_jobs(tmp_path / "a")
    _write_jobs(tmp_path / "b", agents=4)
    p = tomacs("check-targets", str(tmp_path))
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1
    assert "mixes experiments (agents=4; agents=6): point check-targets at one of them" in p.stderr


@pytest.mark.slow
def test_run_sweeps_table2_first_then_checks_it(tmp_path: Path) -> None:
    tiny = ["method=todycomm,agentprune", "attack=eq50", "seed=0", "benchmark=synthetic", "embedder=hashing"]
    tiny += ["eval.size=2", "eval.batch_size=2", "train.size=2", "train.val_size=0", "train.batch_size=2"]
    p = tomacs("check-targets", "--run", *tiny, "train.epochs=1", cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-3000:]
    (sweep,) = (tmp_path / "outputs" / "multirun" / "check_todycomm").iterdir()
    assert len(list(sweep.rglob("results.json"))) == 2
    rel = Path("outputs/multirun/check_todycomm") / sweep.name
    assert "sweep wall time" in p.stdout and f"-> {rel}" in p.stdout
    assert f"2 jobs under {rel}; ours: backbone=sim" in p.stdout
    assert any(line.split()[:3] == ["synthetic", "eq50", "todycomm"] for line in p.stdout.splitlines())
