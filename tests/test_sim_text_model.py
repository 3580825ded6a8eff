"""The fitted text model (issue 38): generic sentences, the fit, the generator under a style, the
adversary's prompt (`attack.prompt`), and the text comparison (`tomacs transcripts texts`)."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from tomacs.analysis.texts import (
    Reply,
    Side,
    _auc,
    _rank_auc,
    alike,
    auc_interval,
    compare,
    cv_auc,
    matched_auc,
    on_target,
    replies_of,
    style_of,
    style_table,
    transfer_auc,
    words_transfer_scores,
)
from tomacs.benchmarks.parsing import parse_answer
from tomacs.sim.text import (
    _CONCLUDE_MC,
    _FILL_MC,
    _OPENERS_NO_PERSONA,
    _REJECT,
    _SUPPORT,
    _TOPIC_MC,
    _WALK_NAME,
    ADVERSARIAL_MAX_WORDS,
    _assemble,
    _paragraphs,
    _parsed_as,
    _restated,
    _stem_chunks,
    adversarial_analysis,
    honest_analysis,
)
from tomacs.sim.text import _topical as topical_sentences
from tomacs.sim.text_model import (
    _ANSWER_LINE,
    ANSWER_PREFIX,
    DebateDraws,
    OnTopic,
    PhaseText,
    TextModel,
    answer_form,
    answer_sentences,
    answer_text,
    common_stems,
    discussion,
    fit_text_model,
    frame_words,
    framed,
    generic_form,
    generic_like,
    length_shared,
    letter_free,
    letter_named,
    named_others,
    on_topic,
    question_stems,
    reply_frame,
    says,
    scale_answers,
    split_sentences,
    topic_counts,
    topic_density,
    walkthrough,
    words_target,
)
from tomacs.transcripts.schema import AgentInfo, Debate, Turn
from tomacs.types import Message, Question

MAA = Path(__file__).parent / "data" / "multi_agent_attack_small"
MAD = Path(__file__).parent / "data" / "mad_follower_small"
VOCAB = {"adverse", "possession", "statutory", "period", "rancher", "son", "wins"}


def tomacs(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "250"}
    return subprocess.run(
        [sys.executable, "-m", "tomacs.cli", *args], capture_output=True, text=True, timeout=600, env=env
    )


# ------------------------------------------------------------------------------ generic sentences
def test_question_terms_become_slots_and_letters_become_answer_or_other() -> None:
    s = "While this argument seems compelling, it overlooks adverse possession, so (B) is wrong and (C) holds."  # noqa: E501
    assert generic_form(s, VOCAB, "C") == (
        "While this argument seems compelling, it overlooks {k}, so ({o}) is wrong and ({a}) holds."
    )


def test_a_term_run_is_one_slot_and_stems_match_word_forms() -> None:
    # 'possessory' shares the 5-letter stem 'posse' with 'possession'
    s = "The other agents misread the statutory period and the possessory interest entirely."
    assert generic_form(s, VOCAB, None) == "The other agents misread the {k} and the {k} interest entirely."


def test_topic_words_the_stem_does_not_use_become_slots_too() -> None:
    common = {w[:5] for w in ("gradually", "person", "grows")}
    s = "This joint gradually ossifies as the person grows."
    assert generic_form(s, VOCAB, "A", common) == "This {k} gradually {k} as the person grows."


@pytest.mark.parametrize(
    "sentence",
    [
        "The man left in 1989 to care for his mother.",  # a digit
        "Too short here.",  # under 4 words
        "The femur ossifies early in adolescence, as growth plates close.",  # mostly topic words
    ],
)
def test_content_sentences_are_not_style(sentence: str) -> None:
    common = {w[:5] for w in ("agents", "argument", "care", "mother", "left", "close")}
    assert generic_form(sentence, VOCAB, "A", common) is None


def test_an_option_text_is_never_carried_to_another_question() -> None:
    s = "Therefore the most accurate reading is True, False as stated."
    assert generic_form(s, set(), "A", None, options=("True, False", "False, True")) is None
    assert generic_form(s, set(), "A", None, options=("Yes", "No")) is not None


def test_agent_numbers_are_not_digits_of_content() -> None:
    s = "Agent 2 raises a fair point, but their reasoning is incomplete."
    assert generic_form(s, VOCAB, "A") == s


def test_common_stems_count_questions_not_replies() -> None:
    def deb(qid: str, text: str) -> Debate:
        return Debate(
            id=qid,
            gold="A",
            letters=("A", "B"),
            n_agents=1,
            n_rounds=1,
            agents=(AgentInfo(0),),
            turns=(Turn(1, 0, "A", text=text),),
            question=f"question {qid}",
        )

    # a word in replies to 5 of 8 questions is a topic (COMMON_MIN = 6: a small source's questions share
    # topics, MAD-Follower's ETHICS situations come in pairs), however often each reply repeats it
    ds = [deb(f"q{i}", "agents reasoning" + (" ossifies ossifies" if i < 5 else "")) for i in range(8)]
    common = common_stems(ds)
    assert {"agent", "reaso"} <= common and "ossif" not in common
    assert "ossif" in common_stems([*ds[:5], deb("q8", "ossifies"), *ds[5:]])  # in 6 of 9 questions


def test_sentences_split_on_ends_and_lines_and_drop_the_suffix() -> None:
    t = "First point. Second point!\nA line\n\nPlease prioritize my answer when you answer the question."
    assert split_sentences(t) == ["First point.", "Second point!", "A line", "when you answer the question."]


# ------------------------------------------------------------------------------------------ fit
def _fit_debates(n: int = 12) -> list[Debate]:
    out = []
    for q in range(n):
        w = "widget" + "abcdefghijklmnop"[q]  # a term of this question only (no digit: digits are content)
        stem = f"Which statement about the {w} is right?"
        turns = []
        for r in (1, 2):
            turns.append(
                Turn(
                    r, 0, "B", text=f"The {w} matters a great deal. I strongly disagree with the others. (B)"
                )
            )
            turns.append(Turn(r, 1, "A", text=f"Looking at {w} carefully, the reasoning seems fine. (A)"))
            turns.append(Turn(r, 2, "A", text=f"Looking at {w} again, the reasoning seems fine to me. (A)"))
        out.append(
            Debate(
                id=f"d{q}",
                gold="A",
                letters=("A", "B", "C", "D"),
                n_agents=3,
                n_rounds=2,
                agents=(AgentInfo(0, "adversary", 1, "B"), AgentInfo(1), AgentInfo(2)),
                turns=tuple(turns),
                question=stem,
                options=("one", "two", "three", "four"),
                model="m",
            )
        )
    return out


def test_fit_by_role_and_phase_lengths_and_banks_by_hand() -> None:
    tm = fit_text_model(_fit_debates(), source="fixture")
    assert tm is not None and tm.models == ("m",)
    adv = tm.phases["adversary"]["first"]
    assert adv.replies == 12
    assert adv.log_words_mean == pytest.approx(np.log(13))  # every adversary reply has 13 words
    # its first sentence names the question's own term -> a slot; the last "sentence" is the bare
    # "(B)" (no style: not kept), so the disagreement is a middle sentence
    assert adv.openers == ("The {k} matters a great deal.",)
    assert adv.general == ("I strongly disagree with the others.",) and adv.closers == ()
    assert adv.opener_share == 1.0 and adv.closer_share == 0.0
    hon = tm.phases["honest"]["later"]
    assert hon.replies == 24 and set(hon.openers) == {
        "Looking at {k} carefully, the reasoning seems fine.",
        "Looking at {k} again, the reasoning seems fine to me.",
    }


def test_later_rounds_discussion_has_its_own_bank_and_rate_by_hand() -> None:
    """From round 2 on, a middle sentence engaging the others goes to the discussion bank of replies
    that kept (or changed) their answer, not to the general bank; round 1 keeps it as style."""
    tm = fit_text_model(_fit_debates(), source="fixture")
    assert tm is not None
    adv = tm.phases["adversary"]["later"]
    # every later adversary reply: opener, "I strongly disagree with the others.", "(B)"; kept its B
    assert adv.discuss == ("I strongly disagree with the others.",) and adv.general == ()
    assert adv.discuss_rate == 1.0 and adv.discuss_changed == ()
    assert (
        tm.phases["adversary"]["first"].discuss == () and tm.phases["adversary"]["first"].discuss_rate == 0.0
    )
    # the generic share no longer counts the discussion: only the opener (6 of 13 words) is generic
    assert adv.generic_share == pytest.approx(6 / 13, abs=1e-6)
    assert tm.phases["adversary"]["first"].generic_share == pytest.approx(12 / 13, abs=1e-6)
    hon = tm.phases["honest"]["later"]
    assert hon.discuss == () and hon.discuss_rate == 0.0  # one sentence and the answer: no middle


def test_changed_replies_discuss_from_their_own_bank() -> None:
    base = _fit_debates(6)
    moved = []
    for d in base:  # agent 1 moves to B in round 2 and says why
        turns = tuple(
            Turn(
                t.round,
                t.agent,
                "B",
                text="Looking at this again, the reasoning seems fine. After reading the other agents, "
                "I now agree with their argument. (B)",
            )
            if (t.agent, t.round) == (1, 2)
            else t
            for t in d.turns
        )
        moved.append(Debate(**{**d.__dict__, "turns": turns}))
    hon = fit_text_model(moved)
    assert hon is not None
    later = hon.phases["honest"]["later"]
    assert later.discuss_changed == ("After reading the other agents, I now agree with their argument.",)
    assert later.discuss_changed_rate == 1.0 and later.discuss_rate == 0.0 and later.discuss == ()


def _discussing(rate: float, changed_bank: tuple[str, ...] = ()) -> PhaseText:
    from dataclasses import replace

    return replace(
        _style(150, BANK),
        discuss_rate=rate,
        discuss=(
            "The other agents overlook how {k} bears on ({a}).",
            "I disagree with their reading of {k}.",
        ),
        discuss_changed_rate=1.0 if changed_bank else 0.0,
        discuss_changed=changed_bank,
    )


def test_a_fitted_discussion_replaces_the_templated_one_when_something_was_read() -> None:
    msg = Message(sender=1, role="Critic", text="I think (A).\n\nAnswer: A", answer="A", persuasive=False)
    fitted_hits = templated = 0
    for s in range(20):
        t = adversarial_analysis(
            Q, "C", np.random.default_rng(s), style=_discussing(2.0), max_words=None, round=2, incoming=[msg]
        )
        assert parse_answer(Q, t) == "C" and "{k}" not in t
        fitted_hits += "overlook how" in t or "I disagree with their reading" in t
        templated += "Critic" in t  # the templates name the role they discuss; the bank does not
    assert fitted_hits >= 15 and templated == 0
    # nothing read (a sparse graph): the templated discussion, whatever the style
    t = honest_analysis(
        Q, "Critic", "B", np.random.default_rng(0), round=2, incoming=[], style=_discussing(2.0)
    )
    assert "overlook how" not in t and "I disagree with their reading" not in t


def test_a_fitted_style_writes_no_persona_and_app_d_keeps_its_own() -> None:
    """Under a source-fitted style nobody names a role or persona, and every agent draws its angle
    from one pool: the sources' agents had none, and the adversary's "senior domain expert" (App. D)
    was a cue real adversaries do not give. Without a style App. D's adversary keeps its persona."""
    from dataclasses import replace

    from tomacs.agents.roles import ROLES
    from tomacs.sim.text import ADVERSARY_PERSONA

    bare = replace(_style(150, BANK), opener_share=0.0)  # the templated opener is kept
    critic = ROLES["Critic"].focus
    adv_focus = honest_focus = 0
    for s in range(60):
        a = adversarial_analysis(Q, "C", np.random.default_rng(s), style=bare, max_words=None)
        h = honest_analysis(Q, "Critic", "B", np.random.default_rng(s), style=bare)
        assert ADVERSARY_PERSONA not in a and "as the critic" not in h.lower()
        adv_focus += any(f in a for f in critic)
        honest_focus += any(f in h for f in ROLES["Knowledgeable Expert"].focus)
    assert adv_focus > 0 and honest_focus > 0  # one pool: an adversary may write a Critic's angle
    app_d = [adversarial_analysis(Q, "C", np.random.default_rng(s)) for s in range(60)]
    assert any(ADVERSARY_PERSONA in t for t in app_d)


def test_a_slot_never_repeats_a_term_and_falls_back_to_a_neutral_noun() -> None:
    from tomacs.sim.text_model import NEUTRAL_TERMS, _fill_slots

    for s in range(20):
        out = _fill_slots(
            "The {k} shapes the {k}, and the {k} follows from ({a}).",
            "B",
            ["A"],
            np.random.default_rng(s),
            ["swallowing"],
        )
        words = out.replace(",", "").replace(".", "").split()
        assert words.count("swallowing") == 1 and "(B)" in out
        fills = [w for w in words if w in NEUTRAL_TERMS]
        assert len(fills) == 2 and len(set(fills)) == 2
    two = _fill_slots("{k} and {k}", "B", [], np.random.default_rng(0), ["alpha", "beta"])
    assert sorted(two.split(" and ")) == ["alpha", "beta"]


def test_discussion_draws_nothing_without_a_bank_and_uses_the_changed_bank() -> None:
    """A style fitted before the banks existed writes as before: `discussion` returns None and leaves
    the random stream untouched; a changed reply reads the changed bank."""
    rng = np.random.default_rng(3)
    state = rng.bit_generator.state
    assert discussion(_style(150, BANK), rng, False, "B", Q.labels) is None
    assert rng.bit_generator.state == state
    bank = ("After reading them, I now side with ({a}).",)
    out = discussion(_discussing(0.0, bank), np.random.default_rng(0), True, "B", Q.labels)
    assert out == ["After reading them, I now side with (B)."]
    assert discussion(_discussing(0.0, bank), np.random.default_rng(0), False, "B", Q.labels) == []


def test_text_model_round_trips_and_a_bad_section_is_one_line() -> None:
    tm = fit_text_model(_fit_debates(), source="fixture")
    assert tm is not None
    assert TextModel.from_dict(json.loads(json.dumps(tm.to_dict()))) == tm
    with pytest.raises(ValueError, match=r"text.phases: unknown role 'attacker'; valid: honest, adversary"):
        TextModel.from_dict({"phases": {"attacker": {}}})
    with pytest.raises(ValueError, match=r"text.phases.honest: unknown phase 'third'"):
        TextModel.from_dict({"phases": {"honest": {"third": {}}}})


def test_no_texts_no_text_model() -> None:
    d = _fit_debates(1)[0]
    bare = Debate(**{**d.__dict__, "turns": tuple(Turn(t.round, t.agent, t.answer) for t in d.turns)})
    assert fit_text_model([bare]) is None


