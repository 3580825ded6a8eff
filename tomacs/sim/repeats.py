"""Replies that repeat a reply of the round before: how often real agents do it, and the simulator's draw.

Why: from round 3 on, real MAD-Follower agents often send again, nearly word for word, a reply they already
sent or read. Of qwen3-8b's honest replies whose answer stands, 0.04 repeat their own previous reply in round
2, 0.35 in round 3, 0.55 and 0.69 in rounds 4 and 5; of the rest, those with a reply read that gives their
answer copy one in 0.02 / 0.18 / 0.37 / 0.35. Its adversaries: 0.00 / 0.15 / 0.38 / 0.49 and 0.07 / 0.10 /
0.14 / 0.22. qwen-max's honest agents 0.01 / 0.13 and 0.00 / 0.06; multi-agent-attack's agents 0.01 or less
(all of each source's debates, stop 82). Every simulated reply was written afresh, so the honest replies of
one debate stayed apart (qwen3-8b, MiniLM cosine in round 3: 0.69, real 0.96), and so did an agent's reply
and its previous one (0.70 against 0.96): App. C's persistence features read exactly that. A repeat copies
the simulated debate's own reply, never a transcript's.

The rule, for the fit and the texts check alike: a reply repeats another when the content words of their
rationales (`text_model.content_words`: frame, answer line and suffix left out) overlap by `REPEAT_JACCARD`
or more. A reply may repeat its own previous reply when it gives the same answer; else one it read that
gives its answer (`Turn.read`, the others' replies only). The rates are per round from round 2, each the
share of the replies that could repeat that did; a round with fewer than `REPEAT_MIN` such replies takes
the rate of the round before (round 2's: none), and the last round fitted stands for every later one.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tomacs.agents.prompts import PERSUASIVE_SUFFIX, message_body
from tomacs.sim.text_model import REPEAT_KINDS, RepeatRates, content_words
from tomacs.transcripts.schema import Debate

REPEAT_JACCARD = 0.8
REPEAT_MIN = 20


def repeats(a: frozenset[str], b: frozenset[str]) -> bool:
    """Whether two replies' content words (`content_words`) overlap enough to count one a repeat."""
    union = len(a | b)
    return union > 0 and len(a & b) / union >= REPEAT_JACCARD


def repeat_events(d: Debate) -> dict[tuple[int, int], list[tuple[str, bool]]]:
    """(agent, round) -> what each reply of round 2 on could repeat and whether it did: ("own", did) where
    it gives its own previous answer, then, unless it repeated its own, ("read", did) where a reply it read
    gives its answer. A reply that could repeat neither has no entry."""
    turns = {(t.agent, t.round): t for t in d.turns if t.text}
    words = {k: content_words(str(t.text), t.answer) for k, t in turns.items()}
    out: dict[tuple[int, int], list[tuple[str, bool]]] = {}
    for (agent, r), t in turns.items():
        if r < 2 or t.answer is None:
            continue
        events: list[tuple[str, bool]] = []
        prev = turns.get((agent, r - 1))
        if prev is not None and prev.answer == t.answer:
            events.append(("own", repeats(words[(agent, r)], words[(agent, r - 1)])))
        read = [k for k in t.read if k in turns and k[0] != agent and turns[k].answer == t.answer]
        if read and not (events and events[0][1]):
            events.append(("read", any(repeats(words[(agent, r)], words[k]) for k in read)))
        if events:
            out[(agent, r)] = events
    return out


def repeat_counts(debates: Sequence[Debate]) -> dict[tuple[str, str, int], tuple[int, int]]:
    """(role, kind, round) -> (replies that could repeat, replies that did), for rounds 2 on; a reply's role
    is its role in its round (`Debate.is_adversarial`)."""
    out: dict[tuple[str, str, int], list[int]] = {}
    for d in debates:
        for (agent, r), events in repeat_events(d).items():
            role = "adversary" if d.is_adversarial(agent, r) else "honest"
            for kind, did in events:
                row = out.setdefault((role, kind, r), [0, 0])
                row[0] += 1
                row[1] += did
    return {k: (v[0], v[1]) for k, v in out.items()}


def fit_repeats(debates: Sequence[Debate]) -> dict[str, RepeatRates]:
    """Each role's `RepeatRates` from `debates`; a role with no round of `REPEAT_MIN` replies that could
    repeat, or none that did, has none (its simulated replies are written afresh, as before)."""
    counts = repeat_counts(debates)
    out: dict[str, RepeatRates] = {}
    for role in ("honest", "adversary"):
        rates: dict[str, list[float]] = {}
        for kind in REPEAT_KINDS:
            last = max((r for (ro, k, r) in counts if ro == role and k == kind), default=1)
            seq: list[float] = []
            for r in range(2, last + 1):
                n, hit = counts.get((role, kind, r), (0, 0))
                seq.append(round(hit / n, 6) if n >= REPEAT_MIN else (seq[-1] if seq else 0.0))
            rates[kind] = seq if any(seq) else []
        if rates["own"] or rates["read"]:
            out[role] = RepeatRates(tuple(rates["own"]), tuple(rates["read"]))
    return out


def repeated(
    rates: RepeatRates,
    rng: np.random.Generator,
    round: int,
    answer: str,
    previous: tuple[str | None, str | None],
    read: Sequence[tuple[str, str | None]],
) -> str | None:
    """The reply a simulated agent sends again, or None when it writes a new one: its own previous reply
    (`previous`: text, answer) at the fitted `own` rate when its answer stands, else one it read giving its
    answer (`read`: the messages its prompt shows, text and answer; the fit counts every reply a turn read, as
    here) at the `read` rate. One or two draws from `rng`, a stream of its own, so a reply written afresh is
    the one it was before."""
    text, prev_answer = previous
    if text and prev_answer == answer and rng.random() < rates.at("own", round):
        return _unsuffixed(text)
    same = [message_body(t) for t, a in read if a == answer and t]
    if same and rng.random() < rates.at("read", round):
        return _unsuffixed(same[int(rng.integers(len(same)))])
    return None


def _unsuffixed(text: str) -> str:
    """A reply without App. D's persuasive suffix: the executor appends it to an adversary's reply, and a
    repeat would carry a second one (an honest agent's copy, one it never wrote)."""
    return text.replace(PERSUASIVE_SUFFIX, "").rstrip()
