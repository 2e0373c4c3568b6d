"""A retrieval snapshot's views on disk: one SQLite file, read whole by a writer or
a server (``read``) and by the piece by a one-shot reader (``ViewFile``), which
decodes only the views its hits name instead of every view of the index.

Layout of ``views.db``::

    info(key, value)             schema, count (views), block (views per block), fields
    blocks(b, data)              the views in index order, ``block`` to a block: zstd-
                                 compressed JSON (format 2, the only one read), a
                                 block an array of views, a view an array of its
                                 fields in the order ``info.fields`` names
    bodies(object_id, pos)       the position of each object's first body view
    names(name, object_id)       the graph walk's anchors: the identifiers of body and
                                 signature views, and their objects
    repos(repo, start, stop)     the runs of positions each repository's views hold

A one-shot ``context`` on Django 5.1.4's index (221,828 views) spent three
quarters of its time decoding every view of a gzip JSON file. SQLite, not pickle:
opening a snapshot runs no code. The file is written once, into the snapshot's
temporary folder, and never changed, so a reader opens it immutable.
"""

from __future__ import annotations

import os
import sqlite3
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from operator import attrgetter
from pathlib import Path
from urllib.parse import quote

import orjson
import zstandard

from vitalrag.errors import StoreCorrupt
from vitalrag.model import View

FILE = "views.db"
#: zstd blocks; another format means re-indexing
FORMAT = 2
#: views to a block: a hit decodes its block (about 30 kB of JSON), and a block
#: compresses nearly as well as the whole file would
BLOCK = 64
#: zstd's level
_LEVEL = 3
#: SQLite's page size (see ``write``): 100,000 two-line files' views took 19.0 MB
#: against 28.0 MB in 4 kB pages
_PAGE = 1024
#: decoded blocks a reader keeps (a context decodes a few tens)
_CACHE = 256
_FIELDS = list(View.__dataclass_fields__)
#: the kinds of views whose identifier anchors the graph walk
NAMED_KINDS = ("body", "signature")