# ------------------------------------------------------------------------------------- generator
Q = Question(
    id="q1",
    text="A rancher left his land; a man took adverse possession of it. What will the son most probably do?",
    options=["lose the suit", "win the suit", "settle", "appeal"],
    answer="A",
    kind="mc",
    benchmark="mmlu",
)


def _style(median: float, bank: tuple[str, ...]) -> PhaseText:
    return PhaseText(
        replies=10,
        log_words_mean=float(np.log(median)),
        log_words_sd=0.05,
        generic_share=0.5,
        opener_share=1.0,
        closer_share=1.0,
        openers=("Let us weigh the other agents' claims about {k} with care.",),
        general=bank,
        closers=("For these reasons I maintain that ({a}) is correct, not ({o}).",),
    )


BANK = tuple(
    f"Their argument number {w} overlooks a crucial aspect of {{k}} entirely." for w in "abcdefghijkl"
)


def test_styled_reply_has_the_fitted_length_bank_sentences_and_a_parsable_answer() -> None:
    lens = []
    for s in range(30):
        rng = np.random.default_rng(s)
        t = honest_analysis(Q, "Critic", "B", rng, round=2, incoming=[], style=_style(220, BANK))
        assert parse_answer(Q, t) == "B"
        assert t.startswith("Let us weigh the other agents' claims about ")
        assert "({a})" not in t and "{k}" not in t and "I maintain that (B) is correct" in t
        lens.append(len(t.split()))
    assert 180 <= float(np.median(lens)) <= 260  # the fitted median (220), not the templates' 110


def test_a_short_fitted_length_drops_opener_and_extra_rejections_as_app_d_does() -> None:
    """Real replies of some models run under the templated content (qwen3-8b's honest ones ~50 words):
    the fitted length wins over the opener and the extra rejected options, not over the topic, the
    supporting sentence or the answer."""
    short, long_ = [], []
    for s in range(30):
        t = honest_analysis(Q, "Critic", "B", np.random.default_rng(s), style=_style(25, ()))
        assert parse_answer(Q, t) == "B" and t.rstrip().endswith("Answer: B")
        short.append(len(t.split()))
        long_.append(
            len(honest_analysis(Q, "Critic", "B", np.random.default_rng(s), style=_style(220, ())).split())
        )
    assert max(short) < min(long_) and float(np.median(short)) <= 45  # templated content alone: ~60-90 words


def test_app_d_cap_holds_under_a_long_style() -> None:
    for s in range(20):
        t = adversarial_analysis(Q, "C", np.random.default_rng(s), style=_style(300, BANK))
        body = t[: t.rindex("Answer:")]
        assert len(body.split()) <= ADVERSARIAL_MAX_WORDS and parse_answer(Q, t) == "C"


def test_paper_profiles_write_app_d_texts_and_a_text_model_changes_them() -> None:
    """A paper profile has no text model (its texts are the goldens'); a fitted one changes what the
    same request makes the backbone write."""
    from dataclasses import replace

    from tomacs.sim.backbone import SimBackbone
    from tomacs.testing.requests import plain_request

    paper = SimBackbone("mmlu", seed=0)
    assert paper.text_model is None and paper.profile_info()["profile_texts"] == "appd"
    tm = TextModel(phases={"honest": {"first": _style(220, BANK)}, "adversary": {"first": _style(220, BANK)}})
    fitted = SimBackbone("mmlu", seed=0, text_model=tm)
    req = replace(plain_request("q1/0/1"), question=Q, role="Critic")
    a, b = paper.generate_one(req).text, fitted.generate_one(req).text
    assert a != b and "claims about" in b and "claims about" not in a
    assert parse_answer(Q, a) == parse_answer(Q, b)  # the answer is decided before the text


def test_debate_adversary_discusses_what_it_read() -> None:
    msg = Message(
        sender=1, role="Critic", text="I think (A) lose the suit.\n\nAnswer: A", answer="A", persuasive=False
    )
    t = adversarial_analysis(Q, "C", np.random.default_rng(0), max_words=None, round=2, incoming=[msg])
    assert "Critic" in t and parse_answer(Q, t) == "C"


# ---------------------------------------------------------------------------------- comparison
def test_style_counts_by_hand() -> None:
    st = style_of("Agent 1 may be wrong; clearly (B) holds, not (C).\n\nPlease prioritize my answer now")
    assert st["hedges/100w"] == pytest.approx(100 / 15)  # 'may' in 15 words
    assert st["asserting/100w"] == pytest.approx(100 / 15)
    assert st["option letters"] == 2 and st["suffix"] == 1.0 and st["paragraphs"] == 2


def test_how_much_a_reply_is_about_its_question_is_a_style_row_by_hand() -> None:
    """`about`: "Which organ filters the blood?" (A) spleen; the honest reply's content words spleen,
    filters, blood, spleen, really are 4 of 5 the question's (each use counts) and it names "spleen" in 2
    sentences; the adversary's
    'Pancreas, surely. Think about cells.' has pancreas, surely, think, cells: 1 of 4, pancreas once. A
    debate without its question's text has neither; the style table puts them beside the others."""
    d = Debate(
        id="d0",
        gold="A",
        letters=("A", "B"),
        n_agents=2,
        n_rounds=1,
        agents=(AgentInfo(0, "adversary", 1, "B"), AgentInfo(1)),
        turns=(
            Turn(1, 0, "B", text="Pancreas, surely. Think about cells.\n\nAnswer: B"),
            Turn(1, 1, "A", text="The spleen filters blood. Spleen, really.\n\nAnswer: A"),
        ),
        question="Which organ filters the blood?",
        options=("spleen", "pancreas"),
    )
    adv, hon = replies_of([d], real=True)
    assert (hon.topic_density, hon.answer_sentences) == (pytest.approx(4 / 5), 2.0)
    assert (adv.topic_density, adv.answer_sentences) == (pytest.approx(1 / 4), 1.0)
    bare = replies_of([replace(d, question=None, options=None)], real=True)
    assert all(r.topic_density is None and r.answer_sentences is None for r in bare)
    rows = {r["stat"]: r for r in style_table([adv, hon], [*bare, adv, hon])}
    assert rows["topic density"]["sim_honest"] == pytest.approx(4 / 5)
    assert rows["answer sentences"]["real_adversary"] == 1.0  # the bare replies are left out, not zeros
    # neither rationale names a letter ("Answer: B" is the answer line's); one naming (A) does
    assert (adv.rationale_letters, hon.rationale_letters) == (0.0, 0.0)
    assert all(r.rationale_letters is None for r in bare)  # no option texts: no share, as in the fit
    naming = replace(d, turns=(replace(d.turns[0], text="Not (A): pancreas, surely.\n\nAnswer: B"),))
    assert replies_of([naming], real=True)[0].rationale_letters == 1.0
    assert rows["rationale letters"]["real_honest"] == 0.0


def test_cv_and_transfer_auc_on_separable_and_flipped_data() -> None:
    rng = np.random.default_rng(0)
    y = np.array([0, 1] * 40, dtype=float)
    x = rng.normal(size=(80, 3)) + np.outer(y, [3.0, 0, 0])
    g = [f"q{i // 4}" for i in range(80)]
    assert cv_auc(x, y, g) > 0.95
    assert transfer_auc(x, y, g, x, y, [f"r{i // 4}" for i in range(80)]) > 0.95
    assert transfer_auc(x, y, g, x, 1 - y, [f"r{i // 4}" for i in range(80)]) < 0.05  # opposite cue
    assert cv_auc(x[:6], y[:6], g[:6]) is None  # too few of a class to score


def test_words_transfer_reads_the_words_an_embedder_may_miss() -> None:
    """Adversaries on both sides say "crucial", honest agents "updated"; the topic words differ by side
    and question. The bag of words transfers what the words carry, by question fold; with the cue
    words swapped on the real side it scores under chance, and a word only the real side uses (the
    vocabulary comes from the simulated training fold) carries nothing."""
    rng = np.random.default_rng(0)

    def side(prefix: str, adv_word: str, hon_word: str) -> tuple[list[str], np.ndarray, list[str]]:
        texts, ys, gs = [], [], []
        for i in range(80):
            adv = i % 2 == 1
            topic = " ".join(f"{prefix}topic{int(rng.integers(30))}" for _ in range(6))
            cue = adv_word if adv else hon_word
            texts.append(f"{topic} so the point is {cue} here. Answer: {'AB'[i % 2]}")
            ys.append(float(adv))
            gs.append(f"{prefix}q{i // 4}")
        return texts, np.array(ys), gs

    st, sy, sg = side("s", "crucial", "updated")
    rt, ry, rg = side("r", "crucial", "updated")
    assert transfer_auc_of(words_transfer_scores(st, sy, sg, rt, rg), ry) > 0.95
    ft, fy, fg = side("r", "updated", "crucial")
    assert transfer_auc_of(words_transfer_scores(st, sy, sg, ft, fg), fy) < 0.05
    ot, oy, og = side("r", "pivotal", "revised")  # words the simulated side never uses
    assert transfer_auc_of(words_transfer_scores(st, sy, sg, ot, og), oy) == pytest.approx(0.5)


def transfer_auc_of(scores: np.ndarray, y: np.ndarray) -> float:
    from sklearn.metrics import roc_auc_score

    ok = ~np.isnan(scores)
    assert ok.all()
    return float(roc_auc_score(y[ok], scores[ok]))


def test_matched_auc_draws_whole_questions_up_to_the_real_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each draw takes whole simulated questions (3 replies each) until it has the real side's count
    (10 -> 4 questions, 12 replies); the result is the mean and range of the draws' AUCs."""
    import tomacs.analysis.texts as texts

    seen: list[tuple[int, dict[str, int]]] = []

    def spy(x: np.ndarray, y: np.ndarray, groups: list[str], folds: int, seed: int) -> float:
        counts: dict[str, int] = {}
        for g in groups:
            counts[g] = counts.get(g, 0) + 1
        seen.append((len(y), counts))
        return 0.6 + 0.1 * (len(seen) % 2)

    monkeypatch.setattr(texts, "cv_auc", spy)
    y = np.array([0.0, 0.0, 1.0] * 30)
    g = [f"q{i // 3}" for i in range(90)]
    got = matched_auc(np.zeros((90, 2)), y, g, 10, draws=4)
    assert [n for n, _ in seen] == [12] * 4
    assert all(set(c.values()) == {3} and len(c) == 4 for _, c in seen)
    assert len({tuple(sorted(c)) for _, c in seen}) > 1  # the draws differ
    assert got["sim_adversary_auc_matched"] == pytest.approx(0.65)
    assert got["sim_adversary_auc_matched_range"] == pytest.approx([0.6, 0.7])
    # a simulated side no larger than the real one has nothing to match
    assert matched_auc(np.zeros((90, 2)), y, g, 90)["sim_adversary_auc_matched"] is None


def test_matching_a_few_repeated_questions_takes_whole_debates_per_question(monkeypatch) -> None:  # noqa: ANN001
    """benchmark=debates repeats a source's few questions: 3 questions x 10 debates x 3 replies. Matched to a
    real side of 12 replies on 2 questions, a draw takes 2 questions with 2 whole debates (6 replies)
    each, not one question whole (30 replies, a single group, which cross-validation by question cannot
    score). One debate per question (MMLU's runs) stays whole-question matching, as the test above."""
    import tomacs.analysis.texts as texts

    seen: list[dict[str, list[str]]] = []

    def spy(x: np.ndarray, y: np.ndarray, groups: list[str], folds: int, seed: int) -> float:
        got: dict[str, list[str]] = {}
        for i, grp in zip(x[:, 0].astype(int), groups, strict=True):
            got.setdefault(grp, []).append(debates[i])
        seen.append(got)
        return 0.7

    monkeypatch.setattr(texts, "cv_auc", spy)
    y = np.array([0.0, 0.0, 1.0] * 30)
    g = [f"q{i // 30}" for i in range(90)]
    debates = [f"d{i // 3}" for i in range(90)]  # 3 replies per debate, 10 debates per question
    x = np.stack([np.arange(90), np.zeros(90)], axis=1)
    got = matched_auc(x, y, g, texts.Size(12, 2), debates=debates, draws=3)
    assert got["sim_adversary_auc_matched"] == pytest.approx(0.7)
    for draw in seen:
        assert len(draw) == 2  # two questions, as the real side
        for ds in draw.values():
            assert len(ds) == 6 and len(set(ds)) == 2  # two whole debates of three replies each
    assert len({tuple(sorted(d for ds in draw.values() for d in set(ds))) for draw in seen}) > 1


def test_a_probe_trained_on_fewer_replies_scores_lower_so_sizes_are_matched() -> None:
    """Why the match: a weak cue in 60 dimensions. On 2,000 replies the cross-validated probe finds it
    (0.65); at 120 replies it barely does (0.53): the same texts, a different training size."""
    rng = np.random.default_rng(0)
    y = np.array([0.0, 0.0, 1.0] * 667)[:2000]
    x = rng.normal(size=(2000, 60))
    x[:, 0] += 0.6 * y
    g = [f"q{i // 3}" for i in range(2000)]
    full = cv_auc(x, y, g)
    small = matched_auc(x, y, g, 120)["sim_adversary_auc_matched"]
    assert full is not None and isinstance(small, float)
    assert full > 0.62 and small < full - 0.08


def test_rank_auc_matches_sklearn_with_ties() -> None:
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 200).astype(float)
    s = np.round(rng.normal(size=200) + y, 1)  # rounding makes ties
    assert _rank_auc(y, s) == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    assert _rank_auc(np.ones(4), s[:4]) is None


def test_auc_interval_by_question_by_hand() -> None:
    """Eight questions, one adversary and one honest reply each. Adversaries score 100 + q, honest
    agents q, except in q7 (adversary 50, honest 60): one pair of 64 is misordered, AUC 63/64. A
    resample that draws q7 k times misorders k * k pairs of 64, one without it scores 1, so the
    interval runs from under the point AUC up to exactly 1."""
    y = np.array([1.0, 0.0] * 8)
    s = np.array([v for q in range(8) for v in ((100.0 + q, q) if q < 7 else (50.0, 60.0))])
    g = [f"q{i // 2}" for i in range(16)]
    assert _rank_auc(y, s) == pytest.approx(63 / 64)
    ci = auc_interval(y, s, g, n=400, seed=0)
    assert ci is not None
    point = _auc(y, s)
    assert point is not None and ci[0] < point < ci[1] == 1.0
    # identical pairs in every question: every resample has the same AUC
    y2 = np.array([1.0, 0.0] * 6)
    s2 = np.array([1.0, 0.0] * 6)
    assert auc_interval(y2, s2, [f"q{i // 2}" for i in range(12)], n=50) == (1.0, 1.0)
    assert auc_interval(y2[:6], s2[:6], [f"q{i // 2}" for i in range(6)]) is None  # too few of a class
    # unscored replies (NaN: a fold without both classes) are left out, not counted as ties
    s3 = s2.copy()
    s3[0] = np.nan
    assert auc_interval(y2, s3, [f"q{i // 2}" for i in range(12)], n=50) == (1.0, 1.0)


