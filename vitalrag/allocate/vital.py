"""VITAL-RAG (paper section 5): view quotient, core + companion, token authority.

1. Quotient (Eq. 2): views are grouped by their object g(v); an object's
   representative is its strongest view and its score is that view's score,
   never a sum, so more views of one object never buy it more authority.
   Objects are ordered by score, ties by object key (stable under additions).
2. Portfolio (Eq. 3): the core is the top min(K-1, |E|) objects. The one
   reserved slot goes to the best remaining object that lives in the file of a
   core object (the store's same-file peers when it knows the object, else
   path equality) and shares an identifier-like token with the query; failing
   that, to the best remaining object; with none left it is omitted.
3. Token authority (Eq. 4) and line-complete, query-centred rendering of each
   object's own definition, in allocation order; C(q) is their concatenation
   (Eq. 5).

``VitalPolicy`` takes the switches the paper's ablations turn (quotient,
rendering, companion count and gate), so the controls in ``controls.py`` that
share this selection are configurations of it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from vitalrag.allocate.base import (
    Allocation,
    AllocationRequest,
    Fate,
    Item,
    PaperPolicy,
    RankedView,
    finish,
    view_text,
)
from vitalrag.allocate.provenance import ObjectKey, identifier_tokens, object_identifier
from vitalrag.allocate.source import ObjectText
from vitalrag.model import Role, View


@dataclass(frozen=True, slots=True)
class ObjectGroup:
    """The views of one object, strongest first; ``views[0]`` represents it."""

    key: ObjectKey
    views: tuple[RankedView, ...]

    @property
    def rep(self) -> RankedView:
        return self.views[0]

    @property
    def score(self) -> float:
        return self.views[0].score


def quotient(ranked: Sequence[RankedView],
             key: Callable[[RankedView], str] = lambda rv: rv.key) -> list[ObjectGroup]:
    """Group views by ``key`` (g(v) by default) and order the objects by their
    representative's score, ties by key."""
    groups: dict[str, list[RankedView]] = {}
    for rv in ranked:  # ranked is in retrieval order, so each list is too
        groups.setdefault(key(rv), []).append(rv)
    out = [ObjectGroup(k, tuple(vs)) for k, vs in groups.items()]
    out.sort(key=lambda g: (-g.score, g.key))
    return out


class SameFile:
    """Which core object, if any, shares a file with a candidate object."""

    def __init__(self, core: Sequence[ObjectGroup],
                 peers: Mapping[ObjectKey, frozenset[ObjectKey]]) -> None:
        self._core = list(core)
        self._peers = peers

    def host(self, g: ObjectGroup) -> ObjectGroup | None:
        for c in self._core:
            peers = self._peers.get(c.key)
            if peers is not None:
                # the graph knows c's file; a path match still counts for an
                # external candidate, which the graph cannot name
                if g.key in peers or (not g.rep.view.object_id and g.rep.file and g.rep.file == c.rep.file):
                    return c
            elif g.rep.file and g.rep.file == c.rep.file:
                return c
        return None


def _gate_tokens(g: ObjectGroup) -> frozenset[str]:
    """T(v*): the representative view's text and identifier."""
    v = g.rep.view
    return identifier_tokens(v.text) | identifier_tokens(object_identifier(v))


@dataclass(frozen=True, slots=True)
class Selected:
    group: ObjectGroup
    role: Role
    reason: str


#: why the reserved slot went to the best remaining object
NO_COMPANION = "fill: no remaining object qualifies as a companion; best remaining object"


def companion(candidates: Iterable[ObjectGroup], same_file: SameFile, query_tokens: frozenset[str], *,
              gate: bool, why: dict[ObjectKey, str]) -> Selected | None:
    """The first of ``candidates`` in the file of a core object (Eq. 3) that,
    when ``gate``, shares an identifier with the query; ``why`` collects why
    each one passed over is not a companion."""
    for g in candidates:
        host = same_file.host(g)
        if host is None:
            why[g.key] = "not in the file of a core object"
            continue
        if not gate:
            return Selected(g, "companion", f"companion (ungated): in the file of core object {host.key}")
        shared = query_tokens & _gate_tokens(g)
        if shared:
            return Selected(g, "companion", f"companion: in the file of core object {host.key}, "
                            f"shares {', '.join(sorted(shared))} with the query")
        why[g.key] = f"in the file of core object {host.key} but shares no identifier with the query"
    return None


