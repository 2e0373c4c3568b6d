"""The Neo4j server store: the code graph over Bolt with the official driver.

It answers exactly as ``MemoryStore`` does (``tests/graph`` runs one suite
against both). The layout and every statement are in ``neo4j_queries``.

Settings come from the URI and the environment, never from the command line:
``NEO4J_USERNAME`` (default ``neo4j``), ``NEO4J_PASSWORD`` (no auth when unset),
``NEO4J_DATABASE`` (the server's default when unset),
``VITALRAG_NEO4J_BATCH`` (rows per write transaction, default 10000),
``VITALRAG_NEO4J_WRITERS`` (write transactions in flight at once, default 2),
``VITALRAG_NEO4J_GRACE`` (seconds what a new version replaced stays readable, 10)
and ``VITALRAG_NEO4J_LEASE`` (seconds a writer's lease lasts unless renewed, 30).

Every write goes into a new version of its repository, which readers see only
once the writer switches to it (``neo4j_versions``): ``writing()`` makes one
version of several calls (an index run: graph, then views), a call outside such
a block is a version of its own. A bulk write is cut into batches, each one
transaction; up to ``writers`` of them run at once on their own sessions, so the
server works on one batch while the client sends the next. Batches of one call
are independent (objects before edges is kept by the caller: each call returns
when all its batches are committed); a deadlock between two edge batches is a
transient error the driver retries.

Driver errors are translated here, at the boundary: an unreachable server is
``StoreUnavailable``, refused credentials ``StoreAuthError``, anything else the
server refuses ``StoreError``. No message names the password.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import CancelledError, ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import unquote, urlsplit, urlunsplit

from vitalrag.errors import InputError, SchemaMismatch, StoreAuthError, StoreError, StoreUnavailable
from vitalrag.graph import neo4j_queries as q
from vitalrag.graph.neo4j_versions import Versions
from vitalrag.graph.store import DerivedReads, Direction, Span
from vitalrag.model import (
    DEFINITION_KINDS,
    SCHEMA_VERSION,
    AllocationRecord,
    CodeObject,
    Edge,
    NodeId,
    UnresolvedRef,
)

if TYPE_CHECKING:
    import neo4j

log = logging.getLogger(__name__)

DEFAULT_BATCH = 10000
DEFAULT_WRITERS = 2
DEFAULT_GRACE = 10.0
DEFAULT_LEASE = 30.0
#: a bulk write is not cut smaller than this to keep every writer busy
MIN_BATCH = 1000
#: a write transaction of file texts stays under this many characters
SOURCE_BATCH_CHARS = 4_000_000
#: files deleted per transaction
DELETE_BATCH_PATHS = 200

T = TypeVar("T")


class Unlogged(list):
    """A parameter list the driver packs as any other, with a short ``repr``. The
    driver formats every statement's parameters for its debug log whether or not
    debug logging is on (``" ".join(map(repr, fields))`` before ``log.debug``):
    for a batch of 10,000 views with 384-d embeddings that took more of the
    client's CPU than packing and sending them."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"[{len(self)} items]"