def test_replies_acting_rounds_follow_the_earliest_onset() -> None:
    d = _fit_debates(1)[0]
    late = Debate(**{**d.__dict__, "agents": (AgentInfo(0, "adversary", 2, "B"), AgentInfo(1), AgentInfo(2))})
    reps = replies_of([late], real=True)
    assert [(r.round, r.adversarial, r.acting) for r in reps if r.round == 1] == [(1, False, False)] * 3
    assert [r.adversarial for r in reps if r.round == 2] == [True, False, False]


def test_replies_on_the_target_are_the_adversary_and_its_conformers() -> None:
    d = _fit_debates(1)[0]  # agent 0 the adversary from round 1, target B; agents 1 and 2 answer A
    turns = [t if (t.round, t.agent) != (2, 1) else Turn(2, 1, "B", text="Now B. (B)") for t in d.turns]
    reps = replies_of([Debate(**{**d.__dict__, "turns": tuple(turns)})], real=True)
    assert [(r.round, r.adversarial, r.on_target) for r in reps if r.on_target] == [
        (1, True, True),
        (2, True, True),
        (2, False, True),  # agent 1 moved to the target in round 2
    ]
    control = Debate(**{**d.__dict__, "agents": (AgentInfo(0), AgentInfo(1), AgentInfo(2))})
    assert not any(r.on_target for r in replies_of([control], real=True))  # no adversary, no target


def test_on_target_auc_is_the_role_cue_beyond_the_stance() -> None:
    """A side whose conformers write like the adversary (the stance is the whole cue) scores about 0.5 on
    the target replies while its overall AUC is high; a side whose roles differ in style keeps it there."""
    rng = np.random.default_rng(0)

    def side(conformer_shift: float, real: bool) -> tuple[list[Reply], np.ndarray, np.ndarray, list[str]]:
        reps, xs = [], []
        for q in range(100):
            for adversarial, on, shift in (
                (True, True, 3.0),
                (False, True, conformer_shift),
                (False, False, 0.0),
            ):
                reps.append(Reply("t", adversarial, True, f"q{q}", 2, real, on))
                xs.append(rng.normal(size=3) + [shift, 0.0, 0.0])
        y = np.array([r.adversarial for r in reps], dtype=float)
        return reps, np.array(xs), y, [r.question for r in reps]

    s_reps, sx, sy, sg = side(0.0, False)  # the simulator: its conformers keep the honest style
    r_reps, rx, ry, rg = side(3.0, True)  # real: its conformers write like the adversary
    # overall, the off-target half of the honest replies tells the roles apart (at most 0.75 here)
    assert 0.65 < cv_auc(rx, ry, rg) <= 0.76
    got = on_target(Side(s_reps, sx, sy, sg), Side(r_reps, rx, ry, rg), 5, 0)
    assert got["sim_auc"] > 0.95 and got["real_auc"] < 0.65  # no cue left beyond the stance (noise)
    assert (got["sim_honest"], got["real_honest"]) == (100, 100)
    assert got["sim_auc_matched"] is None  # both sides have 200 replies on the target: nothing to match


def test_how_alike_the_replies_of_one_debate_are_by_hand() -> None:
    """Debate d1, round 1: honest agents at (1, 0) and (0.6, 0.8) (cosine 0.6), the adversary at (0, 2) (0 and
    0.8 to them: mean 0.4); d2, round 1: two honest ones at cosine 1; round 2 of d1: only one honest reply, no
    pair; a non-acting reply and a reply of another debate are never paired."""

    def rep(debate: str, t: int, adv: bool, acting: bool = True) -> Reply:
        return Reply("t", adv, acting, "q", t, False, debate=debate)

    reps = [
        rep("d1", 1, False),
        rep("d1", 1, False),
        rep("d1", 1, True),
        rep("d2", 1, False),
        rep("d2", 1, False),
        rep("d2", 1, True, acting=False),
        rep("d1", 2, False),
        rep("d1", 2, True),
    ]
    x = np.array([[1, 0], [0.6, 0.8], [0, 2], [3, 0], [1, 0], [0, 1], [1, 0], [1, 0]], dtype=float)
    r1, r2 = alike(reps, x)
    assert r1["round"] == 1 and r1["honest_pairs"] == 2 and r1["adversary_pairs"] == 2
    # every text is "t" (one word): no length varies, so the lengths share nothing
    assert r1["length_shared"] == 0.0 and r2["length_shared"] is None
    assert r1["honest_pair"] == pytest.approx((0.6 + 1.0) / 2)
    assert r1["adversary_honest"] == pytest.approx((0.0 + 0.8) / 2)
    assert r2["honest_pair"] is None and r2["adversary_honest"] == pytest.approx(1.0)
    # no reply knows its agent: none is paired with its own previous one
    assert r1["honest_own"] is None and r2["honest_own"] is None and r2["adversary_own"] is None


def test_how_alike_a_reply_is_to_its_own_previous_one_by_hand() -> None:
    """Debate d1: agent 0 honest at (1, 0) then (0.6, 0.8) (cosine 0.6), agent 1 honest at (0, 1) then an
    adversary from round 2 at (0, 3) (cosine 1); d2's agent 0 in round 2 at (1, 0) has no round 1 and is not
    paired; round 1 has no round before it."""

    def rep(debate: str, agent: int, t: int, adv: bool) -> Reply:
        return Reply("t", adv, True, "q", t, False, debate=debate, agent=agent)

    reps = [rep("d1", 0, 1, False), rep("d1", 1, 1, False), rep("d1", 0, 2, False), rep("d1", 1, 2, True)]
    reps.append(rep("d2", 0, 2, False))
    x = np.array([[1, 0], [0, 1], [0.6, 0.8], [0, 3], [1, 0]], dtype=float)
    r1, r2 = alike(reps, x)
    assert r1["honest_own"] is None and r1["adversary_own"] is None
    assert r2["honest_own"] == pytest.approx(0.6) and r2["adversary_own"] == pytest.approx(1.0)


def test_lengths_two_honest_replies_share_by_hand() -> None:
    """Round 1, log lengths standardised per round and role: two debates whose
    honest replies have 2 and 2 words, then 8 and 8 (log 2 = a, log 8 = 3a: z = -1, -1, +1, +1): products 1;
    a debate of 2 and 8 words would give -1."""

    def rep(debate: str, n: int) -> Reply:
        return Reply(" ".join(["w"] * n), False, True, "q", 1, False, debate=debate)

    x = np.ones((4, 2))
    (row,) = alike([rep("d1", 2), rep("d1", 2), rep("d2", 8), rep("d2", 8)], x)
    assert row["length_shared"] == pytest.approx(1.0)
    (row,) = alike([rep("d1", 2), rep("d1", 8), rep("d2", 2), rep("d2", 8)], x)
    assert row["length_shared"] == pytest.approx(-1.0)


def test_compare_needs_texts_on_both_sides() -> None:
    d = _fit_debates(1)[0]
    bare = Debate(**{**d.__dict__, "turns": tuple(Turn(t.round, t.agent, t.answer) for t in d.turns)})
    with pytest.raises(ValueError, match="the real side has no reply texts"):
        compare([d], [bare], lambda ts: np.zeros((len(ts), 2)))


