"""Per-file extraction results kept between runs, so a re-index parses only
files whose content changed.

Layout (inside the index folder)::

    facts/<repo>.jsonl.gz   one gzip-compressed JSON line per file:
                            a header {"version", "repo"}, then
                            [path, digest, language, facts] for every file

Plain JSON, so loading it runs no code: an index folder handed over (or a file
planted in it) is data, never instructions, unlike the pickles of earlier
versions. A language's facts (``facts.Fact``) are written as their class name
and fields in order, and read back only as one of the classes its ``Language``
names (``fact_types``). A file's source text is not kept: a hit is the file's
bytes read anyway for their digest (``text`` of ``FileFacts`` is set from them,
and must hash to the cached file object's ``content_hash``). A missing or
unreadable entry, or a file of another version, only means that file is parsed
again.

An entry's language is its facts' (``FileFacts.language``), which may differ
from the walk's: the walk names a file's language by its name, cheaply, and
extraction may hand it to another language of the same family (C's handler
extracts a ``.h`` that reads as C++ as C++). A lookup takes an entry of the
walk's language or of one of its family (``_made_by``); path, digest and source
text decide the rest.

During a run each process that parses (this one, or each worker of a ``ParsePool``)
appends the entries it makes to a segment of its own (``.<repo>.<run>.<pid>.part``);
``save`` writes the repository's file anew from the entries it kept and those
segments, and renames it into place.
"""

from __future__ import annotations

import gzip
import hashlib
import logging
import math
import os
import secrets
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import IO, Any

import orjson

from vitalrag import __version__
from vitalrag.ingest.facts import FileFacts, RawRef, RefDetail
from vitalrag.ingest.content import LANGUAGES
from vitalrag.kernel.files import replacing
from vitalrag.kernel.text import content_hash
from vitalrag.model import CodeObject

log = logging.getLogger(__name__)

#: bump when extraction output changes shape or meaning, or the file its layout
FACTS_VERSION = f"{__version__}/11"
#: what the cache is named by in the header line (a stray JSON file is not a cache)
_KIND = "vitalrag-facts"
_OBJECT_FIELDS = tuple(CodeObject.__dataclass_fields__)
_OBJECT_TYPES = tuple(int if f in ("start_line", "end_line") else str for f in _OBJECT_FIELDS)
#: a dict of one key starting with NUL is a value JSON has no form for (a tuple,
#: a set, a dict with keys that are not strings, a language's fact); no source
#: name starts with NUL
_TAG = "\0"


def file_digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


class Uncacheable(TypeError):
    """Extraction returned a value plain JSON cannot carry exactly: the file is
    not cached (it is parsed again next time)."""


