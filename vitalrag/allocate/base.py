"""What every allocation policy shares: parameters, the ranked candidates, the
``Policy`` seam, and the two ways of turning selected items into text.

- ``render_with_authority``: token authority (paper Eq. 4) and query-centred
  windows of each object's definition, after a descriptor; VITAL-RAG and the
  ablations that keep rendering.
- ``render_verbatim_views``: each slot's representative retrieved view as
  written, from its first line, no descriptor, clipped at b_obj and at the
  budget left, in order; the paper's controls (Table 2) and its no-rendering
  ablation, whose portfolio entries are surface views, not definitions.
- ``render_without_authority``: each item's text after a descriptor, from its
  first line, clipped the same way (the ``*-object`` variants: a definition
  without token authority).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple, Protocol, Self

from vitalrag.allocate.provenance import (
    ObjectKey,
    identifier_tokens,
    normalise_path,
    object_file,
    object_identifier,
    object_key,
)
from vitalrag.allocate.render import (
    Rendering,
    full_rendering,
    render_prefix,
    render_verbatim,
    render_window,
)
from vitalrag.allocate.source import ObjectSource, ObjectText, first_signature
from vitalrag.errors import InputError
from vitalrag.model import (
    AllocationRecord,
    Role,
    ScoredView,
    SlotRecord,
    View,
    ViewDecision,
    ViewStatus,
    split_lines,
)
from vitalrag.tokens import TokenCounter


#: the paper's per-object cap b_obj (section 5.4)
PAPER_B_OBJ = 1024


@dataclass(frozen=True, slots=True)
class AllocationParams:
    """K slots, token budget B, per-object cap b_obj and floor b_min (paper 5.4)."""

    budget: int = 4096
    k: int = 5
    b_obj: int = PAPER_B_OBJ
    b_min: int = 128

    def __post_init__(self) -> None:
        for name in ("budget", "k", "b_obj", "b_min"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InputError(f"allocation parameter {name} must be a whole number >= 0, got {value!r}")


@dataclass(frozen=True, slots=True)
class RankedView:
    """A candidate in retrieval order: ``rank`` 1 is the strongest."""

    rank: int
    view: View
    score: float
    key: ObjectKey

    @property
    def file(self) -> str:
        return object_file(self.view)


SameFileFn = Callable[[Sequence[ObjectKey]], Mapping[ObjectKey, frozenset[ObjectKey]]]


@dataclass(frozen=True, slots=True)
class AllocationRequest:
    query: str
    ranked: tuple[RankedView, ...]
    params: AllocationParams
    source: ObjectSource
    counter: TokenCounter
    query_tokens: frozenset[str]
    #: same-file peers of the given keys, for the keys the source or store knows
    same_file: SameFileFn


@dataclass(frozen=True, slots=True)
class Allocation:
    """C(q) and the record that explains it; ``parts`` are the renderings in
    slot order (``text`` is their concatenation)."""

    text: str
    record: AllocationRecord
    parts: tuple[str, ...] = ()

    @property
    def tokens(self) -> int:
        return self.record.tokens


class Policy(Protocol):
    """One way of filling K slots and a token budget from ranked views."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    #: the per-object cap when the caller names none
    @property
    def b_obj(self) -> int: ...

    def with_options(self, *, tests: str, line_numbers: bool) -> Policy:
        """This policy showing tests and line numbers as asked, where it has a choice."""

    def allocate(self, request: AllocationRequest) -> Allocation: ...


class PaperPolicy:
    """What the paper's policies share: its cap b_obj, and no options (tests
    are ranked as retrieved, lines shown as written)."""

    __slots__ = ()
    b_obj: ClassVar[int] = PAPER_B_OBJ

    def with_options(self, *, tests: str, line_numbers: bool) -> Self:
        return self


def rank_views(views: Sequence[ScoredView]) -> tuple[RankedView, ...]:
    """The retrieval order: score descending, then input order."""
    for sv in views:
        if not isinstance(sv.score, (int, float)) or math.isnan(sv.score):
            raise InputError(f"view {sv.view.id!r} has score {sv.score!r}; scores must be numbers")
    order = sorted(range(len(views)), key=lambda i: (-views[i].score, i))
    return tuple(RankedView(r + 1, views[i].view, float(views[i].score), object_key(views[i].view))
                 for r, i in enumerate(order))


@dataclass(frozen=True, slots=True)
class Item:
    """A selected candidate about to be rendered."""

    key: str
    role: Role
    rep: RankedView
    text: ObjectText
    reason: str


#: view kinds whose text is not the source lines as written
DERIVED_VIEW_KINDS = frozenset({"signature", "docstring"})


def view_text(rv: RankedView) -> ObjectText:
    """A view rendered as itself (view-level controls, the no-quotient ablation)."""
    v = rv.view
    lines = tuple(split_lines(v.text))
    return ObjectText(f"view:{v.id}", v.path, object_identifier(v), first_signature(lines),
                      v.start_line or 1, lines, f"{v.repo}:{normalise_path(v.path)}",
                      verbatim=v.kind not in DERIVED_VIEW_KINDS)


def token_authority(d: Sequence[int], budget: int, b_obj: int, b_min: int) -> list[int]:
    """Eq. 4: b_i = min(d_i, b_obj, [R_i - (m - i) * beta]+), R_i the budget not yet
    granted, beta = b_min when every object can get its floor, else 0."""
    m = len(d)
    beta = b_min if budget >= m * b_min else 0
    shares: list[int] = []
    granted = 0
    for i, d_i in enumerate(d, start=1):
        left = budget - granted
        b_i = min(d_i, b_obj, max(left - (m - i) * beta, 0))
        shares.append(b_i)
        granted += b_i
    return shares