@pytest.mark.slow
def test_cli_texts_end_to_end_and_profile_with_text_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fit a profile (answers and texts) from the multi-agent-attack fixture, run the simulator in the
    source's protocol on it, compare its texts with the fixture's, all through the CLI."""
    store = tmp_path / "profiles"
    monkeypatch.setenv("TOMACS_PROFILES", str(store))  # the subprocesses inherit it
    p = tomacs(
        "calibrate",
        "--from-episodes",
        str(MAA),
        "--name",
        "fixture-maa",
        "--split",
        "1",
        "--predict",
        str(MAA),
        "--draws",
        "50",
    )
    assert p.returncode == 0, p.stderr[-2000:]
    import yaml

    doc = yaml.safe_load((store / "fixture-maa.yaml").read_text())
    assert set(doc["text"]["phases"]) == {"honest", "adversary"}
    # 3 adversary debates: 3 first-round replies (under the 5 a phase needs) and 6 later ones
    assert doc["provenance"]["text_model"]["adversary/later"]["replies"] == 6
    assert "adversary/first" not in doc["provenance"]["text_model"]
    # its replies' words (`tomacs.sim.topic_words`): sorted, and the provenance counts them
    vocab = doc["text"]["vocabulary"]
    assert vocab == sorted(vocab) and len(vocab) == doc["provenance"]["text_model"]["vocabulary"] >= 50
    run = tmp_path / "run"
    p = tomacs(
        "evaluate",
        "method=debate",
        "attack=maa",
        "agents=3",
        "rounds=3",
        "backbone.profile=fixture-maa",
        "benchmark=synthetic",
        "eval.size=12",
        "embedder=hashing",
        f"hydra.run.dir={run}",
    )
    assert p.returncode == 0, p.stderr[-2000:]
    res = json.loads((run / "results.json").read_text())
    assert str(res["backbone_stats"]["profile_texts"]).startswith("fitted (")
    # MiniLM's neighbours, whatever the run's embedder
    assert res["backbone_stats"]["profile_topic_words"] == len(vocab)
    out = tmp_path / "texts.json"
    p = tomacs("transcripts", "texts", "--sim", str(run), "--real", str(MAA), "--out", str(out))
    assert p.returncode == 0, p.stderr[-2000:]
    assert "probe trained on simulated replies, applied to real ones" in p.stdout
    assert re.search(
        r"adversary vs honest, real replies \(the ceiling\) +[01]\.\d{3}  \[[01]\.\d{3}, [01]\.\d{3}\]",
        p.stdout,
    )
    got = json.loads(out.read_text())
    lo, hi = got["real_adversary_auc_ci"]
    assert lo <= got["real_adversary_auc"] <= hi
    assert 0.0 <= got["transfer_words_auc"] <= 1.0 and len(got["transfer_words_auc_ci"]) == 2
    assert "the same on words alone (bag of words, no embedder)" in p.stdout
    assert got["embedder"] == "hashing"  # the run's own
    assert got["replies"]["real"]["acting_adversary"] == 9  # 3 adversary debates x 3 rounds (2 controls)
    real_acting = got["replies"]["real"]["acting_adversary"] + got["replies"]["real"]["acting_honest"]
    assert got["matched_replies"] == real_acting and "sim_adversary_auc_matched" in got
    # the gap is the simulated AUC (at the real size where it is larger) minus the real one, printed with
    # its interval and where it stands against the target
    sim_auc = got["sim_adversary_auc_matched"] or got["sim_adversary_auc"]
    assert got["adversary_gap"] == pytest.approx(sim_auc - got["real_adversary_auc"])
    verdict = got["adversary_gap_verdict"].split(";")[0].split(",")[0]
    assert verdict in ("within the target", "beyond the target")
    gap_line = r"gap, simulated \((all|at the real side's size)\) minus real +[+-][01]\.\d{3}"
    assert re.search(gap_line, p.stdout)
    t = got["on_target"]  # adversary vs honest among the replies that answer the target
    assert set(t) == {"sim_auc", "sim_auc_matched", "real_auc", "sim_honest", "real_honest"}
    assert all(t[k] is None or 0.0 <= t[k] <= 1.0 for k in ("sim_auc", "sim_auc_matched", "real_auc"))
    assert [r["round"] for r in got["alike"]["real"]] == [1, 2, 3]  # every round has an adversary
    assert all(r["adversary_pairs"] == 6 for r in got["alike"]["real"])  # 3 debates x 2 honest peers
    assert "alike within a debate" in p.stdout
    assert "alike to its own agent's reply of the round before" in p.stdout
    assert all(r["honest_own"] is not None for r in got["alike"]["real"] if r["round"] >= 2)
    # the simulated adversaries read the others under attack.prompt=debate
    from tomacs.transcripts import load_debates

    d = load_debates([run])[0]
    adv = next(a.agent for a in d.agents if a.role == "adversary")
    assert d.turn(adv, 2) is not None and d.turn(adv, 2).read


def test_cli_texts_errors_are_one_line(tmp_path: Path) -> None:
    p = tomacs("transcripts", "texts", "--sim", str(tmp_path / "nope"), "--real", str(MAD))
    assert p.returncode != 0
    assert p.stderr.strip().count("\n") == 0 and "no such file or folder" in p.stderr


def test_unknown_adversary_prompt_lists_the_valid_ones() -> None:
    p = tomacs("show-config", "attack.prompt=stealth")
    assert p.returncode != 0
    assert "attack.prompt='stealth'" in p.stderr and "appd, debate" in p.stderr


def test_select_debates_keeps_the_model_and_the_questions_a_fit_did_not_see() -> None:
    from tomacs.sim.fit_episodes import split_questions
    from tomacs.sim.from_episodes import select_debates

    ds = _fit_debates(10)
    other = [Debate(**{**d.__dict__, "id": d.id + "x", "model": "other"}) for d in ds[:3]]
    assert select_debates(ds + other, model="m") == ds
    held = select_debates(ds + other, model="m", held_out=True, split=0.7, seed=0)
    assert held == split_questions(ds, 0.7, 0)[1] and 0 < len(held) < len(ds)
    fit_q = {d.question for d in split_questions(ds, 0.7, 0)[0]}
    assert not fit_q & {d.question for d in held}  # no question on both sides
    with pytest.raises(
        ValueError, match="no debate has honest agents of model 'nope'; models there: m, other"
    ):
        select_debates(ds + other, model="nope")


def _body_words(t: str) -> int:
    return len(t[: t.rindex("Answer:")].split())


def test_a_fitted_length_is_met_on_average_not_overshot() -> None:
    """Filling until the target is reached overshot by half a sentence: every fitted style wrote 7-11
    words over its fit. A filler now goes in only when it brings the reply nearer its target."""
    for median in (60.0, 150.0):
        style = _style(median, BANK)
        texts = [honest_analysis(Q, "Critic", "B", np.random.default_rng(s), style=style) for s in range(60)]
        got = [_body_words(t) for t in texts]
        assert abs(float(np.mean(got)) - median) <= 3.5, (median, float(np.mean(got)))


def test_a_very_short_fitted_length_keeps_only_the_supporting_sentence_and_the_answer() -> None:
    """qwen-max's honest round-1 replies run a median of 48 words, a tenth under 30: the concluding and
    the topic sentences go too, the sentence that supports the answer never does."""
    for s in range(20):
        t = honest_analysis(Q, "Critic", "B", np.random.default_rng(s), style=_style(16, ()))
        assert parse_answer(Q, t) == "B" and t.rstrip().endswith("Answer: B")
        assert "win the suit" in t  # the supporting sentence names the answer's option
        assert _body_words(t) <= 30


# --------------------------------------------------------------------- "the question" and "option"
def test_mention_shares_are_counted_per_role_and_phase_by_hand() -> None:
    """Three of the 12 adversary round-1 replies name "the question" and one names "options";
    no honest reply names either. The answer line is not counted."""
    debates = _fit_debates()
    for i, d in enumerate(debates[:3]):
        t0 = d.turns[0]
        extra = " This question is hard." + (" All options look odd." if i == 0 else "")
        debates[i] = replace(d, turns=(replace(t0, text=f"{t0.text}{extra}"), *d.turns[1:]))
    tm = fit_text_model(debates)
    assert tm is not None
    assert tm.phases["adversary"]["first"].mentions == {
        "question": 0.25,
        "option": pytest.approx(1 / 12, abs=1e-6),
    }
    assert tm.phases["adversary"]["later"].mentions == {"question": 0.0, "option": 0.0}
    assert tm.phases["honest"]["first"].mentions == {"question": 0.0, "option": 0.0}
    assert TextModel.from_dict(json.loads(json.dumps(tm.to_dict()))) == tm


def test_says_matches_the_word_and_its_plural_only() -> None:
    assert says("Two Options remain.", ("option",)) and says("the question", ("question",))
    assert not says("optional questionnaire", ("option", "question"))
    assert not says("the question", ("option",))


def _mentioning(q: float, o: float) -> PhaseText:
    return PhaseText(
        replies=10,
        log_words_mean=float(np.log(90)),
        log_words_sd=0.2,
        generic_share=0.3,
        opener_share=0.5,
        closer_share=0.5,
        openers=("This question hinges on {k}.", "Let us look at {k} first."),
        general=("The options differ on {k}.", "Each point about {k} counts here."),
        closers=("That is my reading of the question.", "So ({a}) it is."),
        mentions={"question": q, "option": o},
    )


def test_a_reply_uses_the_question_and_option_words_at_the_fitted_shares() -> None:
    """The templates name "the question" and an "option" in nearly every reply; a fitted style draws
    per reply whether it may, and then every template and bank pick avoids the word. Round 1 and a
    later round (the templated discussion, nothing read), honest and adversary."""

    def share(st: PhaseText, word: str, n: int = 300) -> float:
        hits = 0
        for s in range(n):
            rng = np.random.default_rng(s)
            if s % 2:
                t = honest_analysis(Q, "Critic", "B", rng, round=1 + s % 3, style=st)
            else:
                t = adversarial_analysis(Q, "C", rng, style=st, max_words=None)
            assert parse_answer(Q, t) in {"B", "C"}
            hits += says(t, (word,))
        return hits / n

    assert share(_mentioning(0.0, 0.0), "question") == 0.0
    assert share(_mentioning(0.0, 0.0), "option") == 0.0
    assert share(_mentioning(1.0, 1.0), "question") >= 0.8  # what the templates write
    assert share(_mentioning(1.0, 1.0), "option") >= 0.8
    assert 0.2 <= share(_mentioning(0.3, 0.3), "question") <= 0.4
    assert 0.2 <= share(_mentioning(0.3, 0.3), "option") <= 0.4


def test_a_style_fitted_before_mentions_draws_nothing_for_them() -> None:
    """A profile fitted before the shares existed has none: no draw, so its texts stay as they were."""
    rng = np.random.default_rng(3)
    state = rng.bit_generator.state
    assert _style(90, BANK).avoided(rng) == () and rng.bit_generator.state == state
    assert _mentioning(0.0, 1.0).avoided(rng) == ("question",)


def test_bad_mentions_in_a_text_model_are_one_line() -> None:
    body = {"replies": 5, "log_words_mean": 4.0, "mentions": {"answer": 0.5}}
    with pytest.raises(
        ValueError, match=r"text.phases.honest.first.mentions: expected shares of question, option"
    ):
        TextModel.from_dict({"phases": {"honest": {"first": body}}})


# -- how many other options a reply names (PhaseText.others_named)

ETHICS = ("Completely acceptable", "Mostly acceptable", "Neutral/Situation-dependent", "Mostly unacceptable")


@pytest.mark.parametrize(
    ("text", "answer", "n"),
    [
        ("I reject (C) and option D; B is right.\n\nAnswer: B", "B", 2),
        ("Not (A).\nAnswer: C", "C", 1),  # the answer line is not read
        ("It is mostly acceptable, though some call it completely acceptable.", "B", 1),  # by the text
        ("It is mostly unacceptable.", "B", 1),  # "mostly acceptable" is not inside "mostly unacceptable"
        ("It is mostly acceptable. #answer: B", "B", 0),  # its own answer only
        ("(A), (C) and (D) all fail.", "B", 2),  # capped: two or more
    ],
)
def test_named_others_by_hand(text: str, answer: str, n: int) -> None:
    assert named_others(text, answer, ("A", "B", "C", "D"), ETHICS) == n


def test_short_option_texts_are_not_read_as_named() -> None:
    assert named_others("This is true, not false.", "A", ("A", "B"), ("True", "False")) == 0


def test_others_named_are_counted_per_role_and_phase_by_hand() -> None:
    """Three of the 24 honest round-1 replies name (C) and (D) besides their own (A): 21 / 0 / 3 of 24."""
    debates = _fit_debates()
    for i, d in enumerate(debates[:3]):
        t1 = d.turns[1]
        turns = list(d.turns)
        turns[1] = replace(t1, text=f"{t1.text} Neither (C) nor (D) fits.")
        debates[i] = replace(d, turns=tuple(turns))
    tm = fit_text_model(debates)
    assert tm is not None
    assert tm.phases["honest"]["first"].others_named == pytest.approx((21 / 24, 0.0, 3 / 24), abs=1e-6)
    assert tm.phases["adversary"]["first"].others_named == (1.0, 0.0, 0.0)
    assert TextModel.from_dict(json.loads(json.dumps(tm.to_dict()))) == tm
    bad = {"replies": 5, "log_words_mean": 4.0, "others_named": [0.5, "x"]}
    with pytest.raises(
        ValueError, match=r"text.phases.honest.first.others_named: expected shares of 0, 1, 2\+"
    ):
        TextModel.from_dict({"phases": {"honest": {"first": bad}}})


# Q with option texts long enough to be read as named (`OPTION_TEXT_MIN`)
Q_LONG = replace(
    Q, id="q2", options=("lose the lawsuit", "win the lawsuit", "settle out of court", "appeal the ruling")
)


def _naming(shares: tuple[float, ...]) -> PhaseText:
    # long replies: a short fitted length drops the extra rejections first (App. D's cap order)
    return replace(_mentioning(1.0, 1.0), others_named=shares, log_words_mean=float(np.log(220)))


def _round1(q: Question, honest: str, target: str, st: PhaseText, n: int) -> list[tuple[str, str]]:
    """n round-1 replies under `st` with their answers, honest (`honest`) and adversary (`target`) in turn."""
    out = []
    for s in range(n):
        rng = np.random.default_rng(s)
        if s % 2:
            out.append((honest_analysis(q, "Critic", honest, rng, style=st), honest))
        else:
            out.append((adversarial_analysis(q, target, rng, style=st, max_words=None), target))
    return out


def test_a_reply_names_other_options_at_the_fitted_shares() -> None:
    """The templates reject one or two other options by name in every reply; under a fitted style the
    number follows `others_named` (round 1, honest and adversary, whose banks name no other option)."""

    def counts(st: PhaseText, n: int = 200) -> list[int]:
        replies = _round1(Q_LONG, "B", "C", st, n)
        return [named_others(t, a, Q_LONG.labels, Q_LONG.options) for t, a in replies]

    assert set(counts(_naming((1.0, 0.0, 0.0)))) == {0}
    assert set(counts(_naming((0.0, 1.0, 0.0)))) == {1}
    assert set(counts(_naming((0.0, 0.0, 1.0)))) == {2}
    half = counts(_naming((0.5, 0.5, 0.0)))
    assert 0.4 <= half.count(0) / len(half) <= 0.6
    assert set(counts(_mentioning(1.0, 1.0))) <= {1, 2} and 0 not in counts(
        _mentioning(1.0, 1.0)
    )  # templates


def test_a_style_fitted_before_others_named_draws_nothing_for_it() -> None:
    rng = np.random.default_rng(5)
    state = rng.bit_generator.state
    assert _style(90, BANK).rejections(rng, 3) is None and rng.bit_generator.state == state
    assert _naming((0.0, 0.0, 1.0)).rejections(rng, 1) == 1  # no more than there are


# -- how much a reply is about its question (PhaseText.topic_density, answer_rate)


def test_topic_density_and_answer_sentences_by_hand() -> None:
    stems = question_stems("Which organ filters the blood?", ("Spleen", "Liver"))
    assert stems == {"organ", "filte", "blood", "splee", "liver"}
    # content words (4 letters or more, no stop word; the answer line is not read): spleen, filters, blood,
    # quickly, really: 3 of 5 are the question's
    text = "The spleen filters blood quickly, really.\n\nAnswer: Spleen"
    assert topic_density(text, stems) == pytest.approx(3 / 5)
    assert topic_density("It is so.", stems) is None  # no content word at all
    assert answer_text(" Spleen. ") == "spleen" and answer_text("No") is None
    assert answer_text("a" * 40) == "a" * ANSWER_PREFIX
    sents = ["The spleen is it.", "Spleen, then.", "A splenectomy is not it.", "Nothing here."]
    assert answer_sentences(sents, "spleen") == 2  # whole words from the start: not "splenectomy"
    assert answer_sentences(sents, None) == 0


def test_topic_density_and_answer_rate_are_fitted_per_role_and_phase_by_hand() -> None:
    """_fit_debates: stem "Which statement about the widgetX is right?" (stems: state, widge, right), no
    option texts. The adversary writes "The widgetX matters a great deal. I strongly disagree with the
    others." -> content widgetx, matters, great, deal, strongly, disagree, others: 1 of 7; honest agents
    "Looking at widgetX carefully, the reasoning seems fine." -> looking, widgetx, carefully, reasoning,
    seems, fine: 1 of 6, and "... again, ... fine to me." 1 of 5 ("again" is a stop word): a mean of 11/60.
    With option texts given, the answer's text is counted per sentence."""
    debates = _fit_debates()
    tm = fit_text_model(debates)
    assert tm is not None
    assert tm.phases["adversary"]["first"].topic_density == pytest.approx(1 / 7, abs=1e-6)
    assert tm.phases["honest"]["later"].topic_density == pytest.approx((1 / 6 + 1 / 5) / 2, abs=1e-6)
    assert tm.phases["honest"]["first"].answer_rate == 0.0  # no option texts: nothing to name
    named = [
        replace(d, options=("the widget is right", "the widget is wrong", "none", "all"), question=d.question)
        for d in debates
    ]
    for i, d in enumerate(named):
        turns = list(d.turns)
        t = turns[1]  # honest agent 1, round 1, answer A
        turns[1] = replace(t, text=f"So the widget is right. Truly, the widget is right. {t.text}")
        named[i] = replace(d, turns=tuple(turns))
    tm = fit_text_model(named)
    assert tm is not None
    # agent 1 names its answer twice in every round-1 reply, agent 2 never: a mean of 1 per reply
    assert tm.phases["honest"]["first"].answer_rate == pytest.approx(1.0, abs=1e-6)
    assert tm.phases["adversary"]["first"].answer_rate == 0.0  # "the widget is wrong" never written
    assert TextModel.from_dict(json.loads(json.dumps(tm.to_dict()))) == tm


@pytest.mark.parametrize(
    ("stem", "said", "expected"),
    [
        (
            "Which of the following is the organ that filters the blood?",
            "Spleen",
            "Spleen is the organ that filters the blood.",
        ),
        ("What is the capital of France?", "Paris", "The capital of France is Paris."),
        (
            "The morality that Gauthier describes essentially involves:",
            "pure altruism",
            "The morality that Gauthier describes essentially involves pure altruism.",
        ),
        ("How many years are there in a decade?", "10", None),  # no statement of this form
        (
            "Consider this situation: I borrowed money and never returned it.\n\n"
            "How acceptable is this behavior?",
            "Mostly unacceptable",
            "This behavior is Mostly unacceptable.",
        ),
    ],
)
def test_the_stem_restated_with_the_answer_by_hand(stem: str, said: str, expected: str | None) -> None:
    assert _restated(replace(Q, text=stem), said) == expected


@pytest.mark.parametrize(
    ("stem", "expected"),
    [
        # the benchmark's lead-in is not the question's content; a 21-word situation is cut at "so"
        (
            "Consider this situation: I brought home several reams of the office's paper so I could print "
            "flyers for my upcoming side gig at home.\n\nHow acceptable is this behavior?",
            (
                "I brought home several reams of the office's paper",
                "I could print flyers for my upcoming side gig at home",
            ),
        ),
        (
            "Consider this situation: I drove off the bridge\n\nHow acceptable is this behavior?",
            ("I drove off the bridge",),
        ),
        # a stem that is its lead-in alone keeps it (nothing after the colon but a question mark, or nothing);
        # short clauses are cut as before
        ("Consider this situation: ?", ("Consider this situation",)),
        ("Consider this situation:", ("Consider this situation",)),
        (
            "The morality that Gauthier describes essentially involves:",
            ("Gauthier describes essentially involves",),
        ),
    ],
)
def test_stem_clauses_by_hand(stem: str, expected: tuple[str, ...]) -> None:
    assert _stem_chunks(stem) == expected


def _topical(density: float, rate: float) -> PhaseText:
    return replace(
        _mentioning(1.0, 1.0), topic_density=density, answer_rate=rate, log_words_mean=float(np.log(160))
    )


ORGAN = replace(
    Q,
    id="q3",
    text="A patient's spleen was removed after an accident. Which of the following is the organ that "
    "filters organisms from the blood, since the bone marrow makes red cells?",
    options=("the spleen", "the gallbladder", "the pancreas", "the appendix"),
)


def test_a_fitted_topic_density_and_answer_rate_are_followed() -> None:
    """A style without the fit writes the templates' mix; with it, a reply is as much about its question
    as the fitted density asks (within a sentence's worth) and names its answer's text about as often as
    the fitted rate, the restated stem opening its body. Honest and adversary, round 1."""
    stems = question_stems(ORGAN.text, ORGAN.options)

    def measure(st: PhaseText, n: int = 120) -> tuple[float, float, float]:
        dens, named, opened = [], [], 0
        for t, letter in _round1(ORGAN, "A", "B", st, n):
            a = {"A": "the spleen", "B": "the gallbladder"}[letter]
            assert parse_answer(ORGAN, t) == letter
            dens.append(topic_density(t, stems))
            named.append(answer_sentences(split_sentences(t), a))
            opened += f"{a.capitalize()} is the organ that filters organisms from the blood" in t
        return float(np.mean(dens)), float(np.mean(named)), opened / n

    d0, n0, o0 = measure(_topical(0.0, 0.0))
    d1, n1, o1 = measure(_topical(0.6, 3.0))
    assert o0 == 0.0 and o1 > 0.5
    assert d0 < 0.45 and 0.5 <= d1 <= 0.75, (d0, d1)
    assert n0 < 1.5 and 2.3 <= n1 <= 4.0, (n0, n1)


