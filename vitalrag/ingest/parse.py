"""Read and extract files: the parse step, the same in this process and in a
worker of a ``ParsePool`` (``vitalrag.ingest.parallel``).

Every failure of one file becomes a ``Skipped`` with its reason; nothing a file
holds aborts a run.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from vitalrag.ingest.cache import SegmentWriter
from vitalrag.ingest.facts import FileFacts
from vitalrag.ingest.lang import REGISTRY
from vitalrag.ingest.walk import Skipped, SourceFile
from vitalrag.model import normalize_newlines

log = logging.getLogger(__name__)

#: a file's facts (or why it was skipped), and whether its facts-cache entry was written
Parsed = tuple[FileFacts | Skipped, bool]


@dataclass(frozen=True, slots=True)
class CacheTarget:
    """Where a parse writes the facts-cache entries of the files it parsed: a
    segment of this run (``FactsCache.segment_prefix``), for the files whose
    content digest is given (path -> digest)."""

    prefix: str
    digests: dict[str, str] = field(default_factory=dict)

    def of(self, files: Sequence[SourceFile]) -> CacheTarget:
        """The target for some of the files (what a worker is sent with them)."""
        return CacheTarget(self.prefix, {sf.path: self.digests[sf.path] for sf in files if sf.path in self.digests})


def parse_file(repo: str, sf: SourceFile) -> FileFacts | Skipped:
    """Read and extract one file; every failure becomes a ``Skipped`` with its reason."""
    try:
        raw = Path(sf.abspath).read_bytes()
    except OSError as exc:
        return Skipped(sf.path, f"unreadable: {exc.strerror or exc}")
    if b"\0" in raw[:8192]:
        return Skipped(sf.path, "binary content under a source extension")
    try:
        source = source_text(raw)
    except UnicodeDecodeError as exc:
        return Skipped(sf.path, f"not UTF-8 (invalid byte at offset {exc.start})")
    try:
        return REGISTRY[sf.language].extract(repo, sf.path, source)
    except RecursionError:
        return Skipped(sf.path, "too deeply nested to parse")
    except Exception as exc:  # a bug in one extractor must not abort the run
        log.exception("extractor failed on %s", sf.path)
        return Skipped(sf.path, f"extractor error: {type(exc).__name__}: {exc}")


def source_text(raw: bytes) -> str:
    """The text extraction sees of a file's bytes (``UnicodeDecodeError`` when
    they are not UTF-8): no byte-order mark, LF line breaks."""
    source = raw.decode("utf-8")
    if source.startswith("\ufeff"):
        source = source[1:]
    return normalize_newlines(source)  # a CR-only file would be one line to tree-sitter


def parse_files(repo: str, files: Sequence[SourceFile], cache: CacheTarget | None = None,
                tick: Callable[[int], None] | None = None) -> list[Parsed]:
    """Parse ``files`` in order, writing their cache entries to this process's
    segment of ``cache`` (closed before returning, so the entries are on disk
    when the caller records them); ``tick(1)`` after each file."""
    writer = SegmentWriter(cache.prefix) if cache is not None else None
    out: list[Parsed] = []
    try:
        for sf in files:
            facts = parse_file(repo, sf)
            digest = cache.digests.get(sf.path) if cache is not None else None
            cached = (writer is not None and digest is not None and isinstance(facts, FileFacts)
                      and writer.write(sf.path, digest, facts))
            out.append((facts, cached))
            if tick is not None:
                tick(1)
    finally:
        if writer is not None:
            writer.close()
    return out
