"""``Index``: one index of repositories, kept embedded or on a server.

An index is a graph store (an embedded folder, or a Neo4j server), the views its
queries search (the folder's retrieval snapshot, or the server's own views), and
the caches that make the next run cheap (parsed facts, embeddings) in the index
folder. The CLI, ``watch``, evaluations and the MCP server go through this
module: only ``graph/`` and ``retrieve/`` know the files in the folder, and
above them only this module opens one kind of store or the other (the CLI still
checks that a ``--to``/``--from``/``--to-neo4j`` argument names a server).

    >>> with Index.open(".vitalrag") as index:          # or a bolt:// URI
    ...     index.retriever().search("send a prepared request")
    >>> where = IndexLocation.of(".vitalrag")
    >>> where.stamp()      # changes when a re-index switches the live version
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from vitalrag.graph import version
from vitalrag.graph.store import GraphStore, is_server_uri, open_store
from vitalrag.retrieve.api import Retriever, index_folder, open_index, open_pair
from vitalrag.retrieve.index import ViewIndex

if TYPE_CHECKING:
    from vitalrag.ingest.pipeline import IndexReport
    from vitalrag.retrieve.dense import Embedder
    from vitalrag.retrieve.index import BuildStats

Progress = Callable[[str, int, int], None]
Stamp = tuple[version.Stamp, ...]


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
        return cls(store, index_folder(store, index_dir))

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

    def open(self, *, held: bool = False) -> Index:
        """The graph store and the views its queries search, of one version (see
        ``retrieve.api.open_pair``). ``held``: a server store's reads all see one
        version of each repository (what one command needs)."""
        store, views = open_pair(self.store, self.folder, held=held)
        return Index(self, store, views)

    # -- writing ------------------------------------------------------------------
    def check_writable(self) -> None:
        """Fail now, with the folder named, when a folder this index writes is not
        writable, or holds files and is not an index (before minutes of parsing and
        embedding, and before anything is written there)."""
        from vitalrag.kernel.locks import check_writable

        for folder in self._folders():
            check_writable(folder)
            version.check_folder(folder)

    @contextmanager
    def writer(self, *, wait: bool = False, on_wait: Callable[[], None] | None = None) -> Iterator[None]:
        """Hold the index's writer lock for one run (one run writes an index at a
        time; a second fails at once, or with ``wait`` waits); an index folder this
        run created is removed again when the run fails. The folders it writes are
        checked to be index folders (``version.adopt``), and what failed or killed
        runs left in the index folder is removed first."""
        from vitalrag.kernel.locks import WRITER_LOCK_FILE, writer_lock

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

    def update(self, path: str | os.PathLike[str], *, embedder: Embedder | None,
               progress: Progress | None = None, force: bool = False, **options: Any) -> IndexRun:
        """Index the repository at ``path`` into the store and rebuild the retrieval
        index, under the writer lock the caller holds (``writer``). The new graph
        and retrieval snapshots are written first and switched to together (one
        switch of the folder's version; in Neo4j, one new version of the
        repository, graph and views, switched to at the end), so readers see the
        previous pair until the new one is whole. ``options`` go to
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
            store = open_store(self.store, write=True)
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
                    if self.server:  # it serves retrieval without the local folder
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
        if self.server or Path(self.store).resolve() != self.folder.resolve():
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


class Index:
    """An open index: its graph store and the views its queries search, of one
    version. Close it (or use it as a context manager) to release the store."""

    def __init__(self, location: IndexLocation, store: GraphStore, views: ViewIndex) -> None:
        self.location = location
        self.store = store
        self.views = views

    @classmethod
    def open(cls, location: str, index_dir: str | None = None, *, held: bool = False) -> Index:
        """The index whose graph store is at ``location`` (a folder or a server URI)."""
        return IndexLocation.of(location, index_dir).open(held=held)

    @property
    def folder(self) -> Path:
        return self.location.folder

    def stamp(self) -> Stamp:
        """What ``IndexLocation.stamp`` says now: compare it with the stamp taken
        before this index was opened to know whether a re-index has switched."""
        return self.location.stamp()

    def reopen(self) -> Index:
        """The index's live version now. A server store's connection is kept (calls
        in flight may be using it; its reads see the live version anyway), and only
        its views are looked up again."""
        if self.location.server:
            return Index(self.location, self.store, open_index(self.store, self.folder))
        return self.location.open()

    def retriever(self, embedder: Embedder | None = None) -> Retriever:
        """The retrievers over this index (``embedder``: the loaded model to reuse)."""
        return Retriever(self.store, self.views, embedder)

    def close(self) -> None:
        self.views.close()
        self.store.close()

    def __enter__(self) -> Index:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
