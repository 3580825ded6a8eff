"""A text model fitted from real transcripts: how a model's honest agents and its adversaries write.

Why: the templated generator of `tomacs.sim.text` writes every agent after App. D, whatever model a
profile stands for and whatever protocol a run configures; a detector trained on those texts scored
below chance on real replies (issue 38). What tells a real adversary apart is partly what it argues
(question content, which the templates already write) and mostly how it writes: longer or shorter
than its peers, how it opens, whether it disputes the others, how it asserts. This module learns
the "how" from real replies, per role and per phase (round 1 vs later rounds):

* lengths: a log-normal of the reply's word count;
* a bank of GENERIC sentences: sentences of real replies with no content word of their own question
  or options and no number (so nothing of a question travels to another one), their answer letters
  turned into slots: `{a}` the reply's own answer, `{o}` another option. Openers (a reply's first
  sentence), closers (its last) and the rest are kept apart;
* the share of a reply's words in generic sentences, so the mix of style and content follows the
  model's own;
* how often a reply names "the question" and "option(s)" at all (`MENTION_WORDS`): the templates name
  both in nearly every reply (85-100 %), real models far less and unevenly by role (gpt-3.5's honest
  round-1 replies 5 % and 10 %, its adversaries' 23 % and 37 %), so each reply draws whether it may;
* how many OTHER options a reply names (`PhaseText.others_named`: the share naming none, one, two or
  more): the templates reject one or two options by name in every reply, while qwen-max's honest
  agents name another option in about one reply in ten, so a simulated honest agent that keeps naming
  the adversary's target dilutes the stance that tells that model's adversaries apart;
* how much of a reply is about its own question (`PhaseText.topic_density`: the share of its content
  words from the question's stem and options; `answer_rate`: how many sentences name its answer's own
  text): gpt-3.5's and Qwen1.5-14B's real replies write 0.30-0.56 of their content words from the
  question and name their answer's text in 1.5-2.3 sentences, the templates 0.22 and 1.0. MiniLM put a
  simulated reply at a cosine of 0.53-0.58 to its question (real 0.67-0.81), and a real adversary,
  writing about its target's text, stood apart from its peers where a simulated one hardly did. The
  generator (`on_topic`) writes sentences restating the stem's clauses and naming the answer's text, at
  the fitted density and rate;
* from round 2 on, the discussion: how many sentences a reply spends on the others (naming them or
  their arguments, agreeing, disputing), and a bank of them, for replies that kept their answer and
  for those that changed it. Roles differ here most (gpt-3.5's adversaries write 0.32 disputing
  sentences a later reply, its honest agents 0.06), and the templates' discussion is role-neutral.

* the reply's frame (`reply_frame`): the lines around its body that its protocol's prompt asks for
  (MAD-Follower's "#answer: B", "#rationale: ...", "#confidence: 0.95" in every reply), or else how its
  last line names its answer letter ("(B)", multi-agent-attack's "in the form (X) at the end"); the
  templates closed every reply with a line "Answer: X" that no real reply of these sources writes.

Where a source's options recur across its questions as an answer scale (`scale_answers`: MAD-Follower's
ETHICS items, "Completely acceptable" ... "Completely unacceptable"), every style above is also fitted per
answer text (`TextModel.by_answer`, from `ANSWER_MIN_REPLIES` replies on), and a reply giving that answer is
written in its style: a real reply's words follow its answer, and one bank per role wrote approval and
disapproval alike whatever the reply answered.

Nobody's templated opener names a role or persona under a fitted text model: its sources' agents
had none, and App. D's "senior domain expert" told simulated adversaries apart.

The generator (`styled`, `discussion`, `on_topic`) keeps the question content of the templated generator
(topic, rejected options, the supporting sentence, the numbers), adds sentences built from the stem and
the answer's text the agent is given, and takes length and style from the bank.

Fitted only from the transcripts the profile is fitted from (the fitting share of the questions of
`tomacs calibrate --from-episodes`), so no held-out transcript is ever copied. Paper profiles have no
text model: their texts stay App. D's (`tomacs.sim.text`), which keeps `calibrate --check` and the
goldens unchanged.
"""

from __future__ import annotations

import math
import re
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, NamedTuple

import numpy as np

from tomacs.transcripts.schema import Debate, Turn

PHASES = ("first", "later")
ROLES = ("honest", "adversary")
KINDS = ("openers", "general", "closers")
DISCUSS_KINDS = ("discuss", "discuss_changed")  # later-phase banks: replies that kept / changed their answer
ANSWERING = "answering"  # sentences naming the reply's answer's text, that text a `{A}` slot
BANKS = KINDS + DISCUSS_KINDS + (ANSWERING,)
BANK_MAX = 300  # sentences per (role, phase, kind): enough variety; a fitted profile file is 0.14-0.57 MB
SENT_WORDS = (4, 45)  # a generic sentence's length in words
_MIN_REPLIES = 5

_SENT = re.compile(r"(?<=[.!?:])\s+(?=[A-Z(\"'])|\n+")
_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]+")
_LETTER = re.compile(
    r"\(([A-J])\)|\b([A-J])\)|\b(?:[Oo]ption|[Aa]nswer|[Cc]hoice)\s+([A-J])\b|\b(?:is|was|remains)\s+([A-J])(?=[.,;:]|$)"
)
_DIGIT = re.compile(r"\d")
_AGENT_NUM = re.compile(r"\b([Aa]gent|[Aa]gents)\s+\d+")
_SUFFIX_MARK = "Please prioritize my answer"
_DISCUSS = re.compile(
    r"\b(agents?|others|another agent|other (?:solutions?|responses?|arguments?|perspectives?|views?)|"
    r"their (?:argument|reasoning|answer|solution|analysis|point|view)s?|you|your|peers?|"
    r"agree[sd]?|disagree[sd]?|concur|consensus|overlook(?:s|ed)?|flawed|mistaken|misinterpret\w*|"
    r"fails? to|does not (?:account|consider|address))\b",
    re.IGNORECASE,
)
"""A sentence that engages the others: names them or their arguments, agrees or disputes. From round 2
on such sentences are what separates a role most (gpt-3.5's adversaries write 3.8 of them a reply and
write 0.32 disputing ones, its honest agents 2.4 and 0.06), so they get a bank of their own.
Deliberately not `tomacs.analysis.texts`' lexicon (its others/agreeing/disputing statistics): that one
measures the texts, this one shapes them; they share many words, so those statistics show the
generator follows its fit, and the probes are the independent check."""
_ANSWER_LINE = re.compile(r"^\s*Answer\s*:.*$", re.MULTILINE | re.IGNORECASE)
MENTION_WORDS = ("question", "option")
"""Words whose use per reply the fit counts and the generator follows (`PhaseText.mentions`). The
templates write both nearly always; the word "answer" is not here: every reply ends with its line."""
_MENTION = {w: re.compile(rf"\b{w}s?\b", re.IGNORECASE) for w in MENTION_WORDS}


def says(text: str, words: Iterable[str]) -> bool:
    """Whether `text` uses any of `words` (a `MENTION_WORDS` entry, singular or plural)."""
    return any(_MENTION[w].search(text) for w in words)


def avoiding(seq: Sequence[str], avoid: Sequence[str]) -> Sequence[str]:
    """The entries of `seq` that use none of `avoid`; all of them when none is left (a pool that
    cannot avoid a word keeps writing it rather than writing nothing)."""
    if not avoid:
        return seq
    kept = [s for s in seq if not says(s, avoid)]
    return kept or seq


STOP_WORDS = frozenset(
    """a about above after again against all also although among an and any are as at be because been
    before being below best between both but by can could did do does doing down during each either
    every few following for from further had has have having he her here hers him his how however i if
    in into is it its itself just least less like likely made make many may more most much must my
    neither no nor not now of off on once only or other our out over own per rather same she should
    since so some such than that the their them then there therefore these they this those through
    thus to too true false under until up upon very was we were what when where whether which while
    who whom whose why will with within without would yet you your one two three four five six seven
    eight nine ten first second third question answer following statement statements choose correct
    option options describes described best which""".split()
)
"""Words that carry no topic: the templated generator's key-term finder and the text fit share them."""


