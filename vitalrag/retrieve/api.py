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
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from vitalrag.errors import InputError
from vitalrag.graph.store import GraphStore, is_server_uri, open_store
from vitalrag.model import ScoredView
from vitalrag.retrieve.dense import Embedder, make_embedder
from vitalrag.retrieve.fusion import rrf
from vitalrag.retrieve.index import RetrievalIndex
from vitalrag.retrieve.walk import WalkConfig, anchors, walk

log = logging.getLogger(__name__)

RETRIEVERS = ("dense", "bm25", "walk", "fused")
#: how deep each retriever's list goes before fusion
POOL = 100


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


class Retriever:
    def __init__(self, store: GraphStore, index: RetrievalIndex, embedder: Embedder | None = None,
                 walk_config: WalkConfig = WalkConfig()) -> None:
        self.store = store
        self.index = index
        self._embedder = embedder
        self.walk_config = walk_config

    @classmethod
    def open(cls, store_location: str, *, index_dir: str | None = None,
             embedder: Embedder | None = None) -> Retriever:
        store = open_store(store_location, create=False)
        return cls(store, RetrievalIndex.load(index_folder(store_location, index_dir)), embedder)

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            if self.index.model is None:
                raise DenseUnavailable("this index has no embeddings (it was built with --no-embed); "
                                       "re-index without --no-embed, or use --retriever bm25 or walk")
            self._embedder = make_embedder(self.index.model)
        return self._embedder

    # -- single retrievers ----------------------------------------------------------
    # ``allowed``: the repositories a search may return views of (None: every one).
    # BM25 and FAISS search the whole index, so a filtered search fetches 4k, then
    # 16k, ... hits until k of them are allowed or the index is exhausted (exact).
    def bm25(self, query: str, k: int, allowed: frozenset[str] | None = None) -> list[tuple[int, float]]:
        return self._restricted(lambda n: self.index.sparse.search(query, n), k, allowed)

    def dense(self, query: str, k: int, allowed: frozenset[str] | None = None) -> list[tuple[int, float]]:
        dense = self.index.dense
        if dense is None:
            raise DenseUnavailable("this index has no embeddings (it was built with --no-embed); "
                                   "re-index without --no-embed, or use --retriever bm25 or walk")
        vector = self.embedder.encode([query])[0]
        return self._restricted(lambda n: dense.search(vector, n), k, allowed)

    def _restricted(self, fetch: Callable[[int], list[tuple[int, float]]], k: int,
                    allowed: frozenset[str] | None) -> list[tuple[int, float]]:
        if allowed is None:
            return fetch(k)
        size = len(self.index.views)
        n = min(size, 4 * k)
        while True:
            hits = [(i, s) for i, s in fetch(n) if self.index.views[i].repo in allowed]
            if len(hits) >= k or n >= size:
                return hits[:k]
            n = min(size, 4 * n)

    def walk(self, query: str, k: int, *, repo: str | None, file: str | None,
             line: int | None, allowed: frozenset[str] | None = None) -> list[tuple[int, float]]:
        seeds = anchors(self.store, query, self.index.names, repo=repo, path=file, line=line,
                        config=self.walk_config)
        scores = walk(self.store, seeds, self.walk_config)
        ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
        out: list[tuple[int, float]] = []
        for node, score in ranked:
            pos = self._representative(node)
            if pos is not None and (allowed is None or self.index.views[pos].repo in allowed):
                out.append((pos, score))
            if len(out) >= k:
                break
        return out

    def _representative(self, node: str) -> int | None:
        """The view the walk returns for a definition: its body (files, modules and
        repositories have none and are passed through, not returned)."""
        for p in self.index.by_object.get(node, ()):
            if self.index.views[p].kind == "body":
                return p
        return None

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
        rankings: dict[str, list[str]] = {
            "bm25": [self.index.views[i].id for i, _ in self.bm25(query, POOL, allowed)],
            "walk": [self.index.views[i].id for i, _ in self.walk(query, POOL, repo=repo, file=file,
                                                                   line=line, allowed=allowed)],
        }
        if self.index.dense is not None:
            rankings["dense"] = [self.index.views[i].id for i, _ in self.dense(query, POOL, allowed)]
        else:
            log.warning("index has no embeddings: fusing bm25 and walk only")
        fused = rrf(rankings, weights)[:k]
        return [ScoredView(self.index.views[self.index.by_id[vid]], score, ranks) for vid, score, ranks in fused]

    def _scored(self, hits: list[tuple[int, float]], name: str) -> list[ScoredView]:
        return [ScoredView(self.index.views[i], s, ((name, rank),)) for rank, (i, s) in enumerate(hits, 1)]

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
