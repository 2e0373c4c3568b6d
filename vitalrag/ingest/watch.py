"""Watch a repository and call back when its source files change (debounced).

Built on ``watchfiles`` (inotify on Linux). Changes under the index folder,
vendored folders and files the index does not take (``ingest.content``) are ignored;
``.gitignore`` is re-applied by the re-index itself.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from threading import Event, Lock, Timer

from vitalrag.ingest.content import DEFAULT_CONTENT, listed
from vitalrag.ingest.walk import VENDORED_DIRS

log = logging.getLogger(__name__)


def _relevant(root: Path, ignore: tuple[Path, ...], content: str = DEFAULT_CONTENT) -> Callable[[object, str], bool]:
    def accept(_change: object, path: str) -> bool:
        p = Path(path)
        if any(p == i or i in p.parents for i in ignore):
            return False
        try:
            rel = p.relative_to(root)
        except ValueError:
            return False
        if any(part in VENDORED_DIRS for part in rel.parts[:-1]):
            return False
        return p.name == ".gitignore" or listed(rel.as_posix(), content) is not None

    return accept


def watch_repository(root: str | os.PathLike[str], on_change: Callable[[list[str]], None], *,
                     debounce_ms: int = 500, stop: Event | None = None,
                     ignore: tuple[str | os.PathLike[str], ...] = (), catch_up: bool = True,
                     content: str = DEFAULT_CONTENT) -> None:
    """Block, calling ``on_change(changed repo-relative paths)`` after each burst of
    changes to the files an index of ``content`` takes."""
    from watchfiles import watch

    base = Path(root).resolve()
    skip = tuple(Path(i).resolve() for i in ignore)
    lock = Lock()

    def guarded(paths: list[str]) -> None:
        with lock:
            on_change(paths)

    # One catch-up run once the watcher is up: a change made between the caller's
    # initial index and the watcher's start would otherwise wait for the next change.
    if catch_up:
        Timer(0.5, guarded, args=([],)).start()
    for changes in watch(base, watch_filter=_relevant(base, skip, content), debounce=debounce_ms,
                         stop_event=stop, raise_interrupt=False):
        paths = sorted({Path(p).relative_to(base).as_posix() for _, p in changes})
        log.info("%d changed: %s", len(paths), ", ".join(paths[:5]))
        guarded(paths)
