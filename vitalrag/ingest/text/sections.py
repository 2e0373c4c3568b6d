"""Section headings of documentation: Markdown, reStructuredText, AsciiDoc.

Each finder reads a file's lines once, in order, and returns its headings with
their level; lines inside code blocks (Markdown fences, reStructuredText's
indented blocks, AsciiDoc's delimited blocks) and front matter are never
headings. Plain text has none. ``sections`` turns headings into spans: a
section runs from its heading to the line before the next heading, whatever
that one's level, and carries the path of headings above it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Heading:
    """A heading: its first line (an overline's, for an overlined title), its
    level (smaller is higher) and its title."""

    line: int
    level: int
    title: str


@dataclass(frozen=True, slots=True)
class Section:
    """The lines of one section, 1-based and inclusive, and its heading path
    (the titles above it, then its own); ``titles`` is empty for the text before
    the first heading."""

    start_line: int
    end_line: int
    titles: tuple[str, ...]


def _clean(title: str) -> str:
    return " ".join(title.split())


# -- Markdown ---------------------------------------------------------------------------

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_NOT_A_TITLE = re.compile(r"^\s*(?:[-*+>|]|\d+[.)]|<|\[)|^ {4}|^\t")


def markdown_headings(lines: Sequence[str]) -> list[Heading]:
    """ATX (``## Title``) and setext (a line underlined with ``===`` or ``---``) headings,
    outside fenced code and YAML front matter."""
    out: list[Heading] = []
    i, n = 0, len(lines)
    if n and lines[0].strip() == "---":  # front matter, up to its closing line
        for j in range(1, n):
            if lines[j].strip() in ("---", "..."):
                i = j + 1
                break
    fence: str | None = None
    while i < n:
        line = lines[i]
        m = _FENCE.match(line)
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line.strip()[len(m.group(1)):]:
                fence = None
            i += 1
            continue
        if m:
            fence = m.group(1)
            i += 1
            continue
        atx = _ATX.match(line)
        if atx and atx.group(2) and atx.group(2).strip("#").strip():
            out.append(Heading(i + 1, len(atx.group(1)), _clean(atx.group(2))))
            i += 1
            continue
        if (i + 1 < n and line.strip() and (i == 0 or not lines[i - 1].strip())
                and not _NOT_A_TITLE.match(line) and _SETEXT.match(lines[i + 1])):
            out.append(Heading(i + 1, 1 if lines[i + 1].strip()[0] == "=" else 2, _clean(line)))
            i += 2
            continue
        i += 1
    return out


# -- reStructuredText --------------------------------------------------------------------

_ADORNMENT = re.compile(r"^([!-/:-@\[-`{-~])\1{2,}[ \t]*$")


def rst_headings(lines: Sequence[str]) -> list[Heading]:
    """Titles underlined (and maybe overlined) with a run of one punctuation
    character; levels in the order their styles first appear, as docutils gives them."""
    out: list[Heading] = []
    styles: dict[tuple[str, bool], int] = {}
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        before_blank = i == 0 or not lines[i - 1].strip()
        over = _ADORNMENT.match(line)
        if (over and before_blank and i + 2 < n and lines[i + 1].strip()
                and not _ADORNMENT.match(lines[i + 1]) and lines[i + 2].rstrip() == line.rstrip()):
            style = (line.strip()[0], True)
            styles.setdefault(style, len(styles) + 1)
            out.append(Heading(i + 1, styles[style], _clean(lines[i + 1])))
            i += 3
            continue
        if (i + 1 < n and before_blank and line.strip() and not line[0].isspace()
                and not _ADORNMENT.match(line) and not line.startswith(".. ")):
            under = _ADORNMENT.match(lines[i + 1])
            if under and len(lines[i + 1].rstrip()) >= min(len(line.rstrip()), 4):
                style = (lines[i + 1].strip()[0], False)
                styles.setdefault(style, len(styles) + 1)
                out.append(Heading(i + 1, styles[style], _clean(line)))
                i += 2
                continue
        i += 1
    return out


# -- AsciiDoc ----------------------------------------------------------------------------

_ADOC_TITLE = re.compile(r"^(={1,6}|#{1,6})[ \t]+(\S.*?)[ \t]*$")
_ADOC_DELIMITER = re.compile(r"^(-{4,}|\.{4,}|={4,}|\*{4,}|_{4,}|\+{4,}|/{4,}|`{3,})[ \t]*$")


def asciidoc_headings(lines: Sequence[str]) -> list[Heading]:
    """Section titles (``== Title``, or Markdown's ``#``) outside delimited blocks
    (listings, examples, comments, passthroughs); ``= Title`` is the document's, level 0."""
    out: list[Heading] = []
    block: str | None = None
    for i, line in enumerate(lines):
        delimiter = _ADOC_DELIMITER.match(line)
        if block is not None:
            if delimiter and delimiter.group(1) == block:
                block = None
            continue
        if delimiter:
            block = delimiter.group(1)
            continue
        m = _ADOC_TITLE.match(line)
        if m:
            out.append(Heading(i + 1, len(m.group(1)) - 1, _clean(m.group(2))))
    return out


HEADINGS: dict[str, Callable[[Sequence[str]], list[Heading]]] = {
    "markdown": markdown_headings,
    "restructuredtext": rst_headings,
    "asciidoc": asciidoc_headings,
}


def sections(lines: Sequence[str], headings: Sequence[Heading]) -> list[Section]:
    """The sections ``headings`` cut ``lines`` into, in order, blank lines at their
    end left out: the text before the first heading (when it holds any), then one
    per heading, to the line before the next one."""
    out: list[Section] = []
    starts = [h.line for h in headings] + [len(lines) + 1]
    if starts[0] > 1:
        out.append(Section(1, starts[0] - 1, ()))
    path: list[tuple[int, str]] = []
    for k, h in enumerate(headings):
        while path and path[-1][0] >= h.level:
            path.pop()
        path.append((h.level, h.title))
        out.append(Section(h.line, starts[k + 1] - 1, tuple(t for _, t in path)))
    kept = []
    for s in out:
        end = s.end_line
        while end > s.start_line and not lines[end - 1].strip():
            end -= 1
        if s.titles or any(line.strip() for line in lines[s.start_line - 1:end]):
            kept.append(Section(s.start_line, end, s.titles))
    return kept
