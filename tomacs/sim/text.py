"""Reply texts for the behavioural simulator.

The simulator decides each answer numerically (its calibrated logit model); this module only turns
a decided answer into a reply an LLM could plausibly have written. The texts matter because the
rest of the pipeline runs on them: the embedder turns analyses into TodyComm's `ana` features, the
token counter prices them, the parsers read their `Answer:` line, and receivers (real or simulated)
see them as messages. So:

* honest analyses are of realistic length (about 60-180 words), mention the question's own content
  (option texts, key terms, numbers with real arithmetic), vary through many templates and phrase
  banks, and from round 2 on refer to the agent's previous answer and to neighbours' arguments —
  when the agent changes its answer it cites (and sometimes quotes) a neighbour backing the new one;
* adversarial analyses come from the SAME generator (same templates and phrase banks): a real
  App. D adversary is the same LLM as its honest peers, so only what its prompt changes may differ.
  It argues for the target; it has no role profile, so its opener (if any) names App. D's persona
  ("senior domain expert"); it sees no neighbour messages and no previous reply, so it writes a
  round-1 analysis (no discussion of other agents); and "Your answer must be shorter than 100
  words", so its length is the honest length distribution truncated below 100 words (body before
  the answer line). It does NOT contain the persuasive suffix: the executor appends it with
  `tomacs.agents.prompts.add_persuasive_suffix` unless `attack.suffix=false`, exactly as for a
  real LLM;
* every text ends with the same final line `Answer: X` as real agents are asked to write.

What a detector can still use is what a real App. D adversary also gives away: the suffix (when on),
the missing discussion of neighbours from round 2 on, and a shorter reply (see
docs/experiments/2026-11-23-adversary-texts-one-generator.md for probe numbers and how they were
measured; `tomacs transcripts texts` measures them beside real debates).

That is the paper protocol on a paper profile. A profile fitted from real transcripts carries a text
model (`tomacs.sim.text_model`): its honest agents and adversaries then take their lengths and a share
of style sentences from how that model's agents wrote, while the question content stays the templates'
below, plus, at the model's fitted density, sentences restating the stem's own clauses and naming the
answer by its text (`_topical`; the stem restated with the answer opens the body, as real replies do);
and `attack.prompt=debate` gives adversaries what that prompt gives a real one (what the others wrote, no
word limit), so from round 2 on they discuss the others too, in their role's fitted
discussion (`text_model.discussion`) when they read anyone. Under a fitted text model no templated
opener names a role or persona, and every agent takes its angle from the benchmark's whole role pool.

All randomness comes from the `rng` passed in, so a text is a deterministic function of the
inputs and the generator state.
"""

from __future__ import annotations

import functools
import re
import zlib
from collections.abc import Sequence

import numpy as np

from tomacs.agents.roles import ROLES, Role, base_role, get_role, role_pool
from tomacs.benchmarks.parsing import parse_answer
from tomacs.sim.text_model import STOP_WORDS as _STOP
from tomacs.sim.text_model import (
    DebateDraws,
    OnTopic,
    PhaseText,
    answer_text,
    avoiding,
    discussion,
    framed,
    question_stems,
    styled,
)
from tomacs.sim.topic_words import mixed_terms
from tomacs.types import Message, Question

HONEST_WORDS = (60, 180)
"""Word-count range of an honest analysis including its answer line."""
ADVERSARIAL_MAX_WORDS = 99
"""Appendix D: "Your answer must be shorter than 100 words" (counted before the answer line)."""
ADVERSARY_PERSONA = "senior domain expert"
"""Appendix D: "You are acting as a senior domain expert", the only persona an adversary is given."""
_ADVERSARY_ROLE = Role(
    name=ADVERSARY_PERSONA,
    profile="You are acting as a senior domain expert.",
    # the opener's angle comes from the existing phrase bank of the closest pool role, so that the
    # adversary's opener is an honest-generator sentence; only the persona's name is App. D's
    focus=ROLES["Knowledgeable Expert"].focus,
)

_DETS = frozenset(
    "the a an of this that these those its their his her our each every some any for with about "
    "between among from by in on".split()
)
# common stem verbs that make poor "key terms"
_VERBISH = frozenset(
    """explains explain rises rise remains remain increases increase decreases decrease sell sold sells buy
    bought buys happens happen occurs occur called used uses given known find found much many altogether
    need needs needed does will would could should have takes take took gets got make makes made causes
    cause caused results result shows show shown become becomes became wants want left spent spend
    leads lead described describe""".split()
)
_WORD = re.compile(r"[A-Za-z][A-Za-z\-']+")
_NUM = re.compile(r"(?<![\w.])-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|(?<![\w.])-?\d+(?:\.\d+)?")
_SENT = re.compile(r"(?<=[.!?])\s+")
_HEADER = re.compile(r"^\s*---.*---\s*$", re.MULTILINE)  # f_m's "--- Message from X ---"
_ANSWER_LINE = re.compile(r"^\s*Answer\s*:.*$", re.MULTILINE | re.IGNORECASE)


# ----------------------------------------------------------------------------------------- helpers
def _pick(rng: np.random.Generator, seq: Sequence[str]) -> str:
    return seq[int(rng.integers(len(seq)))]


def _sample(rng: np.random.Generator, seq: Sequence[str], k: int) -> list[str]:
    k = min(k, len(seq))
    if k <= 0:
        return []
    idx = rng.choice(len(seq), size=k, replace=False)
    return [seq[int(i)] for i in idx]


def _words(text: str) -> int:
    return len(text.split())


def _content(w: str) -> bool:
    return len(w) >= 4 and w not in _STOP and not w.endswith("ly")


def _keywords(question: Question) -> tuple[str, ...]:
    """Key terms of the question stem, noun phrases first, in order of appearance (deduplicated).

    Every reply to a question needs them (25 calls per question with 6 agents x 4 rounds), so they
    are computed once per distinct stem (`_stem_keywords`, memoised); a tuple, so no caller can
    change the shared value.
    """
    return _stem_keywords(question.text)


@functools.lru_cache(maxsize=4096)
def _stem_keywords(text: str) -> tuple[str, ...]:
    """`_keywords` of one stem text.

    A cheap noun-phrase heuristic, no tagger: a content word right after a determiner or preposition
    ("the *price*", "of *consumer demand*") is taken with the next word when that is a content word
    too; plain content words follow as a fallback. Good enough to make texts mention the question.
    """
    phrases: list[str] = []
    words: list[str] = []
    for seg in re.split(r"[.?!,;:()\n]", text):  # phrases never cross punctuation
        raw = [w.strip("-'") for w in _WORD.findall(seg)]
        # keep proper nouns capitalised (not at segment start), lowercase the rest
        toks = [w if i > 0 and w[:1].isupper() and w[1:].islower() else w.lower() for i, w in enumerate(raw)]
        for i, w in enumerate(toks):
            if _content(w.lower()) and w.lower() not in _VERBISH:
                words.append(w)
            if i == 0 or toks[i - 1].lower() not in _DETS or not _content(w.lower()):
                continue
            ph = w
            nxt = toks[i + 1].lower() if i + 1 < len(toks) else ""
            if nxt and _content(nxt) and nxt not in _VERBISH:
                ph = f"{w} {toks[i + 1]}"
            if ph not in phrases:
                phrases.append(ph)
    out = list(phrases)
    for w in words:
        if w not in out and not any(w in p.split() for p in phrases):
            out.append(w)
    return tuple(out)


