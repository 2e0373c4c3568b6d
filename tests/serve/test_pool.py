"""``serve --workers N``: a compute process that dies is replaced, and the call retried once."""

from __future__ import annotations

import os
import signal
import time
from concurrent.futures import ProcessPoolExecutor

import pytest
from serve_server import FIXTURES, build_index

from vitalrag.errors import VitalRAGError
from vitalrag.serve.pool import PooledService


@pytest.fixture
def pooled(tmp_path):
    folder = build_index(FIXTURES / "py_resolution", tmp_path / "idx")
    service = PooledService(str(folder), workers=2, warm=False).open()
    yield service
    service.close()


def _kill_a_worker(service: PooledService) -> None:
    pid = next(iter(service._pool._processes))  # noqa: SLF001 - the process to kill
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)


def test_a_dead_compute_process_is_replaced_and_the_call_answered(pooled):
    _kill_a_worker(pooled)
    for _ in range(3):  # every later call, too (before: each one failed)
        assert pooled.search("slugify", 3)
        assert pooled.index_status()["repositories"]
    assert pooled.restarts == 1


def test_a_pool_that_cannot_be_rebuilt_gives_a_clear_error(pooled, monkeypatch):
    def dying_pool(self):
        return ProcessPoolExecutor(max_workers=1, initializer=os._exit, initargs=(3,))

    monkeypatch.setattr(PooledService, "_new_pool", dying_pool)
    _kill_a_worker(pooled)
    with pytest.raises(VitalRAGError, match="compute processes died twice answering search"):
        pooled.search("slugify", 3)
