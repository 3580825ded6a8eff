"""Turn free-form agent replies into answers, and score them.

Agents are told to end with a line ``Answer: <letter or number>``, but real LLMs (and especially
small ones) drift: markdown bold, "The answer is (B).", ``\\boxed{42}``, ``#### 42``, "$1,234.50".
Every parser here is total: it returns None rather than raising, because one odd reply must
cost one unparsed answer in the metrics, never a crashed run.

Precedence, most explicit first, so that a final ``Answer:`` line wins over options the agent
merely discussed earlier in its analysis:

* letters: last line starting with ``Answer:`` > last inline "answer is X" > last "Option X" /
  ``**X**`` / ``(X)`` mention > a reply that is just a letter;
* numbers: last ``\\boxed{}`` > last ``#### N`` > last ``Answer:`` line > last inline
  "answer is N" > last number in the text.
"""

from __future__ import annotations

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

# ---------------------------------------------------------------------------------------------
# shared pieces

# A line that starts with "Answer:" (optionally "Final answer", markdown bold/heading, bullets).
_ANSWER_LINE = re.compile(
    r"^[\s>*_#`\-]*(?:final\s+|correct\s+)?answer\s*[*_`]*\s*(?:[:：=]|is\b|-\s)\s*[*_`]*(?P<rest>.*)$",
    re.IGNORECASE | re.MULTILINE,
)
# "the answer is X", "answer is: X", "answer would be X" anywhere in a line.
_ANSWER_INLINE = re.compile(
    r"answer\s*[*_`]*\s*(?:is|would\s+be|should\s+be|=|:)\s*[:：]?\s*[*_`]*(?P<rest>[^\n]*)",
    re.IGNORECASE,
)
_MARKDOWN = re.compile(r"[*_`]")


def _clip(text: str, limit: int = 200) -> str:
    return text[:limit]


# ---------------------------------------------------------------------------------------------
# letters

_LEAD_WORDS = re.compile(
    r"^(?:the\s+)?(?:correct\s+)?(?:option|choice|letter|answer)?\s*(?:is\s*)?[:：]?\s*", re.IGNORECASE
)


def _valid(letter: str, n_options: int) -> str | None:
    up = letter.upper()
    idx = LETTERS.find(up)
    return up if 0 <= idx < n_options else None


def _letter_at_start(span: str, n_options: int) -> str | None:
    """A letter right at the start of an answer span: 'B', '(B)', 'b)', 'B.', '[B]', 'Option B'."""
    s = _MARKDOWN.sub("", span).strip()
    s = _LEAD_WORDS.sub("", s, count=1).strip()
    m = re.match(r"^[(\[]\s*([A-Za-z])\s*[)\]]", s)
    if m:
        return _valid(m.group(1), n_options)
    m = re.match(r"^([A-Za-z])(?=$|[\s.,:;!?)\]\-])", s)
    if not m:
        return None
    ch = m.group(1)
    rest = s[1:]
    if ch.islower():
        # a lone lowercase letter is only a letter answer when punctuated like one ("b)", "b.", "b")
        if not (rest == "" or rest[0] in ").:"):
            return None
    elif ch in "AI" and re.match(r"^\s+[a-z]", rest):
        # "A good candidate ...", "I think ..." are words, not options
        return None
    return _valid(ch, n_options)


def _letter_anywhere(span: str, n_options: int) -> str | None:
    """A letter somewhere in an answer span, for 'Answer: I would pick (C)' and the like."""
    s = _MARKDOWN.sub("", span)
    for pat in (
        r"[(\[]([A-Ja-j])[)\]]",
        r"\b(?:option|choice)\s+([A-Ja-j])\b",
        r"\b([A-J])\b(?![''])",
    ):
        for m in re.finditer(pat, s, flags=re.IGNORECASE if "option" in pat else 0):
            ch = m.group(1)
            tail = s[m.end() :]
            if ch in "AI" and pat.startswith(r"\b([") and re.match(r"^\s+[a-z]", tail):
                continue
            v = _valid(ch, n_options)
            if v:
                return v
    return None