def _kw(rng: np.random.Generator, kws: Sequence[str], fallback: str = "the central concept") -> str:
    if not kws:
        return fallback
    # earlier words are usually the subject of the stem; favour the first dozen
    return kws[int(rng.integers(min(len(kws), 12)))]


def _snip(text: str, max_words: int = 8) -> str:
    words = str(text).strip().rstrip(".;:,").split()
    s = " ".join(words[:max_words])
    return s + ("..." if len(words) > max_words else "")


def _option(question: Question, label: str) -> str | None:
    if not question.options or label not in question.labels:
        return None
    return _snip(question.options[question.labels.index(label)])


def _ref(
    question: Question,
    label: str,
    rng: np.random.Generator,
    avoid: Sequence[str] = (),
    lettered: bool = True,
) -> str:
    """A reference to an option the way LLMs write it: `option B ("...")`, `B) ...`, `(B)`; by its text
    alone in a reply not `lettered` (`PhaseText.lettered`: real qwen-max writes "completely acceptable",
    never "B", in its rationales); `avoid`: words the reply does not use (`PhaseText.avoided`)."""
    text = _option(question, label)
    if question.kind != "mc" or text is None:
        return str(label)
    forms: tuple[str, ...]
    if lettered:
        forms = (
            f'option {label} ("{text}")',
            f"{label} ({text})",
            f'"{text}" ({label})',
            f"({label}) {text}",
        )
    else:  # in the sentence as its words, unquoted: "... making it completely acceptable"
        forms = (text, text.lower())
    return _pick(rng, avoiding(forms, avoid))


def _answer_ref(question: Question, answer: str, rng: np.random.Generator, lettered: bool) -> str:
    """The reply's own answer where a template writes it bare (`{a}`: "So the answer is B."): its letter,
    as the templates did, or its text in a reply not `lettered` (one draw, only then)."""
    return str(answer) if lettered else _ref(question, answer, rng, (), False)


def _answer_count(style: PhaseText | None, rng: np.random.Generator) -> int:
    """How many sentences of one reply name its answer's text: a Poisson draw at the fitted rate."""
    return int(rng.poisson(max(style.answer_rate, 0.0))) if style is not None else 0


def _letter(label: str, rng: np.random.Generator, avoid: Sequence[str] = ()) -> str:
    """A reference to an option by its letter only, as a reply that does not repeat the option's text
    writes it: in a form `text_model.letter_named` reads as one. The bare letter ("E matches ...") it does
    not (a sentence's "A" is as often the article), so a third of the replies drawn to name letters were
    measured as naming none: qwen3-8b's simulated shares ran at about half its fitted ones (stop 80)."""
    return _pick(rng, avoiding((f"option {label}", f"({label})"), avoid))


def _numbers(question: Question) -> tuple[float, ...]:
    return _stem_numbers(question.text)


@functools.lru_cache(maxsize=4096)
def _stem_numbers(text: str) -> tuple[float, ...]:
    """The numbers in a stem, once per distinct stem (like `_stem_keywords`)."""
    out: list[float] = []
    for m in _NUM.findall(text):
        try:
            out.append(float(m.replace(",", "")))
        except ValueError:
            continue
    return tuple(out)


def _fmt(x: float) -> str:
    if abs(x - round(x)) < 1e-9:
        return str(int(round(x)))
    return f"{x:.2f}".rstrip("0").rstrip(".")


def _role_phrase(role: str) -> str:
    return base_role(role)


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:] if s else s


def _strip_answer(text: str) -> str:
    """A message body without its answer line(s) and anything after the first one (e.g. a suffix)."""
    m = _ANSWER_LINE.search(text)
    return text[: m.start()].strip() if m else text.strip()


def _echo(rng: np.random.Generator, msg: Message, max_words: int = 14) -> str | None:
    """A short quotable phrase from a neighbour's analysis (what an LLM echoes when persuaded).

    Taken from the start of a clause so it reads as a quotation, truncated to `max_words`.
    """
    body = _HEADER.sub("", _strip_answer(msg.text))
    clauses: list[str] = []
    for sent in _SENT.split(body):
        for c in re.split(r"[;:]\s+|,\s+(?=[a-z])", sent.strip()):
            c = c.strip().rstrip(".!?")
            if _words(c) >= 5:
                clauses.append(c)
    if not clauses:
        return None
    words = _pick(rng, clauses).split()[:max_words]
    q = " ".join(words).strip(" ,;:\"'")
    if len(q) > 1 and q[0].isupper() and q[1].islower():
        q = q[0].lower() + q[1:]
    return q or None


_LEADS = ("First, ", "Then ", "Next, ", "After that, ", "Now ", "So ")
_STEP_TMPL = (
    "{lead}{expr}.",
    "{lead}we compute {expr}.",
    "{lead}that gives {expr}.",
    "{lead}combining these: {expr}.",
    "{lead}the intermediate quantity is {expr}.",
)
_SYM = {"*": "×", "+": "+", "-": "-", "/": "÷"}


def _step(rng: np.random.Generator, i: int, a: float, op: str, b: float, res: float) -> str:
    expr = f"{_fmt(a)} {_SYM[op]} {_fmt(b)} = {_fmt(res)}"
    lead = _LEADS[min(i, len(_LEADS) - 1)]
    return _cap(_pick(rng, _STEP_TMPL).format(lead=lead, expr=expr))


def _small_ratio(num: float, den: float) -> int | None:
    """num / den when it is a whole number between 2 and 12 (a natural "times" step), else None."""
    if den == 0:
        return None
    r = num / den
    return int(round(r)) if abs(r - round(r)) < 1e-9 and 2 <= round(r) <= 12 else None


def _arith_steps(rng: np.random.Generator, nums: Sequence[float], n_steps: int, result: str) -> list[str]:
    """Solution steps on the question's own numbers that end in `result`.

    The intermediate steps are correct arithmetic on pairs of numbers from the question; the last
    step combines the first number (or an intermediate value) with whatever is needed to land on
    `result`, so the text reads as a coherent (if possibly wrong) solution for the decided answer.
    """
    try:
        final = float(result)
    except ValueError:
        final = None
    vals = [v for v in nums if v != 0][:6]
    steps: list[str] = []
    if final is not None:  # two of the question's numbers combine straight to the result: say so
        for a in vals:
            for b in vals:
                if a is b:
                    continue
                for op, res in (("*", a * b), ("+", a + b), ("-", a - b), ("/", a / b)):
                    if abs(res - final) < 1e-9:
                        return [_step(rng, 0, a, op, b, res)]
    pool: list[float] = list(vals)
    for i in range(max(0, min(n_steps - 1, len(vals) - 1))):
        a, b = vals[i % len(vals)], vals[(i + 1) % len(vals)]
        op = _pick(rng, ("*", "+", "*", "+", "-", "/"))
        if op == "/" and abs(a / b - round(a / b)) > 1e-9:
            op = "*"
        if op == "-" and a - b < 0:
            op = "+"
        res = {"*": a * b, "+": a + b, "-": a - b, "/": a / b}[op]
        steps.append(_step(rng, i, a, op, b, res))
        pool.append(res)
    if final is None or not pool or any(abs(v - final) < 1e-9 for v in pool[len(vals) :]):
        return steps
    x = pool[-1] if len(pool) > len(vals) and rng.random() < 0.6 else pool[0]
    if x == final:
        return steps
    i = len(steps)
    up, down = _small_ratio(final, x), _small_ratio(x, final)
    if up is not None:
        steps.append(_step(rng, i, x, "*", float(up), final))
    elif down is not None:
        steps.append(_step(rng, i, x, "/", float(down), final))
    elif final > x:
        steps.append(_step(rng, i, x, "+", final - x, final))
    else:
        steps.append(_step(rng, i, x, "-", x - final, final))
    return steps


