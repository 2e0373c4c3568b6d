"""Index one repository into a ``GraphStore``: walk, parse (both cores), resolve, write.

Nothing is written until every file has been parsed and resolved, so a run
that fails early leaves the store as it was.
"""

from __future__ import annotations

import atexit
import gc
import importlib
import logging
import multiprocessing
import os
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from queue import Empty
from typing import Any

from vitalrag.errors import EmptyRepository, InputError, RepositoryNotFound
from vitalrag.graph.delta import write_repository
from vitalrag.graph.store import GraphStore
from vitalrag.ingest.cache import FactsCache, SegmentWriter, file_digest
from vitalrag.ingest.facts import FileFacts, Resolution, combine
from vitalrag.ingest.languages import language_family
from vitalrag.ingest.walk import DEFAULT_MAX_BYTES, Skipped, SourceFile, walk_repository
from vitalrag.model import (
    CodeObject,
    Edge,
    UnresolvedRef,
    merge_edges,
    module_id,
    normalize_newlines,
    repository_id,
)
from vitalrag.runtime import gc_paused

log = logging.getLogger(__name__)

Progress = Callable[[str, int, int], None]

#: language -> module with ``extract(repo, path, text) -> FileFacts``, an optional
#: ``prepare(repo, facts)`` run on all of a language's files before the graph is
#: built, and ``resolve(repo, facts) -> Resolution``
_LANGUAGE_MODULES = {
    "python": "vitalrag.ingest.python",
    "java": "vitalrag.ingest.java",
}
_GENERIC = "vitalrag.ingest.generic"

#: below this many bytes of source, parsing in-process beats starting a worker
_PARALLEL_MIN_BYTES = 64 * 1024
#: fixed cost of one file in bytes-equivalent, for sharing files out
_FILE_COST = 2048
#: below this many references, resolving on one process beats forking resolve workers
_PARALLEL_MIN_REFS = 8000


def language_module(language: str) -> Any:
    return importlib.import_module(_LANGUAGE_MODULES.get(language, _GENERIC))


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
    #: extraction), graph (grouping, the workers' resolve requests, packages,
    #: CONTAINS), resolve (with TESTS and the merge of edges), write (to the store),
    #: save (to disk, and the facts cache)
    phases: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "repo": self.repo,
            "root": self.root,
            "files": self.files,
            "loc": self.loc,
            "objects": self.objects,
            "edges": self.edges,
            "unresolved": self.unresolved,
            "external": self.external,
            "skipped": [s.to_dict() for s in self.skipped],
            "seconds": round(self.seconds, 3),
            "parsed": self.parsed,
            "reused": self.reused,
            "changes": self.delta,
            "phases": {k: round(v, 4) for k, v in self.phases.items()},
        }


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
        return language_module(sf.language).extract(repo, sf.path, source)
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


#: how long to wait for the claim counter's lock, held for microseconds at a time;
#: past it the holder is taken to have died with it
_CLAIM_TIMEOUT = 10.0


def _claim(claim: Any) -> int | None:
    """The index of the next unparsed file (files are ordered largest first), or
    None when the counter's lock cannot be had (a worker was killed holding it)."""
    lock = claim.get_lock()
    if not lock.acquire(timeout=_CLAIM_TIMEOUT):
        return None
    try:
        i: int = claim.value
        claim.value = i + 1
    finally:
        lock.release()
    return i


#: how often a waiting worker checks that the process it works for is alive, seconds
_PARENT_CHECK = 1.0


def _recv_from_parent(conn: Any, parent: int | None) -> Any:
    """``conn.recv()`` in a worker, which also ends (``EOFError``) when the process
    that started it is gone: a sibling worker forked later holds this pipe's
    other end too, so its closing alone would not be seen."""
    if parent is not None:
        while not conn.poll(_PARENT_CHECK):
            if os.getppid() != parent:
                raise EOFError("the main process is gone")
    return conn.recv()


def _pool_worker(claim: Any, results: Any, conn: Any, wid: int) -> None:
    """A parse worker of a ``_ParsePool``: one run of ``_worker_main`` per job
    received on ``conn`` (``(repo, files, budget, cache)``), until ``None``
    comes instead of a job, the pipe closes or the main process is gone."""
    gc.disable()  # see vitalrag.runtime.gc_paused; collected between runs instead
    gc.freeze()  # what was inherited is never garbage here: never scan it
    parent = os.getppid()
    while True:
        try:
            job = _recv_from_parent(conn, parent)
        except (EOFError, OSError):
            results.cancel_join_thread()  # nobody reads what is left: do not wait to flush it
            return
        if job is None:
            return
        repo, files, budget, cache = job
        _worker_main(repo, files, claim, results, budget, wid, conn, cache, parent)
        gc.collect()


