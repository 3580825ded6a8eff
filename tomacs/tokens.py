"""Token counting with a real BPE tokenizer that works offline.

Why: the Token metric of the papers is (prompt + completion tokens) / (N x T). A real LLM backbone
takes usage from the server, but the simulator and servers that report no usage need a local count
that matches what a GPT-4.1-family model would bill. We use tiktoken's **o200k_base** encoding (the
GPT-4o / GPT-4.1 tokenizer, so also the TodyComm paper's gpt-4.1-nano backbone) and fall back to
**cl100k_base** (GPT-4 / GPT-3.5) only if o200k_base is not available offline. `get_encoding().name`
says which one is in use.

tiktoken normally downloads its BPE files on first use, and tomacs must never touch the network
(tests and CI have none, and a silent download could hang a run). The files are read from, in order:
  1. `$TIKTOKEN_CACHE_DIR` (if the user set one and it holds the file),
  2. the copies bundled inside the installed `litellm` package (`litellm/litellm_core_utils/tokenizers`,
     located without importing litellm, which is slow to import),
  3. tiktoken's default cache (`$TMPDIR/data-gym-cache`).
Each candidate file is checked against tiktoken's published SHA-256 before use. If none is found we
raise `TokenizerUnavailable` at once instead of letting tiktoken try to download.

Counting is memoised, because a debate counts the same text many times: every reply is counted
once as a completion and again inside each neighbour's prompt, and the question and role profile
open every prompt. A text is cut into segments at newlines next to an ASCII letter or digit, and
each distinct segment is encoded once. The sum over the segments is exactly the count of the whole
text (see `_segments`), so counts never change, only their cost.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import tempfile
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import tiktoken

__all__ = [
    "TokenizerUnavailable",
    "count_chat_tokens",
    "count_tokens",
    "get_encoding",
]

_BLOB = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
# tiktoken's expected SHA-256 of each BPE file (from tiktoken_ext/openai_public.py).
_SHA256 = {
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
}
_PREFERENCE = ("o200k_base", "cl100k_base")

# OpenAI's documented chat overhead for gpt-3.5/4/4o-style models: every message is wrapped in
# <|start|>{role/name}\n{content}<|end|>\n (3 tokens), a `name` costs 1 more, and every reply is
# primed with <|start|>assistant<|message|> (3 tokens).
TOKENS_PER_MESSAGE = 3
TOKENS_PER_NAME = 1
REPLY_PRIMING = 3


class TokenizerUnavailable(RuntimeError):
    """No BPE file for any supported encoding is available offline."""


_lock = threading.Lock()
_encoding: Any = None  # tiktoken.Encoding, cached after the first load


def _cache_key(name: str) -> str:
    """The file name tiktoken uses for a cached BPE file: sha1 of its download URL."""
    return hashlib.sha1(_BLOB.format(name=name).encode()).hexdigest()


def _candidate_dirs() -> list[Path]:
    dirs: list[Path] = []
    env = os.environ.get("TIKTOKEN_CACHE_DIR")
    if env:
        dirs.append(Path(env))
    spec = importlib.util.find_spec("litellm")  # finds the package without importing it
    if spec is not None and spec.submodule_search_locations:
        for loc in spec.submodule_search_locations:
            dirs.append(Path(loc) / "litellm_core_utils" / "tokenizers")
    dirs.append(Path(tempfile.gettempdir()) / "data-gym-cache")
    return dirs


def _find_offline(name: str) -> Path | None:
    """First verified local copy of the BPE file for encoding `name`, or None."""
    key = _cache_key(name)
    for d in _candidate_dirs():
        path = d / key
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if hashlib.sha256(data).hexdigest() == _SHA256[name]:
            return path
    return None


def _load(name: str, directory: Path) -> Any:
    """Build the tiktoken encoding with its cache pointed at `directory` (where the verified file is).

    tiktoken reads `TIKTOKEN_CACHE_DIR` at load time, so we set it for the duration of the load and
    restore it afterwards; tiktoken keeps the constructed encoding in its own registry.
    """
    import tiktoken

    old = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(directory)
    try:
        return tiktoken.get_encoding(name)
    finally:
        if old is None:
            os.environ.pop("TIKTOKEN_CACHE_DIR", None)
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = old


def get_encoding() -> tiktoken.Encoding:
    """The cached tiktoken `Encoding` (o200k_base, else cl100k_base), loaded from local files only."""
    global _encoding
    if _encoding is not None:
        return _encoding
    with _lock:
        if _encoding is not None:
            return _encoding
        for name in _PREFERENCE:
            path = _find_offline(name)
            if path is not None:
                _encoding = _load(name, path.parent)
                _cached_segment.cache_clear()
                return _encoding
        looked = ", ".join(str(d) for d in _candidate_dirs())
        raise TokenizerUnavailable(
            "no offline tiktoken BPE file for o200k_base or cl100k_base was found (looked in: "
            f"{looked}). tomacs never downloads tokenizers; install litellm (it bundles them) or put "
            "the file into $TIKTOKEN_CACHE_DIR."
        )


# Encodings whose pre-tokenisation pattern the segment argument in `_segments` was checked for.
_SEGMENTABLE = frozenset(_PREFERENCE)
_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")


def _segments(text: str) -> list[str]:
    r"""`text` cut at every newline that touches an ASCII letter or digit; the pieces join to `text`.

    A cut goes before a "\n" that follows a letter or digit, and after a "\n" that precedes one. So
    a paragraph, a line of a prompt, or a neighbour's reply inside a prompt is a segment of its own,
    and the same segment is met again in other prompts.

    Why the token counts of the pieces add up to the count of the whole (o200k_base and cl100k_base):
    tiktoken splits text with a regex into chunks and encodes each chunk on its own, so it suffices
    that the chunks of the whole are the chunks of the pieces. (1) No chunk holds both a newline and
    an adjacent letter or digit: the letter patterns exclude "\r\n" from their optional leading
    character, numbers are digits only, whitespace patterns are whitespace only, and the one pattern
    that ends in newlines (punctuation, ` ?[^\s\p{L}\p{N}]+[\r\n/]*`) cannot contain a letter or digit
    after them. So a chunk boundary lies at every cut. (2) No pattern looks behind, so the chunks
    after a cut are those of the right-hand piece alone. (3) No chunk of the left-hand piece depends
    on what follows it: the piece ends in a letter or digit (no whitespace pattern can end there), or
    in a newline whose whitespace run is one chunk either way (`\s*[\r\n]+` matches it before the
    lookahead `\s+(?!\S)` is tried; in cl100k `\s*[\r\n]` inside the text and `\s++$` at its end).
    tests/test_tokens.py checks the sums against whole-text encoding on adversarial strings.
    """
    lines = text.split("\n")
    if len(lines) == 1:
        return lines
    cuts = [0]
    pos = 0
    for line, nxt in zip(lines, lines[1:], strict=False):
        end = pos + len(line)  # index of the newline after `line`
        if line and line[-1] in _ALNUM:
            cuts.append(end)
        if nxt and nxt[0] in _ALNUM:
            cuts.append(end + 1)
        pos = end + 1
    cuts.append(len(text))
    return [text[a:b] for a, b in zip(cuts, cuts[1:], strict=False)]


_MAX_CACHED = 8192  # longer segments are encoded every time: the cache stays within ~100 MB


@functools.lru_cache(maxsize=16384)
def _cached_segment(text: str) -> int:
    """Tokens of one segment (the cache is emptied whenever `get_encoding` loads an encoding)."""
    return len(get_encoding().encode_ordinary(text))


def _count_segment(text: str) -> int:
    if len(text) > _MAX_CACHED:
        return len(get_encoding().encode_ordinary(text))
    return _cached_segment(text)


def _count(text: str) -> int:
    enc = _encoding if _encoding is not None else get_encoding()
    if enc.name not in _SEGMENTABLE:
        return len(enc.encode_ordinary(text))
    if "\n" not in text:
        return _count_segment(text)
    return sum(map(_count_segment, _segments(text)))


def count_tokens(text: str) -> int:
    """Number of BPE tokens in `text`.

    Special-token strings such as "<|endoftext|>" inside the text are counted as ordinary text, so
    arbitrary model output can never make counting fail.
    """
    if not text:
        return 0
    return _count(text)


def count_chat_tokens(messages: Iterable[Mapping[str, object]]) -> int:
    """Prompt tokens of a chat request, with OpenAI's per-message and reply-priming overhead.

    Matches the `prompt_tokens` that OpenAI reports for gpt-4o/4.1-family chat requests of plain
    text messages, so a locally estimated count is comparable to a billed one.
    """
    total = 0
    for msg in messages:
        total += TOKENS_PER_MESSAGE
        for key, value in msg.items():
            if value is None:
                continue
            if not isinstance(value, str):
                value = str(value)
            total += _count(value) if value else 0
            if key == "name":
                total += TOKENS_PER_NAME
    return total + REPLY_PRIMING