def write(path: Path, views: Sequence[View]) -> None:
    """Write ``views`` (in index order) as a new file at ``path``."""
    # made here with the umask's mode (SQLite would make it 0644 whatever the umask)
    os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
    con = sqlite3.connect(path, isolation_level=None)
    try:
        # a block is a few kB: in 4 kB pages each would leave most of its last page empty
        con.execute(f"PRAGMA page_size={_PAGE}")
        con.execute("PRAGMA journal_mode=OFF")
        con.execute("PRAGMA synchronous=OFF")
        con.execute("BEGIN")
        con.execute("CREATE TABLE info (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        con.execute("CREATE TABLE blocks (b INTEGER PRIMARY KEY, data BLOB NOT NULL)")
        con.execute("CREATE TABLE bodies (object_id TEXT PRIMARY KEY, pos INTEGER NOT NULL) WITHOUT ROWID")
        con.execute("CREATE TABLE names (name TEXT NOT NULL, object_id TEXT NOT NULL, "
                    "PRIMARY KEY (name, object_id)) WITHOUT ROWID")
        con.execute("CREATE TABLE repos (repo TEXT NOT NULL, start INTEGER NOT NULL, stop INTEGER NOT NULL)")
        con.executemany("INSERT INTO info VALUES (?, ?)", [
            ("format", str(FORMAT)), ("count", str(len(views))), ("block", str(BLOCK)),
            ("fields", orjson.dumps(_FIELDS).decode())])
        fields = attrgetter(*_FIELDS)
        compress = zstandard.ZstdCompressor(level=_LEVEL).compress
        con.executemany("INSERT INTO blocks VALUES (?, ?)", (
            (b, compress(orjson.dumps([fields(v) for v in views[i:i + BLOCK]])))
            for b, i in enumerate(range(0, len(views), BLOCK))))
        bodies: dict[str, int] = {}
        names: set[tuple[str, str]] = set()
        runs: list[list[object]] = []
        for pos, v in enumerate(views):
            if v.kind == "body":
                bodies.setdefault(v.object_id, pos)
            if v.kind in NAMED_KINDS and v.identifier:
                names.add((v.identifier, v.object_id))
            if runs and runs[-1][0] == v.repo:
                runs[-1][2] = pos + 1
            else:
                runs.append([v.repo, pos, pos + 1])
        con.executemany("INSERT INTO bodies VALUES (?, ?)", bodies.items())
        con.executemany("INSERT INTO names VALUES (?, ?)", sorted(names))
        con.executemany("INSERT INTO repos VALUES (?, ?, ?)", runs)
        con.execute("COMMIT")
    finally:
        con.close()


def _connect(path: Path) -> tuple[sqlite3.Connection, int, int]:
    """``path`` opened read-only and immutable, with its view count and block size."""
    try:
        con = sqlite3.connect(f"file:{quote(str(path))}?mode=ro&immutable=1", uri=True, check_same_thread=False)
    except sqlite3.Error as exc:
        raise StoreCorrupt(f"cannot read retrieval views {path}: {exc}") from exc
    try:
        info = dict(con.execute("SELECT key, value FROM info"))
        if info.get("format") != str(FORMAT) or orjson.loads(info["fields"]) != _FIELDS:
            raise ValueError(f"format {info.get('format')} with fields {info.get('fields')}; "
                             f"this VitalRAG reads format {FORMAT}")
        return con, int(info["count"]), int(info["block"])
    except (sqlite3.Error, KeyError, ValueError, TypeError) as exc:
        con.close()
        raise StoreCorrupt(f"cannot read retrieval views {path}: {exc}") from exc


def _decode(path: Path, blob: bytes) -> list[View]:
    try:
        # a decompressor per block: it costs little beside the JSON, and a reader's
        # blocks may be decoded on several threads
        data = zstandard.ZstdDecompressor().decompress(blob)
        return [View(*row) for row in orjson.loads(data)]
    except (zstandard.ZstdError, orjson.JSONDecodeError, TypeError) as exc:
        raise StoreCorrupt(f"cannot read retrieval views {path}: malformed block ({exc!r})") from exc


def read(path: Path) -> list[View]:
    """Every view of the file at ``path``, in index order."""
    con, count, _ = _connect(path)
    try:
        views = [v for (blob,) in con.execute("SELECT data FROM blocks ORDER BY b")
                 for v in _decode(path, blob)]
    except sqlite3.Error as exc:
        raise StoreCorrupt(f"cannot read retrieval views {path}: {exc}") from exc
    finally:
        con.close()
    if len(views) != count:
        raise StoreCorrupt(f"cannot read retrieval views {path}: {len(views)} views, {count} recorded")
    return views


class ViewFile:
    """The views of one snapshot, read by the piece: each call decodes only the
    blocks of the positions it asks for (a few kept decoded)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._con, self.count, self._block = _connect(path)
        self._blocks: OrderedDict[int, list[View]] = OrderedDict()

    def _query(self, sql: str, args: Sequence[object] = ()) -> list[tuple[object, ...]]:
        try:
            return self._con.execute(sql, args).fetchall()
        except sqlite3.Error as exc:
            raise StoreCorrupt(f"cannot read retrieval views {self.path}: {exc}") from exc

    def _blocks_of(self, wanted: set[int]) -> None:
        missing = sorted(b for b in wanted if b not in self._blocks)
        for start in range(0, len(missing), 500):
            chunk = missing[start:start + 500]
            rows = self._query(f"SELECT b, data FROM blocks WHERE b IN ({','.join('?' * len(chunk))})", chunk)
            for b, blob in rows:
                self._blocks[int(b)] = _decode(self.path, blob)  # type: ignore[arg-type, call-overload]
        for b in wanted:
            if b not in self._blocks:
                raise StoreCorrupt(f"cannot read retrieval views {self.path}: block {b} is missing")
            self._blocks.move_to_end(b)
        while len(self._blocks) > max(_CACHE, len(wanted)):
            self._blocks.popitem(last=False)

    def views(self, positions: Sequence[int]) -> list[View]:
        """The views at ``positions`` (in that order)."""
        size = self._block
        self._blocks_of({p // size for p in positions})
        try:
            return [self._blocks[p // size][p % size] for p in positions]
        except IndexError as exc:
            raise StoreCorrupt(f"cannot read retrieval views {self.path}: a block is short") from exc

    def bodies(self, object_ids: Sequence[str]) -> dict[str, View]:
        """The body view of each object that has one."""
        where: dict[str, int] = {}
        ids = list(dict.fromkeys(object_ids))
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            where.update(self._query(  # type: ignore[arg-type]
                f"SELECT object_id, pos FROM bodies WHERE object_id IN ({','.join('?' * len(chunk))})", chunk))
        found = self.views(list(where.values()))
        return dict(zip(where, found, strict=True))

    def names(self, identifiers: Iterable[str]) -> dict[str, list[str]]:
        """Object ids by name, sorted, for the identifiers that name any."""
        out: dict[str, list[str]] = {}
        wanted = sorted(set(identifiers))
        for start in range(0, len(wanted), 500):
            chunk = wanted[start:start + 500]
            for name, object_id in self._query(
                    f"SELECT name, object_id FROM names WHERE name IN ({','.join('?' * len(chunk))}) "
                    "ORDER BY name, object_id", chunk):
                out.setdefault(str(name), []).append(str(object_id))
        return out

    def runs(self) -> list[tuple[str, int, int]]:
        """(repository, start, stop) for each run of positions one repository holds."""
        return [(str(r), int(a), int(b)) for r, a, b in  # type: ignore[call-overload]
                self._query("SELECT repo, start, stop FROM repos ORDER BY start")]

    def close(self) -> None:
        self._con.close()
