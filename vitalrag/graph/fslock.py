"""An exclusive lock on an index folder for the length of a write.

Writers of one folder (graph saves, retrieval snapshots) take it, so a
temporary file or snapshot folder found while holding it belongs to a writer
that died (killed mid-save): it can be removed safely.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOCK_FILE = ".write.lock"


@contextmanager
def folder_lock(folder: str | os.PathLike[str]) -> Iterator[None]:
    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    fd = os.open(path / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
