"""Where a run's files are parsed and their references resolved: in this process
(``InProcess``, the default of ``index_repository``) or on processes the
caller owns (``ParsePool``, a context manager)::

    with ParsePool(2) as pool:  # the workers start here, while the process is small
        index_repository(a, store, executor=pool)
        index_repository(b, store, executor=pool)  # the same workers

A pool sends chunks of files to its workers, largest first, while this process
parses chunks from the small end until the two meet (so one large file does
not leave a core idle at the end), and gives the results back in the files'
order. A worker
that dies breaks the pool (``BrokenProcessPool``): the files it had not sent
back are parsed in this process, with a warning, and the next run starts new
workers.

A pool resolves a language's references on as many processes: after the
whole-repository step (``Resolver.shared``), processes forked then (they
inherit the resolver and its index, which the pool's workers never saw) take
consecutive shares of the files while this process takes the first, and send
back plain rows. A fork that fails has its share resolved here. Either way the
result equals the in-process one.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Protocol

from vitalrag.ingest.facts import FileFacts, Resolution, Resolver, combine, resolve_all
from vitalrag.ingest.lang import REGISTRY
from vitalrag.ingest.parse import CacheTarget, Parsed, parse_files
from vitalrag.ingest.walk import SourceFile

log = logging.getLogger(__name__)

Tick = Callable[[int], None]

#: below this many bytes of source, parsing here beats sending files to workers
_PARALLEL_MIN_BYTES = 64 * 1024
#: fixed cost of one file in bytes-equivalent, for sharing files out
_FILE_COST = 2048
#: below this many references, resolving here beats forking (guava 33.3.1 has 73,000)
_PARALLEL_MIN_REFS = 8000


class ParseExecutor(Protocol):
    """Parses a run's files (per-file results in the files' order) and resolves
    a language's references."""

    def parse(self, repo: str, files: Sequence[SourceFile], cache: CacheTarget | None = None,
              tick: Tick | None = None) -> list[Parsed]: ...

    def resolve(self, resolver: Resolver, facts: list[FileFacts]) -> Resolution:
        """Both steps of ``resolver`` over ``facts``; closes it."""


class InProcess:
    """Everything in this process, one file after another."""

    def parse(self, repo: str, files: Sequence[SourceFile], cache: CacheTarget | None = None,
              tick: Tick | None = None) -> list[Parsed]:
        return parse_files(repo, files, cache, tick)

    def resolve(self, resolver: Resolver, facts: list[FileFacts]) -> Resolution:
        return resolve_all(resolver, facts)


def default_workers() -> int:
    """Up to 2 processes (one per core)."""
    return min(2, os.cpu_count() or 1)


