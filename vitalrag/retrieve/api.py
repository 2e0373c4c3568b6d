"""Retrieval over an index: dense, BM25, graph walk, or their reciprocal-rank fusion.

    >>> r = Index.open(".vitalrag").retriever()     # vitalrag.index
    >>> r.search("send a prepared request", k=10)   # fused
    >>> r.search("...", file="src/requests/api.py", line=60, retriever="walk")

Every result is a ``ScoredView``: the view (tagged with its object id), its
score, and the rank each retriever gave it. The retrievers themselves are
``Ranker``s (``retrieve.retrievers``); ``Retriever`` holds a store and its
views and hands out the one asked for by name.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

from vitalrag.errors import InputError
from vitalrag.graph.store import GraphStore, known_repositories
from vitalrag.model import ScoredView, View
from vitalrag.retrieve.dense import Embedder, make_embedder
from vitalrag.retrieve.index import ViewIndex
from vitalrag.kernel.text import identifier_parts, identifiers
from vitalrag.retrieve.query import Query, Scope
from vitalrag.retrieve.rank import PathWords, Ranked, files_named, rank, same_word, shape
from vitalrag.retrieve.retrievers import (
    NO_EMBEDDINGS,
    POOL,
    BM25,
    Dense,
    DenseUnavailable,
    Fusion,
    Ranker,
    Walk,
)
from vitalrag.retrieve.walk import WalkConfig

log = logging.getLogger(__name__)

RETRIEVERS = ("dense", "bm25", "walk", "fused")


class Retriever:
    """The retrievers over a graph store and a ``ViewIndex``: the local retrieval
    index, or (for a Neo4j store that holds views) the server's vector and fulltext
    indexes."""

    def __init__(self, store: GraphStore, views: ViewIndex, embedder: Embedder | None = None,
                 walk_config: WalkConfig = WalkConfig()) -> None:
        self.store = store
        self.views = views
        self._embedder = embedder
        self.walk_config = walk_config
        self._paths: dict[frozenset[str] | None, PathWords] = {}

    def embedder_for(self, allowed: frozenset[str] | None) -> Embedder:
        model = self.views.model_of(allowed)
        if model is None:
            raise DenseUnavailable(NO_EMBEDDINGS)
        if self._embedder is None or self._embedder.name != model:
            self._embedder = make_embedder(model)
        return self._embedder

    @property
    def embedder(self) -> Embedder:
        return self.embedder_for(None)

    def ranker(self, name: str = "fused", weights: Mapping[str, float] | None = None) -> Ranker:
        """The retriever called ``name`` (one of ``RETRIEVERS``); ``weights``: the
        fused retriever's, by retriever name."""
        singles: dict[str, Ranker] = {
            "bm25": BM25(self.views),
            "walk": Walk(self.store, self.views, self.walk_config),
            "dense": Dense(self.views, self.embedder_for),
        }
        if name in singles:
            return singles[name]
        if name != "fused":
            raise InputError(f"unknown retriever {name!r}: choose one of {', '.join(RETRIEVERS)}")
        parts = [singles["bm25"], singles["walk"]]
        if self.views.has_dense:
            parts.append(singles["dense"])
        else:
            log.warning("index has no embeddings: fusing bm25 and walk only")
        return Fusion(parts, weights, depth=POOL)

    # -- the public search ----------------------------------------------------------
    def search(self, query: str | Query, *, k: int = 20, retriever: str = "fused", file: str | None = None,
               line: int | None = None, repo: str | Sequence[str] | None = None,
               weights: Mapping[str, float] | None = None) -> list[ScoredView]:
        """The top ``k`` views for ``query``; ``repo`` (a name or several) limits
        every retriever to those repositories. A ``Query`` carries its own file,
        line and repositories."""
        if isinstance(query, Query):
            if (file, line, repo) != (None, None, None):
                raise InputError("a Query carries its file, line and repositories: pass them to Query.of")
        else:
            query = Query.of(query, file, line, repo)
        if k < 1:
            raise InputError(f"k must be at least 1, got {k}")
        if retriever == "fused" and weights is None:
            return self.ranked(query, k).objects[:k]
        return self.ranker(retriever, weights).rank(query, self.scope(query), k)

    def ranked(self, query: Query, k: int = POOL, *, spread: bool = True, priors: bool = True) -> Ranked:
        """The fused views for ``query``, ranked for the question (``retrieve.rank``):
        one entry per object in ``objects`` (at least ``k`` when found), and every
        view found, following its object, in ``views`` (``spread``, ``priors``: see ``rank``)."""
        scope = self.scope(query)
        fused = self.ranker("fused").rank(query, scope, max(k, POOL) * 3)
        words = identifiers(query.text)
        names = self.views.names_of(words, scope.allowed)
        asked = {w: names[w] for w in dict.fromkeys(words) if w in names}
        # the bodies of the named objects: for those the retrievers missed, and for
        # those they found only where they are called
        known = {h.view.object_id for h in fused if h.view.kind != "call_site"}
        wanted = [oid for ids in asked.values() for oid in ids if oid not in known]
        extra = self.views.bodies(wanted) if wanted else {}
        paths = self._path_words(scope)
        located = self._located(files_named(query.text, fused, names_of=asked, paths=paths), scope, query.text)
        return rank(query.text, fused, names_of=asked, extra=extra, paths=paths, located=located,
                    spread=spread, priors=priors)

    def _located(self, files: Sequence[str], scope: Scope, text: str) -> list[View]:
        """A view of each of ``files``: the body of its definition whose name shares
        most words with ``text`` (the first such, by line)."""
        if not files:
            return []
        words = shape(text).words
        repos = sorted(scope.allowed) if scope.allowed is not None else [None]
        out: list[View] = []
        for path in files:
            objs = [o for r in repos for o in self.store.find_objects(repo=r, path=path) if o.kind != "file"]
            objs.sort(key=lambda o: (-sum(any(same_word(w, p) for p in identifier_parts(o.name))
                                          for w in words), o.start_line, o.id))
            bodies = self.views.bodies([o.id for o in objs[:20]])
            view = next((bodies[o.id] for o in objs[:20] if o.id in bodies), None)
            if view is not None:
                out.append(view)
        return out

    def _path_words(self, scope: Scope) -> PathWords:
        key = scope.allowed
        found = self._paths.get(key)
        if found is None:
            repos = sorted(scope.allowed) if scope.allowed is not None else [None]
            paths = [o.path for r in repos for o in self.store.find_objects(repo=r, kind="file")]
            found = self._paths[key] = PathWords(paths)
        return found

    def scope(self, query: Query) -> Scope:
        """Where ``query`` searches in this store: the repositories it may return
        views of (every one: None), the repository of its file (or the only one
        searched), and the file's repo-relative path, its line checked."""
        names = list(query.repos)
        repos = known_repositories(self.store, names)
        candidates = names or repos
        allowed = frozenset(names) if names and not set(repos) <= set(names) else None
        if query.file is None:
            return Scope(allowed, candidates[0] if len(candidates) == 1 else None, None)
        repo, rel = self._locate(candidates, query.file)
        if query.line is not None:
            found = self.store.find_objects(repo=repo, path=rel, kind="file")
            if found and not 1 <= query.line <= found[0].end_line:
                raise InputError(f"line {query.line} is past the end of {rel} ({found[0].end_line} lines)")
        return Scope(allowed, repo, rel)

    def _locate(self, candidates: Sequence[str], file: str) -> tuple[str, str]:
        """The repository among ``candidates`` and the repo-relative path a --file names."""
        path = Path(file)
        for r in candidates:
            root = self.store.get_meta(r).get("root")
            rel = file
            if path.is_absolute() and root:
                try:
                    rel = path.resolve().relative_to(root).as_posix()
                except ValueError:
                    continue
            elif root and (Path.cwd() / path).exists() and Path.cwd().resolve() != Path(root):
                try:
                    rel = (Path.cwd() / path).resolve().relative_to(root).as_posix()
                except ValueError:
                    rel = file
            if self.store.find_objects(repo=r, path=rel, kind="file"):
                return r, rel
        raise InputError(f"file {file!r} is not in the index of {', '.join(candidates) or 'any repository'}")
