"""Index one repository into a ``GraphStore``: walk, cache, parse, build, resolve,
write, report.

Parsing and resolution run on the executor the caller passes
(``vitalrag.ingest.parallel``): this process by default, or a ``ParsePool`` the
caller keeps for as many runs as it likes. Nothing is written
until every file has been parsed and resolved, so a run that fails leaves the
store as it was.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vitalrag.errors import EmptyRepository, InputError, RepositoryNotFound
from vitalrag.graph.delta import write_repository
from vitalrag.graph.store import GraphStore
from vitalrag.ingest.build import build_graph, tests_edges
from vitalrag.ingest.cache import FACTS_VERSION, FactsCache, file_digest
from vitalrag.ingest.facts import FileFacts
from vitalrag.ingest.content import DEFAULT_CONTENT, check_content, handler
from vitalrag.ingest.parallel import InProcess, ParseExecutor, ParsePool
from vitalrag.ingest.parse import CacheTarget, source_text
from vitalrag.ingest.walk import DEFAULT_MAX_BYTES, Skipped, SourceFile, WalkResult, walk_repository
from vitalrag.kernel.progress import Progress
from vitalrag.model import CodeObject, Edge, NodeId, UnresolvedRef, merge_edges


@dataclass(slots=True)
class IndexReport:
    repo: str
    root: str
    files: int = 0
    loc: int = 0
    objects: dict[str, int] = field(default_factory=dict)
    edges: dict[str, int] = field(default_factory=dict)
    unresolved: int = 0
    external: int = 0
    skipped: list[Skipped] = field(default_factory=list)
    seconds: float = 0.0
    #: files parsed in this run, and files whose cached extraction was reused
    parsed: int = 0
    reused: int = 0
    #: what was written to the store (see vitalrag.graph.delta)
    delta: dict[str, int] = field(default_factory=dict)
    #: seconds per step, in order: walk (and the facts cache's lookups), parse (and
    #: extraction), graph (grouping, packages, CONTAINS), resolve (with TESTS and the
    #: merge of edges), write (to the store), save (to disk, and the facts cache)
    phases: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "repo": self.repo, "root": self.root, "files": self.files, "loc": self.loc,
            "objects": self.objects, "edges": self.edges, "unresolved": self.unresolved,
            "external": self.external, "skipped": [s.to_dict() for s in self.skipped],
            "seconds": round(self.seconds, 3), "parsed": self.parsed, "reused": self.reused,
            "changes": self.delta, "phases": {k: round(v, 4) for k, v in self.phases.items()},
        }


@dataclass(slots=True)
class Survey:
    """A repository's files, the ones passed over, and every file's content digest:
    what an index run reads before it parses anything, and enough to tell that
    nothing changed since an earlier run (``fingerprint``). The digests are taken
    on first use (an index run without a facts cache needs none)."""

    root: Path
    repo: str
    max_bytes: int
    walked: WalkResult
    _digests: dict[str, str] | None = None
    #: what the walk took in (``ingest.content``)
    content: str = DEFAULT_CONTENT

    @property
    def digests(self) -> dict[str, str]:
        """path -> blake2b of the file's bytes (absent: it could not be read)."""
        if self._digests is None:
            digests: dict[str, str] = {}
            for sf in self.walked.files:
                try:
                    digests[sf.path] = file_digest(Path(sf.abspath).read_bytes())
                except OSError:
                    continue  # parse_file reports why it cannot be read
            self._digests = digests
        return self._digests

    def fingerprint(self, **options: Any) -> str:
        """A digest of the files, their contents, what was passed over and why, the
        extraction's version (``FACTS_VERSION``, which names vitalrag's) and
        ``options`` (what else the run's output depends on)."""
        h = hashlib.blake2b(digest_size=16)
        h.update(repr((FACTS_VERSION, str(self.root), self.repo, self.max_bytes, self.content,
                       sorted(options.items()))).encode())
        for f in self.walked.files:
            h.update(f"{f.path}\0{f.language}\0{self.digests.get(f.path, '-')}\n".encode())
        for sk in self.walked.skipped:
            h.update(f"{sk.path}\0{sk.reason}\n".encode())
        return h.hexdigest()