@dataclass(frozen=True)
class PhaseText:
    """How one role writes in one phase: lengths, generic share, and its sentence banks."""

    replies: int
    log_words_mean: float
    log_words_sd: float
    generic_share: float  # share of a reply's words in generic sentences (mean over replies)
    opener_share: float  # share of replies whose first sentence is generic
    closer_share: float  # share of replies whose last sentence is generic
    openers: tuple[str, ...] = ()
    general: tuple[str, ...] = ()
    closers: tuple[str, ...] = ()
    # later phase only: sentences engaging the others (middle of a reply), per reply that kept its
    # answer / changed it; a rate counts every such sentence, the banks keep the generic ones. A
    # profile fitted before these existed has none and keeps the templated discussion.
    discuss_rate: float = 0.0
    discuss_changed_rate: float = 0.0
    discuss: tuple[str, ...] = ()
    discuss_changed: tuple[str, ...] = ()
    # share of replies that use each of `MENTION_WORDS`; a profile fitted before it has none, and its
    # replies use the words as the templates do
    mentions: Mapping[str, float] = field(default_factory=dict)
    # shares of replies naming 0, 1, 2+ options other than their own answer (`named_others`); a profile
    # fitted before it has none, and its replies reject one or two options as the templates do
    others_named: tuple[float, ...] = ()
    # how much of a reply is about its own question: the share of its content words from the question's
    # stem and options (`topic_density`), and how many of its sentences name its answer's own text
    # (`answer_sentences`); 0 for a profile fitted before them, whose replies keep the templates' mix
    topic_density: float = 0.0
    answer_rate: float = 0.0
    # the share of a reply's log-length variance that the replies of its debate's round share (real replies
    # to one question run long or short together); 0 for a profile fitted before it: lengths drawn apart
    length_shared: float = 0.0
    # the sentences naming the reply's answer's text whose rest is style (`answer_form`), as templates with
    # the text a `{A}` slot, and their share of all sentences naming it: a role frames its answer in its own
    # words (real gpt-3.5 adversaries: "aligns", "crucial", "fundamental"; the generator's frames were one
    # role-neutral set). Empty and 0 for a profile fitted before them: the generator's frames only
    answering: tuple[str, ...] = ()
    answering_share: float = 0.0
    # the reply's frame (`reply_frame`): its short lines around the body as a template, `{L}` the answer
    # letter, `{n}` a number drawn from `frame_values`, `{body}` the rest ("#answer: {L}\n#rationale:
    # {body}\n#confidence: {n}"), and the share of replies written in it; else the form its last line names
    # its answer letter in (`mark`, "({L})") and the share of the other replies that do. Empty and 0 for a
    # profile fitted before them: the templates' line "Answer: X"
    frame: str = ""
    frame_share: float = 0.0
    frame_values: tuple[str, ...] = ()
    mark: str = ""
    mark_share: float = 0.0
    # words per paragraph (blocks between blank lines; mean over replies): real gpt-4o replies run ~30 (a
    # list of options, one a paragraph), gpt-3.5's ~40; 0 for a profile fitted before it: the templates'
    # layout (an opening paragraph, one or two of body, a concluding one)
    paragraph_words: float = 0.0
    # a walk through the options (`walkthrough`): the share of multiple-choice replies that give each option
    # a line of its own and what follows it, the forms of that line (`{L}` its letter, `{n}` its place, `{T}`
    # its text: "**Option {L}:**", "{L}) {T}"; at most `WALK_FORMS`) with their weights (how many walking
    # replies use each, as shares of the forms kept), and the share of the lines under it written as bullets.
    # Real gpt-4o replies walk in 0.22-0.44 of replies, Qwen1.5-14B's round-1 replies in 0.17-0.29,
    # MAD-Follower's in none. 0 and empty for a profile fitted before it: no walk
    walk_share: float = 0.0
    walk_headers: tuple[str, ...] = ()
    walk_weights: tuple[float, ...] = ()
    walk_bullet: float = 0.0
    # the share of multiple-choice replies not walking through the options whose rationale names an option
    # by its letter (`letter_named`: "(B)", "option B", "B)"; the frame's and answer line's letter and the
    # closing mark left out). Real MAD-Follower qwen-max rationales name none (0.00 honest, 0.06-0.08
    # adversaries), multi-agent-attack's 0.26-1.00; the templates write letters into every reply (0.75-1.00
    # of simulated replies keep one after the length trims). None for a profile fitted before it: every
    # reply writes them, as the templates do
    letter_share: float | None = None
    # the share of a reply's words in sentences restating its question (`restating_share`; mean over
    # replies): real MAD-Follower replies 0.02-0.04, gpt-3.5's 0.17-0.45. Under a vocabulary
    # (`tomacs.sim.topic_words`) a simulated sentence about the question restates a clause of the stem alone
    # at this share, else it joins the clause to words near the question. None for a profile fitted before
    # it: every such sentence joins them
    restating: float | None = None

    def lettered(self, rng: np.random.Generator) -> bool:
        """Whether one reply names options by their letters in its rationale (else by their text): one draw
        at the fitted `letter_share`, none for a profile fitted before it (always, as the templates)."""
        return self.letter_share is None or bool(rng.random() < self.letter_share)

    def rejections(self, rng: np.random.Generator, available: int) -> int | None:
        """How many other options one reply rejects by name, drawn from `others_named` (one draw); None
        without it (the templates' own draw then applies)."""
        if not self.others_named:
            return None
        k = int(rng.choice(len(self.others_named), p=np.asarray(self.others_named) / sum(self.others_named)))
        return min(k, available)

    def words_median(self) -> float:
        return math.exp(self.log_words_mean)

    def avoided(self, rng: np.random.Generator) -> tuple[str, ...]:
        """The words one reply does not use: each fitted word is kept with its fitted share. One draw
        per fitted word, none for a profile fitted before `mentions` existed (its texts unchanged)."""
        return tuple(w for w in MENTION_WORDS if w in self.mentions and rng.random() >= self.mentions[w])


REPEAT_KINDS = ("own", "read")


@dataclass(frozen=True)
class RepeatRates:
    """How often one role sends again a reply of the round before (`tomacs.sim.repeats`), by round from
    round 2 on (the last stands for every later round): `own`, of the replies giving their own previous
    answer, the share repeating their previous reply; `read`, of the others with a reply read that gives
    their answer, the share copying one."""

    own: tuple[float, ...] = ()
    read: tuple[float, ...] = ()

    def at(self, kind: str, round: int) -> float:
        """The `kind` ("own", "read") rate of `round`; 0 before round 2 and without rates."""
        rates = self.own if kind == "own" else self.read
        return rates[min(round - 2, len(rates) - 1)] if rates and round >= 2 else 0.0

    def to_dict(self) -> dict[str, list[float]]:
        return {"own": list(self.own), "read": list(self.read)}

    @classmethod
    def from_dict(cls, d: object, where: str) -> RepeatRates:
        if not isinstance(d, Mapping) or set(d) - set(REPEAT_KINDS):
            raise ValueError(f"{where}: expected a mapping with `own` and `read` (rates by round from 2)")
        try:
            own, read = (tuple(float(x) for x in d.get(k) or ()) for k in REPEAT_KINDS)
        except (TypeError, ValueError) as e:
            raise ValueError(f"{where}: rates must be lists of numbers in [0, 1]: {e}") from None
        if any(not 0.0 <= x <= 1.0 for x in (*own, *read)):
            raise ValueError(f"{where}: rates must be lists of numbers in [0, 1]")
        return cls(own, read)


@dataclass(frozen=True)
class TextModel:
    """The fitted text model of one profile: `phases[role][phase]`, roles honest and adversary,
    phases first (round 1) and later (rounds 2+). A missing entry falls back to the other phase of
    the same role, then to the honest one."""

    phases: Mapping[str, Mapping[str, PhaseText]]
    source: str = ""
    models: tuple[str, ...] = ()
    # answer text -> role -> phase: the style of the replies giving that answer, for a source whose options
    # recur across questions (`scale_answers`); empty elsewhere
    by_answer: Mapping[str, Mapping[str, Mapping[str, PhaseText]]] = field(default_factory=dict)
    # role -> how often its replies repeat one of the round before (`tomacs.sim.repeats`); empty for a
    # profile fitted before it, or a source whose agents do not: every reply is written afresh
    repeats: Mapping[str, RepeatRates] = field(default_factory=dict)
    # the content words of the fitting replies (`tomacs.sim.topic_words`): what replies are about besides
    # their stem's own words; empty for a profile fitted before it (its replies draw the stem's key terms)
    vocabulary: tuple[str, ...] = ()

    def get(self, role: str, phase: str, answer: str | None = None) -> PhaseText | None:
        """The style of `role` in `phase`; with `answer` (the answer option's text), that answer's own
        style when the fit has one for this role and phase."""
        own = self.by_answer.get(_scale_text(answer) or "", {}).get(role, {}).get(phase)
        if own is not None:
            return own
        for r in (role, "honest"):
            by = self.phases.get(r) or {}
            for p in (phase, *[x for x in PHASES if x != phase]):
                if p in by:
                    return by[p]
        return None

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "source": self.source,
            "models": list(self.models),
            "phases": _phases_dict(self.phases),
        }
        if self.by_answer:  # a profile without styles by answer reads and writes as before
            out["by_answer"] = {said: _phases_dict(by) for said, by in self.by_answer.items()}
        if self.repeats:  # so does one without repeats
            out["repeats"] = {role: r.to_dict() for role, r in self.repeats.items()}
        if self.vocabulary:  # and one without a vocabulary
            out["vocabulary"] = list(self.vocabulary)
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], where: str = "text") -> TextModel:
        """Read back what `to_dict` wrote; a malformed section fails in one line naming the key."""
        if not isinstance(d, Mapping) or not isinstance(d.get("phases"), Mapping):
            raise ValueError(f"{where}: expected a mapping with `phases` (role -> phase -> settings)")
        phases = _read_phases(d["phases"], f"{where}.phases")
        answers = d.get("by_answer") or {}
        if not isinstance(answers, Mapping):
            raise ValueError(
                f"{where}.by_answer: expected a mapping answer text -> role -> phase -> settings"
            )
        by_answer = {str(said): _read_phases(by, f"{where}.by_answer.{said}") for said, by in answers.items()}
        reps = d.get("repeats") or {}
        if not isinstance(reps, Mapping) or set(reps) - set(ROLES):
            raise ValueError(f"{where}.repeats: expected a mapping role ({', '.join(ROLES)}) -> rates")
        vocabulary = d.get("vocabulary") or []
        if not isinstance(vocabulary, list | tuple) or not all(isinstance(w, str) and w for w in vocabulary):
            raise ValueError(f"{where}.vocabulary: expected a list of words")
        return cls(
            phases=phases,
            source=str(d.get("source", "")),
            models=tuple(str(m) for m in d.get("models") or ()),
            by_answer=by_answer,
            repeats={str(r): RepeatRates.from_dict(v, f"{where}.repeats.{r}") for r, v in reps.items()},
            vocabulary=tuple(vocabulary),
        )