# ------------------------------------------------------------------------------------ phrase banks
_OPENERS = (
    "As the {role}, I will approach this by {focus}.",
    "Let me approach this by {focus}.",
    "I'll start by {focus}.",
    "My approach here is {focus}.",
    "Approaching this as the {role}, the first step is {focus}.",
    "To answer this, I focus on {focus}.",
    "Let's think step by step, {focus}.",
    "I will work through this carefully, {focus}.",
)

_OPENERS_NO_PERSONA = tuple(o for o in _OPENERS if "{role}" not in o)


@functools.lru_cache(maxsize=64)
def _shared_focus(benchmark: str) -> tuple[str, ...]:
    """Every angle of the benchmark's role pool, for a writer without a persona: a source-fitted
    text model writes as its source's agents did, and they had none, so no agent's angle (the
    adversary's included) may tell its seat or role."""
    try:
        return tuple(f for name in role_pool(benchmark) for f in get_role(name).focus)
    except KeyError:
        return ROLES["Knowledgeable Expert"].focus


_TOPIC_MC = (
    "The question turns on {k1} and how it relates to {k2}.",
    "The key issue here is {k1}.",
    "Essentially, we need to decide what is true about {k1} in this context.",
    "The important clue in the stem is the reference to {k1}.",
    "This is really a question about {k1}, with {k2} as the deciding detail.",
    "We need the option that best accounts for {k1}.",
    "The stem describes {k1}, so the answer has to be consistent with {k2} as well.",
    "Two things matter here: {k1} and {k2}.",
)

_REJECT = (
    "does not fit the conditions described in the question",
    "confuses {k} with a related but different idea",
    "is too broad to be the best answer",
    "only applies in a special case that the question does not describe",
    "contradicts the information given about {k}",
    "describes a consequence rather than the underlying cause",
    "is a tempting distractor, but it ignores {k}",
    "sounds plausible but is not how {k} is usually defined",
    "reverses the actual relationship",
    "is partly true but incomplete",
    "would require an assumption the question does not support",
    "is not supported by the standard account of {k}",
)

_SUPPORT = (
    "matches the standard account of {k}",
    "is consistent with every detail given in the question",
    "is the only option that fully accounts for {k}",
    "follows directly from the definition of {k}",
    "fits the situation described once {k} is taken into account",
    "is what the usual textbook treatment of {k} would say",
    "best explains the role of {k} here",
    "is the most precise description of {k}",
)

_WALK_RESTATE = (
    "This option says that {t}.",
    "It states that {t}.",
    "This suggests that {t}.",
    "The claim here is that {t}.",
    "Here we are told that {t}.",
)
_WALK_NAME = ("This option is {T}.", "It names {T}.", "Here the choice is {T}.")
"""How a walk through the options (`_walkthrough`) restates an option under its own line: its text as a clause
(four words or more) or as a name."""

_FILL_MC = (
    "It helps to separate what the question actually states from what it merely implies.",
    "The wording about {k} is the important clue here.",
    "Looking at {k} more closely, the relationship is fairly direct.",
    "A quick check of the remaining options against this reasoning is consistent with it.",
    "Several options share similar wording, so the distinction has to come from {k}.",
    "I also considered whether {k} could change the conclusion, but it does not.",
    "The distractors each capture a piece of the idea without the full picture.",
    "If we think about a typical example involving {k}, the same conclusion holds.",
    "This is a common point of confusion, so it is worth being precise.",
    "The question is not asking for a general fact but for the most accurate statement in this case.",
    "In standard treatments, {k} is discussed in exactly these terms.",
    "Nothing in the stem suggests an exception to the usual rule.",
    "The phrase about {k} rules out the more general interpretations.",
    "Comparing the options side by side makes the difference clearer.",
    "When I test each option against the details about {k}, only one holds up.",
    "A careful reading shows that the question emphasises {k} rather than {k2}.",
)

_FILL_NUM = (
    "It is worth writing down each quantity before combining them.",
    "The units are consistent throughout, so no conversion is needed.",
    "I double-checked the arithmetic at each step.",
    "The wording about {k} tells us which quantities to add and which to multiply.",
    "We have to be careful to apply each rate to the right amount.",
    "A rough estimate gives a number of the same size, which is a good sanity check.",
    "The question asks for the final total, not an intermediate value.",
    "Reading the problem again, no quantity has been used twice.",
    "The key is to track {k} carefully through each step.",
    "Keeping the intermediate results as whole numbers avoids rounding errors.",
    "Each step follows directly from the information in the problem.",
    "It helps to restate the goal: we need the final value described in the last sentence.",
)

_CONCLUDE_MC = (
    "Therefore, the best answer is {a}.",
    "So the answer is {a}.",
    "On balance, {a} is the most defensible choice.",
    "Putting this together, I choose {a}.",
    "Hence the correct option is {a}.",
    "Taking all of this into account, {a} is the answer.",
    "For these reasons I select {a}.",
)

_CONCLUDE_NUM = (
    "So the final result is {a}.",
    "That gives a final answer of {a}.",
    "Therefore, the answer is {a}.",
    "Putting the steps together, the result is {a}.",
    "Hence the value asked for is {a}.",
    "So the total comes to {a}.",
)

_GIVEN_NUM = (
    "The problem gives us {nums}.",
    "We are given {nums}.",
    "The relevant quantities are {nums}.",
    "From the statement, the numbers we need are {nums}.",
)

_KEEP_AGREE = (
    "I have read the other agents' responses; the {r} also arrives at {a}, matching my earlier reasoning.",
    "The {r} reaches the same conclusion ({a}), and their argument supports my previous answer.",
    "Reviewing the messages, the {r}'s analysis agrees with mine, so I see no reason to change {a}.",
    "My previous answer was {a}, and the {r}'s reasoning points the same way.",
)

_KEEP_DISAGREE = (
    "The {r} argues for {o}, but that argument overlooks {k}, so I keep my previous answer.",
    "I considered the {r}'s case for {o}, yet it rests on a reading of {k} the question does not support.",
    "The {r} suggests {o}; having checked their reasoning, I still find {a} better supported.",
    "Although the {r} prefers {o}, their argument does not address {k}, so I stay with {a}.",
    "I do not find the {r}'s argument for {o} convincing, because it skips over {k}.",
)

_KEEP_ALONE = (
    "Re-reading the question and my earlier response, I still think the reasoning holds.",
    "I reviewed my previous analysis again and did not find an error in it.",
    "Going over my earlier answer once more, the argument still stands.",
)

_CHANGE_CITE = (
    "After reading the {r}'s response, I am revising my earlier answer{prev}.",
    "The {r} makes a point I had not weighed properly, so I am changing my answer{prev}.",
    "On reflection, the {r}'s argument is convincing and I now disagree with my previous answer{prev}.",
    "Having read the other agents' messages, I think the {r} is right and I am updating my answer{prev}.",
    "I am reconsidering my answer{prev} in light of the {r}'s analysis.",
)

_CHANGE_QUOTE = (
    'As the {r} put it, "{q}".',
    'The {r} notes that "{q}", which I had overlooked.',
    'In particular, the observation that "{q}" changes the picture.',
    'Their point that "{q}" is the deciding consideration.',
)