def survey(root: str | os.PathLike[str], *, name: str | None = None,
           max_bytes: int = DEFAULT_MAX_BYTES, content: str = DEFAULT_CONTENT) -> Survey:
    """Walk the repository at ``root`` for the files an index of ``content`` takes
    (``ingest.content``; nothing is read yet: see ``Survey.digests``)."""
    check_content(content)
    root_path = Path(root)
    if not root_path.is_dir():
        raise RepositoryNotFound(f"repository path {root} "
                                 + ("is not a folder" if root_path.exists() else "does not exist"))
    root_path = root_path.resolve()
    repo = _validate_name(name or root_path.name)
    walked = walk_repository(root_path, max_bytes=max_bytes, content=content)
    if not walked.files:
        what = {"code": "source files", "docs": "documentation files"}.get(content, "files")
        raise EmptyRepository(f"no {what} to index under {root} ({len(walked.skipped)} skipped)")
    return Survey(root_path, repo, max_bytes, walked, content=content)


def index_repository(
    root: str | os.PathLike[str],
    store: GraphStore,
    *,
    name: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    workers: int | None = None,
    progress: Progress | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    executor: ParseExecutor | None = None,
    surveyed: Survey | None = None,
    content: str = DEFAULT_CONTENT,
) -> IndexReport:
    """Index the repository at ``root`` into ``store``, replacing an earlier index of it.

    Files are parsed on ``executor`` (default: this process); ``workers`` > 1
    without one parses on a ``ParsePool`` of that many processes, for this call.
    With ``cache_dir``, files whose content is unchanged since the last run are
    not parsed again (their extraction is cached there); the whole repository is
    still resolved again, and only the difference is written to the store, so
    the result equals a clean rebuild. ``surveyed``: the walk of ``root`` made by
    the caller (``survey``), not made again. ``content``: what is indexed, ``all``
    (code, documentation, config, SQL, build files, source without a parser),
    ``code`` or ``docs`` (``ingest.content``).
    """
    if executor is None and workers is not None and workers > 1:
        with ParsePool(workers) as pool:
            return index_repository(root, store, name=name, max_bytes=max_bytes, progress=progress,
                                    cache_dir=cache_dir, executor=pool, surveyed=surveyed, content=content)
    started = time.perf_counter()
    phases: dict[str, float] = {}

    def phase(step: str) -> None:
        phases[step] = time.perf_counter() - started - sum(phases.values())

    found = surveyed or survey(root, name=name, max_bytes=max_bytes, content=content)
    root_path, repo, walked = found.root, found.repo, found.walked
    executor = executor or InProcess()
    cache = FactsCache(cache_dir, repo) if cache_dir is not None else None
    try:
        digests = dict(found.digests) if cache is not None else {}
        run = _parse_and_resolve(repo, walked, executor, cache, digests, progress, phase)
        # Only now touch the store: everything above can fail without losing the old index.
        delta = write_repository(
            store, repo, run.objects, run.edges, run.unresolved, run.sources,
            {"root": str(root_path), "indexed_at": time.time(), "max_bytes": max_bytes,
             "content": found.content},
        )
        phase("write")
        store.save()
        if cache is not None:
            cache.save(run.paths)
        phase("save")
    except BaseException:
        if cache is not None:
            cache.discard()  # this run's segments
        raise

    return IndexReport(
        repo=repo, root=str(root_path), files=len(run.paths), loc=run.loc,
        objects=dict(sorted(Counter(o.kind for o in run.objects).items())),
        edges=dict(sorted(Counter(e.kind for e in run.edges).items())),
        unresolved=len(run.unresolved), external=run.external,
        skipped=sorted(run.skipped, key=lambda s: (s.path, s.reason)),
        seconds=time.perf_counter() - started, parsed=run.parsed, reused=run.reused,
        delta=delta.to_dict(), phases=phases,
    )


