"""A run whose agents' answers go unparsed says so: per-agent rates in results.json and a bold warning.

End to end through the real-LLM path against the loopback fake server, whose every reply is a hedge
("(A) or (B)") in one run and a readable answer in the other.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from tomacs.launch.hydra_app import print_unparsed_warning, summary_table
from tomacs.testing.fake_openai_server import FakeOpenAIServer

pytestmark = pytest.mark.slow


def _evaluate(srv: FakeOpenAIServer, out: Path) -> subprocess.CompletedProcess[str]:
    cmd = [
        sys.executable,
        "-m",
        "tomacs.cli",
        "evaluate",
        "backbone=openai_compatible",
        f"backbone.api_base={srv.base_url}",
        "backbone.model=openai/fake",
        f"backbone.cache.path={out.parent / (out.name + '.sqlite')}",
        "benchmark=synthetic",
        "method=complete",
        "agents=3",
        "rounds=1",
        "attack=none",
        "eval.size=2",
        f"hydra.run.dir={out}",
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def test_hedging_agents_are_reported_per_agent_and_warned_about(tmp_path: Path) -> None:
    with FakeOpenAIServer(reply="Both are defensible here, so my answer is (A) or (B).") as srv:
        p = _evaluate(srv, tmp_path / "hedge")
    assert p.returncode == 0, p.stderr[-2000:]
    res = json.loads((tmp_path / "hedge" / "results.json").read_text())
    m = res["metrics"]
    assert m["agent_outputs"] == 6 and m["unparsed_answers"] == 6 and m["unparsed_rate"] == 1.0
    assert [m[f"unparsed_rate_agent{i}"] for i in range(3)] == [1.0, 1.0, 1.0]
    assert len(res["roles"]) == 3
    warning = res["unparsed_warning"]
    assert warning.startswith("6 of 6 agent answers unparsed (100.0 %")
    assert all(f"agent {i} ({role}) 100.0 %" in warning for i, role in enumerate(res["roles"]))
    stderr = " ".join(p.stderr.split())  # rich wraps long lines
    assert "WARNING: 6 of 6 agent answers unparsed" in stderr
    stdout = " ".join(p.stdout.split())  # the summary table is the job's result: stdout
    assert "6 of 6 (100.00 %)" in stdout and "100.0 100.0 100.0" in stdout  # the summary table rows


def test_readable_answers_give_no_warning(tmp_path: Path) -> None:
    with FakeOpenAIServer() as srv:  # replies end "Final answer: (A)"
        p = _evaluate(srv, tmp_path / "ok")
    assert p.returncode == 0, p.stderr[-2000:]
    res = json.loads((tmp_path / "ok" / "results.json").read_text())
    assert res["metrics"]["unparsed_answers"] == 0 and res["unparsed_warning"] is None
    assert "WARNING" not in p.stderr and "0 of 6 (0.00 %)" in " ".join(p.stdout.split())


def test_summary_of_an_old_results_file_without_per_agent_keys() -> None:
    """results.json written before per-agent rates still prints, and its overall rate still warns."""
    results = {
        "method": "complete",
        "benchmark": "mmlu",
        "attack": "none",
        "budget": "none",
        "backbone": "litellm:openai/x",
        "seed": 0,
        "test_questions": 10,
        "wall_s": 1.0,
        "metrics": {"acc": 0.5, "unparsed_answers": 8.0, "agent_outputs": 80.0, "unparsed_rate": 0.1},
    }
    console = Console(record=True, width=200)
    console.print(summary_table(results))
    print_unparsed_warning(console, results)
    text = console.export_text()
    assert "8 of 80 (10.00 %)" in text
    assert "WARNING: 8 of 80 agent answers unparsed (10.0 %; over 5 %: the run as a whole)" in text