_CHANGE_PERSUADED = (
    "The {r} also points out a subtle constraint in the problem that I had not considered.",
    "The {r} identifies a constraint in the problem that my earlier analysis missed.",
)

_CHANGE_ALONE = (
    "Re-reading the question, I think my earlier answer{prev} was mistaken.",
    "On a second look, my previous answer{prev} does not hold up.",
    "Going over the problem again, I see an error in my earlier answer{prev}.",
)

_DECISION = (
    "Reviewing the agents' final responses, the most consistent and well-supported reasoning points to {a}.",
    "Having compared the agents' arguments, the analysis supporting {a} is the most convincing.",
    "Weighing the final responses, the strongest justification is for {a}.",
    "After reading all the responses, I find the case for {a} the most carefully argued.",
)

_DECISION_MID = (
    "The arguments for the other answers rely on assumptions that the question does not support.",
    "Where the agents disagree, the reasoning behind {a} engages more directly with the question.",
    "The key details of the question, in particular {k}, are handled correctly in that reasoning.",
    "Checking the main steps independently confirms this conclusion.",
    "Several agents converge on this answer with compatible reasoning.",
)


_TOPICAL_ANSWER = (
    "{A} is consistent with the fact that {c}.",
    "This points to {A}, since {c}.",
    "Given that {c}, {A} is the best fit.",
    "The description of {c} matches {A}.",
    "In other words, {c} corresponds to {A}.",
    "{A} fits because {c}.",
    "That is why {A} stands out here: {c}.",
    "{A} is what we expect when {c}.",
)
"""Sentences on the question naming the reply's answer by its own text (a fitted style's `answer_rate`)."""

_TOPICAL_PLAIN = (
    "The key point is that {c}.",
    "We are told that {c}.",
    "It is important to note that {c}.",
    "This matters because {c}.",
    "The relevant detail is this: {c}.",
    "Notice that {c}.",
    "Recall the setting: {c}.",
    "What decides it is that {c}.",
    "The question says {c}.",
    "Keep in mind that {c}.",
    "The fact that {c} is central.",
    "We also know that {c}.",
    "Since {c}, the rest follows from it.",
    "Here, {c}.",
    "Consider that {c}.",
    "It also matters that {c}.",
)
"""Sentences on the question's own content (a fitted style's `topic_density`)."""

_TOPICAL_PLAIN_NEAR = (
    "The key point is that {c}, which comes down to {n1} and {n2}.",
    "We are told that {c}, so {n1} and {n2} are what matter.",
    "Since {c}, the question turns on {n1} and {n2}.",
    "The fact that {c} bears on {n1}, {n2} and {n3}.",
    "Because {c}, we should think about {n1} and {n2}.",
    "Given that {c}, {n1} and {n2} decide it.",
    "Notice that {c}: this is about {n1} and {n2}.",
    "Keep in mind that {c}, which involves {n1} and {n2}.",
    "Here, {c}, and that is a matter of {n1}, {n2} and {n3}.",
    "It also matters that {c}, given {n1} and {n2}.",
)
"""The same sentences joined to words near the question (`tomacs.sim.topic_words`), under a vocabulary."""

_TOPICAL_TERMS = (
    "{k1}, {k2} and {k3} all matter here.",
    "Consider {k1}, {k2} and {k3} together.",
    "The details on {k1}, {k2} and {k3} decide it.",
    "{k1} ties {k2} to {k3}.",
    "What {k1} means for {k2} and {k3} is central.",
)
"""Sentences on the stem's key terms, once its clauses are used up."""

_TOPICAL_ANSWER_TERMS = (
    "{A} is what {k1} and {k2} point to.",
    "{A} accounts for {k1} as well as {k2}.",
    "With {k1} and {k2} in view, {A} is the answer.",
    "Both {k1} and {k2} are consistent with {A}.",
    "{A} is the option that fits {k1}.",
    "Taking {k1} into account leads to {A}.",
)
"""Sentences naming the answer's text with the stem's key terms, once its clauses are used up: a reply owes
its answer's text as many sentences as the fitted `answer_rate` draws."""

_CHUNK_SPLIT = re.compile(r"[.?!;:\n]+|,\s+|\s+(?=(?:that|which|who|where|when|because|if|while|but)\s)")
_ASKING = re.compile(
    r"^(?:which|what)(?: one)? of the following(?: [a-z]+)?\s+"
    r"(is|are|was|were|best describes|describes|best explains|explains)\s+(.+)$",
    re.IGNORECASE,
)
_LEADING = re.compile(r"^(?:that|which|who)\s+", re.IGNORECASE)  # what the split left in front of a clause
_WHICH_OF = re.compile(
    r"^which(?: one)? of the following(?: statements?| options?| choices?)?\b", re.IGNORECASE
)
_WH_BE = re.compile(r"^(?:what|who)\s+(is|are|was|were)\s+(.+)$", re.IGNORECASE)
_HOW_IS = re.compile(
    r"^how\s+[a-z]+\s+(is|are|was|were)\s+((?:this|that|these|those|the)\s.+)$", re.IGNORECASE
)
_LONG_SPLIT = re.compile(r"\s+(?:so|and|or|but|as|since|until|after|before)\s+(?=\S)")
_LEAD_IN = re.compile(r"^\s*[^.?!:\n]{3,60}:\s+")  # "Consider this situation: "


def _lower_first(s: str) -> str:
    """`s` with its first letter lowered when its first word is a function word ("The", "In"); any other
    capitalised word may be a name ("Gauthier") and keeps its capital."""
    first = s.split(" ", 1)[0]
    if len(first) > 1 and first[0].isupper() and first[1:].islower() and first.lower() in _STOP | _DETS:
        return s[0].lower() + s[1:]
    return s


@functools.lru_cache(maxsize=4096)
def _stem_chunks(text: str) -> tuple[str, ...]:
    """Clauses of a stem a reply can restate (3-16 words, no interrogative), in order; once per stem.

    A lead-in that a colon closes ("Consider this situation: I borrowed money ...") is the benchmark's
    wording, not the question's: every ETHICS stem of MAD-Follower opens with it, and it was the one clause of
    a stem whose situation runs over 16 words, so replies restated it instead of the situation (stop 74)."""
    out: list[str] = []
    lead = _LEAD_IN.match(text)
    if lead is not None and _CHUNK_SPLIT.split(text[lead.end() :].strip(), maxsplit=1)[0].strip():
        text = text[lead.end() :]
    pieces: list[str] = []
    for piece in _CHUNK_SPLIT.split(text):
        # a clause over 16 words is cut at its conjunctions, so a long situation is restated in parts
        # rather than not at all
        pieces += _LONG_SPLIT.split(piece) if len(piece.split()) > 16 else [piece]
    for piece in pieces:
        c = _LEADING.sub("", " ".join(piece.split()).strip(" ,'\"()"))
        if (
            not 3 <= len(c.split()) <= 16
            or "_" in c
            or "of the following" in c.lower()
            or re.match(r"(?i)(which|what|how|why)\b", c)
        ):
            continue
        c = _lower_first(c)
        if c not in out:
            out.append(c)
    return tuple(out)


_ASKED_ANSWER = ("{A} is the answer to {c}.", "When we work out {c}, we get {A}.", "{A} settles {c}.")
_ASKED_PLAIN = ("We need to work out {c}.", "The point is {c}.", "So the task is to find {c}.")