def _worker_main(repo: str, files: list[SourceFile], claim: Any, results: Any, budget: int, wid: int,
                 conn: Any, cache: tuple[str, dict[str, str]] | None, parent: int | None) -> None:
    """One run of a parse worker: claim and parse files until none are left,
    sending ``(wid, [(index, facts, flags), ...])`` batches of about ``budget``
    bytes, then ``(wid, None)``; then resolve its own files' references for the
    languages the main process asks on ``conn`` (``_serve_resolution``).

    With ``cache`` (the facts cache's segment prefix and the files' digests) it
    writes its files' cache entries itself (flag ``_CACHED``), to a segment
    closed before it says it is done. Facts of a language the
    workers resolve (one with ``index_view``) travel without the references
    resolved here (flag ``_STRIPPED``): only what the index needs of them."""
    batch: list[tuple[int, FileFacts | Skipped, int]] = []
    own: list[FileFacts] = []
    size = 0
    writer = SegmentWriter(cache[0]) if cache is not None else None
    while (i := _claim(claim)) is not None and i < len(files):
        facts = parse_file(repo, files[i])
        flags = 0
        if isinstance(facts, FileFacts):
            own.append(facts)
            if cache is not None and writer is not None and facts.path in cache[1]:
                if writer.write(facts.path, cache[1][facts.path], facts):
                    flags |= _CACHED
            module = language_module(facts.language)
            if _resolved_by_workers(module):
                # the rest of the references are resolved here: only what the index needs travels
                facts = replace(facts, refs=[r for r in facts.refs if r.kind in module.INDEX_REF_KINDS])
                flags |= _STRIPPED
        batch.append((i, facts, flags))
        size += files[i].size + _FILE_COST
        if size >= budget:
            results.put((wid, batch))  # pickled and written by the queue's thread while parsing goes on
            batch, size = [], 0
    if writer is not None:
        writer.close()  # before the last batch: the main process reads the segment after it
    if batch:
        results.put((wid, batch))
    results.put((wid, None))
    _serve_resolution(repo, own, conn, parent)


#: flags of a file a parse worker sends: it wrote the cache entry; its facts lack the calls and type uses
_CACHED, _STRIPPED = 1, 2


def _serve_resolution(repo: str, own: list[FileFacts], conn: Any, parent: int | None) -> None:
    """A parse worker after the parse: given ``{language: views}`` (the
    ``index_view`` of every file of that language this worker did not parse),
    resolve the references of its own files of those languages and send back
    ``{language: [(path, edge rows, unresolved rows, external), ...]}``, one
    request and one answer (so neither side ever blocks writing while the other
    does); then wait for ``None``, the end of the run. ``None`` may also come
    instead of a request (nothing to resolve here)."""
    try:
        request = _recv_from_parent(conn, parent)
        if request is None:
            return
        answer: dict[str, list[tuple[str, list[Any], list[Any], int]]] = {}
        for language, views in request.items():
            mine = [f for f in own if language_family(f.language) == language]
            group = sorted(mine + views, key=lambda f: f.path)
            done = language_module(language).resolve_each(repo, group, mine)
            answer[language] = [(f.path, *r.rows()) for f, r in zip(mine, done)]
        conn.send(answer)
        _recv_from_parent(conn, parent)  # None: the run is over
    except (EOFError, OSError):
        pass  # the main process is gone (the next recv ends the worker)


def _resolved_by_workers(module: Any) -> bool:
    """Whether a language's parse workers resolve the files they parsed: its
    module has ``resolve_each``, ``index_view`` and ``INDEX_REF_KINDS`` (the raw
    references its index is built from)."""
    return all(hasattr(module, a) for a in ("resolve_each", "index_view", "INDEX_REF_KINDS"))


