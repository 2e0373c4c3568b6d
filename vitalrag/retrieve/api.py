"""Retrieval over an index: dense, BM25, graph walk, or their reciprocal-rank fusion.

    >>> r = Retriever.open(".vitalrag")
    >>> r.search("send a prepared request", k=10)                 # fused
    >>> r.search("...", file="src/requests/api.py", line=60, retriever="walk")

Every result is a ``ScoredView``: the view (tagged with its object id), its
score, and the rank each retriever gave it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from vitalrag.errors import InputError, StoreNotFound
from vitalrag.graph.store import GraphStore, is_server_uri, open_store
from vitalrag.graph.version import Version, has_retrieval, load_consistent
from vitalrag.model import ScoredView, View
from vitalrag.retrieve.dense import Embedder, make_embedder
from vitalrag.retrieve.fusion import rrf
from vitalrag.retrieve.index import Hits, RetrievalIndex, ViewIndex
from vitalrag.kernel.text import identifiers
from vitalrag.retrieve.walk import WalkConfig, anchors, walk

log = logging.getLogger(__name__)

RETRIEVERS = ("dense", "bm25", "walk", "fused")
#: how deep each retriever's list goes before fusion
POOL = 100
#: walk-ranked objects whose body views are looked up at once
WALK_CHUNK = 500


class DenseUnavailable(InputError):
    """The dense retriever was asked for on an index built without embeddings."""


def index_folder(store_location: str, index_dir: str | None = None) -> Path:
    """Where the retrieval index of a store lives: the store folder itself, or for
    a server store ``--index-dir`` / ``$VITALRAG_INDEX_DIR`` / ``.vitalrag``."""
    if index_dir:
        return Path(index_dir)
    if is_server_uri(store_location):
        return Path(os.environ.get("VITALRAG_INDEX_DIR", ".vitalrag"))
    return Path(store_location)


def open_index(store: GraphStore, folder: Path) -> ViewIndex:
    """The views a store's queries search: a Neo4j store's own when it holds views,
    else the local retrieval index in ``folder``."""
    if is_server_uri(store.location):
        from vitalrag.retrieve.server_index import ServerIndex

        server = ServerIndex.open(store)
        if server is not None:
            return server
        if not has_retrieval(folder):
            raise StoreNotFound(f"{store.location} holds no retrieval views and there is no local index in "
                                f"{folder}: index with `vitalrag index PATH --store {store.location}`, or "
                                f"`vitalrag push` an embedded index")
    return RetrievalIndex.load(folder)


def open_pair(store_location: str, folder: Path, *, held: bool = False) -> tuple[GraphStore, ViewIndex]:
    """The graph store and the views its queries search, of one version: an embedded
    store whose retrieval index shares its folder is read as its version pointer
    names the pair, once, so a re-index switching meanwhile is never half seen.
    ``held``: a one-shot reader's: a server store's reads all see one version, an
    embedded graph is read by the piece (see ``open_store``)."""
    if is_server_uri(store_location) or Path(store_location).resolve() != folder.resolve():
        store = open_store(store_location, create=False, held=held)
        try:
            return store, open_index(store, folder)
        except BaseException:
            store.close()
            raise
    from vitalrag.graph.memory import MemoryStore, open_snapshot

    def load(version: Version) -> tuple[GraphStore, ViewIndex]:
        # a one-shot reader reads the graph by the piece; a server loads it whole
        store = open_snapshot(folder, version) if held else MemoryStore.open(folder, create=False, version=version)
        return store, RetrievalIndex.load(folder, version=version)

    return load_consistent(folder, load)


class Retriever:
    """The retrievers over a graph store and a ``ViewIndex``: the local retrieval
    index, or (for a Neo4j store that holds views) the server's vector and fulltext
    indexes."""

    def __init__(self, store: GraphStore, index: ViewIndex, embedder: Embedder | None = None,
                 walk_config: WalkConfig = WalkConfig()) -> None:
        self.store = store
        self.index = index
        self._embedder = embedder
        self.walk_config = walk_config

    @classmethod
    def open(cls, store_location: str, *, index_dir: str | None = None,
             embedder: Embedder | None = None) -> Retriever:
        """A retriever over ``store_location``. A Neo4j store that holds views is
        searched on the server (nothing local needed but the model); one that does
        not falls back to the local index folder. Its reads of a server store see one
        version of each repository (what one command or one call needs)."""
        store, index = open_pair(store_location, index_folder(store_location, index_dir), held=True)
        return cls(store, index, embedder)

    def embedder_for(self, allowed: frozenset[str] | None) -> Embedder:
        model = self.index.model_of(allowed)
        if model is None:
            raise DenseUnavailable("this index has no embeddings (it was built with --no-embed); "
                                   "re-index without --no-embed, or use --retriever bm25 or walk")
        if self._embedder is None or self._embedder.name != model:
            self._embedder = make_embedder(model)
        return self._embedder

    @property
    def embedder(self) -> Embedder:
        return self.embedder_for(None)

    # -- single retrievers ----------------------------------------------------------
    # ``allowed``: the repositories a search may return views of (None: every one).
    def bm25(self, query: str, k: int, allowed: frozenset[str] | None = None) -> Hits:
        return self.index.bm25(query, k, allowed)

    def dense(self, query: str, k: int, allowed: frozenset[str] | None = None) -> Hits:
        if not self.index.has_dense:
            raise DenseUnavailable("this index has no embeddings (it was built with --no-embed); "
                                   "re-index without --no-embed, or use --retriever bm25 or walk")
        vector = self.embedder_for(allowed).encode([query])[0]
        return self.index.nearest(vector, k, allowed)

    def walk(self, query: str, k: int, *, repo: str | None, file: str | None,
             line: int | None, allowed: frozenset[str] | None = None) -> Hits:
        # anchors only in the repositories searched: a name shared with another
        # repository would otherwise split its weight with objects never returned
        names = self.index.names_of(identifiers(query), allowed)
        seeds = anchors(self.store, query, names, repo=repo, path=file, line=line, config=self.walk_config)
        scores = walk(self.store, seeds, self.walk_config)
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

    # -- the public search ----------------------------------------------------------
    def search(self, query: str, *, k: int = 20, retriever: str = "fused", file: str | None = None,
               line: int | None = None, repo: str | Sequence[str] | None = None,
               weights: Mapping[str, float] | None = None) -> list[ScoredView]:
        """The top ``k`` views for ``query``; ``repo`` (a name or several) limits
        every retriever to those repositories."""
        if not query or not query.strip():
            raise InputError("empty query: say what code you are looking for")
        if retriever not in RETRIEVERS:
            raise InputError(f"unknown retriever {retriever!r}: choose one of {', '.join(RETRIEVERS)}")
        if k < 1:
            raise InputError(f"k must be at least 1, got {k}")
        allowed, repo, file = self._scope(repo, file)
        if line is not None and file is not None:
            self._check_line(repo, file, line)
        if retriever == "bm25":
            return self._scored(self.bm25(query, k, allowed), "bm25")
        if retriever == "dense":
            return self._scored(self.dense(query, k, allowed), "dense")
        if retriever == "walk":
            return self._scored(self.walk(query, k, repo=repo, file=file, line=line, allowed=allowed), "walk")
        found: dict[str, View] = {}

        def ids(hits: Hits) -> list[str]:
            for v, _ in hits:
                found.setdefault(v.id, v)
            return [v.id for v, _ in hits]

        rankings: dict[str, list[str]] = {
            "bm25": ids(self.bm25(query, POOL, allowed)),
            "walk": ids(self.walk(query, POOL, repo=repo, file=file, line=line, allowed=allowed)),
        }
        if self.index.has_dense:
            rankings["dense"] = ids(self.dense(query, POOL, allowed))
        else:
            log.warning("index has no embeddings: fusing bm25 and walk only")
        fused = rrf(rankings, weights)[:k]
        return [ScoredView(found[vid], score, ranks) for vid, score, ranks in fused]

    def _scored(self, hits: Hits, name: str) -> list[ScoredView]:
        return [ScoredView(v, s, ((name, rank),)) for rank, (v, s) in enumerate(hits, 1)]

    def _scope(self, repo: str | Sequence[str] | None, file: str | None
               ) -> tuple[frozenset[str] | None, str | None, str | None]:
        """The repositories searched (None: every one), the repository a --file
        is in (or the only one searched), and the file's repo-relative path."""
        names = [repo] if isinstance(repo, str) else list(dict.fromkeys(repo or ()))
        repos = self.store.repositories()
        for r in names:
            if r not in repos:
                raise InputError(f"no repository {r!r} in {self.store.location} (have: {', '.join(repos)})")
        candidates = names or repos
        allowed = frozenset(names) if names and not set(repos) <= set(names) else None
        if file is None:
            return allowed, (candidates[0] if len(candidates) == 1 else None), None
        return (allowed, *self._locate(candidates, file))

    def _check_line(self, repo: str | None, rel: str, line: int) -> None:
        found = self.store.find_objects(repo=repo, path=rel, kind="file")
        if found and not 1 <= line <= found[0].end_line:
            raise InputError(f"line {line} is past the end of {rel} ({found[0].end_line} lines)")

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
