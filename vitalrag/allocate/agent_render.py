"""Renderings an agent can act on: what the ``vital-fill`` policy puts in C(q).

One object's rendering is a descriptor naming the lines actually shown, then
those lines, numbered::

    --- src/pkg/mod.py:40-58,90-97 Parser (of 12-140)
    --- sig: class Parser:                        (only when line 12 is not shown)
    40  def parse(self, text: str) -> Tree:
    ...
    ⋮
    90  def _peek(self) -> str:
    --- called from src/pkg/cli.py:33-35          (when a call-site view won the slot)
    33  tree = Parser().parse(text)

- **Whole statements.** A clipped window grows in blocks that start where a
  statement or definition starts (no open bracket, string or comment carried in
  from the line before), so it never begins mid-call or inside a docstring, and
  never ends inside one.
- **Classes** that do not fit show their header (what precedes the first member,
  at most ``HEADER_LINES`` lines and a quarter of the share) and then whole
  members: first those the retrieval pointed at (``focus``), then those whose
  lines share the most query tokens; a pointed-at member too big to show whole
  is shown from its first line. A member pointed at inside a nested class comes
  with that class's declaration line, and a nested class too big to show whole
  whose members are pointed at is left to them (not shown from its top, which
  would take the share from the other members asked for).
- **Line numbers** are on by default (``line_numbers=False`` turns them off);
  the descriptor's ranges are the shown lines, the object's own range follows
  in ``(of a-b)`` when not all of it is shown.
- Internal id suffixes (``#2``, ``#setter``) never reach the text.
- A descriptor is one line: paths, identifiers and signatures are written with
  their control characters escaped (``kernel.printable``).

Every rendering starts with ``---`` and ends with a newline, so the tokens of a
concatenation are the sum of the parts (as in ``render``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from vitalrag.allocate.provenance import identifier_tokens
from vitalrag.allocate.render import Rendering, Window, line_scores
from vitalrag.allocate.source import ObjectText
from vitalrag.kernel.printable import escape_controls, one_line
from vitalrag.tokens import TokenCounter

GAP = "⋮\n"
#: a clipped class shows at most this many lines of its header (before its first member)
HEADER_LINES = 12
_SUFFIX = re.compile(r"#[A-Za-z0-9_]+")
_CONTINUES = re.compile(r"(\\|,|\(|\[|\{|=|\+|-|\*|/|&&|\|\||\?|:|\.|->)\s*$")
_HEADER_KINDS = frozenset({"class", "interface", "enum"})


def display_identifier(identifier: str) -> str:
    """The identifier without the index's disambiguation suffixes, on one line
    with no control character (``kernel.printable``)."""
    return one_line(_SUFFIX.sub("", identifier))


def statement_starts(lines: Sequence[str]) -> list[bool]:
    """For each line, whether a statement (or definition) may start there: no
    bracket, triple-quoted string or block comment is open at its start, and
    the line before does not end in a continuation (a backslash, an operator,
    a comma). Blank lines never start one; a line starting with ``.`` or a
    closing bracket continues the one before."""
    out: list[bool] = []
    depth = 0
    quote: str | None = None  # an open triple quote or "*/"
    prev = ""
    for line in lines:
        stripped = line.strip()
        start = (depth == 0 and quote is None and bool(stripped)
                 and not stripped.startswith((".", ")", "]", "}"))
                 and not (prev and _continues(prev)))
        out.append(start)
        depth, quote = _scan(line, depth, quote)
        if stripped:
            prev = stripped
    return out


def _continues(prev: str) -> bool:
    """A line ending so that the next one carries on its statement. A trailing
    ``{`` or ``:`` opens a block, which ends no statement but starts new ones."""
    if prev.endswith(("{", "}", ";")):
        return False
    if prev.endswith(":") and not prev.endswith("::"):
        return False  # a Python block header (or a Java label / case)
    if prev.startswith(("#", "//", "*", "/*", "@")):
        return False
    return bool(_CONTINUES.search(prev))


_TOKENS = re.compile(r'"""|\'\'\'|/\*|//|#|["\'()\[\]{}]')