class FactsCache:
    """The facts of one repository's files, in ``folder/<repo>.jsonl.gz``."""

    def __init__(self, folder: str | os.PathLike[str], repo: str) -> None:
        self.folder = Path(folder)
        self.repo = repo
        self.path = self.folder / f"{repo}.jsonl.gz"
        #: segments of this run: ``<prefix><pid>.part``, one per process that parses
        self.segment_prefix = str(self.folder / f".{repo}.{os.getpid()}-{secrets.token_hex(4)}.")
        #: path -> digest of the entries written to a segment in this run
        self.files: dict[str, str] = {}
        self._hits: set[str] = set()  # paths whose entry in the file was used
        self._stored: set[str] = set()  # every path the file holds
        self._writer: SegmentWriter | None = None

    def lookup(self, wanted: Mapping[str, tuple[str, str, str]]) -> dict[str, FileFacts]:
        """The cached facts of the files in ``wanted`` (path -> digest, language and
        source text) whose content is unchanged, read in one pass over the file."""
        hits: dict[str, FileFacts] = {}
        for line in self._lines():
            try:
                path, digest, language, body = orjson.loads(line)
            except (orjson.JSONDecodeError, ValueError, TypeError):
                continue
            if not isinstance(path, str):
                continue
            self._stored.add(path)
            want = wanted.get(path)
            if want is None or want[0] != digest or not _made_by(want[1], language):
                continue
            try:
                facts = facts_from_json(body)
            except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
                log.warning("re-parsing %s: cached facts unreadable (%s)", path, exc)
                continue
            # the entry must be of this very file and content
            if facts.path != path or facts.language != language or facts.file.content_hash != content_hash(want[2]):
                continue
            facts.text = want[2]
            hits[path] = facts
        self._hits = set(hits)
        return hits

    def _lines(self) -> Iterator[bytes]:
        """The entry lines of the file, none when it is missing, of another
        version or unreadable (up to where it can be read)."""
        if os.path.lexists(self.path) and not self.path.is_file():
            # a pipe or a device would block or never end: only a regular file is read
            log.warning("ignoring facts cache %s: not a regular file", self.path)
            return
        try:
            fh = gzip.open(self.path, "rb")
        except FileNotFoundError:
            return
        except OSError as exc:
            log.warning("ignoring unreadable facts cache %s: %s", self.path, exc)
            return
        with fh:
            try:
                header = orjson.loads(fh.readline())
                if not (isinstance(header, dict) and header.get("kind") == _KIND
                        and header.get("version") == FACTS_VERSION and header.get("repo") == self.repo):
                    return
                yield from fh
            except FileNotFoundError:
                return
            except (OSError, EOFError, ValueError) as exc:  # gzip.BadGzipFile, zlib.error, truncation
                log.warning("ignoring the rest of the facts cache %s: %s", self.path, exc)

    def put(self, path: str, digest: str, facts: FileFacts) -> None:
        """Cache the facts of a file this process parsed."""
        if self._writer is None:
            self._writer = SegmentWriter(self.segment_prefix)
        if self._writer.write(path, digest, facts):
            self.record(path, digest)

    def record(self, path: str, digest: str) -> None:
        """Enter a file whose entry was written to a segment (``parse_files``, in
        this process or a worker) for ``save`` to take."""
        self.files[path] = digest

    def save(self, keep: set[str]) -> None:
        """Write the file anew with the entries of the files in ``keep``: those
        used from it and those written in this run (nothing is written when the
        file already holds exactly the entries it would)."""
        if self._writer is not None:
            self._writer.close()
        try:
            new = {p for p in self.files if p in keep}
            old = self._hits & keep - new
            if new or old != self._stored:
                self._write(old, new)
        finally:
            self.discard()

    def discard(self) -> None:
        """Remove this run's segments (``save`` does; a failed run calls it), and
        those of runs of this repository whose process is gone (killed)."""
        if self._writer is not None:
            self._writer.close()
        for seg in self._segments(self.segment_prefix):
            seg.unlink(missing_ok=True)
        for seg in self._segments(str(self.folder / f".{self.repo}.")):
            pid = seg.name[len(self.repo) + 2:].split("-", 1)[0]
            if pid.isdigit() and not _alive(int(pid)):
                seg.unlink(missing_ok=True)

    def _segments(self, prefix: str) -> list[Path]:
        start = Path(prefix)
        try:  # not a glob: a repository name may hold its metacharacters
            names = os.listdir(start.parent)
        except FileNotFoundError:
            return []
        return sorted(start.parent / n for n in names if n.startswith(start.name) and n.endswith(".part"))

    def _write(self, old: set[str], new: set[str]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        # synced before the rename (durable); a killed writer leaves .<repo>.*.tmp
        with replacing(self.path, durable=True, temp_prefix=f".{self.repo}.") as tmp, \
                tmp.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=3, mtime=0) as fh:
            fh.write(orjson.dumps({"kind": _KIND, "version": FACTS_VERSION, "repo": self.repo}) + b"\n")
            if old:
                for line in self._lines():
                    try:
                        path = orjson.loads(line)[0]
                    except (orjson.JSONDecodeError, ValueError, TypeError, IndexError, KeyError):
                        continue
                    if path in old:
                        fh.write(line)
                        old.discard(path)  # a path is written once
            for seg in self._segments(self.segment_prefix):
                with seg.open("rb") as part:
                    for line in part:
                        try:
                            path, digest = orjson.loads(line)[:2]
                        except (orjson.JSONDecodeError, ValueError, TypeError):
                            continue  # the last line of a process that was killed
                        if path in new and self.files[path] == digest:
                            fh.write(line)
                            new.discard(path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's
    return True


class SegmentWriter:
    """Appends the entries one process makes to its segment of a run (opened on
    the first entry). A write that fails (a full disk) turns caching off for the
    rest of the run: those files are parsed again next time."""

    def __init__(self, prefix: str) -> None:
        self.path = Path(f"{prefix}{os.getpid()}.part")
        self._fh: IO[bytes] | None = None
        self._failed = False

    def write(self, path: str, digest: str, facts: FileFacts) -> bool:
        """Append the entry of one file; whether it was written."""
        if self._failed:
            return False
        try:
            line = orjson.dumps([path, digest, facts.language, facts_to_json(facts)]) + b"\n"
        except (Uncacheable, orjson.JSONEncodeError) as exc:
            log.debug("not caching the facts of %s: %s", path, exc)
            return False
        try:
            if self._fh is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0), 0o666)
                self._fh = os.fdopen(fd, "ab")
            self._fh.write(line)
        except OSError as exc:
            log.warning("not caching parsed files any more (%s): %s", self.path, exc)
            self._failed = True
            return False
        return True

    def close(self) -> None:
        """Flush and close (before the process says its last file is parsed)."""
        if self._fh is not None:
            try:
                self._fh.close()
            except OSError as exc:
                log.warning("not caching parsed files (%s): %s", self.path, exc)
            self._fh = None


