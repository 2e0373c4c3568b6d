"""Retrieval views in the Neo4j store: written with their embeddings, searched
through a native vector index and a fulltext index.

``Neo4jViews`` works through a store's ``Neo4jSession`` (its statements,
batching, error translation and versions); the statements and the layout are in
``neo4j_queries``. A repository's views are written incrementally: each view row
carries a hash of what it holds (text, identifier, the model of its embedding),
and a write removes the views that are gone or changed and creates the changed
and new ones, leaving the rest alone. Views are versioned with the graph: inside
the store's ``writing()`` block of an index run or a push they become visible
together with the graph they were built from.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from vitalrag.errors import InputError
from vitalrag.graph import neo4j_queries as q
from vitalrag.graph.neo4j import Neo4jStore, _chunks
from vitalrag.graph.neo4j_session import Neo4jSession
from vitalrag.graph.store import GraphStore
from vitalrag.model import View

log = logging.getLogger(__name__)

#: views read back per round trip (pull)
READ_BATCH = 2000
#: vectors read per round trip by an exact search (a page of Python floats is about
#: 50 MB on its way to a float32 matrix)
VECTOR_PAGE = 5000


@dataclass(frozen=True, slots=True)
class RepoModel:
    """The embedding model of one repository's views (None: written with --no-embed)."""

    repo: str
    model: str | None
    dim: int | None
    views: int = 0


#: a hit of an index search: (view, score), or what a caller reads of it instead
H = TypeVar("H")


@dataclass(frozen=True, slots=True)
class Found(Generic[H]):
    """The hits an index search kept, and how many the index gave (a search that
    kept fewer than it asked for may have more to give when ``fetched`` is all of it)."""

    hits: list[H]
    fetched: int


@dataclass(frozen=True, slots=True)
class ViewWrite:
    """What one repository's view write did."""

    repo: str
    written: int
    deleted: int
    kept: int


def view_hash(view: View, model: str | None) -> str:
    """What a view row holds, hashed: a row whose hash is unchanged is not rewritten."""
    text = json.dumps([view.content_hash, view.identifier, view.object_id, view.kind, model])
    return hashlib.blake2b(text.encode(), digest_size=12).hexdigest()


def search_text(tokens: Iterable[str]) -> str:
    """The fulltext field of a view: its BM25 tokens, space-separated."""
    return " ".join(tokens)


