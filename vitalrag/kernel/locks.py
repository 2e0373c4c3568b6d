"""Locks on an index folder.

``folder_lock`` is held for the length of one write: writers of one folder
(graph saves, retrieval snapshots) take it, so a temporary file or snapshot
folder found while holding it belongs to a writer that died (killed mid-save):
it can be removed safely.

``writer_lock`` is held by a whole index run, from loading the store to its
last write, so two runs never both start from the same old store and the
second overwrite the first one's repository.
"""

from __future__ import annotations

import errno
import fcntl
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from vitalrag.errors import StoreBusy, StoreError

LOCK_FILE = ".write.lock"
WRITER_LOCK_FILE = ".index.lock"


@contextmanager
def folder_lock(folder: str | os.PathLike[str]) -> Iterator[None]:
    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    fd = os.open(path / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o666)  # the umask decides
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def check_writable(folder: str | os.PathLike[str]) -> None:
    """Raise ``StoreError`` when ``folder`` cannot be created or written; leaves nothing behind."""
    path = Path(folder)
    probe = path
    while not os.path.lexists(probe) and probe.parent != probe:
        probe = probe.parent
    if not probe.is_dir():
        raise StoreError(f"cannot write store {folder}: {probe} is not a folder")
    try:
        with tempfile.TemporaryDirectory(prefix=".probe-", dir=probe):
            pass
    except OSError as exc:
        raise StoreError(f"cannot write store {folder}: {exc.strerror or exc}") from exc


@contextmanager
def writer_lock(folder: str | os.PathLike[str], *, wait: bool = False,
                on_wait: Callable[[], None] | None = None) -> Iterator[None]:
    """Hold the writer lock of ``folder`` (created if need be) for an index run.

    When another run holds it, raise ``StoreBusy`` at once, or with ``wait``
    call ``on_wait`` and block until it is free.
    """
    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    lock_path = path / WRITER_LOCK_FILE
    while True:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                os.close(fd)
                raise StoreError(f"cannot lock {lock_path}: {exc.strerror or exc}") from exc
            if not wait:
                os.close(fd)
                raise StoreBusy(f"another index is writing {folder}: try again when it is done, "
                                "or pass --wait") from exc
            if on_wait is not None:
                on_wait()
                on_wait = None
            fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(lock_path))
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)  # the holder removed the folder it had created: lock the new file
    try:
        yield
    finally:
        os.close(fd)