@dataclass(slots=True)
class _Resolved:
    """What a run keeps of its files once they are parsed and resolved. Their
    facts, most of the objects a run makes, end with the step that read them,
    not with the run (a collection would scan them all again while it writes)."""

    objects: list[CodeObject]
    edges: list[Edge]
    #: one per key, in key order
    unresolved: list[UnresolvedRef]
    external: int
    #: file id -> its text
    sources: dict[NodeId, str]
    paths: set[str]
    loc: int
    skipped: list[Skipped]
    parsed: int
    reused: int


def _parse_and_resolve(repo: str, walked: WalkResult, executor: ParseExecutor, cache: FactsCache | None,
                       digests: dict[str, str], progress: Progress | None,
                       phase: Callable[[str], None]) -> _Resolved:
    """Parse (or take from ``cache``), build and resolve the walked files."""
    todo, reused = _split_by_cache(walked.files, cache, digests)
    phase("walk")
    tick = _counter(progress, "parse", len(todo))
    target = CacheTarget(cache.segment_prefix, digests) if cache is not None else None
    parsed = executor.parse(repo, todo, target, tick)
    if cache is not None:
        for p, cached in parsed:
            if cached:
                cache.record(p.path, digests[p.path])
    phase("parse")

    facts = sorted(reused + [p for p, _ in parsed if isinstance(p, FileFacts)], key=lambda f: f.path)
    skipped = list(walked.skipped) + [p for p, _ in parsed if isinstance(p, Skipped)]
    skipped.extend(Skipped(f.path, problem) for f in facts for problem in f.problems)
    by_family: dict[str, list[FileFacts]] = {}
    for f in facts:
        by_family.setdefault(handler(f.language).family, []).append(f)
    for family, group in sorted(by_family.items()):
        # a language may need to see every file before packages are known (Python's __init__.py)
        handler(family).prepare(repo, group)
    objects, edges = build_graph(repo, facts)
    phase("graph")

    unresolved: list[UnresolvedRef] = []
    external = 0
    for i, (family, group) in enumerate(sorted(by_family.items()), 1):
        res = executor.resolve(handler(family).resolver(repo, group), group)
        edges.extend(res.edges)
        unresolved.extend(res.unresolved)
        external += res.external
        if progress:
            progress("resolve", i, len(by_family))
    edges.extend(tests_edges(objects, edges))
    refs = {u.key: u for u in sorted(unresolved, key=lambda u: (u.key, u.reason))}
    run = _Resolved(objects, merge_edges(edges), [refs[k] for k in sorted(refs)], external,
                    {f.file.id: f.text for f in facts}, {f.path for f in facts},
                    sum(f.file.end_line for f in facts), skipped, len(todo), len(reused))
    phase("resolve")
    return run


def _split_by_cache(files: list[SourceFile], cache: FactsCache | None, digests: dict[str, str]
                    ) -> tuple[list[SourceFile], list[FileFacts]]:
    """Files to parse, and cached facts of unchanged files. A file that changed since
    its digest was taken loses its digest (its facts are not cached this run)."""
    if cache is None:
        return list(files), []
    wanted: dict[str, tuple[str, str, str]] = {}
    for sf in files:
        digest = digests.get(sf.path)
        try:
            raw = Path(sf.abspath).read_bytes()
        except OSError:
            continue  # parse_file reports why it cannot be read
        if digest is None or file_digest(raw) != digest:
            digests.pop(sf.path, None)  # changed since the survey: parsed, not cached
            continue
        try:
            wanted[sf.path] = (digest, sf.language, source_text(raw))
        except UnicodeDecodeError:
            continue  # nor is it cached
    hits = cache.lookup(wanted)
    del wanted
    todo = [sf for sf in files if sf.path not in hits]
    reused = [hits[sf.path] for sf in files if sf.path in hits]
    return todo, reused


def _counter(progress: Progress | None, stage: str, total: int) -> Callable[[int], None] | None:
    """``progress(stage, done, total)`` as a tick of how many more are done."""
    if progress is None:
        return None
    done = 0

    def tick(n: int) -> None:
        nonlocal done
        done += n
        progress(stage, done, total)

    return tick


def _validate_name(name: str) -> str:
    if not name or ":" in name or "/" in name or name.strip() != name:
        raise InputError(f"invalid repository name {name!r}: use letters, digits, '-', '_' or '.'")
    return name
