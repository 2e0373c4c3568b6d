"""The ``store`` fixture: every graph-store test runs against each implementation.

``neo4j`` runs against the server at ``$NEO4J_URI`` (``scripts/neo4j-local start``
gives one) and is skipped when that is unset. Tests never wipe the database:
each gets a repository name of its own (``repo``), and everything under that
name is removed afterwards, so a run can point at a database that holds other
data.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from vitalrag.graph.memory import MemoryStore
from vitalrag.graph.store import GraphStore

FIXTURES = Path(__file__).parent / "fixtures"

# Test-only cleanup of one test's namespace, including references whose source
# object was never written (the store keeps those, as the embedded one does).
_PURGE = (
    "MATCH (n) WHERE (n:CodeObject AND n.repo STARTS WITH $prefix) "
    "OR (n:Unresolved AND n.source STARTS WITH $prefix) "
    "OR (n:Source AND n.id STARTS WITH $prefix) "
    "OR (n:RepositoryMeta AND n.repo STARTS WITH $prefix) "
    "OR (n:View AND n.repo STARTS WITH $prefix) "
    "OR (n:RetrievalMeta AND n.repo STARTS WITH $prefix) "
    "OR (n:RepositoryVersion AND n.repo STARTS WITH $prefix) "
    "DETACH DELETE n"
)


def neo4j_uri() -> str:
    uri = os.environ.get("NEO4J_URI", "")
    if not uri:
        pytest.skip("NEO4J_URI is unset: start a server with `scripts/neo4j-local start` and "
                    "export NEO4J_URI=bolt://127.0.0.1:7687")
    pytest.importorskip("neo4j", reason="the neo4j driver is not installed (pip install -e '.[dev]')")
    return uri


def purge(uri: str, prefix: str) -> None:
    import neo4j

    from vitalrag.graph.neo4j import Neo4jSettings

    settings = Neo4jSettings.from_env(uri)
    auth = (settings.username, settings.password) if settings.password else None
    with neo4j.GraphDatabase.driver(settings.uri, auth=auth) as driver:
        driver.execute_query(_PURGE, prefix=prefix, database_=settings.database)


@pytest.fixture
def repo() -> str:
    """A repository name no other test uses; ids of test objects start with it."""
    return f"t{uuid.uuid4().hex[:12]}"


@pytest.fixture
def neo4j_url() -> str:
    """``$NEO4J_URI``; the test is skipped when it is unset."""
    return neo4j_uri()


@pytest.fixture
def open_neo4j(repo: str, neo4j_url: str) -> Iterator[object]:
    """A factory of ``Neo4jStore`` on ``$NEO4J_URI``; the test's namespace is purged at the end."""
    uri = neo4j_url
    from vitalrag.graph.neo4j import Neo4jStore

    opened: list[Neo4jStore] = []

    def make() -> Neo4jStore:
        store = Neo4jStore.from_uri(uri)
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()
    purge(uri, repo)


class PackedReads:
    """A ``MemoryStore`` whose reads, once it is saved and until the next write, come
    from its saved snapshot read by the piece (``graph.packed.PackedGraph``, what a
    one-shot CLI command reads): every read of the suite checks that both agree."""

    READS = frozenset({"get_objects", "find_objects", "find_edges", "edges_of", "adjacent", "neighbors",
                       "same_file", "unresolved", "source", "sources", "file_objects", "file_spans", "get_meta", "repositories", "counts", "export",
                       "held"})

    def __init__(self, folder: Path) -> None:
        self.inner = MemoryStore(folder)
        self.location = self.inner.location
        self.packed: GraphStore | None = None

    def save(self) -> None:
        from vitalrag.graph.memory import open_snapshot

        self.inner.save()
        self.packed = open_snapshot(self.inner.folder)

    def __getattr__(self, name: str) -> object:
        if name in self.READS and self.packed is not None:
            return getattr(self.packed, name)
        if name not in self.READS:
            self.packed = None  # a write: reads come from the store until it is saved again
        return getattr(self.inner, name)


@pytest.fixture(params=["memory", "packed", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[GraphStore]:
    if request.param == "memory":
        yield MemoryStore(tmp_path / "index")
        return
    if request.param == "packed":
        yield PackedReads(tmp_path / "index")  # type: ignore[misc]
        return
    yield request.getfixturevalue("open_neo4j")()