def _phases_dict(phases: Mapping[str, Mapping[str, PhaseText]]) -> dict[str, object]:
    return {
        r: {
            p: {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(pt).items()}
            for p, pt in by.items()
        }
        for r, by in phases.items()
    }


def _read_phases(section: object, where: str) -> dict[str, dict[str, PhaseText]]:
    """role -> phase -> PhaseText from what `_phases_dict` wrote; one line naming the key when malformed."""
    if not isinstance(section, Mapping):
        raise ValueError(f"{where}: expected a mapping role -> phase -> settings")
    phases: dict[str, dict[str, PhaseText]] = {}
    names = {f for f in PhaseText.__dataclass_fields__}
    for r, by in section.items():
        if r not in ROLES:
            raise ValueError(f"{where}: unknown role {r!r}; valid: {', '.join(ROLES)}")
        if not isinstance(by, Mapping):
            raise ValueError(f"{where}.{r}: expected a mapping phase -> settings")
        for p, body in by.items():
            if p not in PHASES:
                raise ValueError(f"{where}.{r}: unknown phase {p!r}; valid: {', '.join(PHASES)}")
            if (
                not isinstance(body, Mapping)
                or set(body) - names
                or not {"replies", "log_words_mean"} <= set(body)
            ):
                raise ValueError(f"{where}.{r}.{p}: expected the keys {', '.join(sorted(names))}")
            kw: dict[str, Any] = {
                k: (tuple(str(s) for s in v) if k in (*BANKS, "frame_values", "walk_headers") else v)
                for k, v in body.items()
            }
            named = kw.get("others_named", ())
            if not isinstance(named, list | tuple) or any(
                isinstance(v, bool) or not isinstance(v, int | float) or v < 0 for v in named
            ):
                raise ValueError(f"{where}.{r}.{p}.others_named: expected shares of 0, 1, 2+")
            kw["others_named"] = tuple(float(v) for v in named)
            kw["walk_weights"] = tuple(float(v) for v in kw.get("walk_weights", ()))
            if kw["walk_weights"] and len(kw["walk_weights"]) != len(kw.get("walk_headers", ())):
                raise ValueError(f"{where}.{r}.{p}.walk_weights: expected one weight per walk_headers form")
            m = kw.get("mentions", {})
            if not isinstance(m, Mapping) or set(m) - set(MENTION_WORDS):
                raise ValueError(f"{where}.{r}.{p}.mentions: expected shares of {', '.join(MENTION_WORDS)}")
            kw["mentions"] = {str(w): float(v) for w, v in m.items()}
            for key in ("letter_share", "restating"):
                share = kw.get(key)
                if share is not None and (
                    isinstance(share, bool) or not isinstance(share, int | float) or not 0.0 <= share <= 1.0
                ):
                    raise ValueError(f"{where}.{r}.{p}.{key}: expected a share from 0 to 1, or null")
            phases.setdefault(r, {})[p] = PhaseText(**kw)
    return phases


# ------------------------------------------------------------------------------------------- fit
OTHERS_MAX = 2  # `others_named` counts 0, 1 and "2 or more" other options
OPTION_TEXT_MIN = 8  # an option's text counts as named from this many characters (not "True", "4")


def named_others(text: str, answer: str | None, letters: Sequence[str], options: Sequence[str] = ()) -> int:
    """How many options other than `answer` a reply names: by letter (`(B)`, `B)`, `option B`, `is B.`)
    or by an option's own text of `OPTION_TEXT_MIN` characters or more (qwen-max writes "mostly
    acceptable", not "B"), capped at `OTHERS_MAX`. The answer line is not read."""
    body = _ANSWER_LINE.sub("", text)
    named = {x for m in _LETTER.finditer(body) for x in m.groups() if x and x in letters}
    low = body.lower()
    for lab, opt in zip(letters, options, strict=False):
        o = opt.strip().lower().rstrip(".")
        if len(o) >= OPTION_TEXT_MIN and re.search(rf"(?<![a-z]){re.escape(o)}(?![a-z])", low):
            named.add(lab)
    named.discard(answer or "")
    return min(len(named), OTHERS_MAX)


TOPIC_STEM = 5  # content words match by their first letters ('possessory' / 'possession'), as generic_form's
ANSWER_PREFIX = 30  # an option's text is named by its first this-many characters (long ones are paraphrased)


def question_stems(stem: str, options: Sequence[str] = ()) -> frozenset[str]:
    """The content-word stems of a question's stem and options: the vocabulary a reply about it uses."""
    words = (w.lower() for part in (stem, *options) for w in _WORD.findall(part))
    return frozenset(w[:TOPIC_STEM] for w in _content(words))


def topic_counts(text: str, stems: frozenset[str]) -> tuple[int, int]:
    """A text's content words that are its question's own (`question_stems`), and all its content words."""
    words = _content(w.lower() for w in _WORD.findall(_ANSWER_LINE.sub("", text)))
    return sum(w[:TOPIC_STEM] in stems for w in words), len(words)


RESTATING = 0.6  # a sentence with this share of its content words its question's own restates the question


def restating_share(text: str, stems: frozenset[str]) -> float | None:
    """The share of a reply's words in sentences that restate its question (`RESTATING` or more of their
    content words its own, three content words or more); None for a reply without words.

    Why: a simulated reply is about its question mostly by restating the stem's clauses behind a frame
    ("We are told that ..."). Real MAD-Follower replies (qwen3-8b, qwen-max) write 0.02-0.04 of their words
    in such sentences, simulated ones 0.25-0.38; real gpt-3.5 honest replies 0.45 in round 1 and 0.27 later,
    its adversaries 0.33 and 0.17, simulated 0.54, 0.40, 0.43, 0.32 (stop 82). A restated clause is the
    same in every reply to the question, whatever its role."""
    sents = split_sentences(_ANSWER_LINE.sub("", text))
    total = sum(len(x.split()) for x in sents)
    if not total:
        return None
    restating = 0
    for x in sents:
        hits, n = topic_counts(x, stems)
        restating += len(x.split()) if n >= 3 and hits >= RESTATING * n else 0
    return restating / total


def topic_density(text: str, stems: frozenset[str]) -> float | None:
    """The share of a text's content words that are its question's own (`topic_counts`); None without
    any. Real replies write 0.30-0.56 of theirs from the question, the templates 0.22 (stop 68): the rest
    of a templated reply was talk about reasoning, the same for every question."""
    hits, n = topic_counts(text, stems)
    return hits / n if n else None


def answer_text(option: str) -> str | None:
    """What of an option's text a reply must write to name it (`ANSWER_PREFIX`, lower case); None for a
    text too short to tell from other words ("4", "No")."""
    o = option.strip().rstrip(".").lower()
    return o[:ANSWER_PREFIX] if len(o) >= 3 else None


def answered_option(letters: Sequence[str], options: Sequence[str], answer: str | None) -> str | None:
    """The text of the option a reply answered; None without one (no letter, no options)."""
    own = letters.index(answer) if answer in letters else len(options)
    return options[own] if own < len(options) else None


def named_answer(letters: Sequence[str], options: Sequence[str], answer: str | None) -> str | None:
    """`answer_text` of the option a reply answered; None without one (no letter, no options)."""
    own = answered_option(letters, options, answer)
    return answer_text(own) if own is not None else None


def answer_sentences(sentences: Iterable[str], named: str | None) -> int:
    """How many `sentences` name the option text `named` (`answer_text`), as whole words."""
    if not named:
        return 0
    pat = re.compile(rf"(?<![a-z0-9]){re.escape(named)}", re.IGNORECASE)
    return sum(1 for s in sentences if pat.search(s))


FRAME_WORDS = 6  # a frame line (`reply_frame`) has at most this many words
# numbers kept for a frame's `{n}` (a seeded sample, repeats kept: they are its shares)
FRAME_VALUES_MAX = 200
_FRAME_TAG = re.compile(r"^((?:#+|\*\*)\s*[A-Za-z]+\s*:(?:\*\*)?)\s*")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def _letter_at(letter: str) -> re.Pattern[str]:
    """The answer letter as a token of its own ("(B)", "**B**", "B)"), not a word's first letter."""
    return re.compile(rf"(?<![A-Za-z0-9]){re.escape(letter)}(?![A-Za-z0-9'])")


def _frame_span(lines: Sequence[str], at: re.Pattern[str] | None) -> tuple[int, int]:
    """The body's lines of a reply, `lines[lo:hi]`: its leading and trailing frame lines left out
    (`reply_frame`); `at` finds the answer letter."""

    def framing(line: str) -> bool:
        return len(line.split()) <= FRAME_WORDS and bool(
            (at is not None and at.search(line)) or _DIGIT.search(line) or _FRAME_TAG.match(line)
        )

    lo, hi = 0, len(lines)
    while lo < hi - 1 and framing(lines[lo]):
        lo += 1
    while hi > lo + 1 and framing(lines[hi - 1]):
        hi -= 1
    return lo, hi


def _body_lines(text: str, answer: str | None) -> tuple[list[str], bool]:
    """A reply's rationale as lines, its frame lines, tag, "Answer: X" line and persuasive suffix left out
    (`reply_frame`), and whether it had no frame lines."""
    raw = _ANSWER_LINE.sub("", text.replace(_SUFFIX_MARK, ""))
    lines = [x.strip() for x in raw.strip().splitlines() if x.strip()]
    lo, hi = _frame_span(lines, _letter_at(answer) if answer else None)
    body = lines[lo:hi]
    if body and (tag := _FRAME_TAG.match(body[0])) and lo > 0:
        body[0] = body[0][tag.end() :]
    return body, lo == 0 and hi == len(lines)