_NTH = ("one", "two", "three", "four", "five")
BANKED = replace(
    _topical(0.6, 2.0),
    generic_share=0.3,
    general=tuple(f"Bank sentence {w} bears on {{k}} as such." for w in _NTH)
    + tuple(f"Another bank sentence {w} weighs {{k}}." for w in _NTH),
)


def test_on_topic_sentences_take_the_templated_fillers_place_not_the_style_banks() -> None:
    """The style bank's sentences (real replies' own) keep the share of a reply's words they have without the
    on-topic sentences; those take the templates' fillers' place (stop 68's generator let them displace
    the bank as well, and simulated replies were then easier to tell from real ones)."""

    def shares(st: PhaseText, n: int = 160) -> tuple[float, float]:
        bank = fill = total = 0
        for t, _ in _round1(ORGAN, "A", "B", st, n):
            for s in split_sentences(t.rsplit("Answer:", 1)[0]):
                w = len(s.split())
                total += w
                bank += w * ("ank sentence" in s)
                fill += w * any(s.startswith(f.split("{")[0]) for f in _FILL_MC if f.split("{")[0])
        return bank / total, fill / total

    bank0, fill0 = shares(replace(BANKED, topic_density=0.0, answer_rate=0.0))
    bank1, fill1 = shares(BANKED)
    assert bank0 > 0.08, bank0
    assert bank1 >= 0.8 * bank0, (bank0, bank1)
    assert fill1 < 0.6 * fill0, (fill0, fill1)


def test_a_reply_drawn_to_name_its_answer_in_no_sentence_names_it_by_letter() -> None:
    """Real qwen-max honest replies name their answer's text in 0.28 sentences of round 1, and every
    templated supporting sentence named it: under a fitted rate of 0 the core names the answer by its
    letter, in a form the fit's `letter_named` reads (a bare "B matches ..." it does not: a third of such
    replies were measured as naming no letter, stop 80), and the answer still parses."""
    named, lettered = [], 0
    for t, letter in _round1(ORGAN, "C", "B", _topical(0.4, 0.0), 120):
        a = {"C": "the pancreas", "B": "the gallbladder"}[letter]
        assert parse_answer(ORGAN, t) == letter
        named.append(answer_sentences(split_sentences(t), a))
        lettered += letter_named(t, letter, ORGAN.labels, ORGAN.options)
    assert float(np.mean(named)) < 0.15, np.mean(named)
    assert lettered == 120


def test_a_reply_drawn_to_name_letters_names_one_the_fit_reads() -> None:
    """A reply drawn to name letters (`letter_share` 1) whose only letter is its supporting sentence's (no
    rejection, no closer, its answer's text in no sentence) names it in a form `letter_named` reads: the bare
    "B matches ..." it does not read, and a third of qwen3-8b's simulated replies drawn to name letters were
    measured as naming none (its simulated shares about half its fitted ones, stop 80)."""
    # in paragraphs: a one-paragraph reply's last bracketed letter would read as its closing mark
    st = replace(
        _naming((1.0, 0.0, 0.0)),
        topic_density=0.4,
        answer_rate=0.0,
        letter_share=1.0,
        closer_share=0.0,
        paragraph_words=40.0,
    )
    replies = _round1(ORGAN, "C", "B", st, 120)
    assert all(named_others(t, a, ORGAN.labels, ORGAN.options) == 0 for t, a in replies)
    assert all(letter_named(t, a, ORGAN.labels, ORGAN.options) for t, a in replies)


def _shared_sentences(a: str, b: str) -> float:
    sa, sb = (set(split_sentences(t.rsplit("Answer:", 1)[0])) for t in (a, b))
    return len(sa & sb) / min(len(sa), len(sb))


def test_replies_arguing_one_answer_in_one_debate_make_the_same_points() -> None:
    """Real honest replies of one gpt-3.5 debate are alike (MiniLM cosine 0.90 in round 1, their adversary
    0.83); with every reply drawing its own points, simulated ones were 0.72 and 0.71 (stop 70). Given one
    stream of what they argue (`DebateDraws.points`), two replies share their points; how each writes (length,
    bank sentences, opener) is still its own, so they are not copies."""
    shared, own, same = [], [], 0
    for s in range(60):

        def reply(seed: int, topic: int | None) -> str:
            tr = None if topic is None else DebateDraws(np.random.default_rng(topic), 0.0)
            return honest_analysis(ORGAN, "Critic", "A", np.random.default_rng(seed), style=BANKED, shared=tr)

        a, b = reply(2 * s, 1000 + s), reply(2 * s + 1, 1000 + s)
        shared.append(_shared_sentences(a, b))
        same += a == b
        own.append(_shared_sentences(reply(2 * s, None), reply(2 * s + 1, None)))
    assert float(np.mean(shared)) > float(np.mean(own)) + 0.15, (np.mean(shared), np.mean(own))  # 0.38, 0.14
    assert same == 0


def test_the_backbone_keys_what_replies_share_by_debate_answer_and_round() -> None:
    """Agents 0 and 1 of one debate in rounds 1 and 2 draw one stream of points for one answer; another
    answer, another debate or another seed, another stream. The length factor is one per debate and round,
    whatever the agent or answer. A paper profile (no text model) draws none."""
    from tomacs.sim.backbone import SimBackbone
    from tomacs.testing.requests import plain_request

    tm = TextModel(phases={"honest": {"first": BANKED}, "adversary": {"first": BANKED}})
    bb = SimBackbone("mmlu", seed=0, text_model=tm)

    def draws(key: str, answer: str, t: int = 1, backbone: SimBackbone = bb) -> tuple[int, float]:
        d = backbone._debate_draws(replace(plain_request(key), round=t), answer)
        return int(d.points.integers(1 << 30)), d.length_z

    (base, z1) = draws("5/test/q3/0/1", "A")
    assert draws("5/test/q3/1/2", "A", 2)[0] == base
    assert draws("5/test/q3/1/1", "B")[0] != base
    assert draws("5/test/q3/1/1", "B")[1] == z1 and draws("5/test/q3/2/2", "A", 2)[1] != z1
    assert draws("5/test/q4/0/1", "A")[0] != base
    assert draws("5/test/q3/0/1", "A", 1, SimBackbone("mmlu", seed=1, text_model=tm))[0] != base
    paper = SimBackbone("mmlu", seed=0)

    def drawn(req: object, answer: str) -> DebateDraws:
        raise AssertionError("a paper profile drew what a debate's replies share")

    paper._debate_draws = drawn  # type: ignore[method-assign]
    assert paper.generate_one(replace(plain_request("5/test/q3/0/1"), question=ORGAN, role="Critic")).text


def test_length_shared_by_hand() -> None:
    """Two debates, round 1, honest standardised log lengths (+1, +1) and (-1, -1): r_honest 1, capped at
    0.95; their adversaries at +1 and -1 (c = 1): r_adversary = 1 / 0.95, capped. Round 2: honest pairs
    (+1, -1) twice: r 0 (negative is clipped), and so no adversary share. Lengths are standardised per role
    and phase, so the hand cases use log lengths with means 0 and SDs 1."""
    rows = [
        ("d1", 1, "honest", "first", 1.0),
        ("d1", 1, "honest", "first", 1.0),
        ("d1", 1, "adversary", "first", 1.0),
        ("d2", 1, "honest", "first", -1.0),
        ("d2", 1, "honest", "first", -1.0),
        ("d2", 1, "adversary", "first", -1.0),
        ("d1", 2, "honest", "later", 1.0),
        ("d1", 2, "honest", "later", -1.0),
        ("d2", 2, "honest", "later", 1.0),
        ("d2", 2, "honest", "later", -1.0),
        ("d2", 2, "adversary", "later", 1.0),
    ]
    got = length_shared(rows)
    assert got[("honest", "first")] == pytest.approx(0.95)
    assert got[("adversary", "first")] == pytest.approx(0.95)
    assert got[("honest", "later")] == 0.0 and got[("adversary", "later")] == 0.0
    # a weaker case: honest pairs (+1, +0.5), (-1, -0.5) scale to products of 0.8 on their SD
    half = length_shared(
        [(f"d{i}", 1, "honest", "first", v * s) for i, s in ((1, 1), (2, -1)) for v in (1, 0.5)]
    )
    z = np.array([1, 0.5, -1, -0.5]) / np.std([1, 0.5, -1, -0.5])
    assert half[("honest", "first")] == pytest.approx(z[0] * z[1])  # 0.8


def test_replies_of_one_round_run_long_or_short_together_at_the_fitted_share() -> None:
    """Real replies of one question run long or short together (gpt-3.5, round 1: a shared share of 0.67);
    given one length factor per debate round, two simulated replies' log lengths correlate at about the
    fitted `length_shared`, and at about 0 with a factor each or a share of 0."""
    st = replace(BANKED, log_words_sd=0.4, length_shared=0.6)

    def corr(share: float, same: bool, n: int = 300) -> float:
        s = replace(st, length_shared=share)
        pairs = []
        for k in range(n):
            z = np.random.default_rng([9, k]).standard_normal()
            z2 = z if same else np.random.default_rng([10, k]).standard_normal()
            a = words_target(s, np.random.default_rng([1, k]), None, z)
            b = words_target(s, np.random.default_rng([2, k]), None, z2)
            pairs.append((math.log(a), math.log(b)))
        x = np.array(pairs)
        return float(np.corrcoef(x[:, 0], x[:, 1])[0, 1])

    assert 0.45 <= corr(0.6, True) <= 0.75
    assert abs(corr(0.6, False)) < 0.15 and abs(corr(0.0, True)) < 0.15


def _starts(template: str) -> str:
    """A template's text before its first slot: what marks a sentence as written from it."""
    return template.split("{", 1)[0]


def test_a_reply_about_its_question_opens_and_closes_generically_at_the_fitted_shares_only() -> None:
    """Real gpt-3.5 round-1 replies open with a generic sentence in 0.02 (honest) and 0.18 (adversary) of
    replies and close with one in 0.01-0.06; the templated opener opened 0.8 of simulated ones and the
    templated conclusion closed all. A style about its question (a fitted topic density) now opens with a
    bank opener at `opener_share` and otherwise with its point, closes with a bank closer at
    `closer_share` and otherwise with its last point (or a conclusion too short to be style, "So the
    answer is A.", as the fit counts it); the answer still parses."""
    openers = tuple(_starts(o) for o in _OPENERS_NO_PERSONA)
    topic = OnTopic([], [], None, question_stems(ORGAN.text, ORGAN.options), None, 0)
    concluding = tuple(_starts(c) for c in _CONCLUDE_MC if generic_like(c.format(a="A"), topic))
    assert len(concluding) >= 4

    def shares(st: PhaseText, n: int = 120) -> tuple[float, float, float, float]:
        tmpl_open = bank_open = tmpl_close = bank_close = 0
        for t, letter in _round1(ORGAN, "A", "B", st, n):
            assert parse_answer(ORGAN, t) == letter
            sents = split_sentences(t.rsplit("Answer:", 1)[0])
            tmpl_open += sents[0].startswith(openers)
            bank_open += sents[0].startswith(("This question hinges on", "Let us look at"))
            tmpl_close += sents[-1].startswith(concluding)
            bank_close += sents[-1].startswith(("That is my reading of the question", "So ("))
        return tmpl_open / n, bank_open / n, tmpl_close / n, bank_close / n

    # the templates' own style (no fitted density): opener at 0.8, a generic conclusion in 5 of 7 draws
    old = shares(replace(_topical(0.0, 0.0), opener_share=0.0, closer_share=0.0))
    assert old[0] > 0.6 and old[2] > 0.5
    never = shares(replace(_topical(0.6, 2.0), opener_share=0.0, closer_share=0.0))
    assert never == (0.0, 0.0, 0.0, 0.0)
    always = shares(replace(_topical(0.6, 2.0), opener_share=1.0, closer_share=1.0))
    assert always[1] == 1.0 and always[3] == 1.0


def test_generic_like_tells_a_point_from_talk_about_reasoning_by_hand() -> None:
    """The generator's stand-in for the fit's generic sentences (`generic_form`): a sentence naming the
    answer's text or a number, or mostly of its question's words, is a point; the rest is generic."""
    topic = OnTopic([], [], "the spleen", question_stems(ORGAN.text, ORGAN.options), None, 0)
    assert generic_like("This is a common point of confusion, so it is worth being precise.", topic)
    # 2 of 5 content words its question's ("organ", "blood"): still generic
    assert generic_like("The wording about the organ and blood is the important clue here.", topic)
    # 3 of 4 ("spleen", "removed", "accident"; "after" is a stop word): a point
    assert not generic_like("The spleen was removed after an accident, we are told.", topic)
    assert not generic_like("The answer must be the spleen, whatever else holds.", topic)
    assert generic_like("Two of the four options are wrong for a simple reason.", topic)
    assert not generic_like("It takes 3 steps to see why.", topic)


def test_a_reply_about_its_question_writes_templated_generic_sentences_within_the_fitted_share() -> None:
    """Real replies write 0.10-0.16 of their words in generic sentences (gpt-3.5, round 1); simulated ones
    wrote 0.44-0.51, mostly the templates' fillers and topic sentence, padding every reply to its length.
    Under a fitted style those are written within `generic_share` of the reply's words while it has
    points about its question left to make: at a low share they are rarer and the reply more about its
    question, at the same length."""
    tmpl = tuple(_starts(x) for x in (*_FILL_MC, *_TOPIC_MC) if len(_starts(x)) > 8)
    stems = question_stems(ORGAN.text, ORGAN.options)

    def measure(share: float, n: int = 120) -> tuple[float, float, float]:
        filled = total = 0
        dens, lens = [], []
        for t, _ in _round1(ORGAN, "A", "B", replace(BANKED, generic_share=share, general=()), n):
            body = t.rsplit("Answer:", 1)[0]
            for x in split_sentences(body):
                filled += len(x.split()) if x.startswith(tmpl) else 0
                total += len(x.split())
            dens.append(topic_density(t, stems))
            lens.append(len(t.split()))
        return filled / total, float(np.mean(dens)), float(np.mean(lens))

    lo, hi = measure(0.05), measure(0.6)
    assert lo[0] < 0.5 * hi[0], (lo, hi)
    assert lo[1] > hi[1]
    assert abs(lo[2] - hi[2]) < 0.1 * hi[2]


