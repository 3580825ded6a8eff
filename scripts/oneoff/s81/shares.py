"""Issue 38, stop 81: how much of a reply is about its question, real against simulated, by role and phase:
topic density (`text_model.topic_density`), the share of its words in sentences `generic_like` counts, and its
words by the topic density of their sentence (none, up to 0.25, up to 0.5, over 0.5).

Usage: .venv/bin/python shares.py MODEL REAL_SOURCE SIM_RUN...
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import numpy as np

from tomacs.analysis.texts import replies_of
from tomacs.sim.text_model import (
    _ANSWER_LINE,
    OnTopic,
    generic_like,
    named_answer,
    question_stems,
    split_sentences,
    topic_counts,
)
from tomacs.transcripts import load_debates
from tomacs.transcripts.schema import Debate
from tomacs.transcripts.split import select_debates


def table(debates: Sequence[Debate], real: bool) -> str:
    by_q = {d.question_key: d for d in debates}
    rows: dict[str, list[np.ndarray]] = {}
    for r in replies_of(debates, real):
        if r.topic_density is None:
            continue
        d = by_q[r.question]
        answer = next((t.answer for t in d.turns if (t.agent, t.round) == (r.agent, r.round)), None)
        stems = question_stems(d.question or "", d.options or ())
        topic = OnTopic([], [], named_answer(d.letters, d.options or (), answer), stems, None, 0)
        text = _ANSWER_LINE.sub("", r.text)
        n = max(len(text.split()), 1)
        band = np.zeros(4)
        low = 0
        for s in split_sentences(text):
            hits, content = topic_counts(s, stems)
            w = len(s.split())
            low += w if generic_like(s, topic) else 0
            if content:
                x = hits / content
                band[0 if x == 0 else 1 if x <= 0.25 else 2 if x <= 0.5 else 3] += w
        key = f"{'adv' if r.adversarial else 'hon'}/{'r1' if r.round == 1 else 'r2+'}"
        rows.setdefault(key, []).append(np.array([r.topic_density, low / n, *(band / max(band.sum(), 1))]))
    out = []
    for k, v in sorted(rows.items()):
        m = np.mean(v, axis=0)
        out.append(f"{k} dens {m[0]:.2f} low {m[1]:.2f} bands {'/'.join(f'{x:.2f}' for x in m[2:])}")
    return " | ".join(out)


def main(model: str, real: str, runs: list[str]) -> None:
    print("real  ", table(select_debates(load_debates([real]), model), True))
    for run in runs:
        print(run.rstrip("/").split("/")[-1], table(load_debates([run]), False))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
