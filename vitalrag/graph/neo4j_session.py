"""What the Neo4j helpers (``neo4j_versions``, ``neo4j_views``) ask of the store:
statements run with its driver, batching and error translation, and its
versions; never its private state. ``Neo4jStore`` is the one implementation."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from vitalrag.graph.neo4j import Neo4jSettings
    from vitalrag.graph.version import Staged


class Neo4jSession(Protocol):
    location: str
    settings: Neo4jSettings

    def read(self, query: str, **params: Any) -> list[Any]:
        """The records of one read (``$pin``: the versions reads see, filled in)."""

    def read_rows(self, query: str, **params: Any) -> list[Any]:
        """The rows of a read that returns them as one record's ``rows``."""

    def write(self, query: str, **params: Any) -> list[Any]:
        """One write transaction outside any version (schema, leases, garbage)."""

    def write_data(self, query: str, **params: Any) -> list[Any]:
        """One write transaction of the version being written."""

    def write_grouped(self, rows: Sequence[tuple[str, dict[str, Any]]], check: Any = None,
                      writers: int | None = None) -> None:
        """``(query, row)`` pairs of the version being written, in batches."""

    def commit(self, work: Callable[[Any], None]) -> None:
        """``work`` in one write transaction on a session of its own."""

    def ensure_schema(self) -> None:
        """Constraints and indexes, before the first write."""

    def pins(self) -> dict[str, int]:
        """The version of each repository reads see now."""

    def staged(self) -> dict[str, int]:
        """The versions being written, not yet switched to."""

    def writing(self, repos: Iterable[str] = (), *, wait: bool = False,
                staged: Staged | None = None) -> AbstractContextManager[None]: ...
