"""``allocate``: ranked views in, C(q) and its record out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from vitalrag.allocate.base import Allocation, AllocationParams, Policy, make_request
from vitalrag.allocate.controls import get_policy
from vitalrag.allocate.provenance import ObjectKey
from vitalrag.allocate.source import GraphObjectSource, ObjectSource, ViewObjectSource
from vitalrag.graph.store import GraphStore
from vitalrag.model import ScoredView
from vitalrag.tokens import TokenCounter, get_counter


def allocate(
    query: str,
    views: Sequence[ScoredView],
    policy: str | Policy = "vital",
    budget: int = 4096,
    k: int = 5,
    source: ObjectSource | None = None,
    store: GraphStore | None = None,
    *,
    b_obj: int = 1024,
    b_min: int = 128,
    counter: TokenCounter | None = None,
) -> Allocation:
    """Allocate K slots and ``budget`` tokens among ``views`` for ``query``.

    Object text comes from ``source``; without one, from ``store`` when given
    (views it does not know are rendered from themselves), else from the views.
    Same-file peers come from the source and, when given, the store."""
    chosen = get_policy(policy) if isinstance(policy, str) else policy
    params = AllocationParams(budget=budget, k=k, b_obj=b_obj, b_min=b_min)
    if source is None:
        source = GraphObjectSource(store) if store is not None else ViewObjectSource()
    graph = GraphObjectSource(store) if store is not None else None

    def same_file(keys: Sequence[ObjectKey]) -> Mapping[ObjectKey, frozenset[ObjectKey]]:
        peers = dict(source.same_file(keys))
        if graph is not None and not isinstance(source, GraphObjectSource):
            for key, found in graph.same_file([k for k in keys if k not in peers]).items():
                peers[key] = found
        return peers

    request = make_request(query, views, params, source, counter or get_counter(), same_file)
    return chosen.allocate(request)
