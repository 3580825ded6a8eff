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
    assert tokens.encoding_name() == "o200k_base"
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
        from tomacs.tokens import count_tokens, encoding_name
        print(encoding_name(), count_tokens("hello world"))
        """
    )
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(tmp_path), "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env, cwd=REPO
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["o200k_base", "2"]