class _ParsePool:
    """Parse worker processes kept between runs, each serving one run at a time
    (``_pool_worker``).

    Started by the first run that parses in parallel and kept for this
    process's later runs (``_acquire_pool``): a re-index, a watch, an
    evaluation over many repositories pay the start once. Kept workers matter
    beyond their start: right after a fork, every page the two processes share
    is copied on the first write to it, which made parsing the largest file of
    a small repository a third slower in this process and in the worker alike
    (``bench/ingest.py`` prints the first run apart). A worker inherits this
    process as it was when the pool started, and keeps that memory alive: a
    process past ``_KEEP_MAX_RSS`` keeps none (each run starts its own), and
    ``start_workers`` starts them early, while the process is small.

    A run that fails, loses a worker or finds its file counter stuck leaves the
    pool ``broken``: it is closed, and the next run starts a new one.
    """

    def __init__(self, n: int, shared: bool) -> None:
        ctx: Any = _worker_context()  # a concrete context (BaseContext has no Process in typeshed)
        self.n = n
        self.shared = shared
        self.pid = os.getpid()
        self.broken = False
        self.claim = ctx.Value("l", 0)
        self.queue = ctx.Queue()
        pipes = [ctx.Pipe() for _ in range(n)]
        self.procs = [ctx.Process(target=_pool_worker, args=(self.claim, self.queue, pipes[k][1], k),
                                  daemon=True, name=f"vitalrag-parse-{k}") for k in range(n)]
        self.conns = [parent_end for parent_end, _ in pipes]
        try:
            for proc in self.procs:
                proc.start()
        except BaseException:
            self.broken = True
            self.close()
            raise
        finally:
            for _, child_end in pipes:
                child_end.close()  # the workers' ends: a worker that dies then reads as EOF here

    def usable(self, n: int) -> bool:
        """Whether a run on ``n`` workers can use this pool as it is."""
        return (not self.broken and self.n == n and self.pid == os.getpid()
                and all(proc.is_alive() for proc in self.procs))

    def start(self, repo: str, files: list[SourceFile], budget: int,
              cache: tuple[str, dict[str, str]] | None) -> list[int]:
        """Start a run: the file counter back to 0, and the job to every worker;
        the numbers of the workers that took it."""
        with self.claim.get_lock():
            self.claim.value = 0
        started = []
        for k, conn in enumerate(self.conns):
            try:
                conn.send((repo, files, budget, cache))
            except (OSError, ValueError):
                self.broken = True  # the worker is gone: the others and this process parse its share
                continue
            started.append(k)
        return started

    def close(self) -> None:
        """Stop the workers: asked to at once when the pool is sound, else killed."""
        for conn in self.conns:
            try:
                if not self.broken:
                    conn.send(None)
            except (OSError, ValueError):
                pass
            conn.close()
        self.conns = []
        _reap([proc for proc in self.procs if proc.pid is not None], wait=0 if self.broken else 2.0)
        self.queue.close()
        self.queue.cancel_join_thread()


#: the pool later runs reuse (``_acquire_pool``), held by one run at a time
_POOL: _ParsePool | None = None
_POOL_LOCK = threading.Lock()
#: workers forked from a process larger than this (resident bytes) are not kept: a
#: kept worker would hold on to that memory (what this process rewrites is then
#: copied) for as long as the process lives
_KEEP_MAX_RSS = 1 << 30


def _resident_bytes() -> int:
    """This process's resident set now (Linux), else its peak so far."""
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024  # bytes on macOS, KiB elsewhere


def _acquire_pool(n: int) -> _ParsePool:
    """The kept pool of ``n`` workers, started now if there is none or it cannot
    serve; a pool of its own, closed after the run, while another thread's run
    holds the kept one or when this process is too large to keep workers of
    (``_KEEP_MAX_RSS``)."""
    global _POOL
    if not _POOL_LOCK.acquire(blocking=False):
        return _ParsePool(n, shared=False)
    try:
        if _POOL is not None and not _POOL.usable(n):
            if not all(proc.is_alive() for proc in _POOL.procs):
                _POOL.broken = True  # a worker died between runs
            _POOL.close()
            _POOL = None
        keep = _POOL is not None or _resident_bytes() <= _KEEP_MAX_RSS
        if keep and _POOL is None:
            _POOL = _ParsePool(n, shared=True)
    except BaseException:
        _POOL_LOCK.release()
        raise
    if not keep:
        _POOL_LOCK.release()
        return _ParsePool(n, shared=False)  # workers for this run only
    assert _POOL is not None
    return _POOL


def _release_pool(pool: _ParsePool, ok: bool) -> None:
    """The end of a run: the pool is kept if the run went well, else closed."""
    global _POOL
    if not ok:
        pool.broken = True
    if not pool.shared:
        pool.close()
        return
    try:
        if not pool.usable(pool.n):
            pool.close()
            if _POOL is pool:
                _POOL = None
    finally:
        _POOL_LOCK.release()


def start_workers(workers: int | None = None) -> None:
    """Start the parse workers that runs of ``index_repository(..., workers=workers)``
    will use, now: best at a command's start, while this process is small and
    has one thread (a store loaded or a progress bar started later is then not
    what the workers inherit, nor what a fork would make this process copy on
    write during the run). The extractors are imported first, to be inherited."""
    n = _n_workers(workers)
    if n <= 1 or _resident_bytes() > _KEEP_MAX_RSS:
        return  # no workers, or none that would be kept
    for module in {*_LANGUAGE_MODULES.values(), _GENERIC}:
        importlib.import_module(module)
    pool = _acquire_pool(n - 1)
    _release_pool(pool, ok=True)