def reply_body(text: str, answer: str | None) -> str:
    """A reply's rationale, without its frame (`_body_lines`): what two replies are compared on when one
    may repeat the other (`tomacs.sim.repeats`), so that the frame's own words do not count as repeated."""
    return "\n".join(_body_lines(text, answer)[0])


def content_words(text: str, answer: str | None) -> frozenset[str]:
    """The content words of a reply's rationale (`reply_body`; `_content`'s rule), lower-cased."""
    return frozenset(_content(w.lower() for w in _WORD.findall(reply_body(text, answer))))


def letter_named(text: str, answer: str | None, letters: Sequence[str], options: Sequence[str] = ()) -> bool:
    """Whether a reply's rationale names an option by its letter ("(B)", "B)", "option B", "is B.", and with
    `options` "B (" and its text, as the templates write it; real replies do in 0.0-0.2 %): its
    frame lines ("#answer: B"), its tag, an "Answer: B" line and its closing mark ("... (B).") left out, as
    the generator writes those apart from the rationale (`framed`). Why: real qwen-max rationales name no
    letter (they write "completely acceptable"), and the simulated ones naming letters in every reply were
    what a probe told its adversaries by (stop 78's what-if: leaving those sentences out brought the
    adversary-vs-honest gap on MAD-Follower from +0.094 to +0.031)."""
    body, unframed = _body_lines(text, answer)
    at = _letter_at(answer) if answer else None
    found = _closing_mark(body[-1], at) if body and at is not None and unframed else None
    if found is not None:
        start, tok = found
        body[-1] = body[-1][:start] + body[-1][start + len(tok) :]
    said = "\n".join(body)
    if any(x and x in letters for m in _LETTER.finditer(said) for x in m.groups()):
        return True
    for lab, opt in zip(letters, options, strict=False):
        head = opt.strip().rstrip(".;:,")[:12]
        if head and re.search(rf"(?<![A-Za-z0-9]){re.escape(lab)} \({re.escape(head)}", said, re.IGNORECASE):
            return True
    return False


def _closing_mark(line: str, at: re.Pattern[str]) -> tuple[int, str] | None:
    """Where `line` names the answer letter in a bracketed token ("(B)", "**B**"), the last such, and the
    token: the mark of a reply framed "{body}" (`reply_frame`)."""
    for m in reversed(list(re.finditer(r"\S+", line))):
        tok = m.group(0).rstrip(".,;:!?")
        if at.search(tok) and re.search(r"[()\[\]*]", tok):
            return m.start(), tok
    return None


def reply_frame(text: str, answer: str | None) -> tuple[str, str | None, tuple[str, ...]]:
    """A reply's frame, its answer mark and the numbers of its frame.

    Why: the templates closed every reply with a line "Answer: X" of its own. MAD-Follower's agents write
    "#answer: B", "#rationale: ..." and "#confidence: 0.95" in every reply (their prompt asks for it), and
    multi-agent-attack's name their answer as "(B)" in their last line (gpt-3.5 in 0.85-0.96 of its replies,
    by role and phase); a reader of the texts learns the templates' line at once.

    The frame is the reply's lines as a template: its leading and trailing lines of `FRAME_WORDS` words or
    fewer that name the answer letter or a number or open with a tag ("#answer:"), with the letter `{L}`
    and numbers `{n}`; the rest is `{body}`, after the tag its first line opens with ("#rationale: {body}").
    "{body}" when there are none. The mark, for a reply framed "{body}": how its last line names the answer
    letter, bracketed ("({L})", "**({L})**"; the last such), None when it does not."""
    lines = [x.strip() for x in text.strip().splitlines() if x.strip()]
    at = _letter_at(answer) if answer else None

    def form(line: str) -> str:
        line = at.sub("{L}", line) if at is not None else line
        return _NUMBER.sub("{n}", line)

    lo, hi = _frame_span(lines, at)
    if lo == 0 and hi == len(lines):
        found = _closing_mark(lines[-1], at) if at is not None and lines else None
        return "{body}", at.sub("{L}", found[1], count=1) if at is not None and found else None, ()
    tag = _FRAME_TAG.match(lines[lo])
    body = f"{tag.group(1)} {{body}}" if tag else "{body}"
    values = tuple(v for x in (*lines[:lo], *lines[hi:]) for v in _NUMBER.findall(x))
    return "\n".join([*map(form, lines[:lo]), body, *map(form, lines[hi:])]), None, values


def paragraphs(text: str) -> int:
    """How many paragraphs (blocks between blank lines) a reply has: the fit's `paragraph_words` and the
    texts check's style row read it alike."""
    return len([p for p in re.split(r"\n\s*\n", text) if p.strip()])


WALK_MIN = 3  # options a walk goes through (every option of a question with fewer)
WALK_FORMS = 12  # option-line forms a phase keeps (`PhaseText.walk_headers`), the most used first
_WALK_HEAD = re.compile(
    r"^(?P<pre>(?:#+\s*)?(?:\d+[.)]\s*)?(?:[-*\u2022]\s+)?(?:\*\*)?\s*(?P<word>(?:[Oo]ption|[Cc]hoice)\s+)?\(?)"
    r"(?P<L>[A-J])(?P<close>\)?\s*(?:[:.)]\s*)?(?:\*\*)?:?)(?=\s|$)"
)
_BULLET = re.compile(r"^\s*[-*\u2022]\s+")
_WALK_TRAIL = re.compile(r"\s*([*:.)\]]*)")


def _walk_form(line: str, m: re.Match[str], option: str) -> str:
    """An option's line as a template: its place `{n}`, its letter `{L}`, and `{T}` where the option's own
    text follows the letter (with what closes it: "**", ":"); what else the line says is left out."""
    pre = _NUMBER.sub("{n}", m.group("pre"))
    form = f"{pre}{{L}}{m.group('close').rstrip()}"
    rest = line[m.end() :].strip()
    text = option.strip().rstrip(".")
    if text and rest.lower().startswith(text.lower()):
        trail = rest[len(text) :]
        closing = _WALK_TRAIL.match(trail)  # "**:" of "**: and it holds", not the rest
        form += " {T}" + (closing.group(1) if closing else "")
    return form


def walkthrough(
    text: str, letters: Sequence[str], options: Sequence[str]
) -> tuple[list[str], float | None] | None:
    """The forms of a reply's option lines when it walks through the options, and the share of the lines
    between them written as bullets (None without such lines); None when it does not walk.

    Why: real gpt-4o replies go through the options one at a time, each under a line of its own
    ("**Option A:**", then what the option says and whether it holds), and a reader of MiniLM embeddings
    sees that layout and the options' own words. A reply walks when lines open with the letters of at least
    `WALK_MIN` options (of all, for fewer): "**Option B:**", "- **B) Wider at the top**:", "2. (B) ...",
    "B) Price is ..." ("A decade ..." is not: a letter needs "Option", a bracket, a colon or a full stop)."""
    k = min(len(options), len(letters))
    if k < 2:
        return None
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    heads: dict[str, tuple[int, str]] = {}
    for i, ln in enumerate(lines):
        m = _WALK_HEAD.match(ln)
        if m is None or m.group("L") not in letters[:k] or m.group("L") in heads:
            continue
        if not (m.group("word") or m.group("close").strip() or m.group("pre").rstrip().endswith("(")):
            continue
        heads[m.group("L")] = (i, _walk_form(ln, m, options[letters.index(m.group("L"))]))
    if len(heads) < min(WALK_MIN, k):
        return None
    at = sorted(i for i, _ in heads.values())
    body = [ln for i, ln in enumerate(lines) if at[0] < i < at[-1] and i not in at]
    bullets = sum(bool(_BULLET.match(ln)) for ln in body) / len(body) if body else None
    return [f for _, f in sorted(heads.values())], bullets


def split_sentences(text: str) -> list[str]:
    """Sentences and lines of a reply (a line break ends a sentence: lists, code fences, headers)."""
    body = text.replace(_SUFFIX_MARK, "")
    return [s.strip() for s in _SENT.split(body) if s and s.strip()]


def _vocab(d: Debate) -> set[str]:
    words: set[str] = set()
    for part in [d.question or "", *(d.options or ())]:
        words.update(w.lower() for w in _WORD.findall(part))
    return words


def _content(words: Iterable[str]) -> list[str]:
    stop = STOP_WORDS
    return [w for w in words if len(w) >= 4 and w not in stop]


MAX_SLOTS = 4  # key-term slots a template sentence may have


