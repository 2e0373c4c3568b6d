"""``vital-fill``: the allocation agents get by default (``context``, ``get_context``,
``explain``). VITAL-RAG's invariants, and the whole budget used.

1. **Quotient** (as ``vital``): one slot per object; an object's score is its
   strongest view's. A ``test`` view (a test that exercises the object) only
   supports its object: it sets the score only when the object has no other view,
   and then at half.
2. **Ranking for the question.** An object the query names exactly (a qualified
   name such as ``JsonPrimitive.hashCode``, or a code-like identifier such as
   ``send_request`` or ``parseHeader``) comes first. Tests come after every
   implementation object unless the question is about tests (``tests="auto"``:
   the query says test, fixture, mock, assert, ...); ``"include"`` ranks them as
   retrieved, ``"exclude"`` drops them.
3. **Containment.** An object and an object it contains never both take a slot:
   an object inside one already chosen is merged into it (and steers its
   window: the container shows it first); an object containing one already
   chosen is left out (its member is there).
4. **Core and companion** (as ``vital``): the first K-1 objects, then the best
   remaining object in a core object's file that shares an identifier with the
   query, else the best remaining one. Their shares are Eq. 4's. At a small B
   fewer slots are guaranteed (``guaranteed``: their mean share at least two
   floors b_min, so K=4 at B=1,024), lest the floors Eq. 4 keeps for the later
   slots clip the first objects; filling admits the others as before.
5. **Filling.** K is a minimum, not a cap: a share a rendering did not use
   returns to the budget, and further objects are admitted in rank order, each
   with min(d_i, b_obj, budget left), until the next one would get less than
   min(d_i, b_min). The shares never add up to more than B.
6. **Outline** (``outline``, a share of B kept from filling): once the next
   object no longer gets its share, the objects ranked after it are shown by
   their definition line alone (role ``outline``) while the budget lasts. The
   filling also leaves ``new_files`` tokens for the definition lines of files
   not shown yet, which come first (at a small B the whole outline puts them first).
7. **Rendering** (``agent_render``): shown line ranges in the descriptor, line
   numbers, whole statements, class header plus the members asked for, the call
   site when a call-site view won the slot; a member shows the definition line of
   each retrieved object containing it (``outer_lines``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal, cast

from vitalrag.allocate.agent_render import (
    GAP,
    CallSite,
    definition_index,
    display_identifier,
    full_agent_rendering,
    render_for_agent,
)
from vitalrag.allocate.base import (
    Allocation,
    AllocationRequest,
    Fate,
    RankedView,
    finish_rendered,
    token_authority,
    view_text,
)
from vitalrag.allocate.provenance import ObjectKey, identifier_tokens
from vitalrag.allocate.render import Rendering
from vitalrag.allocate.source import ObjectText
from vitalrag.allocate.vital import NO_COMPANION, ObjectGroup, SameFile, companion, quotient
from vitalrag.kernel.paths import is_test_path
from vitalrag.kernel.printable import escape_controls
from vitalrag.model import Role, SlotRecord, split_lines
from vitalrag.tokens import TokenCounter

TestsMode = Literal["auto", "include", "exclude"]
#: the most of B the outline keeps at a small budget (``FillPolicy.outline_floor``)
OUTLINE_MOST = 0.4
TESTS_MODES: tuple[str, ...] = ("auto", "include", "exclude")
#: query words that make a question about tests (``tests="auto"``)
TEST_WORDS = frozenset({"test", "tests", "testing", "tested", "fixture", "fixtures", "pytest", "unittest",
                        "junit", "mock", "mocks", "assert", "assertion", "assertions", "conftest"})
# A qualified name is looked for once per word, from its first letter (the digits
# and other word characters before it are skipped in one step): tried from every
# letter of a word, it would rescan the rest of the word each time, quadratic in a
# long word ("a" * 100_000). It finds what the plain pattern finds: a word either
# ends at a dot followed by a letter or holds no qualified name.
_DOTTED = re.compile(r"(?<![\w$])[^\WA-Za-z_]*(?P<name>[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+)")
_WORD = re.compile(r"[A-Za-z_$][\w$]*")
# an inner capital; two capitals then a small letter ("HTTPAdapter"): two are enough
# to match, and "{2,}" would backtrack through a long run of capitals from each one
_HUMP = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]")


def is_test(obj: ObjectText) -> bool:
    return obj.kind == "test" or is_test_path(obj.path)


def named_in_query(query: str) -> tuple[frozenset[str], frozenset[str]]:
    """(qualified names, code-like identifiers) the query spells out. A word is
    code-like when it has an underscore or an inner capital (``send_request``,
    ``parseHeader``, ``HTTPAdapter``), is followed by ``(``, or is a capitalised
    name past the query's first word (``Session``). The parts of a qualified
    name are not words of their own."""
    spans = [m.span("name") for m in _DOTTED.finditer(query)]
    dotted = frozenset(query[a:b].casefold() for a, b in spans)
    words = set()
    j = 0  # words and spans both come in order: the first span not ending before this word
    for m in _WORD.finditer(query):
        w = m.group(0)
        while j < len(spans) and spans[j][1] <= m.start():
            j += 1
        if j < len(spans) and spans[j][0] <= m.start():
            continue  # part of a qualified name: JsonPrimitive.hashCode is not every hashCode
        follows = query[m.end():m.end() + 1]
        if "_" in w.strip("_") or _HUMP.search(w) or (
                follows == "(" and len(w) > 2) or (w[:1].isupper() and any(c.islower() for c in w[1:])
                                                  and len(w) > 3 and m.start() > 0):
            words.add(w.casefold())
    return dotted, frozenset(words)


def names_match(obj: ObjectText, dotted: frozenset[str], words: frozenset[str]) -> bool:
    qual = re.sub(r"#\w+|\(.*\)$", "", obj.identifier).casefold()
    if not qual:
        return False
    if any(qual == d or qual.endswith("." + d) for d in dotted):
        return True
    return qual.rsplit(".", 1)[-1] in words or qual in words


@dataclass(frozen=True, slots=True)
class _Candidate:
    group: ObjectGroup
    text: ObjectText
    score: float
    tier: int  # 0 named by the query, 1 implementation, 2 tests

    @property
    def key(self) -> ObjectKey:
        return self.group.key


@dataclass
class _Slot:
    cand: _Candidate
    role: Role
    reason: str
    focus: list[tuple[int, int]] = field(default_factory=list)
    merged: list[ObjectKey] = field(default_factory=list)


def _support_score(g: ObjectGroup) -> tuple[RankedView, float]:
    """The object's representative and score: its strongest view that is not a
    test of it; a test view only when there is nothing else, at half."""
    for rv in g.views:
        if rv.view.kind != "test":
            return rv, rv.score
    return g.views[0], g.views[0].score / 2


def _contains(a: ObjectText, b: ObjectText) -> bool:
    return (a.file == b.file and bool(a.file) and a.verbatim and b.verbatim and a.key != b.key
            and a.start_line <= b.start_line and b.end_line <= a.end_line
            and (a.start_line, a.end_line) != (b.start_line, b.end_line))


@dataclass(frozen=True, slots=True)
class FillPolicy:
    """The agent-facing allocation: ``vital``'s invariants, budget-filling,
    containment-aware, ranked for the question (see the module docstring)."""

    name: str = "vital-fill"
    description: str = ("VITAL-RAG's quotient, companion and Eq. 4 shares, then more objects in rank "
                        "order while the budget lasts; containment-aware; tests after code; "
                        "numbered, statement-complete windows")
    tests: TestsMode = "auto"
    line_numbers: bool = True
    #: the per-object cap b_obj when the caller names none (``context`` and the MCP
    #: tool): twice the paper's 1,024, so one long function (half of the golds that
    #: are clipped at 1,024 fit under 2,048) is shown whole rather than as a window
    b_obj: int = 2048
    #: the share of B kept from filling for the outline: the definition lines of the
    #: next-ranked objects (with whatever filling left over)
    outline: float = 0.1
    #: at a small B the outline keeps at least this many tokens (up to ``OUTLINE_MOST``
    #: of B), and the core leaves them: the agent first sees where the answer may be,
    #: then as much of the first objects as fits
    outline_floor: int = 300
    #: the filling leaves this many tokens for the outline's first lines: the best
    #: object of each file not shown yet (at any B; a question about a topic wants
    #: the files, one about a change the objects; the core's shares are untouched)
    new_files: int = 400
    #: a slot shows the definition line of each retrieved object that contains it (its class)
    outer_lines: bool = True

    def with_options(self, *, tests: str, line_numbers: bool) -> FillPolicy:
        return dataclasses.replace(self, tests=cast(TestsMode, tests), line_numbers=line_numbers)

    def allocate(self, request: AllocationRequest) -> Allocation:
        """The steps of the module docstring, in order."""
        p = request.params
        groups = quotient(request.ranked)
        run = _Run(self, request, self._candidates(request, groups))
        k = self.guaranteed(p.k, p.budget, p.b_min)
        rest = run.core(max(k - 1, 0))
        if k >= 1:
            run.companion(rest)
        reserve, small = run.render_portfolio()
        run.outline(run.fill(rest, reserve), small)
        return run.finish(groups, k)

    @staticmethod
    def guaranteed(k: int, budget: int, b_min: int) -> int:
        """How many of the K slots get Eq. 4's shares: K, or fewer (at least one) when
        their mean share would be under two floors (K=4 at B=1,024; K=5 from 1,280
        with b_min=128; ``docs/allocation.md`` says what it bought)."""
        if b_min <= 0:
            return k
        return min(k, max(1, budget // (2 * b_min)))

    def _candidates(self, request: AllocationRequest, groups: Sequence[ObjectGroup]
                    ) -> tuple[list[_Candidate], dict[ObjectKey, str]]:
        """Steps 1 and 2: an object per group, scored by its strongest view that is
        not a test of it, ranked for the question; and why each object left out is."""
        keys = [g.key for g in groups]
        views = {g.key: [rv.view for rv in g.views] for g in groups}
        texts = request.source.objects(keys, views)
        about_tests = bool(identifier_tokens(request.query) & TEST_WORDS)
        dotted, words = named_in_query(request.query)
        fates: dict[ObjectKey, str] = {}
        cands: list[_Candidate] = []
        for g in groups:
            text = texts.get(g.key) or view_text(g.rep)
            rep, score = _support_score(g)
            test = is_test(text)
            if test and self.tests == "exclude":
                fates[g.key] = "a test, and tests are excluded (--tests exclude)"
                continue
            tier = 0 if names_match(text, dotted, words) else 1
            if test and self.tests == "auto" and not about_tests:
                tier = 2
            cands.append(_Candidate(ObjectGroup(g.key, (rep, *[v for v in g.views if v is not rep])),
                                    text, score, tier))
        cands.sort(key=lambda c: (c.tier, -c.score, c.key))
        return cands, fates


class _Run:
    """One ``vital-fill`` allocation under way: the ranked candidates, the slots
    taken so far and their renderings, and why each other object has none."""

    def __init__(self, policy: FillPolicy, request: AllocationRequest,
                 ranked: tuple[list[_Candidate], dict[ObjectKey, str]]) -> None:
        self.policy, self.request = policy, request
        self.cands, self.fates = ranked
        self.n = len(self.cands)
        self.rank_of = {c.key: i for i, c in enumerate(self.cands, 1)}
        self.containers = _containers(self.cands) if policy.outer_lines else {}
        self._outer: dict[ObjectKey, tuple[str, list[int], int]] = {}
        self.slots: list[_Slot] = []
        self.renders: list[Rendering] = []
        self.used = 0

    def place(self, c: _Candidate) -> bool:
        """Step 3: merge ``c`` into a chosen container, or leave it out beside a
        chosen member; True when it still needs a slot of its own."""
        for s in self.slots:
            if _contains(s.cand.text, c.text):
                s.focus.append((c.text.start_line, c.text.end_line))
                s.merged.append(c.key)
                self.fates[c.key] = f"inside {s.cand.key}, which holds a slot: shown there"
                return False
            if _contains(c.text, s.cand.text):
                self.fates[c.key] = f"contains {s.cand.key}, which holds a slot"
                return False
        return True

    def core(self, k_core: int) -> list[_Candidate]:
        """Step 4: the first ``k_core`` objects (after containment); returns the rest."""
        rest: list[_Candidate] = []
        for c in self.cands:
            if len(self.slots) < k_core:
                if self.place(c):
                    self.slots.append(_Slot(c, "core", f"core: object ranked {self.rank_of[c.key]} of {self.n}"
                                            + (" (named by the query)" if c.tier == 0 else "")))
            else:
                rest.append(c)
        return rest

    def companion(self, rest: list[_Candidate]) -> None:
        """Step 4: the paper's companion (``vital.companion``) among the objects of
        ``rest`` still to be placed, else the best of them; taken out of ``rest``."""
        core = [s.cand for s in self.slots]
        peers = self.request.same_file([c.key for c in core]) if core else {}
        of_key = {c.key: c for c in rest}

        def placeable() -> Iterator[ObjectGroup]:
            for c in list(rest):
                if self.place(c):
                    yield c.group
                else:
                    rest.remove(c)

        pick = companion(placeable(), SameFile([c.group for c in core], peers), self.request.query_tokens,
                         gate=True, why={})
        if pick is not None:
            slot = _Slot(of_key[pick.group.key], pick.role, pick.reason)
        elif rest:
            slot = _Slot(rest[0], "fill", NO_COMPANION)
        else:
            return
        rest.remove(slot.cand)
        self.slots.append(slot)

    def render_portfolio(self) -> tuple[int, bool]:
        """Eq. 4 over the slots taken, each rendered (a share it does not use returns
        to the budget). Returns the tokens kept from filling for the outline, and
        whether B is small (the core then leaves the outline its floor)."""
        policy, p = self.policy, self.request.params
        calls = [_call_site(s.cand) for s in self.slots]
        fulls = [self.full(s.cand, call) for s, call in zip(self.slots, calls)]
        extras = [self.outer(s.cand)[2] for s in self.slots]
        reserve = int(p.budget * policy.outline)  # kept from filling (the core takes its Eq. 4 shares of B)
        core_budget = p.budget
        small = bool(policy.outline) and policy.outline_floor > reserve
        if small:
            reserve = int(min(policy.outline_floor, p.budget * OUTLINE_MOST))
            core_budget = p.budget - reserve
        elif policy.outline:
            reserve += policy.new_files
        shares = token_authority([f.tokens + e for f, e in zip(fulls, extras)], core_budget, p.b_obj, p.b_min)
        for s, call, b, full in zip(self.slots, calls, shares, fulls):
            self.renders.append(self.render(s, b, call, full))
        self.used = sum(r.tokens for r in self.renders)
        return reserve, small

    def fill(self, rest: Sequence[_Candidate], reserve: int) -> list[_Candidate]:
        """Step 5: further objects in rank order while the budget lasts; returns the
        objects left to the outline."""
        p, n = self.request.params, self.n
        stop = ""
        tail: list[_Candidate] = []
        for c in rest:
            if stop and self.policy.outline:
                tail.append(c)
                continue
            if stop:
                self.fates.setdefault(c.key, stop)
                continue
            if not self.place(c):
                continue
            s = _Slot(c, "fill", f"fill: object ranked {self.rank_of[c.key]} of {n}, admitted while budget "
                      "remained")
            call = _call_site(c)
            full = self.full(c, call)
            left = p.budget - reserve - self.used
            share = min(full.tokens + self.outer(c)[2], p.b_obj, left)
            if share < min(full.tokens, p.b_min):
                if self.policy.outline:
                    stop = "outline"
                    tail.append(c)
                    continue
                stop = (f"object ranked {self.rank_of[c.key]} of {n}: the budget left ({left} tokens) is under "
                        f"its floor min(d={full.tokens}, b_min={p.b_min})")
                self.fates[c.key] = stop
                continue
            r = self.render(s, share, call, full)
            if r.tokens == 0:
                self.fates[c.key] = f"object ranked {self.rank_of[c.key]} of {n}: not even its descriptor fits"
                continue
            self.slots.append(s)
            self.renders.append(r)
            self.used += r.tokens
        return tail

    def outline(self, tail: list[_Candidate], small: bool) -> None:
        """Step 6: one definition line each for the next objects while the budget
        lasts: first those of files not shown yet (at a small B all of them, else
        the best of each while ``new_files`` tokens last)."""
        p, n = self.request.params, self.n
        shown = {s.cand.text.file for s in self.slots}
        if small:
            tail.sort(key=lambda c: c.text.file in shown)
        elif self.policy.new_files:
            first: list[_Candidate] = []
            block = 0
            for c in tail:
                if c.text.file in shown or block >= self.policy.new_files:
                    continue
                line_r = outline_rendering(c.text, self.request.counter, self.policy.line_numbers)
                if line_r is not None:
                    first.append(c)
                    shown.add(c.text.file)
                    block += line_r.tokens
            tail = first + [c for c in tail if c not in first]
        for c in tail:
            if not self.place(c):
                continue
            line_r = outline_rendering(c.text, self.request.counter, self.policy.line_numbers)
            if line_r is None:
                self.fates[c.key] = f"object ranked {self.rank_of[c.key]} of {n}: nothing to outline"
                continue
            if self.used + line_r.tokens > p.budget or line_r.tokens > p.b_obj:
                self.fates[c.key] = (f"object ranked {self.rank_of[c.key]} of {n}: its definition line "
                                     f"({line_r.tokens} tokens) did not fit the {p.budget - self.used} left")
                break
            self.slots.append(_Slot(c, "outline", f"outline: object ranked {self.rank_of[c.key]} of {n}, "
                                    "its definition line only"))
            self.renders.append(line_r)
            self.used += line_r.tokens

    def full(self, c: _Candidate, call: CallSite | None) -> Rendering:
        return full_agent_rendering(c.text, self.request.counter, call=call, line_numbers=self.policy.line_numbers)

    def outer(self, c: _Candidate) -> tuple[str, list[int], int]:
        """The definition lines of the retrieved objects containing ``c``, each
        followed by a gap: (text, their line numbers, tokens)."""
        if c.key in self._outer:
            return self._outer[c.key]
        prefix = ""
        lines: list[int] = []
        width = len(str(c.text.end_line))
        for o in self.containers.get(c.key, ()):
            line = definition_line(o)
            if line is None or not o.verbatim or line >= c.text.start_line or line in lines:
                continue  # only a line above the member's own
            code = o.lines[line - o.start_line].rstrip()
            prefix += (f"{line:>{width}} {code}\n" if self.policy.line_numbers else code + "\n") + GAP
            lines.append(line)
        tokens = 0
        if prefix:
            # the descriptor names these lines too (``render``); two tokens of slack: joined
            # to the member's text, the prefix may tokenize a little longer
            counter = self.request.counter
            tokens = counter.count(prefix) + counter.count(",".join(map(str, lines)) + ",") + 2
        self._outer[c.key] = prefix, lines, tokens
        return self._outer[c.key]

    def render(self, s: _Slot, budget: int, call: CallSite | None, full: Rendering) -> Rendering:
        """Step 7: ``s`` within ``budget``, after the definition lines of its containers."""
        request, numbers = self.request, self.policy.line_numbers
        prefix, lines, extra = self.outer(s.cand)
        if not prefix or extra >= budget // 2:
            return render_for_agent(s.cand.text, request.query_tokens, budget, request.counter,
                                    focus=s.focus, call=call, line_numbers=numbers, full=full)
        r = render_for_agent(s.cand.text, request.query_tokens, budget - extra, request.counter,
                             focus=s.focus, call=call, line_numbers=numbers, full=full)
        if not r.text:
            return r
        head, _, body = r.text.partition("\n")
        at = f"--- {escape_controls(s.cand.text.path)}:"
        if head.startswith(at):  # the descriptor names every shown line, the container's first
            head = at + ",".join(map(str, lines)) + "," + head[len(at):]
        text = f"{head}\n{prefix}{body}"
        n = request.counter.count(text)
        if n > budget:  # the joined text tokenizes longer than its parts: the member alone
            return render_for_agent(s.cand.text, request.query_tokens, budget, request.counter,
                                    focus=s.focus, call=call, line_numbers=numbers, full=full)
        # d: exact when the member is shown whole, else the estimate its share was given
        full_tokens = n if not r.clipped else max(n, r.full_tokens + extra)
        return Rendering(text, n, full_tokens, tuple(sorted({*((x, x) for x in lines), *r.spans})))

    def finish(self, groups: Sequence[ObjectGroup], k: int) -> Allocation:
        """C(q) and its record: each slot settled at what its rendering used, and
        every view's fate."""
        slots, fates = self.slots, self.fates
        records = []
        for i, (s, r) in enumerate(zip(slots, self.renders), start=1):
            rep = s.cand.group.rep
            reason = s.reason + (f"; shows {', '.join(s.merged)} inside it" if s.merged else "")
            # the share is settled at what the rendering used: the rest went back to the budget
            records.append(SlotRecord(
                slot=i, key=s.cand.key, object_key=rep.key, role=s.role, score=s.cand.score,
                view_id=rep.view.id, path=s.cand.text.path, identifier=s.cand.text.identifier,
                d=r.full_tokens, b=r.tokens, tokens=r.tokens, clipped=r.clipped, spans=r.spans,
                reason=reason))
        chosen = {s.cand.key: s for s in slots}
        rep_of = {g.key: g.rep for g in groups}
        decisions: dict[int, Fate] = {}
        for g in groups:
            slot = chosen.get(g.key)
            for rv in g.views:
                if slot is not None:
                    if rv is slot.cand.group.rep:
                        decisions[rv.rank] = Fate("representative", slot.reason)
                    else:
                        decisions[rv.rank] = Fate("merged", f"another view of {g.key} represents it; "
                                                  "the object holds a slot",
                                                  merged_into=slot.cand.group.rep.view.id)
                    continue
                host = next((s for s in slots if g.key in s.merged), None)
                if host is not None:
                    decisions[rv.rank] = Fate("merged", fates.get(g.key, "inside a chosen object"),
                                              merged_into=host.cand.group.rep.view.id)
                elif rv is rep_of[g.key]:
                    decisions[rv.rank] = Fate("dropped", fates.get(g.key, "not reached"))
                else:
                    decisions[rv.rank] = Fate("merged", f"another view of {g.key} (rank "
                                              f"{rep_of[g.key].rank}) represents it; the object got no slot",
                                              merged_into=rep_of[g.key].view.id)
        policy = self.policy
        return finish_rendered(policy.name, self.request, records, [r.text for r in self.renders], decisions,
                               extra_params={"k_min": k, "tests": policy.tests,
                                             "line_numbers": policy.line_numbers, "unit": "object",
                                             "rendering": "agent"})


def _containers(cands: Sequence[_Candidate]) -> dict[ObjectKey, list[ObjectText]]:
    """For each candidate, the candidates containing it, by first line (a file or
    module has no definition line: its first line would be noise)."""
    by_file: dict[str, list[_Candidate]] = {}
    for c in cands:
        by_file.setdefault(c.text.file, []).append(c)
    out: dict[ObjectKey, list[ObjectText]] = {}
    for c in cands:
        outer = [o.text for o in by_file[c.text.file]
                 if o.text.kind not in _NO_DEFINITION_LINE and _contains(o.text, c.text)]
        if outer:
            out[c.key] = sorted(outer, key=lambda t: t.start_line)
    return out


#: kinds of object that contain others but have no definition line to show above them
_NO_DEFINITION_LINE = frozenset({"repository", "module", "file"})


def definition_line(obj: ObjectText) -> int | None:
    """The file line where ``obj`` is defined (``definition_index``)."""
    at = definition_index(obj.lines, obj.identifier)
    return None if at is None else obj.start_line + at


def outline_rendering(obj: ObjectText, counter, line_numbers: bool) -> Rendering | None:  # noqa: ANN001
    """``obj`` as its definition line alone: its descriptor and that one line."""
    if not obj.verbatim or not obj.lines:
        return None
    line = definition_line(obj)
    if line is None:
        return None
    code = obj.lines[line - obj.start_line].rstrip()
    whole = f"{obj.start_line}-{obj.end_line}"
    head = f"--- {escape_controls(obj.path)}:{line} {display_identifier(obj.identifier)}"
    head += "" if whole == str(line) or obj.start_line == obj.end_line else f" (of {whole})"
    text = f"{head}\n{f'{line} ' if line_numbers else ''}{code}\n"
    n = counter.count(text)
    d = n if obj.start_line == obj.end_line else full_agent_rendering(obj, counter, line_numbers=line_numbers).tokens
    return Rendering(text, n, max(d, n), ((line, line),))


def _call_site(c: _Candidate) -> CallSite | None:
    v = c.group.rep.view
    if v.kind != "call_site":
        return None
    return CallSite(v.path, v.start_line, tuple(split_lines(v.text)))


__all__ = ["TESTS_MODES", "TEST_WORDS", "FillPolicy", "is_test", "is_test_path", "named_in_query"]
