"""Words near a question that are not its own: what a simulated reply is about besides its stem's clauses.

Why: a templated reply is about its question only through the stem's own key terms, so it restates the
stem (`text_model.restating_share`: real MAD-Follower replies put 0.02-0.04 of their words in sentences
restating the question, simulated ones 0.25-0.38; gpt-3.5 0.17-0.45 against 0.32-0.54). Real replies
are about the question in their own words: the words of the field it belongs to. A fitted profile keeps
its source's vocabulary (`fit_vocabulary`: the content words of its fitting replies), and every reply's
key-term slots take turns between the stem's key terms and the `TOPIC_WORDS` vocabulary words nearest
to the question with the reply's answer (`TopicWords`; MiniLM cosine, the stem's and options' own words
left out). Stop 82's what-if of the same rule made simulated replies harder to tell from real ones in 11
folds of 12 and brought gpt-3.5's sim-to-real transfer from 0.729 to 0.747 (docs/experiments/
2026-12-07-replies-sent-again.md). A sentence restating a clause of the stem joins it to these words too,
except at the share of words the model's replies restate in (`PhaseText.restating`, `text._topical`).

The neighbours are MiniLM's at fp32 on the CPU (`embedders.reference_minilm`), whatever the run's own
embedder and precision, so one profile writes the same texts on every machine; scores are rounded
before ranking and ties go to the alphabetically first word. A profile without a vocabulary (the paper
profiles, one fitted before stop 83) writes exactly the texts it wrote.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from tomacs.sim.text_model import TOPIC_STEM, content_words, question_stems

if TYPE_CHECKING:
    from tomacs.embedding.embedders import Embedder
    from tomacs.transcripts.schema import Debate
    from tomacs.types import Question

TOPIC_WORDS = 12  # vocabulary words kept per question and answer
# rows per batch for the vocabulary: single words all pad to one length, so big batches run full (4,348 words:
# 20 s on 2 busy cores, 168 s in batches of 8; the vectors differ by 4e-7 at most)
VOCABULARY_BATCH = 256
VOCABULARY_MIN = 3  # a word joins the vocabulary when this many fitting replies or more use it
SCORE_DIGITS = 5  # cosines are rounded to this many digits before ranking (see the module docstring)
_ALPHA = re.compile(r"[a-z]+")


def fit_vocabulary(debates: Iterable[Debate]) -> tuple[str, ...]:
    """The content words (`content_words`: rationale only, four letters or more, no stop word) of the
    fitting replies, alphabetic only, used by `VOCABULARY_MIN` replies or more; sorted."""
    counts: Counter[str] = Counter()
    for d in debates:
        for t in d.turns:
            if t.text:
                counts.update(w for w in content_words(t.text, t.answer) if _ALPHA.fullmatch(w))
    return tuple(sorted(w for w, c in counts.items() if c >= VOCABULARY_MIN))


def mixed_terms(near: Sequence[str], own: Sequence[str]) -> tuple[str, ...]:
    """The key terms a reply's slots draw from: near words and the stem's own taking turns, near first
    (a slot draws among the first twelve, `text._kw`, so about half of its picks are near words)."""
    out: list[str] = []
    for i in range(max(len(near), len(own))):
        out += [x for x in (near[i] if i < len(near) else None, own[i] if i < len(own) else None) if x]
    return tuple(out)


class TopicWords:
    """The vocabulary words nearest to each (question, answer), computed once per question.

    The vocabulary is embedded on the first question (through the job's persistent embedding cache, so
    later runs read it back); each question embeds its stem with each option's text (a question without
    options: its stem, for every answer)."""

    def __init__(self, vocabulary: Sequence[str], embedder: Embedder | None = None, k: int = TOPIC_WORDS):
        self.vocabulary = tuple(vocabulary)
        self.k = int(k)
        self._embedder = embedder
        self._word_embedder: Embedder | None = embedder
        self._vecs: np.ndarray | None = None
        self._near: dict[tuple[str, tuple[str, ...]], dict[str, tuple[str, ...]]] = {}

    def _embed(self, texts: list[str], words: bool = False) -> np.ndarray:
        """`words`: the vocabulary (one embedder in big batches), else a question's texts."""
        if self._embedder is None:
            from tomacs.embedding.embedders import reference_minilm

            self._embedder = reference_minilm()
            self._word_embedder = reference_minilm(VOCABULARY_BATCH)
        embedder = self._word_embedder if words and self._word_embedder is not None else self._embedder
        return np.asarray(embedder.embed(texts), dtype=np.float32)

    def near(self, question: Question, answer: str) -> tuple[str, ...]:
        """The `k` vocabulary words nearest to the question's stem with `answer`'s option text, none of
        whose first letters (`TOPIC_STEM`) are a stem or option word's."""
        if not self.vocabulary:
            return ()
        self.prefetch([question])
        by_answer = self._near[_key(question)]
        return by_answer.get(answer, by_answer.get("", ()))

    def prefetch(self, questions: Iterable[Question]) -> None:
        """Compute the words of every question not seen yet in one embedding call: a call costs about as
        much for one text as for a batch (`tomacs.embedding.batching` pads every batch to one shape)."""
        todo: dict[tuple[str, tuple[str, ...]], list[tuple[str, str]]] = {}
        for q in questions:
            key = _key(q)
            if key not in self._near and key not in todo:
                opts = key[1]
                todo[key] = list(zip(tuple(q.labels), opts, strict=False)) if opts else [("", "")]
        if not todo or not self.vocabulary:
            return
        if self._vecs is None:
            self._vecs = self._embed(list(self.vocabulary), words=True)
        texts = [f"{stem} {opt}".strip() for (stem, _), keys in todo.items() for _, opt in keys]
        queries = iter(self._embed(texts))
        for (stem, opts), keys in todo.items():
            own = question_stems(stem, opts)
            self._near[(stem, opts)] = {label: self._nearest(next(queries), own) for label, _ in keys}

    def _nearest(self, query: np.ndarray, own: frozenset[str]) -> tuple[str, ...]:
        assert self._vecs is not None
        scores = np.round(self._vecs @ query, SCORE_DIGITS)
        words: list[str] = []
        for i in np.argsort(-scores, kind="stable"):  # the vocabulary is sorted: ties go to the first word
            w = self.vocabulary[int(i)]
            if w[:TOPIC_STEM] not in own:
                words.append(w)
                if len(words) == self.k:
                    break
        return tuple(words)


def _key(question: Question) -> tuple[str, tuple[str, ...]]:
    return question.text, tuple(question.options or ())
