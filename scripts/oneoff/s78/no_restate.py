"""Issue 38, stop 78, a what-if (not the simulator's code): `tomacs ...` with some sentences of every
simulated reply's rationale left out, to see how much of the simulated adversaries' excess AUC on
MAD-Follower's own questions they carry.

- WHATIF=restate: the sentences restating the question (4+ content words, 80 % or more of them the question's
  own; real qwen-max replies write 0.02-0.04 a reply, simulated ones 0.54 honest, 1.26 adversaries);
- WHATIF=letters: the sentences naming an option by its letter (real qwen-max rationales: 0.00 honest, 0.07
  adversaries; simulated 0.57 and 0.70).

Usage: WHATIF=restate|letters .venv/bin/python no_restate.py <tomacs arguments>
"""

from __future__ import annotations

import os
import re
import sys

import tomacs.sim.backbone as backbone
from tomacs.sim.text_model import question_stems, split_sentences, topic_counts

_reply = backbone.SimBackbone._reply_text
_LETTER = re.compile(r"\(([A-E])\)|\b([A-E])\s+\(|^([A-E])\b|\b(?:option|answer|choice)\s+\(?([A-E])\b")


def _plain(self, req, answer, rng):  # noqa: ANN001, ANN202
    text = _reply(self, req, answer, rng)
    q = req.question
    stems = question_stems(q.text, tuple(q.options or ()))
    head, sep, rest = text.partition("#rationale:")
    body, sep2, tail = rest.partition("#confidence")
    if not sep:
        return text
    kept = []
    for s in split_sentences(body):
        if os.environ.get("WHATIF") == "letters":
            drop = bool(_LETTER.search(s))
        else:
            hits, n = topic_counts(s, stems)
            drop = n >= 4 and hits / n >= 0.8
        if not drop:
            kept.append(s)
    return f"{head}{sep} {' '.join(kept) or body.strip()}\n{sep2}{tail}"


backbone.SimBackbone._reply_text = _plain

if __name__ == "__main__":
    from tomacs.cli import main

    sys.argv = ["tomacs", *sys.argv[1:]]
    main()
