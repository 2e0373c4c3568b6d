"""Line-complete renderings of one object within a token share (paper 5.4).

A rendering is a compact descriptor followed by a contiguous window of the
object's source lines::

    --- src/pkg/mod.py:12-40 Parser.parse
    --- sig: def parse(self, text: str) -> Tree:     (only when the window starts below line 12)
    <source lines>

Whole lines only: a window never ends inside a line, and a line that does not
fit is left out rather than cut.

The baselines render differently (``render_verbatim``): a retrieved view's own
lines from its first line, with no descriptor, as a surface pipeline pastes a
chunk into the prompt. Every rendering starts with ``---`` and ends
with a newline, so BPE never merges across two renderings and the tokens of a
concatenation are the sum of the parts.

Growth is estimated with cached per-line counts and then checked with an exact
count of the joined text, because BPE merges some pieces across lines (runs of
blank lines) and a sum of line counts is not the count of their join.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from vitalrag.allocate.provenance import identifier_tokens
from vitalrag.allocate.source import ObjectText
from vitalrag.kernel.printable import escape_controls, one_line
from vitalrag.tokens import TokenCounter

#: the two sides a window grows toward
UP, DOWN = -1, 1


@dataclass(frozen=True, slots=True)
class Rendering:
    """One object's text in the context: ``tokens`` exact, ``full_tokens`` the
    unclipped rendering's (d_i), ``spans`` the source lines shown (inclusive)."""

    text: str
    tokens: int
    full_tokens: int
    spans: tuple[tuple[int, int], ...]

    @property
    def clipped(self) -> bool:
        return self.tokens < self.full_tokens


def descriptor(obj: ObjectText) -> str:
    """``--- path:start-end identifier``: where the lines below come from, on one
    line with no control character (``kernel.printable``)."""
    span = f":{obj.start_line}-{obj.end_line}" if obj.lines else ""
    return f"--- {escape_controls(obj.path)}{span} {one_line(obj.identifier)}".rstrip() + "\n"


def signature_line(obj: ObjectText) -> str:
    """The signature, shown when the window does not reach the object's first line."""
    sig = one_line(obj.signature)
    return f"--- sig: {sig}\n" if sig else ""


def unclipped(obj: ObjectText) -> str:
    """The rendering with no budget: descriptor and every line (rho-bar, whose
    tokens are d_i). The window starts at the first line, so no signature line."""
    return descriptor(obj) + "".join(line + "\n" for line in obj.lines)


def full_rendering(obj: ObjectText, counter: TokenCounter) -> Rendering:
    text = unclipped(obj)
    n = counter.count(text)
    spans = ((obj.start_line, obj.end_line),) if obj.lines and obj.verbatim else ()
    return Rendering(text, n, n, spans)


def line_scores(lines: Sequence[str], query_tokens: frozenset[str]) -> list[int]:
    """How many distinct query tokens each line contains."""
    if not query_tokens:
        return [0] * len(lines)
    out = []
    for line in lines:
        # a token of the line contains a query token as a substring, so lines
        # without one score 0 and skip the tokenizer (big classes have thousands)
        folded = line.casefold()
        if any(t in folded for t in query_tokens):
            out.append(len(identifier_tokens(line) & query_tokens))
        else:
            out.append(0)
    return out


def render_window(obj: ObjectText, query_tokens: frozenset[str], budget: int,
                  counter: TokenCounter, *, full: Rendering | None = None) -> Rendering:
    """The largest line-complete rendering of ``obj`` within ``budget`` tokens,
    its window centred on the line that best matches the query.

    The window starts at the line sharing most query tokens (the first such;
    the object's first line when none matches) and grows one line at a time
    toward the neighbour that matches more (the shorter side on ties, upward
    first) while the rendering fits. Query tokens that only name the object
    itself do not score lines: the descriptor already names it, and they would
    pull every window back to the definition line."""
    full = full or full_rendering(obj, counter)
    if full.tokens <= budget:
        return full
    scores = line_scores(obj.lines, query_tokens - identifier_tokens(obj.identifier))
    anchor = max(range(len(scores)), key=lambda i: (scores[i], -i)) if scores else 0
    return _grow(obj, budget, counter, full, anchor, scores)


def render_prefix(obj: ObjectText, budget: int, counter: TokenCounter, *,
                  full: Rendering | None = None) -> Rendering:
    """The descriptor and the object's lines from its first line, as many whole
    lines as fit in ``budget``: how the controls clip, without a query."""
    return render_window(obj, frozenset(), budget, counter, full=full)