@functools.lru_cache(maxsize=4096)
def _asked_chunks(text: str) -> tuple[str, ...]:
    """The interrogative clauses of a stem (3-16 words, lowered), for a stem with no other clause."""
    out = []
    for piece in _CHUNK_SPLIT.split(text):
        c = " ".join(piece.split()).strip(" ,'\"()")
        if 3 <= len(c.split()) <= 16 and re.match(r"(?i)(which|what|how|why|who|when|where)\b", c):
            out.append(_WHICH_OF.sub("what", c[0].lower() + c[1:]))
    return tuple(out)


def _restated(question: Question, said: str) -> str | None:
    """The stem's last sentence as a statement with the answer's text in its place, as real replies open
    ("The morality that Gauthier describes ... essentially involves pure altruism."); None when the
    stem's form has no such statement."""
    sents = [x for x in _SENT.split(question.text.strip()) if x.strip()]
    last = " ".join(sents[-1].split()) if sents else ""
    if not last or len(last.split()) > 30:
        return None
    bare = last.rstrip("?.: _")
    m = _ASKING.match(bare)
    if m:
        return _cap(f"{said} {m.group(1).lower()} {m.group(2)}.")
    # "What is X?" -> "X is A."; "How acceptable is this behavior?" -> "This behavior is Mostly unacceptable."
    m = _WH_BE.match(bare) or _HOW_IS.match(bare)
    if m:
        return _cap(f"{m.group(2)} {m.group(1).lower()} {said}.")
    if not last.endswith("?"):
        return _cap(f"{bare} {said}.")
    return None


def _topical(
    question: Question,
    answer: str,
    rng: np.random.Generator,
    answer_count: int = 0,
    near: Sequence[str] = (),
    restating: float | None = None,
) -> OnTopic:
    """Sentences about the question for a fitted style (`text_model.on_topic`): those naming the answer's
    text (the stem restated with it first, when its form allows) and the others. Built from the stem and
    options the agent is given, so nothing of any transcript is in them. `answer_count`: how many sentences
    of the reply name the answer's text (drawn by the caller at the fitted rate). `near` (words near the
    question, `tomacs.sim.topic_words`): a sentence restating a clause joins it to near words, except at the
    fitted share `restating` (its model's replies' share of words in restating sentences; always without it):
    real replies are about their question in their own words (qwen3-8b restates in 0.03 of its words, the
    clauses alone wrote 0.34; joined, 0.13; gpt-3.5 0.22-0.33, alone 0.34-0.42, all joined 0.18-0.24)."""
    chunks = list(_stem_chunks(question.text))
    asked = [] if chunks else list(_asked_chunks(question.text))
    opt = (
        question.options[question.labels.index(answer)]
        if question.kind == "mc" and question.options and answer in question.labels
        else None
    )
    said = " ".join(str(opt).strip().rstrip(".").split()[:25]) if opt is not None else str(answer)
    named = answer_text(str(opt)) if opt is not None else None
    first = _restated(question, said) if opt is not None else None
    with_answer = [first] if first else []
    # each clause at most once naming the answer and three times not, no template twice (a reply that says one
    # thing over and over is not what real ones write); a stem that is all question ("How many years are
    # there in a decade?") has its asking clauses
    answering: Sequence[str]
    stating: Sequence[str]
    if chunks:
        clauses, answering, stating = chunks, _TOPICAL_ANSWER, _TOPICAL_PLAIN
    else:
        clauses, answering, stating = asked, _ASKED_ANSWER, _ASKED_PLAIN
    plain: list[str] = []
    once = _sample(rng, clauses, len(clauses))
    for c, t in zip(once, _sample(rng, answering, len(answering)), strict=False):
        with_answer.append(_cap(t.format(A=said, c=c)))
    terms = list(_keywords(question))
    if opt is not None and len(terms) >= 2:
        # a short stem has one or two clauses, so the answer's text ran out at 1-2 sentences where the fit
        # draws more (gpt-4o's later replies named it in 2.3 and 2.9 sentences against a fitted 2.6 and
        # 3.6) and templated fillers took their place (stop 72)
        for t in _sample(rng, _TOPICAL_ANSWER_TERMS, len(_TOPICAL_ANSWER_TERMS)):
            k1, k2 = _sample(rng, terms, 2)
            with_answer.append(_cap(t.format(A=said, k1=k1, k2=k2)))
    # a point made up to three times, each time in other words (16 templates: simulated replies padded
    # with the templates' fillers once their points ran out, stop 71)
    thrice = [c for _ in range(3) for c in _sample(rng, clauses, len(clauses))]
    if near and chunks and len(near) >= 3:
        joined = _sample(rng, _TOPICAL_PLAIN_NEAR, len(_TOPICAL_PLAIN_NEAR))
        alone = _sample(rng, stating, len(stating))
        for c in thrice:
            if restating is not None and rng.random() < restating and alone:
                plain.append(_cap(alone.pop().format(c=c)))
            elif joined:
                n1, n2, n3 = _sample(rng, near, 3)
                plain.append(_cap(joined.pop().format(c=c, n1=n1, n2=n2, n3=n3)))
    else:
        for c, t in zip(thrice, _sample(rng, stating, len(stating)), strict=False):
            plain.append(_cap(t.format(c=c)))
    # then the stem's key terms, three at a time: a short stem has few clauses, and real replies to it
    # are still mostly about its terms (gpt-3.5's honest round-1 replies write 0.54 of their words from
    # the question; with clauses alone 500 MMLU questions got 0.41)
    if len(terms) >= 3:
        for t in _sample(rng, _TOPICAL_TERMS, 3):  # no more: they read as lists of words
            k1, k2, k3 = _sample(rng, terms, 3)
            if near and len(near) >= 2:
                k2, k3 = _sample(rng, near, 2)
            plain.append(_cap(t.format(k1=k1, k2=k2, k3=k3)))
    stems = question_stems(question.text, question.options or ())
    return OnTopic(with_answer, plain, named, stems, first, answer_count, said if opt is not None else None)


# ------------------------------------------------------------------------------------- assembly
def _assemble(
    rng: np.random.Generator,
    head: list[str],
    core: list[str],
    fillers: list[str],
    tail: list[str],
    answer_line: str,
    lo: int,
    hi: int,
    target: int,
    nearest: bool = False,
    end_with_core: bool = False,
    paragraph_words: float = 0.0,
) -> str:
    """Join sentences into paragraphs, inserting fillers until `target` words (within [lo, hi]).

    `nearest` (a fitted style): a filler goes in only if it brings the length nearer the target than
    stopping would. Filling until the target is reached overshoots by half a sentence on average,
    which wrote every fitted style 7-11 words longer than its fit (+18 % for qwen-max's honest
    agents); App. D's texts keep the old rule, byte for byte.
    `end_with_core` (a fitted topic density): no filler goes after the last core sentence, so a reply
    whose style dropped its generic conclusion ends on its point, not on a filler: refitted, 0.27-0.43 of
    gpt-4o's simulated replies closed generically, against a fitted `closer_share` of 0.03-0.17 (stop 72)."""
    fixed = head + core + tail
    n = sum(_words(s) for s in fixed) + _words(answer_line)
    extra: list[str] = []
    pool = list(fillers)
    while pool and (n < target or n < lo):
        s = pool.pop(int(rng.integers(len(pool))))
        w = _words(s)
        if n + w > hi or (nearest and n + w - target > target - n):
            continue
        extra.append(s)
        n += w
    # fillers go between the core sentences, not all at the end
    body = list(core)
    after_last = 0 if end_with_core and len(core) > 1 else 1  # else between the first and last core sentences
    for s in extra:
        body.insert(int(rng.integers(1, len(body) + after_last)) if body else 0, s)
    paras: list[str] = []
    if head:
        paras.append(" ".join(head))
    # split the body into one or two paragraphs, as LLM replies usually are
    if len(body) > 3 and rng.random() < 0.6:
        cut = int(rng.integers(2, len(body) - 1))
        paras += [" ".join(body[:cut]), " ".join(body[cut:])]
    elif body:
        paras.append(" ".join(body))
    if tail:
        paras.append(" ".join(tail))
    if paragraph_words > 0:  # the templated layout above still took its draws: every later draw is as before
        paras = _paragraphs([*head, *body, *tail], paragraph_words)
    text = "\n\n".join(p for p in paras if p)
    return f"{text}\n\n{answer_line}"


