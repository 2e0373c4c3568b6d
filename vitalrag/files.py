"""Temporary files and folders for atomic writes into an index folder, created
with the modes the umask gives (``tempfile.mkstemp`` and ``mkdtemp`` make them
0600 and 0700 whatever the umask, so a store shared with a group, or served
by another user, could not be read once re-indexed).
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path


def temp_file(folder: str | os.PathLike[str], prefix: str, suffix: str = "") -> tuple[int, Path]:
    """A new file in ``folder`` (mode 0666 less the umask), opened for writing:
    its descriptor and path. The caller renames it into place or removes it."""
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    while True:
        path = Path(folder) / f"{prefix}{secrets.token_hex(6)}{suffix}"
        try:
            return os.open(path, flags, 0o666), path
        except FileExistsError:
            continue


def temp_dir(folder: str | os.PathLike[str], prefix: str) -> Path:
    """A new folder in ``folder`` (mode 0777 less the umask)."""
    while True:
        path = Path(folder) / f"{prefix}{secrets.token_hex(6)}"
        try:
            os.mkdir(path, 0o777)
            return path
        except FileExistsError:
            continue
