"""The embedded store's graph snapshot on disk: one SQLite file of per-file packs,
read whole by a writer or a server (``MemoryStore``) and by the piece by a
one-shot reader (``PackedGraph``), which answers a query from the few files it
touches instead of loading the graph.

Layout of ``graph-<id>.db``::

    info(key, value)              schema_version, pack_format, fields, meta (JSON),
                                  counts (JSON: by repository, its objects and edges by
                                  kind and its unresolved references, as ``counts``
                                  gives them)
    dictionary(data)              the packs' compression dictionary
    files(fid, repo, path, pack)  one row per (repo, path) group of objects: a file
                                  and its definitions, a module, a repository (path "")
    objects(id, fid, kind)        where each object's pack is

A pack is zstd-compressed JSON (with a raw-content dictionary, ``dictionary``,
sampled from the packs): ``o`` the objects (their fields in the order ``info.fields``
names), ``out`` the edges
leaving them ``[source, target, kind, lines]``, ``in`` the edges entering them
from other packs, ``u`` their unresolved references ``[source, kind, name, line,
reason]``, ``s`` the file's source text, ``n`` the place of each object, edge
and unresolved reference in the whole snapshot (read whole, it comes back in
the order it was written). An edge between two packs is in both
(``out`` of one, ``in`` of the other), so a node's edges either way are in its
own pack. SQLite, not pickle: opening a snapshot runs no code. A snapshot is
written once, to a temporary file renamed into place, and never changed, so a
reader opens it immutable (no locks, no journal).
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from operator import itemgetter
from pathlib import Path
from typing import Any
from urllib.parse import quote

import orjson
import zstandard

from vitalrag.errors import SchemaMismatch, StoreCorrupt, StoreError
from vitalrag.graph.store import DerivedReads, Direction, edges_at, hops
from vitalrag.model import DEFINITION_KINDS, SCHEMA_VERSION, CodeObject, Edge, NodeId, UnresolvedRef

#: the format of the packs (zstd-compressed JSON): the only one read
PACK_FORMAT = 4
SUFFIX = ".db"
#: packs a one-shot reader keeps decoded (a context touches tens of files)
_PACK_CACHE = 512
#: zstd's level, and the size of the dictionary sampled from the packs
_LEVEL = 1
_DICTIONARY = 32 * 1024


def write(path: Path, payload: Mapping[str, Any]) -> None:
    """Write a snapshot of ``payload`` (``MemoryStore``'s: objects, edges,
    unresolved, sources, meta) as a new SQLite file at ``path``."""
    # a group is [objects, out, in, unresolved, sources, and the places of the first
    # three]: lists indexed by constant, as this runs once per edge of the snapshot
    groups: dict[tuple[str, str], list[Any]] = {}
    home: dict[str, list[Any]] = {}  # object id -> its group
    for n, d in enumerate(payload["objects"]):
        key = (d["repo"], d["path"])
        group = groups.get(key)
        if group is None:
            group = groups[key] = [[], [], [], [], {}, [], [], []]
        group[0].append(d)
        group[5].append(n)
        home[d["id"]] = group
    for n, row in enumerate(payload["edges"]):
        group = home[row[0]]
        group[1].append(row)
        group[6].append(n)
        away = home[row[1]]
        if away is not group:
            away[2].append(row)
    for n, row in enumerate(payload["unresolved"]):
        group = home.get(row[0])
        if group is not None:
            group[3].append(row)
            group[7].append(n)
    for fid, text in payload["sources"].items():
        group = home.get(fid)
        if group is not None:
            group[4][fid] = text
    fields = list(CodeObject.__dataclass_fields__)
    keys = sorted(groups)
    counts = _counts(groups)
    values = itemgetter(*fields)

    def encoded(key: tuple[str, str]) -> bytes:
        o, out, in_, u, sources, *places = groups[key]
        return orjson.dumps({"o": list(map(values, o)), "out": out, "in": in_, "u": u, "s": sources, "n": places})

    # the compression dictionary, from an even sample of the packs: a pack is a few hundred
    # bytes, too little to find its repetitions (field names, ids, paths) within it
    step = max(1, len(keys) // 64)
    zdict = b"".join(encoded(keys[i]) for i in range(0, len(keys), step))[-_DICTIONARY:]
    con = sqlite3.connect(path, isolation_level=None)
    try:
        con.execute("PRAGMA journal_mode=OFF")
        con.execute("PRAGMA synchronous=OFF")
        con.execute("BEGIN")
        con.execute("CREATE TABLE info (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        con.execute("CREATE TABLE files (fid INTEGER PRIMARY KEY, repo TEXT NOT NULL, path TEXT NOT NULL, "
                    "pack BLOB NOT NULL)")
        con.execute("CREATE TABLE objects (id TEXT PRIMARY KEY, fid INTEGER NOT NULL, kind TEXT NOT NULL) "
                    "WITHOUT ROWID")
        con.execute("CREATE TABLE dictionary (data BLOB NOT NULL)")
        con.executemany("INSERT INTO info VALUES (?, ?)", [
            ("schema_version", str(payload["schema_version"])), ("pack_format", str(PACK_FORMAT)),
            ("fields", orjson.dumps(fields).decode()),
            ("meta", orjson.dumps(payload["meta"]).decode()), ("counts", orjson.dumps(counts).decode())])
        con.execute("INSERT INTO dictionary VALUES (?)", (zdict,))
        compress = zstandard.ZstdCompressor(level=_LEVEL, dict_data=_dictionary(zdict)).compress
        con.executemany("INSERT INTO files VALUES (?, ?, ?, ?)",
                        ((fid, key[0], key[1], compress(encoded(key))) for fid, key in enumerate(keys, 1)))
        con.executemany("INSERT INTO objects VALUES (?, ?, ?)",
                        ((d["id"], fid, d["kind"]) for fid, key in enumerate(keys, 1) for d in groups[key][0]))
        con.execute("CREATE UNIQUE INDEX files_key ON files (repo, path)")
        con.execute("COMMIT")
    finally:
        con.close()


def _counts(groups: Mapping[tuple[str, str], list[Any]]) -> dict[str, Any]:
    """Each repository's objects and edges by kind (an edge is its source's
    repository's) and its unresolved references: what ``stats`` shows, so that a
    one-shot reader answers it without decoding a pack. ``groups``: ``write``'s."""
    kind = itemgetter(2)
    objects: dict[str, Counter[str]] = defaultdict(Counter)
    edges: dict[str, Counter[str]] = defaultdict(Counter)
    unresolved: Counter[str] = Counter()
    for (repo, _), (o, out, _, u, *_) in groups.items():
        objects[repo].update(d["kind"] for d in o)
        edges[repo].update(map(kind, out))
        unresolved[repo] += len(u)
    return {repo: {"objects": dict(sorted(kinds.items())), "edges": dict(sorted(edges[repo].items())),
                   "unresolved": unresolved[repo]} for repo, kinds in sorted(objects.items())}