# -- FileFacts as plain JSON --------------------------------------------------------------------

def facts_to_json(f: FileFacts) -> dict[str, Any]:
    """``f`` without its text, as JSON values (``facts_from_json`` inverts it)."""
    types = _fact_types(f.language)
    return {
        "path": f.path, "language": f.language, "file": _object_row(f.file),
        "objects": [_object_row(o) for o in f.objects], "parents": f.parents,
        "refs": [[r.kind, r.source, r.name, r.line, _pack(r.data, types), r.dynamic] for r in f.refs],
        "namespace": f.namespace, "package_dir": f.package_dir, "package_name": f.package_name,
        "problems": f.problems, "data": _pack(f.data, types),
    }


def facts_from_json(d: dict[str, Any]) -> FileFacts:
    """The facts ``facts_to_json`` wrote (with an empty text); ``ValueError`` or
    ``TypeError`` when they are not of that shape."""
    language = _str(d["language"])
    if language not in LANGUAGES:
        raise ValueError(f"unknown language {language!r}")
    types = _fact_types(language)
    parents = d["parents"]
    if not isinstance(parents, dict) or not all(type(v) is str for v in parents.values()):
        raise ValueError("parents is not a mapping of ids")
    refs = []
    for kind, source, name, line, data, dynamic in d["refs"]:
        if not (type(kind) is str and type(source) is str and type(name) is str and type(line) is int
                and type(dynamic) is bool):
            raise ValueError("malformed reference")
        detail = _unpack(data, types)
        if not (detail is None or isinstance(detail, RefDetail)):
            raise ValueError("malformed reference data")
        refs.append(RawRef(kind, source, name, line, detail, dynamic))
    data = _unpack(d["data"], types)
    problems = d["problems"]
    package_dir = d["package_dir"]
    if not (type(data) is _data_type(language) and isinstance(problems, list)
            and all(type(p) is str for p in problems) and (package_dir is None or type(package_dir) is str)):
        raise ValueError("malformed file facts")
    return FileFacts(
        path=_str(d["path"]), language=language, file=_object(d["file"]), data=data,
        objects=[_object(o) for o in d["objects"]], parents=parents, refs=refs,
        namespace=_str(d["namespace"]), package_dir=package_dir, package_name=_str(d["package_name"]),
        problems=problems,
    )


