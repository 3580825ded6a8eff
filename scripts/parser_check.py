"""The parser check: tomacs' answer parser on real multi-agent replies (MAD-Follower debates, offline).

A workflow step, not a benchmark: run it after changing tomacs/benchmarks/parsing.py, beside
tests/test_parser_corpus.py (the hand-labelled corpus the tests hold the parser to). It prints
agreement figures over every real reply, not a pass or fail; docs/deviations.md's parser row and
docs/experiments/2026-11-25-answer-parser-option-texts.md quote them.

Every turn of every debate under ``--root`` has the model's ``response_text``, the source's own
``parsed_answer`` and the question's choices. This runs ``parse_answer`` (with the question's
options, as the executor does) over each reply and prints agreement with the source's label, the
unparsed share and a confusion breakdown of the disagreements, overall and per model and role.
The source's label is a parser too and can be wrong: ``--sample N`` prints N random disagreements
(fixed seed) to check by hand, ``--dump FILE`` writes them all as JSONL.

These replies keep the debate's template, so their first line ``#answer: X`` decides nearly all of
them. ``--prose`` removes that line and reads the rest (the rationale, the model's own prose, where
it names options by letter or by text and sides with other agents): a stress test of the prose
rules against the same labels, where an unparsed reply is often right (a rationale may commit to
nothing) but another letter is a misreading, or the agent's prose and its answer line disagree.

    make parser-check                                  # every reply under $TOMACS_DATA/debates/mad-follower
    make parser-check ARGS="--sample 50 --seed 0"      # the same, plus 50 disagreements to read
    python scripts/parser_check.py --prose --root DIR  # the script itself, from the checkout's root
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, replace
from pathlib import Path

from tomacs.benchmarks.parsing import parse_answer
from tomacs.types import Question

# $TOMACS_DATA (as `make` sets it), else the shared data beside the checkout (scripts/<this file>)
DATA = Path(os.environ.get("TOMACS_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")
DEFAULT_ROOT = DATA / "debates" / "mad-follower"
_ANSWER_SLOT = re.compile(r"^\s*#\s*answer\s*:[^\n]*\n?", re.IGNORECASE | re.MULTILINE)


@dataclass(frozen=True)
class Turn:
    source: str  # run/questions/file.json
    round_index: int
    agent_id: str
    role: str
    model: str
    options: tuple[str, ...]
    label: str | None  # the source's parsed_answer
    text: str


def _options(choices: list[dict]) -> tuple[str, ...]:
    """The question's option texts in label order; both layouts the source writes are read.

    Most files list one ``{"label": "A", "text": ...}`` per option; a few early ones hold two
    entries whose texts are Python list literals (``label: "['A', ...]"``, ``text: "['bank', ...]"``).
    """
    if [c.get("label") for c in choices] == ["label", "text"]:
        labels = ast.literal_eval(choices[0]["text"])
        texts = ast.literal_eval(choices[1]["text"])
        return tuple(str(t) for _, t in sorted(zip(labels, texts, strict=True)))
    return tuple(str(c["text"]) for c in sorted(choices, key=lambda c: c["label"]))


def load_turns(root: Path) -> list[Turn]:
    turns = []
    for run in sorted(p for p in root.iterdir() if (p / "config.json").is_file()):
        cfg = json.loads((run / "config.json").read_text(encoding="utf-8"))["config"]
        default = cfg["llm"]["model"]
        models = {a["agent_id"]: a.get("model") or default for a in cfg.get("agents", [])}
        for qfile in sorted((run / "questions").glob("*.json")):
            d = json.loads(qfile.read_text(encoding="utf-8"))
            options = _options(d["question"]["choices"])
            for t in d["turns"]:
                turns.append(
                    Turn(
                        source=f"{run.name}/questions/{qfile.name}",
                        round_index=int(t["round_index"]),
                        agent_id=t["agent_id"],
                        role=t["role"],
                        model=models.get(t["agent_id"], default),
                        options=options,
                        label=t.get("parsed_answer"),
                        text=t.get("response_text") or "",
                    )
                )
    return turns


def load_jsonl(path: Path) -> list[Turn]:
    """Any other labelled corpus, one reply a line: ``text``, ``options`` (list), ``label`` (or null)."""
    turns = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        r = json.loads(line)
        missing = {"text", "options", "label"} - set(r)
        if missing:
            raise SystemExit(f"error: {path}:{lineno}: missing field(s) {sorted(missing)}")
        turns.append(
            Turn(
                source=f"{path.name}:{lineno}",
                round_index=int(r.get("round", 0)),
                agent_id=str(r.get("agent_id", "")),
                role=str(r.get("role", "-")),
                model=str(r.get("model", "-")),
                options=tuple(str(o) for o in r["options"]),
                label=r["label"],
                text=r["text"] or "",
            )
        )
    return turns


def parse_turn(turn: Turn) -> str | None:
    q = Question(id="bench", text="", options=turn.options, answer="A", benchmark="mad", kind="mc")
    return parse_answer(q, turn.text)


def _pct(a: int, b: int) -> str:
    return f"{100.0 * a / b:5.1f}%" if b else "   - "


def _summary(rows: list[tuple[Turn, str | None]]) -> str:
    labelled = [(t, g) for t, g in rows if t.label is not None]
    agree = sum(g == t.label for t, g in labelled)
    unparsed = sum(g is None for t, g in labelled)
    nolabel = [(t, g) for t, g in rows if t.label is None]
    n, other = len(labelled), len(labelled) - agree - unparsed
    read = sum(g is not None for _, g in nolabel)
    return (
        f"n={len(rows):5d} labelled={n:5d} agree={_pct(agree, n)} unparsed={_pct(unparsed, n)} "
        f"other-letter={_pct(other, n)} | unlabelled={len(nolabel):4d}, tomacs reads a letter in {read}"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=DEFAULT_ROOT, help="folder of MAD-Follower runs")
    ap.add_argument("--jsonl", type=Path, help="labelled replies: {text, options, label[, model, role]}")
    ap.add_argument("--prose", action="store_true", help="drop the '#answer:' line, read the rest")
    ap.add_argument("--sample", type=int, default=0, help="print N random disagreements to check by hand")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dump", type=Path, help="write every disagreement as JSONL here")
    ap.add_argument("--width", type=int, default=600, help="characters of each sampled reply to print")
    args = ap.parse_args(argv)
    if args.jsonl is not None:
        if not args.jsonl.is_file():
            print(f"error: {args.jsonl} is not a file; pass --jsonl <labelled replies>", file=sys.stderr)
            return 2
        turns = load_jsonl(args.jsonl)
    elif not args.root.is_dir():
        print(f"error: {args.root} is not a folder; pass --root <MAD-Follower runs>", file=sys.stderr)
        return 2
    else:
        turns = load_turns(args.root)
    if args.prose:
        turns = [replace(t, text=_ANSWER_SLOT.sub("", t.text)) for t in turns]
    rows = [(t, parse_turn(t)) for t in turns]
    what = " (prose only: '#answer:' lines removed)" if args.prose else ""
    print(f"tomacs parser on {len(rows)} real replies from {args.jsonl or args.root}{what}")
    print(f"overall            {_summary(rows)}")
    for key in ("model", "role"):
        groups: dict[str, list] = defaultdict(list)
        for t, g in rows:
            groups[getattr(t, key)].append((t, g))
        for name in sorted(groups):
            print(f"{key}={name:<22s}"[:19] + f" {_summary(groups[name])}")
    dis = [(t, g) for t, g in rows if g != t.label]
    print(f"\ndisagreements: {len(dis)} (source label -> tomacs)")
    conf = Counter((str(t.label), str(g)) for t, g in dis)
    kinds = Counter(
        "source None, tomacs letter"
        if t.label is None
        else ("tomacs unparsed" if g is None else "different letters")
        for t, g in dis
    )
    print("  " + ", ".join(f"{k}: {v}" for k, v in kinds.most_common()))
    print("  " + ", ".join(f"{a}->{b}: {v}" for (a, b), v in conf.most_common()))
    by_mr = Counter((t.model, t.role, "unparsed" if g is None else "other") for t, g in dis)
    print("  by model/role: " + ", ".join(f"{m}/{r}/{k}: {v}" for (m, r, k), v in by_mr.most_common()))
    if args.dump:
        with args.dump.open("w", encoding="utf-8") as fh:
            for t, g in dis:
                fh.write(json.dumps({**t.__dict__, "tomacs": g}, ensure_ascii=False) + "\n")
        print(f"wrote {len(dis)} disagreements to {args.dump}")
    if args.sample:
        rng = random.Random(args.seed)
        for i, (t, g) in enumerate(rng.sample(dis, min(args.sample, len(dis))), start=1):
            who = f"{t.source} r{t.round_index} {t.agent_id} ({t.model}/{t.role})"
            print(f"\n--- {i}. {who} source={t.label} tomacs={g}")
            print("options: " + " | ".join(f"{chr(65 + j)}: {o}" for j, o in enumerate(t.options)))
            print(t.text[: args.width])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
