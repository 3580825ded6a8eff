"""Replies that send again one of the round before (`tomacs.sim.repeats`): the rule, the fit by hand, the
rates' file form, the draw, and the simulator writing them in a run (stop 82)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from tomacs.agents.adversary import AdversarySchedule
from tomacs.agents.prompts import PERSUASIVE_SUFFIX, add_persuasive_suffix, format_message
from tomacs.benchmarks.parsing import parse_answer
from tomacs.execution.executor import Executor, ExecutorConfig
from tomacs.methods.base import MethodContext
from tomacs.sim.backbone import SimBackbone
from tomacs.sim.repeats import REPEAT_MIN, fit_repeats, repeat_counts, repeated, repeats
from tomacs.sim.text_model import PhaseText, RepeatRates, TextModel, content_words, reply_body
from tomacs.testing.methods import ReadEveryone
from tomacs.testing.requests import plain_request
from tomacs.transcripts.schema import AgentInfo, Debate, Turn
from tomacs.types import Question


def _words(i: int, n: int = 8) -> str:
    """`n` content words no other call shares (letters only: a digit splits a word)."""
    return " ".join(
        "".join(chr(97 + (j // 26**k) % 26) for k in range(4)) + "ly" for j in range(i * n, i * n + n)
    )


def test_the_rule_reads_the_rationale_without_its_frame() -> None:
    """MAD-Follower's frame and an "Answer:" line are no part of what is compared: two replies with one
    rationale and different frames repeat each other; one word in five changed still does (Jaccard 0.8 with
    the stop words and short words left out), two do not."""
    a = f"#answer: B\n#rationale: {_words(1, 10)}\n#confidence: 0.95"
    b = f"{_words(1, 10)}\n\nAnswer: B"
    assert reply_body(a, "B") == _words(1, 10)
    assert content_words(a, "B") == content_words(b, "B") and len(content_words(a, "B")) == 10
    one = _words(1, 10).split()
    near = content_words(" ".join([*one[:9], "zzzzly"]), "B")  # 9 shared of 11: 0.82
    far = content_words(" ".join([*one[:8], "zzzzly", "yyyyly"]), "B")  # 8 of 12: 0.67
    assert repeats(content_words(a, "B"), near) and not repeats(content_words(a, "B"), far)
    assert not repeats(frozenset(), frozenset())


def _debate(q: int, rounds: int, copy_own: bool, copy_read: bool) -> Debate:
    """Agent 0 an adversary for B from round 1; agents 1 and 2 honest for A. In round 2, agent 1 sends its
    round-1 reply again when `copy_own`, agent 2 agent 1's round-1 reply when `copy_read`; in round 3 (where
    there is one) both send their round-2 replies again."""
    text = {
        (a, r): f"{_words(100 * q + 10 * a + r)}\n\nAnswer: {'B' if a == 0 else 'A'}"
        for a in range(3)
        for r in (1, 2)
    }
    if copy_own:
        text[(1, 2)] = text[(1, 1)]
    if copy_read:
        text[(2, 2)] = text[(1, 1)]
    turns = []
    for r in range(1, rounds + 1):
        for a in range(3):
            read = tuple((b, r - 1) for b in range(3) if b != a) if r > 1 else ()
            turns.append(Turn(r, a, "B" if a == 0 else "A", read=read, text=text[(a, min(r, 2))]))
    return Debate(
        id=f"d{q}",
        gold="A",
        letters=("A", "B", "C", "D"),
        n_agents=3,
        n_rounds=rounds,
        agents=(AgentInfo(0, "adversary", 1, "B"), AgentInfo(1), AgentInfo(2)),
        turns=tuple(turns),
    )


def test_repeat_rates_fitted_by_hand() -> None:
    """25 debates: in round 2, agent 1 repeats its own reply in 5 and agent 2 copies agent 1's in 10.

    Own, round 2: 50 honest replies keep their answer, 5 repeat: 0.1. Read: the 45 others each read an
    honest reply giving A, 10 copy one: 0.2222. The adversary keeps B and reads no other B: it never could
    copy a read reply, and never repeats its own, so it has no rates. Round 3 exists in 5 debates only:
    10 honest replies, all repeats, fewer than `REPEAT_MIN`, so round 3 takes round 2's own rate; none of
    them could copy a read reply, so the read rates end at round 2 (its rate stands for every later round)."""
    ds = [_debate(q, 3 if q < 5 else 2, copy_own=q < 5, copy_read=q < 10) for q in range(25)]
    counts = repeat_counts(ds)
    assert counts[("honest", "own", 2)] == (50, 5)
    assert counts[("honest", "read", 2)] == (45, 10)
    assert counts[("honest", "own", 3)] == (10, 10) and 10 < REPEAT_MIN
    assert counts[("adversary", "own", 2)] == (25, 0) and ("adversary", "read", 2) not in counts
    fitted = fit_repeats(ds)
    assert set(fitted) == {"honest"}
    assert fitted["honest"] == RepeatRates(own=(0.1, 0.1), read=(0.222222,))
    assert fit_repeats([_debate(q, 2, False, False) for q in range(25)]) == {}  # no repeats: no rates


def test_the_rate_of_a_round() -> None:
    r = RepeatRates(own=(0.1, 0.4, 0.6), read=(0.2,))
    assert [r.at("own", t) for t in (1, 2, 3, 4, 7)] == [0.0, 0.1, 0.4, 0.6, 0.6]
    assert [r.at("read", t) for t in (1, 2, 5)] == [0.0, 0.2, 0.2]
    assert RepeatRates().at("own", 3) == 0.0


_STYLE = PhaseText(
    replies=10, log_words_mean=4.0, log_words_sd=0.3, generic_share=0.2, opener_share=0.1, closer_share=0.1
)
_TM = TextModel(phases={"honest": {"first": _STYLE, "later": _STYLE}})


def test_rates_are_written_and_read_back_and_a_model_without_them_is_written_as_before() -> None:
    tm = replace(_TM, repeats={"honest": RepeatRates((0.1, 0.35), (0.0, 0.2))})
    d = tm.to_dict()
    assert d["repeats"] == {"honest": {"own": [0.1, 0.35], "read": [0.0, 0.2]}}
    assert TextModel.from_dict(d) == tm
    assert "repeats" not in _TM.to_dict() and TextModel.from_dict(_TM.to_dict()).repeats == {}
    with pytest.raises(ValueError, match=r"^text\.repeats: expected a mapping role \(honest, adversary\)"):
        TextModel.from_dict({**d, "repeats": {"judge": {"own": [0.1]}}})
    with pytest.raises(
        ValueError, match=r"^text\.repeats\.honest: rates must be lists of numbers in \[0, 1\]"
    ):
        TextModel.from_dict({**d, "repeats": {"honest": {"own": [1.5]}}})
    with pytest.raises(ValueError, match=r"^text\.repeats\.honest: expected a mapping with `own` and `read`"):
        TextModel.from_dict({**d, "repeats": {"honest": {"ours": [0.1]}}})


def test_a_message_body_is_what_format_message_wrapped() -> None:
    from tomacs.agents.prompts import message_body

    reply = "---\nA reply that opens with a rule.\n\nAnswer: B"
    for temporal in (False, True):
        assert message_body(format_message("Critic", reply, previous_round=temporal)) == reply
    assert message_body(reply) == reply  # no header: as it is (its own "---" line kept)


def test_the_draw_sends_its_own_reply_or_one_it_read_that_gives_its_answer() -> None:
    rng = np.random.default_rng(0)
    mine = add_persuasive_suffix("Mine.\n\nAnswer: A")
    read = [
        (format_message("Critic", "Theirs for B.\n\nAnswer: B"), "B"),
        (format_message("Critic", "Theirs.\n\nAnswer: A"), "A"),
    ]
    always_own, always_read = RepeatRates(own=(1.0,)), RepeatRates(read=(1.0,))
    # its own, without the suffix the executor appends to an adversary's reply (it would carry two)
    assert repeated(always_own, rng, 3, "A", (mine, "A"), read) == "Mine.\n\nAnswer: A"
    assert PERSUASIVE_SUFFIX not in str(repeated(always_own, rng, 3, "A", (mine, "A"), ()))
    # its answer changed: not its own; one it read giving its answer, without the receiver's header
    assert repeated(always_own, rng, 3, "B", (mine, "A"), read) is None
    assert repeated(always_read, rng, 3, "A", (mine, "B"), read) == "Theirs.\n\nAnswer: A"
    assert repeated(always_read, rng, 3, "C", (mine, "B"), read) is None
    assert repeated(RepeatRates(own=(0.0,), read=(0.0,)), rng, 3, "A", (mine, "A"), read) is None
    assert repeated(always_own, rng, 1, "A", (mine, "A"), read) is None  # round 1 has no round before
    some = RepeatRates(own=(0.3,))
    hits = sum(repeated(some, rng, 2, "A", (mine, "A"), ()) is not None for _ in range(2000))
    assert 0.26 < hits / 2000 < 0.34


_ORGANS = ("spleen", "liver", "lung", "skin")


def _organ(i: int = 3) -> Question:
    text = f"Which organ number {i} filters the blood?"
    return Question(id=f"q{i}", text=text, options=_ORGANS, answer="A", benchmark="mmlu", kind="mc")


def _reply(tm: TextModel, previous: str | None, answer: str | None) -> str:
    """A round-3 honest reply to `_organ()` whose own previous reply was `previous`, giving `answer`."""
    req = replace(
        plain_request("5/test/q3/1/3"),
        question=_organ(),
        role="Critic",
        round=3,
        previous_text=previous,
        previous_answer=answer,
    )
    return SimBackbone("mmlu", seed=0, text_model=tm).generate_one(req).text


def test_the_backbone_repeats_at_the_fitted_rate_and_otherwise_writes_what_it_wrote_before() -> None:
    """Rates of 0 leave every reply as a text model without rates writes it (the repeat draws from a stream
    of its own); a rate of 1 sends the agent's own previous reply when its answer stands, and a new one when
    it does not."""
    zero = replace(_TM, repeats={"honest": RepeatRates((0.0,), (0.0,))})
    one = replace(_TM, repeats={"honest": RepeatRates((1.0,), (0.0,))})
    stood = 0
    for x in "ABCD":
        before = f"{_words(7)}\n\nAnswer: {x}"
        fresh = _reply(_TM, before, x)
        assert _reply(zero, before, x) == fresh
        if parse_answer(_organ(), fresh) == x:
            assert _reply(one, before, x) == before
            stood += 1
        else:
            assert _reply(one, before, x) == fresh
    assert stood >= 1


def test_a_simulated_run_sends_replies_again_and_the_executor_shows_each_agent_its_own() -> None:
    """A run on the sim backbone with an own-repeat rate of 1: from round 2 on every honest agent whose
    answer stands sends its previous reply again, word for word; App. D's adversary, whose prompt shows it
    nothing of its own, never does (the executor gives it no previous text)."""
    always = RepeatRates((1.0,), (1.0,))
    tm = replace(_TM, repeats={"honest": RepeatRates((1.0,), (0.0,)), "adversary": always})
    n, rounds = 4, 3
    roles = ["Critic"] * n
    bb = SimBackbone("mmlu", seed=0, text_model=tm)
    seen: list = []
    gen = bb.generate

    async def recording(reqs):  # noqa: ANN001, ANN202
        seen.extend(reqs)
        return await gen(reqs)

    bb.generate = recording  # type: ignore[method-assign]
    sched = AdversarySchedule(n_agents=n, rounds=rounds, count=1, rate=None, onset_rounds=(1,))
    ex = Executor(ExecutorConfig(n, rounds, roles, seed=3), bb, sched)
    method = ReadEveryone(MethodContext(n_agents=n, rounds=rounds, roles=roles, seed=3))
    eps, _ = ex.run_batch([_organ(i) for i in range(6)], method, train=False, phase="eval")
    kept = 0
    for ep in eps:
        for t in range(1, rounds):
            for now, before in zip(ep.rounds[t], ep.rounds[t - 1], strict=True):
                if now.behaviour == "honest" and now.answer == before.answer:
                    assert now.text == before.text
                    kept += 1
                elif now.behaviour == "adversarial":
                    assert now.text != before.text
    assert kept >= 10
    later = [r for r in seen if r.kind == "agent" and r.round >= 2]
    assert later and all((r.previous_text is None) == (r.behaviour == "adversarial") for r in later)


def test_the_texts_check_marks_each_reply_that_repeats() -> None:
    """`transcripts texts` reads each reply's repeat by the fit's rule and prints it as a style row: 1 where
    it repeats, 0 where it could have and did not, none where it could not (round 1)."""
    from tomacs.analysis.texts import replies_of, style_table

    ds = [_debate(q, 2, copy_own=q < 5, copy_read=q < 10) for q in range(20)]
    by = {(r.debate, r.agent, r.round): r.repeats for r in replies_of(ds, real=True)}
    assert by[("d0", 1, 2)] == 1.0 and by[("d0", 2, 2)] == 1.0 and by[("d7", 1, 2)] == 0.0
    assert by[("d7", 2, 2)] == 1.0 and by[("d12", 2, 2)] == 0.0 and by[("d0", 0, 2)] == 0.0
    assert by[("d0", 1, 1)] is None
    row = next(
        r
        for r in style_table(replies_of(ds, real=False), replies_of(ds, real=True))
        if r["stat"] == "repeats"
    )
    # the honest replies that could repeat (round 2's 40; round 1's have none): 5 + 10 do
    assert row["real_honest"] == pytest.approx(15 / 40) and row["real_adversary"] == 0.0