def generic_form(
    sentence: str,
    vocab: set[str],
    answer: str | None,
    common: set[str] | None = None,
    options: Sequence[str] = (),
) -> str | None:
    """The sentence as a template of style, or None when it is about its own topic.

    Topic terms become `{k}` slots, filled with the new question's key terms when the template is
    used: its own question's terms (content words of the stem or options, matched by a 5-letter stem
    so 'possessory'/'possession' are one word) and, given `common` (stems used in replies to many
    questions), every word that is not common ("this joint ossifies" -> "this {k} {k}"). A run of
    such words is one slot, at most `MAX_SLOTS`, and at most as many slotted words as kept ones: a
    sentence mostly of topic terms is content, not style, and is dropped; so are sentences with an
    option's text, a digit other than an agent's number, or outside 4-45 words.
    Letters: the reply's own answer becomes `{a}`, any other `{o}`; braces in the text are escaped
    so the template is a safe format string."""
    words = sentence.split()
    if not SENT_WORDS[0] <= len(words) <= SENT_WORDS[1]:
        return None
    if _DIGIT.search(_AGENT_NUM.sub("", sentence)):
        return None
    low = sentence.lower()
    if any(len(o.strip()) >= 3 and o.strip().lower().rstrip(".") in low for o in options):
        return None
    stems = {w[:5] for w in _content(vocab)}
    stop = STOP_WORDS
    spans: list[tuple[int, int]] = []  # character spans of topic terms
    kept = slotted = 0
    for m in _WORD.finditer(sentence):
        w = m.group(0).lower()
        if len(w) < 4 or w in stop:
            continue
        if w[:5] in stems or (common is not None and w[:5] not in common):
            slotted += 1
            if spans and sentence[spans[-1][1] : m.start()].strip(" -") == "":
                spans[-1] = (spans[-1][0], m.end())  # "adverse possession" is one term
            else:
                spans.append((m.start(), m.end()))
        else:
            kept += 1
    # "Therefore, (B)." says nothing of style; a sentence mostly of topic terms is content
    if len(spans) > MAX_SLOTS or kept < 2 or slotted > kept:
        return None
    parts, last = [], 0
    for a, b in spans:
        parts.append(_escape_letters(sentence[last:a], answer))
        parts.append("{k}")
        last = b
    parts.append(_escape_letters(sentence[last:], answer))
    return "".join(parts)


_SLOT_A = "ZQ"  # stands for the answer's text while `generic_form` reads the rest (too short to be a term)


def answer_form(
    sentence: str,
    option: str,
    vocab: set[str],
    answer: str | None,
    common: set[str] | None = None,
    options: Sequence[str] = (),
) -> str | None:
    """A sentence naming its reply's answer's option text as a template: that text a `{A}` slot, the rest
    as `generic_form` makes it ("Option (A) Pure altruism aligns with the fundamental nature of Gauthier's
    morality." -> "Option ({a}) {A} aligns with the fundamental nature of {k}."); None when it does not
    name the whole text, or the rest is mostly its topic."""
    text = option.strip().rstrip(".")
    at = sentence.lower().find(text.lower()) if len(text) >= 3 else -1
    if at < 0 or _SLOT_A in sentence:
        return None
    marked = sentence[:at] + _SLOT_A + sentence[at + len(text) :]
    rest = [o for o in options if o.strip().rstrip(".").lower() != text.lower()]
    form = generic_form(marked, vocab, answer, common, rest)
    return form.replace(_SLOT_A, "{A}") if form is not None and form.count(_SLOT_A) == 1 else None


def _escape_letters(text: str, answer: str | None) -> str:
    s = text.replace("{", "{{").replace("}", "}}")

    def slot(m: re.Match[str]) -> str:
        letter = next(g for g in m.groups() if g)
        name = "{a}" if answer is not None and letter == answer else "{o}"
        return m.group(0).replace(letter, name, 1)

    return _LETTER.sub(slot, s)


COMMON_SHARE = 0.1  # a generic word is used in replies to at least this share of the questions
COMMON_MIN = 6  # ... and to at least this many, however small the source (`common_stems`)


def common_stems(debates: Sequence[Debate]) -> set[str]:
    """Content-word stems used in replies to many different questions (document frequency over
    questions): the vocabulary of style ("agents", "reasoning", "convincing"), not of topics.

    At least `COMMON_MIN` questions, whatever the source's size: with a floor of 3, MAD-Follower's profiles
    (21 and 28 fitting questions, ETHICS situations that come in pairs) took topic words ("child", "driver",
    "injury", "death") for style, at a fitted generic share of up to 0.60, so their banks wrote other
    questions' content into replies. 6 is what a tenth of the 51 fitting questions of the multi-agent-attack
    MMLU profiles asks (stop 74)."""
    by_q: dict[str, set[str]] = {}
    for d in debates:
        seen = by_q.setdefault(d.question_key, set())
        for t in d.turns:
            if t.text:
                seen.update(w[:5] for w in _content(w.lower() for w in _WORD.findall(t.text)))
    if not by_q:
        return set()
    need = max(COMMON_MIN, int(math.ceil(COMMON_SHARE * len(by_q))))
    counts: dict[str, int] = {}
    for stems in by_q.values():
        for w in stems:
            counts[w] = counts.get(w, 0) + 1
    return {w for w, c in counts.items() if c >= need}


ANSWER_MIN_REPLIES = 20  # replies a style of one answer's text needs (`TextModel.by_answer`)


def _scale_text(option: str | None) -> str | None:
    """An option's text as the key of its answer's style: lower case, no final full stop."""
    return None if option is None else option.strip().rstrip(".").lower() or None


def scale_answers(debates: Sequence[Debate]) -> set[str]:
    """Option texts that recur among the options of many questions (`COMMON_MIN`): an answer scale such
    as MAD-Follower's ETHICS items' "Completely acceptable" ... "Completely unacceptable". Where the
    options do not recur (MMLU, CommonsenseQA) there is none, and the text model has no styles by answer.

    Why: a real reply's words follow its answer. Among qwen-max's honest replies on ETHICS items, those
    answering "Completely acceptable" use a word of disapproval ("unacceptable", "harmful", "illegal", ...,
    outside the option texts) in 0.01 of replies and one of approval in 0.66; those answering "Completely
    unacceptable" in 0.80 and 0.17. Drawn from one bank per role, simulated ones used them at 0.21-0.34 and
    0.21-0.35 whatever their answer (stop 78)."""
    questions: dict[str, set[str]] = {}
    for d in debates:
        for o in d.options or ():
            said = _scale_text(o)
            if said:
                questions.setdefault(said, set()).add(d.question_key)
    return {said for said, qs in questions.items() if len(qs) >= COMMON_MIN}


@dataclass
class _Acc:
    words: list[float] = field(default_factory=list)
    shares: list[float] = field(default_factory=list)
    open_hits: int = 0
    close_hits: int = 0
    banks: dict[str, list[str]] = field(default_factory=lambda: {k: [] for k in BANKS})
    mentions: dict[str, int] = field(default_factory=lambda: {w: 0 for w in MENTION_WORDS})
    discussing: dict[bool, list[int]] = field(default_factory=lambda: {False: [], True: []})
    others: list[int] = field(default_factory=lambda: [0] * (OTHERS_MAX + 1))
    density: list[float] = field(default_factory=list)
    restating: list[float] = field(default_factory=list)
    answered: list[int] = field(default_factory=list)
    answer_forms: list[int] = field(default_factory=lambda: [0, 0])  # naming the answer: all, as templates
    frames: dict[str, int] = field(default_factory=dict)
    marks: dict[str | None, int] = field(default_factory=dict)  # replies framed "{body}": their marks
    values: list[str] = field(default_factory=list)
    paragraph_words: list[float] = field(default_factory=list)
    walks: list[bool] = field(default_factory=list)  # multiple-choice replies: whether each walks
    walk_forms: dict[str, int] = field(default_factory=dict)
    walk_bullets: list[float] = field(default_factory=list)
    lettered: list[bool] = field(default_factory=list)  # replies not walking: whether each names letters


def _add_reply(
    a: _Acc,
    d: Debate,
    t: Turn,
    opts: tuple[str, ...],
    stems: frozenset[str],
    vocab: set[str],
    common: set[str],
    before: Mapping[tuple[int, int], str | None],
) -> int:
    """What one reply (a turn with a text) adds to a style's accumulator; its length in words (its answer
    line left out)."""
    reply = t.text or ""
    raw = reply.replace(_SUFFIX_MARK, "")
    frame, mark, values = reply_frame(raw, t.answer)
    a.frames[frame] = a.frames.get(frame, 0) + 1
    a.paragraph_words.append(len(reply.split()) / max(paragraphs(reply), 1))
    a.values.extend(values)
    if frame == "{body}":
        a.marks[mark] = a.marks.get(mark, 0) + 1
    text = _ANSWER_LINE.sub("", raw)
    if len(opts) >= 2:
        walk = walkthrough(text, d.letters, opts)
        a.walks.append(walk is not None)
        if walk is not None:
            for form in set(walk[0]):
                a.walk_forms[form] = a.walk_forms.get(form, 0) + 1
            if walk[1] is not None:
                a.walk_bullets.append(walk[1])
        else:
            a.lettered.append(letter_named(reply, t.answer, d.letters, opts))
    sents = split_sentences(text)
    n = max(len(text.split()), 1)
    a.words.append(float(n))
    for w in MENTION_WORDS:
        a.mentions[w] += says(text, (w,))
    a.others[named_others(text, t.answer, d.letters, opts)] += 1
    dens = topic_density(text, stems)
    if dens is not None:
        a.density.append(dens)
    restated = restating_share(text, stems) if stems else None  # without the question's words: unknown
    if restated is not None:
        a.restating.append(restated)
    own = answered_option(d.letters, opts, t.answer)
    named = answer_text(own) if own is not None else None
    if own is not None and named:
        naming = [s for s in sents if answer_sentences([s], named)]
        a.answered.append(len(naming))
        forms = [f for s in naming if (f := answer_form(s, own, vocab, t.answer, common, opts))]
        a.answer_forms[0] += len(naming)
        a.answer_forms[1] += len(forms)
        a.banks[ANSWERING].extend(forms)
    gen = [generic_form(s, vocab, t.answer, common, opts) for s in sents]
    middle = range(1, len(sents) - 1)
    disc = {i for i in middle if t.round >= 2 and _DISCUSS.search(sents[i])}
    a.shares.append(sum(len(sents[i].split()) for i, g in enumerate(gen) if g and i not in disc) / n)
    if gen and gen[0]:
        a.open_hits += 1
        a.banks["openers"].append(gen[0])
    if len(gen) > 1 and gen[-1]:
        a.close_hits += 1
        a.banks["closers"].append(gen[-1])
    a.banks["general"].extend(g for i, g in enumerate(gen) if i in middle and g and i not in disc)
    if t.round >= 2:
        prev = before.get((t.agent, t.round - 1))
        changed = prev is not None and t.answer is not None and prev != t.answer
        a.discussing[changed].append(len(disc))
        a.banks[DISCUSS_KINDS[changed]].extend(g for i in sorted(disc) if (g := gen[i]))
    return n