def select_portfolio(groups: Sequence[ObjectGroup], k: int, companions: int, *, gate: bool,
                     peers: Callable[[Sequence[ObjectKey]], Mapping[ObjectKey, frozenset[ObjectKey]]],
                     query_tokens: frozenset[str]) -> tuple[list[Selected], dict[ObjectKey, str]]:
    """Core top min(k - companions, |E|), then ``companions`` reserved slots.

    Returns the portfolio in allocation order and, for every object left out,
    why."""
    n = len(groups)
    slots = min(k, n)
    n_comp = min(companions, k)
    n_core = min(k - n_comp, n)
    core = list(groups[:n_core])
    chosen = [Selected(g, "core", f"core: object ranked {i} of {n}") for i, g in enumerate(core, 1)]
    remaining = list(groups[n_core:])
    rank_of = {g.key: i for i, g in enumerate(groups, 1)}
    why: dict[ObjectKey, str] = {}
    same_file = SameFile(core, peers([g.key for g in core]) if core and n_comp else {})
    for _ in range(n_comp):
        if len(chosen) >= slots or not remaining:
            break
        pick = companion(remaining, same_file, query_tokens, gate=gate, why=why)
        if pick is None:
            pick = Selected(remaining[0], "fill", NO_COMPANION)
        remaining.remove(pick.group)
        why.pop(pick.group.key, None)
        chosen.append(pick)
    dropped = {}
    reserved = [s.group.key for s in chosen[n_core:]]
    for g in remaining:
        base = f"object ranked {rank_of[g.key]} of {n}, below the {n_core} core objects"
        if g.key in why:
            dropped[g.key] = f"{base}; not a companion: {why[g.key]}"
        elif reserved:
            dropped[g.key] = f"{base}; the reserved slots went to {', '.join(reserved)}"
        else:
            dropped[g.key] = f"{base}; no slot reserved beyond the core"
    return chosen, dropped


def object_decisions(groups: Sequence[ObjectGroup], chosen: Sequence[Selected],
                     dropped: Mapping[ObjectKey, str]) -> dict[int, Fate]:
    """Per view: representative of a slot, merged into its object's representative, or dropped."""
    reason_of = {s.group.key: s.reason for s in chosen}
    out: dict[int, Fate] = {}
    for g in groups:
        rep = g.rep
        if g.key in reason_of:
            out[rep.rank] = Fate("representative", reason_of[g.key])
            fate = "the object holds a slot"
        else:
            out[rep.rank] = Fate("dropped", dropped[g.key])
            fate = "the object got no slot"
        for rv in g.views[1:]:
            out[rv.rank] = Fate("merged",
                f"another view of {g.key} (rank {rep.rank}, score {rep.score:g}) represents it; {fate}",
                merged_into=rep.view.id)
    return out


#: how an object-level policy renders each slot (``base.RENDERINGS``)
ObjectRendering = Literal["token-authority", "prefix", "verbatim"]


@dataclass(frozen=True, slots=True)
class VitalPolicy(PaperPolicy):
    """VITAL-RAG with the switches its ablations turn.

    ``quotient``: group views by object (off: every view is its own slot,
    though each slot still shows its object's definition).
    ``companions``: reserved slots after the core of K - companions objects.
    ``gate``: a companion must share a query identifier (off: any same-file object).
    ``rendering``: ``token-authority``, Eq. 4 shares and query-centred windows
    of each object's definition (VITAL-RAG); ``verbatim``, each slot's
    representative retrieved view as written, from its first line, no
    descriptor, clipped at b_obj and at the budget left (Entity-First 4+1, No
    rendering: the paper's surface rendering); ``prefix``, the object's
    definition after a descriptor from its first line, clipped the same way."""

    name: str = "vital"
    description: str = ("VITAL-RAG: view quotient, core K-1 + one query-relevant same-file companion; "
                        "each object's definition under token authority")
    quotient: bool = True
    companions: int = 1
    gate: bool = True
    rendering: ObjectRendering = "token-authority"

    def allocate(self, request: AllocationRequest) -> Allocation:
        p = request.params
        if self.quotient:
            groups = quotient(request.ranked)
        else:
            groups = quotient(request.ranked, key=lambda rv: f"view:{rv.view.id}")
        chosen, dropped = select_portfolio(
            groups, p.k, self.companions, gate=self.gate, peers=request.same_file,
            query_tokens=request.query_tokens)
        if self.rendering == "verbatim":
            texts: dict[ObjectKey, ObjectText] = {}
        else:
            # the object's definition; without the quotient several slots may show one object
            keys = list(dict.fromkeys(s.group.rep.key for s in chosen))
            wanted = set(keys)
            views: dict[ObjectKey, list[View]] = {}
            for rv in request.ranked:  # in retrieval order: strongest first
                if rv.key in wanted:
                    views.setdefault(rv.key, []).append(rv.view)
            texts = request.source.objects(keys, views)
        # a source that cannot name an object still lets it show its strongest view
        items = [Item(s.group.key, s.role, s.group.rep,
                      texts.get(s.group.rep.key) or view_text(s.group.rep), s.reason) for s in chosen]
        return finish(self.name, request, items, object_decisions(groups, chosen, dropped),
                      rendering=self.rendering,
                      extra_params={"core": max(p.k - min(self.companions, p.k), 0),
                                    "companions": self.companions, "gate": self.gate,
                                    "quotient": self.quotient, "unit": "object" if self.quotient else "view"})
