"""A static method on the simulator stays light: no torch, sentence-transformers, torch_geometric or
litellm in the process (they cost seconds to import; issue 14's quickstart target is <= 3 s)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_static_sim_run_imports_no_heavy_library(tmp_path: Path) -> None:
    code = textwrap.dedent(
        f"""
        import sys
        from tomacs.config import compose
        from tomacs.launch.run import run_job
        res = run_job(compose(["method=complete", "attack=gt50", "eval.size=3", "embedder=hashing"]),
                      "train", __import__("pathlib").Path({str(tmp_path / "run")!r}))
        assert res["metrics"]["n_queries"] == 3
        heavy = [m for m in ("torch", "sentence_transformers", "torch_geometric", "litellm", "transformers")
                 if m in sys.modules]
        print("HEAVY", heavy)
        """
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "HEAVY []" in out.stdout, out.stdout
