"""Words near a question that are not its own (`tomacs.sim.topic_words`): the vocabulary fitted by hand,
the neighbours by hand under a stub embedder, the file form, and the simulator writing them (stop 83)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from tomacs.agents.adversary import AdversarySchedule
from tomacs.execution.executor import Executor, ExecutorConfig
from tomacs.methods.base import MethodContext
from tomacs.sim.backbone import SimBackbone
from tomacs.sim.text_model import PhaseText, TextModel, fit_text_model, question_stems, restating_share
from tomacs.sim.topic_words import TOPIC_WORDS, TopicWords, fit_vocabulary, mixed_terms
from tomacs.testing.methods import ReadEveryone
from tomacs.testing.requests import plain_request
from tomacs.transcripts.schema import AgentInfo, Debate, Turn
from tomacs.types import Question

# hand-set directions: every word of a text adds its row (unknown words add nothing)
_AXES = {
    "kidney": (1.0, 0.0, 0.0),
    "renal": (0.9, 0.1, 0.0),
    "nephron": (0.8, 0.2, 0.0),
    "urine": (0.8, 0.2, 0.0),  # ties with "nephron": the first word alphabetically ranks first
    "filtration": (0.6, 0.4, 0.0),
    "lungs": (0.0, 1.0, 0.0),
    "breathing": (0.0, 0.9, 0.1),
    "alveoli": (0.1, 0.9, 0.0),
    "poetry": (0.0, 0.0, 1.0),
}


class _Stub:
    """A stand-in for MiniLM: a text's vector is the normalised sum of its known words' rows."""

    dim = 3

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        out = np.zeros((len(texts), 3), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in t.lower().replace("?", " ").split():
                out[i] += _AXES.get(w, (0.0, 0.0, 0.0))
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms > 0, norms, 1.0)


_VOCAB = tuple(sorted(_AXES))


def _question(
    text: str = "Which organ filters blood?",
    options: tuple[str, ...] = ("kidney", "lungs"),
) -> Question:
    return Question(id="q1", text=text, options=options, answer="A", benchmark="mmlu", kind="mc")


def _round_one(
    texts: list[str], question: str | None = None, options: tuple[str, ...] | None = None
) -> Debate:
    """One round of honest agents answering A, agent i writing `texts[i]`, on `question` with `options`."""
    n = len(texts)
    turns = tuple(Turn(1, a, "A", text=t) for a, t in enumerate(texts))
    return Debate(
        id="d",
        gold="A",
        letters=("A", "B"),
        n_agents=n,
        n_rounds=1,
        agents=tuple(AgentInfo(a) for a in range(n)),
        turns=turns,
        question=question,
        options=options,
    )


def test_the_vocabulary_is_the_fitting_replies_content_words_used_by_three_replies() -> None:
    """Counted once per reply (a word said twice in one reply is one use); the answer line and words with
    digits or under four letters are no content words; a word in two replies stays out."""
    texts = [
        "The kidney filters kidney blood via nephrons.\n\nAnswer: A",
        "Kidney function: blood enters the nephrons (tubule 2b).\n\nAnswer: A",
        "A kidney cleans blood.\n\nAnswer: Kidney",
        "Tubule cells; nephrons again.\n\nAnswer: B",
    ]
    d = _round_one(texts)
    # kidney: replies 1-3; blood: 1-3; nephrons: 1, 2, 4; tubule: 2 and 4 only; "filters"/"cleans": one each
    assert fit_vocabulary([d]) == ("blood", "kidney", "nephrons")


def test_near_and_own_terms_take_turns_near_first() -> None:
    assert mixed_terms(("a1", "a2", "a3"), ("b1",)) == ("a1", "b1", "a2", "a3")
    assert mixed_terms((), ("b1", "b2")) == ("b1", "b2")


def test_the_nearest_words_leave_the_questions_own_out_and_break_ties_alphabetically() -> None:
    """ "Which organ holds nephrons and makes filtrate? kidney" is the kidney row (its other words are
    unknown to the stub). Ranked by cosine: kidney 1.0 (the option's own word), renal 0.994, nephron = urine
    0.970 (nephron and filtration share their first five letters with the stem's "nephrons" and "filtrate"),
    alveoli 0.110. For "lungs", alveoli and breathing tie at 0.994: the first alphabetically ranks first."""
    stub = _Stub()
    tw = TopicWords(_VOCAB, stub, k=3)
    q = _question("Which organ holds nephrons and makes filtrate?")
    assert tw.near(q, "A") == ("renal", "urine", "alveoli")
    assert tw.near(q, "B") == ("alveoli", "breathing", "urine")
    # a question without options: its stem alone, for every answer (urine + kidney: renal 1.0, nephron 0.991,
    # filtration 0.888; kidney and urine are its own)
    stem = "How much urine do kidney cells make?"
    plain = Question(id="q2", text=stem, options=None, answer="7", benchmark="gsm8k", kind="numeric")
    assert tw.near(plain, "7") == tw.near(plain, "8") == ("renal", "nephron", "filtration")


def test_every_new_question_of_a_batch_is_embedded_in_one_call() -> None:
    stub = _Stub()
    tw = TopicWords(_VOCAB, stub)
    qs = [_question(), _question("Which organ holds the alveoli?", ("lungs", "poetry"))]
    tw.prefetch(qs)
    assert stub.calls[0] == list(_VOCAB)  # the vocabulary, once
    assert len(stub.calls) == 2 and len(stub.calls[1]) == 4  # two questions with two options each
    tw.prefetch(qs)
    tw.near(qs[1], "B")
    assert len(stub.calls) == 2  # nothing embedded again
    assert len(tw.near(qs[0], "A")) == len(_VOCAB) - 2 < TOPIC_WORDS  # all but the question's own words
    assert TopicWords((), stub).near(qs[0], "A") == ()


_STYLE = PhaseText(
    replies=10, log_words_mean=4.3, log_words_sd=0.2, generic_share=0.2, opener_share=0.1, closer_share=0.1
)
_TM = TextModel(phases={"honest": {"first": _STYLE, "later": _STYLE}})


def test_the_vocabulary_is_written_and_read_back_and_a_model_without_one_is_written_as_before() -> None:
    tm = replace(_TM, vocabulary=("nephron", "renal"))
    d = tm.to_dict()
    assert d["vocabulary"] == ["nephron", "renal"] and TextModel.from_dict(d) == tm
    assert "vocabulary" not in _TM.to_dict() and TextModel.from_dict(_TM.to_dict()).vocabulary == ()
    with pytest.raises(ValueError, match=r"^text\.vocabulary: expected a list of words$"):
        TextModel.from_dict({**d, "vocabulary": "renal"})
    with pytest.raises(ValueError, match=r"^text\.vocabulary: expected a list of words$"):
        TextModel.from_dict({**d, "vocabulary": ["renal", 3]})


def _replies(tm: TextModel, topic_words: bool = True, n: int = 40) -> list[str]:
    q = _question("Which organ of the body filters blood?", ("kidney", "lungs", "heart", "liver"))
    bb = SimBackbone("mmlu", seed=0, text_model=tm, topic_words=topic_words, topic_embedder=_Stub())
    return [bb.generate_one(replace(plain_request(f"k{i}"), question=q)).text for i in range(n)]


def test_a_vocabulary_puts_words_near_the_question_in_the_replies_and_off_writes_as_before() -> None:
    """With `backbone.topic_words=false`, or no vocabulary, a reply is the one a text model without a
    vocabulary writes; with it, replies name the near words (renal, nephron, urine: none is the
    question's)."""
    plain = _replies(_TM)
    with_vocab = replace(_TM, vocabulary=_VOCAB)
    assert _replies(with_vocab, topic_words=False) == plain
    near = _replies(with_vocab)
    named = [r for r in near if any(w in r.lower() for w in ("renal", "nephron", "urine"))]
    assert not any(w in r.lower() for r in plain for w in ("renal", "nephron", "urine"))
    assert len(named) >= len(near) // 2
    assert [r.rsplit("Answer:", 1)[-1] for r in near] == [r.rsplit("Answer:", 1)[-1] for r in plain]
    bb = SimBackbone("mmlu", seed=0, text_model=with_vocab, topic_words=False)
    assert bb.profile_info()["profile_topic_words"] == "off"
    on = SimBackbone("mmlu", seed=0, text_model=with_vocab, topic_embedder=_Stub())
    assert on.profile_info()["profile_topic_words"] == len(_VOCAB)
    assert "profile_topic_words" not in SimBackbone("mmlu", seed=0, text_model=_TM).profile_info()


def test_the_executor_has_a_batchs_questions_embedded_in_one_call() -> None:
    """Each request's batch holds one question's agents, so the executor hands the simulator the whole
    batch's questions first: one embedding call for the vocabulary, one for the six questions' options."""
    n, rounds, roles = 3, 2, ["Critic"] * 3
    stub = _Stub()
    bb = SimBackbone("mmlu", seed=0, text_model=replace(_TM, vocabulary=_VOCAB), topic_embedder=stub)
    sched = AdversarySchedule(n_agents=n, rounds=rounds, count=1, rate=None, onset_rounds=(1,))
    ex = Executor(ExecutorConfig(n, rounds, roles, seed=3), bb, sched)
    qs = [
        replace(_question(f"Which organ number {i} filters blood?", ("kidney", "lungs", "heart")), id=f"q{i}")
        for i in range(6)
    ]
    eps, _ = ex.run_batch(
        qs, ReadEveryone(MethodContext(n, rounds, roles, seed=3)), train=False, phase="eval"
    )
    assert len(eps) == 6
    assert [len(c) for c in stub.calls] == [len(_VOCAB), 18]


def _restating(restating: float | None, vocabulary: tuple[str, ...] = _VOCAB, n: int = 60) -> float:
    """The mean `restating_share` of `n` round-1 replies under a style about its question."""
    style = replace(_STYLE, topic_density=0.6, answer_rate=1.0, restating=restating)
    tm = TextModel(phases={"honest": {"first": style, "later": style}}, vocabulary=vocabulary)
    q = _question(
        "The organ that removes waste from the blood sits near the spine, and the organ that moves air "
        "sits in the chest. Which organ filters blood?",
        ("kidney", "lungs", "heart", "liver"),
    )
    bb = SimBackbone("mmlu", seed=0, text_model=tm, topic_embedder=_Stub())
    stems = question_stems(q.text, q.options or ())
    shares = [
        restating_share(bb.generate_one(replace(plain_request(f"r{i}"), question=q)).text, stems)
        for i in range(n)
    ]
    return float(np.mean([s for s in shares if s is not None]))


def test_sentences_about_the_question_restate_a_clause_alone_at_the_fitted_share() -> None:
    """Under a vocabulary, a sentence restating a clause of the stem joins it to near words, except at the
    style's fitted `restating` share: at 1 every such sentence restates alone, as without a vocabulary."""
    joined, alone, none = _restating(0.0), _restating(1.0), _restating(None)
    plain = _restating(1.0, vocabulary=())
    assert joined < alone - 0.1 and none < alone - 0.1 and plain > joined + 0.1
    assert abs(joined - none) < 0.05  # no fitted share: every sentence joined


def test_the_restating_share_is_fitted_as_the_mean_over_replies() -> None:
    """A fitted phase's `restating` is the mean `restating_share` of its replies; a transcript without the
    question's text leaves it unknown (None)."""
    stem = "The kidney removes waste from the blood near the spine. Which organ filters blood?"
    texts = [
        "The kidney removes waste from the blood near the spine. Filtration happens in nephrons here.",
        "Nephrons do the filtering work, so the answer follows from physiology.",
        "The kidney removes waste from the blood. That settles it.",
        "Physiology textbooks describe renal filtration in detail.",
        "The spine is nearby; kidney waste removal is the point.",
    ]
    d = _round_one([f"{t}\n\nAnswer: A" for t in texts], question=stem, options=("kidney", "lungs"))
    tm = fit_text_model([d])
    assert tm is not None
    stems = question_stems(stem, ("kidney", "lungs"))
    want = np.mean([restating_share(f"{t}\n\nAnswer: A", stems) for t in texts])
    assert 0.0 < want < 1.0
    got = tm.phases["honest"]["first"].restating
    assert got == pytest.approx(want, abs=1e-6)
    bare = fit_text_model([replace(d, question=None, options=None)])
    assert bare is not None and bare.phases["honest"]["first"].restating is None