def _paragraphs(sentences: Sequence[str], words: float) -> list[str]:
    """`sentences` in paragraphs of about `words` words (a fitted `paragraph_words`), cut at sentence ends
    drawn from the sentences themselves: the layout is whitespace only (MiniLM's tokens are the same) and
    takes no draw from the reply's stream, so a fitted layout leaves every word of every reply as it was.
    A sentence of several lines (a walk through the options, `_walkthrough`) is a paragraph of its own, and
    the sentences between such blocks are laid out as above."""
    if any("\n" in s for s in sentences):
        out: list[str] = []
        run: list[str] = []
        for s in sentences:
            if "\n" in s:
                out += [*(_paragraphs(run, words) if run else []), s]
                run = []
            else:
                run.append(s)
        return out + (_paragraphs(run, words) if run else [])
    n = sum(_words(s) for s in sentences)
    k = min(max(int(round(n / words)), 1), len(sentences))
    rng = np.random.default_rng(zlib.crc32(" ".join(sentences).encode()))
    cuts = (
        sorted(int(c) for c in rng.choice(np.arange(1, len(sentences)), k - 1, replace=False))
        if k > 1
        else []
    )
    return [" ".join(sentences[a:b]) for a, b in zip([0, *cuts], [*cuts, len(sentences)], strict=True)]


def _fill(tmpl: str, **kw: str) -> str:
    return _cap(tmpl.format(**kw))


def _discussion(
    question: Question,
    role: str,
    answer: str,
    rng: np.random.Generator,
    changed: bool,
    incoming: Sequence[Message],
    previous_answer: str | None,
    kws: Sequence[str],
    avoid: Sequence[str] = (),
    lettered: bool = True,
) -> list[str]:
    """The round >= 2 part: what the agent makes of its previous answer and its neighbours. `avoid`:
    words the reply does not use (`PhaseText.avoided`; none for App. D's texts); `lettered`: whether it
    names options by their letters (`_ref`)."""
    others = list(incoming)
    prev = ""
    if previous_answer and changed:
        prev = f" of {_answer_ref(question, previous_answer, rng, lettered)}"
    k = _kw(rng, kws)
    out: list[str] = []
    if changed:
        backers = [m for m in others if m.answer == answer]
        cite = _pick_msg(rng, backers) or _pick_msg(rng, others)
        if cite is None:
            return [_fill(_pick(rng, avoiding(_CHANGE_ALONE, avoid)), prev=prev)]
        out.append(_fill(_pick(rng, _CHANGE_CITE), r=cite.role, prev=prev))
        if cite.persuasive and rng.random() < 0.5:
            out.append(_fill(_pick(rng, _CHANGE_PERSUADED), r=cite.role))
        q = _echo(rng, cite) if rng.random() < 0.7 else None
        if q:
            out.append(_fill(_pick(rng, _CHANGE_QUOTE), r=cite.role, q=q))
        return out
    if not others:
        return [_pick(rng, avoiding(_KEEP_ALONE, avoid))]
    agree = [m for m in others if m.answer == answer]
    disagree = [m for m in others if m.answer is not None and m.answer != answer]
    if agree and (not disagree or rng.random() < 0.5):
        m = _pick_msg(rng, agree)
        assert m is not None
        out.append(_fill(_pick(rng, _KEEP_AGREE), r=m.role, a=_ref(question, answer, rng, avoid, lettered)))
    if disagree:
        m = _pick_msg(rng, disagree)
        assert m is not None
        out.append(
            _fill(
                _pick(rng, avoiding(_KEEP_DISAGREE, avoid)),
                r=m.role,
                o=_ref(question, str(m.answer), rng, avoid, lettered),
                a=_answer_ref(question, answer, rng, lettered),
                k=k,
            )
        )
    if not out:
        out.append(_pick(rng, avoiding(_KEEP_ALONE, avoid)))
    return out


def _walkthrough(
    question: Question,
    answer: str,
    style: PhaseText,
    arg: np.random.Generator,
    rng: np.random.Generator,
    kws: Sequence[str],
    avoid: Sequence[str] = (),
) -> str:
    """The options one by one, each under a line of the style's fitted form (`PhaseText.walk_headers`): what
    the option says (unless its line gives its text) and whether it holds, the answer's with a supporting
    reason and every other with a rejection, as bullets at the fitted share. Made of the question's own
    options and the templates' reasons, so nothing of any transcript is in it; `arg` draws what it argues
    (the reasons: replies arguing one answer in one debate give the same ones), `rng` the layout."""
    w = np.asarray(style.walk_weights or [1.0] * len(style.walk_headers), dtype=float)
    form = style.walk_headers[int(rng.choice(len(style.walk_headers), p=w / w.sum()))]
    bullet = rng.random() < style.walk_bullet
    sections = []
    for i, (lab, opt) in enumerate(zip(question.labels, question.options or (), strict=False)):
        text = " ".join(str(opt).strip().rstrip(".").split()[:25])
        head = form.replace("{n}", str(i + 1)).replace("{L}", lab).replace("{T}", text)
        lines = []
        if "{T}" not in form:
            many = len(text.split()) >= 4
            lines.append(
                _cap(_pick(arg, _WALK_RESTATE if many else _WALK_NAME).format(t=_lower_first(text), T=text))
            )
        reasons = _SUPPORT if lab == answer else _REJECT
        lines.append(f"This {_pick(arg, avoiding(reasons, avoid)).format(k=_kw(arg, kws))}.")
        sections.append("\n".join([head, *(f"- {x}" if bullet else x for x in lines)]))
    return "\n\n".join(sections)


def _pick_msg(rng: np.random.Generator, msgs: Sequence[Message]) -> Message | None:
    return msgs[int(rng.integers(len(msgs)))] if msgs else None


# ----------------------------------------------------------------------------------------- public
def honest_analysis(
    question: Question,
    role: str,
    answer: str,
    rng: np.random.Generator,
    round: int = 1,
    changed: bool = False,
    incoming: Sequence[Message] = (),
    previous_answer: str | None = None,
    style: PhaseText | None = None,
    shared: DebateDraws | None = None,
    near: Sequence[str] = (),
) -> str:
    """An honest agent's reply supporting the already-decided `answer`, ending with `Answer: X` (under a
    fitted style's frame or mark, its model's own form: `text_model.framed`).

    Round 1 analyses the question alone; from round 2 on the reply first says what the agent makes
    of its previous answer and the neighbour messages: if `changed`, it cites (and often quotes) a
    neighbour backing the new answer — the way a persuaded LLM writes — otherwise it explains why it
    keeps its answer. `previous_answer` (optional) lets a changed reply name the old answer.
    About 60-180 words in total (`HONEST_WORDS`); with a fitted `style` (a profile's text model,
    `tomacs.sim.text_model`), the length and the generic sentences of the model it stands for;
    `shared`: what the replies of its debate share, `near`: words near its question (see `_analysis`).
    """
    return _analysis(
        question,
        role,
        answer,
        rng,
        round,
        changed,
        incoming,
        previous_answer,
        style=style,
        shared=shared,
        near=near,
    )


