"""Retrieval served by a Neo4j store: its views, vector index and fulltext index.

``ServerViews`` is the ``ViewIndex`` the retrievers search when the store is a
Neo4j server that holds views: dense search asks the vector index, BM25 the
fulltext index (Lucene's BM25 over the same tokens bm25s sees), the walk the
graph. Nothing local is read but the embedding model.

The vector index is approximate (HNSW) and its search keeps as many candidates
as it is asked for, so it is asked for ``HNSW_BEAM`` times the views kept (ids and
scores only; the kept views are then read by id).

A search over at most ``EXACT_VIEWS`` views (the repositories searched, all of
them or those ``--repo`` names) is exact, as below: the same hits as the
embedded store's. With one repository of this package in the store (7,000 views),
the vector index at 8 times the beam still changed 4 to 8 of 40 contexts
(``bench/neo4j_retrieval.py --views 1``, over several runs).

``--repo`` filters. Neo4j 5.26's vector index filters after its search, so:

- a filter that keeps at least 1/8 of the views of the model's vector index
  widens that beam by the index's size over the allowed views', keeps the
  allowed hits, and falls back to the exact search below when fewer than k remain;
- a narrower filter (fewer than 1/8 of them) searches exactly: every vector of
  the allowed repositories compared with the query's. The searcher reads a
  repository's vectors once per version (a version's views never change; the
  versions a store is writing are read each time) and keeps them, up to
  ``EXACT_CACHE_BYTES`` (least recently searched dropped first): comparing them
  in Cypher (``vector.similarity.cosine`` over each view's stored vector) cost
  the server about 100 ms a search for 7,000 views, and the numpy product here
  costs about a millisecond. The hits are then read by id, in the pinned versions.

BM25: the fulltext index (over the views' search text and their repository's
``scope`` term) gives the candidates, filtered by repository inside Lucene.
Lucene's BM25 is not bm25s's (k1 1.2 against 1.5, document lengths stored to
one byte), and that alone changed the objects of most contexts (on this
package's queries, 4 of 40 contexts were the same as the embedded store's; 34
with the embedded BM25 in their place). So each writer records its
repository's BM25 statistics (document frequencies, total length) with its
model record, and a search takes Lucene's top 4k and scores them as bm25s
would over every repository the store holds (``bm25_rescore``): the scores of
an embedded index of the same repositories.

Equal scores rank by repository, then view id, in both stores (an embedded
index keeps its views in that order: ``sparse.top_k``, ``DenseIndex.search``),
and cosines equal to five decimals are equal (``dense.cosine_key``: FAISS and
Neo4j sum in different precisions). So where the scorers agree, the lists agree,
order and all: before this, ties broken by the selection algorithms made 7 of
40 contexts of this package differ (hashing embedder, which ties often).

Both indexes hold the views of every version of a repository the store keeps (a
push being written, what one replaced and is not yet collected), and a search
keeps those of the versions its reads are pinned to: when fewer than k remain, it
asks again for 4 times as many, up to every view the index holds.

``push_views`` writes a local ``RetrievalIndex`` into the store (incremental by
view hash); ``pull_views`` restores a local one from it without embedding again.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np

from vitalrag.errors import InputError, StoreError, StoreNotFound
from vitalrag.graph.neo4j_views import H, Found, Neo4jViews, RepoModel, ViewWrite, view_hash
from vitalrag.graph.store import GraphStore
from vitalrag.graph.version import Staged
from vitalrag.kernel.progress import Progress
from vitalrag.model import View
from vitalrag.retrieve.dense import COSINE_DECIMALS, DenseIndex, check_dimension, cosine_key
from vitalrag.retrieve.index import Hits, RetrievalIndex
from vitalrag.retrieve.sparse import SparseIndex, bm25_rescore
from vitalrag.kernel.text import code_tokens

log = logging.getLogger(__name__)

#: a filter keeping fewer than 1/NARROW of an index's views is searched exactly
NARROW = 8
#: nearest views asked beyond k, to order equal cosines at the cut
TIE_MARGIN = 8
#: the vector index is approximate (HNSW; its search keeps as many candidates as it is
#: asked for): asked for this many times the views kept, whose top k then agree with
#: an exact search far more often
HNSW_BEAM = 8
#: bytes of repositories' vectors a searcher keeps for exact searches
EXACT_CACHE_BYTES = 256 * 2**20
#: a search over at most this many views (of the repositories searched) compares
#: every vector, as the embedded store does: the vector index only above it
EXACT_VIEWS = 50_000


class ServerViews:
    """The views of a Neo4j store, searched on the server."""

    def __init__(self, views: Neo4jViews) -> None:
        self.views = views
        self._models: dict[str, RepoModel] = {}
        self._models_of: tuple[tuple[str, int], ...] | None = None
        #: the collection's BM25 statistics (documents, total length, each
        #: repository's document frequencies) of the versions read when it was made
        self._stats: tuple[int, int, list[dict[str, int]]] = (0, 0, [])
        self._stats_of: tuple[tuple[str, int], ...] | None = None
        #: document frequencies read, by repository: (the version that wrote them, them)
        self._frequencies: dict[str, tuple[int, dict[str, int]]] = {}
        #: (repository, version) -> its embedded views' ids and unit vectors (float32 rows)
        self._vectors: OrderedDict[tuple[str, int], tuple[list[str], np.ndarray]] = OrderedDict()
        self._vectors_lock = threading.Lock()

    @classmethod
    def open(cls, store: GraphStore) -> ServerViews | None:
        """The store's views, or None when it holds none."""
        index = cls(Neo4jViews.of(store))
        return index if index.models() else None

    def models(self) -> dict[str, RepoModel]:
        """The model records of the versions reads see now (read again when a
        repository switched to a new version)."""
        pins = tuple(sorted(self.views.store.pins().items()))
        if pins != self._models_of:
            self._models = self.views.models()
            self._models_of = pins
        return self._models

    # -- ViewIndex --------------------------------------------------------------------
    @property
    def size(self) -> int:
        return sum(m.views for m in self.models().values())

    @property
    def has_dense(self) -> bool:
        return any(m.model is not None for m in self.models().values())

    @property
    def model(self) -> str | None:
        """The one model of every embedded repository (None: none, or several)."""
        found = {m.model for m in self.models().values() if m.model is not None}
        return found.pop() if len(found) == 1 else None

    def _searched(self, allowed: frozenset[str] | None) -> list[RepoModel]:
        models = self.models()
        return [m for r, m in sorted(models.items()) if allowed is None or r in allowed]

    def model_of(self, allowed: frozenset[str] | None) -> str | None:
        found = sorted({m.model for m in self._searched(allowed) if m.model is not None})
        if len(found) > 1:
            by = defaultdict(list)
            for m in self._searched(allowed):
                by[m.model].append(m.repo)
            said = "; ".join(f"{model}: {', '.join(repos)}" for model, repos in by.items() if model)
            raise InputError(f"the repositories searched were embedded with different models ({said}): "
                             "search them separately with --repo")
        return found[0] if found else None

    def statistics(self) -> tuple[int, int, list[dict[str, int]]]:
        """Documents, total length and each repository's document frequencies, of
        every repository with views (what an embedded index of them all would
        count); a repository's frequencies are read once per version it switches to."""
        pins = tuple(sorted(self.views.store.pins().items()))
        if pins != self._stats_of:
            recorded = self.views.statistics()
            stale = [r for r, (born, _, _) in recorded.items() if self._frequencies.get(r, (None,))[0] != born]
            self._frequencies = {r: f for r, f in self._frequencies.items() if r in recorded}
            self._frequencies.update(self.views.frequencies(stale))
            self._stats = (sum(v for _, v, _ in recorded.values()), sum(t for _, _, t in recorded.values()),
                           [self._frequencies[r][1] for r in sorted(recorded) if r in self._frequencies])
            self._stats_of = pins
        return self._stats

    def bm25(self, query: str, k: int, allowed: frozenset[str] | None) -> Hits:
        terms = code_tokens(query)
        repos = None if allowed is None else sorted(allowed)
        # Lucene's top 4k (of the allowed repositories: filtered inside the index) are
        # the candidates, scored as bm25s scores them; only their search texts are
        # read, then the k kept views
        wanted = 4 * k
        found = _deepening(lambda n: self.views.fulltext_terms(terms, n, repos), wanted, wanted)
        n_docs, total, per_repo = self.statistics()
        df = {t: sum(f.get(t, 0) for f in per_repo) for t in set(terms)}
        scores = bm25_rescore(terms, [search for _, _, search in found], df, n_docs, total)
        best = sorted(((s, repo, vid) for (vid, repo, _), s in zip(found, scores) if s > 0),
                      key=lambda h: view_order(*h))[:k]
        views = self.views.by_id([vid for _, _, vid in best], self.views.store.pins())
        return [(views[vid], s) for s, _, vid in best if vid in views]

    def nearest(self, vector: np.ndarray, k: int, allowed: frozenset[str] | None) -> Hits:
        model = self.model_of(allowed)
        if model is None:
            return []
        searched = [m for m in self._searched(allowed) if m.model == model]
        dim = searched[0].dim
        assert dim is not None
        check_dimension(vector, dim, model, self.views.store.location)
        # the vector index of this dimension also holds every other repository of it
        in_index = [m for m in self.models().values() if m.dim == dim]
        if not np.any(vector):
            return []  # no direction: every cosine is undefined
        query = [float(x) for x in vector]
        # a few more than k: views of equal cosine at the cut are ordered as the
        # embedded index orders them (cosine_key, then view), not as the server returned them
        asked = k + TIE_MARGIN
        repos = [m.repo for m in searched]
        wanted = sum(m.views for m in searched)
        total = sum(m.views for m in in_index)
        if wanted <= EXACT_VIEWS:
            return self._exact(vector, asked, repos)[:k]
        if {m.repo for m in searched} == {m.repo for m in in_index}:
            found = _deepening(lambda n: self.views.nearest(query, dim, n, None, keep=asked), asked,
                               HNSW_BEAM * asked)
            return in_view_order(found, cosine_key)[:k]
        if wanted * NARROW >= total:
            # the beam over the whole index, of which about wanted/total is kept
            beam = min(total, HNSW_BEAM * asked * -(-total // max(wanted, 1)))
            hits = in_view_order(self.views.nearest(query, dim, beam, repos, keep=asked).hits, cosine_key)
            if len(hits) >= asked or len(hits) >= wanted:
                return hits[:k]
        return self._exact(vector, asked, repos)[:k]

    def _exact(self, vector: np.ndarray, n: int, repos: Sequence[str]) -> Hits:
        """The ``n`` nearest views of ``repos`` in the pinned versions, every vector
        compared, in view order (``in_view_order`` with ``cosine_key``)."""
        store = self.views.store
        pins, staged = store.pins(), store.staged()
        unit = np.asarray(vector, dtype=np.float32) / np.float32(np.linalg.norm(vector))
        scored: list[tuple[float, str, str]] = []
        for repo in repos:
            if repo not in pins:
                continue
            ids, matrix = self._repo_vectors(repo, pins, keep=repo not in staged)
            if not ids:
                continue
            cosines = np.einsum("ij,j->i", matrix, unit)  # not BLAS: its threads spin for ~20 ms after a call
            # this repository's n first in view order: rows are in id order, so a
            # stable sort by rounded cosine (as ``cosine_key`` rounds) keeps equal ones by id
            picked = np.argsort(-np.round(cosines.astype(np.float64), COSINE_DECIMALS), kind="stable")[:n]
            scored.extend((float(cosines[i]), repo, ids[i]) for i in picked)
        scored.sort(key=lambda h: (-cosine_key(h[0]), h[1], h[2]))
        scored = scored[:n]
        found = self.views.by_id([i for _, _, i in scored], pins)
        return [(found[i], c) for c, _, i in scored if i in found]

    def _repo_vectors(self, repo: str, pins: Mapping[str, int], keep: bool) -> tuple[list[str], np.ndarray]:
        """The ids (sorted) and unit vectors of ``repo``'s embedded views in its pinned
        version, kept when ``keep`` (a switched-to version: it never changes)."""
        key = (repo, pins[repo])
        with self._vectors_lock:  # one reader reads a version; the others wait for it
            if key in self._vectors:
                self._vectors.move_to_end(key)
                return self._vectors[key]
            ids: list[str] = []
            pages = []
            for page_ids, vectors in self.views.vectors(repo, pins):
                ids.extend(page_ids)
                pages.append(np.asarray(vectors, dtype=np.float32))
            matrix = np.concatenate(pages) if pages else np.zeros((0, 1), dtype=np.float32)
            order = sorted(range(len(ids)), key=ids.__getitem__)  # Python's string order, not the server's
            ids, matrix = [ids[i] for i in order], matrix[order]
            norms = np.linalg.norm(matrix, axis=1, keepdims=True)
            matrix /= np.where(norms > 0, norms, 1)
            if keep and matrix.nbytes <= EXACT_CACHE_BYTES:
                self._vectors[key] = (ids, matrix)
                held = sum(m.nbytes for _, m in self._vectors.values())
                while held > EXACT_CACHE_BYTES:
                    held -= self._vectors.popitem(last=False)[1][1].nbytes
            return ids, matrix

    def names_of(self, identifiers: Iterable[str], allowed: frozenset[str] | None) -> Mapping[str, Sequence[str]]:
        return self.views.names(identifiers, None if allowed is None else sorted(allowed))

    def bodies(self, object_ids: Sequence[str]) -> dict[str, View]:
        return self.views.bodies(object_ids)

    def close(self) -> None:
        """Nothing to release: the connection is the store's, closed with it."""


def view_order(score: float, repo: str, view_id: str) -> tuple[float, str, str]:
    """The sort key of a hit: best first, equal ones by repository and view id, the
    order an embedded index gives them (``sparse.top_k``, ``DenseIndex.search``),
    whatever order the server's index returned them in."""
    return (-score, repo, view_id)


def in_view_order(hits: Hits, key: Callable[[float], float] = float) -> Hits:
    """``hits`` in ``view_order`` of ``key`` of their score."""
    return sorted(hits, key=lambda h: view_order(key(h[1]), h[0].repo, h[0].id))


def _deepening(search: Callable[[int], Found[H]], k: int, first: int) -> list[H]:
    """``search(n)`` for n = ``first``, then 4 times as many, until it keeps k hits or
    the index gives fewer than it was asked for (it has no more)."""
    n = max(first, 1)
    while True:
        found = search(n)
        if len(found.hits) >= k or found.fetched < n:
            return found.hits[:k]
        n *= 4


# -- push and pull --------------------------------------------------------------------

def repos_with_views(store: GraphStore) -> list[str]:
    """The repositories of a Neo4j store that have retrieval views."""
    return sorted(Neo4jViews.of(store).models())


def push_views(store: GraphStore, index: RetrievalIndex, repos: Sequence[str] | None = None,
               progress: Progress | None = None) -> list[ViewWrite]:
    """Write the views of ``repos`` (default: every repository of ``index``) with
    their embeddings into a Neo4j store; views of repositories the store's graph
    no longer holds are removed."""
    views = Neo4jViews.of(store)
    by_repo: dict[str, list[int]] = defaultdict(list)
    for i, v in enumerate(index.views):
        by_repo[v.repo].append(i)
    wanted = list(repos) if repos is not None else sorted(by_repo)
    vectors = index.dense.vectors() if index.dense is not None else None
    out = []
    for n, repo in enumerate(wanted, 1):
        pos = by_repo.get(repo, [])
        repo_views = [index.views[i] for i in pos]
        matrix = vectors[pos] if vectors is not None else None
        stats = index.sparse.statistics(np.asarray(pos, dtype=np.int64))
        out.append(views.write_repository(repo, repo_views, code_tokens, matrix, index.model, stats))
        if progress:
            progress("push views", n, len(wanted))
    stale = sorted(set(views.models()) - set(store.repositories()))
    if stale:
        views.delete_repositories(stale)
    return out


def pull_views(store: GraphStore, folder: str | Path, repos: Sequence[str] | None = None,
               progress: Progress | None = None, staged: Staged | None = None) -> tuple[RetrievalIndex, int]:
    """Restore the local retrieval index in ``folder`` from a Neo4j store's views of
    ``repos`` (default: every one), keeping the local views of other repositories.
    A view whose hash matches the local one keeps its local vector; the others are
    read from the server. With ``staged``, the switch to it is left to its commit.
    Returns the index and how many views were read."""
    views = Neo4jViews.of(store)
    models = views.models()
    wanted = list(repos) if repos is not None else sorted(models)
    missing = [r for r in wanted if r not in models]
    if missing:
        raise InputError(f"{store.location} holds no views of {', '.join(missing)}: "
                         "index them with --store URI or push them first")
    root = Path(folder)
    try:
        local: RetrievalIndex | None = RetrievalIndex.load(root)
    except StoreError as exc:  # none yet, or one this pull replaces
        if not isinstance(exc, StoreNotFound):
            log.warning("%s; pulling the retrieval index afresh", exc)
        local = None
    pulled = set(wanted)
    kept = [v for v in (local.views if local else []) if v.repo not in pulled]
    model_names = {models[r].model for r in wanted} | ({local.model} if local and kept else set())
    if len(model_names) > 1:
        raise InputError(f"the repositories pulled and kept are embedded with different models "
                         f"({', '.join(sorted(str(m) for m in model_names))}): pull into another folder")
    model = model_names.pop() if model_names else None
    local_vectors: dict[str, np.ndarray] = {}
    if local is not None and local.dense is not None and local.model == model:
        matrix = local.dense.vectors()
        local_vectors = {v.id: matrix[i] for i, v in enumerate(local.views)}
    local_by_id = {v.id: v for v in (local.views if local else [])}
    out_views: list[View] = list(kept)
    vecs: dict[str, np.ndarray] = {v.id: local_vectors[v.id] for v in kept if v.id in local_vectors}
    read = 0
    for n, repo in enumerate(wanted, 1):
        hashes = views.hashes(repo)
        fetch = []
        for vid, h in hashes.items():
            mine = local_by_id.get(vid)
            if mine is not None and vid in local_vectors and view_hash(mine, model) == h:
                out_views.append(mine)
                vecs[vid] = local_vectors[vid]
            else:
                fetch.append(vid)
        for v, _, embedding in views.read(fetch):
            out_views.append(v)
            if embedding is not None:
                vecs[v.id] = np.asarray(embedding, dtype=np.float32)
        read += len(fetch)
        if progress:
            progress("pull views", n, len(wanted))
    out_views.sort(key=lambda v: (v.repo, v.id))
    dense = None
    if model is not None:
        dim = next((m.dim for r, m in models.items() if r in pulled and m.dim), None)
        if dim is None and local is not None and local.dense is not None:
            dim = local.dense.dim
        # a view written without an embedding had a zero vector (see Neo4jViews)
        zero = np.zeros(dim or 1, dtype=np.float32)
        for v in out_views:
            vecs.setdefault(v.id, zero)
        matrix = np.stack([vecs[v.id] for v in out_views]) if out_views else np.zeros((0, 1), np.float32)
        dense = DenseIndex.build(matrix, model, hashes=[v.content_hash for v in out_views])
    index = RetrievalIndex(root, out_views, SparseIndex.build([v.text for v in out_views]), dense, model)
    index.save(staged)
    return index, read