def _dictionary(data: bytes) -> zstandard.ZstdCompressionDict:
    return zstandard.ZstdCompressionDict(data, dict_type=zstandard.DICT_TYPE_RAWCONTENT)


def is_packed(path: Path) -> bool:
    """Whether ``path`` is a snapshot of this format (an SQLite file)."""
    try:
        with open(path, "rb") as fh:
            return fh.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def _connect(path: Path) -> sqlite3.Connection:
    """``path`` opened read-only and immutable (a snapshot never changes)."""
    try:
        con = sqlite3.connect(f"file:{quote(str(path))}?mode=ro&immutable=1", uri=True,
                              check_same_thread=False)
        info = dict(con.execute("SELECT key, value FROM info"))
    except sqlite3.Error as exc:
        raise StoreCorrupt(f"cannot read index {path}: {exc}") from exc
    version = int(info.get("schema_version", -1))
    if version != SCHEMA_VERSION:
        con.close()
        raise SchemaMismatch(f"index {path} has schema version {version}, this VitalRAG reads version "
                             f"{SCHEMA_VERSION}; re-index into a new --store")
    return con


class _Reader:
    """Decodes the packs of one snapshot (its dictionary and object fields)."""

    def __init__(self, path: Path, con: sqlite3.Connection) -> None:
        self.path = path
        try:
            info = dict(con.execute("SELECT key, value FROM info"))
            self.info = info
            if info.get("pack_format") != str(PACK_FORMAT):
                raise SchemaMismatch(f"index {path} has pack format {info.get('pack_format')}, this VitalRAG "
                                     f"reads {PACK_FORMAT}; re-index into a new --store")
            self.fields = orjson.loads(info["fields"])
            self.zdict = con.execute("SELECT data FROM dictionary").fetchone()[0]
            self._dictionary = _dictionary(self.zdict)
            self._local = threading.local()
        except (sqlite3.Error, KeyError, TypeError, orjson.JSONDecodeError, zstandard.ZstdError) as exc:
            raise StoreCorrupt(f"cannot read index {path}: {exc}") from exc

    def _inflate(self, blob: bytes) -> bytes:
        # a decompressor per thread: readers share a snapshot across threads (``serve``)
        unpacker: zstandard.ZstdDecompressor | None = getattr(self._local, "unpacker", None)
        if unpacker is None:
            unpacker = self._local.unpacker = zstandard.ZstdDecompressor(dict_data=self._dictionary)
        return unpacker.decompress(blob)

    def decode(self, blob: bytes) -> dict[str, Any]:
        try:
            pack = orjson.loads(self._inflate(blob))
            if not isinstance(pack, dict):
                raise ValueError("a pack is not an object")
            fields = self.fields
            pack["o"] = [dict(zip(fields, row, strict=True)) for row in pack["o"]]
            return pack
        except (zstandard.ZstdError, orjson.JSONDecodeError, ValueError, TypeError, KeyError) as exc:
            raise StoreCorrupt(f"cannot read index {self.path}: malformed content ({exc!r})") from exc