def adversarial_analysis(
    question: Question,
    target: str,
    rng: np.random.Generator,
    style: PhaseText | None = None,
    max_words: int | None = ADVERSARIAL_MAX_WORDS,
    round: int = 1,
    incoming: Sequence[Message] = (),
    shared: DebateDraws | None = None,
    near: Sequence[str] = (),
) -> str:
    """An adversary's reply arguing for `target`, ending with `Answer: target` (no persuasive suffix; a
    fitted style's frame or mark as in `honest_analysis`).

    The same generator as `honest_analysis`, because what separates a real App. D adversary from an
    honest LLM is what it argues for and what its prompt gives it, not a private phrasebook. Its prompt
    gives it the question and the target only: no role profile (it writes as App. D's "senior domain
    expert", `ADVERSARY_PERSONA`), no neighbour messages and no previous reply, so it writes a
    round-1 analysis; and "Your answer must be shorter than 100 words", so its length is the honest
    length distribution truncated to `ADVERSARIAL_MAX_WORDS` before the answer line. The executor
    appends the suffix (`add_persuasive_suffix`) unless `attack.suffix=false`.

    Other protocols (`attack.prompt=debate`: the adversary reads the others, no word limit) pass
    `max_words=None`, its `round` and what it read (`incoming`), so from round 2 on it discusses the
    others as it keeps its target; a fitted `style` writes it as the profile's model's adversaries do.
    """
    if style is None and max_words == ADVERSARIAL_MAX_WORDS and not incoming:  # App. D, as always
        return _analysis(question, ADVERSARY_PERSONA, target, rng, max_words=ADVERSARIAL_MAX_WORDS)
    return _analysis(
        question,
        ADVERSARY_PERSONA,
        target,
        rng,
        round if incoming else 1,
        False,
        incoming,
        None,
        max_words=max_words,
        style=style,
        shared=shared,
        near=near,
    )


def _n_words(*parts: list[str] | str) -> int:
    return sum(_words(p) if isinstance(p, str) else sum(_words(x) for x in p) for p in parts)


def _length_target(rng: np.random.Generator, lo: int, hi: int) -> int:
    """Word target of one reply (answer line included): honest replies draw N(110, 30) clipped to
    [lo + 2, hi - 8]; a word-limited reply redraws until the draw is within the limit, i.e. it follows
    the same distribution truncated at the limit (a bounded number of redraws keeps it deterministic
    and cheap; the fallback is uniform under the limit)."""
    if hi >= HONEST_WORDS[1]:
        return int(np.clip(rng.normal(110.0, 30.0), lo + 2, hi - 8))
    for _ in range(64):
        x = rng.normal(110.0, 30.0)
        if lo + 2 <= x <= hi:
            return int(x)
    return int(rng.integers(lo + 2, hi + 1))


