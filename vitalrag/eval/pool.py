"""The candidate pools every policy allocates from.

- ``FixedPool`` (paper Table 3 setting): the views our index has of each
  candidate object of the task (body, slices, signature, docstring, call
  sites, tests; no windows), scored by one fixed retriever, BM25 of the view
  text against the query over that pool. Every policy sees the same ranked
  pool, so only allocation differs.
- ``RetrievedPool``: the fused retriever (dense + BM25 + graph walk) over the
  whole repository, end to end.

Either way a view that shows the task's own file at or below the masked line
is left out: it would hand the answer (or code written after it) to the
allocator. The walk is anchored on the task's file (its imports), not on the
masked line, whose CALLS edges would leak the answer too.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from vitalrag.allocate.source import GraphObjectSource, ObjectText
from vitalrag.allocate.provenance import ObjectKey
from vitalrag.eval.tasks import Task
from vitalrag.graph.store import GraphStore
from vitalrag.model import ScoredView, View
from vitalrag.retrieve.query import MAX_QUERY_CHARS
from vitalrag.retrieve.sparse import SparseIndex

if TYPE_CHECKING:
    from vitalrag.retrieve.api import Retriever

#: views kept per task, strongest first (the retrievers' own pool depth)
DEFAULT_DEPTH = 100
POOL_KINDS = frozenset({"body", "slice", "signature", "docstring", "call_site", "test"})


def shows_future(view: View, task: Task) -> bool:
    """Does ``view`` show the task's file at or below the masked line?"""
    return view.path == task.path and view.end_line >= task.line


class Pool(Protocol):
    name: str

    def pool(self, task: Task) -> list[ScoredView]: ...


class FixedPool:
    """Candidate objects' views ranked by BM25 against the query."""

    name = "fixed"

    def __init__(self, views: Sequence[View], depth: int = DEFAULT_DEPTH) -> None:
        self.depth = depth
        by_object: dict[str, list[View]] = defaultdict(list)
        for v in sorted(views, key=lambda v: v.id):
            if v.kind in POOL_KINDS:
                by_object[v.object_id].append(v)
        self.by_object = dict(by_object)

    def pool(self, task: Task) -> list[ScoredView]:
        views = [v for oid in task.candidates for v in self.by_object.get(oid, ())
                 if not shows_future(v, task)]
        return bm25_rank(task.query, views, self.depth)


def bm25_rank(query: str, views: Sequence[View], depth: int) -> list[ScoredView]:
    """``views`` scored by BM25 over themselves, best first (ties by view id),
    the top ``depth``; views sharing no term with the query score 0."""
    if not views:
        return []
    index = SparseIndex.build([v.text for v in views])
    scores = [0.0] * len(views)
    for pos, score in index.search(query, len(views)):
        scores[pos] = score
    order = sorted(range(len(views)), key=lambda i: (-scores[i], views[i].id))[:depth]
    return [ScoredView(views[i], scores[i], (("bm25", rank),)) for rank, i in enumerate(order, 1)]


class RetrievedPool:
    """The fused retriever over the whole repository (end to end)."""

    name = "retrieved"

    def __init__(self, retriever: Retriever, depth: int = DEFAULT_DEPTH, *, model: str = "") -> None:
        self.retriever = retriever
        self.depth = depth
        #: the embedding model the dense retriever uses
        self.model = model

    def pool(self, task: Task) -> list[ScoredView]:
        # ask for more than depth: views of the future part of the file are dropped
        hits = self.retriever.search(
            searched_text(task.query), k=self.depth * 2, file=task.path, repo=task.repo)
        return [h for h in hits if not shows_future(h.view, task)][:self.depth]


def searched_text(query: str) -> str:
    """A task's query as a search takes it: a code context longer than a query may
    be (``MAX_QUERY_CHARS``) keeps its last whole lines that fit, those nearest the
    line to complete."""
    if len(query) <= MAX_QUERY_CHARS:
        return query
    tail = query[-MAX_QUERY_CHARS:]
    return tail.partition("\n")[2] or tail


class CachedGraphSource:
    """``GraphObjectSource`` that remembers the objects and same-file peers it has
    read: an evaluation renders the same candidates for every policy and budget."""

    def __init__(self, store: GraphStore) -> None:
        self._inner = GraphObjectSource(store)
        self._store = store
        self._objects: dict[ObjectKey, ObjectText] = {}
        self._known: dict[ObjectKey, bool] = {}
        self._peers: dict[ObjectKey, frozenset[ObjectKey] | None] = {}

    def objects(self, keys: Sequence[ObjectKey],
                views: Mapping[ObjectKey, Sequence[View]]) -> dict[ObjectKey, ObjectText]:
        missing = [k for k in keys if k not in self._objects]
        out = {k: self._objects[k] for k in keys if k in self._objects}
        if missing:
            unknown = [k for k in missing if k not in self._known]
            if unknown:
                found = self._store.get_objects(unknown)
                self._known.update({k: k in found for k in unknown})
            got = self._inner.objects(missing, views)
            for k, text in got.items():
                if self._known.get(k):  # texts built from views depend on the views: not cached
                    self._objects[k] = text
            out.update(got)
        return out

    def same_file(self, keys: Sequence[ObjectKey]) -> dict[ObjectKey, frozenset[ObjectKey]]:
        missing = [k for k in keys if k not in self._peers]
        if missing:
            found = self._inner.same_file(missing)
            for k in missing:
                self._peers[k] = found.get(k)
        return {k: p for k in keys if (p := self._peers[k]) is not None}