def _phase_text(a: _Acc, key: str, seed: int, shared: float) -> PhaseText:
    """One style from its replies' accumulator; `key` ("honest/first", "adversary/later/mostly
    acceptable") seeds its banks' samples, so a style added leaves the others' as they were."""
    logw = np.log(np.array(a.words))
    banks = {}
    for k, sents in a.banks.items():
        uniq = sorted(set(sents))
        if len(uniq) > BANK_MAX:
            # one stream per bank, so a bank added or resized leaves the others' samples as they were
            rng = np.random.default_rng([seed, zlib.crc32(f"{key}/{k}".encode())])
            uniq = sorted(uniq[int(i)] for i in rng.choice(len(uniq), BANK_MAX, replace=False))
        banks[k] = tuple(uniq)
    kept, moved = a.discussing[False], a.discussing[True]
    rate = float(np.mean(kept)) if kept else float(np.mean(moved)) if moved else 0.0
    if len(moved) < _MIN_REPLIES:  # too few changed replies: they discuss as the others do
        moved, banks["discuss_changed"] = [], ()
    frame, n_framed = max(a.frames.items(), key=lambda kv: (kv[1], kv[0]))
    frame, n_framed = ("", 0) if frame == "{body}" else (frame, n_framed)
    marks = {m: c for m, c in a.marks.items() if m is not None}
    mark = max(marks.items(), key=lambda kv: (kv[1], kv[0]))[0] if marks else ""
    plain = sum(a.marks.values())
    numbers = sorted(a.values)
    if frame and len(numbers) > FRAME_VALUES_MAX:
        rng = np.random.default_rng([seed, zlib.crc32(f"{key}/frame_values".encode())])
        numbers = sorted(numbers[int(i)] for i in rng.choice(len(numbers), FRAME_VALUES_MAX, replace=False))
    kept_forms = sorted(a.walk_forms.items(), key=lambda kv: (-kv[1], kv[0]))[:WALK_FORMS]
    return PhaseText(
        replies=len(a.words),
        log_words_mean=round(float(logw.mean()), 6),
        log_words_sd=round(float(logw.std()), 6),
        generic_share=round(float(np.mean(a.shares)), 6),
        opener_share=round(a.open_hits / len(a.words), 6),
        closer_share=round(a.close_hits / len(a.words), 6),
        discuss_rate=round(rate, 6),
        discuss_changed_rate=round(float(np.mean(moved)) if moved else rate, 6),
        mentions={w: round(c / len(a.words), 6) for w, c in a.mentions.items()},
        others_named=tuple(round(c / len(a.words), 6) for c in a.others),
        topic_density=round(float(np.mean(a.density)), 6) if a.density else 0.0,
        answer_rate=round(float(np.mean(a.answered)), 6) if a.answered else 0.0,
        length_shared=round(shared, 6),
        answering_share=round(a.answer_forms[1] / a.answer_forms[0], 6) if a.answer_forms[0] else 0.0,
        frame=frame,
        frame_share=round(n_framed / len(a.words), 6),
        frame_values=tuple(numbers) if frame and "{n}" in frame else (),
        mark=mark,
        mark_share=round(sum(marks.values()) / plain, 6) if plain and mark else 0.0,
        paragraph_words=round(float(np.mean(a.paragraph_words)), 6),
        walk_share=round(float(np.mean(a.walks)), 6) if a.walk_forms else 0.0,
        walk_headers=tuple(f for f, _ in kept_forms),
        walk_weights=tuple(round(c / sum(c for _, c in kept_forms), 6) for _, c in kept_forms),
        walk_bullet=round(float(np.mean(a.walk_bullets)), 6) if a.walk_bullets else 0.0,
        letter_share=round(float(np.mean(a.lettered)), 6) if a.lettered else None,
        restating=round(float(np.mean(a.restating)), 6) if a.restating else None,
        **banks,
    )


def fit_text_model(debates: Sequence[Debate], seed: int = 0, source: str = "") -> TextModel | None:
    """The text model of `debates` (their turns with texts); None when they have too few texts.

    A turn's role is its role in its round (`Debate.is_adversarial`): an adversary before its onset
    writes as an honest agent, as the simulator makes it do. Banks keep distinct sentences, at most
    `BANK_MAX` per kind, a seeded sample when there are more.

    From round 2 on, a middle sentence that engages the others (`_DISCUSS`) goes to the discussion
    bank of replies that kept or changed their answer, and out of the general bank and the generic
    share: the generator writes the discussion from those banks at the fitted rates, so a role's
    discussion is its own rather than the templates' role-neutral one."""
    acc: dict[tuple[str, str], _Acc] = {}
    by_text: dict[tuple[str, str, str], _Acc] = {}  # (role, phase, scale answer's text)
    rest: dict[tuple[str, str], _Acc] = {}  # replies whose answer has no style of its own
    models: set[str] = set()
    common = common_stems(debates)
    scale = scale_answers(debates)
    covered = _answer_styled(debates, scale)
    rounds: list[tuple[str, int, str, str, float]] = []  # (debate, round, role, phase, log words)
    for d in debates:
        vocab = _vocab(d)
        opts = tuple(d.options or ())
        stems = question_stems(d.question or "", opts)
        before: dict[tuple[int, int], str | None] = {(t.agent, t.round): t.answer for t in d.turns}
        for t in d.turns:
            if not t.text:
                continue
            role, phase, said = _style_key(d, t)
            args = (d, t, opts, stems, vocab, common, before)
            if said in scale:  # the same reply, also for its answer's style (`TextModel.by_answer`)
                _add_reply(by_text.setdefault((role, phase, said), _Acc()), *args)
            n = _add_reply(acc.setdefault((role, phase), _Acc()), *args)
            if covered and (role, phase, said) not in covered:
                _add_reply(rest.setdefault((role, phase), _Acc()), *args)
            rounds.append((d.id, t.round, role, phase, math.log(n)))
            m = d.agents[t.agent].model or d.model
            if m:
                models.add(m)
    shared = length_shared(rounds)
    phases: dict[str, dict[str, PhaseText]] = {}
    for (role, phase), a in sorted(acc.items()):
        # a role's style stands for the replies whose answer has none of its own (`TextModel.get`), so it is
        # fitted from those where there are enough: fitted from all, it mixed in the replies of the answer
        # scale, and qwen3-8b's simulated honest agents named letters on its other questions in 0.09 of
        # later replies, real ones in 0.35 (its scale's answers in 0.00; stop 80)
        own = rest.get((role, phase))
        a = own if own is not None and len(own.words) >= ANSWER_MIN_REPLIES else a
        if len(a.words) >= _MIN_REPLIES:
            phases.setdefault(role, {})[phase] = _phase_text(
                a, f"{role}/{phase}", seed, shared.get((role, phase), 0.0)
            )
    by_answer: dict[str, dict[str, dict[str, PhaseText]]] = {}
    for (role, phase, said), a in sorted(by_text.items()):
        if len(a.words) >= ANSWER_MIN_REPLIES:
            by_answer.setdefault(said, {}).setdefault(role, {})[phase] = _phase_text(
                a, f"{role}/{phase}/{said}", seed, shared.get((role, phase), 0.0)
            )
    if "honest" not in phases:
        return None
    return TextModel(phases=phases, source=source, models=tuple(sorted(models)), by_answer=by_answer)


def _answer_styled(debates: Sequence[Debate], scale: set[str]) -> set[tuple[str, str, str]]:
    """(role, phase, answer's text) of the styles by answer `fit_text_model` fits: an answer of `scale`
    given in `ANSWER_MIN_REPLIES` replies with texts or more, in that role and phase."""
    if not scale:
        return set()
    n: dict[tuple[str, str, str], int] = {}
    for d in debates:
        for t in d.turns:
            role, phase, said = _style_key(d, t)
            if t.text and said in scale:
                n[(role, phase, str(said))] = n.get((role, phase, str(said)), 0) + 1
    return {k for k, v in n.items() if v >= ANSWER_MIN_REPLIES}


def _style_key(d: Debate, t: Turn) -> tuple[str, str, str | None]:
    """A reply's role in its round (an adversary before its onset writes as an honest agent), its phase, and
    its answer's text as the key of a style by answer (`_scale_text`)."""
    role = "adversary" if d.is_adversarial(t.agent, t.round) else "honest"
    said = _scale_text(answered_option(d.letters, tuple(d.options or ()), t.answer))
    return role, "first" if t.round == 1 else "later", said


SHARED_MAX = 0.95  # `length_shared` is capped here: a reply's own length always varies a little


