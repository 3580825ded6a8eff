"""Stop 82's what-if inputs (issue 38): per (question text, answer letter) of a simulated run's questions,
the N vocabulary words nearest (MiniLM cosine) to the question's stem with that answer's option text, the
stem's and options' own words left out. Vocabulary: content words (alphabetic, 4 letters or more, in 3
replies or more) of the real replies of fold k's FITTING questions only (`split_questions` with the fold,
seed 0, as `sim fit-episodes --fold`). The JSON is what `topic_words.patch` reads (env S82_TOPIC): the words
take turns with the stem's key terms in every template slot.

Usage: python scripts/oneoff/s82/topic_words.py MODEL SRC k/K RUN_DIR OUT.json N
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter

import numpy as np

from tomacs.embedding.embedders import MiniLMEmbedder
from tomacs.sim.text_model import TOPIC_STEM, content_words, question_stems
from tomacs.transcripts import load_debates
from tomacs.transcripts.split import parse_fold, select_debates, split_questions


def main() -> None:
    model, src, fold, run, out, n = sys.argv[1:7]
    fit, _ = split_questions(select_debates(load_debates([src]), model), seed=0, fold=parse_fold(fold))
    counts: Counter[str] = Counter()
    for d in fit:
        for t in d.turns:
            if t.text:
                counts.update(w for w in content_words(t.text, t.answer) if re.fullmatch(r"[a-z]+", w))
    vocab = [w for w, c in counts.items() if c >= 3]
    emb = MiniLMEmbedder()
    vecs = np.asarray(emb.embed(vocab))
    questions = {}
    with open(f"{run}/episodes.jsonl") as f:
        for line in f:
            q = json.loads(line)["question"]
            questions[q["text"]] = q
    keys = [
        (text, lab, opt)
        for text, q in questions.items()
        for lab, opt in zip("ABCDEFGHIJ", q["options"], strict=False)
    ]
    qvecs = np.asarray(emb.embed([f"{text} {opt}" for text, _, opt in keys]))
    res = {}
    for (text, lab, _), qv in zip(keys, qvecs, strict=True):
        stems = question_stems(text, tuple(questions[text]["options"]))
        near = [vocab[i] for i in np.argsort(-(vecs @ qv)) if vocab[i][:TOPIC_STEM] not in stems]
        res[text + "\x00" + lab] = near[: int(n)]
    with open(out, "w") as f:
        json.dump(res, f)
    print(len(vocab), "words;", len(res), "keys")


if __name__ == "__main__":
    main()
