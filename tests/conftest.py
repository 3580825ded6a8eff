"""Shared test setup: offline, data location, small configs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("WANDB_MODE", "offline")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parents[1]
_default_data = REPO.parent / "shared" / "data"
if "TOMACS_DATA" not in os.environ and _default_data.is_dir():
    os.environ["TOMACS_DATA"] = str(_default_data)


@pytest.fixture
def data_dir() -> Path:
    d = os.environ.get("TOMACS_DATA")
    if not d or not Path(d).is_dir():
        pytest.skip("real benchmark copies not found (set TOMACS_DATA to shared/data)")
    return Path(d)
