"""The comments written beside config keys, read back for the generated reference (docs/reference/).

Why read comments: each key's meaning is already written once, as a comment on or above its field in a
schema dataclass, or beside its value in a conf/*.yaml file. Reading them back keeps the reference from
becoming a second copy of every meaning that drifts from the code; the test on the generated files
(tests/test_reference_docs.py) fails when the code changes and the reference was not regenerated.
"""

from __future__ import annotations

import ast
import functools
import inspect
import io
import re
import tokenize
from pathlib import Path

__all__ = ["class_doc", "field_comments", "yaml_comments"]

# comments that talk to a tool, not to a reader
_TOOL_COMMENT = re.compile(r"^(noqa\b|type:\s*ignore|pragma\b|fmt:|ruff:)")


def _clean(comment: str) -> str:
    text = comment.lstrip("#").strip()
    return "" if _TOOL_COMMENT.match(text) else text


@functools.cache
def _module_comments(path: str) -> tuple[ast.Module, dict[int, str], tuple[str, ...]]:
    """(the parsed module, line -> its comment, the lines) of a source file, read once per process."""
    source = Path(path).read_text(encoding="utf-8")
    comments: dict[int, str] = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT and (text := _clean(tok.string)):
            comments[tok.start[0]] = text
    return ast.parse(source), comments, tuple(source.splitlines())


def _class_node(cls: type) -> tuple[ast.ClassDef, dict[int, str], tuple[str, ...]] | None:
    path = inspect.getsourcefile(cls)
    if path is None:
        return None
    tree, comments, lines = _module_comments(path)
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls.__name__:
            return node, comments, lines
    return None


def field_comments(cls: type) -> dict[str, str]:
    """Each field declared in `cls`'s own body -> its comment: the comment lines right above it and
    the comments on its own lines (a field written over several lines may carry one inside), joined."""
    found = _class_node(cls)
    if found is None:
        return {}
    node, comments, lines = found
    out: dict[str, str] = {}
    for stmt in node.body:
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            continue
        above: list[str] = []
        line = stmt.lineno - 1
        while line >= 1 and lines[line - 1].strip().startswith("#"):
            if line in comments:
                above.insert(0, comments[line])
            line -= 1
        end = stmt.end_lineno or stmt.lineno
        inside = [comments[n] for n in range(stmt.lineno, end + 1) if n in comments]
        if text := " ".join(above + inside):
            out[stmt.target.id] = text
    return out


def class_doc(cls: type) -> str:
    """The class's own docstring as one paragraph per blank-line block ("" when it has none: not its
    base's, and not the signature a dataclass writes for an undocumented class)."""
    doc = cls.__dict__.get("__doc__") or ""
    if not doc or doc.startswith(f"{cls.__name__}("):
        return ""
    paragraphs = re.split(r"\n\s*\n", inspect.cleandoc(doc))
    return "\n\n".join(" ".join(p.split()) for p in paragraphs)


_KEY = re.compile(r"^(?P<indent> *)(?P<key>[A-Za-z_][\w\-]*)\s*:(?:\s|$)")


def _split_comment(line: str) -> tuple[str, str | None, int]:
    """(the line without its comment, the comment, the column of its `#`); a `#` inside quotes or
    glued to a word (a URL fragment) is no comment."""
    quote: str | None = None
    for i, ch in enumerate(line):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i].rstrip(), _clean(line[i:]), i
    return line, None, -1


def yaml_comments(text: str) -> tuple[list[str], dict[str, str]]:
    """(the lines of the file's header comment, dotted key -> its comment) of a conf/*.yaml file.

    A key's comment is the comment block right above it (no blank line between, same indentation),
    the comment on its line and the comment-only lines under it indented past the key (that comment
    continued below it). The header is the comment block that opens the file, its lines as written
    (an indented line is a command to copy)."""
    lines = text.splitlines()
    opening = 0
    while opening < len(lines) and lines[opening].startswith("#"):
        opening += 1
    header = [re.sub(r"^# ?", "", line) for line in lines[:opening] if not line.startswith("# @package")]
    out: dict[str, list[str]] = {}
    stack: list[tuple[int, str]] = []
    pending: list[str] = []
    pending_indent = -1
    last: str | None = None  # the key whose comment an indented comment-only line continues
    last_indent = 0
    for line in lines[opening:]:
        if not line.strip():
            pending, last = [], None
            continue
        code, comment, col = _split_comment(line)
        if not code.strip():  # a comment-only line
            if last is not None and col > last_indent + 2 and comment:
                out[last].append(comment)
                continue
            indent = len(line) - len(line.lstrip())
            pending = (pending if indent == pending_indent else []) + ([comment] if comment else [])
            pending_indent, last = indent, None
            continue
        m = _KEY.match(code)
        if not m:  # a list item or a flow continuation
            pending, last = [], None
            continue
        indent = len(m.group("indent"))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        stack.append((indent, m.group("key")))
        dotted = ".".join(k for _, k in stack)
        out[dotted] = (pending if pending_indent == indent else []) + ([comment] if comment else [])
        pending = []
        last, last_indent = (dotted if comment else None), indent
    return header, {k: " ".join(v) for k, v in out.items() if v}
