"""Issue 38, stop 68: how much a reply is about its question, real against simulated, per role and phase:
the share of the stem's content words it uses, the share of its content words that are the question's
(`tomacs.sim.text_model.topic_density`), and how many of its sentences name its answer's own text
(`answer_sentences`).

Usage: python topic.py REAL_TRANSCRIPTS MODEL SIM_RUN_DIR  (simulated side: its first 150 debates)
"""

from __future__ import annotations

import sys

import numpy as np

from tomacs.sim.text_model import (
    answer_sentences,
    answer_text,
    question_stems,
    split_sentences,
    topic_density,
)
from tomacs.transcripts import load_debates
from tomacs.transcripts.schema import Debate
from tomacs.transcripts.split import select_debates


def stats(debates: list[Debate]) -> None:
    out: dict[tuple[str, str], list[list[float]]] = {}
    for d in debates:
        opts = tuple(d.options or ())
        stem = question_stems(d.question or "")
        stems = question_stems(d.question or "", opts)
        for t in d.turns:
            if not t.text:
                continue
            role = "adversary" if d.is_adversarial(t.agent, t.round) else "honest"
            phase = "first" if t.round == 1 else "later"
            own = d.letters.index(t.answer) if t.answer in d.letters else len(opts)
            named = answer_text(opts[own]) if own < len(opts) else None
            used = question_stems(t.text)
            dens = topic_density(t.text, stems)
            row = out.setdefault((role, phase), [[], [], [], []])
            row[0].append(len(stem & used) / len(stem) if stem else np.nan)
            row[1].append(np.nan if dens is None else dens)
            row[2].append(answer_sentences(split_sentences(t.text), named) if named else np.nan)
            row[3].append(len(t.text.split()))
    for (role, phase), (cov, dens, ans, words) in sorted(out.items()):
        print(
            f"  {role:9s} {phase:5s} replies {len(cov):4d}  stem used {np.nanmean(cov):.2f}  "
            f"topic density {np.nanmean(dens):.2f}  answer sentences {np.nanmean(ans):.2f}  "
            f"words {np.mean(words):.0f}"
        )


def main() -> None:
    print("real")
    stats(select_debates(load_debates([sys.argv[1]]), sys.argv[2]))
    print("simulated")
    stats(load_debates([sys.argv[3] + "/episodes.jsonl"])[:150])


if __name__ == "__main__":
    main()
