"""Every relative link in the documentation resolves: the file (or folder) it names exists, and its `#anchor`
names a heading of that markdown file under GitHub's slug rules (README.md, docs/**/*.md, outputs/README.md).

Web links (http, https, mailto, ...) are skipped: the test reads files only and needs no network. Links inside
fenced code blocks and inline code spans are not links and are skipped too.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest

REPO = Path(__file__).resolve().parents[1]

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_NOT_PARAGRAPH = re.compile(r"^ {0,3}([#|>*+-]|\d+[.)]\s|$)")
_CODE_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)", re.S)
# [text](target) and ![alt](target); the target may be <...> and may carry a "title"
_INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|[^()\s]*(?:\([^()\s]*\)[^()\s]*)*)")
_REF_DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)", re.M)
_HTML_ANCHOR = re.compile(r"<a\s[^>]*\b(?:name|id)\s*=\s*[\"']([^\"']+)[\"']", re.I)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def doc_files(root: Path = REPO) -> list[Path]:
    """The markdown files whose links are checked."""
    files = [root / "README.md", *sorted((root / "docs").rglob("*.md")), root / "outputs" / "README.md"]
    return [f for f in files if f.is_file()]


def _prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) of every line outside fenced code blocks."""
    out: list[tuple[int, str]] = []
    fence: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        m = _FENCE.match(line)
        if fence is not None:
            closes = m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence)
            if closes and not line[m.end() :].strip():
                fence = None
            continue
        if m:
            fence = m.group(1)
            continue
        out.append((number, line))
    return out


def _heading_text(raw: str) -> str:
    """A heading's text as GitHub renders it: code spans keep their content, links their text, and
    emphasis markers and HTML tags are dropped."""
    spans: list[str] = []

    def keep(m: re.Match[str]) -> str:
        spans.append(m.group(2).strip())
        return f"\0{len(spans) - 1}\0"

    text = _CODE_SPAN.sub(keep, raw)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"<[^>]+>", "", text)
    text = re.sub(r"\*+|(?<!\w)_+|_+(?!\w)|~~", "", text)
    return re.sub(r"\0(\d+)\0", lambda m: spans[int(m.group(1))], text)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text (before the -1, -2 of repeats): lower case, every character
    that is not a letter, digit, underscore, hyphen or space removed, spaces turned into hyphens."""
    text = _heading_text(heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every anchor a markdown file has: its headings' slugs (a repeated slug gets -1, -2, ...) and the
    names of its HTML anchors."""
    found: set[str] = set()
    seen: dict[str, int] = {}

    def add(heading: str) -> None:
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")

    previous = ""
    for _, line in _prose_lines(text):
        if m := _ATX.match(line):
            add(m.group(2) or "")
            previous = ""
            continue
        if _SETEXT.match(line) and previous and not _NOT_PARAGRAPH.match(previous):
            add(previous)
            previous = ""
            continue
        previous = line
    found.update(m.group(1) for m in _HTML_ANCHOR.finditer(text))
    return found


def links(text: str) -> list[tuple[int, str]]:
    """(line number, target) of every link outside code."""
    out: list[tuple[int, str]] = []
    for number, line in _prose_lines(text):
        prose = _CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)
        for m in _INLINE_LINK.finditer(prose):
            out.append((number, m.group(1)))
        for m in _REF_DEFINITION.finditer(prose):
            out.append((number, m.group(1)))
    return [(n, t[1:-1] if t.startswith("<") and t.endswith(">") else t) for n, t in out]


def broken_links(path: Path, root: Path = REPO) -> list[str]:
    """'file:line: target (why)' for every relative link of `path` that does not resolve."""
    text = path.read_text(encoding="utf-8")
    cache: dict[Path, set[str]] = {}
    problems: list[str] = []
    for number, target in links(text):
        if not target or _SCHEME.match(target) or target.startswith("//"):
            continue
        file_part, _, anchor = target.partition("#")
        file_part = unquote(file_part.split("?", 1)[0])
        if not file_part:
            dest = path
        elif file_part.startswith("/"):
            dest = root / file_part.lstrip("/")
        else:
            dest = path.parent / file_part
        where = f"{path.relative_to(root) if path.is_relative_to(root) else path}:{number}: {target}"
        if not dest.exists():
            problems.append(f"{where} (no such file)")
            continue
        if anchor and dest.is_file() and dest.suffix.lower() == ".md":
            if dest not in cache:
                cache[dest] = anchors(dest.read_text(encoding="utf-8"))
            if unquote(anchor).lower() not in cache[dest]:
                problems.append(f"{where} (no heading with anchor #{anchor})")
    return problems


# ---- the checker itself ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("heading", "expected"),
    [
        ("TodyComm (`method=todycomm`)", "todycomm-methodtodycomm"),
        ("The flagship job from a fresh clone", "the-flagship-job-from-a-fresh-clone"),
        ("Set up, and a first result", "set-up-and-a-first-result"),
        ("G-Safeguard (`method=gsafeguard`; App. E.4)", "g-safeguard-methodgsafeguard-app-e4"),
        ("The `sim` backbone", "the-sim-backbone"),
        ("`train.max_usd` and *emphasis* and [a link](x.md)", "trainmax_usd-and-emphasis-and-a-link"),
        ("Spend caps & rate limits", "spend-caps--rate-limits"),
        ("Straße über", "straße-über"),
    ],
)
def test_slug_follows_github(heading: str, expected: str) -> None:
    assert slug(heading) == expected


def test_repeated_headings_and_setext_headings_get_their_anchors() -> None:
    text = "# Notes\n\n## Notes\n\nA title\n=======\n\ntext\n\n---\n\n```\n# not a heading\n```\n"
    assert anchors(text) == {"notes", "notes-1", "a-title"}


def test_checker_reports_a_broken_link_and_a_broken_anchor(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "other.md").write_text("# Other page\n\n## A section\n", encoding="utf-8")
    page = tmp_path / "docs" / "page.md"
    page.write_text(
        "# Page\n\n"
        "[ok](other.md) [ok anchor](other.md#a-section) [self](#page) [web](https://example.com/missing.md)\n"
        "[missing file](nowhere.md)\n"
        "[missing anchor](other.md#no-such-section)\n"
        "`[in code](nowhere.md)`\n\n"
        "```\n[in a fence](nowhere.md)\n```\n",
        encoding="utf-8",
    )
    assert broken_links(page, tmp_path) == [
        "docs/page.md:4: nowhere.md (no such file)",
        "docs/page.md:5: other.md#no-such-section (no heading with anchor #no-such-section)",
    ]


def test_checker_passes_a_page_whose_links_resolve(tmp_path: Path) -> None:
    (tmp_path / "howto").mkdir()
    (tmp_path / "howto" / "a.md").write_text("## Step `one`\n", encoding="utf-8")
    page = tmp_path / "README.md"
    page.write_text(
        '[dir](howto/) [anchor](howto/a.md#step-one) [root](/howto/a.md) [title](howto/a.md "A")\n',
        encoding="utf-8",
    )
    assert broken_links(page, tmp_path) == []


# ---- the documentation -------------------------------------------------------------------------------------


def test_the_checked_files_include_the_front_door_and_the_docs() -> None:
    names = {f.relative_to(REPO).as_posix() for f in doc_files()}
    assert {"README.md", "docs/README.md", "docs/deviations.md"} <= names


@pytest.mark.parametrize("path", doc_files(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_relative_link_resolves(path: Path) -> None:
    assert broken_links(path) == []
