"""Where a run's files are parsed: in this process
(``InProcess``, the default of ``index_repository``) or on worker processes the
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
workers. Either way the result equals the in-process one.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Protocol

from vitalrag.ingest.lang import REGISTRY
from vitalrag.ingest.parse import CacheTarget, Parsed, parse_files
from vitalrag.ingest.walk import SourceFile

log = logging.getLogger(__name__)

Tick = Callable[[int], None]

#: below this many bytes of source, parsing here beats sending files to workers
_PARALLEL_MIN_BYTES = 64 * 1024
#: fixed cost of one file in bytes-equivalent, for sharing files out
_FILE_COST = 2048


class ParseExecutor(Protocol):
    """Parses a run's files: per-file results in the files' order."""

    def parse(self, repo: str, files: Sequence[SourceFile], cache: CacheTarget | None = None,
              tick: Tick | None = None) -> list[Parsed]: ...


class InProcess:
    """Everything in this process, one file after another."""

    def parse(self, repo: str, files: Sequence[SourceFile], cache: CacheTarget | None = None,
              tick: Tick | None = None) -> list[Parsed]:
        return parse_files(repo, files, cache, tick)


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