def _without_leading_blanks(obj: ObjectText) -> ObjectText:
    skip = next((i for i, line in enumerate(obj.lines) if line.strip()), len(obj.lines))
    if not skip:
        return obj
    return replace(obj, start_line=obj.start_line + skip, lines=obj.lines[skip:])


def render_verbatim(obj: ObjectText, budget: int, counter: TokenCounter) -> Rendering:
    """``obj``'s lines as written, from its first line, as many whole lines as fit
    in ``budget``, with no descriptor: how the baselines paste a retrieved view.

    Leading blank lines are left out: they show nothing, and a part that began
    with one could merge with the previous part's last newline under BPE, so
    the tokens of a concatenation would no longer be the sum of the parts."""
    obj = _without_leading_blanks(obj)
    text = "".join(line + "\n" for line in obj.lines)
    n = counter.count(text)
    spans = ((obj.start_line, obj.end_line),) if obj.lines and obj.verbatim else ()
    full = Rendering(text, n, n, spans)
    if n <= budget:
        return full
    return _grow(obj, budget, counter, full, 0, None, bare=True)


def _grow(obj: ObjectText, budget: int, counter: TokenCounter, full: Rendering,
          anchor: int, scores: list[int] | None, *, bare: bool = False) -> Rendering:
    head = "" if bare else descriptor(obj)
    head_t = counter.count(head)
    if head_t > budget:
        return Rendering("", 0, full.tokens, ())
    sig = "" if bare else signature_line(obj)
    sig_t = counter.count(sig)
    lines = [line + "\n" for line in obj.lines]
    n = len(lines)
    # counted on demand: a window of b_obj tokens touches a few dozen lines of
    # an object that may have thousands
    known: dict[int, int] = {}

    def cost(j: int) -> int:
        c = known.get(j)
        if c is None:
            c = known[j] = counter.count_lines((lines[j],))[0]
        return c

    def build(lo: int, hi: int) -> str:
        return head + (sig if lo > 0 else "") + "".join(lines[lo:hi + 1])

    def header_only() -> Rendering:
        text = head + sig
        t = counter.count(text)
        if t > budget:
            text, t = head, head_t
        return Rendering(text, t, full.tokens, ())

    if n == 0 or head_t + (sig_t if anchor > 0 else 0) + cost(anchor) > budget:
        return header_only()

    w = Window(n, anchor, None if scores is None else scores.__getitem__)

    def step_cost(side: int) -> int:
        k = w.next(side)
        return cost(k) - (sig_t if k == 0 else 0)  # reaching the first line drops the signature line

    # Estimated growth from an exact base, then an exact check; repeat while the
    # estimate (which usually over-counts slightly) still leaves room.
    text = build(w.lo, w.hi)
    exact = counter.count(text)
    while True:
        est = exact
        grown = 0
        while True:
            for side in w.sides():
                c = step_cost(side)
                if est + c <= budget:
                    w.grow(side)
                    est += c
                    grown += 1
                    break
            else:
                break
        if not grown:
            break
        text = build(w.lo, w.hi)
        exact = counter.count(text)
        if exact > budget:
            while exact > budget and grown:
                w.undo()
                grown -= 1
                text = build(w.lo, w.hi)
                exact = counter.count(text)
            break
    if exact > budget:
        return header_only()
    spans = ((obj.start_line + w.lo, obj.start_line + w.hi),) if obj.verbatim else ()
    return Rendering(text, exact, full.tokens, spans)


class Window:
    """A run of units ``lo..hi`` (lines, or blocks of them) grown from the one at
    ``at``: toward the side whose next unit scores more (``gain``), on ties the
    side grown less, upward first. Both renderings grow their windows so."""

    def __init__(self, n: int, at: int, gain: Callable[[int], int] | None = None) -> None:
        self.n, self.at, self.lo, self.hi = n, at, at, at
        self._gain = gain or (lambda k: 0)
        self._steps: list[int] = []

    def sides(self) -> list[int]:
        """The sides it can grow toward, the one to try first first."""
        if self.lo == 0 or self.hi == self.n - 1:
            return [s for s, ok in ((UP, self.lo > 0), (DOWN, self.hi < self.n - 1)) if ok]
        up = (self._gain(self.lo - 1), self.lo - self.at)
        down = (self._gain(self.hi + 1), self.at - self.hi)
        return [UP, DOWN] if up >= down else [DOWN, UP]

    def next(self, side: int) -> int:
        """The unit growing toward ``side`` adds."""
        return self.lo - 1 if side == UP else self.hi + 1

    def grow(self, side: int) -> None:
        if side == UP:
            self.lo -= 1
        else:
            self.hi += 1
        self._steps.append(side)

    def undo(self) -> None:
        if self._steps.pop() == UP:
            self.lo += 1
        else:
            self.hi -= 1