def read(path: Path) -> dict[str, Any]:
    """The whole snapshot at ``path``, as ``MemoryStore`` loads it: the payload
    ``write`` was given."""
    con = _connect(path)
    try:
        reader = _Reader(path, con)
        info = reader.info
        meta = orjson.loads(info["meta"])
        placed: tuple[dict[int, Any], dict[int, Any], dict[int, Any]] = ({}, {}, {})
        sources: dict[str, str] = {}
        for (blob,) in con.execute("SELECT pack FROM files ORDER BY fid"):
            pack = reader.decode(blob)
            for part, rows, places in zip(placed, (pack["o"], pack["out"], pack["u"]), pack["n"]):
                if len(rows) != len(places):
                    raise ValueError("a pack's places do not match its rows")
                part.update(zip(places, rows))
            sources.update(pack["s"])
        objects, edges, unresolved = ([part[n] for n in sorted(part)] for part in placed)
        return {"schema_version": SCHEMA_VERSION, "objects": objects, "edges": edges,
                "unresolved": unresolved, "sources": sources, "meta": meta}
    except (sqlite3.Error, TypeError, KeyError, ValueError) as exc:
        raise StoreCorrupt(f"cannot read index {path}: {exc}") from exc
    finally:
        con.close()


class PackedGraph(DerivedReads):
    """A graph snapshot read by the piece, for one-shot readers (a CLI ``search``
    or ``context``): each read decodes only the packs of the objects it asks
    about. Reads that span the whole graph (listing objects by kind, counts,
    export) load it into a ``MemoryStore`` once. Read-only."""

    def __init__(self, path: str | os.PathLike[str], location: str | None = None) -> None:
        self.path = Path(path)
        self.location = location or str(self.path.parent)
        self._con = _connect(self.path)
        try:
            self._reader = _Reader(self.path, self._con)
        except BaseException:
            self._con.close()
            raise
        self._packs: dict[int, dict[str, Any]] = {}
        self._fids: dict[NodeId, int | None] = {}
        self._whole: Any = None
        self._meta: dict[str, Any] | None = None

    # -- the pieces --------------------------------------------------------------
    def _query(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        try:
            return self._con.execute(sql, args).fetchall()
        except sqlite3.Error as exc:
            raise StoreCorrupt(f"cannot read index {self.path}: {exc}") from exc

    def _blob(self, fid: int) -> bytes:
        rows = self._query("SELECT pack FROM files WHERE fid = ?", (fid,))
        if not rows:
            raise StoreCorrupt(f"cannot read index {self.path}: no pack {fid}")
        return rows[0][0]

    def _pack(self, fid: int) -> dict[str, Any]:
        pack = self._packs.get(fid)
        if pack is None:
            pack = self._reader.decode(self._blob(fid))
            pack["by_id"] = {d["id"]: d for d in pack["o"]}
            if len(self._packs) >= _PACK_CACHE:
                self._packs.pop(next(iter(self._packs)))
            self._packs[fid] = pack
        return pack

    def _locate(self, ids: Iterable[NodeId]) -> dict[NodeId, int]:
        """The pack of each id the snapshot holds."""
        wanted = [i for i in dict.fromkeys(ids) if i not in self._fids]
        for start in range(0, len(wanted), 500):
            chunk = wanted[start:start + 500]
            found = dict(self._query(f"SELECT id, fid FROM objects WHERE id IN ({','.join('?' * len(chunk))})",
                                     chunk))
            for i in chunk:
                self._fids[i] = found.get(i)
        return {i: fid for i in dict.fromkeys(ids) if (fid := self._fids.get(i)) is not None}

    def _edges_at(self, node: NodeId, direction: Direction) -> Iterator[Sequence[Any]]:
        """The edge rows at ``node``, each once."""
        fid = self._locate([node]).get(node)
        if fid is None:
            return
        pack = self._pack(fid)
        for row in pack["out"]:
            if (direction != "in" and row[0] == node) or (direction != "out" and row[1] == node
                                                          and row[0] != node):
                yield row
        if direction != "out":
            yield from (row for row in pack["in"] if row[1] == node)

    def _all(self) -> Any:
        """The whole snapshot as a ``MemoryStore`` (for reads that span it)."""
        if self._whole is None:
            from vitalrag.graph.memory import MemoryStore

            store = MemoryStore(self.path.parent)
            store._load(self.path)
            self._whole = store
        return self._whole

    # -- GraphStore: reads ----------------------------------------------------------
    def get_objects(self, ids: Iterable[NodeId]) -> dict[NodeId, CodeObject]:
        ids = list(ids)
        located = self._locate(ids)
        return {i: CodeObject.from_dict(self._pack(fid)["by_id"][i]) for i, fid in located.items()}

    def find_objects(self, *, repo: str | None = None, kind: str | None = None,
                     path: str | None = None, name: str | None = None) -> list[CodeObject]:
        # the packs that can hold a match, found by the tables: only they are decoded
        where, args = ["1"], []
        for column, value in (("f.repo", repo), ("f.path", path), ("o.kind", kind)):
            if value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        fids = [fid for (fid,) in self._query(
            "SELECT DISTINCT f.fid FROM files f" + (" JOIN objects o ON o.fid = f.fid" if kind is not None else "")
            + f" WHERE {' AND '.join(where)} ORDER BY f.fid", args)]
        out: list[CodeObject] = []
        for fid in fids:
            pack = self._pack(fid) if len(fids) <= _PACK_CACHE else self._reader.decode(self._blob(fid))
            out.extend(CodeObject.from_dict(d) for d in pack["o"]
                       if (repo is None or d["repo"] == repo) and (kind is None or d["kind"] == kind)
                       and (path is None or d["path"] == path) and (name is None or d["name"] == name))
        return sorted(out, key=lambda o: o.id)

    def find_edges(self, *, repo: str | None = None, kind: str | None = None,
                   source: NodeId | None = None, target: NodeId | None = None) -> list[Edge]:
        if source is None and target is None:  # each edge is in the "out" of its source's pack
            fids = [fid for (fid,) in self._query(
                "SELECT fid FROM files" + (" WHERE repo = ?" if repo is not None else "") + " ORDER BY fid",
                [repo] if repo is not None else [])]
            found = [Edge(s, t, k, tuple(lines)) for fid in fids
                     for s, t, k, lines in self._reader.decode(self._blob(fid))["out"] if kind is None or k == kind]
            return sorted(found, key=lambda e: e.key)
        node = source if source is not None else target
        assert node is not None
        out = []
        for s, t, k, lines in self._edges_at(node, "out" if source is not None else "in"):
            if (kind is None or k == kind) and (target is None or t == target) \
                    and (source is None or s == source):
                out.append(Edge(s, t, k, tuple(lines)))
        if repo is not None:
            owners = self.get_objects([e.source for e in out])
            out = [e for e in out if owners[e.source].repo == repo]
        return sorted(out, key=lambda e: e.key)

    def edges_of(self, ids: Iterable[NodeId], *, kinds: Sequence[str] | None = None,
                 direction: Direction = "both") -> list[Edge]:
        return edges_at(ids, lambda node: self._edges_at(node, direction), kinds)

    def adjacent(self, ids: Iterable[NodeId], *, kinds: Sequence[str] | None = None,
                 direction: Direction = "both") -> dict[NodeId, list[NodeId]]:
        wanted = set(kinds) if kinds else None
        out: dict[NodeId, list[NodeId]] = {}
        for node in dict.fromkeys(ids):
            found = {t if s == node else s for s, t, k, _ in self._edges_at(node, direction)
                     if wanted is None or k in wanted}
            if found:
                out[node] = sorted(found)
        return out

    def neighbors(self, ids: Iterable[NodeId], *, kinds: Sequence[str] | None = None,
                  direction: Direction = "both", depth: int = 1) -> dict[NodeId, int]:
        start = list(self._locate(ids))
        return hops(start, lambda frontier: self.adjacent(frontier, kinds=kinds, direction=direction), depth)

    def same_file(self, ids: Iterable[NodeId]) -> dict[NodeId, list[NodeId]]:
        out: dict[NodeId, list[NodeId]] = {}
        for node, fid in self._locate(list(ids)).items():
            pack = self._pack(fid)
            defs = pack.get("defs")
            if defs is None:
                defs = pack["defs"] = sorted(d["id"] for d in pack["o"] if d["kind"] in DEFINITION_KINDS)
            out[node] = [p for p in defs if p != node]
        return out

    def unresolved(self, repo: str | None = None) -> list[UnresolvedRef]:
        return self._all().unresolved(repo)

    def source(self, file_node: NodeId) -> str | None:
        fid = self._locate([file_node]).get(file_node)
        return None if fid is None else self._pack(fid)["s"].get(file_node)

    def sources(self, file_nodes: Iterable[NodeId]) -> dict[NodeId, str]:
        out = {}
        for node, fid in self._locate(list(file_nodes)).items():
            text = self._pack(fid)["s"].get(node)
            if text is not None:
                out[node] = text
        return out

    def get_meta(self, repo: str) -> dict[str, Any]:
        if self._meta is None:
            rows = self._query("SELECT value FROM info WHERE key = 'meta'")
            self._meta = orjson.loads(rows[0][0]) if rows else {}
        return dict(self._meta.get(repo, {}))

    def repositories(self) -> list[str]:
        return sorted(i for (i,) in self._query("SELECT id FROM objects WHERE kind = 'repository'"))

    def counts(self, repo: str | None = None) -> dict[str, Any]:
        rows = self._query("SELECT value FROM info WHERE key = 'counts'")
        try:
            counts = orjson.loads(rows[0][0])
        except (IndexError, orjson.JSONDecodeError) as exc:
            raise StoreCorrupt(f"cannot read index {self.path}: malformed counts ({exc})") from exc
        if repo is not None:
            return counts.get(repo) or {"objects": {}, "edges": {}, "unresolved": 0}
        total: dict[str, Any] = {"objects": Counter(), "edges": Counter(), "unresolved": 0}
        for c in counts.values():
            total["objects"].update(c["objects"])
            total["edges"].update(c["edges"])
            total["unresolved"] += c["unresolved"]
        return {"objects": dict(sorted(total["objects"].items())), "edges": dict(sorted(total["edges"].items())),
                "unresolved": total["unresolved"]}

    # -- GraphStore: the rest -------------------------------------------------------
    def close(self) -> None:
        self._con.close()

    def snapshot(self) -> AbstractContextManager[None]:
        return nullcontext()

    def writing(self, repos: Iterable[str] = (), *, wait: bool = False,
                staged: Any = None) -> AbstractContextManager[None]:
        raise StoreError(f"{self.location} was opened to read one snapshot; open it with MemoryStore to write")

    def _read_only(self, *args: Any, **kwargs: Any) -> None:
        raise StoreError(f"{self.location} was opened to read one snapshot; open it with MemoryStore to write")

    upsert_objects = upsert_edges = upsert_unresolved = put_sources = set_meta = _read_only
    delete_objects = delete_edges = delete_unresolved = delete_files = delete_repository = save = _read_only

