"""The version of an index folder: its graph and retrieval snapshots, named together.

Layout::

    current.json         {"format": 1, "graph": "graph-<id>.db", "retrieval": "retrieval-<id>",
                          "previous": {"graph": ..., "retrieval": ...},
                          "runs": {repo: {"fingerprint": ..., "report": ...}}}
    graph-<id>.db        a graph snapshot (``graph.packed``; ``.json``, ``.json.gz``: of earlier versions)
    retrieval-<id>/      a retrieval snapshot (``retrieve.index``)

A writer writes its new snapshots beside the live ones and then renames one small
pointer file over ``current.json``. That rename is the only switch: a reader that
reads the pointer once loads a graph and a retrieval snapshot of the same index
run, and a writer killed before the rename leaves the previous pair live.

The pair the pointer named before stays on disk until the next switch, for readers
that are loading it; the switch removes anything older. With ``sweep`` (the writer
holds the folder's writer lock, so no other run is writing snapshots) it also
removes snapshots no pointer names, which writers that were killed left behind.

``runs`` records, for each repository, the fingerprint of the index run that
made the live version (its files' digests, options and model) and that run's
report: a run whose fingerprint equals it has nothing to do, and answers without
loading the graph or writing anything. A switch made by anything but an index
run (a pull, a retrieval index saved alone) drops every record, so the next run
does the work.

A folder written before this layout (``graph.json`` beside a ``retrieval.json``
pointer) is read as it is; its first switch moves it to this layout.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from vitalrag.errors import StoreCorrupt, VitalRAGError
from vitalrag.kernel.files import replacing
from vitalrag.kernel.locks import folder_lock

log = logging.getLogger(__name__)

VERSION_FILE = "current.json"
FORMAT = 1
#: the layout before ``current.json``: the graph in one fixed file, and a pointer
#: naming the retrieval snapshot
LEGACY_GRAPH = "graph.json"
LEGACY_POINTER = "retrieval.json"
#: how often a reader starts again when the pointer moved while it was loading
ATTEMPTS = 5

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
    (the version pointer, and the files of the older layout), and costs a few
    stats: a server compares it before each call to know when to reload."""
    root = Path(folder)
    return tuple(_file_stamp(root / name) for name in (VERSION_FILE, LEGACY_POINTER, LEGACY_GRAPH))


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
    try:
        data = json.loads((Path(folder) / VERSION_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    found = data.get("runs") if isinstance(data, dict) else None
    return {k: v for k, v in found.items() if isinstance(v, dict)} if isinstance(found, dict) else {}


class Staged:
    """The snapshots one index run has written into ``folder``, switched to together
    by ``commit``. Only a run that holds the folder's writer lock stages. ``runs``:
    the index runs' records of the new version (see ``runs``; None: none)."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)
        self.graph: str | None = None
        self.retrieval: str | None = None
        self.runs: dict[str, dict[str, Any]] | None = None

    def takes(self, folder: str | os.PathLike[str]) -> bool:
        """Whether snapshots written into ``folder`` wait for this commit."""
        return Path(folder).resolve() == self.folder.resolve()

    def commit(self) -> Version:
        with folder_lock(self.folder):
            return switch(self.folder, graph=self.graph, retrieval=self.retrieval, sweep=True, runs=self.runs)


def switch(folder: str | os.PathLike[str], *, graph: str | None = None, retrieval: str | None = None,
           sweep: bool = False, runs: dict[str, dict[str, Any]] | None = None) -> Version:
    """Make ``graph`` and ``retrieval`` (snapshot names in ``folder``; None keeps the
    live one) the live version with one rename, then remove what no reader needs.
    ``runs``: the index runs' records of the new version (None: none).
    The caller holds ``folder_lock(folder)``."""
    root = Path(folder)
    live, previous = _read(root)
    new = Version(graph or live.graph, retrieval or live.retrieval)
    with replacing(root / VERSION_FILE, durable=True) as tmp:  # the rename survives a power cut
        tmp.write_text(json.dumps({"format": FORMAT, "graph": new.graph, "retrieval": new.retrieval,
                                   "previous": {"graph": live.graph, "retrieval": live.retrieval},
                                   "runs": runs or {}}),
                       encoding="utf-8")
    keep = new.names() | live.names()
    dropped = previous.names() - keep
    if sweep:
        dropped |= {p.name for p in _snapshots(root)} - keep
    for name in sorted(dropped):
        _remove(root / name)
    (root / LEGACY_POINTER).unlink(missing_ok=True)  # current.json names the snapshot now
    return new


def _read(root: Path) -> tuple[Version, Version]:
    """The live and the previous version of ``root``."""
    path = root / VERSION_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError("not a VitalRAG version file")
        prev = data.get("previous") or {}
        return (Version(_name(data.get("graph")), _name(data.get("retrieval"))),
                Version(_name(prev.get("graph")), _name(prev.get("retrieval"))))
    except FileNotFoundError:
        return _legacy(root), Version()
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        raise StoreCorrupt(f"cannot read the index version {path}: {exc}; remove {root} "
                           "and index again") from exc


def _name(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value or "/" in value or value.startswith("."):
        raise ValueError(f"bad snapshot name {value!r}")
    return value


def _legacy(root: Path) -> Version:
    graph = LEGACY_GRAPH if (root / LEGACY_GRAPH).exists() else None
    pointer = root / LEGACY_POINTER
    try:
        retrieval = _name(json.loads(pointer.read_text(encoding="utf-8"))["current"])
    except FileNotFoundError:
        retrieval = None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        # an index run rebuilds it; until then there is no retrieval index to read
        log.warning("cannot read %s (%s); the next index builds the retrieval index afresh", pointer, exc)
        retrieval = None
    return Version(graph, retrieval)


def _snapshots(root: Path) -> list[Path]:
    """Every snapshot in ``root``, named by a pointer or not, and writers' temporary files."""
    found = [*root.glob("graph-*.db"), *root.glob("graph-*.json"), *root.glob("graph-*.json.gz"),
             *root.glob("retrieval-*"),
             *root.glob(".graph-*.tmp")]
    found += [p for p in (root / LEGACY_GRAPH,) if p.exists()]
    return found


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