def length_products(
    replies: Sequence[tuple[str, int, str, str, float]],
) -> dict[str, tuple[float | None, float | None]]:
    """Per phase, how much the lengths of one debate round's replies go together: the mean product of the
    standardised log lengths (per role and phase) of two honest replies of one round, and of an adversary
    and an honest one (None without such a pair). Unclipped, so a report can show a negative one.
    `replies`: (debate, round, role, phase, log words)."""
    stats: dict[tuple[str, str], list[float]] = {}
    for _, _, role, phase, w in replies:
        stats.setdefault((role, phase), []).append(w)
    norm = {k: (float(np.mean(v)), float(np.std(v)) or 1.0) for k, v in stats.items()}
    by: dict[tuple[str, int], list[tuple[str, str, float]]] = {}
    for d, t, role, phase, w in replies:
        mu, sd = norm[(role, phase)]
        by.setdefault((d, t), []).append((role, phase, (w - mu) / sd))
    honest: dict[str, list[float]] = {}
    mixed: dict[str, list[float]] = {}
    for rows in by.values():
        for i, (ri, pi, zi) in enumerate(rows):
            for rj, _, zj in rows[i + 1 :]:
                if ri == rj == "honest":
                    honest.setdefault(pi, []).append(zi * zj)
                elif {ri, rj} == {"honest", "adversary"}:
                    mixed.setdefault(pi, []).append(zi * zj)
    return {
        p: (
            float(np.mean(honest[p])) if honest.get(p) else None,
            float(np.mean(mixed[p])) if mixed.get(p) else None,
        )
        for p in {*honest, *mixed}
    }


def length_shared(replies: Sequence[tuple[str, int, str, str, float]]) -> dict[tuple[str, str], float]:
    """Per (role, phase), the share of log-length variance shared by the replies of one debate's round.

    `replies`: (debate, round, role, phase, log words). Model: a reply's standardised log length is
    sqrt(r) z + sqrt(1 - r) e, with z drawn once per debate and round and shared by every role, e its own.
    So two honest replies of one round correlate at r_honest (the mean product of their standardised
    lengths, `length_products`), and an adversary with an honest peer at c = sqrt(r_adversary r_honest),
    so r_adversary is c^2 / r_honest.
    Real gpt-3.5 round-1 debates: r_honest 0.67, an adversary with its peers c 0.41, so 0.25; the simulator
    drew every length apart (0). Rounds share no factor: across rounds real lengths correlate less than
    within one (0.49 against 0.57 in gpt-3.5's later rounds), and a feature compares replies of one round."""
    out: dict[tuple[str, str], float] = {}
    for phase, (hh, ah) in length_products(replies).items():
        if hh is None:
            continue
        r = min(max(hh, 0.0), SHARED_MAX)
        out[("honest", phase)] = r
        c = ah or 0.0
        out[("adversary", phase)] = min(c * c / r, SHARED_MAX) if r > 0 and c > 0 else 0.0
    return out


# -------------------------------------------------------------------------------------- generate
class DebateDraws(NamedTuple):
    """What the replies of one debate share, drawn by the backbone from the debate's key
    (`tomacs.sim.backbone.SimBackbone._debate_draws`) for a fitted style: `points`, the stream of what the
    replies arguing one answer argue (`tomacs.sim.text._analysis`); `length_z`, its round's length factor
    (`words_target`, `length_shared`)."""

    points: np.random.Generator
    length_z: float


class OnTopic(NamedTuple):
    """One reply's sentences about its question (`tomacs.sim.text._topical`), for `on_topic`: those naming
    its answer's text and the others, each in a drawn order; the answer's text as `answer_sentences`
    finds it; its question's `question_stems`; the stem restated with the answer, when the stem's
    form allows one (the first of `with_answer`, which opens the body); and how many sentences of the
    reply name the answer's text, drawn before its core is written (a core that would name it more
    often names it by letter instead)."""

    with_answer: list[str]
    plain: list[str]
    named: str | None
    stems: frozenset[str]
    lead: str | None
    answer_count: int  # how many of the reply's sentences name the answer's text, drawn at the fitted rate
    said: str | None = None  # the answer's text as the reply writes it (a fitted `answering` bank's `{A}`)
    answering: tuple[str, ...] = ()  # the role's own sentences naming it, filled (`styled`), in drawn order


NEUTRAL_TERMS = ("concept", "issue", "principle", "factor", "situation", "context", "aspect", "matter")
"""What a slot says once the question's own key terms are used up in a sentence (at most `MAX_SLOTS`
slots, so the eight never run out)."""


def _fill_slots(
    sentence: str,
    answer: str,
    others: Sequence[str],
    rng: np.random.Generator,
    terms: Sequence[str] = (),
    said: str | None = None,
) -> str:
    """A template with its slots filled: `{a}` the answer, `{o}` another option, each `{k}` a key term
    of the question (`tomacs.sim.text._keywords`, the first dozen favoured as the templates do), no
    term twice in one sentence: once the terms run out, a neutral noun ("the swallowing might
    interpret the swallowing" was what a one-term question gave); `{A}` the answer's text (`said`)."""
    o = others[int(rng.integers(len(others)))] if others else answer
    pool = list(terms[:12])
    spare = list(NEUTRAL_TERMS)
    out = []
    for i, piece in enumerate(sentence.split("{k}")):
        if i:
            src = pool if pool else spare
            out.append(src.pop(int(rng.integers(len(src)))) if src else "point")
        out.append(piece)
    filled = "".join(out)
    text = answer if said is None else said
    try:
        return filled.format(a=answer, o=o, A=text)
    except (KeyError, IndexError, ValueError):  # a stray brace pattern: the sentence as written
        return filled.replace("{a}", answer).replace("{o}", o).replace("{A}", text)


def letter_free(bank: Sequence[str], lettered: bool = True) -> Sequence[str]:
    """`bank` without the sentences whose slots name an option by its letter (`{a}`, `{o}`) when the reply
    is not `lettered` (`PhaseText.lettered`): fitted from replies that named letters, they would name them
    again."""
    return bank if lettered else [s for s in bank if "{a}" not in s and "{o}" not in s]


def discussion(
    pt: PhaseText,
    rng: np.random.Generator,
    changed: bool,
    answer: str,
    letters: Sequence[str],
    terms: Sequence[str] = (),
    avoid: Sequence[str] = (),
    lettered: bool = True,
) -> list[str] | None:
    """A later-round reply's sentences on the others, drawn from its role's fitted discussion bank:
    a Poisson number at the fitted rate (of replies that changed their answer, when `changed` and the
    fit had enough of them). None when the style has no discussion bank (a first-phase style, or a
    profile fitted before the banks existed): the caller writes the templated discussion. `avoid`:
    words this reply does not use (`PhaseText.avoided`); a reply not `lettered` draws none of the sentences
    naming letters (`letter_free`)."""
    bank, rate = pt.discuss, pt.discuss_rate
    if changed and pt.discuss_changed:
        bank, rate = pt.discuss_changed, pt.discuss_changed_rate
    if not bank:
        return None
    usable = letter_free(avoiding(bank, avoid), lettered)
    n = min(int(rng.poisson(max(rate, 0.0))), len(usable))
    others = [x for x in letters if x != answer]
    return [
        _fill_slots(usable[int(i)], answer, others, rng, terms)
        for i in rng.choice(len(usable), n, replace=False)
    ]


def words_target(
    pt: PhaseText, rng: np.random.Generator, cap: int | None, length_z: float | None = None
) -> int:
    """A reply's word count from the fitted log-normal; under a word cap (App. D's "shorter than 100
    words"), the same distribution truncated at the cap (bounded redraws, then uniform below it).
    `length_z`: its debate round's length factor, weighted by the fitted `length_shared` (the reply's own
    part is what is redrawn)."""
    r = min(max(pt.length_shared, 0.0), SHARED_MAX) if length_z is not None else 0.0
    shift = math.sqrt(r) * (length_z or 0.0)
    for _ in range(64):
        n = int(
            round(math.exp(pt.log_words_mean + pt.log_words_sd * (shift + math.sqrt(1 - r) * rng.normal())))
        )
        if n >= 15 and (cap is None or n <= cap):
            return n
    hi = cap if cap is not None else int(math.exp(pt.log_words_mean))
    return int(rng.integers(min(15, hi), hi + 1))


def frame_words(pt: PhaseText) -> float:
    """The words a reply's frame or mark adds around its body (`framed`), expected over its draw.

    Why: the fit counts them as the reply's own (a reply's length is its text without an "Answer: X" line,
    `reply_frame`'s lines and mark included), and the generator drew the body at that whole length, then
    framed it: MAD-Follower's frame ("#answer: {L}", "#rationale:", "#confidence: {n}", 5 words) made every
    simulated qwen3-8b and qwen-max reply about 6 words longer than the length drawn for it, 0.06-0.15 of
    it (multi-agent-attack's, with a one-word mark or none, within 0.02; stop 81)."""
    framing = len(pt.frame.replace("{body}", " ").split()) if pt.frame else 0
    mark = len(pt.mark.split()) if pt.mark else 0
    share = min(max(pt.frame_share, 0.0), 1.0)
    return share * framing + (1.0 - share) * min(max(pt.mark_share, 0.0), 1.0) * mark