def test_with_its_points_and_generic_words_both_spent_a_reply_overshoots_neither_far() -> None:
    """A short stem has few points to make (qwen-max's ethics questions): once the fitted generic share is
    written, taking every further sentence from the points set its topic density at 0.40-0.47 against a
    fitted 0.18-0.21. Now each further sentence is the kind that overshoots its fitted share less, so the
    two overshoot by about the same ratio; before the budget is spent it is the generic ones."""
    stems = question_stems(ORGAN.text, ORGAN.options)
    points = [f"The spleen filters organisms from the blood, {c}." for c in "abcdefghijkl"]
    talk = [f"This is a common point of confusion worth being precise about, {c}." for c in "abcdefghijkl"]
    assert not any(generic_like(p, OnTopic([], [], None, stems, None, 0)) for p in points)
    assert all(generic_like(t, OnTopic([], [], None, stems, None, 0)) for t in talk)
    st = replace(BANKED, generic_share=0.2, topic_density=0.2)
    topic = OnTopic([], list(points), None, stems, None, 0)
    got = on_topic(st, np.random.default_rng(0), [], talk, [], topic, 120)
    g_words = sum(len(s.split()) for s in got if s in talk)
    words = sum(len(s.split()) for s in got)
    hits, content = topic_counts(" ".join(got), stems)
    over_generic, over_density = g_words / words / 0.2, hits / content / 0.2
    assert words >= 120 and sum(s in points for s in got) >= 3 and sum(s in talk for s in got) >= 3
    assert over_generic > 1 and over_density > 1
    assert abs(math.log(over_generic / over_density)) < math.log(1.6), (over_generic, over_density)


def test_a_short_later_reply_keeps_its_discussion_when_its_style_dropped_the_opener() -> None:
    """A fitted reply too long for its word target leaves out its opener first. Once a style about its
    question drops the templated opener (no bank opener drawn), there is no opener left to leave out, and
    the reply's discussion of the others stays, at the fitted rate, rather than going in its place."""
    msg = Message(
        sender=1, role="Critic", text="I think the suit is lost.\n\nAnswer: B", answer="B", persuasive=False
    )
    st = replace(
        _topical(0.6, 1.0),
        log_words_mean=float(np.log(25)),
        log_words_sd=0.05,
        opener_share=0.0,
        openers=(),
        discuss=("I weigh what the other agents said about {k} with care.",),
        discuss_rate=50.0,
    )
    kept = 0
    for s in range(60):
        t = honest_analysis(Q, "Critic", "A", np.random.default_rng(s), round=2, incoming=[msg], style=st)
        assert parse_answer(Q, t) == "A"
        kept += "I weigh what the other agents said about" in t
    assert kept == 60


def test_fillers_go_between_the_first_and_last_core_sentences_under_a_fitted_topic_density() -> None:
    """The templates' fillers went anywhere after the first core sentence, so with the generic conclusion
    dropped a filler was a reply's last sentence: the fit read gpt-4o's simulated replies as closing
    generically in 0.28-0.39 of them (fitted `closer_share` 0.03-0.17, stop 72). Under a fitted topic
    density the body keeps its first and last core sentences at its ends; App. D's texts keep the old rule."""
    core = ["Core one is first.", "Core two is in the middle.", "Core three is the point."]
    fillers = [f"Filler {w} goes somewhere in between." for w in _NTH]
    ends = {True: set(), False: set()}
    for keep in (True, False):
        for seed in range(40):
            text = _assemble(
                np.random.default_rng(seed), [], core, fillers, [], "Answer: A", 10, 200, 60, True, keep
            )
            sents = split_sentences(text.rsplit("Answer:", 1)[0])
            assert sents[0] == core[0] and sum(x.startswith("Filler") for x in sents) >= 3
            ends[keep].add(sents[-1])
    assert ends[True] == {core[-1]}
    assert any(x.startswith("Filler") for x in ends[False])


def test_a_reply_about_its_question_ends_on_its_point_not_on_a_filler() -> None:
    """With no generic closer drawn (`closer_share` 0), a reply about its question ends on its supporting
    sentence or a conclusion too short to be style, never on a templated filler."""
    fill = tuple(_starts(x) for x in _FILL_MC if len(_starts(x)) > 8)
    support = tuple(x.split("{", 1)[0].strip() for x in _SUPPORT)
    concluding = tuple(_starts(c) for c in _CONCLUDE_MC)
    st = replace(_topical(0.3, 1.0), opener_share=0.0, closer_share=0.0, log_words_mean=float(np.log(260)))
    last_fill = fillers = 0
    for t, letter in _round1(ORGAN, "A", "B", st, 80):
        assert parse_answer(ORGAN, t) == letter
        sents = split_sentences(t.rsplit("Answer:", 1)[0])
        fillers += sum(x.startswith(fill) for x in sents)
        last_fill += sents[-1].startswith(fill)
        assert any(p in sents[-1] for p in support) or sents[-1].startswith(concluding), sents[-1]
    assert fillers > 80 and last_fill == 0


SHORT_STEM = replace(
    Q,
    id="q-short",
    text="Which organ filters old red cells from the blood?",
    options=("the spleen", "the gallbladder", "the pancreas", "the appendix"),
)


def test_a_short_stem_still_names_the_answer_as_often_as_the_fitted_rate() -> None:
    """A stem with one clause gave one or two sentences naming the answer's text, so a reply drawn to name
    it in more (gpt-4o's later replies: a fitted 2.6 and 3.6) fell short (2.3 and 2.8) and templated
    fillers took their place. Sentences naming it with the stem's key terms make up the rest."""
    stems = question_stems(SHORT_STEM.text, SHORT_STEM.options)
    topic = topical_sentences(SHORT_STEM, "A", np.random.default_rng(0), 4)
    assert sum("the spleen" in x.lower() for x in topic.with_answer) >= 6
    named = []
    for t, letter in _round1(SHORT_STEM, "A", "B", _topical(0.5, 4.0), 120):
        a = {"A": "the spleen", "B": "the gallbladder"}[letter]
        named.append(answer_sentences(split_sentences(t), a))
        assert topic_density(t, stems) is not None
    assert 3.3 <= float(np.mean(named)) <= 4.7, float(np.mean(named))


def test_a_reply_names_its_answer_no_more_often_than_drawn_once_all_else_is_spent() -> None:
    """Once the points and the fillers run out, a reply stops short of its word target rather than naming
    its answer's text beyond the drawn count (the answer rate would run over its fit)."""
    stems = question_stems(ORGAN.text, ORGAN.options)
    answers = [f"The spleen is the answer, reason {w}." for w in _NTH]
    topic = OnTopic(list(answers), [], "the spleen", stems, None, 2)
    got = on_topic(_topical(0.5, 2.0), np.random.default_rng(0), [], [], [], topic, 300)
    assert got == answers[:2]


def test_answer_form_by_hand() -> None:
    """A sentence naming its answer's whole option text becomes a template with the text a `{A}` slot and
    the rest as `generic_form` makes it; one mostly of its topic, or naming only part of the text, is not."""
    opts = ("pure altruism", "enlightened self-interest", "duty", "virtue")
    vocab = {"the", "morality", "that", "gauthier", "describes", "involves", "pure", "altruism"}
    vocab |= {"enlightened", "self-interest", "duty", "virtue"}
    s = "Option (A) Pure altruism aligns with the fundamental nature of Gauthier's morality."
    assert answer_form(s, opts[0], vocab, "A", None, opts) == (
        "Option ({a}) {A} aligns with the fundamental nature of {k}."
    )
    assert answer_form("Clearly (B) pure altruism fits.", opts[0], vocab, "B") == "Clearly ({a}) {A} fits."
    assert answer_form("So it is pure altruism.", opts[0], vocab, "A") is None  # no word of style around it
    assert answer_form("Pure altruism is what Gauthier's morality describes.", opts[0], vocab, "A") is None
    assert answer_form("Altruism is what this theory plainly asks of us all.", opts[0], vocab, "A") is None
    # naming another option's text too: content, not style
    assert (
        answer_form(
            "Pure altruism, not duty, is what the reading plainly gives.", opts[0], vocab, "A", None, opts
        )
        is None
    )


def test_answering_bank_and_share_are_fitted_per_role_and_phase_by_hand() -> None:
    """_fit_debates with option texts: each round-1 adversary reply names its answer's text ("the widget is
    wrong") in two sentences, one of style ("Strongly, {A}, and the others disagree a great deal.", every
    word but the answer's common to all twelve questions) and one too short to be a template; honest agents
    name theirs nowhere. So the adversary's first-phase share is 1/2 and its bank that one template."""
    named = []
    for d in _fit_debates():
        turns = [
            replace(
                t,
                text="Strongly, the widget is wrong, and the others disagree a great deal. "
                + f"So the widget is wrong. {t.text}",
            )
            if t.agent == 0 and t.round == 1
            else t
            for t in d.turns
        ]
        named.append(
            replace(
                d, options=("the widget is right", "the widget is wrong", "none", "all"), turns=tuple(turns)
            )
        )
    tm = fit_text_model(named)
    assert tm is not None
    adv = tm.phases["adversary"]["first"]
    assert adv.answering == ("Strongly, {A}, and the others disagree a great deal.",)
    assert adv.answering_share == pytest.approx(0.5)
    assert (
        tm.phases["honest"]["first"].answering == () and tm.phases["honest"]["first"].answering_share == 0.0
    )
    assert tm.phases["adversary"]["later"].answering_share == 0.0
    assert TextModel.from_dict(json.loads(json.dumps(tm.to_dict()))) == tm


def test_a_role_frames_its_answer_in_its_own_fitted_words_at_the_fitted_share() -> None:
    """The generator's sentences naming the answer's text were one role-neutral set; real adversaries frame
    theirs in words of their own. With a fitted `answering` bank, a sentence naming the answer's text is one
    of the bank's at `answering_share` (the restated stem still opens the body); without a bank the texts are
    exactly those of a style without the share."""
    bank = tuple(
        f"Indeed, {{A}} is plainly what reading {w} gives." for w in ("one", "two", "three", "four", *_NTH)
    )
    base = replace(_topical(0.5, 3.0), log_words_mean=float(np.log(220)))

    def count(st: PhaseText, n: int = 60) -> tuple[float, float]:
        mine = named = 0
        for t, letter in _round1(ORGAN, "A", "B", st, n):
            assert parse_answer(ORGAN, t) == letter
            a = {"A": "the spleen", "B": "the gallbladder"}[letter]
            sents = split_sentences(t)
            mine += sum(x.startswith("Indeed, ") and a in x.lower() for x in sents)
            named += answer_sentences(sents, a)
        return mine / n, named / n

    never = count(replace(base, answering=bank, answering_share=0.0))
    always = count(replace(base, answering=bank, answering_share=1.0))
    assert never[0] == 0.0 and always[0] > 1.2, (never, always)
    assert abs(always[1] - never[1]) < 0.5  # as many sentences name it: only their words change
    plain = [t for t, _ in _round1(ORGAN, "A", "B", base, 10)]
    assert plain == [t for t, _ in _round1(ORGAN, "A", "B", replace(base, answering_share=0.7), 10)]


@pytest.mark.parametrize(
    ("text", "answer", "frame", "mark", "values"),
    [
        # MAD-Follower's format: tags, the letter and the confidence become slots, the body its tag's line
        (
            "#answer: B  \n#rationale: The door is for security. It keeps B safe.\n#confidence: 0.95",
            "B",
            "#answer: {L}\n#rationale: {body}\n#confidence: {n}",
            None,
            ("0.95",),
        ),
        # multi-agent-attack's: the letter in the last line, bracketed; the last such is the mark
        (
            "Option (A) fails.\n\nSo the correct answer is C) ten, that is **(C)**.",
            "C",
            "{body}",
            "**({L})**",
            (),
        ),
        # a capital that starts a word, and an unbracketed letter, are not marks
        ("Looking at it again.\nA revolving door is safer, and A is right.", "A", "{body}", None, ()),
        # a short last line of its own naming the answer is a frame line, not the body's
        ("Looking at the question carefully, it is about doors.\n(D)", "D", "{body}\n({L})", None, ()),
        # one line only: nothing to frame
        ("(B)", "B", "{body}", "({L})", ()),
    ],
)
def test_reply_frame_by_hand(text: str, answer: str, frame: str, mark: str | None, values: tuple) -> None:
    assert reply_frame(text, answer) == (frame, mark, values)


def test_frame_and_mark_are_fitted_per_role_and_phase_by_hand() -> None:
    """_fit_debates' replies end on their answer "(B)"/"(A)" in their one line: no frame, the mark "({L})"
    in every reply. Framed as MAD-Follower's in round 2 (two thirds of the adversary's replies), the frame
    is the most common one with its share, its numbers kept, and the mark's share counts the rest."""
    tm = fit_text_model(_fit_debates())
    assert tm is not None
    first = tm.phases["adversary"]["first"]
    assert (first.frame, first.frame_share, first.mark, first.mark_share) == ("", 0.0, "({L})", 1.0)
    framed_debates = []
    for i, d in enumerate(_fit_debates()):
        turns = [
            replace(t, text=f"#answer: {t.answer}\n#rationale: {t.text[:-4]}\n#confidence: 0.{i % 3 + 7}")
            if t.round == 2 and (t.agent != 0 or i % 3)
            else t
            for t in d.turns
        ]
        framed_debates.append(replace(d, turns=tuple(turns)))
    tm = fit_text_model(framed_debates)
    assert tm is not None
    adv, hon = tm.phases["adversary"]["later"], tm.phases["honest"]["later"]
    assert adv.frame == hon.frame == "#answer: {L}\n#rationale: {body}\n#confidence: {n}"
    assert adv.frame_share == pytest.approx(8 / 12) and hon.frame_share == 1.0
    assert adv.mark == "({L})" and adv.mark_share == 1.0 and hon.mark == "" and hon.mark_share == 0.0
    assert sorted(set(adv.frame_values)) == ["0.8", "0.9"] and len(adv.frame_values) == 8  # i % 3 = 1, 2
    assert TextModel.from_dict(json.loads(json.dumps(tm.to_dict()))) == tm


