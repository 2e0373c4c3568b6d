"""``ContextService``: one loaded index answering many queries.

A server process keeps one ``Index`` (graph store and retrieval views) and its
``Retriever`` (with, for dense search, the embedding model) in memory. Before
each call it compares the index's change stamp (``Index.stamp``: a few stats of
the version it loaded) with the one it loaded; when a re-index has switched the
live version, it loads the new one once and swaps it in. The embedding
model is reused across reloads when the index names the same model, because
loading it costs seconds while a stat costs microseconds. On a Neo4j store each
call's reads see one version of every repository (``GraphStore.snapshot``): a
push or an index run switching meanwhile is seen whole by the next call.

Every method raises ``VitalRAGError`` subclasses for what a caller can get
wrong (the MCP layer turns them into tool errors); nothing here knows MCP.
What a method returns carries no control character but tab, newline and CRLF:
the others, from a repository's files, are written as ``\\xNN``
(``kernel.printable``), so no answer can drive an agent's or a user's terminal.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Concatenate, ParamSpec, TypeVar, cast

from vitalrag.allocate.controls import policy_names
from vitalrag.context import DEFAULTS, ContextSettings, context_from
from vitalrag.errors import InputError, ObjectNotFound, VitalRAGError
from vitalrag.graph.store import Direction, GraphStore, object_lines
from vitalrag.index import Index, IndexLocation, Stamp
from vitalrag.kernel.printable import printable_data
from vitalrag.model import EDGE_KINDS
from vitalrag.retrieve.api import Retriever
from vitalrag.retrieve.dense import Embedder, make_embedder
from vitalrag.retrieve.query import Query

log = logging.getLogger(__name__)

#: neighbours further than this are a graph dump, not an answer
MAX_DEPTH = 4
MAX_K = 100
#: caps on what one tool answer carries (an agent's context is the scarce thing)
MAX_SOURCE_LINES = 2000
MAX_EDGES = 500
MAX_NEIGHBORS = 500
DIRECTIONS: tuple[str, ...] = ("both", "out", "in")

P = ParamSpec("P")
R = TypeVar("R")


def _printable(method: Callable[P, R]) -> Callable[P, R]:
    """A call whose answer has ``printable`` applied to every string in it."""
    @functools.wraps(method)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        return cast(R, printable_data(method(*args, **kwargs)))

    return call


def _one_version(method: Callable[Concatenate[ContextService, P], R]) -> Callable[Concatenate[ContextService, P], R]:
    """A call whose reads, however many, see one version of each repository."""
    @functools.wraps(method)
    def call(self: ContextService, *args: P.args, **kwargs: P.kwargs) -> R:
        with self._current().store.snapshot():
            return method(self, *args, **kwargs)

    return call


@dataclass(frozen=True, slots=True)
class _Loaded:
    index: Index
    retriever: Retriever
    stamp: Stamp
    loaded_at: float


class ContextService:
    """Retrieval, allocation and graph reads over one index, reloaded when a
    re-index replaces it on disk."""

    def __init__(self, store_location: str, index_dir: str | None = None) -> None:
        self.store_location = store_location
        self.index_dir = index_dir
        self.location = IndexLocation.of(store_location, index_dir)
        self.folder = self.location.folder
        self._lock = threading.Lock()
        self._loaded: _Loaded | None = None
        self._embedder: Embedder | None = None
        self._warm = False
        self.reloads = 0

    # -- loading ------------------------------------------------------------------
    def open(self, *, warm: bool = True) -> ContextService:
        """Load the index now, so a missing index fails at start rather than on the
        first call; with ``warm``, also load the embedding model and encode once
        (on every reload too), so no caller pays for it."""
        self._warm = warm
        self._current()
        return self

    def _current(self) -> Retriever:
        loaded = self._loaded
        if loaded is not None and loaded.stamp == self.location.stamp():
            return loaded.retriever
        # One caller reloads; the others keep answering from the index they have.
        if not self._lock.acquire(blocking=loaded is None):
            assert loaded is not None
            return loaded.retriever
        try:
            loaded = self._loaded
            stamp = self.location.stamp()
            if loaded is not None and loaded.stamp == stamp:
                return loaded.retriever
            try:
                index, retriever = self._load(loaded)
            except VitalRAGError:
                if loaded is None:
                    raise
                # A re-index in progress can leave a pointer naming a snapshot
                # that is still being written or already removed: keep answering
                # from the index we have and try again on the next call.
                log.warning("index at %s changed but cannot be loaded yet; serving the previous one",
                            self.folder, exc_info=True)
                return loaded.retriever
            if loaded is not None:
                self.reloads += 1
                log.info("reloaded the index from %s", self.folder)
            self._loaded = _Loaded(index, retriever, stamp, time.time())
            return retriever
        finally:
            self._lock.release()

    def _load(self, previous: _Loaded | None) -> tuple[Index, Retriever]:
        if previous is not None:
            index = previous.index.reopen()
        else:
            index = Index.open(self.store_location, index_dir=self.index_dir, mode="serve")
        views = index.views
        embedder = self._embedder
        if views.has_dense and views.model and (embedder is None or embedder.name != views.model):
            embedder = make_embedder(views.model)
            if self._warm:
                embedder.encode(["warm up"])
            self._embedder = embedder
        return index, index.retriever(embedder if views.has_dense else None)

    # -- retrieval and allocation ---------------------------------------------------
    @_printable
    @_one_version
    def get_context(self, query: str | Query, settings: ContextSettings = DEFAULTS) -> dict[str, Any]:
        """C(q) and a compact record: each selected object with its slot and tokens."""
        allocation = context_from(self._current(), query, settings)
        record = allocation.record
        return {
            "context": allocation.text,
            "policy": record.policy,
            "budget": settings.budget,
            "tokens": record.tokens,
            "objects": [
                {"slot": s.slot, "id": s.object_key, "role": s.role, "path": s.path,
                 "identifier": s.identifier, "lines": [list(span) for span in s.spans],
                 "tokens_given": s.b, "tokens_used": s.tokens, "clipped": s.clipped}
                for s in record.slots
            ],
        }

    @_printable
    @_one_version
    def explain(self, query: str | Query, settings: ContextSettings = DEFAULTS) -> dict[str, Any]:
        """The full ``AllocationRecord``: every candidate view's fate and every slot."""
        return context_from(self._current(), query, settings).record.to_dict()

    @_printable
    @_one_version
    def search(self, query: str, k: int = 10) -> list[dict[str, Any]]:
        """Ranked views from the fused dense, BM25 and graph-walk retrievers."""
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
            raise InputError(f"k must be a whole number from 1 to {MAX_K}, got {k!r}")
        hits = self._current().search(query, k=k)
        return [
            {"rank": rank, "score": h.score, "id": h.view.object_id, "view": h.view.kind,
             "path": h.view.path, "lines": [h.view.start_line, h.view.end_line],
             "retrievers": {name: pos for name, pos in h.retrievers}, "text": h.view.text}
            for rank, h in enumerate(hits, 1)
        ]

    # -- graph reads ----------------------------------------------------------------
    @_printable
    @_one_version
    def get_object(self, object_id: str) -> dict[str, Any]:
        """An object's properties, its source lines and its edges."""
        store = self._current().store
        obj = self._object(store, object_id)
        data = obj.to_dict()
        lines = object_lines(store, obj)
        truncated = len(lines) > MAX_SOURCE_LINES
        source = "\n".join(lines[:MAX_SOURCE_LINES])
        edges = store.edges_of([object_id])
        return {
            "object": data,
            "source": source,
            "source_truncated": truncated,
            "edges": [e.to_dict() for e in edges[:MAX_EDGES]],
            "edges_total": len(edges),
        }

    @_printable
    @_one_version
    def neighbors(self, object_id: str, kinds: Sequence[str] | None = None, depth: int = 1,
                  direction: str = "both") -> dict[str, Any]:
        """Objects within ``depth`` hops along edges of ``kinds`` (all kinds when none)."""
        if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= MAX_DEPTH:
            raise InputError(f"depth must be a whole number from 1 to {MAX_DEPTH}, got {depth!r}")
        if kinds is not None:
            unknown = sorted(set(kinds) - set(EDGE_KINDS))
            if unknown:
                raise InputError(f"unknown edge kind(s) {', '.join(map(repr, unknown))}: "
                                 f"choose from {', '.join(EDGE_KINDS)}")
        if direction not in DIRECTIONS:
            raise InputError(f"unknown direction {direction!r}: choose one of {', '.join(DIRECTIONS)}")
        store = self._current().store
        self._object(store, object_id)
        found = store.neighbors([object_id], kinds=list(kinds) if kinds else None,
                                direction=_direction(direction), depth=depth)
        ranked = sorted(found.items(), key=lambda kv: (kv[1], kv[0]))[:MAX_NEIGHBORS]
        objects = store.get_objects([node for node, _ in ranked])
        rows = []
        for node, hops in ranked:
            o = objects.get(node)
            rows.append({"id": node, "hops": hops, "kind": o.kind if o else None,
                         "path": o.path if o else None, "lines": [o.start_line, o.end_line] if o else None})
        return {"id": object_id, "depth": depth, "kinds": list(kinds) if kinds else list(EDGE_KINDS),
                "direction": direction, "neighbors": rows, "total": len(found)}

    @staticmethod
    def _object(store: GraphStore, object_id: str) -> Any:
        if not isinstance(object_id, str) or not object_id.strip():
            raise InputError("empty object id: give an id such as repo:path/to/file.py:Class.method")
        found = store.get_objects([object_id])
        if object_id not in found:
            raise ObjectNotFound(f"no object with id {object_id!r} in {store.location} "
                                 f"(ids look like repo:path/to/file.py:Class.method; `search` finds them)")
        return found[object_id]

    @_printable
    @_one_version
    def index_status(self) -> dict[str, Any]:
        """What is loaded: repositories with counts, the index model and views, and times."""
        current = self._current()
        loaded = self._loaded
        store = current.store
        repos = []
        times: list[float] = []
        for repo in store.repositories():
            meta = store.get_meta(repo)
            indexed_at = meta.get("indexed_at")
            if isinstance(indexed_at, (int, float)):
                times.append(indexed_at)
            repos.append({"name": repo, "root": meta.get("root"), "indexed_at": _iso(indexed_at),
                          **store.counts(repo)})
        return {
            "store": store.location,
            "index_dir": str(self.folder),
            "repositories": repos,
            "model": current.views.model,
            "dense": current.views.has_dense,
            "views": current.views.size,
            "last_indexed": _iso(max(times, default=None)),
            "loaded_at": _iso(loaded.loaded_at) if loaded else None,
            "reloads": self.reloads,
            "policies": policy_names(),
        }

    def close(self) -> None:
        loaded = self._loaded
        if loaded is not None:
            loaded.index.close()


def _iso(ts: Any) -> str | None:
    if not isinstance(ts, (int, float)):
        return None
    return datetime.fromtimestamp(ts, tz=timezone.utc).isoformat(timespec="seconds")


def _direction(name: str) -> Direction:
    return "out" if name == "out" else "in" if name == "in" else "both"
