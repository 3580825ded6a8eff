"""scripts/parser_check.py (`make parser-check`) on a tiny tree shaped like the MAD-Follower debates:
hand-counted figures."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "parser_check.py"


def _run_dir(
    root: Path, name: str, choices: list[dict], turns: list[tuple[str, str, str | None, str]]
) -> None:
    run = root / name
    (run / "questions").mkdir(parents=True)
    agents = [
        {"agent_id": "attacker", "role": "attacker", "model": "big"},
        {"agent_id": "responder_1", "role": "normal", "model": None},
    ]
    cfg = {"config": {"llm": {"model": "small"}, "agents": agents}}
    (run / "config.json").write_text(json.dumps(cfg))
    q = {
        "question": {"id": "q1", "text": "Where?", "choices": choices},
        "turns": [
            {"round_index": 0, "agent_id": a, "role": r, "parsed_answer": label, "response_text": text}
            for a, r, label, text in turns
        ],
    }
    (run / "questions" / "001_q1.json").write_text(json.dumps(q))


def _check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=120, check=False
    )


def test_check_counts_agreement_unparsed_and_reads_both_choice_layouts(tmp_path: Path) -> None:
    # the early layout: two entries holding Python list literals
    old = [
        {"label": "label", "text": "['A', 'B', 'C']"},
        {"label": "text", "text": "['bank', 'library', 'mall']"},
    ]
    _run_dir(
        tmp_path,
        "run1",
        old,
        [
            ("attacker", "attacker", "B", "#answer: B\n#rationale: quiet rooms"),  # agrees
            ("responder_1", "normal", "A", "#answer: \n#rationale: upstream error"),  # unparsed
        ],
    )
    new = [{"label": "A", "text": "bank"}, {"label": "B", "text": "library"}, {"label": "C", "text": "mall"}]
    _run_dir(
        tmp_path,
        "run2",
        new,
        [
            ("attacker", "attacker", "B", "(X) The mall."),  # by the option's text: C, not the label B
            ("responder_1", "normal", None, "#answer: A"),  # the source read nothing
        ],
    )
    res = _check("--root", str(tmp_path), "--sample", "5")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    overall = next(ln for ln in lines if ln.startswith("overall"))
    # 3 labelled: 1 agrees, 1 unparsed, 1 another letter; 1 unlabelled that tomacs reads
    assert "labelled=    3" in overall and "agree= 33.3%" in overall and "unparsed= 33.3%" in overall
    assert "unlabelled=   1, tomacs reads a letter in 1" in overall
    assert any(ln.startswith("model=big") and "agree= 50.0%" in ln for ln in lines)
    assert any(ln.startswith("model=small") and "labelled=    1" in ln for ln in lines)  # default model
    assert "B->C: 1" in res.stdout and "A->None: 1" in res.stdout and "None->A: 1" in res.stdout
    assert "options: A: bank | B: library | C: mall" in res.stdout


def test_check_reads_a_jsonl_corpus_and_names_a_bad_path(tmp_path: Path) -> None:
    f = tmp_path / "replies.jsonl"
    rows = [
        {"text": "(X) C) mall", "options": ["bank", "library", "mall"], "label": "C"},
        {"text": "(X) bank or mall", "options": ["bank", "library", "mall"], "label": "A"},
    ]
    f.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    res = _check("--jsonl", str(f))
    assert res.returncode == 0, res.stderr
    assert "agree= 50.0%" in res.stdout and "unparsed= 50.0%" in res.stdout  # the hedge is unparsed
    bad = _check("--jsonl", str(tmp_path / "missing.jsonl"))
    assert bad.returncode == 2 and "missing.jsonl is not a file" in bad.stderr
    f.write_text(json.dumps({"text": "x", "label": "A"}) + "\n")
    res = _check("--jsonl", str(f))
    assert res.returncode != 0 and "replies.jsonl:1: missing field(s) ['options']" in res.stderr