def _scan(line: str, depth: int, quote: str | None) -> tuple[int, str | None]:
    """Bracket depth and open triple quote / block comment after ``line``; only
    the characters that matter are looked at (the regex skips the rest)."""
    i, n = 0, len(line)
    while i < n:
        if quote is not None:
            j = line.find(quote, i)
            if j < 0:
                return depth, quote
            i, quote = j + len(quote), None
            continue
        m = _TOKENS.search(line, i)
        if m is None:
            break
        tok = m.group(0)
        i = m.end()
        if tok in ("#", "//"):
            break
        if tok in ('"""', "'''"):
            quote = tok
        elif tok == "/*":
            quote = "*/"
        elif tok in "\"'":
            while i < n and line[i] != tok:
                i += 2 if line[i] == "\\" else 1
            i += 1
        elif tok in "([{":
            depth += 1
        else:
            depth = max(depth - 1, 0)
    return depth, quote


def blocks(lines: Sequence[str], lo: int = 0, hi: int | None = None, *,
           starts: Sequence[bool] | None = None) -> list[tuple[int, int]]:
    """``lines[lo:hi]`` cut where statements start: (first, last) indices,
    inclusive; ``starts`` is ``statement_starts(lines)`` when already known."""
    hi = len(lines) if hi is None else hi
    starts = statement_starts(lines) if starts is None else starts
    out: list[tuple[int, int]] = []
    begin = lo
    for i in range(lo + 1, hi):
        if starts[i]:
            out.append((begin, i - 1))
            begin = i
    if begin < hi:
        out.append((begin, hi - 1))
    return out


