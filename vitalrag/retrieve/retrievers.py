"""The retrievers: BM25, dense and graph walk over a ``ViewIndex``, and
reciprocal-rank fusion over any of them.

Each is a ``Ranker``: a checked ``Query`` and its ``Scope`` in, the top ``k``
views out, each with its score and its rank in every retriever that found it.
``Fusion`` is one too, so a caller picks one by name (``Retriever.ranker``) and
never branches on which it got. (``Retriever``, in ``retrieve.api``, is the
facade over a graph store and its views.)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from vitalrag.errors import InputError
from vitalrag.graph.store import GraphStore
from vitalrag.kernel.text import identifiers
from vitalrag.model import ScoredView, View
from vitalrag.retrieve.dense import Embedder
from vitalrag.retrieve.fusion import rrf
from vitalrag.retrieve.index import Hits, ViewIndex
from vitalrag.retrieve.query import Query, Scope
from vitalrag.retrieve.walk import WalkConfig, anchors, walk

#: how deep each retriever's list goes before fusion
POOL = 100
#: walk-ranked objects whose body views are looked up at once
WALK_CHUNK = 500


class DenseUnavailable(InputError):
    """The dense retriever was asked for on an index built without embeddings."""


NO_EMBEDDINGS = ("this index has no embeddings (it was built with --no-embed); "
                 "re-index without --no-embed, or use --retriever bm25 or walk")


class Ranker(Protocol):
    """One way of ranking views for a query."""

    @property
    def name(self) -> str: ...

    def rank(self, query: Query, scope: Scope, k: int) -> list[ScoredView]:
        """The top ``k`` views for ``query`` among the repositories ``scope`` allows."""


def _ranked(hits: Hits, name: str) -> list[ScoredView]:
    return [ScoredView(v, s, ((name, rank),)) for rank, (v, s) in enumerate(hits, 1)]


@dataclass(frozen=True, slots=True)
class BM25:
    """Sparse search over the views' text (identifiers split into their words)."""

    index: ViewIndex
    name: str = "bm25"

    def rank(self, query: Query, scope: Scope, k: int) -> list[ScoredView]:
        return _ranked(self.index.bm25(query.text, k, scope.allowed), self.name)


@dataclass(frozen=True, slots=True)
class Dense:
    """Nearest views to the query's embedding. ``embedder``: the model of the
    views a search may return (loaded on first use)."""

    index: ViewIndex
    embedder: Callable[[frozenset[str] | None], Embedder]
    name: str = "dense"

    def rank(self, query: Query, scope: Scope, k: int) -> list[ScoredView]:
        if not self.index.has_dense:
            raise DenseUnavailable(NO_EMBEDDINGS)
        vector = self.embedder(scope.allowed).encode([query.text])[0]
        return _ranked(self.index.nearest(vector, k, scope.allowed), self.name)


@dataclass(frozen=True, slots=True)
class Walk:
    """The graph walk from the objects the query names and its file and line."""

    store: GraphStore
    index: ViewIndex
    config: WalkConfig = WalkConfig()
    name: str = "walk"

    def rank(self, query: Query, scope: Scope, k: int) -> list[ScoredView]:
        return _ranked(self.hits(query.text, k, repo=scope.repo, file=scope.path, line=query.line,
                                 allowed=scope.allowed), self.name)

    def hits(self, text: str, k: int, *, repo: str | None, file: str | None, line: int | None,
             allowed: frozenset[str] | None = None) -> Hits:
        # anchors only in the repositories searched: a name shared with another
        # repository would otherwise split its weight with objects never returned
        names = self.index.names_of(identifiers(text), allowed)
        seeds = anchors(self.store, text, names, repo=repo, path=file, line=line, config=self.config)
        scores = walk(self.store, seeds, self.config)
        ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
        out: Hits = []
        # the view the walk returns for a definition is its body (files, modules and
        # repositories have none and are passed through, not returned); looked up a
        # chunk of the ranking at a time, so a server store answers in few round trips
        for start in range(0, len(ranked), WALK_CHUNK):
            chunk = ranked[start:start + WALK_CHUNK]
            bodies = self.index.bodies([node for node, _ in chunk])
            for node, score in chunk:
                v = bodies.get(node)
                if v is not None and (allowed is None or v.repo in allowed):
                    out.append((v, score))
                    if len(out) >= k:
                        return out
        return out


@dataclass(frozen=True, slots=True)
class Fusion:
    """Reciprocal-rank fusion of ``parts``, each asked for its top ``depth``;
    ``weights`` by retriever name (1 when not given)."""

    parts: Sequence[Ranker]
    weights: Mapping[str, float] | None = None
    depth: int = POOL
    name: str = "fused"

    def rank(self, query: Query, scope: Scope, k: int) -> list[ScoredView]:
        found: dict[str, View] = {}
        rankings: dict[str, list[str]] = {}
        for part in self.parts:
            hits = part.rank(query, scope, self.depth)
            for h in hits:
                found.setdefault(h.view.id, h.view)
            rankings[part.name] = [h.view.id for h in hits]
        fused = rrf(rankings, self.weights)[:k]
        return [ScoredView(found[vid], score, ranks) for vid, score, ranks in fused]
