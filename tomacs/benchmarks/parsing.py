"""Turn free-form agent replies into answers, and score them.

Agents are told to end with a line ``Answer: <letter or number>``, but real LLMs (and especially
small ones) drift: markdown bold, "The answer is indeed (C).", ``\\boxed{42}``, ``#### 42``,
"$1,234.50", a copied placeholder ``Answer: (X) D) 60``, a closing line ``C) text``, a change of
mind, or a hedge. Every parser here is total: it returns None rather than raising, because one odd
reply must cost one unparsed answer in the metrics, never a crashed run.

The rule is *the last answer the agent committed to*, read in tiers, most explicit first, so that
an ``Answer:`` line wins over options the agent merely discussed in its analysis:

* letters: last ``Answer:`` line, ``\\boxed{X}`` or filled-in placeholder (``(X) C) text``) > last
  commitment in prose ("the answer is indeed (C)", "I'll go with C", "option C is correct", "I agree
  with agent 3: C"; another agent's answer reported, "Agent 1 says the answer is (A)", is none) > a
  list marking every option right or wrong, a closing line that restates one option (``C) text``)
  or is one option's text > the last emphasised mention (``**C**``, ``(C)``, "option C") > a reply
  that is just a letter > a reply that opens with one option (``C. text``). Given the question's
  options (``parse_answer`` passes them), an answer may name its option by text in any of these
  ("(X) The Wagner Act.", "the answer is mall"), matched word for word against the options;
* numbers: last ``\\boxed{}`` > last ``#### N`` > last ``Answer:`` line > last "answer is N" >
  the last number in the text (only when no ``Answer:`` line was written: one without a number
  means the agent gave none).

Within a tier, a rejected option ("not A", "(B) is wrong", "rather than D") is never a commitment,
and a hedge ("A or B", "(B)/(C)", "either 12 or 15", "Answer: B, D", two options' texts joined by
"or", two options marked right) makes the reply unparsed rather than picking one of the letters: an
agent that did not commit has no answer to count.
Corpus of the formats this is held to: ``tests/data/parser_corpus.jsonl``.
"""

from __future__ import annotations

import functools
import math
import re
from decimal import Decimal, InvalidOperation

from tomacs.types import LETTERS, Question

__all__ = [
    "canonical_number",
    "is_correct",
    "numbers_equal",
    "parse_answer",
    "parse_letter",
    "parse_number",
]

NUMERIC_TOLERANCE = 1e-6

_HEDGED = "\x00hedged"
"""What a span parser returns when the agent named several answers: the reply is unparsed, and no
earlier (weaker) tier may be consulted, since the agent's last word was not a commitment."""

# ---------------------------------------------------------------------------------------------
# shared pieces

# A line that starts with "Answer:" (optionally "Final answer", "My updated answer", markdown
# bold/heading, bullets), or a heading "Final Answer" alone on its line (the answer is on the next).
_ANSWER_LINE = re.compile(
    r"^[\s>*_#`\-]*(?:(?:my|our)\s+)?(?:(?:final|correct|updated|revised|new|corrected|overall)\s+)*"
    r"answer\s*[*_`]*\s*(?:[:：=]|is\b|-\s|(?=[*_`#]*[ \t]*\n))\s*[*_`]*(?P<rest>.*)$",
    re.IGNORECASE | re.MULTILINE,
)
# A commitment in prose: "the answer is X", "my final answer: X", "the correct option is X".
_STATEMENT = re.compile(
    r"\b(?:answer|option|choice)(?:\s+(?:choice|option|letter))?\s*[*_`]*\s*"
    r"(?:is|would\s+be|should\s+be|must\s+be|will\s+be|remains|stays|=|:)(?![\w'’])\s*[:：]?",
    re.IGNORECASE,
)
# "I'll go with C", "I choose (B)", "we keep D".
_CHOOSE = re.compile(
    r"\b(?:I|we)(?:\s*['’](?:ll|d|m)|\s+(?:will|would|shall|must|should|now|still|also|do|am|therefore))*"
    r"\s+(?:choose|pick|select|go(?:ing)?\s+with|stick(?:ing)?\s+with|stay(?:ing)?\s+with|keep(?:ing)?|"
    r"maintain(?:ing)?|settle\s+on|opt\s+for|side\s+with|vote\s+for|endorse|lean\s+towards?)\b",
    re.IGNORECASE,
)
_MARKDOWN = re.compile(r"[*_`]")
_BOXED = re.compile(r"\\boxed\s*\{")


def _clip(text: str, limit: int = 200) -> str:
    return text[:limit]


def _before(s: str, i: int, width: int = 80) -> str:
    """The text just before position ``i``: lookbehind checks stay linear on long replies."""
    return s[max(0, i - width) : i]


def _after(s: str, i: int, width: int = 160) -> str:
    return s[i : i + width]


def _first_line(span: str) -> str:
    """The span up to its first line break (leading blank lines skipped: 'Answer:\\n\\nB')."""
    return span.lstrip().split("\n", 1)[0]