def _ranges(shown: Iterable[int]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for i in sorted(shown):
        if out and i == out[-1][1] + 1:
            out[-1] = (out[-1][0], i)
        else:
            out.append((i, i))
    return out


@dataclass(frozen=True, slots=True)
class CallSite:
    """A call of the object, shown when a call-site view won its slot."""

    path: str
    start_line: int
    lines: tuple[str, ...]


class _Builder:
    """Assembles one object's text from a set of shown line indices."""

    def __init__(self, obj: ObjectText, counter: TokenCounter, line_numbers: bool,
                 call: CallSite | None) -> None:
        self.obj, self.counter, self.numbers = obj, counter, line_numbers
        self.width = len(str(obj.end_line))
        self.call = call
        self._starts: list[bool] | None = None
        self._line_tokens: dict[int, int] = {}

    @property
    def starts(self) -> list[bool]:
        """``statement_starts`` of the object's lines, computed when a window needs them."""
        if self._starts is None:
            self._starts = statement_starts(self.obj.lines)
        return self._starts

    def line(self, i: int) -> str:
        text = self.obj.lines[i]
        if not self.numbers:
            return text + "\n"
        return f"{self.obj.start_line + i:>{self.width}} {text}\n" if text else \
            f"{self.obj.start_line + i:>{self.width}}\n"

    def descriptor(self, shown: set[int]) -> str:
        obj = self.obj
        ident = display_identifier(obj.identifier)
        path = escape_controls(obj.path)
        if not obj.lines or not obj.verbatim:
            return f"--- {path} {ident}".rstrip() + "\n"
        spans = ",".join(f"{obj.start_line + a}-{obj.start_line + b}" if a != b else f"{obj.start_line + a}"
                         for a, b in _ranges(shown))
        whole = f"{obj.start_line}-{obj.end_line}"
        tail = "" if len(shown) == len(obj.lines) else f" (of {whole})"
        return f"--- {path}:{spans or whole} {ident}{tail}".rstrip() + "\n"

    def _head(self, shown: set[int]) -> str:
        head = self.descriptor(shown)
        if shown and 0 not in shown and self.obj.signature:
            head += f"--- sig: {one_line(self.obj.signature)}\n"
        return head

    def text(self, shown: set[int]) -> str:
        parts = [self._head(shown)]
        last = None
        for i in sorted(shown):
            if last is not None and i != last + 1:
                parts.append(GAP)
            parts.append(self.line(i))
            last = i
        if self.call is not None:
            parts.append(self.call_text())
        return "".join(parts)

    def tokens(self, shown: set[int]) -> int:
        """The exact token count of ``text(shown)``, without building and encoding it
        each time a window grows by a block. With line numbers every part of the text
        (head, each line, each gap, the call site) ends in a newline and the next
        begins with a digit or a mark, and cl100k_base's pre-tokenizer never joins a
        newline to what follows it there, so the count is the sum of the parts'
        counts (cached per line). Without numbers blank lines merge: counted whole."""
        if not self.numbers:
            return self.counter.count(self.text(shown))
        order = sorted(shown)
        gaps = sum(1 for a, b in zip(order, order[1:]) if b != a + 1)
        n = self.counter.count(self._head(shown)) + sum(self.line_tokens(i) for i in order)
        if gaps:
            n += gaps * self.counter.count(GAP)
        if self.call is not None:
            n += self.counter.count(self.call_text())
        return n

    def line_tokens(self, i: int) -> int:
        """Tokens of line ``i`` as ``line(i)`` writes it. A numbered line's number and
        text are counted apart (a digit and the space after it never share a token),
        so the text's count is cached across calls whatever line it is shown at."""
        n = self._line_tokens.get(i)
        if n is None:
            text = self.obj.lines[i]
            if not self.numbers:
                (n,) = self.counter.count_lines((text + "\n",))
            else:
                number, rest = self.counter.count_lines((f"{self.obj.start_line + i:>{self.width}}",
                                                         f" {text}\n" if text else "\n"))
                n = number + rest
            self._line_tokens[i] = n
        return n

    def call_text(self) -> str:
        c = self.call
        assert c is not None
        end = c.start_line + len(c.lines) - 1
        width = len(str(end))
        body = "".join((f"{c.start_line + k:>{width}} {ln}\n" if self.numbers else ln + "\n")
                       for k, ln in enumerate(c.lines))
        return f"--- called from {escape_controls(c.path)}:{c.start_line}-{end}\n{body}"


def render_for_agent(obj: ObjectText, query_tokens: frozenset[str], budget: int,
                     counter: TokenCounter, *, focus: Sequence[tuple[int, int]] = (),
                     call: CallSite | None = None, line_numbers: bool = True,
                     full: Rendering | None = None) -> Rendering:
    """The largest rendering of ``obj`` within ``budget`` tokens (see the module
    docstring); ``focus`` are line ranges (file line numbers) the retrieval
    pointed at inside it, strongest first. ``full`` is the unclipped rendering
    with the same ``call`` and ``line_numbers``, when the caller has it; its
    tokens are ``full_tokens`` (d_i)."""
    if full is None:
        full = full_agent_rendering(obj, counter, call=call, line_numbers=line_numbers)
    if full.tokens <= budget:
        return full
    b = _Builder(obj, counter, line_numbers, call)
    if call is not None and counter.count(b.call_text()) > budget // 4:
        b.call = None  # not worth a quarter of the share
    scores = line_scores(obj.lines, query_tokens - _own_tokens(obj))
    focus_idx = [(max(a - obj.start_line, 0), min(z - obj.start_line, len(obj.lines) - 1))
                 for a, z in focus if z >= obj.start_line and a <= obj.end_line]
    if obj.children and (obj.kind in _HEADER_KINDS or not obj.kind):
        shown = _members(obj, b, budget, scores, focus_idx)
    else:
        anchor = focus_idx[0][0] if focus_idx else (
            max(range(len(scores)), key=lambda i: (scores[i], -i)) if scores and max(scores) > 0 else 0)
        shown = _window(b, budget, blocks(obj.lines, starts=b.starts), anchor, scores, set())
    text = b.text(shown)
    tokens = counter.count(text)
    if tokens > budget or not shown:
        text = b.descriptor(set())
        tokens = counter.count(text)
        if tokens > budget:
            return Rendering("", 0, full.tokens, ())
        shown = set()
    return Rendering(text, tokens, full.tokens, _spans(obj, shown))


def full_agent_rendering(obj: ObjectText, counter: TokenCounter, *, call: CallSite | None = None,
                         line_numbers: bool = True) -> Rendering:
    """The whole object (and its call site), as ``render_for_agent`` shows it
    with no budget: its tokens are d_i."""
    b = _Builder(obj, counter, line_numbers, call)
    everything = set(range(len(obj.lines)))
    text = b.text(everything)
    n = counter.count(text)
    return Rendering(text, n, n, _spans(obj, everything))


def _own_tokens(obj: ObjectText) -> frozenset[str]:
    return identifier_tokens(obj.identifier)


def _spans(obj: ObjectText, shown: set[int]) -> tuple[tuple[int, int], ...]:
    if not obj.verbatim:
        return ()
    return tuple((obj.start_line + a, obj.start_line + z) for a, z in _ranges(shown))


def _fits(b: _Builder, shown: set[int], budget: int) -> bool:
    return b.tokens(shown) <= budget


def _window(b: _Builder, budget: int, units: list[tuple[int, int]], anchor: int,
            scores: Sequence[int], base: set[int]) -> set[int]:
    """Grow whole blocks around the block holding ``anchor`` (added to ``base``) as
    a ``render.Window`` grows, until neither side's next block fits."""
    if not units:
        return set(base)
    at = next((k for k, (a, z) in enumerate(units) if a <= anchor <= z), 0)
    shown = set(base)

    def add(k: int) -> set[int]:
        a, z = units[k]
        return shown | set(range(a, z + 1))

    first = add(at)
    if not _fits(b, first, budget):
        # the anchor's block alone is too big: whole lines around the anchor
        return _lines_around(b, budget, units[at], anchor, shown)
    shown = first
    window = Window(len(units), at, lambda k: sum(scores[units[k][0]:units[k][1] + 1]))
    full: set[int] = set()  # the sides whose next block does not fit
    while sides := [side for side in window.sides() if side not in full]:
        grown = add(window.next(sides[0]))
        if _fits(b, grown, budget):
            shown = grown
            window.grow(sides[0])
        else:
            full.add(sides[0])
    return shown


def _lines_around(b: _Builder, budget: int, unit: tuple[int, int], anchor: int,
                  base: set[int]) -> set[int]:
    """Inside one block too big to show whole (a 300-line literal or docstring, a
    last resort): lines from ``anchor`` down, then up, grown by their own token
    counts, then checked exactly and trimmed from the last line added."""
    shown = set(base)
    if not _fits(b, shown | {anchor}, budget):
        return shown
    est = b.tokens(shown | {anchor})
    added = [anchor]
    lo = hi = anchor
    grew = True
    while grew:
        grew = False
        for k in (hi + 1, lo - 1):
            if unit[0] <= k <= unit[1] and k not in shown and k not in added:
                c = b.line_tokens(k)
                if est + c <= budget:
                    est += c
                    added.append(k)
                    lo, hi = min(lo, k), max(hi, k)
                    grew = True
    while len(added) > 1 and not _fits(b, shown | set(added), budget):
        added.pop()
    return shown | set(added)


def _members(obj: ObjectText, b: _Builder, budget: int, scores: Sequence[int],
             focus: Sequence[tuple[int, int]]) -> set[int]:
    """A container that does not fit: its header, then whole members."""
    child = [(s - obj.start_line, e - obj.start_line) for s, e, _ in obj.children]
    keys = dict(zip(child, (k for _, _, k in obj.children)))
    first_child = child[0][0] if child else len(obj.lines)
    header_units = blocks(obj.lines, 0, first_child, starts=b.starts)
    shown: set[int] = set()
    # the header from the top, whole blocks, at most HEADER_LINES lines and a
    # quarter of the share (past its first block): the members are the answer
    for a, z in header_units:
        grown = shown | set(range(a, z + 1))
        if shown and (len(grown) > HEADER_LINES or not _fits(b, grown, budget // 4)):
            break
        if not _fits(b, grown, budget):
            break
        shown = grown
    # what the retrieval pointed at, strongest first: a member inside a direct child
    # (a method of a nested class) comes with that child's declaration, and a child
    # too big to show whole whose members are pointed at is left to them
    wanted: list[tuple[tuple[int, int], set[int]]] = []
    for fa, fz in focus:
        c = next((c for c in child if c[0] <= fa and fz <= c[1]), None)
        if c is None or (fa, fz) == c:
            unit = c or (fa, fz)
            if all(unit != u for u, _ in wanted):
                wanted.append((unit, set()))
        elif all((fa, fz) != u for u, _ in wanted):
            wanted.append(((fa, fz), _declaration(obj, c, keys[c])))
    pointed = [u for u, _ in wanted]
    ranked = sorted((c for c in child if c not in pointed and sum(scores[c[0]:c[1] + 1]) > 0),
                    key=lambda c: (-sum(scores[c[0]:c[1] + 1]), c[0]))
    windowed = False
    for (a, z), above in [*wanted, *[(c, set()) for c in ranked]]:
        grown = shown | above | set(range(a, z + 1))
        if _fits(b, grown, budget):
            shown = grown
        elif not windowed and not any(a <= u[0] and u[1] <= z and u != (a, z) for u in pointed):
            # the most wanted member that does not fit whole: a window inside it,
            # from its first line when the retrieval pointed at it (its signature)
            windowed = True
            anchor = a if (a, z) in pointed or not scores else max(range(a, z + 1), key=lambda i: (scores[i], -i))
            base = shown | above if _fits(b, shown | above, budget) else shown
            shown = _window(b, budget, blocks(obj.lines, a, z + 1, starts=b.starts), anchor, scores, base)
    if not wanted and not ranked:
        # nothing points inside: the members from the top, as they fit
        for a, z in child:
            grown = shown | set(range(a, z + 1))
            if not _fits(b, grown, budget):
                break
            shown = grown
    return shown


_COMMENT_STARTS = ("/*", "*", "//", "#", '"""', "'''")
_DECLARATION_LINES = 4


def definition_index(lines: Sequence[str], identifier: str, limit: int = 40) -> int | None:
    """Where in ``lines`` (an object's) the object is defined: the first of the first
    ``limit`` lines that names it and is not a comment (past decorators, annotations and
    a Javadoc that may name it too), else its first line of code, else its first
    non-blank line; None when all are blank."""
    name = re.sub(r"#\w+|\(.*\)$", "", identifier).rsplit(".", 1)[-1]
    pattern = re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])") if name else None
    code = blank = None
    for i, line in enumerate(lines[:limit]):
        if not line.strip():
            continue
        if blank is None:
            blank = i
        if line.lstrip().startswith(_COMMENT_STARTS):
            continue
        if code is None:
            code = i
        if pattern is not None and pattern.search(line):
            return i
    return code if code is not None else blank


def _declaration(obj: ObjectText, unit: tuple[int, int], key: str) -> set[int]:
    """The lines that declare the member ``unit`` spans (``key``: its object key): its
    definition line (``definition_index``) to the one that opens its body (ends with
    ``{`` or ``:``), at most ``_DECLARATION_LINES``."""
    a, z = unit
    at = definition_index(obj.lines[a:z + 1], key.rsplit(":", 1)[-1])
    if at is None:
        return set()
    a += at
    end = a
    while end < min(z, a + _DECLARATION_LINES - 1) and not obj.lines[end].rstrip().endswith(("{", ":")):
        end += 1
    return set(range(a, end + 1))


__all__ = ["CallSite", "blocks", "definition_index", "display_identifier", "full_agent_rendering", "render_for_agent",
           "statement_starts"]
