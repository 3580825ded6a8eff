"""Token counting: real BPE counts, offline, and a fast clear failure when no file is available."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tomacs import tokens

REPO = Path(__file__).resolve().parents[1]


def test_counts_with_o200k() -> None:
    assert tokens.get_encoding().name == "o200k_base"
    assert tokens.count_tokens("") == 0
    assert tokens.count_tokens("hello world") == 2
    long = "The quick brown fox jumps over the lazy dog. " * 50
    assert 400 < tokens.count_tokens(long) < 600


def test_special_token_text_is_counted_not_rejected() -> None:
    assert tokens.count_tokens("a <|endoftext|> b") > 3


def test_chat_overhead() -> None:
    msgs = [{"role": "system", "content": "You are helpful."}, {"role": "user", "content": "hello world"}]
    body = sum(tokens.count_tokens(m["role"]) + tokens.count_tokens(m["content"]) for m in msgs)
    assert tokens.count_chat_tokens(msgs) == body + 2 * tokens.TOKENS_PER_MESSAGE + tokens.REPLY_PRIMING
    named = [{"role": "user", "content": "hi", "name": "bob"}]
    assert tokens.count_chat_tokens(named) == (
        tokens.count_tokens("user")
        + tokens.count_tokens("hi")
        + tokens.count_tokens("bob")
        + tokens.TOKENS_PER_MESSAGE
        + tokens.TOKENS_PER_NAME
        + tokens.REPLY_PRIMING
    )


def test_unavailable_fails_fast_and_clearly(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(tokens, "_encoding", None)
    monkeypatch.setattr(tokens, "_candidate_dirs", lambda: [tmp_path])
    with pytest.raises(tokens.TokenizerUnavailable, match="never downloads"):
        tokens.count_tokens("hello")


def test_works_with_network_unavailable(tmp_path: Path) -> None:
    """Fresh interpreter, every socket connection refused, an empty TIKTOKEN_CACHE_DIR: still counts."""
    code = textwrap.dedent(
        """
        import socket
        def _no_net(*a, **k):
            raise OSError("network disabled by test")
        socket.socket.connect = _no_net
        socket.create_connection = _no_net
        socket.getaddrinfo = _no_net
        from tomacs.tokens import count_tokens, get_encoding
        print(get_encoding().name, count_tokens("hello world"))
        """
    )
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(tmp_path), "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env, cwd=REPO
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["o200k_base", "2"]


# ------------------------------------------------------------------ memoised (segmented) counting
_PIECES = (
    "a",
    "Z",
    "Answer: C",
    "7",
    "123456",
    ".",
    "!",
    "?)",
    " ",
    "  ",
    "\t",
    "\n",
    "\n\n",
    "\n\n\n",
    "\r\n",
    "'s",
    "'",
    "/",
    "//",
    "é",
    "e\u0301",
    "—",
    "中文",
    "\u00a0",
    "---",
    "--- Message from critic ---",
    "<|endoftext|>",
    "x'll",
    "3.5",
    "A.",
    "B)",
    "ß",
    "Ω",
)


def _fuzz_texts(n: int, seed: int) -> list[str]:
    import random

    rnd = random.Random(seed)
    out = []
    for _ in range(n):
        # newlines in many contexts: after and before letters, digits, punctuation, spaces, newlines
        joins = ("", "", "\n", "\n\n", " \n")
        out.append("".join(rnd.choice(_PIECES) + rnd.choice(joins) for _ in range(rnd.randint(1, 30))))
    return out


def _encodings() -> list:
    encs = [tokens.get_encoding()]
    for name in ("cl100k_base",):
        path = tokens._find_offline(name)
        if path is not None and name != encs[0].name:
            encs.append(tokens._load(name, path.parent))
    return encs


def _alnum(c: str) -> bool:
    return c.isascii() and c.isalnum()


def test_segments_rejoin_and_cut_only_at_newlines_next_to_letters_and_digits() -> None:
    cuts = 0
    for text in _fuzz_texts(2000, 1):
        segs = tokens._segments(text)
        assert "".join(segs) == text and all(segs)
        for left, right in zip(segs, segs[1:], strict=False):
            cuts += 1
            assert (_alnum(left[-1]) and right[0] == "\n") or (left[-1] == "\n" and _alnum(right[0]))
    assert cuts > 1000
    assert tokens._segments("Question:\nWhy?\n\nA. x\n") == ["Question:\n", "Why?\n\n", "A. x", "\n"]


@pytest.mark.parametrize("enc", _encodings(), ids=lambda e: e.name)
def test_segment_counts_add_up_to_the_whole_text(enc) -> None:  # noqa: ANN001
    texts = _fuzz_texts(4000, 2)
    for text in texts:
        whole = len(enc.encode_ordinary(text))
        assert sum(len(enc.encode_ordinary(s)) for s in tokens._segments(text)) == whole, repr(text)
    # the fuzz has teeth: cutting before EVERY newline (also after punctuation or spaces) is wrong on it
    naive_wrong = 0
    for text in texts:
        parts = text.split("\n")
        naive = [parts[0]] + ["\n" + p for p in parts[1:]]
        naive_wrong += sum(len(enc.encode_ordinary(s)) for s in naive) != len(enc.encode_ordinary(text))
    assert naive_wrong > 100


def test_memoised_counts_equal_direct_encoding() -> None:
    enc = tokens.get_encoding()
    texts = _fuzz_texts(500, 3)
    for _ in range(2):  # second pass is served from the cache
        for text in texts:
            assert tokens.count_tokens(text) == len(enc.encode_ordinary(text))
    long = "word, " * 3000 + "\nAnswer: B\n" + "more text " * 2000  # segments past the cached length
    assert tokens.count_tokens(long) == len(enc.encode_ordinary(long))
    msgs = [{"role": "system", "content": t} for t in texts[:50]]
    body = sum(len(enc.encode_ordinary(m["content"])) + 1 for m in msgs)  # "system" is one token
    assert tokens.count_chat_tokens(msgs) == body + 50 * tokens.TOKENS_PER_MESSAGE + tokens.REPLY_PRIMING
