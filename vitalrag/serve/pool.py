"""``PooledService``: the ``ContextService`` calls run by several compute processes.

One server process speaks MCP (HTTP or stdio); each tool call is handed to a
pool of ``workers`` processes, each with its own loaded index and embedding
model and one compute thread. Calls wait in one queue and the next free process
takes the next call, so no process sits idle while another has a backlog (with
several HTTP server processes sharing a socket, a kept-alive connection stays
with the process that accepted it, and the load does not even out).

Each process reloads the index itself when a re-index replaces it on disk, as a
single ``ContextService`` does. Errors raised in a process (``VitalRAGError``
and the rest) come back to the caller unchanged. A process that dies (killed,
out of memory) breaks the whole pool: a new pool is started and the call is
tried once more (the tools only read), and a second death is reported as such.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from vitalrag.errors import VitalRAGError

log = logging.getLogger(__name__)

#: the service of this worker process (set by ``_start``)
_service: Any = None
#: why it could not be opened, re-raised on every call
_failure: BaseException | None = None


def _exit_with_parent() -> None:
    """End this process when the server process ends, however it ends (a server
    killed, or re-raising SIGTERM after uvicorn's graceful shutdown, never runs
    the pool's own shutdown): the kernel's parent-death signal on Linux, and a
    watcher thread everywhere."""
    parent = os.getppid()
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # it ended before the signal was armed
        os._exit(0)

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                os._exit(0)

    threading.Thread(target=watch, name="vitalrag-parent-watch", daemon=True).start()


def _start(store: str, index_dir: str | None, warm: bool) -> None:
    global _service, _failure
    _exit_with_parent()
    # one compute thread per process: the processes are the parallelism, and
    # several torch thread pools on the same cores only fight over them
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:
        pass
    from vitalrag.serve.service import ContextService

    try:
        _service = ContextService(store, index_dir).open(warm=warm)
    except BaseException as exc:  # noqa: BLE001 - reported to the caller of every call
        _failure = exc


def _call(method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if _failure is not None:
        raise _failure
    return getattr(_service, method)(*args, **kwargs)


class PooledService:
    """The query methods of ``ContextService``, each call run by one of ``workers`` processes."""

    METHODS = ("get_context", "explain", "search", "get_object", "neighbors", "index_status")

    def __init__(self, store_location: str, index_dir: str | None = None, *, workers: int = 2,
                 warm: bool = True) -> None:
        if workers < 1:
            raise VitalRAGError(f"workers must be at least 1, not {workers}")
        self.store_location = store_location
        self.workers = workers
        self.restarts = 0
        self._initargs = (store_location, index_dir, warm)
        self._lock = threading.Lock()
        self._pool = self._new_pool()

    def _new_pool(self) -> ProcessPoolExecutor:
        # spawn, never fork: the server process runs threads (the MCP transport)
        return ProcessPoolExecutor(max_workers=self.workers, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=_start, initargs=self._initargs)

    def _replace(self, broken: ProcessPoolExecutor) -> ProcessPoolExecutor:
        """A working pool in place of ``broken`` (calls that failed at once start one)."""
        with self._lock:
            if self._pool is broken:
                broken.shutdown(wait=False, cancel_futures=True)
                self._pool = self._new_pool()
                self.restarts += 1
            return self._pool

    def open(self) -> PooledService:
        """Start every process (each loads the index as it starts) and answer one
        call per process; a process that could not load the index raises why."""
        # each submit without an idle process spawns one, so all of them start here
        futures = [self._pool.submit(_call, "index_status", (), {}) for _ in range(self.workers)]
        for future in futures:
            future.result()
        return self

    def _run(self, method: str, *args: Any, **kwargs: Any) -> Any:
        pool = self._pool
        try:
            return pool.submit(_call, method, args, kwargs).result()
        except BrokenProcessPool as exc:
            log.warning("a compute process of the server died (%s): starting new ones", exc)
            pool = self._replace(pool)
        try:
            return pool.submit(_call, method, args, kwargs).result()
        except BrokenProcessPool as exc:
            self._replace(pool)  # the next call gets its own try
            raise VitalRAGError(f"the server's compute processes died twice answering {method} "
                                f"({exc}); see the server's log, or restart `vitalrag serve`") from exc

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name not in self.METHODS:
            raise AttributeError(name)

        def call(*args: Any, **kwargs: Any) -> Any:
            return self._run(name, *args, **kwargs)

        call.__name__ = name
        return call

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