def parse_letter(text: str | None, n_options: int) -> str | None:
    """The option letter an agent chose, or None.

    Handles "Answer: (B)", "**B**", "The answer is B.", "Option B", "answer is: b)"; a final
    ``Answer:`` line wins over earlier mentions. Letters beyond ``n_options`` are ignored.
    """
    try:
        if not text or n_options <= 0:
            return None
        n_options = min(n_options, len(LETTERS))
        # 1. explicit "Answer:" lines, last first
        for m in reversed(list(_ANSWER_LINE.finditer(text))):
            rest = _clip(m.group("rest"))
            v = _letter_at_start(rest, n_options) or _letter_anywhere(rest, n_options)
            if v:
                return v
        # 2. inline "the answer is X"
        for m in reversed(list(_ANSWER_INLINE.finditer(text))):
            v = _letter_at_start(_clip(m.group("rest")), n_options)
            if v:
                return v
        # 3. emphasised mentions, last wins
        hits: list[tuple[int, str]] = []
        for pat, flags in (
            (r"\b(?:option|choice)\s*\(?([A-Ja-j])\)?(?![\w'])", re.IGNORECASE),
            (r"\*\*\s*\(?([A-J])\)?[.:]?\s*\*\*", 0),
            (r"\(([A-J])\)", 0),
        ):
            for m in re.finditer(pat, text, flags):
                v = _valid(m.group(1), n_options)
                if v:
                    hits.append((m.start(), v))
        if hits:
            return max(hits)[1]
        # 4. the whole reply is a letter
        m = re.fullmatch(r"\s*[*_`]*[(\[]?\s*([A-Ja-j])\s*[)\]]?[.:]?[*_`]*\s*", text)
        if m:
            return _valid(m.group(1), n_options)
        # 5. the reply opens with an option as listed: "C. the volume of ...", "(B) Paris", "D) 42"
        m = re.match(r"\s*[*_`]*(?:\(([A-J])\)|\[([A-J])\]|([A-J])[.)])[*_`]*(?:\s|$)", text)
        if m:
            return _valid(next(g for g in m.groups() if g), n_options)
        return None
    except Exception:  # noqa: BLE001 - a parser must never take the run down
        return None


def _match_option_text(span: str, options: tuple[str, ...]) -> str | None:
    """'Answer: Mitochondria' -> the letter of the option whose text equals the answer."""
    s = _MARKDOWN.sub("", span).strip().rstrip(".").strip().lower()
    if not s:
        return None
    matches = [i for i, o in enumerate(options) if o.strip().rstrip(".").strip().lower() == s]
    return LETTERS[matches[0]] if len(matches) == 1 else None


# ---------------------------------------------------------------------------------------------
# numbers

_NUMBER = re.compile(
    r"(?<![\w.])(?P<sign>[-−–+]?)\s?\$?\s?"
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?![\d])"
)
_BOXED = re.compile(r"\\boxed\s*\{")
_HASHES = re.compile(r"####\s*(?P<rest>[^\n]*)")


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


def _numbers(span: str) -> list[str]:
    out = []
    for m in _NUMBER.finditer(span):
        c = canonical_number(m.group(0))
        if c is not None:
            out.append(c)
    return out


_FRAC = re.compile(r"\\[dt]?frac\s*\{\s*(-?\d+)\s*\}\s*\{\s*(\d+)\s*\}")


def _frac_to_decimal(m: re.Match[str]) -> str:
    num, den = int(m.group(1)), int(m.group(2))
    if den == 0:
        return m.group(0)
    return format((Decimal(num) / Decimal(den)).normalize(), "f")


def _number_in_answer_span(span: str) -> str | None:
    """'18 dollars' -> 18; '5 + 3 = 8' -> 8 (a worked equation ends in its result)."""
    s = _FRAC.sub(_frac_to_decimal, _MARKDOWN.sub("", span))
    if "=" in s:
        after = _numbers(s.rsplit("=", 1)[1])
        if after:
            return after[0]
    nums = _numbers(s)
    return nums[0] if nums else None


def _boxed_contents(text: str) -> list[str]:
    out = []
    for m in _BOXED.finditer(text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        out.append(text[m.end() : i - 1 if depth == 0 else i])
    return out


def parse_number(text: str | None) -> str | None:
    """The number an agent answered, in canonical form, or None.

    Handles signs, decimals, thousands commas, '$', '%', trailing units, ``\\boxed{}``, ``#### N``;
    the last ``Answer:`` line is preferred over numbers in the reasoning.
    """
    try:
        if not text:
            return None
        for box in reversed(_boxed_contents(text)):
            v = _number_in_answer_span(box)
            if v is not None:
                return v
        for m in reversed(list(_HASHES.finditer(text))):
            v = _number_in_answer_span(m.group("rest"))
            if v is not None:
                return v
        for m in reversed(list(_ANSWER_LINE.finditer(text))):
            v = _number_in_answer_span(_clip(m.group("rest")))
            if v is not None:
                return v
        for m in reversed(list(_ANSWER_INLINE.finditer(text))):
            v = _number_in_answer_span(_clip(m.group("rest")))
            if v is not None:
                return v
        nums = _numbers(text)
        return nums[-1] if nums else None
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
    """The answer in ``text`` normalised like ``question.answer`` (letter or canonical number)."""
    if question.kind == "numeric":
        return parse_number(text)
    options = question.options or ()
    v = parse_letter(text, len(options))
    if v is not None or not text:
        return v
    try:  # fall back to an answer line that names the option's text instead of its letter
        for m in reversed(list(_ANSWER_LINE.finditer(text))):
            v = _match_option_text(_clip(m.group("rest")), options)
            if v:
                return v
    except Exception:  # noqa: BLE001
        return None
    return None


def is_correct(question: Question, answer: str | None) -> bool:
    """Whether a parsed answer equals the gold: letters exactly, numbers within 1e-6 (sign kept)."""
    if answer is None:
        return False
    if question.kind == "numeric":
        return numbers_equal(answer, question.answer)
    return str(answer).strip().upper() == question.answer.strip().upper()