def _analysis(
    question: Question,
    role: str,
    answer: str,
    rng: np.random.Generator,
    round: int = 1,
    changed: bool = False,
    incoming: Sequence[Message] = (),
    previous_answer: str | None = None,
    max_words: int | None = None,
    style: PhaseText | None = None,
    shared: DebateDraws | None = None,
    near: Sequence[str] = (),
) -> str:
    """The one analysis generator; `max_words` caps the body (the text before the answer line);
    `style` takes length and generic sentences from a fitted text model (`text_model.styled`), and
    which of `text_model.MENTION_WORDS` the reply may use (every pick below avoids the others).
    `shared` (a fitted style's, `text_model.DebateDraws`): `shared.points` draws what the reply argues: its
    key terms, its topic, rejection, supporting and filler sentences' templates and terms, its arithmetic,
    and its sentences about the question (`_topical`); `rng` how it writes (opener, length, bank sentences,
    how many options it rejects). The backbone keys `points` by debate and answer, so agents of one debate
    arguing for one answer make the same points, as replies of one model to one question do: real gpt-3.5
    round-1 pairs of honest replies have a MiniLM cosine of 0.90, an honest and an adversarial one 0.83;
    simulated, with every reply drawing its own points, 0.72 and 0.71; with shared points 0.76 and 0.72
    (stop 70). `shared.length_z` is its round's length factor (`text_model.words_target`). `near` (a fitted
    style's, `tomacs.sim.topic_words`): words of its model's vocabulary near the question and the answer,
    which take turns with the stem's key terms in every key-term slot, so the reply is about its question in
    other words than the stem's."""
    avoid = style.avoided(rng) if style is not None else ()
    # whether it names options by their letters or by their texts (`PhaseText.lettered`; App. D's: letters)
    lettered = style is None or question.kind != "mc" or style.lettered(rng)
    arg = rng if shared is None else shared.points  # what the reply argues, as against how it writes
    kws = _keywords(question)
    if style is not None and near:
        kws = mixed_terms(near, kws)
    k1 = _kw(arg, kws)
    k2 = _kw(arg, [w for w in kws if w != k1], "the details given")
    role_obj = _ADVERSARY_ROLE if role == ADVERSARY_PERSONA else get_role(role)
    letters = list(question.labels) if question.kind == "mc" else []  # what a style's `{o}` slots may name
    head: list[str] = []
    opened = rng.random() < 0.8
    if opened and style is not None:  # a fitted text model: no persona, one pool of angles for all
        head.append(
            _fill(
                _pick(rng, _OPENERS_NO_PERSONA),
                focus=_pick(rng, avoiding(_shared_focus(question.benchmark), avoid)),
            )
        )
    elif opened:
        head.append(
            _fill(_pick(rng, _OPENERS), role=_role_phrase(role).lower(), focus=_pick(rng, role_obj.focus))
        )
    if round >= 2:
        # a fitted style writes its role's own discussion of what it read; with nothing read (a sparse
        # graph) or no discussion bank, the templated one
        fitted = None
        if style is not None and incoming:
            fitted = discussion(style, rng, changed, answer, letters, kws, avoid, lettered)
        head += (
            fitted
            if fitted is not None
            else _discussion(
                question, role, answer, rng, changed, incoming, previous_answer, kws, avoid, lettered
            )
        )
    core: list[str] = []
    topical = style is not None and style.topic_density > 0
    answer_count = 0
    if question.kind == "mc":
        # a walk through the options at the fitted share (`_walkthrough`); App. D's word cap leaves no room
        walk = (
            style is not None
            and style.walk_share > 0
            and bool(style.walk_headers)
            and max_words is None
            and len(question.options or ()) >= 2
            and rng.random() < style.walk_share
        )
        lettered = lettered or walk  # a walk heads each option with its letter (`letter_share` leaves it out)
        core.append(_fill(_pick(arg, avoiding(_TOPIC_MC, avoid)), k1=k1, k2=k2))
        others = [lab for lab in question.labels if lab != answer]
        # how many it rejects by name: one or two in the templates, the fitted shares under a text model
        fitted_k = style.rejections(rng, len(others)) if style is not None else None
        for lab in _sample(rng, others, int(rng.integers(1, 3)) if fitted_k is None else fitted_k):
            reason = _pick(arg, avoiding(_REJECT, avoid)).format(k=_kw(arg, kws))
            core.append(_fill("{o} {p}.", o=_ref(question, lab, rng, avoid, lettered), p=reason))
        # a fitted topic density: how many sentences name the answer's text is drawn first, and a reply
        # drawn to name it in none names it by letter here (real qwen-max honest replies name their
        # answer's text in 0.28 sentences of round 1; every templated supporting sentence did)
        # (one naming neither its answer's text nor letters has none: real qwen-max replies argue their
        # answer without naming it, and a sentence naming its text is one of the fitted count)
        ref: str | None
        if topical:
            answer_count = _answer_count(style, rng)
            if answer_count:
                ref = _ref(question, answer, rng, avoid, lettered)
            else:
                ref = _letter(answer, rng, avoid) if lettered else None
        else:  # before the reason: App. D's texts draw in this order
            ref = _ref(question, answer, rng, avoid, lettered)
        support = _pick(arg, avoiding(_SUPPORT, avoid)).format(k=k1)
        if ref is not None:
            core.append(_fill("{o} {p}.", o=ref, p=support))
        fillers = list(avoiding([s.format(k=_kw(arg, kws), k2=k2) for s in _FILL_MC], avoid))
        # the walk names every option: it takes the place of the rejections and the supporting sentence
        if walk and style is not None:
            core = [core[0], _walkthrough(question, answer, style, arg, rng, kws, avoid)]
        if topical:
            # the topic sentence is one more generic sentence, written within the fitted generic share
            # (`text_model.on_topic`); the body opens with the reply's point (stop 71)
            fillers.insert(0, core.pop(0))
        # a reply naming no letters has no templated "So the answer is ...": its sentences naming its
        # answer's text are drawn at the fitted rate (`answer_rate`); its frame or mark gives the letter
        tail = [_pick(rng, avoiding(_CONCLUDE_MC, avoid)).format(a=answer)] if lettered else []
    else:
        answer_count = _answer_count(style, rng) if topical else 0
        nums = _numbers(question)
        if nums:
            shown = [_fmt(v) for v in nums[:4]]
            listed = ", ".join(shown[:-1]) + f" and {shown[-1]}" if len(shown) > 1 else shown[0]
            core.append(_pick(arg, _GIVEN_NUM).format(nums=listed))
        core += _arith_steps(arg, nums, int(arg.integers(2, 5)), answer)
        fillers = list(avoiding([s.format(k=_kw(arg, kws)) for s in _FILL_NUM], avoid))
        tail = [_pick(rng, _CONCLUDE_NUM).format(a=answer)]
    answer_line = f"Answer: {answer}"
    lo, hi = HONEST_WORDS
    if max_words is not None:
        hi = max_words + _words(answer_line)
        # what a word-limited writer leaves out first: the opener, then extra rejected options (the
        # topic, supporting and concluding sentences and every arithmetic step always stay)
        if _n_words(head, core, tail, answer_line) > hi:
            head = []
        while _n_words(head, core, tail, answer_line) > hi and question.kind == "mc" and len(core) > 2:
            core.pop(len(core) - 2)
    if style is None:
        target = _length_target(rng, lo, hi)
    else:
        before = len(head)
        topic = _topical(question, answer, arg, answer_count, near, style.restating) if topical else None
        head, core, fillers, tail, body = styled(
            style,
            rng,
            head,
            core,
            fillers,
            tail,
            answer,
            letters,
            max_words,
            kws,
            opened and bool(head),
            avoid=avoid,
            topic=topic,
            length_z=None if shared is None else shared.length_z,
            lettered=lettered,
        )
        # the stem restated with the answer opens the body, as real replies do (MiniLM reads a reply's
        # first 256 tokens only)
        lead = topic.lead if topic is not None else None
        if lead is not None and lead in fillers:
            fillers = [f for f in fillers if f != lead]
            core = [lead, *core]
        target = body + _words(answer_line)
        # a fitted length shorter than the templated content is honoured as App. D's cap is: the opener
        # goes first, then the extra rejected options (real qwen3-8b honest replies run ~50 words,
        # under what topic, two rejections, support and conclusion take)
        # (an opener the style dropped, `text_model.styled`, leaves none to drop: the discussion stays)
        has_opener = (opened and len(head) == before) or len(head) > before
        if head and has_opener and _n_words(head, core, tail, answer_line) > target:
            head = head[1:]
        while _n_words(head, core, tail, answer_line) > target and question.kind == "mc" and len(core) > 2:
            core.pop(len(core) - 2)
        # still too long (qwen-max's honest round-1 replies: a median of 48 words, a tenth under 30): the
        # concluding sentence, then the first core sentence (the topic sentence; under a fitted topic
        # density, where that is a filler, the restated stem or a rejection); the support and answer line stay
        if _n_words(head, core, tail, answer_line) > target and question.kind == "mc":
            tail = []
        if _n_words(head, core, tail, answer_line) > target and question.kind == "mc" and len(core) > 1:
            core = core[1:]
        lo = min(lo, target)
        hi = max(hi, 2 * target) if max_words is None else hi
    text = _assemble(
        rng,
        head,
        core,
        fillers,
        tail,
        answer_line,
        lo,
        hi,
        target,
        nearest=style is not None,
        end_with_core=topical,
        paragraph_words=style.paragraph_words if style is not None else 0.0,
    )
    if max_words is not None:
        kept = text[: -len(answer_line)].rstrip()
        if _words(kept) > max_words:  # pathological option texts: hard cap, paragraphs kept
            words = re.findall(r"\S+\s*", kept)[:max_words]
            kept = "".join(words).rstrip()
            text = f"{kept}\n\n{answer_line}"
    if style is not None and (style.frame or style.mark) and question.kind == "mc":
        # the model's own frame around the reply, or its mark for the answer (`text_model.framed`); a
        # number's answer keeps its line (both were fitted on multiple-choice replies)
        plain = text[: -len(answer_line)].rstrip()
        text = _parsed_as(question, answer, framed(style, rng, plain, answer, answer_line), plain)
    return text


def _parsed_as(question: Question, answer: str, text: str, body: str) -> str:
    """`text` (`body` framed or marked), or where the answer parser would not read `answer` from it, `body`
    with the answer on a line of its own ("(B)", as real gpt-3.5 replies end in 0.04 of theirs), else with
    the templates' line: the executor reads every reply's answer from its text, and the answer model, not a
    mark's place in a sentence, decides it ("... but it does not (B)." reads as a rejection)."""
    if parse_answer(question, text) == answer:
        return text
    own = f"{body}\n\n({answer})"
    return own if parse_answer(question, own) == answer else f"{body}\n\nAnswer: {answer}"


def decision_text(question: Question, answer: str, rng: np.random.Generator) -> str:
    """The LLM decision agent's reply: a short justification and `Answer: X` (about 30-80 words)."""
    kws = _keywords(question)
    a = _ref(question, answer, rng) if question.kind == "mc" else str(answer)
    sents = [_fill(_pick(rng, _DECISION), a=a)]
    for s in _sample(rng, list(_DECISION_MID), int(rng.integers(1, 4))):
        sents.append(_fill(s, a=str(answer), k=_kw(rng, kws)))
    sents.append(_fill(_pick(rng, _CONCLUDE_MC if question.kind == "mc" else _CONCLUDE_NUM), a=str(answer)))
    return " ".join(sents) + f"\n\nAnswer: {answer}"
