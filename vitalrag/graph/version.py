"""The version of an index folder: its graph and retrieval snapshots, named together.

Layout::

    current.json         {"format": 2, "graph": "graph-<id>.db", "retrieval": "retrieval-<id>",
                          "previous": {"graph": ..., "retrieval": ...},
                          "sealed": {file: [size, mtime_ns]},
                          "runs": {repo: {"fingerprint": ..., "report": ...}}}
    snapshots.json       {"format": 2, "snapshots": [...]}: every snapshot this index
                         wrote that may still be on disk
    graph-<id>.db        a graph snapshot (``graph.packed``)
    retrieval-<id>/      a retrieval snapshot (``retrieve.index``)
    facts/ embeddings/   the caches of index runs (``ingest.cache``, ``retrieve.dense``)

A writer writes its new snapshots beside the live ones and then renames one small
pointer file over ``current.json``. That rename is the only switch: a reader that
reads the pointer once loads a graph and a retrieval snapshot of the same index
run, and a writer killed before the rename leaves the previous pair live.

What the folder owns is what its records name: a writer records a snapshot's
name in ``snapshots.json`` (``claim``) before it creates it, and nothing is ever
removed that the records do not name, so a store folder that holds other files
(a checkout, a shared folder) loses none of them. A folder that is neither an
index nor empty is refused (``check_folder``, ``adopt``).

The pair the pointer named before stays on disk until the next switch, for readers
that are loading it; the switch removes anything older. With ``sweep`` (the writer
holds the folder's writer lock, so no other run is writing snapshots) it also
removes the recorded snapshots no pointer names, which writers that failed or
were killed left behind; an index run sweeps so at its start too.

``sealed`` is the size and modification time of every file of the live pair, as
it was switched to: a file changed since (damaged, truncated, removed) breaks the
seal (``intact``), and the next index run rebuilds instead of finding nothing to do.

``runs`` records, for each repository, the fingerprint of the index run that
made the live version (its files' digests, options and model) and that run's
report: a run whose fingerprint equals it has nothing to do, and answers without
loading the graph or writing anything. A switch made by anything but an index
run (a pull, a retrieval index saved alone) drops every record, so the next run
does the work.

An index folder has one format (``FORMAT``). Before 1.0 a change of it, or of
any snapshot's format, means indexing again: a folder of another format is a
``SchemaMismatch`` that says so, and nothing reads or migrates the older one.
"""

from __future__ import annotations

import json
import logging
import os
import re
import secrets
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from vitalrag.errors import SchemaMismatch, StoreCorrupt, StoreError, VitalRAGError
from vitalrag.kernel.files import disk_full, free_bytes, no_space, replacing
from vitalrag.kernel.locks import LOCK_FILE, WRITER_LOCK_FILE, folder_lock

log = logging.getLogger(__name__)

VERSION_FILE = "current.json"
#: the snapshots this index wrote (see the module's docstring)
OWNED_FILE = "snapshots.json"
#: the folder's format (see the module's docstring): another one means re-indexing
FORMAT = 2
#: the caches an index run keeps in its folder
CACHE_FOLDERS = ("facts", "embeddings")
#: how often a reader starts again when the pointer moved while it was loading
ATTEMPTS = 5
#: the names writers give snapshots (a random part of 12 hex digits): how an index
#: whose ``snapshots.json`` is damaged is told from a folder that holds anything else
_SNAPSHOT_NAME = re.compile(r"graph-[0-9a-f]{12}\.db|retrieval-[0-9a-f]{12}")

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Version:
    """The file names (in the index folder) of the live graph and retrieval snapshots."""

    graph: str | None = None
    retrieval: str | None = None

    def names(self) -> set[str]:
        return {n for n in (self.graph, self.retrieval) if n is not None}


def current(folder: str | os.PathLike[str]) -> Version:
    """The version readers of ``folder`` load now (empty when nothing is indexed)."""
    return _read(Path(folder))[0]


#: what ``stamp`` returns: opaque, equal while the live version stays the same
Stamp = tuple[tuple[int, int, int] | None, ...]


def stamp(folder: str | os.PathLike[str]) -> Stamp:
    """A value that changes when a switch in ``folder`` changes the live version
    (the version pointer), and costs a stat: a server compares it before each
    call to know when to reload."""
    return (_file_stamp(Path(folder) / VERSION_FILE),)


def _file_stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def has_retrieval(folder: str | os.PathLike[str]) -> bool:
    return current(folder).retrieval is not None


