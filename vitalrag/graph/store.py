"""The ``GraphStore`` protocol every store implements, and ``open_store``.

A backend answers the primitives (``GraphBackend``: writes, and the reads only
it can answer well); ``DerivedReads``, the base class of every store, answers
the rest of ``GraphStore`` through them, and a store overrides one of those only
where it has a faster way. Stores are batch-first: writes take sequences, reads
take sequences of ids. Every store must give the same answers; ``tests/graph``
runs one behavioural suite against each.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Protocol, runtime_checkable

from vitalrag.errors import InputError
from vitalrag.model import CodeObject, Edge, NodeId, UnresolvedRef, file_id, split_lines

if TYPE_CHECKING:
    from vitalrag.graph.version import Staged, Version

Direction = Literal["out", "in", "both"]

DEFAULT_STORE = ".vitalrag"

class Span(NamedTuple):
    """Where an object lies in its file (``GraphStore.file_spans``)."""

    id: NodeId
    kind: str
    start_line: int
    end_line: int


def spans_of(found: Mapping[NodeId, Sequence[CodeObject]]) -> dict[NodeId, list[Span]]:
    """``file_objects``' answer as ``file_spans``'."""
    return {f: [Span(o.id, o.kind, o.start_line, o.end_line) for o in objs] for f, objs in found.items()}


class GraphBackend(Protocol):
    """What a backend must answer. ``location`` is a folder or a server URI."""

    location: str

    # -- writes ---------------------------------------------------------------
    def upsert_objects(self, objects: Sequence[CodeObject], *, fresh: bool = False) -> None:
        """Insert or replace objects by id. ``fresh``: the caller knows none of them
        exists yet (a repository just deleted), so a server store may skip the lookup."""

    def upsert_edges(self, edges: Sequence[Edge], *, fresh: bool = False) -> None:
        """Insert or replace edges by (source, target, kind); ``fresh`` as above."""

    def upsert_unresolved(self, refs: Sequence[UnresolvedRef], *, fresh: bool = False) -> None:
        """Insert or replace unresolved references by (source, kind, name, line);
        ``fresh`` as above."""

    def put_sources(self, sources: Mapping[NodeId, str]) -> None:
        """Store the text of files, keyed by file node id."""

    def set_meta(self, repo: str, meta: Mapping[str, Any]) -> None:
        """Replace the metadata of one repository (root, index time, options)."""

    def delete_objects(self, ids: Sequence[NodeId]) -> None:
        """Remove objects by id, with their edges in both directions, their
        unresolved references and (for file nodes) their sources."""

    def delete_edges(self, keys: Sequence[tuple[NodeId, NodeId, str]]) -> None:
        """Remove edges by (source, target, kind); missing ones are ignored."""

    def delete_unresolved(self, keys: Sequence[tuple[NodeId, str, str, int]]) -> None:
        """Remove unresolved references by (source, kind, name, line)."""

    def delete_files(self, repo: str, paths: Sequence[str]) -> None:
        """Remove the file nodes, every object in them, their edges in both
        directions, their unresolved references and their sources."""

    def delete_repository(self, repo: str) -> None:
        """Remove everything of one repository."""

    def save(self) -> None:
        """Make every write so far durable (atomic for file stores)."""

    def close(self) -> None: ...

    def writing(self, repos: Iterable[str] = (), *, wait: bool = False,
                staged: Staged | None = None) -> AbstractContextManager[None]:
        """A block whose writes readers see together at its end (a server store writes
        a new version of ``repos`` and of any repository the block writes to, and
        switches to it); a block that fails leaves what readers see as it was.
        ``wait``: a server store waits for another writer of a repository instead of
        failing (``StoreBusy``); ``staged``: an index run's snapshots, which an
        embedded store's ``save`` in the block joins (its commit switches the graph
        and the retrieval snapshot at once) instead of switching on its own."""

    def snapshot(self) -> AbstractContextManager[None]:
        """A block whose reads all see one version of each repository."""

    # -- reads ----------------------------------------------------------------
    def get_objects(self, ids: Iterable[NodeId]) -> dict[NodeId, CodeObject]:
        """The objects among ``ids`` that exist; missing ids are left out."""

    def find_objects(
        self,
        *,
        repo: str | None = None,
        kind: str | None = None,
        path: str | None = None,
        name: str | None = None,
    ) -> list[CodeObject]:
        """Objects matching every given filter, sorted by id."""

    def find_edges(
        self,
        *,
        repo: str | None = None,
        kind: str | None = None,
        source: NodeId | None = None,
        target: NodeId | None = None,
    ) -> list[Edge]:
        """Edges matching every given filter, sorted by (source, target, kind).
        ``repo`` keeps edges whose source belongs to that repository."""

    def edges_of(
        self, ids: Iterable[NodeId], *, kinds: Sequence[str] | None = None,
        direction: Direction = "both",
    ) -> list[Edge]:
        """Edges touching any of ``ids``, sorted."""

    def adjacent(
        self, ids: Iterable[NodeId], *, kinds: Sequence[str] | None = None,
        direction: Direction = "both",
    ) -> dict[NodeId, list[NodeId]]:
        """For each of ``ids`` that has one, the objects one edge of ``kinds`` away
        in ``direction`` (``edges_of``'s ends without the edges), sorted."""

    def neighbors(
        self, ids: Iterable[NodeId], *, kinds: Sequence[str] | None = None,
        direction: Direction = "both", depth: int = 1,
    ) -> dict[NodeId, int]:
        """Objects within ``depth`` hops of ``ids`` (excluding them) -> hop count."""

    def same_file(self, ids: Iterable[NodeId]) -> dict[NodeId, list[NodeId]]:
        """For each id, the other definitions in its file, sorted."""

    def unresolved(self, repo: str | None = None) -> list[UnresolvedRef]: ...

    def source(self, file_node: NodeId) -> str | None: ...

    def sources(self, file_nodes: Iterable[NodeId]) -> dict[NodeId, str]:
        """The text of each of ``file_nodes`` that has one (a server store reads them
        in one round trip)."""

    def get_meta(self, repo: str) -> dict[str, Any]: ...

    def repositories(self) -> list[str]: ...

    def counts(self, repo: str | None = None) -> dict[str, Any]:
        """``{"objects": {kind: n}, "edges": {kind: n}, "unresolved": n}``"""


@runtime_checkable
class GraphStore(GraphBackend, Protocol):
    """Where the code graph lives: a backend's primitives, and the reads
    ``DerivedReads`` answers from them."""

    def file_objects(self, file_nodes: Iterable[NodeId]) -> dict[NodeId, list[CodeObject]]:
        """For each of ``file_nodes`` that exists, the objects of its file (the file
        node too), sorted by id: ``find_objects(repo=, path=)`` for many files at once."""

    def file_spans(self, file_nodes: Iterable[NodeId]) -> dict[NodeId, list[Span]]:
        """``file_objects`` as (id, kind, start_line, end_line): where each object of
        the files lies, what rendering reads to find a class's members (a server
        sends this in a fraction of the whole objects' size)."""

    def export(self, repo: str | None = None) -> dict[str, Any]:
        """Sorted nodes (with every property), edges and unresolved references:
        two stores holding the same graph export equal values."""

    def held(self, repo: str) -> HeldGraph:
        """What the store holds of ``repo``, keyed for a re-index to compare with
        (``graph.delta``)."""


@dataclass(frozen=True, slots=True)
class HeldGraph:
    """One repository's graph in a store, unordered, keyed as a re-index compares it."""

    objects: dict[NodeId, CodeObject]
    #: (source, target, kind) -> lines
    edges: dict[tuple[NodeId, NodeId, str], tuple[int, ...]]
    #: (source, kind, name, line) -> reason
    unresolved: dict[tuple[NodeId, str, str, int], str]

    @classmethod
    def of(cls, store: GraphBackend, repo: str) -> HeldGraph:
        """Through the store's reads (what a store without a faster way returns)."""
        return cls({o.id: o for o in store.find_objects(repo=repo)},
                   {e.key: e.lines for e in store.find_edges(repo=repo)},
                   {u.key: u.reason for u in store.unresolved(repo)})


class DerivedReads:
    """The base class of every store: the reads of ``GraphStore`` beyond a
    backend's primitives, answered through them."""

    def file_objects(self: GraphBackend, file_nodes: Iterable[NodeId]) -> dict[NodeId, list[CodeObject]]:
        return {f.id: self.find_objects(repo=f.repo, path=f.path) for f in self.get_objects(file_nodes).values()}

    def file_spans(self: GraphStore, file_nodes: Iterable[NodeId]) -> dict[NodeId, list[Span]]:
        return spans_of(self.file_objects(file_nodes))

    def export(self: GraphBackend, repo: str | None = None) -> dict[str, Any]:
        return sorted_export(self.find_objects(repo=repo), self.find_edges(repo=repo), self.unresolved(repo))

    def held(self: GraphBackend, repo: str) -> HeldGraph:
        return HeldGraph.of(self, repo)


def known_repositories(store: GraphStore, names: Iterable[str]) -> list[str]:
    """The store's repositories, once each of ``names`` is one of them; an
    ``InputError`` naming the first that is not (and those there are) otherwise."""
    have = store.repositories()
    for name in names:
        if name not in have:
            raise InputError(f"no repository {name!r} in {store.location} (have: {', '.join(have) or 'none'})")
    return have


def is_server_uri(location: str) -> bool:
    return location.split("://", 1)[0] in {"neo4j", "neo4j+s", "neo4j+ssc", "bolt", "bolt+s", "bolt+ssc"}


def open_store(location: str | os.PathLike[str] | None = None, *, create: bool = True,
               held: bool = False, write: bool = False, version: Version | None = None) -> GraphStore:
    """Open a store: a ``neo4j://`` / ``bolt://`` URI, or an index folder
    (default ``$VITALRAG_STORE`` or ``.vitalrag`` in the current directory).
    ``held``: a server store's reads all see one version of each repository (for a
    one-shot command; see ``Neo4jStore``); an index folder opened ``held`` and not
    ``create`` is read by the piece (``graph.packed``), for a one-shot command.
    ``write``: for a writer that holds the folder's writer lock (a graph that
    cannot be read is built again: ``memory.open_writable``). ``version``: the
    graph snapshot of that version of the folder (one a reader read once)."""
    loc = os.fspath(location) if location is not None else os.environ.get("VITALRAG_STORE", DEFAULT_STORE)
    if is_server_uri(loc):
        from vitalrag.graph.neo4j import Neo4jStore

        return Neo4jStore.from_uri(loc, held=held)
    from vitalrag.graph.memory import MemoryStore, open_snapshot, open_writable

    if write:
        return open_writable(loc)
    if held and not create:
        return open_snapshot(loc, version)
    return MemoryStore.open(loc, create=create, version=version)


def hops(start: Sequence[NodeId], adjacent: Callable[[list[NodeId]], Mapping[NodeId, Sequence[NodeId]]],
         depth: int) -> dict[NodeId, int]:
    """Breadth-first from ``start`` (present nodes) over ``adjacent(frontier)``: each
    node reached within ``depth`` hops, but the starts, with its hop count, sorted."""
    seen: dict[NodeId, int] = {i: 0 for i in start}
    frontier = list(start)
    for hop in range(1, depth + 1):
        nxt = []
        for ends in adjacent(frontier).values():
            for other in ends:
                if other not in seen:
                    seen[other] = hop
                    nxt.append(other)
        frontier = nxt
    return {n: h for n, h in sorted(seen.items()) if h > 0}


def edges_at(ids: Iterable[NodeId], rows_at: Callable[[NodeId], Iterable[Sequence[Any]]],
             kinds: Sequence[str] | None) -> list[Edge]:
    """``edges_of`` for an embedded store: the edges of ``kinds`` (every kind: None
    or empty) among ``rows_at(node)`` (its ``(source, target, kind, lines)`` rows in
    the direction asked) of each of ``ids``, each once, sorted."""
    wanted = set(kinds) if kinds else None
    found: dict[tuple[str, str, str], Edge] = {}
    for node in dict.fromkeys(ids):
        for s, t, k, lines in rows_at(node):
            if wanted is None or k in wanted:
                found[(s, t, k)] = Edge(s, t, k, tuple(lines))
    return [found[key] for key in sorted(found)]


def sorted_export(objects: Iterable[CodeObject], edges: Iterable[Edge],
                  unresolved: Iterable[UnresolvedRef]) -> dict[str, Any]:
    """The canonical export form shared by every store."""
    return {
        "nodes": [o.to_dict() for o in sorted(objects, key=lambda o: o.id)],
        "edges": [e.to_dict() for e in sorted(edges, key=lambda e: e.key)],
        "unresolved": [u.to_dict() for u in sorted(unresolved, key=lambda u: u.key)],
    }


def object_lines(store: GraphStore, obj: CodeObject) -> list[str]:
    """The source lines of an object (none for repositories and modules)."""
    if not obj.start_line or obj.path.endswith("/") or not obj.path:
        return []
    text = store.source(file_id(obj.repo, obj.path)) or ""
    return split_lines(text)[obj.start_line - 1:obj.end_line]