class ParsePool:
    """``workers`` parse processes: this one and ``workers - 1`` worker processes
    (a ``concurrent.futures.ProcessPoolExecutor``), started on entry and stopped
    on exit; ``workers=1`` parses in this process alone. Serves one run at a time."""

    def __init__(self, workers: int | None = None, *, mp_context: Any = None) -> None:
        self.workers = default_workers() if workers is None else workers
        self._mp_context = mp_context
        self._pool: ProcessPoolExecutor | None = None

    def __enter__(self) -> ParsePool:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        """Start the workers now (the first parse would): best while this process
        is small, as a forked worker holds on to what it inherited."""
        if self.workers <= 1 or self._pool is not None:
            return
        for language in REGISTRY.values():
            language.load()  # imported once here, inherited by forked workers
        context = self._mp_context or _worker_context()
        self._pool = ProcessPoolExecutor(self.workers - 1, mp_context=context,
                                         initializer=_end_with_parent, initargs=(os.getpid(),))
        self._pool.submit(int).result()  # forks them all now (started on demand otherwise)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def parse(self, repo: str, files: Sequence[SourceFile], cache: CacheTarget | None = None,
              tick: Tick | None = None) -> list[Parsed]:
        """Chunks of files, largest first, to the workers, while this process
        parses chunks from the other end, until the two meet; results in order."""
        total = sum(sf.size + _FILE_COST for sf in files)
        if self.workers <= 1 or len(files) < 2 or total < _PARALLEL_MIN_BYTES:
            return parse_files(repo, files, cache, tick)
        self.start()
        order = sorted(range(len(files)), key=lambda i: (-files[i].size, files[i].path))
        chunks = _chunks(order, [files[i].size + _FILE_COST for i in order],
                         max(16 * 1024, total // (32 * self.workers)))
        parts = [[files[i] for i in chunk] for chunk in chunks]
        results: dict[int, Parsed] = {}
        broken = False

        def take(k: int, got: list[Parsed] | None) -> None:
            nonlocal broken
            if got is None:  # its worker died
                if not broken:
                    log.warning("a parse worker ended early; parsing the files not yet parsed here")
                    broken = True
                got = parse_files(repo, parts[k], cache)
            results.update(zip(chunks[k], got))
            if tick is not None:
                tick(len(got))

        # two chunks in flight per worker, so none waits for the next; none is
        # cancelled (a cancelled future breaks Python 3.11's handling of a dead worker)
        sent: deque[tuple[int, Future[list[Parsed]] | None]] = deque()
        front, back = 0, len(chunks)
        try:
            while front < back or sent:
                while len(sent) < 2 * (self.workers - 1) and front < back:
                    sent.append((front, self._submit(repo, parts[front], cache)))
                    front += 1
                future = sent[0][1]
                if future is not None and not future.done() and front < back:
                    back -= 1
                    take(back, parse_files(repo, parts[back], cache))
                else:
                    k, _ = sent.popleft()
                    take(k, _result(future))
        except BaseException:
            # the run fails: none of its chunks may go on writing cache segments after it
            wait([f for _, f in sent if f is not None])
            raise
        if broken and self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None  # the next run starts new workers
        return [results[i] for i in range(len(files))]

    def resolve(self, resolver: Resolver, facts: list[FileFacts]) -> Resolution:
        """The whole-repository step here, then the files' references over
        ``workers`` processes: consecutive shares of about equal references, the
        first here, the others on processes forked now; closes ``resolver``."""
        weights = [len(f.refs) for f in facts]
        if self.workers <= 1 or sum(weights) < _PARALLEL_MIN_REFS or not _can_fork():
            return resolve_all(resolver, facts)
        try:
            shared = resolver.shared()
            shares = _shares(facts, weights, self.workers)
            forked = [_Forked(resolver, share) for share in shares[1:]]
            try:
                results = [resolver.files(shares[0])]
                for child in forked:
                    got = child.result()
                    results.append(resolver.files(child.share) if got is None else got)
            finally:
                for child in forked:
                    child.close()
            return combine(shared, *results)
        finally:
            resolver.close()

    def _submit(self, repo: str, files: list[SourceFile], cache: CacheTarget | None) -> Future[list[Parsed]] | None:
        """A chunk sent to a worker (with its files' digests); None when the pool is broken."""
        assert self._pool is not None
        try:
            return self._pool.submit(parse_files, repo, files, cache.of(files) if cache else None)
        except BrokenProcessPool:
            return None


def _result(future: Future[list[Parsed]] | None) -> list[Parsed] | None:
    """A chunk's results; None when its worker died before sending them."""
    if future is None:
        return None
    try:
        return future.result()
    except BrokenProcessPool:
        return None


def _worker_context() -> Any:
    """Fork where it is safe (one thread: workers inherit the loaded grammars and
    start in a few ms); the platform's default elsewhere."""
    if "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


def _can_fork() -> bool:
    """A forked resolver runs only resolution and a pipe write (no imports, and
    no lock another thread may hold: logging's are reset in a child), so on
    Linux it may be forked from a process with threads (a progress bar's, the
    pool's own); elsewhere (macOS frameworks are not fork-safe) from one with one."""
    if "fork" not in multiprocessing.get_all_start_methods():
        return False
    return threading.active_count() == 1 or sys.platform.startswith("linux")


class _Forked:
    """A process forked to resolve the references of ``share`` with the
    resolver it inherits; ``result`` is None when it could not (it died, or
    could not start), and the caller resolves the share itself."""

    def __init__(self, resolver: Resolver, share: list[FileFacts]) -> None:
        self.share = share
        context = multiprocessing.get_context("fork")
        self._recv, send = context.Pipe(duplex=False)
        self._proc: Any = context.Process(target=_resolve_share, args=(resolver, share, send), daemon=True,
                                          name="vitalrag-resolve")
        try:
            self._proc.start()
        except OSError as exc:  # out of processes or memory: resolved here
            log.warning("could not fork a resolver (%s); resolving its %d file(s) here", exc, len(share))
            self._proc = None
        finally:
            send.close()

    def result(self) -> Resolution | None:
        if self._proc is None:
            return None
        try:
            return Resolution.from_rows(*self._recv.recv())
        except (EOFError, OSError):
            log.warning("a resolver ended early; resolving its %d file(s) here", len(self.share))
            return None

    def close(self) -> None:
        self._recv.close()
        if self._proc is not None:
            self._proc.join(5)
            if self._proc.is_alive():
                self._proc.kill()
                self._proc.join()


def _resolve_share(resolver: Resolver, share: list[FileFacts], conn: Any) -> None:
    """A forked resolver: the share's references, sent back as plain rows. It
    ends here, whatever happens (the caller resolves a share that does not come
    back): none of the caller's exit handlers run in this copy of it."""
    try:
        conn.send(resolver.files(share).rows())
        conn.close()
    finally:
        os._exit(0)


def _shares(facts: list[FileFacts], weights: list[int], n: int) -> list[list[FileFacts]]:
    """``facts`` cut into at most ``n`` runs of consecutive files of about equal weight."""
    total = max(sum(weights), 1)
    shares: list[list[FileFacts]] = [[] for _ in range(min(n, len(facts)))]
    done = 0
    for f, w in zip(facts, weights):
        shares[min(len(shares) - 1, done * len(shares) // total)].append(f)
        done += w
    return [share for share in shares if share]


def _end_with_parent(parent: int) -> None:
    """A worker ends when the process that started it is gone (killed, say): it
    would otherwise wait for work forever, as its siblings hold the queue open."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="vitalrag-parent-watch").start()


def _chunks(order: list[int], costs: list[int], budget: int) -> list[list[int]]:
    """``order`` cut into runs of about ``budget`` cost (a file larger alone)."""
    chunks: list[list[int]] = [[]]
    size = 0
    for i, cost in zip(order, costs):
        if size >= budget:
            chunks.append([])
            size = 0
        chunks[-1].append(i)
        size += cost
    return chunks