def _boxed_contents(text: str) -> list[tuple[int, str]]:
    out = []
    for m in _BOXED.finditer(text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        out.append((m.start(), text[m.end() : i - 1 if depth == 0 else i]))
    return out


# ---------------------------------------------------------------------------------------------
# letters

# An option letter as written in prose: "(C)", "[c]", "option C", a bare "C".
_TOKEN = re.compile(
    r"(?P<pre>\b(?:option|choice|letter)\s*)?"
    r"(?:[(\[]\s*(?P<br>[A-Za-z])\s*[)\]]|(?<![\w'’\\-])(?P<bare>[A-Za-z])(?![\w'’])(?!-\w))",
    re.IGNORECASE,
)
# After "A"/"I", a lowercase word makes it the article/pronoun ("A good point", "I think") unless
# the word is one that follows an answer ("Answer: A because ...").
_AFTER_LETTER_WORD = re.compile(
    r"^\s+(?:because|since|as|given|due|which|with|and|or|but|so|is|was|here|there|in|for|from|per)\b"
)
_NEGATED_BEFORE = re.compile(
    r"(?:\bnot|\bnever|n['’]t|\bno|\brather\s+than|\binstead\s+of|\bexcept|\bexclud\w*|\beliminat\w*|"
    r"\brul\w*\s+out|\breject\w*|\bdiscard\w*|\bagainst|\bover|\bunlike|\bnor)"
    r"\s+(?:(?:the\s+)?(?:option|choice|answer|letter)\s+)?[(\[*\s]*$",
    re.IGNORECASE,
)
_REJECTED_AFTER = re.compile(
    r"^[)\].:*\s]*(?:(?:is|are|was|seems|looks|appears|would\s+be)\s+(?:\w+ly\s+|also\s+|clearly\s+)?"
    r"(?:wrong|incorrect|false|implausible|unlikely|not\b|a\s+distractor|ruled\s+out|eliminated|"
    r"irrelevant|unrelated|invalid|inaccurate|tempting|a\s+trap|out)|can\s+be\s+(?:ruled\s+out|eliminated|excluded|"
    r"dismissed)|(?:fails|ignores|does\s+not|doesn['’]t|cannot|can['’]t|misses|overlooks|confuses|"
    r"contradicts)\b)",
    re.IGNORECASE,
)
_HYPOTHETICAL_BEFORE = re.compile(r"\b(?:if|whether|assum\w*|suppos\w*|unless)\s+(?:option\s+)?[(\[]?$", re.I)
# "B or C", "B/C", "B, D", "B and D", "B (or possibly C)": a second, different letter joined to the first.
_HEDGE_AFTER = re.compile(
    r"^[)\].:*\s(]*(?P<conj>,|/|&|\bor\b|\band\b|\band/or\b)\s*[(\[]?\s*"
    r"(?:(?:maybe|possibly|perhaps|potentially|option|choice)\s+)*[(\[]?\s*(?P<ch>[A-J])(?![\w'’])"
    r"(?P<tail>[)\]]?\s*(?:[.,;:!?)\]*]|$|\s+(?:or|and)\b|\s+(?:are|could|might|both|seem|look)\b))?",
)
_LIST_REJECTED = re.compile(
    r"^[^.;\n]{0,40}?\b(?:are|is|were)\s+(?:\w+ly\s+|both\s+|all\s+)?(?:wrong|incorrect|false|not\b|"
    r"ruled\s+out|implausible|distractors?|eliminated)",
    re.IGNORECASE,
)
_HEDGE_BEFORE = re.compile(
    r"(?:(?<![\w'’])(?P<ch>[A-J])[)\]]?|\((?P<ch2>[A-J])\))\s*(?:,|/|&|\bor\b|\band\b|\band/or\b)\s*"
    r"(?:(?:maybe|possibly|perhaps|option|choice)\s+)*[(\[*\s]*$"
)
# Words that may stand between "the answer is" / "I choose" and the letter without changing it.
_FILLER = re.compile(
    r"^(?:[\s,:;.\-—–*_`\"'“”’]|"
    r"\b(?:indeed|clearly|definitely|certainly|actually|still|now|therefore|thus|hence|so|then|obviously|"
    r"likely|probably|most|undoubtedly|unambiguously|evidently|surely|truly|in|fact|really|simply|just|"
    r"option|choice|letter|the|correct|right|best|final|my|our|answer|previous|original|initial|updated|"
    r"revised|is|be|would|should|must|will|remains|with|of|again|also|same|one|not|but|rather|than|"
    r"instead|it|it's|it’s|i|i'll|we|go|going|choose|pick|keep|stay|stick|confidently|firmly)\b|"
    r"[(\[<][^)\]>\n]{0,14}[)\]>])*$",
    re.IGNORECASE,
)


def _valid(letter: str, n_options: int) -> str | None:
    up = letter.upper()
    idx = LETTERS.find(up)
    return up if 0 <= idx < n_options else None


class _Tok:
    __slots__ = ("start", "end", "letter", "marked")

    def __init__(self, start: int, end: int, letter: str, marked: bool) -> None:
        self.start, self.end, self.letter, self.marked = start, end, letter, marked


def _tokens(s: str, n_options: int, lower_at: int | None = None) -> list[_Tok]:
    """Letter tokens in ``s``, valid for ``n_options``; articles/pronouns and placeholders left out.

    A lowercase letter counts only bracketed, after "option", before ")" or at ``lower_at`` (the
    start of an answer span: "answer: c."). ``marked`` = bracketed or after "option".
    """
    out = []
    for m in _TOKEN.finditer(s):
        ch = m.group("br") or m.group("bare")
        v = _valid(ch, n_options)
        if v is None:  # a copied placeholder "(X)" or a letter beyond the options
            continue
        marked = m.group("br") is not None or m.group("pre") is not None
        after = _after(s, m.end())
        if not marked:
            if ch.islower():
                if not (
                    after.startswith(")") or (m.start() == lower_at and re.match(r"^(?:[.:]|\s*$)", after))
                ):
                    continue
            elif ch in "AI" and re.match(r"^\s+[a-z]", after) and not _AFTER_LETTER_WORD.match(after):
                continue  # "A good option", "I think"
            elif re.match(r"^\.[A-Za-z]", after):
                continue  # "U.S."
        out.append(_Tok(m.start(), m.end(), v, marked))
    return out


def _negated(s: str, tok: _Tok) -> bool:
    return bool(_NEGATED_BEFORE.search(_before(s, tok.start))) or bool(
        _REJECTED_AFTER.match(_after(s, tok.end))
    )


def _hedged(s: str, tok: _Tok, n_options: int) -> bool:
    """Whether ``tok`` is joined to a different option letter: "A or B", "(B)/(C)", "B, D"."""
    after = _after(s, tok.end)
    m = _HEDGE_AFTER.match(after)
    if m and _LIST_REJECTED.match(after[m.end() :]):
        m = None  # "the answer is C, B and D are wrong" lists the rejected ones
    if m and _valid(m.group("ch"), n_options) and m.group("ch") != tok.letter:
        if m.group("conj") in ("/", "&") or m.group("conj").strip().lower().startswith("or"):
            return True
        if m.group("tail") is not None:  # ", D" and "and D" only as a list ("B, D." not "B, D is wrong")
            return True
    m = _HEDGE_BEFORE.search(_before(s, tok.start))
    if m:
        ch = m.group("ch") or m.group("ch2")
        if _valid(ch, n_options) and ch != tok.letter:
            return True
    return False


def _span_letter(span: str, n_options: int, filler_only: bool) -> str | None:
    """The letter an answer span commits to, ``_HEDGED``, or None.

    ``filler_only``: the letter must come right after the span start, past filler words only ("the
    answer is indeed (C)", "is not A, it is C"); otherwise it may be anywhere in the span
    ("Answer: I would pick (C)"). Placeholders such as "(X)" and "<letter>" are skipped.
    """
    s = _MARKDOWN.sub("", _first_line(span))
    lead = len(s) - len(s.lstrip())
    toks = _tokens(s, n_options, lower_at=lead)
    for tok in toks:
        if _negated(s, tok):
            continue
        if filler_only:
            prefix = s[: tok.start]
            for other in toks:  # rejected letters before this one are part of the filler ("not A, but C")
                if other.end <= tok.start:
                    prefix = prefix[: other.start] + " " * (other.end - other.start) + prefix[other.end :]
            if not _FILLER.match(prefix):
                return None
        return _HEDGED if _hedged(s, tok, n_options) else tok.letter
    return None


_OPTION_LINE = re.compile(
    r"^[\s>*_#\-]*(?:\(([A-Ja-j])\)|\[([A-Ja-j])\]|([A-J])[.):]|([A-J])[*_`]*\s*$)[*_`]*(?=\s+\S|\s*$)"
)
# "(A) is tempting", "C) fits the data": a sentence about an option, not the option restated.
_ABOUT_OPTION = re.compile(
    r"^\s*(?:is|are|was|were|seems?|looks?|appears?|would|could|can|cannot|can['’]t|does|doesn['’]t|do|"
    r"has|had|fits?|fails?|ignores?|and|or|vs\.?|only|also)\b",
    re.IGNORECASE,
)
# "option C is correct", "(B) is the correct answer", "so D is the best choice".
_CORRECT_AFTER = re.compile(
    r"^[)\].:*\s]*(?:is|remains|seems|appears|must\s+be|should\s+be)\s+"
    r"(?:(?:\w+ly|indeed|still|the|a|an|most|only|clearly|therefore)\s+)*"
    r"(?:correct|right|true|best|accurate|valid|answer|one)\b(?!\s+(?:only\s+)?(?:if|when)\b)",
    re.IGNORECASE,
)
_BARE_SUBJECT_BEFORE = re.compile(
    r"(?:^|[\n.:;!?,]\s*|\b(?:so|thus|therefore|hence|then|and|that|because|why|since|answer)\s+)$", re.I
)


# ---------------------------------------------------------------------------------------------
# option texts: "(X) The Wagner Act.", "the answer is mall", a closing line that is an option's text

# What may follow an option's text for the reply to be naming that option, not a longer phrase that
# starts with the same words ("bank" is named in "bank, because ..." but not in "bank robbery").
_TEXT_END = re.compile(
    r"^(?:\s*$|\s*[.,;:!?)\]\"'”’]|\s+[-–—]\s|\s+(?:because|since|as|which|who|that|is|was|are|were|and|or|"
    r"but|for|given|due|with|here|then)\b)",
    re.IGNORECASE,
)
# Skipped before an option's text: "the answer is: clearly 'mall'", "(X) The Wagner Act".
_TEXT_LEAD = re.compile(
    r"(?:[\s:=\-–—\"'“”‘’>]|[(\[]\s*[Xx]\s*[)\]]|\b(?:indeed|clearly|definitely|certainly|probably|likely|"
    r"still|now|therefore|thus|hence|so|actually|obviously|undoubtedly)\b)*",
    re.IGNORECASE,
)
_TEXT_JOIN = re.compile(
    r"^[\s,;]*(?:/|&|\bor\b|\band/or\b|\band\b)\s*(?:(?:maybe|possibly|perhaps|potentially)\s+)*",
    re.IGNORECASE,
)
# A span that opens with an option label ("C) The Wagner Act", "(C)", "C"): the label, not the text, counts.
_LEADING_LABEL = re.compile(r"^[\s*_`\"']*(?:[(\[]\s*[A-Ja-j]\s*[)\]]|[A-J](?![\w'’]))")


class _OptionTexts:
    """The question's option texts as patterns: a reply may name its answer by text, not letter.

    Matching is on words, case-insensitive, punctuation-blind, with a leading article optional on
    both sides ("the Wagner Act" names "Wagner Act"). Where two options match at one place the
    longer wins ("Paris, Texas" over "Paris"); the same text under two letters names neither.
    """

    def __init__(self, options: tuple[str, ...], n_options: int) -> None:
        self.pats: list[tuple[str, re.Pattern[str]]] = []
        for i, opt in enumerate(options[:n_options]):
            words = re.findall(r"\w+", str(opt).lower())
            if len(words) > 1 and words[0] in ("the", "a", "an"):
                words = words[1:]
            if words:
                body = r"[\W_]+".join(re.escape(w) for w in words)
                self.pats.append((LETTERS[i], re.compile(r"(?:(?:the|an?)[\W_]+)?" + body + r"(?!\w)", re.I)))

    def at(self, s: str, pos: int) -> tuple[str, int] | None:
        """The option whose text starts at ``pos`` (and ends there as a phrase), with its end."""
        best: dict[int, set[str]] = {}
        for letter, pat in self.pats:
            m = pat.match(s, pos)
            if m and _TEXT_END.match(s[m.end() : m.end() + 40]):
                best.setdefault(m.end(), set()).add(letter)
        if not best:
            return None
        end = max(best)
        return (next(iter(best[end])), end) if len(best[end]) == 1 else None

    def named_at_start(self, span: str) -> str | None:
        """The option an answer span names by its text, ``_HEDGED`` ("X or Y"), or None."""
        s = _MARKDOWN.sub("", _first_line(span))
        lead = _TEXT_LEAD.match(s)
        hit = self.at(s, lead.end() if lead else 0)
        if hit is None:
            return None
        letter, end = hit
        if _REJECTED_AFTER.match(s[end : end + 160]):
            return None  # "(X) The Sherman Act is wrong"
        join = _TEXT_JOIN.match(s[end : end + 40])
        if join:
            other = self.at(s, end + join.end())
            if other is not None and other[0] != letter:
                return _HEDGED
        return letter

    def whole(self, line: str) -> str | None:
        """The option a line consists of ("The Wagner Act.", "**mall**"), or None."""
        s = _MARKDOWN.sub("", line).strip().strip("\"'“”‘’").rstrip(".!").strip()
        hit = self.at(s, 0)
        return hit[0] if hit is not None and hit[1] == len(s) else None

    def mentions(self, s: str) -> list[tuple[int, int, str]]:
        """Every place ``s`` names an option by its text, as (start, end, letter); a text inside a
        longer option's text ("Paris" in "Paris, Texas") is the longer one's."""
        spans: list[tuple[int, int, str]] = []
        for letter, pat in self.pats:
            for m in pat.finditer(s):
                if m.start() == 0 or not s[m.start() - 1].isalnum():
                    spans.append((m.start(), m.end(), letter))
        return [
            (a, b, c)
            for a, b, c in spans
            if not any(a2 <= a and b <= b2 and b2 - a2 > b - a for a2, b2, _ in spans)
        ]

    def named_in(self, sentence: str) -> set[str]:
        """The options a sentence names by text anywhere; rejected ones ("not the Sherman Act") left out."""
        return {
            c for a, _, c in self.mentions(sentence) if not _TEXT_NEGATED_BEFORE.search(_before(sentence, a))
        }


# "not always completely unacceptable", "rather than the Sherman Act": a text named to be set aside.
_TEXT_NEGATED_BEFORE = re.compile(
    r"(?:\bnot|\bnever|n['’]t|\bno|\brather\s+than|\binstead\s+of|\bthan|\bover|\bunlike|\bexcept)"
    r"(?:\s+\w+){0,2}\s+[\"'“‘]?$",
    re.IGNORECASE,
)
_LIST_LINE = re.compile(
    r"^[\s>*_#\-•]*(?:(?:option|choice)\s+)?(?:\(([A-J])\)|\[([A-J])\]|([A-J])[.):])[*_`]*\s+(?P<rest>\S.*)$",
    re.IGNORECASE,
)
_MARK_POS = re.compile(r"[✓✔✅☑]|(?<![\w-])correct\b(?!\s+(?:only\s+)?(?:if|when)\b)", re.IGNORECASE)
_MARK_NEG = re.compile(
    r"[✗✘❌✖×]|\b(?:incorrect|wrong|false|no|not|eliminated|ruled\s+out|implausible|unlikely)\b",
    re.IGNORECASE,
)


def _marked_list_letter(text: str, n_options: int, texts: _OptionTexts | None) -> str | None:
    """Tier 3: a reply that lists the options, each with a mark ("(C) The Wagner Act - correct",
    "A) ... ❌"): the one marked right, ``_HEDGED`` if several are, None unless every listed option
    (two or more) carries a mark. A line's mark is the first mark word or sign past the option's
    text, so "B) ... ✗ - it does not ..." is a cross, not "not"."""
    marks: dict[str, bool] = {}
    for line in text.splitlines():
        m = _LIST_LINE.match(line)
        if not m:
            continue
        raw = next(g for g in m.groups()[:3] if g)
        letter = _valid(raw, n_options)
        if letter is None or not raw.isupper():
            continue
        rest = _MARKDOWN.sub("", m.group("rest"))
        if texts is not None:
            hit = texts.at(rest, 0)
            if hit is not None:
                rest = rest[hit[1] :]  # an option's own text ("True", "Not wrong") is no mark
        pos, neg = _MARK_POS.search(rest), _MARK_NEG.search(rest)
        if pos is None and neg is None:
            return None  # a listed option without a mark: a re-listed question, not a verdict
        mark = pos is not None and (neg is None or pos.start() < neg.start())
        if marks.get(letter, mark) != mark:
            return None  # the same option marked both ways
        marks[letter] = mark
    if len(marks) < 2:
        return None
    right = [k for k, v in marks.items() if v]
    if len(right) > 1:
        return _HEDGED
    return right[0] if right else None


# "Agent 1 says the answer is (A)", "the other agent's answer is B": another agent's answer, reported.
_ATTRIBUTED_BEFORE = re.compile(
    r"\b(?:agents?|solutions?|responders?|debaters?|others?|they|he|she)(?:\s*#?\d+|\s+[A-Z])?(?:['’]s?)?\s+"
    r"(?:(?:\w+\s+){0,2}?(?:says?|said|argues?|argued|claims?|claimed|believes?|believed|thinks?|thought|"
    r"suggests?|suggested|concludes?|concluded|states?|stated|proposes?|proposed|maintains?|insists?)"
    r"\s+(?:that\s+)?)?(?:(?:the|their|its|his|her)\s+)?(?:(?:final|correct|chosen|proposed|best)\s+)?$",
    re.IGNORECASE,
)
_LISTING_BEFORE = re.compile(r"\b(?:each|every|any|other|another|remaining|next|first)\s+$", re.IGNORECASE)
# "I agree with agent 3: C", "I concur with the other agents that (B) is right".
_AGREE = re.compile(
    r"\b(?:I|we)(?:\s+(?:now|still|also|fully|therefore|thus|would|must|do|completely|strongly))*\s+"
    r"(?:agree|concur|align)\s+with\b",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n")
_AGENT_NAME_BEFORE = re.compile(
    r"\b(?:agents?|responders?|solutions?|debaters?|models?|players?|participants?)\s*$", re.IGNORECASE
)


def _agreement_letter(s: str, start: int, n_options: int, texts: _OptionTexts | None) -> str | None:
    """The one option the sentence from ``start`` ("I agree with agent 3 that (C) ...") names, or None
    when it names none or several: siding with another agent is a commitment only to one answer."""
    end = _SENTENCE_END.search(s, start)
    sent = s[start : end.start() if end else min(len(s), start + 300)]
    found = set()
    for tok in _tokens(sent, n_options):
        if _AGENT_NAME_BEFORE.search(_before(sent, tok.start)) or _negated(sent, tok):
            continue  # "Agent B", "not (A)"
        found.add(tok.letter)
    if not found and texts is not None:
        found = texts.named_in(sent)
    return found.pop() if len(found) == 1 else None


def _statement_letters(text: str, n_options: int, texts: _OptionTexts | None = None) -> list[tuple[int, str]]:
    """Tier 2: commitments in prose, with their positions; the caller takes the last."""
    s = _MARKDOWN.sub("", text)
    hits: list[tuple[int, str]] = []
    for rx in (_STATEMENT, _CHOOSE):
        for m in rx.finditer(s):
            if rx is _STATEMENT and _ATTRIBUTED_BEFORE.search(_before(s, m.start())):
                continue  # another agent's answer, reported
            if _LISTING_BEFORE.search(_before(s, m.start())):
                continue  # "Let me check each option:" heads a list, it commits to nothing
            span = s[m.end() : m.end() + 200]
            v = _span_letter(span, n_options, filler_only=True)
            if v is None and texts is not None:
                v = texts.named_at_start(span)
            if v is not None:
                hits.append((m.start(), v))
    for m in _AGREE.finditer(s):
        v = _agreement_letter(s, m.end(), n_options, texts)
        if v is not None:
            hits.append((m.start(), v))
    for tok in _tokens(s, n_options):
        if not _CORRECT_AFTER.match(_after(s, tok.end)):
            continue
        before = _before(s, tok.start)
        if not tok.marked and not _BARE_SUBJECT_BEFORE.search(before):
            continue  # "Vitamin C is the correct answer" names no option
        if _NEGATED_BEFORE.search(before) or _HYPOTHETICAL_BEFORE.search(before):
            continue
        hits.append((tok.start, _HEDGED if _hedged(s, tok, n_options) else tok.letter))
    if texts is not None:  # "A bookstore is the most accurate answer": the same, by the option's text
        for start, end, letter in texts.mentions(s):
            before = _before(s, start)
            if not _CORRECT_AFTER.match(_after(s, end)) or not _BARE_SUBJECT_BEFORE.search(before):
                continue
            if _NEGATED_BEFORE.search(before) or _HYPOTHETICAL_BEFORE.search(before):
                continue
            hits.append((start, letter))
    return hits


# A mention inside a concessive clause that has not yet reached its comma: "While options like (B) or
# (E) may occur, they are secondary", "Although (A) is a component of work, it is not the aim".
_CONCESSION_BEFORE = re.compile(
    r"(?:^|[.!?;:\n])[\s*_\-]*(?:while|although|though|even\s+though|whereas|despite)\b[^,.!?;\n]*$", re.I
)


def _mention_letter(text: str, n_options: int) -> str | None:
    """Tier 4: the last emphasised mention ("**C**", "(C)", "option C"), rejected ones skipped."""
    hits: list[tuple[int, int, str]] = []
    for pat, flags in (
        (r"\b(?:option|choice)\s*\(?([A-Ja-j])\)?(?![\w'’])", re.IGNORECASE),
        (r"\*\*\s*\(?([A-J])[)\].:]?\s*\*\*", 0),
        (r"\*\*\s*\(?([A-J])[).:]\s+[^*\n]{1,120}\*\*", 0),
        (r"\(([A-J])\)", 0),
    ):
        for m in re.finditer(pat, text, flags):
            v = _valid(m.group(1), n_options)
            if not v:
                continue
            before, after = _before(text, m.start()), _after(text, m.end())
            if _NEGATED_BEFORE.search(before) or _REJECTED_AFTER.match(after):
                continue
            if _CONCESSION_BEFORE.search(_before(text, m.start(), 200)):
                continue  # "While (B) or (E) may occur, ...": conceded, not chosen
            hits.append((m.start(), m.end(), v))
    if not hits:
        return None
    start, end, v = max(hits)
    tok = _Tok(start, end, v, True)
    return _HEDGED if _hedged(text, tok, n_options) else v


def _option_line_letter(text: str, n_options: int) -> str | None:
    """Tier 3: the one option a reply restates on a line of its own ("C) text" closing the
    analysis, "C. text" opening a SmolLM reply). Lines naming several options are a re-listed
    question, not an answer."""
    found: set[str] = set()
    for line in text.splitlines():
        m = _OPTION_LINE.match(line)
        if m and not _ABOUT_OPTION.match(line[m.end() :]):
            ch = next(g for g in m.groups() if g)
            found.add(ch.upper())
    if len(found) != 1:
        return None
    return _valid(found.pop(), n_options)


_IS_NOT = re.compile(r"\b(is|was|are)n['’]t\b", re.IGNORECASE)


# The placeholder of the prompt "put your answer in the form (X)", filled in after it: "(X) C) text".
_PLACEHOLDER = re.compile(r"[(\[]\s*X\s*[)\]][*_`]*")


@functools.lru_cache(maxsize=4096)
def _option_texts(options: tuple[str, ...], n_options: int) -> _OptionTexts:
    """One question's option patterns, compiled once: every agent's reply to a question is parsed against
    the same options, and building them per reply took about an eighth of a simulator run (under cProfile)."""
    return _OptionTexts(options, n_options)


def _parse_letter(text: str, n_options: int, options: tuple[str, ...] | None = None) -> str | None:
    text = _IS_NOT.sub(r"\1 not", text)
    texts = _option_texts(tuple(options), n_options) if options else None
    # 1. explicit "Answer:" lines, \boxed{X} and a filled-in "(X)", last first
    explicit: list[tuple[int, str, bool]] = [
        (m.start(), _clip(m.group("rest")), False) for m in _ANSWER_LINE.finditer(text)
    ] + [(i, span, False) for i, span in _boxed_contents(text)]
    if LETTERS.find("X") < 0 or LETTERS.find("X") >= n_options:
        explicit += [(m.start(), _clip(text[m.end() :]), True) for m in _PLACEHOLDER.finditer(text)]
    for _, span, placeholder in sorted(explicit, reverse=True):
        # after "(X)" the answer must come first ("(X) C) text"), not as any letter in a sentence
        v = _span_letter(span, n_options, filler_only=placeholder)
        if texts is not None:
            t = texts.named_at_start(span)
            if t is not None and (
                v is None or not _LEADING_LABEL.match(_MARKDOWN.sub("", _first_line(span)))
            ):
                v = t  # "Answer: Vitamin C" names the option "Vitamin C", whatever its letter
        if v is not None:
            return v
    # 2. commitments in prose, last wins
    hits = _statement_letters(text, n_options, texts)
    if hits:
        return max(hits)[1]
    # 3. a list of the options, each marked; a line that restates one option; a closing line that
    # is one option's text
    v = _marked_list_letter(text, n_options, texts)
    if v:
        return v
    v = _option_line_letter(text, n_options)
    if v:
        return v
    if texts is not None:
        lines = [ln for ln in text.splitlines() if ln.strip()]
        v = texts.whole(lines[-1]) if lines else None
        if v:
            return v
    # 4. emphasised mentions, last wins
    v = _mention_letter(text, n_options)
    if v:
        return v
    # 5. the whole reply is a letter
    m = re.fullmatch(r"\s*[*_`]*[(\[]?\s*([A-Ja-j])\s*[)\]]?[.:]?[*_`]*\s*", text)
    if m:
        return _valid(m.group(1), n_options)
    return None


def parse_letter(text: str | None, n_options: int, options: tuple[str, ...] | None = None) -> str | None:
    """The option letter an agent committed to last, or None (no answer, or a hedge).

    Handles "Answer: (B)", "**B**", "The answer is indeed (B).", "Option B is correct", a closing
    line "B) text", "answer is: b)", a filled-in placeholder "(X) B) text"; a final ``Answer:`` line
    wins over earlier mentions, rejected options ("not A") never count, and "A or B" is unparsed.
    Letters beyond ``n_options`` are ignored. With ``options`` (the question's option texts) a reply
    may also name its answer by text ("(X) Mitochondria.", "the answer is mitochondria", a list of
    the options each marked right or wrong), and one naming two options' texts ("Nucleus or
    Ribosome") is a hedge.
    """
    try:
        if not text or n_options <= 0:
            return None
        v = _parse_letter(text, min(n_options, len(LETTERS)), tuple(options) if options else None)
        return None if v == _HEDGED else v
    except Exception:  # noqa: BLE001 - a parser must never take the run down
        return None


# ---------------------------------------------------------------------------------------------
# numbers

_NUMBER = re.compile(
    r"(?<![\w.])(?P<sign>[-−–+]?)\s?\$?\s?"
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?![\d])"
)
_HASHES = re.compile(r"####\s*(?P<rest>[^\n]*)")
_CALCULATOR = re.compile(r"<<[^<>\n]*>>")  # GSM8K's "<<6*7=42>>" annotations, copied by some models


def canonical_number(s: str | None) -> str | None:
    """Canonical string of a number: '1,234.50' -> '1234.5', '-3.0' -> '-3', '$5' -> '5', '.5' -> '0.5'.

    Returns None when ``s`` holds no number. Signs and decimals are kept (3.5 stays 3.5).
    """
    if s is None:
        return None
    try:
        m = _NUMBER.search(str(s))
        if not m:
            return None
        sign = "-" if m.group("sign") in ("-", "−", "–") else ""
        d = Decimal(sign + m.group("num").replace(",", ""))
        if not d.is_finite():
            return None
        out = format(d.normalize(), "f")
        if "." in out:
            out = out.rstrip("0").rstrip(".")
        if out in ("-0", ""):
            out = "0"
        return out
    except (InvalidOperation, ValueError, TypeError):
        return None


def _number_matches(span: str) -> list[re.Match[str]]:
    return [m for m in _NUMBER.finditer(span) if canonical_number(m.group(0)) is not None]


_FRAC = re.compile(r"\\[dt]?frac\s*\{\s*(-?\d+)\s*\}\s*\{\s*(\d+)\s*\}")
_SLASH_FRACTION = re.compile(r"^\s*([-−]?\d+)\s*/\s*(\d+)(?!\s*[\d=*/+×÷.,])")
_LEADING_EXPRESSION = re.compile(r"^\s*[-−–+]?\s*\$?\s*\d[\d\s.,$+\-−–*/×÷%=]*")
# Words after which a worded answer states its result: "the total is 18", "so 18", "she makes $18".
_RESULT_WORD = re.compile(
    r"\b(?:is|are|was|be|equals?|so|thus|therefore|hence|totals?|total\s+of|makes?|gets?|gives?|"
    r"comes\s+to|earns?|costs?|pays?|needs?|has|have|had|left|remains?)\b",
    re.IGNORECASE,
)
_NUMBER_HEDGE_AFTER = re.compile(r"^(?:\s*[^\d\s]{1,12})?\s+(?:or|to)\s+\$?\s*[-−]?\d|^[-–]\d")
_NUMBER_HEDGE_BEFORE = re.compile(r"\d\s*(?:[^\d\s]{1,12}\s+)?(?:or|to)\s+\$?\s*$")
# "rose from 10 to 15" is a change, not a range: 15 is the result
_FROM = re.compile(r"\bfrom\s+\$?\s*$", re.IGNORECASE)
_FROM_TO = re.compile(r"\bfrom\s+\$?\s*[-−]?[\d.,]+\s*(?:[^\d\s]{1,12}\s+)?to\s+\$?\s*$", re.IGNORECASE)
_NUMBER_NEGATED_BEFORE = re.compile(r"\b(?:not|n['’]t|rather\s+than|instead\s+of)\s+\$?\s*$", re.IGNORECASE)


def _frac_to_decimal(m: re.Match[str]) -> str:
    num, den = int(m.group(1).replace("−", "-")), int(m.group(2))
    if den == 0:
        return m.group(0)
    return format((Decimal(num) / Decimal(den)).normalize(), "f")


def _choose_number(s: str, m: re.Match[str]) -> str | None:
    before = _before(s, m.start())
    if _NUMBER_HEDGE_AFTER.match(_after(s, m.end())) and not _FROM.search(before + " "):
        return _HEDGED
    if _NUMBER_HEDGE_BEFORE.search(before) and not _FROM_TO.search(before):
        return _HEDGED
    return canonical_number(m.group(0))


def _number_in_answer_span(span: str) -> str | None:
    """The number an answer span states, ``_HEDGED`` or None.

    '18 dollars' -> 18; '5 + 3 = 8' -> 8 (a worked equation ends in its result); '3/4' -> 0.75;
    'She bought 3 boxes of 6, so 18' -> 18; 'not 40 but 42' -> 42; '12 or 13' -> hedged.
    """
    s = _MARKDOWN.sub("", span).replace("{,}", ",")
    s = _FRAC.sub(_frac_to_decimal, s)
    s = _first_line(s)
    nums = [m for m in _number_matches(s) if not _NUMBER_NEGATED_BEFORE.search(_before(s, m.start()))]
    if not nums:
        return None
    frac = _SLASH_FRACTION.match(s)
    if frac and int(frac.group(2)) != 0:
        return _frac_to_decimal(frac)
    lead = _LEADING_EXPRESSION.match(s)
    if lead:  # the span opens with its number, or with a worked equation
        expr = lead.group(0)
        if "=" in expr:
            after = [m for m in nums if m.start() > expr.rindex("=") and m.start() < len(expr)]
            if after:
                return _choose_number(s, after[0])
        return _choose_number(s, nums[0])
    if "=" in s:
        after = [m for m in nums if m.start() > s.rindex("=")]
        if after:
            return _choose_number(s, after[0])
    for w in reversed(list(_RESULT_WORD.finditer(s))):
        after = [m for m in nums if m.start() >= w.end()]
        if after:
            return _choose_number(s, after[0])
    return _choose_number(s, nums[0])


def _parse_number(text: str) -> str | None:
    text = _IS_NOT.sub(r"\1 not", _CALCULATOR.sub("", text))
    for _, box in reversed(_boxed_contents(text)):
        v = _number_in_answer_span(box)
        if v is not None:
            return v
    for m in reversed(list(_HASHES.finditer(text))):
        v = _number_in_answer_span(m.group("rest"))
        if v is not None:
            return v
    lines = list(_ANSWER_LINE.finditer(text))
    for m in reversed(lines):
        v = _number_in_answer_span(_clip(m.group("rest")))
        if v is not None:
            return v
    for m in reversed(list(_STATEMENT.finditer(text))):
        v = _number_in_answer_span(text[m.end() : m.end() + 200])
        if v is not None:
            return v
    if lines:  # the agent wrote its answer line and put no number on it
        return None
    nums = _number_matches(text)
    return _choose_number(text, nums[-1]) if nums else None


def parse_number(text: str | None) -> str | None:
    """The number an agent answered last, in canonical form, or None (none, or a hedge).

    Handles signs, decimals, thousands commas, '$', '%', trailing units, ``\\boxed{}``, ``#### N``;
    the last ``Answer:`` line is preferred over numbers in the reasoning.
    """
    try:
        if not text:
            return None
        v = _parse_number(text)
        return None if v == _HEDGED else v
    except Exception:  # noqa: BLE001 - a parser must never take the run down
        return None


def numbers_equal(a: str | None, b: str | None, tol: float = NUMERIC_TOLERANCE) -> bool:
    """Numeric equality with an absolute tolerance; unparseable on either side is unequal."""
    ca, cb = canonical_number(a), canonical_number(b)
    if ca is None or cb is None:
        return False
    try:
        fa, fb = float(ca), float(cb)
    except ValueError:
        return False
    if not (math.isfinite(fa) and math.isfinite(fb)):
        return False
    return abs(fa - fb) <= tol


# ---------------------------------------------------------------------------------------------
# question-level API


def parse_answer(question: Question, text: str | None) -> str | None:
    """The answer in ``text`` normalised like ``question.answer`` (letter or canonical number).

    Multiple choice is read with the question's option texts: an answer named by its text counts.
    """
    if question.kind == "numeric":
        return parse_number(text)
    options = question.options or ()
    return parse_letter(text, len(options), options)


def is_correct(question: Question, answer: str | None) -> bool:
    """Whether a parsed answer equals the gold: letters exactly, numbers within 1e-6 (sign kept)."""
    if answer is None:
        return False
    if question.kind == "numeric":
        return numbers_equal(answer, question.answer)
    return str(answer).strip().upper() == question.answer.strip().upper()
