"""Issue 27 item 8: a piped job log carried noise from loading MiniLM (a W&B offline line under
logger=none, a sentence-transformers INFO line, a tqdm weights bar); warnings must still show."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.slow

SCRIPT = textwrap.dedent(
    """
    import logging
    logging.basicConfig(level=logging.INFO)  # as Hydra configures a job's logging
    from tomacs.embedding.embedders import MiniLMEmbedder
    vec = MiniLMEmbedder(cache=None, precision="fp32").embed(["a first text", "a second one"])
    print("shape", vec.shape)
    logging.getLogger("sentence_transformers").warning("a warning still shows")
    import transformers.utils.logging as hf
    print("bars on after the load:", hf.is_progress_bar_enabled())
    import os
    print("WANDB_MODE after the load:", os.environ.get("WANDB_MODE"))
    """
)


def test_loading_minilm_prints_no_noise_into_a_piped_log() -> None:
    env = {**os.environ, "WANDB_MODE": "offline", "HF_HUB_OFFLINE": "1"}
    p = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300, env=env)
    out = p.stdout + p.stderr
    assert p.returncode == 0, out
    assert "shape (2, 384)" in out
    assert "WANDB offline" not in out
    assert "Loading SentenceTransformer" not in out
    assert "Loading weights" not in out and "it/s" not in out
    assert "a warning still shows" in out
    assert "bars on after the load: True" in out  # only the load is quiet
    assert "WANDB_MODE after the load: offline" in out
