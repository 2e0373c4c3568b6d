"""The allocation policies, chosen by name: VITAL-RAG, the controls it is
compared against (paper Table 2, section 4.2) and its ablations (Table 6).

Every policy sees the same ranking (score descending, then input order), the
same K slots, per-object cap b_obj and budget B. Two things are rendered:

- **view**: the controls, as the paper defines them, paste each slot's
  representative retrieved view (a body, slice, signature, call site, test or
  window: whatever won the slot) as written, from its first line, whole lines
  only, with no descriptor, clipped at min(b_obj, budget left), in slot order
  until B runs out. A view that holds only part of a definition (a signature, a
  slice) shows only that part, so Recall@B can trail Recall@5 with room to spare.
- **definition**: VITAL-RAG and its rendering ablations show each object's own
  definition after a ``--- path:lines identifier`` descriptor, under token
  authority (Eq. 4) with a query-centred window; the ``*-object`` variants show
  it from its first line without token authority.

=====================  ======  ===============================================  ===========================
name                   unit    selection                                        rendering
=====================  ======  ===============================================  ===========================
raw-surface            view    top-K views as ranked                            view, from its first line
exact-dedup            view    top-K after dropping repeated normalised text    view, from its first line
canonical-5            object  strongest view per object g(v), top K            view, from its first line
file-quota             view    unseen paths first, then deferred views          view, from its first line
mmr                    view    0.5 relevance - 0.5 max Jaccard, greedy          view, from its first line
entity-first-4+1       object  core K-1 + one ungated same-file object          view, from its first line
vital / 4+1            object  core K-1 + one query-gated same-file object      definition, token authority
no-quotient            view    vital's selection with every view an object      definition, token authority
no-rendering           object  vital's selection                                view, from its first line
no-structure           view    = raw-surface (neither quotient nor rendering)   view, from its first line
5+0                    object  top K objects, no companion                      definition, token authority
3+2                    object  core K-2 + two query-gated companions            definition, token authority
entity-first-object    object  entity-first-4+1's selection                     definition, from line one
no-rendering-object    object  vital's selection                                definition, from line one
vital-fill             object  vital's K, then more objects while B lasts;      agent (numbered,
                               containment-aware; tests after code              whole statements)
=====================  ======  ===============================================  ===========================

``entity-first-object`` and ``no-rendering-object`` are not in the paper: they
separate what token authority adds from what rendering the definition instead
of the view adds. ``vital-fill`` is not one of the paper's policies either: it
is what agents get by default (``fill.py`` documents it); ``vital`` stays the
paper's method.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from vitalrag.allocate.base import (
    Allocation,
    AllocationRequest,
    Fate,
    Item,
    PaperPolicy,
    Policy,
    RankedView,
    finish,
    view_text,
)
from vitalrag.allocate.provenance import identifier_tokens, normalise_path
from vitalrag.allocate.fill import FillPolicy
from vitalrag.allocate.vital import Selected, VitalPolicy, object_decisions, quotient
from vitalrag.errors import InputError

Chosen = list[RankedView]
Decisions = dict[int, Fate]


def _view_items(chosen: Sequence[RankedView], reasons: dict[int, str]) -> list[Item]:
    return [Item(f"view:{rv.view.id}", "view", rv, view_text(rv), reasons[rv.rank]) for rv in chosen]


def _finish_views(name: str, request: AllocationRequest, chosen: Chosen, decisions: Decisions,
                  **extra: object) -> Allocation:
    reasons = {rv.rank: decisions[rv.rank].reason for rv in chosen}
    return finish(name, request, _view_items(chosen, reasons), decisions, rendering="verbatim",
                  extra_params={"unit": "view", **extra})


@dataclass(frozen=True, slots=True)
class RawSurface(PaperPolicy):
    """Raw surface: the top-K views exactly as ranked, each its own slot, so one
    object with several views (body, signature, call site) takes several slots
    (the paper's authority multiplication). ``no-structure`` is this policy:
    the ablation without quotient and without rendering (Table 6 reports the
    same numbers for both)."""

    name: str = "raw-surface"
    description: str = "top-K views as ranked, each its own slot; each view as written, clipped at b_obj"

    def allocate(self, request: AllocationRequest) -> Allocation:
        k = request.params.k
        chosen = list(request.ranked[:k])
        decisions = {rv.rank: Fate("representative", f"view ranked {rv.rank} of the top {k}")
                     for rv in chosen}
        for rv in request.ranked[k:]:
            decisions[rv.rank] = Fate("dropped", f"view ranked {rv.rank}, below the top {k}")
        return _finish_views(self.name, request, chosen, decisions)


def normalised_text_hash(text: str) -> str:
    """Exact dedup's identity: the view text with every whitespace run collapsed."""
    return hashlib.sha1(" ".join(text.split()).encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class ExactDedup(PaperPolicy):
    """Exact dedup: walk the ranking, drop a view whose normalised text
    (whitespace runs collapsed) hashes like an earlier view's, keep the first K
    survivors. Distinct renderings of one object all survive."""

    name: str = "exact-dedup"
    description: str = "top-K views after dropping repeats of normalised text; each view as written, clipped at b_obj"

    def allocate(self, request: AllocationRequest) -> Allocation:
        k = request.params.k
        first: dict[str, RankedView] = {}
        chosen: Chosen = []
        decisions: Decisions = {}
        for rv in request.ranked:
            h = normalised_text_hash(rv.view.text)
            if h in first:
                orig = first[h]
                decisions[rv.rank] = Fate("merged", f"same normalised text as view {orig.view.id} "
                                              f"(rank {orig.rank})", merged_into=orig.view.id)
                continue
            first[h] = rv
            if len(chosen) < k:
                chosen.append(rv)
                decisions[rv.rank] = Fate("representative", f"distinct text #{len(chosen)} in rank order")
            else:
                decisions[rv.rank] = Fate("dropped", f"distinct text beyond the first {k}")
        return _finish_views(self.name, request, chosen, decisions)


@dataclass(frozen=True, slots=True)
class Canonical5(PaperPolicy):
    """Canonical-5: keep the strongest view per object key g(v) (normalised path
    and identifier for external views, the node id for graph views) and take
    the top K of those views. No companion; the chosen view's own text is
    rendered, not the whole object."""

    name: str = "canonical-5"
    description: str = "strongest view per object, top K; each view as written, clipped at b_obj"

    def allocate(self, request: AllocationRequest) -> Allocation:
        k = request.params.k
        groups = quotient(request.ranked)
        n = len(groups)
        chosen_groups = groups[:k]
        chosen = [Selected(g, "view", f"strongest view of object ranked {i} of {n}")
                  for i, g in enumerate(chosen_groups, 1)]
        dropped = {g.key: f"object ranked {i} of {n}, below the top {k}"
                   for i, g in enumerate(groups[k:], k + 1)}
        decisions = object_decisions(groups, chosen, dropped)
        return _finish_views(self.name, request, [g.rep for g in chosen_groups], decisions)


def _path_of(rv: RankedView) -> str:
    return f"{rv.view.repo}:{normalise_path(rv.view.path)}"


@dataclass(frozen=True, slots=True)
class FileQuota(PaperPolicy):
    """File quota: walk the ranking taking views from normalised paths not yet
    represented, deferring views from paths already taken; if fewer than K were
    taken, fill the remaining slots from the deferred views in rank order."""

    name: str = "file-quota"
    description: str = "one view per unseen path first, then deferred views; each view as written, clipped at b_obj"

    def allocate(self, request: AllocationRequest) -> Allocation:
        k = request.params.k
        seen: dict[str, RankedView] = {}
        chosen: Chosen = []
        deferred: Chosen = []
        decisions: Decisions = {}
        for rv in request.ranked:
            if len(chosen) >= k:
                decisions[rv.rank] = Fate("dropped", f"not reached: {k} views from distinct paths were taken first")
                continue
            path = _path_of(rv)
            if path in seen:
                deferred.append(rv)
                continue
            seen[path] = rv
            chosen.append(rv)
            decisions[rv.rank] = Fate("representative", f"first view from path {path}")
        for rv in deferred:
            if len(chosen) < k:
                chosen.append(rv)
                decisions[rv.rank] = Fate("representative", "deferred (path already taken); fills a free slot")
            else:
                decisions[rv.rank] = Fate("dropped", f"deferred: path {_path_of(rv)} already taken "
                                              f"by view {seen[_path_of(rv)].view.id}")
        chosen.sort(key=lambda rv: rv.rank)
        return _finish_views(self.name, request, chosen, decisions)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    union = len(a | b)
    return len(a & b) / union if union else 0.0


@dataclass(frozen=True, slots=True)
class MMR(PaperPolicy):
    """Maximal marginal relevance (Carbonell and Goldstein 1998) with equal
    weights: greedily pick the view maximising
    0.5 * relevance - 0.5 * max Jaccard(tokens, tokens of a picked view), where
    relevance is the retrieval score min-max scaled to [0, 1] and tokens are the
    identifier-like tokens T(x); ties go to the better rank. Slots keep pick order."""

    name: str = "mmr"
    description: str = "greedy 0.5 relevance - 0.5 max Jaccard redundancy; each view as written, clipped at b_obj"
    weight: float = 0.5

    def allocate(self, request: AllocationRequest) -> Allocation:
        k = request.params.k
        ranked = list(request.ranked)
        rel: dict[int, float] = {}
        if ranked:
            hi, lo = ranked[0].score, ranked[-1].score
            rel = {rv.rank: (rv.score - lo) / (hi - lo) if hi > lo else 1.0 for rv in ranked}
        tokens = {rv.rank: identifier_tokens(rv.view.text) for rv in ranked}
        redundancy = {rv.rank: 0.0 for rv in ranked}
        chosen: Chosen = []
        decisions: Decisions = {}
        pool = ranked
        while pool and len(chosen) < k:
            best = max(pool, key=lambda rv: (self.weight * rel[rv.rank]
                                             - (1 - self.weight) * redundancy[rv.rank], -rv.rank))
            mmr = self.weight * rel[best.rank] - (1 - self.weight) * redundancy[best.rank]
            chosen.append(best)
            decisions[best.rank] = Fate("representative", f"MMR pick {len(chosen)} "
                                            f"(relevance {rel[best.rank]:.3f}, redundancy "
                                            f"{redundancy[best.rank]:.3f}, mmr {mmr:.3f})")
            pool = [rv for rv in pool if rv is not best]
            bt = tokens[best.rank]
            for rv in pool:
                redundancy[rv.rank] = max(redundancy[rv.rank], jaccard(tokens[rv.rank], bt))
        for rv in pool:
            decisions[rv.rank] = Fate("dropped", f"not among the {k} MMR picks (redundancy "
                                          f"{redundancy[rv.rank]:.3f})")
        return _finish_views(self.name, request, chosen, decisions, weight=self.weight)


#: what ``context``, ``get_context`` and ``explain`` use unless told otherwise
DEFAULT_POLICY = "vital-fill"


def _policies() -> list[Policy]:
    return [
        FillPolicy(),
        RawSurface(),
        ExactDedup(),
        Canonical5(),
        FileQuota(),
        MMR(),
        # Entity-First 4+1: four canonical objects plus one ungated candidate from
        # the provenance fiber (file) of a selected object, each slot's
        # representative view pasted as written. Same portfolio as no-rendering
        # except for the query gate.
        VitalPolicy("entity-first-4+1", "core K-1 + one ungated same-file object; each slot's "
                    "representative view as written, clipped at b_obj", gate=False, rendering="verbatim"),
        VitalPolicy(),
        # Companion boundary (Table 6b): 4+1 is VITAL-RAG under its slot name.
        VitalPolicy("4+1", "VITAL-RAG (companion boundary 4+1)"),
        VitalPolicy("5+0", "top K objects, no companion slot; definitions under token authority",
                    companions=0),
        VitalPolicy("3+2", "core K-2 + two query-gated same-file companions; definitions under "
                    "token authority", companions=2),
        # Ablations (Table 6a)
        VitalPolicy("no-quotient", "VITAL-RAG with every view its own slot: views of one object "
                    "compete for separate slots, each showing the object's definition", quotient=False),
        VitalPolicy("no-rendering", "VITAL-RAG's portfolio, each slot's representative view as "
                    "written, clipped at b_obj, until B runs out", rendering="verbatim"),
        RawSurface("no-structure", "neither quotient nor token authority: the raw surface"),
        # Not in the paper: the definition, from its first line, without token authority
        VitalPolicy("entity-first-object", "entity-first-4+1's portfolio, each object's definition "
                    "from its first line, clipped at b_obj", gate=False, rendering="prefix"),
        VitalPolicy("no-rendering-object", "VITAL-RAG's portfolio, each object's definition from "
                    "its first line, clipped at b_obj", rendering="prefix"),
    ]


POLICIES: dict[str, Policy] = {p.name: p for p in _policies()}


def policy_names() -> list[str]:
    return list(POLICIES)


def get_policy(name: str) -> Policy:
    """The policy registered as ``name``."""
    try:
        return POLICIES[name]
    except KeyError:
        raise InputError(f"unknown allocation policy {name!r}; choose one of: "
                         f"{', '.join(POLICIES)}") from None