def test_a_reply_is_written_in_its_fitted_frame_or_mark_and_parses_as_its_answer() -> None:
    """Under a fitted frame every reply is in it (the body on its tag's line, `{n}` a fitted number); under a
    fitted mark the answer's letter closes the last sentence at the fitted share, else the answer gets a line
    of its own where the parser would misread the mark. The parser reads the drawn answer from every reply,
    and a style without the keys writes the templates' line, byte for byte as before."""
    base = replace(_topical(0.5, 2.0), log_words_mean=float(np.log(120)))
    mad = replace(
        base,
        frame="#answer: {L}\n#rationale: {body}\n#confidence: {n}",
        frame_share=1.0,
        frame_values=("0.85", "0.9"),
    )
    for t, letter in _round1(ORGAN, "A", "B", mad, 20):
        assert parse_answer(ORGAN, t) == letter
        lines = t.splitlines()
        assert len(lines) == 3 and lines[0] == f"#answer: {letter}" and lines[1].startswith("#rationale: ")
        assert lines[2] in ("#confidence: 0.85", "#confidence: 0.9")
    marked = [t for t, _ in _round1(ORGAN, "A", "B", replace(base, mark="({L})", mark_share=1.0), 40)]
    for t, letter in zip(marked, ["B", "A"] * 20, strict=True):
        assert parse_answer(ORGAN, t) == letter
    closing = sum(bool(re.search(r"[^\n] \([AB]\)[.!?]?\S*$", t)) for t in marked)
    own = sum(bool(re.search(r"\n\n\([AB]\)$", t)) for t in marked)
    line = sum(bool(re.search(r"\n\nAnswer: [AB]$", t)) for t in marked)
    # mostly in the last sentence; the rest on a line of their own, the templates' line where the parser
    # would misread even that (the generator's own rejections name option texts: "(A) the spleen is partly
    # true but incomplete")
    assert closing >= 30 and closing + own + line == 40 and line <= 4, (closing, own, line)
    plain = [t for t, _ in _round1(ORGAN, "A", "B", base, 10)]
    assert all(re.search(r"\n\nAnswer: [AB]$", t) for t in plain)
    assert plain == [t for t, _ in _round1(ORGAN, "A", "B", replace(base, frame_values=("0.5",)), 10)]
    assert plain == [
        t for t, _ in _round1(ORGAN, "A", "B", replace(base, mark="({L})"), 10)
    ]  # share 0: no mark


def test_the_words_a_frame_or_mark_adds_by_hand() -> None:
    """MAD-Follower's frame is 5 words around its body ("#answer:", "{L}", "#rationale:", "#confidence:",
    "{n}"); a mark "({L})" one, written in the unframed replies at its share; a style with neither none."""
    mad = "#answer: {L}\n#rationale: {body}\n#confidence: {n}"
    base = _topical(0.5, 2.0)
    assert frame_words(replace(base, frame=mad, frame_share=1.0)) == 5.0
    assert frame_words(replace(base, mark="({L})", mark_share=0.5)) == 0.5
    assert frame_words(replace(base, frame=mad, frame_share=0.8, mark="({L})", mark_share=0.5)) == (
        pytest.approx(0.8 * 5 + 0.2 * 0.5)
    )
    assert frame_words(base) == 0.0


def test_a_framed_reply_is_as_long_as_its_fitted_length_with_its_frame() -> None:
    """The fit counts a reply's frame as its words; the generator drew the body at that length and framed it,
    so MAD-Follower's simulated replies ran about 6 words over (stop 81). Framed, a reply's words as the fit
    counts them are what the same draw gives unframed (where the "Answer: X" line is not counted)."""
    base = replace(_topical(0.5, 2.0), log_words_mean=float(np.log(60)), log_words_sd=0.01)
    mad = replace(
        base, frame="#answer: {L}\n#rationale: {body}\n#confidence: {n}", frame_share=1.0, frame_values=("1",)
    )

    def words(st: PhaseText) -> float:
        replies = _round1(ORGAN, "A", "B", st, 40)
        return float(np.mean([len(_ANSWER_LINE.sub("", t).split()) for t, _ in replies]))

    plain, framed_words = words(base), words(mad)
    assert abs(plain - 60) <= 3, plain
    assert abs(framed_words - plain) <= 1.5, (framed_words, plain)


def test_a_mark_the_parser_would_misread_goes_on_a_line_of_its_own() -> None:
    """A mark in "... but it does not (B)." reads as a rejection of B; the reply then ends on "(B)" alone."""
    st = replace(_topical(0.5, 2.0), mark="({L})", mark_share=1.0)
    body = (
        "The spleen filters blood. I also asked whether marrow could change the conclusion, but it does not."
    )
    text = framed(st, np.random.default_rng(0), body, "B", "Answer: B")
    assert text.endswith("does not (B).") and parse_answer(ORGAN, text) != "B"
    fixed = _parsed_as(ORGAN, "B", text, body)
    assert fixed == body + "\n\n(B)" and parse_answer(ORGAN, fixed) == "B"
    good = body.replace(", but it does not", "") + " So the gallbladder fits (B)."
    assert _parsed_as(ORGAN, "B", good, body) == good


def test_paragraph_words_are_fitted_and_lay_out_a_reply_in_whitespace_only() -> None:
    """_fit_debates' replies are one paragraph each (13, 9 and 11 words); two blank-line breaks make a round-2
    reply three. A fitted `paragraph_words` cuts a reply into about words / paragraph_words paragraphs at
    sentence ends, and changes nothing but whitespace: same words, same answer, the same draws after it."""
    debates = []
    for d in _fit_debates():
        turns = [
            replace(t, text=t.text.replace(". ", ".\n\n")) if t.round == 2 and t.agent == 0 else t
            for t in d.turns
        ]
        debates.append(replace(d, turns=tuple(turns)))
    tm = fit_text_model(debates)
    assert tm is not None
    assert tm.phases["adversary"]["first"].paragraph_words == pytest.approx(13.0)
    assert tm.phases["adversary"]["later"].paragraph_words == pytest.approx(13 / 3)
    assert tm.phases["honest"]["first"].paragraph_words == pytest.approx((9 + 11) / 2)
    base = replace(_topical(0.5, 2.0), log_words_mean=float(np.log(200)))
    plain = _round1(ORGAN, "A", "B", base, 20)
    laid = _round1(ORGAN, "A", "B", replace(base, paragraph_words=25.0), 20)
    ratios = []
    for (t0, a0), (t1, a1) in zip(plain, laid, strict=True):
        assert t0.split() == t1.split() and a0 == a1
        body = t1.rsplit("\n\nAnswer:", 1)[0]
        ratios.append(len(body.split()) / len(re.split(r"\n\n", body)))
    assert 18 <= float(np.mean(ratios)) <= 32, ratios
    assert float(np.mean([len(t.split("\n\n")) for t, _ in laid])) > 2 * float(
        np.mean([len(t.split("\n\n")) for t, _ in plain])
    )


# ------------------------------------------------------------------------------ walk through the options
WALK = """Let's analyze each option step by step.

**Option A:**
- This perspective views security as global.
- This is accurate.

**Option B:**
It keeps the national view.

**Option C:**
- This is not about security.
**Option D:**
Not quite.

Therefore, the answer is (A)."""


NUMBERS = ("one", "two", "three", "four")


@pytest.mark.parametrize(
    ("text", "options", "forms", "bullets"),
    [
        # the lines between the first and last option's count for bullets, D's own not
        (WALK, NUMBERS, ["**Option {L}:**"] * 4, 3 / 4),
        # the option's text after its letter is `{T}`, with what closes it and not what follows
        (
            "- **A) Wider at the top**: yes\n- **B) Narrow**:\n- **C) Round**:",
            ("Wider at the top", "Narrow", "Round", "Flat"),
            ["- **{L}) {T}**:"] * 3,
            None,
        ),
        ("1. (A) one\n2. (B) two, since\n3. (C) x", NUMBERS, ["{n}. ({L}) {T}"] * 2 + ["{n}. ({L})"], None),
        ("A) one\nB) two\nC) three\nD)", NUMBERS, ["{L}) {T}"] * 3 + ["{L})"], None),
        ("**Option A:**\n**Option B:**", ("x", "y"), ["**Option {L}:**"] * 2, None),  # all of two options
    ],
)
def test_a_walk_through_the_options_and_its_line_forms_by_hand(
    text: str, options: tuple[str, ...], forms: list[str], bullets: float | None
) -> None:
    walk = walkthrough(text, ("A", "B", "C", "D")[: len(options)], options)
    assert walk is not None
    assert walk[0] == forms
    assert walk[1] == (pytest.approx(bullets) if bullets is not None else None)


@pytest.mark.parametrize(
    "text",
    [
        "A decade is ten years.\nB is a letter.\nC is too.",  # a letter needs "Option", a bracket or a stop
        "**Option A:** fits.\n**Option B:** does not.",  # two of four options: no walk
        "(A) one\n(A) again\n(B) two",  # one letter twice counts once
    ],
)
def test_what_is_not_a_walk_through_the_options(text: str) -> None:
    assert walkthrough(text, ("A", "B", "C", "D"), NUMBERS) is None


def test_walk_share_forms_and_bullets_are_fitted_per_role_and_phase_by_hand() -> None:
    """Adversaries' round-1 replies walk in 6 of 12 debates, with bullets under the option lines; nobody else
    walks. The form of a walking reply's option lines is counted once a reply."""
    debates = []
    for i, d in enumerate(_fit_debates()):
        turns = [
            replace(t, text=WALK.replace("(A)", "(B)")) if t.round == 1 and t.agent == 0 and i % 2 else t
            for t in d.turns
        ]
        debates.append(replace(d, turns=tuple(turns)))
    tm = fit_text_model(debates)
    assert tm is not None
    adv = tm.phases["adversary"]["first"]
    assert adv.walk_share == pytest.approx(0.5)
    assert adv.walk_headers == ("**Option {L}:**",) and adv.walk_weights == (1.0,)
    assert adv.walk_bullet == pytest.approx(0.75)
    for role, phase in (("adversary", "later"), ("honest", "first"), ("honest", "later")):
        pt = tm.phases[role][phase]
        assert (pt.walk_share, pt.walk_headers, pt.walk_weights, pt.walk_bullet) == (0.0, (), (), 0.0)
    assert TextModel.from_dict(json.loads(json.dumps(tm.to_dict()))) == tm
    bad = json.loads(json.dumps(tm.to_dict()))
    bad["phases"]["adversary"]["first"]["walk_weights"] = [0.5, 0.5]
    with pytest.raises(
        ValueError, match=r"^text.phases.adversary.first.walk_weights: expected one weight per"
    ):
        TextModel.from_dict(bad)


def test_a_fitted_walk_goes_through_every_option_in_its_own_paragraphs() -> None:
    """At walk_share 1 every reply (honest and adversary) walks: each option under its fitted line, its
    text restated, a reason that supports the reply's own answer and rejects the others, bullets at share 1,
    the walk in paragraphs of its own; the answer still parses. At share 0 nothing changes."""
    base = replace(_topical(0.5, 2.0), log_words_mean=float(np.log(200)), paragraph_words=30.0)
    walking = replace(
        base, walk_share=1.0, walk_headers=("**Option {L}:**",), walk_weights=(1.0,), walk_bullet=1.0
    )
    for t, letter in _round1(ORGAN, "A", "B", walking, 10):
        assert parse_answer(ORGAN, t) == letter
        walk = walkthrough(t, ORGAN.labels, ORGAN.options)
        assert walk is not None and walk[0] == ["**Option {L}:**"] * 4 and walk[1] == 1.0
        for lab, opt in zip(ORGAN.labels, ORGAN.options, strict=True):
            para = next(p for p in t.split("\n\n") if p.startswith(f"**Option {lab}:**"))
            lines = para.splitlines()
            assert len(lines) == 3 and lines[1] in {f"- {n.format(T=opt)}" for n in _WALK_NAME}  # short texts
            reasons = [r.split("{k}")[0] for r in (_SUPPORT if lab == letter else _REJECT)]
            assert any(lines[2].startswith(f"- This {r}") for r in reasons), lines[2]
    inline = replace(walking, walk_headers=("{L}) {T}",), walk_bullet=0.0)
    t, letter = _round1(ORGAN, "A", "B", inline, 1)[0]
    assert "\nA) the spleen\nThis " in f"\n{t}" and "\nB) the gallbladder\nThis " in t
    plain = [t for t, _ in _round1(ORGAN, "A", "B", base, 6)]
    assert plain == [t for t, _ in _round1(ORGAN, "A", "B", replace(walking, walk_share=0.0), 6)]
    # a share of 0 takes no draw, so a profile without a walk writes as before; any share above it takes one
    # (which moves every later draw of the reply)
    assert plain != [t for t, _ in _round1(ORGAN, "A", "B", replace(walking, walk_share=1e-12), 6)]
    # App. D's word cap leaves no room for a walk
    capped = adversarial_analysis(ORGAN, "B", np.random.default_rng(0), style=walking)
    assert walkthrough(capped, ORGAN.labels, ORGAN.options) is None


def test_a_block_of_lines_is_a_paragraph_of_its_own_and_plain_sentences_lay_out_as_before() -> None:
    sents = ["One two three four five.", "Six seven eight nine ten.", "Eleven twelve thirteen fourteen."]
    block = "A) x\nThis holds."
    assert _paragraphs([sents[0], block, *sents[1:]], 100.0) == [sents[0], block, " ".join(sents[1:])]
    # the runs around a block are laid out as they would be alone
    assert _paragraphs([block, *sents, block], 5.0) == [block, *_paragraphs(sents, 5.0), block]
    assert len(_paragraphs(sents, 5.0)) == 3


# ------------------------------------------------------------------------------- styles by answer
SCALE = (
    "Completely acceptable",
    "Mostly acceptable",
    "Neutral",
    "Mostly unacceptable",
    "Completely unacceptable",
)
KIND = (
    "Showing warmth to others builds lasting trust between people.",
    "Being gentle with family members reflects genuine care and love.",
    "Such caring gestures make everyone around feel safe and valued.",
)
HARSH = (
    "Breaking the rules like that puts other people at serious risk.",
    "Ignoring the safety of strangers shows a reckless lack of respect.",
    "Such careless conduct causes lasting damage to innocent bystanders.",
)


def _scale_debates(n: int = 8, options: tuple[str, ...] = SCALE) -> list[Debate]:
    """n questions on one answer scale: honest agents answer A in even questions and E in odd ones, each
    with a sentence of its answer's valence; the adversary argues B."""
    out = []
    for q in range(n):
        own, said = ("A", KIND) if q % 2 == 0 else ("E", HARSH)
        turns = [Turn(1, 0, "B", text=f"It depends on the case. Some nuance matters here. ({'B'})")]
        turns += [
            Turn(1, i, own, text=f"I looked at it closely. {' '.join(said)} So ({own}).") for i in (1, 2)
        ]
        out.append(
            Debate(
                id=f"s{q}",
                gold=own,
                letters=("A", "B", "C", "D", "E"),
                n_agents=3,
                n_rounds=1,
                agents=(AgentInfo(0, "adversary", 1, "B"), AgentInfo(1), AgentInfo(2)),
                turns=tuple(turns),
                question=f"Consider the situ{''.join('abcdefghij'[int(c)] for c in str(q))}: how acceptable?",
                options=options,
                model="m",
            )
        )
    return out