def unlogged(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` with its list values ``Unlogged``."""
    return {k: Unlogged(v) if type(v) is list else v for k, v in params.items()}


@dataclass(frozen=True, slots=True)
class Neo4jSettings:
    """Where and how to connect. ``uri`` never carries credentials."""

    uri: str
    username: str = "neo4j"
    password: str | None = field(default=None, repr=False)
    database: str | None = None
    batch_size: int = DEFAULT_BATCH
    writers: int = DEFAULT_WRITERS
    grace: float = DEFAULT_GRACE
    lease: float = DEFAULT_LEASE

    @classmethod
    def from_env(cls, uri: str, env: Mapping[str, str] | None = None) -> Neo4jSettings:
        """Settings for ``uri`` from ``NEO4J_*`` / ``VITALRAG_NEO4J_*``; a
        ``user:password@`` in the URI wins over the environment and is stripped."""
        env = os.environ if env is None else env
        username = env.get("NEO4J_USERNAME") or "neo4j"
        password = env.get("NEO4J_PASSWORD") or None
        parts = urlsplit(uri)
        if parts.username is not None or parts.password is not None:
            username = unquote(parts.username or "") or username
            password = unquote(parts.password) if parts.password is not None else password
            host = parts.hostname or ""
            netloc = f"{host}:{parts.port}" if parts.port else host
            uri = urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
        return cls(uri=uri, username=username, password=password,
                   database=env.get("NEO4J_DATABASE") or None,
                   batch_size=_positive(env, "VITALRAG_NEO4J_BATCH", DEFAULT_BATCH),
                   writers=_positive(env, "VITALRAG_NEO4J_WRITERS", DEFAULT_WRITERS),
                   grace=_seconds(env, "VITALRAG_NEO4J_GRACE", DEFAULT_GRACE, zero=True),
                   lease=_seconds(env, "VITALRAG_NEO4J_LEASE", DEFAULT_LEASE, zero=False))


def _positive(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name) or str(default)
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise InputError(f"{name} must be a positive integer, not {raw!r}")
    return value


def _seconds(env: Mapping[str, str], name: str, default: float, *, zero: bool) -> float:
    raw = env.get(name) or str(default)
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not (value >= 0 if zero else value > 0) or value == float("inf"):
        raise InputError(f"{name} must be a {'non-negative' if zero else 'positive'} number of seconds, "
                         f"not {raw!r}")
    return value


def caption(obj: CodeObject) -> str:
    """What the Neo4j Browser shows on a node, e.g. ``method Session.request``."""
    if obj.kind in DEFINITION_KINDS:
        label = obj.qualname or obj.name
    else:
        label = obj.path or obj.name or obj.id
    return f"{obj.kind} {label}"


def _unresolved_key(key: tuple[Any, ...]) -> str:
    """The unique property of an ``:Unresolved`` node: its (source, kind, name, line) as JSON."""
    source, kind, name, line = key
    return json.dumps([source, kind, name, int(line)])


def _quiet_notifications(neo4j: Any) -> dict[str, Any]:
    """Driver options that silence UNRECOGNIZED notifications ("label X does not exist"),
    which every read of a fresh database would log as a warning."""
    if hasattr(neo4j, "NotificationDisabledClassification"):  # driver 5.22+
        return {"notifications_disabled_classifications":
                [neo4j.NotificationDisabledClassification.UNRECOGNIZED]}
    return {"notifications_disabled_categories": [neo4j.NotificationDisabledCategory.UNRECOGNIZED]}


def _chunks(rows: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for i in range(0, len(rows), size):
        yield rows[i:i + size]


class _ReadTransaction:
    """The reads of one ``snapshot()`` block, in one read transaction (opened at the
    first read, closed with the block). A read that fails in it (a transient error, a
    session the server dropped) ends the transaction and returns None: the caller
    runs it again as a transaction of its own, with the driver's retries and errors."""

    def __init__(self, store: Neo4jStore) -> None:
        self.store = store
        self._session: Any = None
        self._tx: Any = None

    def run(self, query: str, params: dict[str, Any]) -> list[Any] | None:
        neo4j = self.store._neo4j
        try:
            if self._tx is None:
                self._session = self.store._driver.session(database=self.store.settings.database,
                                                           default_access_mode=neo4j.READ_ACCESS)
                self._tx = self._session.begin_transaction()
            return list(self._tx.run(query, params))
        except (neo4j.exceptions.Neo4jError, neo4j.exceptions.DriverError) as exc:
            log.debug("a read in the snapshot's transaction failed (%s); it runs on its own", exc)
            self.close()
            return None

    def close(self) -> None:
        tx, session, self._tx, self._session = self._tx, self._session, None, None
        for done in (tx, session):  # a read transaction: nothing to commit
            try:
                if done is not None:
                    done.close()
            except Exception as exc:  # noqa: BLE001 (the reads are done; the server may be gone)
                log.debug("closing the snapshot's transaction: %s", exc)


class Neo4jStore(DerivedReads):
    """A ``GraphStore`` on a Neo4j 5 server. Each write batch is one transaction."""

    def __init__(self, settings: Neo4jSettings, *, held: bool = False) -> None:
        try:
            import neo4j
        except ImportError as exc:
            raise StoreError("the Neo4j store needs the neo4j driver: pip install 'vitalrag[neo4j]'") from exc
        self.settings = settings
        self.location = settings.uri
        self._neo4j = neo4j
        self._schema_ready = False
        self._versions = Versions(self, held=held)
        #: the read transaction of the ``snapshot()`` block this thread (or task) is in
        self._reading: ContextVar[_ReadTransaction | None] = ContextVar(f"vitalrag_read_{id(self)}",
                                                                         default=None)
        auth = (settings.username, settings.password) if settings.password else None
        with self._errors():
            self._driver: neo4j.Driver = neo4j.GraphDatabase.driver(
                settings.uri, auth=auth, user_agent="vitalrag", **_quiet_notifications(neo4j))
        try:
            with self._errors():
                # no retries here, so a server that is down is reported at once
                self._driver.verify_connectivity()
            self._check_schema_version()
        except BaseException:
            self._driver.close()
            raise

    @classmethod
    def from_uri(cls, uri: str, *, held: bool = False) -> Neo4jStore:
        """Connect to ``uri`` with settings from the environment. ``held``: every read
        outside a ``snapshot()`` block sees the versions the first one saw (as if the
        store's life were one block), instead of the current ones."""
        return cls(Neo4jSettings.from_env(uri), held=held)

    # -- plumbing -------------------------------------------------------------
    @contextmanager
    def _errors(self) -> Iterator[None]:
        """Translate driver errors into the VitalRAG tree (and never name the password)."""
        ex = self._neo4j.exceptions
        where = f"Neo4j at {self.location}"
        try:
            yield
        except ex.AuthError as exc:
            raise StoreAuthError(
                f"{where} refused the credentials of user {self.settings.username!r} "
                "(check NEO4J_USERNAME and NEO4J_PASSWORD)"
            ) from exc
        except (ex.ServiceUnavailable, ex.SessionExpired) as exc:
            raise StoreUnavailable(f"cannot reach Neo4j at {self.location}") from exc
        except ex.Neo4jError as exc:
            if exc.code == "Neo.ClientError.Database.DatabaseNotFound":
                raise StoreError(
                    f"{where} has no database {self.settings.database!r} (check NEO4J_DATABASE)"
                ) from exc
            if exc.code == "Neo.ClientError.Security.Forbidden":
                raise StoreAuthError(f"{where}: user {self.settings.username!r} may not do this: "
                                     f"{exc.message}") from exc
            raise StoreError(f"{where}: {exc.code}: {exc.message}") from exc
        except (ex.ConfigurationError, ValueError) as exc:
            raise StoreError(f"cannot use Neo4j URI {self.location}: {exc}") from exc
        except ex.DriverError as exc:
            raise StoreError(f"{where}: {type(exc).__name__}: {exc}") from exc

    def _params(self, query: str, params: dict[str, Any]) -> dict[str, Any]:
        """``params``, with the pinned versions when ``query`` reads them."""
        if "$pin" in query and "pin" not in params:
            params["pin"] = self._versions.pins()
        return unlogged(params)

    def read(self, query: str, **params: Any) -> list[Any]:
        params = self._params(query, params)
        reading = self._reading.get()
        if reading is not None:
            records = reading.run(query, params)
            if records is not None:
                return records
        with self._errors():
            result = self._driver.execute_query(
                query, parameters_=params, routing_=self._neo4j.RoutingControl.READ,
                database_=self.settings.database,
            )
        return list(result.records)

    def read_rows(self, query: str, **params: Any) -> list[Any]:
        """The rows of a read that returns them all as one record's ``rows`` (a
        ``collect`` of maps): hundreds of records cost the driver about 20 µs each
        (a read of 266 objects took 9.2 ms as records, 5.6 ms as one)."""
        records = self.read(query, **params)
        return records[0]["rows"] if records else []

    def write(self, query: str, **params: Any) -> list[Any]:
        params = self._params(query, params)
        with self._errors():
            result = self._driver.execute_query(
                query, parameters_=params, routing_=self._neo4j.RoutingControl.WRITE,
                database_=self.settings.database,
            )
        return list(result.records)

    def write_data(self, query: str, **params: Any) -> list[Any]:
        """One write transaction of the version being written."""
        self._versions.check()
        records = self.write(query, **params)
        self._versions.wrote()
        return records

    def _write_statements(self, statements: Sequence[str], **params: Any) -> None:
        """``statements`` in order, in one write transaction, with the same parameters."""
        params = self._params(" ".join(statements), params)

        def work(tx: Any) -> None:
            for statement in statements:
                tx.run(statement, **params).consume()

        self._commit_data(work)

    def _write_rows(self, query: str, rows: Sequence[dict[str, Any]]) -> None:
        self.write_grouped([(query, row) for row in rows])

    def write_grouped(self, rows: Sequence[tuple[str, dict[str, Any]]],
                       check: Any = None, writers: int | None = None) -> None:
        """Write ``(query, row)`` pairs in batches of ``batch_size`` rows, each batch
        one transaction running one ``UNWIND`` per distinct query in it, up to
        ``writers`` (default: the setting) batches at once. ``check``, given a
        batch's results, may raise to roll that batch back."""
        works = []
        writers = writers or self.settings.writers
        # rows of one query together (fewer statements per batch); at least one batch
        # per writer, so every writer has work, but no batch under MIN_BATCH rows
        rows = sorted(rows, key=lambda qr: qr[0])
        size = min(self.settings.batch_size, max(MIN_BATCH, -(-len(rows) // max(1, writers))))
        pin = self._versions.pins() if any("$pin" in query for query, _ in rows) else None
        for chunk in _chunks(rows, size):
            grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
            for query, row in chunk:
                grouped[query].append(row)

            def work(tx: Any, grouped: dict[str, list[dict[str, Any]]] = grouped) -> None:
                for query, batch in grouped.items():
                    record = tx.run(query, rows=Unlogged(batch), pin=pin).single()
                    if check is not None:
                        check(batch, record)

            works.append(work)
        self._commit_all(works, writers)

    def _commit_data(self, work: Callable[[Any], None]) -> None:
        self._versions.check()
        self.commit(work)
        self._versions.wrote()

    def _commit_all(self, works: Sequence[Callable[[Any], None]], writers: int) -> None:
        """Commit each of ``works`` in a write transaction of its own, up to
        ``writers`` at once. The first failure is raised once every transaction in
        flight has ended; those not yet started are not run."""
        if len(works) <= 1 or writers <= 1:
            for work in works:
                self._commit_data(work)
            return
        with ThreadPoolExecutor(max_workers=min(writers, len(works)),
                                thread_name_prefix="vitalrag-neo4j") as pool:
            futures = [pool.submit(self._commit_data, work) for work in works]
            failure: BaseException | None = None
            for future in futures:
                try:
                    future.result()
                except CancelledError:
                    pass
                except BaseException as exc:  # noqa: BLE001 - re-raised below, after the others end
                    if failure is None:
                        failure = exc
                        for other in futures:
                            other.cancel()
            if failure is not None:
                raise failure

    def commit(self, work: Callable[[Any], None]) -> None:
        """Run ``work`` in one write transaction on a session of its own."""
        with self._errors(), self._driver.session(database=self.settings.database) as session:
            session.execute_write(work)

    def _check_schema_version(self) -> None:
        records = self.read(q.GET_SCHEMA_VERSION)
        if not records:
            return
        version, layout = records[0]["version"], records[0]["layout"]
        if version != SCHEMA_VERSION or layout != q.LAYOUT:
            raise SchemaMismatch(
                f"Neo4j at {self.location} holds VitalRAG schema version {version} (layout {layout or 1}), "
                f"this VitalRAG reads version {SCHEMA_VERSION} (layout {q.LAYOUT}); re-index into another database"
            )
        # the version is written only after the constraints and indexes exist
        self._schema_ready = True

    def ensure_schema(self) -> None:
        """Constraints and indexes before the first write (each lookup relies on them)."""
        if self._schema_ready:
            return
        for statement in q.SCHEMA:
            self.write(statement)
        self.write(q.SCHEMA_AWAIT)
        self.write(q.SET_SCHEMA_VERSION, version=SCHEMA_VERSION, layout=q.LAYOUT)
        self._schema_ready = True

    # -- versions -------------------------------------------------------------
    def writing(self, repos: Iterable[str] = (), *, wait: bool = False,
                staged: Any = None) -> AbstractContextManager[None]:
        """Writes in this block go into a new version of their repositories (``repos``
        and any the block writes to), which readers see at once when it ends; a block
        that fails, or a writer killed in it, leaves the old versions as they were.
        ``wait``: a repository another writer holds is waited for, not ``StoreBusy``
        (``staged``, an embedded folder's, has no use here)."""
        return self._versions.writing(repos, wait=wait)

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Reads in this block see one version of each repository, and run in one read
        transaction of this thread's (or task's) own session: a ``get_context`` makes
        about 15 reads, each of which otherwise costs a session from the pool and a
        transaction of its own (a BEGIN with it, and a COMMIT round trip after)."""
        with self._versions.snapshot():
            if self._reading.get() is not None:  # nested: the outer block's transaction
                yield
                return
            reading = _ReadTransaction(self)
            token = self._reading.set(reading)
            try:
                yield
            finally:
                self._reading.reset(token)
                reading.close()

    def pins(self) -> dict[str, int]:
        """The version of each repository reads see now."""
        return self._versions.pins()

    def staged(self) -> dict[str, int]:
        """The versions this store is writing (and reads through it see), not yet switched to."""
        return self._versions.staged

    def collect(self, repo: str, *, grace: float | None = None) -> None:
        """Delete what versions of ``repo`` replaced at least ``grace`` seconds ago
        (default: the store's grace); writers do this on their own."""
        self._versions.collect(repo, grace=grace)

    # -- opening / saving -----------------------------------------------------
    def save(self) -> None:
        """Nothing to do: every batch was committed as it was written."""

    def close(self) -> None:
        self._driver.close()

    # -- writes ---------------------------------------------------------------
    def upsert_objects(self, objects: Sequence[CodeObject], *, fresh: bool = False) -> None:
        latest = {o.id: o for o in objects}
        query = q.create_objects if fresh else q.upsert_objects
        rows = []
        for obj in latest.values():
            # refuse unknown kinds before writing anything
            rows.append((query(obj.kind), {"id": obj.id, "props": {**obj.to_dict(), "caption": caption(obj)}}))
        if not rows:
            return
        with self.writing({o.repo for o in latest.values()}):
            # a replaced object's links are copied to its new node: one batch at a time,
            # so two batches never copy the two ends of one edge past each other
            self.write_grouped(rows, writers=None if fresh else 1)
        log.debug("wrote %d objects to %s", len(latest), self.location)

    def upsert_edges(self, edges: Sequence[Edge], *, fresh: bool = False) -> None:
        latest = {e.key: e for e in edges}
        query = q.create_edges if fresh else q.upsert_edges
        rows = [(query(e.kind), {"source": e.source, "target": e.target, "lines": list(e.lines)})
                for e in latest.values()]
        if not rows:
            return

        def check(batch: list[dict[str, Any]], record: Any) -> None:
            # an edge whose end is missing writes nothing: name it, and roll back
            if record is None or record["written"] != len(batch):
                ends = sorted({r[end] for r in batch for end in ("source", "target")})
                found = {r["id"] for r in self.read(q.MISSING_OBJECTS, ids=ends)}
                for r in batch:
                    for end in ("source", "target"):
                        if r[end] in found:
                            raise StoreError(f"edge {r['source']} -> {r['target']}: no node {r[end]}")
                raise StoreError("edges were not all written (a node was deleted concurrently?)")

        with self.writing({self._versions.repo_of(e.source) for e in latest.values()}):
            self.write_grouped(rows, check)
        log.debug("wrote %d edges to %s", len(latest), self.location)

    def upsert_unresolved(self, refs: Sequence[UnresolvedRef], *, fresh: bool = False) -> None:
        latest = {u.key: u for u in refs}
        if not latest:
            return
        repo_of = self._versions.repo_of
        with self.writing({repo_of(u.source) for u in latest.values()}):
            rows = []
            for key, u in latest.items():
                row_key, repo = _unresolved_key(key), repo_of(u.source)
                rows.append({"key": row_key, "repo": repo, "props": {**u.to_dict(), "key": row_key, "repo": repo}})
            self._write_rows(q.CREATE_UNRESOLVED if fresh else q.UPSERT_UNRESOLVED, rows)

    def put_sources(self, sources: Mapping[NodeId, str]) -> None:
        if not sources:
            return
        repo_of = self._versions.repo_of
        with self.writing({repo_of(node) for node in sources}):
            batch: list[dict[str, Any]] = []
            size = 0
            for node, text in sources.items():
                repo = repo_of(node)
                batch.append({"key": node, "repo": repo, "props": {"id": node, "repo": repo, "text": text}})
                size += len(text)
                if len(batch) >= self.settings.batch_size or size >= SOURCE_BATCH_CHARS:
                    self.write_data(q.PUT_SOURCES, rows=batch)
                    batch, size = [], 0
            if batch:
                self.write_data(q.PUT_SOURCES, rows=batch)

    def set_meta(self, repo: str, meta: Mapping[str, Any]) -> None:
        try:
            text = json.dumps(dict(meta))
        except (TypeError, ValueError) as exc:
            raise InputError(f"metadata of {repo!r} is not JSON: {exc}") from exc
        with self.writing([repo]):
            self.write_data(q.SET_META, rows=[{"key": repo, "repo": repo, "props": {"repo": repo, "json": text}}])

    def delete_objects(self, ids: Sequence[NodeId]) -> None:
        unique = list(dict.fromkeys(ids))
        if not unique:
            return
        with self.writing({self._versions.repo_of(i) for i in unique}):
            for chunk in _chunks(unique, self.settings.batch_size):
                self._write_statements(q.DELETE_OBJECTS, ids=list(chunk))

    def delete_edges(self, keys: Sequence[tuple[NodeId, NodeId, str]]) -> None:
        by_kind: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for source, target, kind in dict.fromkeys(keys):
            if q.rel_types([kind]) is not None:  # an edge of another kind cannot be stored
                by_kind[kind].append({"source": source, "target": target})
        if not by_kind:
            return
        with self.writing({self._versions.repo_of(r["source"]) for rows in by_kind.values() for r in rows}):
            for kind, rows in by_kind.items():
                self._write_rows(q.delete_edges(kind), rows)

    def delete_unresolved(self, keys: Sequence[tuple[NodeId, str, str, int]]) -> None:
        unique: list[tuple[NodeId, str, str, int]] = list(dict.fromkeys((k[0], k[1], k[2], k[3]) for k in keys))
        if not unique:
            return
        with self.writing({self._versions.repo_of(k[0]) for k in unique}):
            for chunk in _chunks([_unresolved_key(k) for k in unique], self.settings.batch_size):
                self.write_data(q.DELETE_UNRESOLVED, keys=list(chunk))

    def delete_files(self, repo: str, paths: Sequence[str]) -> None:
        unique = list(dict.fromkeys(paths))
        if not unique:
            return
        with self.writing([repo]):
            # one batch after another: concurrent DETACH DELETEs of linked nodes deadlock
            for chunk in _chunks(unique, DELETE_BATCH_PATHS):
                ids = [r["id"] for r in self.read(q.FILE_OBJECT_IDS, repo=repo, paths=list(chunk))]
                if ids:
                    self._write_statements(q.DELETE_OBJECTS, ids=ids)

    def delete_repository(self, repo: str) -> None:
        with self.writing([repo]):
            paths = [r["path"] for r in self.read(q.REPOSITORY_PATHS, repo=repo)]
            self.delete_files(repo, paths)
            self.write_data(q.DELETE_META, repo=repo)

    # -- reads ----------------------------------------------------------------
    def get_objects(self, ids: Iterable[NodeId]) -> dict[NodeId, CodeObject]:
        wanted = list(dict.fromkeys(ids))
        found: dict[NodeId, CodeObject] = {}
        for chunk in _chunks(wanted, self.settings.batch_size):
            for r in self.read_rows(q.GET_OBJECTS, ids=list(chunk)):
                obj = CodeObject.from_dict(r["n"])
                found[obj.id] = obj
        return {i: found[i] for i in wanted if i in found}

    def find_objects(self, *, repo: str | None = None, kind: str | None = None,
                     path: str | None = None, name: str | None = None) -> list[CodeObject]:
        given = {"repo": repo, "kind": kind, "path": path, "name": name}
        params = {k: v for k, v in given.items() if v is not None}
        records = self.read(q.find_objects(tuple(params)), **params)
        return sorted((CodeObject.from_dict(r["n"]) for r in records), key=lambda o: o.id)

    @staticmethod
    def _edges(records: Iterable[Any]) -> list[Edge]:
        found = {}
        for r in records:
            e = Edge(r["source"], r["target"], r["kind"], tuple(r["lines"] or ()))
            found[e.key] = e
        return [found[k] for k in sorted(found)]

    def find_edges(self, *, repo: str | None = None, kind: str | None = None,
                   source: NodeId | None = None, target: NodeId | None = None) -> list[Edge]:
        types = q.rel_types([kind] if kind is not None else None)
        if types is None:
            return []
        given = {"repo": repo, "source": source, "target": target}
        params = {k: v for k, v in given.items() if v is not None}
        query = q.find_edges(types, repo=repo is not None, source=source is not None,
                             target=target is not None)
        return self._edges(self.read(query, **params))

    def edges_of(self, ids: Iterable[NodeId], *, kinds: Sequence[str] | None = None,
                 direction: Direction = "both") -> list[Edge]:
        types = q.rel_types(kinds)
        wanted = list(dict.fromkeys(ids))
        if types is None or not wanted:
            return []
        query = q.edges_of(types, direction)
        records = [r for chunk in _chunks(wanted, self.settings.batch_size)
                   for r in self.read(query, ids=list(chunk))]
        return self._edges(records)

    def adjacent(self, ids: Iterable[NodeId], *, kinds: Sequence[str] | None = None,
                 direction: Direction = "both") -> dict[NodeId, list[NodeId]]:
        types = q.rel_types(kinds)
        wanted = list(dict.fromkeys(ids))
        if types is None or not wanted:
            return {}
        query = q.adjacent(types, direction)
        found: dict[NodeId, set[NodeId]] = {}
        for chunk in _chunks(wanted, self.settings.batch_size):
            for r in self.read(query, ids=list(chunk)):
                found.setdefault(r["id"], set()).update(r["peers"])
        return {i: sorted(found[i]) for i in wanted if found.get(i)}

    def neighbors(self, ids: Iterable[NodeId], *, kinds: Sequence[str] | None = None,
                  direction: Direction = "both", depth: int = 1) -> dict[NodeId, int]:
        types = q.rel_types(kinds)
        wanted = list(dict.fromkeys(ids))
        if types is None or not wanted or depth < 1:
            return {}
        hop_query = q.neighbor_hop(types, direction)
        # an id that is not in the store matches nothing, so the start ids need no
        # lookup of their own: one round trip per hop
        seen: dict[NodeId, int] = {i: 0 for i in wanted}
        frontier = wanted
        for hop in range(1, depth + 1):
            if not frontier:
                break
            found = {r["id"] for chunk in _chunks(frontier, self.settings.batch_size)
                     for r in self.read(hop_query, ids=list(chunk))}
            frontier = sorted(found - seen.keys())
            seen.update((n, hop) for n in frontier)
        return {n: h for n, h in sorted(seen.items()) if h > 0}

    def same_file(self, ids: Iterable[NodeId]) -> dict[NodeId, list[NodeId]]:
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return {}
        peers: dict[NodeId, list[NodeId]] = {}
        for r in self.read_rows(q.SAME_FILE, ids=wanted, kinds=sorted(DEFINITION_KINDS)):
            defs = sorted(r["defs"])
            for i in r["ids"]:
                peers[i] = [d for d in defs if d != i]
        return {i: peers[i] for i in wanted if i in peers}

    def unresolved(self, repo: str | None = None) -> list[UnresolvedRef]:
        records = (self.read(q.ALL_UNRESOLVED) if repo is None
                   else self.read(q.REPO_UNRESOLVED, repo=repo))
        return sorted((UnresolvedRef.from_dict(r["u"]) for r in records), key=lambda u: u.key)

    def source(self, file_node: NodeId) -> str | None:
        records = self.read(q.GET_SOURCE, id=file_node)
        return records[0]["text"] if records else None

    def sources(self, file_nodes: Iterable[NodeId]) -> dict[NodeId, str]:
        wanted = list(dict.fromkeys(file_nodes))
        return {r["id"]: r["text"] for chunk in _chunks(wanted, self.settings.batch_size)
                for r in self.read(q.GET_SOURCES, ids=list(chunk)) if r["text"] is not None}

    def file_objects(self, file_nodes: Iterable[NodeId]) -> dict[NodeId, list[CodeObject]]:
        found: dict[NodeId, list[CodeObject]] = {}
        for chunk in _chunks(list(dict.fromkeys(file_nodes)), self.settings.batch_size):
            for r in self.read_rows(q.FILE_OBJECTS, ids=list(chunk)):
                found.setdefault(r["file"], []).append(CodeObject.from_dict(r["n"]))
        return {f: sorted(objs, key=lambda o: o.id) for f, objs in found.items()}

    def file_spans(self, file_nodes: Iterable[NodeId]) -> dict[NodeId, list[Span]]:
        found: dict[NodeId, list[Span]] = {}
        for chunk in _chunks(list(dict.fromkeys(file_nodes)), self.settings.batch_size):
            for f, *span in self.read_rows(q.FILE_SPANS, ids=list(chunk)):
                found.setdefault(f, []).append(Span(*span))
        return {f: sorted(spans) for f, spans in found.items()}

    def get_meta(self, repo: str) -> dict[str, Any]:
        records = self.read(q.GET_META, repo=repo)
        if not records:
            return {}
        data = json.loads(records[0]["json"])
        return dict(data) if isinstance(data, dict) else {}

    def repositories(self) -> list[str]:
        return sorted(r["id"] for r in self.read(q.REPOSITORIES))

    def counts(self, repo: str | None = None) -> dict[str, Any]:
        def tally(query: str) -> dict[str, int]:
            records = self.read(query, repo=repo) if repo is not None else self.read(query)
            return {r["kind"]: r["n"] for r in sorted(records, key=lambda r: r["kind"])}

        if repo is None:
            objects, edges = tally(q.COUNT_OBJECTS), tally(q.COUNT_EDGES)
        else:
            objects, edges = tally(q.COUNT_REPO_OBJECTS), tally(q.COUNT_REPO_EDGES)
        return {"objects": objects, "edges": edges, "unresolved": len(self.unresolved(repo))}

    # -- allocation provenance -------------------------------------------------
    def write_allocation(self, record: AllocationRecord, allocation_id: str | None = None) -> str:
        """Store an allocation record as an ``:Allocation`` node linked to the
        objects it selected and to every candidate view it considered; returns the
        allocation id (by default a digest of the record, so writing it again is
        idempotent)."""
        params = dict(sorted(record.params.items()))
        text = json.dumps(record.to_dict(), sort_keys=True)
        aid = allocation_id or "alloc-" + hashlib.blake2b(text.encode(), digest_size=8).hexdigest()
        props = {
            "query": record.query, "policy": record.policy, "tokens": record.tokens,
            "budget": params.get("budget"), "k": params.get("k"), "params": json.dumps(params, sort_keys=True),
            "caption": f"allocation {record.policy}: {record.query[:60]}",
            "created_at": time.time(),
        }
        candidates, merged = [], []
        for v in record.views:
            key = f"{aid}|{v.view_id}"
            candidates.append({
                "key": key,
                "props": {"view_id": v.view_id, "object_key": v.object_key, "allocation": aid,
                          "caption": f"{v.status} #{v.rank} {v.view_id.rsplit('#', 1)[-1][:60]}"},
                "edge": {"rank": v.rank, "score": v.score, "status": v.status, "reason": v.reason,
                         "slot": v.slot},
            })
            if v.merged_into:
                merged.append({"key": key, "into": f"{aid}|{v.merged_into}"})
        selected = [{
            "object": s.object_key, "slot": s.slot,
            "props": {"role": s.role, "score": s.score, "tokens_needed": s.d, "tokens_given": s.b,
                      "tokens_used": s.tokens, "clipped": s.clipped, "view_id": s.view_id,
                      "spans": json.dumps([list(span) for span in s.spans]), "reason": s.reason},
        } for s in record.slots]
        for statement in q.ALLOCATION_SCHEMA:
            self.write(statement)
        pin = self.pins()
        with self._errors(), self._driver.session(database=self.settings.database) as session:
            def work(tx: Any) -> None:
                tx.run(q.WRITE_ALLOCATION, id=aid, props=props).consume()
                tx.run(q.WRITE_CANDIDATES, id=aid, rows=Unlogged(candidates), pin=pin).consume()
                tx.run(q.LINK_MERGED, rows=Unlogged(merged)).consume()
                tx.run(q.WRITE_SELECTED, id=aid, rows=Unlogged(selected), pin=pin).consume()

            session.execute_write(work)
        return aid

    def read_allocation(self, allocation_id: str) -> dict[str, Any] | None:
        """What ``write_allocation`` stored, for reports and tests."""
        records = self.read(q.READ_ALLOCATION, id=allocation_id)
        if not records:
            return None
        r = records[0]
        return {"allocation": r["allocation"], "selected": [x for x in r["selected"] if x],
                "views": [x for x in r["views"] if x]}

    def delete_allocation(self, allocation_id: str) -> None:
        self.write(q.DELETE_ALLOCATION, id=allocation_id)
