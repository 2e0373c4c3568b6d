"""``Index``: one index of repositories, kept embedded or on a server.

An index is a graph store (an embedded folder, or a Neo4j server), the views its
queries search (the folder's retrieval snapshot, or the server's own views), and
the caches that make the next run cheap (parsed facts, embeddings) in the index
folder. This is the one module that puts them together: the CLI, ``watch``,
evaluations and the MCP server open an index here, for queries, for a server
that reloads it, or for writing (one writer at a time); only ``graph/`` and
``retrieve/`` know the files in the folder (the CLI still checks that a
``--to``/``--from``/``--to-neo4j`` argument names a server).

    >>> with Index.open(".vitalrag") as index:          # or a bolt:// URI
    ...     index.retriever().search("send a prepared request")
    >>> with Index.open(".vitalrag", mode="write") as index:
    ...     index.update(".", embedder=None)
    >>> IndexLocation.of(".vitalrag").stamp()   # changes when a re-index switches the live version
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from vitalrag.errors import InputError, StoreNotFound
from vitalrag.graph import version
from vitalrag.graph.store import GraphStore, is_server_uri, open_store
from vitalrag.kernel.progress import Progress
from vitalrag.retrieve.api import Retriever
from vitalrag.retrieve.index import RetrievalIndex, SnapshotViews, ViewIndex

if TYPE_CHECKING:
    from vitalrag.graph.transfer import TransferReport
    from vitalrag.ingest.pipeline import IndexReport
    from vitalrag.retrieve.dense import Embedder
    from vitalrag.retrieve.index import BuildStats

Stamp = tuple[version.Stamp, ...]
T = TypeVar("T")
#: what an index is opened for: one command's queries (a server store's reads see
#: one version, an embedded graph is read by the piece), a server's (loaded whole,
#: reopened when a re-index switches), or writing (the writer lock held)
Mode = Literal["query", "serve", "write"]


@dataclass(frozen=True, slots=True)
class IndexRun:
    """What one index run did (``IndexReport``, the retrieval ``BuildStats``) and
    how long each step took. A run that found nothing changed has no report nor
    stats but ``unchanged``: the report of the run that made the live version."""

    report: IndexReport | None
    stats: BuildStats | None
    phases: dict[str, float] = field(default_factory=dict)
    unchanged: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class IndexLocation:
    """Where an index is kept: its graph store (a folder or a server URI) and the
    folder of its retrieval data and caches (the store folder itself, or for a
    server store ``--index-dir`` / ``$VITALRAG_INDEX_DIR`` / ``.vitalrag``)."""

    store: str
    folder: Path

    @classmethod
    def of(cls, store: str, index_dir: str | None = None) -> IndexLocation:
        if index_dir:
            return cls(store, Path(index_dir))
        if is_server_uri(store):
            return cls(store, Path(os.environ.get("VITALRAG_INDEX_DIR", ".vitalrag")))
        return cls(store, Path(store))

    @property
    def server(self) -> bool:
        """Whether the graph store is a server (Neo4j), not a folder."""
        return is_server_uri(self.store)

    def _folders(self) -> list[Path]:
        """The folders this index writes: the index folder, and an embedded store's
        own when it is elsewhere."""
        if self.server or Path(self.store) == self.folder:
            return [self.folder]
        return [self.folder, Path(self.store)]

    def stamp(self) -> Stamp:
        """An opaque value that changes when a re-index switches the live version
        (a few stats: cheap enough to compare before every call)."""
        return tuple(version.stamp(f) for f in self._folders())

    @contextmanager
    def _writer(self, wait: bool, on_wait: Callable[[], None] | None) -> Iterator[None]:
        """Fail now, with the folder named, when a folder this index writes is not
        writable, or holds files and is not an index (before minutes of parsing and
        embedding, and before anything is written there); then hold the index's
        writer lock (one run writes an index at a time; a second fails at once, or
        with ``wait`` waits). An index folder this run created is removed again
        when the run fails. The folders it writes are checked to be index folders
        (``version.adopt``), and what failed or killed runs left in the index
        folder is removed first."""
        from vitalrag.kernel.locks import WRITER_LOCK_FILE, check_writable, writer_lock

        for written in self._folders():
            check_writable(written)
            version.check_folder(written)
        folder = self.folder
        existed = os.path.lexists(folder)
        with writer_lock(folder, wait=wait, on_wait=on_wait):
            # looked at under the lock: a run that waited may find the first one's index there
            created = not existed and set(os.listdir(folder)) <= {WRITER_LOCK_FILE}
            try:
                for written in self._folders():
                    version.adopt(written)
                version.sweep(folder)
                yield
            except BaseException:
                if created:
                    shutil.rmtree(folder, ignore_errors=True)
                raise


class Index:
    """An open index: for queries, its graph store and views, of one version; for
    writing, its writer lock (``update``, ``push``, ``pull``). Close it (or use it
    as a context manager) to release them."""

    def __init__(self, location: IndexLocation, store: GraphStore | None, views: ViewIndex | None,
                 writer: ExitStack | None = None) -> None:
        self.location = location
        self._store = store
        self._views = views
        self._writer = writer

    @classmethod
    def open(cls, location: str, *, index_dir: str | None = None, mode: Mode = "query", wait: bool = False,
             on_wait: Callable[[], None] | None = None) -> Index:
        """The index whose graph store is at ``location`` (a folder or a server URI;
        its index folder ``index_dir``: see ``IndexLocation.of``), opened for
        ``mode`` (see ``Mode``). For writing, ``wait``: wait for another writer
        instead of failing (``on_wait`` is called when it starts waiting)."""
        where = IndexLocation.of(location, index_dir)
        if mode == "write":
            writer = ExitStack()
            writer.enter_context(where._writer(wait, on_wait))
            return cls(where, None, None, writer)
        if mode not in ("query", "serve"):
            raise InputError(f"an index opens for 'query', 'serve' or 'write', not {mode!r}")
        return cls(where, *_open_pair(where, held=mode == "query"))

    @property
    def store(self) -> GraphStore:
        return self._reading(self._store)

    @property
    def views(self) -> ViewIndex:
        return self._reading(self._views)

    def _reading(self, part: T | None) -> T:
        if part is None:
            raise InputError(f"the index at {self.location.store} is open for writing, not for queries")
        return part

    @property
    def folder(self) -> Path:
        return self.location.folder

    def reopen(self) -> Index:
        """The index's live version now. A server store's connection is kept (calls
        in flight may be using it; its reads see the live version anyway), and only
        its views are looked up again."""
        if self.location.server:
            return Index(self.location, self.store, _views_of(self.store, self.folder))
        return Index(self.location, *_open_pair(self.location, held=False))

    def retriever(self, embedder: Embedder | None = None) -> Retriever:
        """The retrievers over this index (``embedder``: the loaded model to reuse)."""
        return Retriever(self.store, self.views, embedder)

    # -- writing ------------------------------------------------------------------
    def _writing(self) -> None:
        if self._writer is None:
            raise InputError(f"the index at {self.location.store} is open for queries, not for writing")

    def update(self, path: str | os.PathLike[str], *, embedder: Embedder | None,
               progress: Progress | None = None, force: bool = False, **options: Any) -> IndexRun:
        """Index the repository at ``path`` into the store and rebuild the retrieval
        index. The new graph and retrieval snapshots are written first and switched
        to together (one switch of the folder's version; in Neo4j, one new version
        of the repository, graph and views, switched to at the end), so readers see
        the previous pair until the new one is whole. ``options`` go to
        ``index_repository`` (``name``, ``max_bytes``, ``content``, ``executor``).

        When nothing changed since the run that made the live version (its
        record's fingerprint: the files' digests, the options, the model, this
        version of vitalrag), nothing is loaded or written (``force``: index all
        the same). The embedding model is loaded only once there is work, and
        before anything is written (a bad model fails with the store untouched).

        A live version whose files changed since its switch (damaged) is never
        "unchanged", and a graph that cannot be read is built again. A run that
        fails removes what it wrote; a full disk is one ``StoreError`` naming the
        device and about how much space the run needs."""
        from vitalrag.ingest import index_repository
        from vitalrag.ingest.content import DEFAULT_CONTENT
        from vitalrag.ingest.pipeline import survey
        from vitalrag.ingest.walk import DEFAULT_MAX_BYTES
        from vitalrag.retrieve.index import RETRIEVAL_SCHEMA, RetrievalIndex
        from vitalrag.retrieve.views import EMBEDDED_KINDS, EMBEDS_TEST_FILES, ViewConfig

        self._writing()
        mark = time.perf_counter()
        surveyed = survey(path, name=options.get("name"), max_bytes=options.get("max_bytes", DEFAULT_MAX_BYTES),
                          content=options.get("content", DEFAULT_CONTENT))
        model = embedder.name if embedder is not None else None
        fingerprint = surveyed.fingerprint(model=model, views=repr(ViewConfig()),
                                           embedded=sorted(EMBEDDED_KINDS), embedded_tests=EMBEDS_TEST_FILES,
                                           retrieval=RETRIEVAL_SCHEMA)
        phases = {"survey": time.perf_counter() - mark}
        recorded = self._recorded_runs(model)
        if recorded is not None and not force:
            unchanged = self._unchanged_run(recorded.get(surveyed.repo), fingerprint)
            if unchanged is not None:
                return IndexRun(None, None, phases, unchanged)
        mark = time.perf_counter()
        if embedder is not None:
            _ = embedder.dim  # the model loads lazily otherwise, after the graph was written
        with version.Staged(self.folder) as staged:
            store = open_store(self.location.store, write=True)
            phases["load"] = time.perf_counter() - mark
            try:
                # the writer lock is held: a lease in Neo4j is another machine's index, or a killed one's
                with store.writing(wait=True, staged=staged):
                    report = index_repository(path, store, progress=progress, cache_dir=self.folder / "facts",
                                              surveyed=surveyed, **options)
                    phases.update(report.phases)
                    retrieval, stats = RetrievalIndex.build(store, self.folder, embedder=embedder,
                                                            progress=progress, staged=staged)
                    phases.update(stats.phases)
                    if recorded is not None:
                        staged.runs = {**recorded, report.repo: {
                            "fingerprint": fingerprint, "model": model, "indexed_at": time.time(),
                            "report": {**report.to_json(), "views": stats.views, "model": stats.model}}}
                    mark = time.perf_counter()
                    if self.location.server:  # it serves retrieval without the local folder
                        from vitalrag.retrieve.server_index import push_views

                        push_views(store, retrieval, [report.repo], progress=progress)
                staged.commit()
                phases["switch"] = time.perf_counter() - mark
            finally:
                store.close()
        return IndexRun(report, stats, phases)

    def _recorded_runs(self, model: str | None) -> dict[str, Any] | None:
        """The live version's records of index runs that still hold for a run with
        ``model``: those of the same model (a run with another rebuilds every
        repository's views). None where runs are not recorded: a server store
        (another machine may change its graph), or a retrieval folder apart from
        the graph's."""
        if self.location.server or Path(self.location.store).resolve() != self.folder.resolve():
            return None
        return {repo: rec for repo, rec in version.runs(self.folder).items() if rec.get("model") == model}

    def _unchanged_run(self, record: dict[str, Any] | None, fingerprint: str) -> dict[str, Any] | None:
        """The report of the run that made the live version, when it had
        ``fingerprint`` (nothing changed since: nothing to parse, load or write)."""
        from vitalrag.graph.delta import Delta
        from vitalrag.retrieve.index import RetrievalIndex

        if record is None or record.get("fingerprint") != fingerprint or not version.intact(self.folder):
            return None  # intact: the live pair is as it was written (not damaged since)
        meta = RetrievalIndex.live_meta(self.folder)
        if meta is None or meta.get("model") != record.get("model"):
            return None
        report = dict(record["report"])
        report.update(parsed=0, reused=report.get("files", 0), views=meta.get("views", report.get("views")),
                      changes=Delta().to_dict(), unchanged_since=record.get("indexed_at"))
        return report

    def rebuild_views(self, embedder: Embedder, *, progress: Progress | None = None) -> BuildStats:
        """Build the retrieval views of the live graph again, embedded with
        ``embedder``, and switch to them (an evaluation's model, over a graph
        indexed once)."""
        self._writing()
        with closing(open_store(self.location.store, create=False)) as store:
            return RetrievalIndex.build(store, self.folder, embedder=embedder, progress=progress)[1]

    def push(self, to: str, repo: str | None = None, *, wait: bool = False,
             progress: Progress | None = None) -> tuple[TransferReport, dict[str, int]]:
        """Copy this embedded index into the server store ``to``: the graph, then the
        retrieval views with their embeddings (only views that changed are written).
        One new version of each repository in the server, switched to at its end.
        ``wait``: wait for another writer of a repository there instead of failing."""
        return self._copy(self.location.store, to, repo, pull=False, wait=wait, progress=progress)

    def pull(self, from_: str, repo: str | None = None, *,
             progress: Progress | None = None) -> tuple[TransferReport, dict[str, int]]:
        """Copy code graphs from the server store ``from_`` into this embedded index,
        and restore its retrieval index from the server's views and embeddings
        (nothing is embedded again). One version of the server is read, and the
        folder switches to the new graph and retrieval index together; a pull that
        fails removes what it wrote, and a full disk is one line (``Staged``)."""
        return self._copy(from_, self.location.store, repo, pull=True, progress=progress)

    def _copy(self, origin: str, target: str, repo: str | None, *, pull: bool, wait: bool = False,
              progress: Progress | None = None) -> tuple[TransferReport, dict[str, int]]:
        """Copy the graph, then the retrieval views (incremental by view hash both
        ways): a push sends this folder's, a pull writes them here."""
        from vitalrag.graph.transfer import copy_store
        from vitalrag.retrieve.server_index import pull_views, push_views, repos_with_views

        self._writing()
        views: dict[str, int] = {}
        with ExitStack() as stack:
            src = stack.enter_context(closing(open_store(origin, create=pull)))
            dst = stack.enter_context(closing(open_store(target, write=pull)))
            staged = stack.enter_context(version.Staged(self.folder)) if pull else None
            with src.snapshot(), dst.writing(wait=wait, staged=staged):
                report = copy_store(src, dst, repo, progress=progress)
                if staged is None and version.has_retrieval(self.folder):
                    writes = push_views(dst, RetrievalIndex.load(self.folder), list(report.repos), progress=progress)
                    views = {"views": sum(w.written + w.kept for w in writes),
                             "views_written": sum(w.written for w in writes)}
                elif staged is not None and (with_views := [r for r in report.repos if r in repos_with_views(src)]):
                    index, read = pull_views(src, self.folder, with_views, progress=progress, staged=staged)
                    views = {"views": len(index.views), "views_written": read}
            if staged is not None:
                staged.commit()
        return report, views

    def close(self) -> None:
        self.__exit__(None, None, None)

    def __enter__(self) -> Index:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._writer is not None:
            writer, self._writer = self._writer, None
            writer.__exit__(exc_type, exc, tb)
        if self._views is not None:
            self._views.close()
        if self._store is not None:
            self._store.close()


def _views_of(store: GraphStore, folder: Path) -> ViewIndex:
    """The views a store's queries search: a Neo4j store's own when it holds views,
    else the local retrieval index in ``folder``."""
    if is_server_uri(store.location):
        from vitalrag.retrieve.server_index import ServerViews

        server = ServerViews.open(store)
        if server is not None:
            return server
        if not version.has_retrieval(folder):
            raise StoreNotFound(f"{store.location} holds no retrieval views and there is no local index in "
                                f"{folder}: index with `vitalrag index PATH --store {store.location}`, or "
                                f"`vitalrag push` an embedded index")
    return RetrievalIndex.load(folder)


def _open_pair(where: IndexLocation, *, held: bool) -> tuple[GraphStore, ViewIndex]:
    """The graph store and the views its queries search, of one version: an embedded
    store whose retrieval index shares its folder is read as its version pointer
    names the pair, once, so a re-index switching meanwhile is never half seen.
    ``held``: a one-shot reader's: a server store's reads all see one version, an
    embedded graph is read by the piece (see ``open_store``)."""
    folder = where.folder
    if where.server or Path(where.store).resolve() != folder.resolve():
        store = open_store(where.store, create=False, held=held)
        try:
            return store, _views_of(store, folder)
        except BaseException:
            store.close()
            raise

    def load(at: version.Version) -> tuple[GraphStore, ViewIndex]:
        # a one-shot reader reads the graph by the piece; a server loads it whole
        store = open_store(folder, create=False, held=held, version=at)
        try:
            views = SnapshotViews.open(folder, at) if held else RetrievalIndex.load(folder, version=at)
        except BaseException:
            store.close()
            raise
        return store, views

    return version.load_consistent(folder, load)