def _made_by(walked: str, language: str) -> bool:
    """Whether extracting a file the walk names ``walked`` may give facts of
    ``language``: the same language, or another of its family."""
    if walked == language:
        return True
    asked, made = LANGUAGES.get(walked), LANGUAGES.get(language)
    return asked is not None and made is not None and asked.family == made.family


@cache
def _fact_types(language: str) -> dict[str, type]:
    """The classes an entry of ``language`` may hold, by name."""
    return {t.__name__: t for t in LANGUAGES[language].fact_types()}


def _data_type(language: str) -> type:
    """The class of ``FileFacts.data`` of ``language`` (the first of its fact types)."""
    return next(iter(_fact_types(language).values()))


def _str(v: Any) -> str:
    if type(v) is not str:
        raise ValueError(f"expected a string, not {type(v).__name__}")
    return v


def _object_row(o: CodeObject) -> list[Any]:
    return [getattr(o, f) for f in _OBJECT_FIELDS]


def _object(row: list[Any]) -> CodeObject:
    if len(row) != len(_OBJECT_TYPES) or not all(type(v) is t for v, t in zip(row, _OBJECT_TYPES)):
        raise ValueError("malformed code object")
    return CodeObject(*row)


def _pack(x: Any, types: Mapping[str, type]) -> Any:
    """``x`` as JSON values: tuples, sets, dicts whose keys are not all plain
    strings and facts of ``types`` (by class name and fields in order) as
    one-key tagged dicts (``_unpack`` inverts it)."""
    t = type(x)
    if t is str or t is int or t is bool or x is None:
        return x
    if t is float:
        if not math.isfinite(x):
            raise Uncacheable(f"non-finite float {x!r}")
        return x
    if t is list:
        return [_pack(v, types) for v in x]
    if t is dict:
        if all(type(k) is str and not k.startswith(_TAG) for k in x):
            return {k: _pack(v, types) for k, v in x.items()}
        return {_TAG + "d": [[_pack(k, types), _pack(v, types)] for k, v in x.items()]}
    if t is tuple:
        return {_TAG + "t": [_pack(v, types) for v in x]}
    if t is set:
        return {_TAG + "s": [_pack(v, types) for v in x]}
    if t is frozenset:
        return {_TAG + "f": [_pack(v, types) for v in x]}
    if types.get(t.__name__) is t:
        _, values = x.__reduce__()  # a Fact's fields, in order
        return {_TAG + "o": [t.__name__, *[_pack(v, types) for v in values]]}
    raise Uncacheable(f"a {t.__name__} in the extracted facts")


def _unpack(x: Any, types: Mapping[str, type]) -> Any:
    """The value ``_pack`` gave ``x`` of; a fact only of ``types``."""
    t = type(x)
    if t is list:
        return [_unpack(v, types) if type(v) in _NESTED else v for v in x]
    if t is not dict:
        return x
    if len(x) == 1:
        (k, v), = x.items()
        if k.startswith(_TAG):
            if type(v) is not list:
                raise ValueError("malformed tagged value")
            if k == _TAG + "o":
                if not v or type(v[0]) is not str or v[0] not in types:
                    raise ValueError(f"not a fact of this language: {str(v[0])[:40] if v else ''!r}")
                return types[v[0]](*[_unpack(i, types) if type(i) in _NESTED else i for i in v[1:]])
            items = [_unpack(i, types) for i in v]
            if k == _TAG + "t":
                return tuple(items)
            if k == _TAG + "s":
                return set(items)
            if k == _TAG + "f":
                return frozenset(items)
            if k == _TAG + "d":
                return {key: val for key, val in items}
            raise ValueError(f"unknown tag {k!r}")
    return {k: _unpack(v, types) if type(v) in _NESTED else v for k, v in x.items()}


#: what ``_unpack`` has to look into (anything else JSON gives is as it was written)
_NESTED = (list, dict)
