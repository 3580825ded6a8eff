"""scripts/diagnose_minilm.py (issue 28): its block layout and the real-transcript reader, on hand-built
inputs (the measurements themselves need MiniLM and minutes; the script prints them)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from tomacs.methods.features import feature_dim

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "diagnose_minilm.py"


@pytest.fixture(scope="module")
def dm():
    sys.path.insert(0, str(SCRIPT.parent))
    spec = importlib.util.spec_from_file_location("diagnose_minilm", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("emb_dim", [64, 384])
def test_blocks_cover_every_feature_once(dm, emb_dim: int) -> None:
    cols = dm._block_cols(emb_dim)
    allc = np.concatenate(list(cols.values()))
    assert sorted(allc.tolist()) == list(range(feature_dim(emb_dim)))
    # widths by hand: sol 13 + sol_per; ana d + ana_per; nbr_sol 13 + has + disp; nbr_ana d + disp; 4
    assert {b: len(c) for b, c in cols.items()} == {
        "own answer": 14,
        "own text": emb_dim + 1,
        "nbr answers": 15,
        "nbr text": emb_dim + 1,
        "differences": 4,
    }


def test_real_texts_reads_role_round_and_question(dm, tmp_path: Path) -> None:
    q = tmp_path / "run1" / "questions"
    q.mkdir(parents=True)
    turns = [
        {"round_index": 0, "role": "attacker", "response_text": "#answer: B"},
        {"round_index": 0, "role": "normal", "response_text": "#answer: A"},
        {"round_index": 3, "role": "normal", "response_text": "late"},
        {"round_index": 1, "role": "follower", "response_text": ""},
    ]
    (q / "001.json").write_text(json.dumps({"question_id": "abc", "turns": turns}))
    rows = dm.real_texts(str(tmp_path), max_round=2)
    assert rows == [
        {"text": "#answer: B", "role": "attacker", "round": 0, "q": "run1/abc"},
        {"text": "#answer: A", "role": "normal", "round": 0, "q": "run1/abc"},
    ]
    with pytest.raises(FileNotFoundError, match="--real"):
        dm.real_texts(str(tmp_path / "missing"), 2)