def _n_workers(workers: int | None) -> int:
    """Processes a run uses: ``workers``, else up to 2 (one per core)."""
    return workers if workers is not None else min(2, os.cpu_count() or 1)


def shutdown_workers() -> None:
    """Stop the kept parse workers (also done at exit); the next run starts new ones."""
    global _POOL
    if not _POOL_LOCK.acquire(timeout=5.0):
        return  # a run holds them still (a daemon thread's, at exit): multiprocessing ends them
    try:
        if _POOL is not None:
            _POOL.close()
        _POOL = None
    finally:
        _POOL_LOCK.release()


def worker_pids() -> list[int]:
    """The process ids of the kept parse workers (none before a parallel run)."""
    pool = _POOL
    return [proc.pid for proc in pool.procs] if pool is not None and pool.pid == os.getpid() else []


def _forget_pool_in_child() -> None:
    """A forked child has no workers of its own (its parent's are not its children)."""
    global _POOL, _POOL_LOCK
    _POOL = None
    _POOL_LOCK = threading.Lock()


atexit.register(shutdown_workers)
os.register_at_fork(after_in_child=_forget_pool_in_child)


class _Workers:
    """One run's use of the parse workers (a ``_ParsePool``), which stay after
    the parse to resolve the references of the files each one parsed
    (``_serve_resolution``).

    The main process sends a worker the ``index_view`` of every file it did not
    parse (small: declarations, imports, supertypes), so both sides resolve in
    parallel, each over the whole repository's index, and only result rows come
    back. A worker that is gone has its files resolved in the main process.
    """

    def __init__(self, pool: _ParsePool, sources: dict[str, SourceFile]) -> None:
        self.pool = pool
        self.sources = sources  # path -> the file, to parse again what a gone worker did not resolve
        self.owner: dict[str, int] = {}  # path -> number of the worker that parsed it
        self.stripped: set[str] = set()  # paths whose facts came without their calls and type uses
        self.cached: set[str] = set()  # paths whose cache entry the worker wrote
        #: worker number -> language -> paths it was asked to resolve
        self.asked: dict[int, dict[str, list[str]]] = {}
        #: language -> path -> what a worker resolved (``collect``)
        self.results: dict[str, dict[str, Resolution]] | None = None
        self.finished = False

    def ask(self, groups: dict[str, tuple[list[FileFacts], Callable[[FileFacts], FileFacts]]]) -> None:
        """Send each worker, for every language (its files and its ``index_view``)
        of which it parsed some files, the views of the other files."""
        views: dict[str, FileFacts] = {}  # made once, for every worker that needs it
        for wid in range(len(self.pool.conns)):
            request: dict[str, list[FileFacts]] = {}
            paths: dict[str, list[str]] = {}
            for language, (group, view) in groups.items():
                mine = [f.path for f in group if self.owner.get(f.path) == wid]
                if not mine:
                    continue
                request[language] = []
                for f in group:
                    if self.owner.get(f.path) != wid:
                        if f.path not in views:
                            views[f.path] = view(f)
                        request[language].append(views[f.path])
                paths[language] = mine
            if not request:
                continue
            try:
                self.pool.conns[wid].send(request)
            except (OSError, ValueError):
                self.pool.broken = True
                continue  # the worker is gone: its files are resolved here
            self.asked[wid] = paths

    def remote(self, language: str) -> set[str]:
        """The paths of ``language`` a worker was asked to resolve."""
        return {p for paths in self.asked.values() for p in paths.get(language, ())}

    def collect(self, language: str) -> dict[str, Resolution]:
        """What the workers resolved of ``language``, per path (every answer is
        taken at the first call); the files of a worker that did not answer are
        missing (the caller resolves them)."""
        if self.results is None:
            self.results = {}
            for wid, paths in self.asked.items():
                conn, proc = self.pool.conns[wid], self.pool.procs[wid]
                try:
                    while not conn.poll(0.2):
                        if not proc.is_alive() and not conn.poll(0):
                            raise EOFError
                    answer = conn.recv()
                except (EOFError, OSError):
                    self.pool.broken = True
                    log.warning("a parse worker ended early; resolving its %d file(s) here",
                                sum(len(p) for p in paths.values()))
                    continue
                for lang, rows in answer.items():
                    got = self.results.setdefault(lang, {})
                    for path, *row in rows:
                        got[path] = Resolution.from_rows(*row)
        return self.results.get(language, {})

    def restore(self, repo: str, f: FileFacts) -> None:
        """Give stripped facts their references back, before they are resolved
        here (their worker is gone): the file is parsed again. Should it have
        changed since, its references are dropped, with a warning."""
        if f.path not in self.stripped:
            return
        self.stripped.discard(f.path)
        again = parse_file(repo, self.sources[f.path])
        if isinstance(again, FileFacts) and again.file.content_hash == f.file.content_hash:
            f.refs = again.refs
        else:
            log.warning("%s changed while it was indexed; its references are left out", f.path)

    def finish(self) -> None:
        """Tell the workers the run is over (they wait for the next one); once."""
        if self.finished:
            return
        self.finished = True
        for conn in self.pool.conns:
            try:
                conn.send(None)
            except (OSError, ValueError):
                self.pool.broken = True