def _slot(i: int, item: Item, r: Rendering, b: int) -> SlotRecord:
    return SlotRecord(
        slot=i, key=item.key, object_key=item.rep.key, role=item.role, score=item.rep.score,
        view_id=item.rep.view.id, path=item.text.path, identifier=item.text.identifier,
        d=r.full_tokens, b=b, tokens=r.tokens, clipped=r.clipped, spans=r.spans,
        reason=item.reason,
    )


def render_with_authority(items: Sequence[Item], request: AllocationRequest
                          ) -> tuple[list[str], list[SlotRecord]]:
    """Token authority, then each item's largest query-centred rendering within b_i."""
    counter, p = request.counter, request.params
    fulls = [full_rendering(item.text, counter) for item in items]
    shares = token_authority([f.tokens for f in fulls], p.budget, p.b_obj, p.b_min)
    texts, slots = [], []
    for i, (item, full, b) in enumerate(zip(items, fulls, shares), start=1):
        r = render_window(item.text, request.query_tokens, b, counter, full=full)
        texts.append(r.text)
        slots.append(_slot(i, item, r, b))
    return texts, slots


def _in_order(items: Sequence[Item], request: AllocationRequest,
              render: Callable[[ObjectText, int, TokenCounter], Rendering]
              ) -> tuple[list[str], list[SlotRecord]]:
    """Each item rendered by ``render`` within min(b_obj, budget left), in order."""
    counter, p = request.counter, request.params
    left = p.budget
    texts, slots = [], []
    for i, item in enumerate(items, start=1):
        allowance = min(p.b_obj, left)
        r = render(item.text, allowance, counter)
        left -= r.tokens
        texts.append(r.text)
        slots.append(_slot(i, item, r, allowance))
    return texts, slots


def render_without_authority(items: Sequence[Item], request: AllocationRequest
                             ) -> tuple[list[str], list[SlotRecord]]:
    """Each item after its descriptor, from its start, clipped at min(b_obj,
    budget left), in order."""
    return _in_order(items, request, render_prefix)


def render_verbatim_views(items: Sequence[Item], request: AllocationRequest
                          ) -> tuple[list[str], list[SlotRecord]]:
    """Each item's text as written, no descriptor, from its first line, clipped
    at min(b_obj, budget left), in order."""
    return _in_order(items, request, render_verbatim)


Renderer = Callable[[Sequence[Item], AllocationRequest], tuple[list[str], list[SlotRecord]]]

#: how a policy turns its items into text, by the name its record gives
RENDERINGS: dict[str, Renderer] = {
    "token-authority": render_with_authority,
    "prefix": render_without_authority,
    "verbatim": render_verbatim_views,
}


def finish(policy: str, request: AllocationRequest, items: Sequence[Item],
           decisions: Mapping[int, Fate], *, rendering: str,
           extra_params: Mapping[str, Any] | None = None) -> Allocation:
    """Render ``items`` (one of ``RENDERINGS``) and assemble C(q) with its record."""
    texts, slots = RENDERINGS[rendering](items, request)
    return finish_rendered(policy, request, slots, texts, decisions,
                           extra_params={"rendering": rendering, **(extra_params or {})})


def finish_rendered(policy: str, request: AllocationRequest,
                    slots: Sequence[SlotRecord], texts: Sequence[str], decisions: Mapping[int, Fate],
                    *, extra_params: Mapping[str, Any] | None = None) -> Allocation:
    """Assemble C(q) and its record from slots a policy has already rendered."""
    slot_of_view = {s.view_id: s.slot for s in slots}
    views = []
    for rv in request.ranked:
        d = decisions[rv.rank]
        target = rv.view.id if d.status == "representative" else d.merged_into
        slot = slot_of_view.get(target) if target is not None and d.status != "dropped" else None
        views.append(ViewDecision(rv.view.id, rv.rank, rv.score, rv.key, d.status, d.reason,
                                  d.merged_into, slot))
    p = request.params
    params: dict[str, Any] = {"budget": p.budget, "k": p.k, "b_obj": p.b_obj, "b_min": p.b_min,
                              "encoding": request.counter.name}
    params.update(extra_params or {})
    record = AllocationRecord(
        policy=policy, params=params, query=request.query,
        query_tokens=tuple(sorted(request.query_tokens)), views=tuple(views),
        slots=tuple(slots), tokens=sum(s.tokens for s in slots),
    )
    return Allocation("".join(texts), record, tuple(texts))


class Fate(NamedTuple):
    """A policy's verdict on one view, before slots are numbered."""

    status: ViewStatus
    reason: str
    merged_into: str | None = None


def make_request(query: str, views: Sequence[ScoredView], params: AllocationParams,
                 source: ObjectSource, counter: TokenCounter,
                 same_file: SameFileFn | None = None) -> AllocationRequest:
    return AllocationRequest(query, rank_views(views), params, source, counter,
                             identifier_tokens(query), same_file or source.same_file)


__all__ = [
    "PAPER_B_OBJ", "RENDERINGS", "Allocation", "AllocationParams", "AllocationRequest", "Fate", "Item",
    "PaperPolicy", "Policy", "RankedView", "finish", "finish_rendered", "make_request", "rank_views",
    "render_verbatim_views", "render_with_authority", "render_without_authority", "token_authority", "view_text",
]