def styled(
    pt: PhaseText,
    rng: np.random.Generator,
    head: list[str],
    core: list[str],
    fillers: list[str],
    tail: list[str],
    answer: str,
    letters: Sequence[str],
    cap: int | None,
    terms: Sequence[str] = (),
    opened: bool = False,
    avoid: Sequence[str] = (),
    topic: OnTopic | None = None,
    length_z: float | None = None,
    lettered: bool = True,
) -> tuple[list[str], list[str], list[str], list[str], int]:
    """Head, core, filler pool and tail with the bank's sentences mixed in at the fitted shares, and
    the reply's word target. The question's content (core) is kept whole; a generic opener/closer
    replaces the templated one with the fitted probability; the filler pool gets generic sentences in
    the fitted proportion of words. `opened`: head[0] is the templated opener (replaced, not kept; under
    a fitted topic density dropped when no bank opener is drawn, and a generic templated conclusion too:
    real replies open and close generically at `opener_share` and `closer_share` only).
    `avoid`: words this reply does not use (`PhaseText.avoided`); the bank sentences that use them
    are left out. `topic`: sentences about the question (`tomacs.sim.text`), for a style with a fitted
    `topic_density` (`on_topic`); `length_z`: the debate round's length factor (`words_target`); a reply
    not `lettered` draws no bank sentence naming letters (`letter_free`)."""
    others = [x for x in letters if x != answer]
    # the body is drawn shorter by what its frame or mark adds (`frame_words`): the fit counts those words
    target = max(round(words_target(pt, rng, cap, length_z) - frame_words(pt)), 1)
    openers, closers, general = (
        letter_free(avoiding(b, avoid), lettered) for b in (pt.openers, pt.closers, pt.general)
    )
    on = pt.topic_density > 0 and topic is not None and bool(topic.with_answer or topic.plain)
    if openers and rng.random() < pt.opener_share:
        head = [_fill_slots(openers[int(rng.integers(len(openers)))], answer, others, rng, terms)] + head[
            1 if opened else 0 :
        ]
    elif opened and on:
        # a reply about its question opens with a generic sentence at the fitted share only: real gpt-3.5
        # honest round-1 replies in 0.02 of replies, adversaries in 0.18; the templated opener opened 0.8
        # of simulated ones (stop 71)
        head = head[1:]
    if closers and rng.random() < pt.closer_share:
        tail = [_fill_slots(closers[int(rng.integers(len(closers)))], answer, others, rng, terms)]
    elif on and topic is not None and all(generic_like(x, topic) for x in tail):
        # and closes with one at the fitted share only (real gpt-3.5 round-1 replies: 0.01-0.06; the
        # templated conclusion closed every simulated one): the answer line follows the last point made
        tail = []
    pool: list[str] = []
    if general:
        share = min(max(pt.generic_share, 0.0), 0.95)
        tmpl_words = sum(len(s.split()) for s in fillers) or 1
        want = share / (1.0 - share) * max(tmpl_words, target)  # generic words to offer
        got = 0
        idx = rng.permutation(len(general))
        for i in idx:
            if got >= want:
                break
            s = _fill_slots(general[int(i)], answer, others, rng, terms)
            pool.append(s)
            got += len(s.split())
    if on and topic is not None:
        bank = letter_free(avoiding(pt.answering, avoid), lettered) if topic.said is not None else ()
        if bank:  # the role's own frames for its answer, enough for any drawn count (`on_topic`)
            picks = rng.choice(len(bank), min(len(bank), 8), replace=False)
            own = (_fill_slots(bank[int(i)], answer, others, rng, terms, topic.said) for i in picks)
            topic = topic._replace(answering=tuple(own))
        return head, core, on_topic(pt, rng, head + core + tail, fillers, pool, topic, target), tail, target
    return head, core, fillers + pool, tail, target


def framed(pt: PhaseText, rng: np.random.Generator, body: str, answer: str, answer_line: str) -> str:
    """A multiple-choice reply in its model's frame: `body` (the reply without its answer line) in the
    fitted `frame` at `frame_share` (its `{n}` one of the fitted numbers, the body on its tag's line when
    the frame gives it one, as MAD-Follower's "#rationale:" is); else with the fitted `mark` before its
    last full stop at `mark_share` ("... the most defensible choice (B)."); else `answer_line` closes it,
    as the templates' did (`reply_frame`). One or two draws from `rng`."""
    if pt.frame and rng.random() < pt.frame_share:
        n = pt.frame_values[int(rng.integers(len(pt.frame_values)))] if pt.frame_values else "1"
        on_line = "{body}" not in pt.frame.splitlines() and "{body}" in pt.frame
        text = " ".join(body.split()) if on_line else body
        return pt.frame.replace("{L}", answer).replace("{n}", n).replace("{body}", text)
    if pt.mark and rng.random() < pt.mark_share:
        mark = pt.mark.replace("{L}", answer)
        end = re.search(r"[.!?]+[\"')\]]*\s*$", body)
        return f"{body[: end.start()]} {mark}{body[end.start() :]}".rstrip() if end else f"{body} {mark}"
    return f"{body}\n\n{answer_line}"


def on_topic(
    pt: PhaseText,
    rng: np.random.Generator,
    fixed: Sequence[str],
    fillers: Sequence[str],
    bank: Sequence[str],
    topic: OnTopic,
    target: int,
) -> list[str]:
    """The fillers of one reply, chosen so that it is as much about its question as its model's replies.

    Why: a templated reply wrote 0.22 of its content words from its question and named its answer's text
    in 1.0 sentences; real replies 0.30-0.56 and 1.5-2.3 (stop 68). A real adversary, which writes about
    its target's text, stood apart from its peers (MiniLM cosine) several times more than a simulated one.
    So: first the style's generic sentences (`bank`), as many words of them as the reply would have had
    without the on-topic sentences (their share of the filler words offered): they are real replies' own
    sentences, at the share the fit found (displaced, simulated replies were easier to tell from real ones:
    two-sample AUC +0.02-0.03 for gpt-3.5 and Qwen1.5-14B, stop 69).
    Then sentences naming the answer's text until `topic.answer_count` (counting those the rest of the
    reply already has); then, until the word target, a sentence about the question (not naming the
    answer) whenever the reply's density is under the fitted one, else one of the templates' `fillers`
    while the reply's generic words (`generic_like`) stay within `generic_share` of its target, else a
    sentence about the question again. Real gpt-3.5 replies write 0.10-0.16 of their words in generic
    sentences; padded with the templates' fillers to their length, simulated ones wrote 0.44-0.51 (stop 71).
    With both spent, the next sentence is the kind that overshoots its fitted share less.
    So the on-topic sentences take the templated fillers' place only. A sentence naming the answer's text is,
    at the fitted `answering_share`, one of the role's own (`topic.answering`, from its fitted bank): the
    generator's frames are the same for every role, and real adversaries frame their answer in words of their
    own (stop 72)."""
    with_answer, plain, own = list(topic.with_answer), list(topic.plain), list(topic.answering)
    rest = [fillers[int(i)] for i in rng.permutation(len(fillers))]
    words = sum(len(s.split()) for s in fixed)
    offered = sum(len(s.split()) for s in bank)
    templated = sum(len(s.split()) for s in fillers)
    quota = max(target - words, 0) * offered / (offered + templated) if offered else 0.0
    chosen: list[str] = []
    got = 0
    for i in rng.permutation(len(bank)):
        w = len(bank[int(i)].split())
        if got >= quota:
            break
        if got + w - quota <= quota - got:  # only if it brings the bank's words nearer the quota
            chosen.append(bank[int(i)])
            got += w
    words += got
    owed = topic.answer_count - answer_sentences([*fixed, *chosen], topic.named)
    hits, content = topic_counts(" ".join([*fixed, *chosen]), topic.stems)  # kept up to date as it adds
    budget = pt.generic_share * target  # words the fit finds in generic sentences
    generic = sum(len(s.split()) for s in [*fixed, *chosen] if generic_like(s, topic))
    while words < target and (rest or plain or (owed > 0 and (with_answer or own))):
        if owed > 0 and (with_answer or own):
            # the restated stem first; then, at the fitted share, the role's own words for its answer
            lead = bool(with_answer) and with_answer[0] == topic.lead
            mine = bool(own) and not lead and (not with_answer or rng.random() < pt.answering_share)
            s, owed = (own if mine else with_answer).pop(0), owed - 1
        elif (hits / content if content else 0.0) < pt.topic_density and plain:
            s = plain.pop(0)
        elif rest and (generic + len(rest[0].split()) <= budget or not plain):
            s = rest.pop(0)
        elif rest and plain:
            # both spent (a short stem has few points to make): the sentence that overshoots its fitted
            # share less, so neither runs far ahead (qwen-max: density 0.40-0.47 against 0.18-0.21 when
            # every such sentence was a point)
            h, n = topic_counts(plain[0], topic.stems)
            over_density = (hits + h) / max(content + n, 1) / max(pt.topic_density, 1e-6)
            w = len(rest[0].split())
            over_generic = (generic + w) / (words + w) / max(pt.generic_share, 1e-6)
            s = rest.pop(0) if over_generic <= over_density else plain.pop(0)
        else:  # no templated sentence left: more about the question (its answer's text no more than owed)
            s = plain.pop(0)
        chosen.append(s)
        words += len(s.split())
        generic += len(s.split()) if generic_like(s, topic) else 0
        h, n = topic_counts(s, topic.stems)
        hits, content = hits + h, content + n
    return chosen


def generic_like(sentence: str, topic: OnTopic) -> bool:
    """Whether the fit would count `sentence` generic, as far as the generator can tell without the
    fit's vocabulary of style (`generic_form`): it names neither its answer's text nor a number, and at
    most half of its content words are its question's own."""
    if _DIGIT.search(sentence) or (topic.named is not None and topic.named in sentence.lower()):
        return False
    hits, n = topic_counts(sentence, topic.stems)
    return n - hits >= 2 and 2 * hits <= n