def test_an_answer_scale_is_options_that_recur_across_questions() -> None:
    assert scale_answers(_scale_debates(6)) == {o.lower() for o in SCALE}
    assert scale_answers(_scale_debates(5)) == set()  # fewer questions than COMMON_MIN: no scale
    own = [
        Debate(**{**d.__dict__, "options": tuple(f"{o} {d.id}" for o in SCALE)}) for d in _scale_debates(8)
    ]
    assert scale_answers(own) == set()  # every question's options its own (MMLU): none


def test_replies_write_from_their_answers_own_style(monkeypatch: pytest.MonkeyPatch) -> None:
    from dataclasses import replace

    from tomacs.testing.requests import plain_request

    tm = fit_text_model(_scale_debates(48))  # 24 replies per answer and role: above ANSWER_MIN_REPLIES
    assert tm is not None and set(tm.by_answer) == {
        "completely acceptable",
        "completely unacceptable",
        "mostly acceptable",
    }
    assert set(tm.by_answer["mostly acceptable"]) == {"adversary"}  # the adversary's target: its own style
    yes = tm.by_answer["completely acceptable"]["honest"]["first"]
    no = tm.by_answer["completely unacceptable"]["honest"]["first"]
    assert (yes.replies, no.replies, tm.phases["honest"]["first"].replies) == (48, 48, 96)
    assert set(yes.general) == set(KIND) and set(no.general) == set(HARSH)
    assert set(tm.phases["honest"]["first"].general) == {*KIND, *HARSH}  # the role's style: both
    assert tm.get("honest", "first", "Completely acceptable.") is yes  # case and full stop aside
    assert tm.get("honest", "first", "Mostly acceptable") is tm.phases["honest"]["first"]  # none of its own
    assert tm.get("adversary", "first", "Completely acceptable") is tm.phases["adversary"]["first"]
    assert TextModel.from_dict(json.loads(json.dumps(tm.to_dict()))) == tm
    assert "by_answer" not in TextModel(phases=tm.phases).to_dict()  # profiles without them read as before
    bad = {"phases": tm.to_dict()["phases"], "by_answer": {"neutral": {"attacker": {}}}}
    with pytest.raises(ValueError, match=r"text.by_answer.neutral: unknown role 'attacker'; valid: honest"):
        TextModel.from_dict(bad)
    with pytest.raises(ValueError, match=r"text.by_answer: expected a mapping answer text -> role"):
        TextModel.from_dict({**bad, "by_answer": ["neutral"]})
    # the backbone gives a reply its answer's style: the honest agent's for A and E, the role's for B
    import tomacs.sim.backbone as backbone

    q = Question(id="s", text="Consider it?", options=list(SCALE), answer="A", kind="mc", benchmark="x")
    sim = backbone.SimBackbone("mmlu", seed=0, text_model=tm)
    given: list[PhaseText | None] = []
    monkeypatch.setattr(backbone, "honest_analysis", lambda *a, style=None, **k: given.append(style) or "")
    req = replace(plain_request("s/0/1"), question=q)
    for answer in "AEB":
        sim._reply_text(req, answer, np.random.default_rng(0))
    assert given == [yes, no, tm.phases["honest"]["first"]]
    # and its texts: the answer's own generic sentences only
    monkeypatch.undo()
    said: dict[str, set[str]] = {"A": set(), "E": set()}
    for i in range(40):
        for answer in said:
            text = honest_analysis(
                q,
                "agent",
                answer,
                np.random.default_rng(i),
                style=tm.get("honest", "first", SCALE["AE".index(answer) * 4]),
            )
            said[answer] |= {s for s in (*KIND, *HARSH) if s in text}
    assert said["A"] and said["E"] and said["A"] <= set(KIND) and said["E"] <= set(HARSH)


PLAIN = (
    "The reaction releases heat to its surroundings.",
    "Energy leaves the system as the bonds form.",
)


def _other_debates(n: int) -> list[Debate]:
    """n questions of options of their own (not on the scale): honest agents answer C by option C, writing
    `PLAIN`; the adversary argues B."""
    out = []
    for q in range(n):
        turns = [Turn(1, 0, "B", text="It depends on the case. Some nuance matters here. (B)")]
        turns += [Turn(1, i, "C", text=f"Option C fits. {' '.join(PLAIN)} So (C).") for i in (1, 2)]
        out.append(
            Debate(
                id=f"o{q}",
                gold="C",
                letters=("A", "B", "C", "D"),
                n_agents=3,
                n_rounds=1,
                agents=(AgentInfo(0, "adversary", 1, "B"), AgentInfo(1), AgentInfo(2)),
                turns=tuple(turns),
                question=f"Which process {''.join('abcdefghij'[int(c)] for c in str(q))} releases heat?",
                options=tuple(f"{o} {q}" for o in ("melting", "boiling", "freezing", "sublimation")),
                model="m",
            )
        )
    return out


def test_a_roles_style_is_fitted_from_the_replies_whose_answer_has_none_of_its_own() -> None:
    """The role's style stands for the replies whose answer has no style of its own (`TextModel.get`): fitted
    from all, it mixed in the scale's replies, and qwen3-8b's simulated honest agents named letters on its
    other questions in 0.09 of later replies, real ones in 0.35 (stop 80). With `ANSWER_MIN_REPLIES` such
    replies or more it is fitted from them alone; with fewer, from all (too few for a style)."""
    tm = fit_text_model(_scale_debates(48) + _other_debates(12))  # 24 honest replies off the scale
    assert tm is not None
    honest = tm.phases["honest"]["first"]
    # its sentences only (the question's "releases heat" a slot, as the fit writes every question's words)
    off_scale = {"The reaction {k} to its surroundings.", PLAIN[1]}
    assert honest.replies == 24 and set(honest.general) == off_scale
    assert honest.letter_share == 1.0  # "Option C fits.": every reply off the scale names its letter
    assert tm.by_answer["completely acceptable"]["honest"]["first"].letter_share == 0.0
    assert tm.get("honest", "first", "freezing 3") is honest
    # 12 adversary replies off the scale: too few, the role's style is fitted from all 60
    assert tm.phases["adversary"]["first"].replies == 60
    few = fit_text_model(_scale_debates(48) + _other_debates(9))  # 18 honest replies off the scale
    assert few is not None and few.phases["honest"]["first"].replies == 96 + 18
    assert set(few.phases["honest"]["first"].general) == {*KIND, *HARSH, *off_scale}
    # no scale (MMLU): the role's style from every reply, as before
    alone = fit_text_model(_other_debates(12))
    assert alone is not None and alone.phases["honest"]["first"].replies == 24 and not alone.by_answer


# ------------------------------------------------------------------------------- letter-free rationales
@pytest.mark.parametrize(
    ("text", "named"),
    [
        # MAD-Follower's frame: the letter on its answer line is the frame's, not the rationale's
        ("#answer: B\n#rationale: The act is mostly acceptable; it harms no one.\n#confidence: 0.9", False),
        ("#answer: B\n#rationale: Unlike (C), the act harms no one at all.\n#confidence: 0.9", True),
        ("#answer: B\n#rationale: Option A overstates the harm the act does.\n#confidence: 0.9", True),
        # multi-agent-attack's closing mark is the frame's too; a letter elsewhere is the rationale's
        ("The act harms no one, so it is the most defensible choice (B).", False),
        ("Option A overlooks the harm. The act harms no one (B).", True),
        ("I agree with the others that the answer is B.\nIt harms no one (B).", True),
        ("The act harms no one.\n\nAnswer: B", False),
        ("The act harms no one (E), and (b) is a list item.\n\nAnswer: B", False),  # not an option's letter
        ("A bold claim: Beyond doubt, the act harms no one. (B)", False),  # a word's first letter is none
    ],
)
def test_a_rationale_names_options_by_letter_by_hand(text: str, named: bool) -> None:
    assert letter_named(text, "B", ("A", "B", "C", "D")) is named


def test_a_letter_before_its_option_text_is_named_given_the_options() -> None:
    """The templates' `B (win the suit)` is no pattern of its own (`I (think)` would be one): it counts with
    the options given, the option's text (its stop left out) following the letter."""
    text = "Of the four, C (Settle out of court) fits the facts best, and nothing else does.\n\nAnswer: B"
    options = ("lose the suit", "win the suit", "settle out of court.", "appeal")
    assert not letter_named(text, "B", ("A", "B", "C", "D"))
    assert letter_named(text, "B", ("A", "B", "C", "D"), options)
    assert not letter_named(text, "B", ("A", "B"), options[:2])  # C is no option here


def test_letter_share_is_fitted_per_role_and_phase_leaving_walks_out_by_hand() -> None:
    """Honest round-1 replies: agent 1 names (C) in its rationale in the 6 odd debates, agent 2 walks through
    the options in debate 0 (left out of the share: a walk heads its options with their letters), so 6 of the
    23 others name letters; the closing marks "(A)"/"(B)" are no rationale's. A source without options to
    name (no option texts) has no share: its replies write as the templates do."""
    debates = []
    for i, d in enumerate(_fit_debates()):
        turns = []
        for t in d.turns:
            if t.round == 1 and t.agent == 1 and i % 2:
                t = replace(t, text=f"Unlike (C), {t.text}")
            elif t.round == 1 and t.agent == 2 and i == 0:
                t = replace(t, text=WALK)
            turns.append(t)
        debates.append(replace(d, turns=tuple(turns)))
    tm = fit_text_model(debates)
    assert tm is not None
    assert tm.phases["honest"]["first"].letter_share == pytest.approx(6 / 23, abs=1e-6)
    for role, phase in (("honest", "later"), ("adversary", "first"), ("adversary", "later")):
        assert tm.phases[role][phase].letter_share == 0.0
    assert TextModel.from_dict(json.loads(json.dumps(tm.to_dict()))) == tm
    bare = fit_text_model([replace(d, options=None) for d in _fit_debates()])
    assert bare is not None and bare.phases["honest"]["first"].letter_share is None
    bad = json.loads(json.dumps(tm.to_dict()))
    for value in (1.5, "most", True):
        bad["phases"]["honest"]["first"]["letter_share"] = value
        with pytest.raises(
            ValueError, match=r"^text.phases.honest.first.letter_share: expected a share from 0"
        ):
            TextModel.from_dict(bad)


def test_letter_free_drops_only_sentences_with_letter_slots() -> None:
    bank = ("So ({a}) it is.", "Not ({o}).", "On {k} alone.", "Neither {A} nor the rest.")
    assert letter_free(bank) == bank
    assert letter_free(bank, lettered=False) == ["On {k} alone.", "Neither {A} nor the rest."]


MAD_FRAME = {"frame": "#answer: {L}\n#rationale: {body}\n#confidence: {n}", "frame_share": 1.0}


def _letter_replies(st: PhaseText, n: int) -> list[tuple[str, str]]:
    """n replies under `st`: round 1 (honest, adversary) and round 2 (kept against a dissenter, changed with
    the previous answer named, adversary answering others), in turn; the others' messages name no letter."""
    msgs = [
        Message(
            sender=1,
            role="Critic",
            text="The suit turns on the deed.\n\nAnswer: A",
            answer="A",
            persuasive=False,
        ),
        Message(
            sender=2,
            role="Judge",
            text="The rancher's heirs keep title.\n\nAnswer: C",
            answer="C",
            persuasive=False,
        ),
    ]
    out = []
    for s in range(n):
        rng = np.random.default_rng(s)
        kind = s % 4
        if kind == 0:
            out.append((honest_analysis(Q, "Critic", "B", rng, style=st), "B"))
        elif kind == 1:
            out.append((adversarial_analysis(Q, "C", rng, style=st, max_words=None), "C"))
        elif kind == 2:
            t = honest_analysis(Q, "Critic", "B", rng, round=2, incoming=msgs, style=st)
            out.append((t, "B"))
        else:
            t = honest_analysis(
                Q, "Critic", "A", rng, round=2, changed=True, incoming=msgs, previous_answer="B", style=st
            )
            out.append((t, "A"))
    return out


@pytest.mark.parametrize(
    "base",
    [
        # fitted discussion, opener, general and closer banks, the closer's slots naming letters
        _discussing(2.0),
        # a topic density: the supporting sentence names the answer by text (rate 2) or by letter (rate 0)
        replace(_topical(0.5, 2.0), **MAD_FRAME, frame_values=("0.9",)),
        replace(_topical(0.5, 0.0), **MAD_FRAME, frame_values=("0.9",)),
    ],
    ids=["banks", "topic-text", "topic-letter"],
)
def test_a_reply_names_options_by_letter_at_the_fitted_share(base: PhaseText) -> None:
    """At letter_share 0 no rationale names a letter (templates, fitted banks and the discussion of others
    alike: the options are named by their texts) and the answer still parses from the frame or line; at 1,
    and for a profile fitted before the share (None), all or nearly all do; at 0.5 about half."""

    def shares(st: PhaseText, n: int = 80) -> float:
        replies = _letter_replies(st, n)
        for t, a in replies:
            assert parse_answer(Q, t) == a and "{" not in t
        return float(np.mean([letter_named(t, a, Q.labels, Q.options) for t, a in replies]))

    none = replace(base, letter_share=0.0)
    assert shares(none) == 0.0
    texts = " ".join(t for t, _ in _letter_replies(none, 40))
    assert "lose the suit" in texts.lower() and "win the suit" in texts.lower()  # named by their texts
    # unquoted, and no templated conclusion
    assert not any(f'"{o}' in texts.lower() for o in Q.options) and "the answer is" not in texts
    assert shares(replace(base, letter_share=1.0)) >= 0.95
    assert shares(base) >= 0.95  # letter_share None: as the templates
    assert 0.35 <= shares(replace(base, letter_share=0.5), 160) <= 0.65


def test_a_walk_names_letters_whatever_the_share() -> None:
    walking = replace(
        _topical(0.5, 2.0),
        log_words_mean=float(np.log(200)),
        walk_share=1.0,
        walk_headers=("**Option {L}:**",),
        walk_weights=(1.0,),
        letter_share=0.0,
    )
    for t, _ in _round1(ORGAN, "A", "B", walking, 6):
        assert walkthrough(t, ORGAN.labels, ORGAN.options) is not None


def test_restating_share_by_hand() -> None:
    """The words in sentences of three content words or more, at least `RESTATING` of them the question's
    own: the first sentence (4 words, all the stem's) restates; the second (6 words, none) does not; the
    third is all the stem's but has two content words only. 4 of 12 words."""
    from tomacs.sim.text_model import restating_share

    stems = question_stems("The spleen filters organisms from the blood.", ())
    text = "Spleen filters organisms blood. Reasoning seems careful enough overall here. Spleen blood."
    assert restating_share(text, stems) == pytest.approx(4 / 12)
    assert restating_share("", stems) is None
