"""Temporary files and folders for atomic writes into an index folder, created
with the modes the umask gives (``tempfile.mkstemp`` and ``mkdtemp`` make them
0600 and 0700 whatever the umask, so a store shared with a group, or served
by another user, could not be read once re-indexed); and a full disk told from
other write errors, whichever library wrote (``disk_full``, ``no_space``).
"""

from __future__ import annotations

import errno
import math
import os
import secrets
import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from vitalrag.errors import StoreError


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


@contextmanager
def replacing(dest: str | os.PathLike[str], *, durable: bool = False,
              temp_prefix: str | None = None) -> Iterator[Path]:
    """A temporary path beside ``dest`` for the block to write (a file, by any
    writer: ``np.savez``, ``faiss.write_index``, an exporter); at the block's end it
    replaces ``dest`` in one rename, so readers see the old file or the whole new
    one. A block that raises leaves ``dest`` as it was and the temporary file gone.
    ``durable``: the file is synced before, and the folder after, the rename.
    ``temp_prefix``: the temporary is ``<temp_prefix><random>.tmp``, a name a
    writer can sweep when one was killed mid-write."""
    dest = Path(dest)
    if temp_prefix is not None:
        tmp = dest.with_name(f"{temp_prefix}{secrets.token_hex(6)}.tmp")
    else:
        # the suffix stays last: writers such as np.savez add theirs to a name without it
        tmp = dest.with_name(f".{dest.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp{dest.suffix}")
    try:
        yield tmp
        if durable:
            fd = os.open(tmp, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        os.replace(tmp, dest)
        if durable:
            sync_folder(dest.parent)
    finally:
        tmp.unlink(missing_ok=True)


@contextmanager
def replacing_dir(dest: str | os.PathLike[str], *, temp_prefix: str | None = None) -> Iterator[Path]:
    """A new folder beside ``dest`` (``<temp_prefix><random>``, the umask's mode) for
    the block to fill; at the block's end it takes ``dest``'s place. An existing
    ``dest`` is removed first (a folder cannot be renamed over a full one), so a
    reader may find no folder for a moment, but never a half-filled one. A block
    that raises leaves ``dest`` as it was and the new folder gone."""
    dest = Path(dest)
    tmp = temp_dir(dest.parent, temp_prefix if temp_prefix is not None else f".{dest.name}.")
    try:
        yield tmp
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def sync_folder(folder: str | os.PathLike[str]) -> None:
    """Make a rename in ``folder`` durable (where the platform can)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


#: the errors a full disk or quota raises: the OS's, SQLite's (SQLITE_FULL), and the
#: text a C++ writer (FAISS) puts in a ``RuntimeError``
_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
_SQLITE_FULL = 13
_FULL_TEXT = os.strerror(errno.ENOSPC)


def disk_full(exc: BaseException | None) -> bool:
    """Whether ``exc``, or an error it was raised from, says the disk is full."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.errno in _FULL_ERRNOS:
            return True
        if isinstance(exc, sqlite3.Error) and (getattr(exc, "sqlite_errorcode", None) == _SQLITE_FULL
                                               or "disk is full" in str(exc)):
            return True
        if isinstance(exc, RuntimeError) and _FULL_TEXT in str(exc):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def free_bytes(folder: str | os.PathLike[str]) -> int:
    """The space free to write on the file system of ``folder`` (or of the nearest
    folder above it that exists); 0 when it cannot be told."""
    try:
        return shutil.disk_usage(_existing(Path(folder))).free
    except OSError:
        return 0


def mount_point(folder: str | os.PathLike[str]) -> Path:
    """The mount point of the file system ``folder`` is on."""
    path = _existing(Path(os.path.abspath(folder)))
    while not os.path.ismount(path) and path.parent != path:
        path = path.parent
    return path


def no_space(folder: str | os.PathLike[str], needed: int, *, more: bool = False) -> StoreError:
    """The error for a write into ``folder`` that found its disk full: where, and
    about how much space (``needed`` bytes; ``more``: more than that) it wants."""
    about = "more than" if more else "about"
    return StoreError(f"no space left on {mount_point(folder)} ({about} {_megabytes(needed)} MB needed, "
                      f"{_megabytes(free_bytes(folder))} MB free) to write the index in {folder}: "
                      "free some space and index again")


def _megabytes(size: int) -> str:
    mb = size / 2**20
    return f"{math.ceil(mb)}" if mb >= 10 else f"{mb:.1f}"


def _existing(path: Path) -> Path:
    while not path.exists() and path.parent != path:
        path = path.parent
    return path