def _worker_context() -> multiprocessing.context.BaseContext:
    """Fork where it is safe (one thread: workers inherit the loaded grammars and
    start in a few ms); the platform's default elsewhere."""
    if "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


def _reap(procs: list[Any], wait: float = 5.0) -> None:
    """Join worker processes, killing any that do not end within ``wait`` seconds."""
    for proc in procs:
        proc.join(timeout=wait)
        if proc.is_alive():
            proc.kill()
            proc.join()


def _parse_all(repo: str, files: list[SourceFile], workers: int, progress: Progress | None,
               pools: list[_Workers], cache: tuple[str, dict[str, str]] | None = None
               ) -> list[FileFacts | Skipped]:
    """Parse every file: in this process for small repositories, else on
    ``workers - 1`` worker processes (``_ParsePool``) and this one together.

    Files are taken largest first from one shared counter, by this process and
    the workers alike, so all of them finish at about the same time whatever
    the mix of file sizes. Workers send their results in batches as they go;
    this process takes them in between its own files. Files a worker took but
    never sent (it died) are parsed here. The workers stay in the run, to
    resolve their files' references (``_Workers``, appended to ``pools``); the
    caller ends the run with them (``_Workers.finish``, ``_release_pool``).
    """
    total = len(files)
    done = 0

    def tick(n: int) -> None:
        nonlocal done
        done += n
        if progress:
            progress("parse", done, total)

    total_bytes = sum(f.size + _FILE_COST for f in files)
    if workers <= 1 or total < 2 or total_bytes < _PARALLEL_MIN_BYTES:
        out = []
        for sf in files:
            out.append(parse_file(repo, sf))
            tick(1)
        return out
    for language in {sf.language for sf in files}:
        language_module(language)  # imported once here, inherited by forked workers
    ordered = sorted(files, key=lambda f: (-f.size, f.path))
    budget = max(32 * 1024, total_bytes // (8 * workers))
    pool = _acquire_pool(workers - 1)
    run = _Workers(pool, {sf.path: sf for sf in ordered})
    pools.append(run)
    claim, queue, procs = pool.claim, pool.queue, pool.procs
    results: dict[int, FileFacts | Skipped] = {}
    running = len(pool.start(repo, ordered, budget, cache))

    def take(block: bool) -> None:
        nonlocal running
        while running:
            try:
                batch = queue.get(block, 0.2) if block else queue.get_nowait()
            except Empty:
                if not block or not any(p.is_alive() for p in procs):
                    return  # nothing now, or every worker is gone (a dead one sent no None)
                continue
            wid, items = batch
            if items is None:
                running -= 1
                continue
            for i, facts, flags in items:
                results[i] = facts
                if isinstance(facts, FileFacts):
                    run.owner[facts.path] = wid
                    if flags & _STRIPPED:
                        run.stripped.add(facts.path)
                    if flags & _CACHED:
                        run.cached.add(facts.path)
            tick(len(items))

    try:
        while (i := _claim(claim)) is not None and i < total:
            results[i] = parse_file(repo, ordered[i])
            tick(1)
            take(block=False)
        if i is None:  # the counter is stuck: stop the workers, parse what they did not send
            log.warning("the parse workers' file counter is stuck; finishing here")
            pool.broken = True
            _reap(procs, wait=0)
            running = 0
        take(block=True)
    except BaseException:
        pool.broken = True
        raise
    if running:
        pool.broken = True  # a worker died before its last batch
    # every worker has sent its last batch; they now wait to resolve, or for
    # the end of the run
    lost = [i for i in range(total) if i not in results]
    if lost:
        pool.broken = True
        log.warning("a parse worker ended early; parsing its %d file(s) here", len(lost))
        for i in lost:
            results[i] = parse_file(repo, ordered[i])
            tick(1)
    return [results[i] for i in range(total)]


def _resolve(repo: str, language: str, group: list[FileFacts], workers: int,
             finished: list[Any], pool: _Workers | None = None) -> Resolution:
    """Resolve one language's references, on several processes when there are many.

    A language module with ``resolve_parts`` does its whole-repository work
    once here. When the parse workers were asked to resolve the files they
    parsed (``_Workers.ask``), this process resolves the rest and takes their
    results. Otherwise, for many references, forked children, which inherit
    the index built so far, resolve the references of contiguous shares of the
    files while this process resolves the first share. A worker or child that
    fails has its files resolved here. Either way the result equals
    ``resolve`` on one process: per-file results are combined in file order.
    """
    module = language_module(language)
    resolve_parts = getattr(module, "resolve_parts", None)
    if resolve_parts is None:
        result: Resolution = module.resolve(repo, group)
        return result
    shared, part = resolve_parts(repo, group)
    try:
        return _resolve_with(repo, language, group, shared, part, workers, finished, pool)
    finally:
        release = getattr(part, "release", None)  # a Java index holds cycles: free it now
        if release is not None:
            release()


def _resolve_with(repo: str, language: str, group: list[FileFacts], shared: Resolution,
                  part: Callable[[list[FileFacts]], Resolution], workers: int, finished: list[Any],
                  pool: _Workers | None) -> Resolution:
    """``_resolve`` once the whole-repository work is done (``shared``)."""
    remote = pool.remote(language) if pool is not None else set()
    if pool is not None and remote:
        here = {}
        for f in group:
            if f.path not in remote:
                pool.restore(repo, f)
                here[f.path] = part([f])
        done = pool.collect(language)
        for f in group:
            if f.path not in here and f.path not in done:  # its worker is gone
                pool.restore(repo, f)
                here[f.path] = part([f])
        return combine(shared, *(here.get(f.path) or done[f.path] for f in group))
    if pool is not None:
        for f in group:
            pool.restore(repo, f)
    weights = [len(f.refs) for f in group]
    if workers <= 1 or sum(weights) < _PARALLEL_MIN_REFS or not _can_fork_resolvers():
        return combine(shared, part(group))
    shares = _contiguous_shares(group, weights, workers)
    ctx = multiprocessing.get_context("fork")  # children inherit ``part`` and its index
    children = []
    try:
        for share in shares[1:]:
            recv, send = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_resolve_share, args=(part, share, send), daemon=True,
                               name="vitalrag-resolve")
            proc.start()
            send.close()
            children.append((proc, recv, share))
        results = [part(shares[0])]
        for proc, recv, share in children:
            try:
                edges, unresolved, external = recv.recv()
            except (EOFError, OSError):
                log.warning("a resolve worker ended early; resolving its %d file(s) here", len(share))
                results.append(part(share))
                continue
            finally:
                recv.close()
            results.append(Resolution.from_rows(edges, unresolved, external))
    except BaseException:
        _reap([proc for proc, _, _ in children], wait=0)
        raise
    finished.extend(proc for proc, _, _ in children)
    return combine(shared, *results)