def load_consistent(folder: str | os.PathLike[str], load: Callable[[Version], T]) -> T:
    """``load(version)`` for the current version of ``folder``; when it fails
    because a writer switched meanwhile (and removed what it was reading), again
    with the new version."""
    version = current(folder)
    for _ in range(ATTEMPTS - 1):
        try:
            return load(version)
        except VitalRAGError:
            latest = current(folder)
            if latest == version:
                raise
            log.debug("%s switched from %s to %s while loading; loading again", folder, version, latest)
            version = latest
    return load(version)


def runs(folder: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """The record of the index run that made the live version, by repository
    (see the module's docstring); empty when there is none."""
    found = _pointer(Path(folder)).get("runs")
    return {k: v for k, v in found.items() if isinstance(v, dict)} if isinstance(found, dict) else {}


def intact(folder: str | os.PathLike[str]) -> bool:
    """Whether the live graph and retrieval snapshots of ``folder`` are as they
    were switched to: each of their files has the size and modification time its
    seal recorded (a few stats; a damaged, truncated or removed file breaks it,
    and so does a copy of the folder, which then is indexed once again)."""
    root = Path(folder)
    try:
        live = current(root)
    except StoreCorrupt:
        return False
    sealed = _pointer(root).get("sealed")
    if live.graph is None or live.retrieval is None or not isinstance(sealed, dict):
        return False
    return all(_sealed_files(root, name, sealed) for name in live.names())


def seal_broken(folder: str | os.PathLike[str], name: str) -> bool:
    """Whether a file of the live snapshot ``name`` changed since it was switched to
    (False where the pointer holds no seal for it)."""
    root = Path(folder)
    sealed = _pointer(root).get("sealed")
    if not isinstance(sealed, dict) or not any(rel.split("/", 1)[0] == name for rel in sealed):
        return False
    return not _sealed_files(root, name, sealed)


def _sealed_files(root: Path, name: str, sealed: dict[str, Any]) -> bool:
    """Whether the files of snapshot ``name`` are those ``sealed`` records, unchanged."""
    try:
        files = {str(p.relative_to(root)): _seal_of(p) for p in _files(root / name)}
    except OSError:
        return False
    mine = {rel: seal for rel, seal in sealed.items() if rel.split("/", 1)[0] == name}
    return bool(files) and files == mine


def _pointer(root: Path) -> dict[str, Any]:
    """``current.json`` as it is (empty when missing or unreadable)."""
    try:
        data = json.loads((root / VERSION_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


class Staged:
    """The snapshots one index run has written into ``folder``, switched to together
    by ``commit``. Only a run that holds the folder's writer lock stages. ``runs``:
    the index runs' records of the new version (see ``runs``; None: none).

    Used as a context manager, a run that fails removes what it wrote, and a full
    disk is one ``StoreError`` that says where and about how much space it needs."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)
        self.graph: str | None = None
        self.retrieval: str | None = None
        self.runs: dict[str, dict[str, Any]] | None = None
        # what a full disk's message is worked out from: the new pair is written
        # beside the live one and needs about as much again, or more than the run found free
        self._free = free_bytes(self.folder)
        self._live = _size(self.folder, _live_names(self.folder))

    def takes(self, folder: str | os.PathLike[str]) -> bool:
        """Whether snapshots written into ``folder`` wait for this commit."""
        return Path(folder).resolve() == self.folder.resolve()

    def commit(self) -> Version:
        with folder_lock(self.folder):
            return switch(self.folder, graph=self.graph, retrieval=self.retrieval, sweep=True, runs=self.runs)

    def discard(self) -> None:
        """Remove what this run wrote and did not switch to (with whatever else
        failed or killed writers left: the caller holds the writer lock)."""
        self.graph = self.retrieval = None
        sweep(self.folder)

    def __enter__(self) -> Staged:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc is None:
            return
        try:
            self.discard()
        except (OSError, StoreError) as cleanup:  # the run's own error is the one to report
            log.warning("cannot remove what the failed run wrote in %s: %s", self.folder, cleanup)
        if disk_full(exc):
            raise no_space(self.folder, max(self._live, self._free), more=self._free >= self._live) from exc


def _live_names(root: Path) -> set[str]:
    try:
        return _read(root)[0].names()
    except StoreCorrupt:
        return set()


def switch(folder: str | os.PathLike[str], *, graph: str | None = None, retrieval: str | None = None,
           sweep: bool = False, runs: dict[str, dict[str, Any]] | None = None) -> Version:
    """Make ``graph`` and ``retrieval`` (snapshot names in ``folder``; None keeps the
    live one) the live version with one rename, then remove what no reader needs
    and the folder's records name. ``runs``: the index runs' records of the new
    version (None: none). The caller holds ``folder_lock(folder)``."""
    root = Path(folder)
    live, previous = _read(root)
    owned = _owned(root)
    new = Version(graph or live.graph, retrieval or live.retrieval)
    # kept snapshots keep the seal they were switched to with (a damaged one stays broken)
    old_seal = _pointer(root).get("sealed")
    sealed = {rel: seal for rel, seal in (old_seal.items() if isinstance(old_seal, dict) else ())
              if rel.split("/", 1)[0] in new.names() - {graph, retrieval}}
    for name in {graph, retrieval} - {None}:
        sealed.update((str(p.relative_to(root)), _seal_of(p)) for p in _files(root / str(name)))
    with replacing(root / VERSION_FILE, durable=True) as tmp:  # the rename survives a power cut
        tmp.write_text(json.dumps({"format": FORMAT, "graph": new.graph, "retrieval": new.retrieval,
                                   "previous": {"graph": live.graph, "retrieval": live.retrieval},
                                   "sealed": sealed, "runs": runs or {}}),
                       encoding="utf-8")
    keep = new.names() | live.names()
    dropped = previous.names() - keep
    if sweep:
        dropped |= owned - keep
    _remove_owned(root, owned | new.names() | live.names(), dropped & owned)
    return new


def sweep(folder: str | os.PathLike[str]) -> None:
    """Remove the snapshots the records of ``folder`` name that neither the live nor
    the previous version is: what writers that failed or were killed left. The
    caller holds the folder's writer lock (no other run has staged snapshots)."""
    root = Path(folder)
    with folder_lock(root):
        live, previous = _read(root)
        owned = _owned(root)
        stale = owned - live.names() - previous.names()
        if stale:
            _remove_owned(root, owned, stale)


def claim(folder: str | os.PathLike[str], prefix: str, suffix: str = "") -> str:
    """A new snapshot name in ``folder`` (``<prefix><random><suffix>``), recorded as
    the folder's before the caller creates it, so that it is removed when no
    switch names it. The caller holds ``folder_lock(folder)``."""
    root = Path(folder)
    owned = _owned(root)
    while True:
        name = f"{prefix}{secrets.token_hex(6)}{suffix}"
        if name not in owned and not os.path.lexists(root / name):
            break
    _write_owned(root, owned | {name})
    return name


def check_folder(folder: str | os.PathLike[str]) -> None:
    """Raise ``StoreError`` when ``folder`` holds files and is not an index: an
    index run would mix its files with someone else's. Writes nothing."""
    root = Path(folder)
    if not root.is_dir() or (root / OWNED_FILE).exists():
        return
    strays = _strays(root)
    if strays:
        shown = ", ".join(sorted(strays)[:3]) + (", ..." if len(strays) > 3 else "")
        raise StoreError(f"{root} is not empty and is not a VitalRAG index (it holds {shown}): "
                         "refusing to write an index there; give an empty or new folder for the index")


def adopt(folder: str | os.PathLike[str]) -> None:
    """Make ``folder`` (created if need be) an index folder a run may write, or
    raise ``StoreError`` (see ``check_folder``): an index keeps its records
    (damaged ones are written again from its version), an empty one becomes an
    index; one of another format is a ``SchemaMismatch``. A version pointer that cannot be
    read is written afresh (the run builds the index again; the records still
    name its snapshots). The caller holds the folder's writer lock."""
    root = Path(folder)
    with folder_lock(root):
        if not (root / OWNED_FILE).exists():
            check_folder(root)
            _write_owned(root, _owned(root))
        elif _recorded(root) is None:  # damaged: what the version names is the index's
            _write_owned(root, _owned(root))
        try:
            _read(root)
        except StoreCorrupt as exc:
            log.warning("cannot read the index version %s (%s): building the index again",
                        root / VERSION_FILE, exc.__cause__)
            with replacing(root / VERSION_FILE, durable=True) as tmp:
                tmp.write_text(json.dumps({"format": FORMAT, "graph": None, "retrieval": None}),
                               encoding="utf-8")


def is_index(folder: str | os.PathLike[str]) -> bool:
    """Whether ``folder`` is an index folder (its records, or a version pointer)."""
    root = Path(folder)
    return root.is_dir() and ((root / OWNED_FILE).exists() or _pointer(root).get("format") == FORMAT)


def _strays(root: Path) -> list[str]:
    """What in ``root`` (which has no ``snapshots.json``) no index wrote: nothing in
    an index whose records were lost (a readable pointer), else every entry but
    the files an index writes."""
    entries = os.listdir(root)
    try:
        _read(root)
    except StoreCorrupt as exc:
        others = [n for n in entries if n != VERSION_FILE and not _index_file(root, n)]
        if not others:  # a damaged pointer among an index's files: say what to remove
            raise StoreCorrupt(f"cannot read the index version {root / VERSION_FILE} ({exc.__cause__}): "
                               "remove it and index again") from exc
        return [VERSION_FILE, *others]
    if (root / VERSION_FILE).exists():
        return []
    return [n for n in entries if not _index_file(root, n)]


def _index_file(root: Path, name: str) -> bool:
    """Whether the entry ``name`` of ``root`` is one an index writes."""
    path = root / name
    if name in (LOCK_FILE, WRITER_LOCK_FILE, VERSION_FILE):
        return path.is_file()
    if name in CACHE_FOLDERS:
        return path.is_dir()
    return bool(_SNAPSHOT_NAME.fullmatch(name))


def _recorded(root: Path) -> set[str] | None:
    """The names ``snapshots.json`` holds (None: no such file, or unreadable)."""
    try:
        data = json.loads((root / OWNED_FILE).read_text(encoding="utf-8"))
        names = data.get("snapshots") if isinstance(data, dict) else None
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ValueError("not a list of snapshot names")
        return {n for n in names if _safe_name(n)}
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        log.warning("cannot read %s (%s): only the snapshots its version names are the index's",
                    root / OWNED_FILE, exc)
        return None


def _owned(root: Path) -> set[str]:
    """The snapshots the records of ``root`` name: ``snapshots.json``; else (lost or
    damaged) what its pointer names, and, when the folder holds nothing but an
    index's files, every snapshot there."""
    recorded = _recorded(root)
    if recorded is not None:
        return recorded
    try:
        live, previous = _read(root)
    except StoreCorrupt:
        live = previous = Version()
    owned = {n for n in live.names() | previous.names() if os.path.lexists(root / n)}
    if root.is_dir():
        entries = os.listdir(root)
        if all(_index_file(root, name) for name in entries):
            owned |= {n for n in entries if _SNAPSHOT_NAME.fullmatch(n)}
    return owned


def _write_owned(root: Path, owned: Iterable[str]) -> None:
    with replacing(root / OWNED_FILE) as tmp:
        tmp.write_text(json.dumps({"format": FORMAT, "snapshots": sorted(owned)}), encoding="utf-8")


def _remove_owned(root: Path, owned: set[str], dropped: set[str]) -> None:
    """Remove the snapshots ``dropped`` (all of them ``owned``), then record what stays."""
    for name in sorted(dropped):
        _remove(root / name)
    if owned - dropped != _recorded(root):
        _write_owned(root, owned - dropped)


def _read(root: Path) -> tuple[Version, Version]:
    """The live and the previous version of ``root``."""
    path = root / VERSION_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or not isinstance(data.get("format"), int):
            raise ValueError("not a VitalRAG version file")
        if data["format"] != FORMAT:
            raise SchemaMismatch(f"index {root} has format {data['format']}, this VitalRAG reads format "
                                 f"{FORMAT}; re-index into a new --store")
        prev = data.get("previous") or {}
        return (Version(_name(data.get("graph")), _name(data.get("retrieval"))),
                Version(_name(prev.get("graph")), _name(prev.get("retrieval"))))
    except FileNotFoundError:
        return Version(), Version()
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        raise StoreCorrupt(f"cannot read the index version {path}: {exc}; index again to rebuild it") from exc


def _name(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not _safe_name(value):
        raise ValueError(f"bad snapshot name {value!r}")
    return value


def _safe_name(value: str) -> bool:
    """A name of an entry of the folder itself (no path, nothing hidden)."""
    return bool(value) and "/" not in value and "\\" not in value and not value.startswith(".")


def _files(path: Path) -> list[Path]:
    """The files of a snapshot (itself, or those under its folder)."""
    if not path.is_dir():
        return [path] if path.exists() else []
    return sorted(p for p in path.rglob("*") if p.is_file())


def _seal_of(path: Path) -> list[int]:
    st = path.stat()
    return [st.st_size, st.st_mtime_ns]


def _size(root: Path, names: Iterable[str]) -> int:
    total = 0
    for name in names:
        for p in _files(root / name):
            try:
                total += p.stat().st_size
            except OSError:
                pass
    return total


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)
