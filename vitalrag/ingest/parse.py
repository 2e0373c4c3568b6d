"""Read and extract files: the parse step, the same in this process and in a
worker of a ``ParsePool`` (``vitalrag.ingest.parallel``).

Every failure of one file becomes a ``Skipped`` with its reason; nothing a file
holds aborts a run, stalls it or makes its memory grow faster than the file:

- a line longer than ``MAX_LINE_CHARS`` (a minified bundle, an inlined blob) is
  skipped before it is parsed: every object on a line would get all of it as its body;
- an extraction has ``PARSE_SECONDS`` per megabyte (at least that), then the file
  is skipped; definitions nested deeper than ``limits.MAX_NESTING`` are skipped;
- a file whose objects' lines add up to more than ``MAX_COVER`` times its text
  (with ``COVER_SLACK`` characters more) is skipped: its views would copy it as often.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path

from vitalrag.ingest.cache import SegmentWriter
from vitalrag.ingest.facts import FileFacts
from vitalrag.ingest.content import handler
from vitalrag.ingest.lang.limits import Deadline, Unindexable
from vitalrag.ingest.walk import Skipped, SourceFile
from vitalrag.model import normalize_newlines

log = logging.getLogger(__name__)

#: a file's facts (or why it was skipped), and whether its facts-cache entry was written
Parsed = tuple[FileFacts | Skipped, bool]

#: seconds one file's extraction may take per megabyte of source (and for a smaller
#: file); a file that takes longer is skipped
PARSE_SECONDS = 10.0
#: a file with a longer line is skipped as minified (written code stays far below)
MAX_LINE_CHARS = 5_000
#: the lines of a file's objects may add up to this many times its text (plus
#: ``COVER_SLACK`` characters, for small files of one-line members); written code
#: stays below 4 (a method's lines count for it and its class)
MAX_COVER = 16
COVER_SLACK = 64_000


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


def parse_file(repo: str, sf: SourceFile, seconds: float | None = PARSE_SECONDS) -> FileFacts | Skipped:
    """Read and extract one file; every failure becomes a ``Skipped`` with its
    reason. ``seconds``: the time it may take per megabyte (None: no limit)."""
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
    widths = [len(line) for line in source.split("\n")]
    longest = max(widths)
    if longest > MAX_LINE_CHARS:
        return Skipped(sf.path, f"minified (longest line {longest} chars)")
    budget = seconds * max(1.0, len(raw) / 1_000_000) if seconds is not None else None
    try:
        facts = handler(sf.language).extract(repo, sf.path, source, Deadline(budget))
    except Unindexable as exc:
        return Skipped(sf.path, exc.reason)
    except RecursionError:
        return Skipped(sf.path, "too deeply nested to parse")
    except Exception as exc:  # a bug in one extractor must not abort the run
        log.exception("extractor failed on %s", sf.path)
        return Skipped(sf.path, f"extractor error: {type(exc).__name__}: {exc}")
    covered = cover(facts, widths)
    if covered > MAX_COVER * len(source) + COVER_SLACK:
        return Skipped(sf.path, f"objects cover its text {covered / len(source):.0f} times over "
                                "(nested deep or sharing long lines)")
    return facts


def cover(facts: FileFacts, widths: list[int]) -> int:
    """How many characters the lines of ``facts``' objects hold, added up (what
    their body views copy); ``widths``: the length of each line of the file."""
    ends = list(accumulate((w + 1 for w in widths), initial=0))  # line i starts at ends[i - 1]
    last = len(widths)
    return sum(ends[min(o.end_line, last)] - ends[min(o.start_line, last) - 1] for o in facts.objects)


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