def _can_fork_resolvers() -> bool:
    """Resolve workers must be forked (they inherit the index). A forked child
    runs only resolution and a pipe write: no logging, no imports, no locks that
    another thread of this process (a progress bar's, a server's) could hold, so
    on Linux it may be forked from a process with threads; elsewhere (macOS
    frameworks are not fork-safe) only from a process with one."""
    if "fork" not in multiprocessing.get_all_start_methods():
        return False
    return threading.active_count() == 1 or sys.platform.startswith("linux")


def _contiguous_shares(group: list[FileFacts], weights: list[int], n: int) -> list[list[FileFacts]]:
    """``n`` runs of consecutive files of about equal weight (none empty)."""
    n = min(n, len(group))
    total = sum(weights)
    shares: list[list[FileFacts]] = [[] for _ in range(n)]
    acc = 0
    for f, w in zip(group, weights):
        k = min(n - 1, acc * n // max(total, 1))
        shares[k].append(f)
        acc += w
    return [share for share in shares if share]


def _resolve_share(part: Callable[[list[FileFacts]], Resolution], share: list[FileFacts], conn: Any) -> None:
    """A resolve worker: resolve ``share`` and send the result back as plain tuples."""
    gc.disable()
    res = part(share)
    conn.send(res.rows())
    conn.close()


def _split_by_cache(files: list[SourceFile], cache: FactsCache | None
                    ) -> tuple[list[SourceFile], list[FileFacts], dict[str, str]]:
    """Files to parse, cached facts of unchanged files, and the content digests."""
    if cache is None:
        return list(files), [], {}
    digests: dict[str, str] = {}
    wanted: dict[str, tuple[str, str, str]] = {}
    for sf in files:
        try:
            raw = Path(sf.abspath).read_bytes()
        except OSError:
            continue  # parse_file reports why it cannot be read
        digests[sf.path] = digest = file_digest(raw)
        try:
            wanted[sf.path] = (digest, sf.language, source_text(raw))
        except UnicodeDecodeError:
            continue  # nor is it cached
    hits = cache.lookup(wanted)
    del wanted
    todo = [sf for sf in files if sf.path not in hits]
    reused = [hits[sf.path] for sf in files if sf.path in hits]
    return todo, reused, digests


def _validate_name(name: str) -> str:
    if not name or ":" in name or "/" in name or name.strip() != name:
        raise InputError(f"invalid repository name {name!r}: use letters, digits, '-', '_' or '.'")
    return name


def build_graph(repo: str, facts: list[FileFacts]) -> tuple[list[CodeObject], list[Edge]]:
    """Repository, module (package) and file nodes, definitions, and CONTAINS edges."""
    objects: list[CodeObject] = [
        CodeObject(id=repository_id(repo), kind="repository", name=repo, qualname=repo, repo=repo, path="")
    ]
    edges: list[Edge] = []
    packages: dict[str, str] = {}  # package dir -> dotted name
    for f in facts:
        if f.package_dir is not None and f.package_dir not in packages:
            packages[f.package_dir] = f.package_name
    for d in sorted(packages):
        dotted = packages[d]
        # dotted (Python, Java) or an import path (Go: example.com/shop/store)
        last = dotted.rsplit("/", 1)[-1] if "/" in dotted else dotted.rsplit(".", 1)[-1]
        objects.append(CodeObject(
            id=module_id(repo, d), kind="module", name=last or d.rsplit("/", 1)[-1],
            qualname=dotted or d, repo=repo, path=d + "/",
        ))
        edges.append(Edge(_container_of_dir(repo, d, packages), module_id(repo, d), "CONTAINS"))
    for f in facts:
        objects.append(f.file)
        parent = (module_id(repo, f.package_dir) if f.package_dir is not None
                  else _container_of_dir(repo, f.path.rsplit("/", 1)[0] if "/" in f.path else "", packages,
                                         inclusive=True))
        edges.append(Edge(parent, f.file.id, "CONTAINS"))
        objects.extend(f.objects)
        for child, container in f.parents.items():
            edges.append(Edge(container, child, "CONTAINS"))
    return objects, edges


def _container_of_dir(repo: str, d: str, packages: dict[str, str], inclusive: bool = False) -> str:
    """The nearest package folder above ``d`` (or ``d`` itself), else the repository."""
    cur = d if inclusive else (d.rsplit("/", 1)[0] if "/" in d else "")
    while cur:
        if cur in packages:
            return module_id(repo, cur)
        cur = cur.rsplit("/", 1)[0] if "/" in cur else ""
    return repository_id(repo)


def tests_edges(objects: Iterable[CodeObject], calls: Iterable[Edge]) -> list[Edge]:
    """TESTS: a test links to every non-test repository object it calls."""
    kinds = {o.id: o.kind for o in objects}
    tests = {i for i, k in kinds.items() if k == "test"}
    out = []
    for e in calls:
        if e.source in tests and e.kind == "CALLS" and kinds.get(e.target) not in (None, "test"):
            out.append(Edge(e.source, e.target, "TESTS", e.lines))
    return out


@gc_paused()
def index_repository(
    root: str | os.PathLike[str],
    store: GraphStore,
    *,
    name: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    workers: int | None = None,
    progress: Progress | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
) -> IndexReport:
    """Index the repository at ``root`` into ``store``, replacing an earlier index of it.

    With ``cache_dir``, files whose content is unchanged since the last run are
    not parsed again (their extraction is cached there); the whole repository is
    still resolved again, and only the difference is written to the store, so
    the result equals a clean rebuild.
    """
    finished: list[Any] = []  # resolve workers, joined at the end
    pools: list[_Workers] = []  # the run's parse workers, told the run is over at the end
    caches: list[FactsCache] = []  # the run's facts cache, whose segments a failed run removes
    ok = False
    try:
        report = _index(root, store, name=name, max_bytes=max_bytes, workers=workers, progress=progress,
                        cache_dir=cache_dir, finished=finished, pools=pools, caches=caches)
        ok = True
        return report
    finally:
        for run in pools:
            run.finish()
            _release_pool(run.pool, ok)
        _reap(finished)
        if not ok:
            for cache in caches:
                cache.discard()


def _index(
    root: str | os.PathLike[str],
    store: GraphStore,
    *,
    name: str | None,
    max_bytes: int,
    workers: int | None,
    progress: Progress | None,
    cache_dir: str | os.PathLike[str] | None,
    finished: list[Any],
    pools: list[_Workers],
    caches: list[FactsCache],
) -> IndexReport:
    started = time.perf_counter()
    phases: dict[str, float] = {}
    mark = started

    def phase(name: str) -> None:
        nonlocal mark
        now = time.perf_counter()
        phases[name] = now - mark
        mark = now

    root_path = Path(root)
    if not root_path.exists():
        raise RepositoryNotFound(f"repository path {root} does not exist")
    if not root_path.is_dir():
        raise RepositoryNotFound(f"repository path {root} is not a folder")
    root_path = root_path.resolve()
    repo = _validate_name(name or root_path.name)
    walked = walk_repository(root_path, max_bytes=max_bytes)
    if not walked.files:
        raise EmptyRepository(f"no source files to index under {root} "
                              f"({len(walked.skipped)} skipped)")
    n_workers = _n_workers(workers)
    cache = FactsCache(cache_dir, repo) if cache_dir is not None else None
    caches.extend([cache] if cache is not None else [])
    todo, reused, digests = _split_by_cache(walked.files, cache)
    phase("walk")
    parsed = _parse_all(repo, todo, n_workers, progress, pools,
                        (cache.segment_prefix, digests) if cache is not None else None)
    if cache is not None:
        cached_by_workers = pools[0].cached if pools else set()
        for p in parsed:
            if isinstance(p, FileFacts) and p.path in digests:
                if p.path in cached_by_workers:
                    cache.record(p.path, digests[p.path])
                else:
                    cache.put(p.path, digests[p.path], p)
    phase("parse")

    facts = sorted(reused + [p for p in parsed if isinstance(p, FileFacts)], key=lambda f: f.path)
    skipped = list(walked.skipped) + [p for p in parsed if isinstance(p, Skipped)]
    by_language: dict[str, list[FileFacts]] = {}
    for f in facts:
        by_language.setdefault(language_family(f.language), []).append(f)
    for language, group in sorted(by_language.items()):
        # a language may need to see every file before packages are known (Python's __init__.py)
        prepare = getattr(language_module(language), "prepare", None)
        if prepare is not None:
            prepare(repo, group)
    for f in facts:
        skipped.extend(Skipped(f.path, problem) for problem in f.problems)
    pool = pools[0] if pools else None
    if pool is not None:
        # the parse workers start resolving their files while the graph is built here
        pool.ask({language: (group, language_module(language).index_view)
                  for language, group in sorted(by_language.items())
                  if _resolved_by_workers(language_module(language))})
        if not pool.asked:
            pool.finish()  # nothing for them to resolve: they are free now

    objects, edges = build_graph(repo, facts)
    phase("graph")
    unresolved: list[UnresolvedRef] = []
    external = 0
    for i, (language, group) in enumerate(sorted(by_language.items()), 1):
        res = _resolve(repo, language, group, n_workers, finished, pool)
        edges.extend(res.edges)
        unresolved.extend(res.unresolved)
        external += res.external
        if progress:
            progress("resolve", i, len(by_language))
    if pool is not None:
        pool.finish()  # the workers are free while the store is written
    edges.extend(tests_edges(objects, edges))
    edges = merge_edges(edges)
    phase("resolve")

    # Only now touch the store: everything above can fail without losing the old index.
    refs = {u.key: u for u in sorted(unresolved, key=lambda u: (u.key, u.reason))}
    delta = write_repository(
        store, repo, objects, edges, [refs[k] for k in sorted(refs)],
        {f.file.id: f.text for f in facts},
        {"root": str(root_path), "indexed_at": time.time(), "max_bytes": max_bytes},
    )
    phase("write")
    store.save()
    if cache is not None:
        cache.save({f.path for f in facts})
    phase("save")

    report = IndexReport(repo=repo, root=str(root_path))
    report.files = len(facts)
    report.loc = sum(f.file.end_line for f in facts)
    report.objects = dict(sorted(Counter(o.kind for o in objects).items()))
    report.edges = dict(sorted(Counter(e.kind for e in edges).items()))
    report.unresolved = len(refs)
    report.parsed = len(todo)
    report.reused = len(reused)
    report.delta = delta.to_dict()
    report.external = external
    report.skipped = sorted(skipped, key=lambda s: (s.path, s.reason))
    report.seconds = time.perf_counter() - started
    report.phases = phases
    return report