class Neo4jViews:
    """The views of a Neo4j store: writes and searches."""

    def __init__(self, store: Neo4jSession) -> None:
        self.store = store

    @classmethod
    def of(cls, store: GraphStore) -> Neo4jViews:
        """The views of ``store``, which must be a Neo4j store."""
        if not isinstance(store, Neo4jStore):
            raise InputError(f"{store.location} is not a Neo4j store")
        return cls(store)

    # -- metadata -----------------------------------------------------------------
    def models(self) -> dict[str, RepoModel]:
        """Every repository with views, and the model they are embedded with."""
        return {r["repo"]: RepoModel(r["repo"], r["model"], r["dim"], int(r["views"] or 0))
                for r in self.store.read(q.RETRIEVAL_META)}

    def count(self, repos: Sequence[str] | None = None) -> int:
        if repos is None:
            return int(self.store.read(q.COUNT_VIEWS)[0]["n"])
        return int(self.store.read(q.COUNT_REPO_VIEWS, repos=list(repos))[0]["n"])

    # -- writes ---------------------------------------------------------------------
    def ensure_schema(self, dim: int | None) -> None:
        self.store.ensure_schema()
        for statement in q.VIEW_SCHEMA:
            self.store.write(statement)
        if dim is not None:
            self.store.write(q.view_vector_index(dim))
        self.store.write(q.SCHEMA_AWAIT)

    def write_repository(self, repo: str, views: Sequence[View], tokenize: Callable[[str], Sequence[str]],
                         vectors: Any | None, model: str | None,
                         statistics: tuple[Mapping[str, int], int]) -> ViewWrite:
        """Make the store's views of ``repo`` exactly ``views`` (``tokenize``: a
        text's BM25 tokens, asked only for the views written; ``vectors``: a float32
        matrix in the views' order, or None without embeddings; ``statistics``: the
        views' BM25 document frequencies and total length, kept with the model
        record so that a search can score as the embedded store does)."""
        dim = int(vectors.shape[1]) if vectors is not None and len(views) else None
        if vectors is not None and len(vectors) != len(views):
            raise InputError(f"{len(views)} views of {repo} but {len(vectors)} embeddings")
        self.ensure_schema(dim)
        with self.store.writing([repo]):
            return self._write_views(repo, views, tokenize, vectors, model, dim, statistics)

    def _write_views(self, repo: str, views: Sequence[View], tokenize: Callable[[str], Sequence[str]],
                     vectors: Any | None, model: str | None, dim: int | None,
                     statistics: tuple[Mapping[str, int], int]) -> ViewWrite:
        old = self.hashes(repo)
        rows: list[tuple[str, dict[str, Any]]] = []
        new_ids = set()
        create = q.create_views(dim)
        bare = q.create_views(None)
        for i, v in enumerate(views):
            h = view_hash(v, model if dim is not None else None)
            new_ids.add(v.id)
            if old.get(v.id) == h:
                continue
            row: dict[str, Any] = {"props": {**v.to_dict(), "hash": h, "search": search_text(tokenize(v.text)),
                                             "scope": q.view_scope(v.repo)}}
            if vectors is not None and dim is not None and vectors[i].any():
                row["embedding"] = vectors[i].tolist()
                rows.append((create, row))
            else:  # cosine has no value for a zero vector (a text with no tokens): no embedding
                rows.append((bare, row))
        gone = [i for i in old if i not in new_ids]
        # a changed view is deleted and created again (its Dim label may change too)
        delete = gone + [r["props"]["id"] for _, r in rows if r["props"]["id"] in old]
        for chunk in _chunks(delete, self.store.settings.batch_size):
            self.store.write_data(q.DELETE_VIEWS, ids=list(chunk))
        if rows:
            self.store.write_grouped(rows)
        self.store.write_data(q.LINK_VIEWS, repo=repo)
        meta: dict[str, Any] = {"repo": repo, "model": model if dim is not None else None, "dim": dim,
                                "views": len(views), "tokens": statistics[1],
                                "df": json.dumps(statistics[0], separators=(",", ":"))}
        self.store.write_data(q.SET_RETRIEVAL_META, rows=[{"key": repo, "repo": repo, "props": meta}])
        log.debug("views of %s: %d written, %d deleted, %d kept", repo, len(rows), len(gone),
                  len(views) - len(rows))
        return ViewWrite(repo, len(rows), len(gone), len(views) - len(rows))

    def delete_repositories(self, repos: Sequence[str]) -> None:
        """Remove every view of ``repos`` and their model records."""
        if not repos:
            return
        with self.store.writing(repos):
            for repo in repos:
                ids = list(self.hashes(repo))
                for chunk in _chunks(ids, self.store.settings.batch_size):
                    self.store.write_data(q.DELETE_VIEWS, ids=list(chunk))
            self.store.write_data(q.DELETE_RETRIEVAL_META, repos=list(repos))

    # -- reads ----------------------------------------------------------------------
    def hashes(self, repo: str) -> dict[str, str]:
        """View id -> row hash, for one repository."""
        return {r["id"]: r["hash"] for r in self.store.read(q.VIEW_HASHES, repo=repo)}

    def read(self, ids: Sequence[str]) -> list[tuple[View, str, list[float] | None]]:
        """Views by id with their row hash and embedding (missing ids are left out)."""
        out = []
        for chunk in _chunks(list(ids), READ_BATCH):
            for r in self.store.read(q.READ_VIEWS_EMBEDDED, ids=list(chunk)):
                out.append((View.from_dict(r["v"]), r["hash"], r["embedding"]))
        return out

    def fulltext_terms(self, terms: Sequence[str], n: int, repos: Sequence[str] | None
                       ) -> Found[tuple[str, str, str]]:
        """Up to ``n`` views by Lucene's BM25 over their search text, of ``repos``
        (filtered inside the index), kept when in the pinned versions, as (view id,
        repository, search text) in Lucene's order: what rescoring reads, without
        the views. Terms are escaped, never Lucene syntax."""
        query = q.lucene_query(terms, repos=repos)
        if not query:
            return Found([], 0)
        rows = self.store.read_rows(q.SEARCH_VIEW_TERMS, text=query, n=n, index=q.VIEW_FULLTEXT_INDEX,
                                     repos=None if repos is None else list(repos))
        return Found([(r[0], r[1], r[2] or "") for r in rows if r], len(rows))

    def statistics(self) -> dict[str, tuple[int, int, int]]:
        """Each repository's BM25 statistics as its writer recorded them: the
        version that wrote them, its views and their total length."""
        return {r["repo"]: (int(r["born"]), int(r["views"] or 0), int(r["tokens"] or 0))
                for r in self.store.read(q.RETRIEVAL_STATS)}

    def frequencies(self, repos: Sequence[str]) -> dict[str, tuple[int, dict[str, int]]]:
        """The document frequencies of ``repos``' views, with the version that wrote them."""
        return {r["repo"]: (int(r["born"]), json.loads(r["df"]))
                for r in self.store.read(q.RETRIEVAL_DF, repos=list(repos)) if r["df"] is not None}

    def nearest(self, vector: Sequence[float], dim: int, n: int, repos: Sequence[str] | None,
                keep: int | None = None) -> Found[tuple[View, float]]:
        """Up to ``n`` views from the vector index of ``dim`` (approximate), then
        kept when in the pinned versions and in ``repos``, the first ``keep`` of
        them (default: all); scores are cosines. The index gives ids, and the views
        kept are read by id: asked for many, it sends only those back whole."""
        rows = self.store.read_rows(q.SEARCH_VIEWS_VECTOR, index=q.vector_index_name(dim), n=n,
                                     vector=list(vector), repos=None if repos is None else list(repos))
        kept = [(r["id"], 2.0 * float(r["score"]) - 1.0) for r in rows if r["id"] is not None][:keep]
        views = self.by_id([i for i, _ in kept], self.store.pins())
        return Found([(views[i], score) for i, score in kept if i in views], len(rows))

    def vectors(self, repo: str, pin: Mapping[str, int]) -> Iterator[tuple[list[str], list[list[float]]]]:
        """Every embedded view of ``repo`` in the version ``pin`` names, in pages of
        (view ids, their vectors), by id."""
        after = ""
        while True:
            records = self.store.read(q.VIEW_VECTORS, repo=repo, pin=dict(pin), after=after, n=VECTOR_PAGE)
            if records:
                yield [r["id"] for r in records], [r["embedding"] for r in records]
            if len(records) < VECTOR_PAGE:
                return
            after = records[-1]["id"]

    def by_id(self, ids: Sequence[str], pin: Mapping[str, int]) -> dict[str, View]:
        """Views by id in the versions ``pin`` names (missing ids are left out)."""
        out: dict[str, View] = {}
        for chunk in _chunks(list(ids), READ_BATCH):
            for r in self.store.read_rows(q.READ_VIEWS, ids=list(chunk), pin=dict(pin)):
                out[r["v"]["id"]] = View.from_dict(r["v"])
        return out

    def names(self, names: Iterable[str], repos: Sequence[str] | None = None) -> dict[str, list[str]]:
        """Object ids by name (from body and signature views), of ``repos`` (None: all)."""
        wanted = sorted(set(names))
        if not wanted:
            return {}
        records = self.store.read(q.VIEW_NAMES, names=wanted, repos=None if repos is None else list(repos))
        return {r["name"]: sorted(r["ids"]) for r in records}

    def bodies(self, object_ids: Sequence[str]) -> dict[str, View]:
        """The body view of each object that has one (the first by id)."""
        out: dict[str, View] = {}
        for chunk in _chunks(list(dict.fromkeys(object_ids)), READ_BATCH):
            for r in self.store.read_rows(q.BODY_VIEWS, ids=list(chunk)):
                v = View.from_dict(r["v"])
                out.setdefault(v.object_id, v)
        return out

