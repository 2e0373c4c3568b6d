"""The retrieval index saved beside the graph: views, BM25, FAISS, embedding cache.

Layout under the index folder (the embedded store's folder, or the local folder
that goes with a Neo4j store)::

    current.json             the live graph and retrieval snapshots (``graph.version``)
    retrieval-<n>/meta.json  schema version, view count, model
    retrieval-<n>/views.db   the views, in index order (the id map of both indexes):
                             SQLite, read whole or by the piece (``retrieve.viewfile``)
    retrieval-<n>/bm25/      bm25s arrays
    retrieval-<n>/dense/     vectors.faiss + model.json (absent with --no-embed)
    embeddings/<model>.npz   vectors by view content hash, reused across builds

A writer or a server loads the views whole (``RetrievalIndex``); a one-shot reader
(a CLI ``search`` or ``context``) opens them as a ``SnapshotViews``, which decodes
only the views its hits name.

A build writes a new snapshot folder (its name claimed in the folder's records
first: ``graph.version.claim``) and then switches the version pointer to it (an
index run switches its graph and this snapshot with one rename), so a reader
never sees half an index, nor a graph and views of different runs, and a crash
leaves the old pair.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import shutil
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from vitalrag.errors import SchemaMismatch, StoreCorrupt, StoreNotFound
from vitalrag.kernel.locks import folder_lock
from vitalrag.kernel.pause import RETRIEVAL, pause
from vitalrag.graph.version import (
    Staged,
    Version,
    claim,
    current,
    load_consistent,
    seal_broken,
    switch,
)
from vitalrag.graph.store import GraphStore
from vitalrag.kernel.progress import Progress
from vitalrag.model import View
from vitalrag.retrieve import viewfile
from vitalrag.retrieve.dense import DenseIndex, Embedder, EmbeddingCache, embed_views
from vitalrag.retrieve.sparse import SparseIndex
from vitalrag.retrieve.views import ViewConfig, build_views, embeds

log = logging.getLogger(__name__)

RETRIEVAL_SCHEMA = 1
VIEWS_FILE = viewfile.FILE



Hits = list[tuple[View, float]]


class ViewIndex(Protocol):
    """What the retrievers search: the local ``RetrievalIndex``, or a server store's
    views (``retrieve.server_index``). ``allowed``: the repositories a search may
    return views of (None: every one)."""

    @property
    def size(self) -> int: ...

    @property
    def has_dense(self) -> bool: ...

    @property
    def model(self) -> str | None:
        """The embedding model of every view (None: no embeddings, or several models)."""

    def model_of(self, allowed: frozenset[str] | None) -> str | None:
        """The embedding model of the views searched (None: no embeddings)."""

    def bm25(self, query: str, k: int, allowed: frozenset[str] | None) -> Hits: ...

    def nearest(self, vector: np.ndarray, k: int, allowed: frozenset[str] | None) -> Hits: ...

    def names_of(self, identifiers: Iterable[str], allowed: frozenset[str] | None) -> Mapping[str, Sequence[str]]:
        """Object ids by name, for the identifiers asked about (the walk's anchors),
        of the allowed repositories."""

    def bodies(self, object_ids: Sequence[str]) -> dict[str, View]:
        """The body view of each object that has one."""

    def close(self) -> None:
        """Release what the views hold open (their file, for a one-shot reader)."""


@dataclass
class BuildStats:
    views: int = 0
    encoded: int = 0
    seconds: float = 0.0
    model: str | None = None
    #: seconds per step, in order: views (building them and BM25), embed (encoding
    #: the views not cached, and the dense index), snapshot (writing it)
    phases: dict[str, float] = field(default_factory=dict)


class _PositionSearch:
    """BM25 and dense search over the views by position, for both ways of holding
    them: a filter is a mask over the views (BM25 zeroes the scores of the others,
    FAISS compares only the allowed vectors; one pass either way, and exact)."""

    sparse: SparseIndex
    dense: DenseIndex | None
    model: str | None
    _masks: dict[frozenset[str], np.ndarray]

    @property
    def size(self) -> int:
        raise NotImplementedError

    @property
    def repos(self) -> frozenset[str]:
        raise NotImplementedError

    def _at(self, positions: Sequence[int]) -> list[View]:
        """The views at ``positions``."""
        raise NotImplementedError

    def _held_by(self, allowed: frozenset[str]) -> np.ndarray:
        """Which views the repositories ``allowed`` hold."""
        raise NotImplementedError

    @property
    def has_dense(self) -> bool:
        return self.dense is not None

    def model_of(self, allowed: frozenset[str] | None) -> str | None:
        return self.model

    def bm25(self, query: str, k: int, allowed: frozenset[str] | None) -> Hits:
        return self._hits(self.sparse.search(query, k, self._mask(allowed)))

    def nearest(self, vector: np.ndarray, k: int, allowed: frozenset[str] | None) -> Hits:
        if self.dense is None:
            return []
        return self._hits(self.dense.search(vector, k, self._mask(allowed)))

    def _hits(self, found: Sequence[tuple[int, float]]) -> Hits:
        views = self._at([i for i, _ in found])
        return [(v, s) for v, (_, s) in zip(views, found, strict=True)]

    def close(self) -> None:
        """Nothing to release (a snapshot read whole holds no file open)."""

    def _mask(self, allowed: frozenset[str] | None) -> np.ndarray | None:
        """Which views the repositories ``allowed`` hold (None: every view)."""
        if allowed is None or self.repos <= allowed:  # a filter that keeps every view filters nothing
            return None
        mask = self._masks.get(allowed)
        if mask is None:
            if len(self._masks) >= 16:
                self._masks.clear()
            mask = self._masks[allowed] = self._held_by(allowed)
        return mask


@dataclass
class RetrievalIndex(_PositionSearch):
    folder: Path
    views: list[View]
    sparse: SparseIndex
    dense: DenseIndex | None
    model: str | None
    by_id: dict[str, int] = field(default_factory=dict)
    #: object name -> object ids (graph-walk anchors), from body/signature views
    names: dict[str, list[str]] = field(default_factory=dict)
    #: object id -> positions of its views
    by_object: dict[str, list[int]] = field(default_factory=dict)
    #: view masks of the repository filters asked for lately
    _masks: dict[frozenset[str], np.ndarray] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        self.by_id = {v.id: i for i, v in enumerate(self.views)}
        names: dict[str, set[str]] = defaultdict(set)
        by_object: dict[str, list[int]] = defaultdict(list)
        for i, v in enumerate(self.views):
            by_object[v.object_id].append(i)
            if v.kind in viewfile.NAMED_KINDS and v.identifier:
                names[v.identifier].add(v.object_id)
        self.names = {k: sorted(s) for k, s in names.items()}
        self.by_object = dict(by_object)

    @functools.cached_property
    def repos(self) -> frozenset[str]:
        """The repositories this index holds views of."""
        return frozenset(v.repo for v in self.views)

    # -- ViewIndex ----------------------------------------------------------------
    @property
    def size(self) -> int:
        return len(self.views)

    def _at(self, positions: Sequence[int]) -> list[View]:
        return [self.views[i] for i in positions]

    def _held_by(self, allowed: frozenset[str]) -> np.ndarray:
        return np.fromiter((v.repo in allowed for v in self.views), dtype=bool, count=len(self.views))

    def names_of(self, identifiers: Iterable[str], allowed: frozenset[str] | None) -> Mapping[str, Sequence[str]]:
        if allowed is None:
            return self.names
        out = {}
        for ident in identifiers:
            # an object id starts with its repository's name and a colon
            ids = [i for i in self.names.get(ident, ()) if i.split(":", 1)[0] in allowed]
            if ids:
                out[ident] = ids
        return out

    def bodies(self, object_ids: Sequence[str]) -> dict[str, View]:
        out: dict[str, View] = {}
        for node in object_ids:
            for p in self.by_object.get(node, ()):
                if self.views[p].kind == "body":
                    out[node] = self.views[p]
                    break
        return out

    # -- building ---------------------------------------------------------------
    @classmethod
    def build(cls, store: GraphStore, folder: str | os.PathLike[str], *, embedder: Embedder | None,
              repos: Sequence[str] | None = None, config: ViewConfig = ViewConfig(),
              progress: Progress | None = None,
              staged: Staged | None = None) -> tuple[RetrievalIndex, BuildStats]:
        """Views of every repository in the store, indexed for BM25 and (with an
        embedder) dense search; saved as the new live snapshot (with ``staged``,
        switched to by its commit)."""
        started = mark = time.perf_counter()
        stats = BuildStats()

        def phase(name: str) -> None:
            nonlocal mark
            now = time.perf_counter()
            stats.phases[name] = now - mark
            mark = now

        root = Path(folder)
        views: list[View] = []
        for repo in repos if repos is not None else store.repositories():
            views.extend(build_views(store, repo, config=config))
        stats.views = len(views)
        texts = [v.text for v in views]
        phase("views")
        sparse = SparseIndex.build(texts)
        phase("bm25")
        dense = None
        model = None
        live = _live_dense(root)  # its vectors are reused, not encoded again
        held = live.by_hash() if live is not None else {}
        if embedder is not None:
            # only the kinds worth a vector are encoded; the others are rows of zeros
            chosen = [i for i, v in enumerate(views) if embeds(v)]
            same = live is not None and live.model == embedder.name
            encoded, stats.encoded = embed_views([views[i].content_hash for i in chosen],
                                                 [texts[i] for i in chosen], embedder, root / "embeddings",
                                                 progress, held=held if same else None)
            vectors = np.zeros((len(views), encoded.shape[1]), dtype=np.float32)
            vectors[chosen] = encoded
            dense = DenseIndex.build(vectors, embedder.name, hashes=[v.content_hash for v in views])
            model = stats.model = embedder.name
        if live is not None and held and (embedder is None or live.model != embedder.name):
            # the live snapshot's model is being replaced: its vectors go to that model's cache
            cache = EmbeddingCache(root / "embeddings", live.model)
            cache.save((), displaced=held, limit=len(held) + len(cache.vectors))
        phase("embed")
        index = cls(root, views, sparse, dense, model)
        pause(RETRIEVAL)
        index.save(staged)
        phase("snapshot")
        stats.seconds = time.perf_counter() - started
        return index, stats

    def save(self, staged: Staged | None = None) -> None:
        """Write a new snapshot and switch to it, or with ``staged`` (for this
        folder) leave the switch to its commit."""
        with folder_lock(self.folder):
            name = self._save()
            if staged is not None and staged.takes(self.folder):
                staged.retrieval = name
            else:
                switch(self.folder, retrieval=name)

    def _save(self) -> str:
        self.folder.mkdir(parents=True, exist_ok=True)
        snap = self.folder / claim(self.folder, "retrieval-")  # recorded before it is made
        os.mkdir(snap, 0o777)  # the umask's mode (mkdtemp: 0700)
        try:
            viewfile.write(snap / VIEWS_FILE, self.views)
            self.sparse.save(snap / "bm25")
            if self.dense is not None:
                self.dense.save(snap / "dense")
            (snap / "meta.json").write_text(json.dumps(
                {"schema_version": RETRIEVAL_SCHEMA, "views": len(self.views), "model": self.model}))
        except BaseException:
            shutil.rmtree(snap, ignore_errors=True)
            raise
        return snap.name

    # -- loading ----------------------------------------------------------------
    @classmethod
    def load(cls, folder: str | os.PathLike[str], *, version: Version | None = None) -> RetrievalIndex:
        """The snapshot the version pointer of ``folder`` names (or ``version``'s)."""
        if version is not None:
            return cls._load(Path(folder), version)
        return load_consistent(folder, lambda v: cls._load(Path(folder), v))

    @classmethod
    def _load(cls, root: Path, version: Version) -> RetrievalIndex:
        snap = _snapshot(root, version)
        meta = _meta(snap)
        try:
            views = viewfile.read(snap / VIEWS_FILE)
        except (OSError, EOFError, ValueError, TypeError, KeyError) as exc:
            raise StoreCorrupt(f"cannot read retrieval index {snap}: {exc}") from exc
        sparse, dense = _indexes(snap, len(views), meta.get("model"))
        return cls(root, views, sparse, dense, meta.get("model"))

    @staticmethod
    def live_meta(folder: str | os.PathLike[str]) -> dict[str, object] | None:
        """The live snapshot's meta.json (schema version, view count, model), or None
        when there is no snapshot or it cannot be read."""
        name = current(folder).retrieval
        try:
            meta = json.loads((Path(folder) / name / "meta.json").read_text()) if name else None
        except (OSError, ValueError):
            return None
        return meta if isinstance(meta, dict) and meta.get("schema_version") == RETRIEVAL_SCHEMA else None

    def size_on_disk(self) -> int:
        live = current(self.folder).retrieval
        paths = [self.folder / live] if live else []
        paths.append(self.folder / "embeddings")
        return sum(p.stat().st_size for base in paths if base.exists() for p in base.rglob("*") if p.is_file())


class SnapshotViews(_PositionSearch):
    """A retrieval snapshot opened by a one-shot reader (a CLI ``search``,
    ``context``, ``explain``): BM25's arrays memory-mapped, the dense index, and the
    views read by the piece (``viewfile.ViewFile``): a query decodes the views its
    hits name, not the index's every view (on Django 5.1.4's 221,828 views, three
    quarters of a CLI ``context``)."""

    def __init__(self, folder: Path, views: viewfile.ViewFile, sparse: SparseIndex, dense: DenseIndex | None,
                 model: str | None) -> None:
        self.folder = folder
        self._views = views
        self.sparse = sparse
        self.dense = dense
        self.model = model
        self._runs = views.runs()
        self._masks: dict[frozenset[str], np.ndarray] = {}

    @classmethod
    def open(cls, folder: str | os.PathLike[str], version: Version) -> SnapshotViews:
        """The snapshot ``version`` names in ``folder``, read by the piece."""
        root = Path(folder)
        snap = _snapshot(root, version)
        meta = _meta(snap)
        views = viewfile.ViewFile(snap / VIEWS_FILE)
        try:
            sparse, dense = _indexes(snap, views.count, meta.get("model"))
            return cls(root, views, sparse, dense, meta.get("model"))
        except BaseException:
            views.close()
            raise

    @functools.cached_property
    def repos(self) -> frozenset[str]:
        return frozenset(repo for repo, _, _ in self._runs)

    @functools.cached_property
    def views(self) -> list[View]:
        """Every view, in index order, read whole (for a tool that walks them all)."""
        return self._views.views(range(self.size))

    @property
    def size(self) -> int:
        return self._views.count

    def _at(self, positions: Sequence[int]) -> list[View]:
        return self._views.views(positions)

    def _held_by(self, allowed: frozenset[str]) -> np.ndarray:
        """From the runs of positions each repository holds."""
        mask = np.zeros(self.size, dtype=bool)
        for repo, start, stop in self._runs:
            if repo in allowed:
                mask[start:stop] = True
        return mask

    def names_of(self, identifiers: Iterable[str], allowed: frozenset[str] | None) -> Mapping[str, Sequence[str]]:
        out = {}
        for ident, ids in self._views.names(identifiers).items():
            if allowed is not None:  # an object id starts with its repository's name and a colon
                ids = [i for i in ids if i.split(":", 1)[0] in allowed]
            if ids:
                out[ident] = ids
        return out

    def bodies(self, object_ids: Sequence[str]) -> dict[str, View]:
        return self._views.bodies(object_ids)

    def close(self) -> None:
        self._views.close()


def _snapshot(root: Path, version: Version) -> Path:
    if version.retrieval is None:
        raise StoreNotFound(f"no retrieval index in {root} (run `vitalrag index PATH` first)")
    return root / version.retrieval


def _meta(snap: Path) -> dict[str, Any]:
    try:
        meta = json.loads((snap / "meta.json").read_text())
    except (OSError, ValueError) as exc:
        raise StoreCorrupt(f"cannot read retrieval index {snap}: {exc}") from exc
    if not isinstance(meta, dict) or meta.get("schema_version") != RETRIEVAL_SCHEMA:
        found = meta.get("schema_version") if isinstance(meta, dict) else None
        raise SchemaMismatch(f"retrieval index {snap} has schema version {found}, expected {RETRIEVAL_SCHEMA}: "
                             "re-index")
    if meta.get("model") is not None and not isinstance(meta["model"], str):
        raise StoreCorrupt(f"{snap / 'meta.json'} is damaged: model is {meta['model']!r}, not a model's name; "
                           "re-index (`vitalrag index PATH`) to rebuild it")
    return meta


def _indexes(snap: Path, views: int, model: str | None) -> tuple[SparseIndex, DenseIndex | None]:
    """The BM25 and dense indexes of the snapshot ``snap`` of ``views`` views
    embedded by ``model``."""
    hint = "re-index (`vitalrag index PATH`) to rebuild it"
    try:
        sparse = SparseIndex.load(snap / "bm25", views)
    except StoreCorrupt as exc:  # it names the damaged file
        raise StoreCorrupt(f"{exc}; {hint}") from exc
    except (OSError, ValueError, KeyError) as exc:
        raise StoreCorrupt(f"cannot read BM25 index of {snap}: {exc}; {hint}") from exc
    try:
        dense = DenseIndex.load(snap / "dense")
    except StoreCorrupt as exc:
        raise StoreCorrupt(f"{exc}; {hint}") from exc
    if dense is not None and model is not None and dense.model != model:
        raise StoreCorrupt(f"retrieval index {snap} is damaged: meta.json names the model {model} and "
                           f"dense/model.json {dense.model}; {hint}")
    for what, size in (("BM25", sparse.documents), ("dense", dense.views if dense else None)):
        if size is not None and size != views:
            raise StoreCorrupt(f"retrieval index {snap} is damaged: {views} views but "
                               f"{size} {what} entries; {hint}")
    return sparse, dense


def _live_dense(root: Path) -> DenseIndex | None:
    """The dense index of the live snapshot of ``root`` (None: none, unreadable, or
    changed since it was switched to: damaged vectors are not reused)."""
    try:
        name = current(root).retrieval
        if name is not None and seal_broken(root, name):
            log.warning("not reusing the vectors of %s: its files changed since it was written", root / name)
            return None
        return DenseIndex.load(root / name / "dense") if name else None
    except (StoreCorrupt, OSError) as exc:
        log.warning("not reusing the vectors of %s: %s", root, exc)
        return None
