"""What the extraction of one file may cost: the time it may take (a ``Deadline``
the extractors check in their loops) and how deep its definitions may nest
(``MAX_NESTING``). A file past either raises ``Unindexable``; the parse step
reports it as skipped, with the reason, and the run goes on."""

from __future__ import annotations

import time

#: definitions (classes, functions, modules) nested deeper than this make a file
#: unindexable: qualified names, bodies and scopes grow with the depth, for every
#: object (CPython itself refuses more than 100 nested blocks)
MAX_NESTING = 100


class Unindexable(Exception):
    """A file extraction gives up on; ``reason`` is what the skipped list says."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Deadline:
    """``seconds`` from now (None: never). ``check`` is cheap enough for a loop
    over a file's definitions or calls, not for one over its every node."""

    __slots__ = ("seconds", "_at")

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self._at = time.monotonic() + seconds if seconds is not None else None

    def check(self) -> None:
        if self._at is not None and time.monotonic() > self._at:
            raise Unindexable(f"took over {self.seconds:g} s to parse")


#: the deadline of an extraction that may take its time
NO_DEADLINE = Deadline(None)


def check_nesting(depth: int) -> None:
    """Raise ``Unindexable`` for a definition ``depth`` levels deep (1: top level) past ``MAX_NESTING``."""
    if depth > MAX_NESTING:
        raise Unindexable(f"definitions nested over {MAX_NESTING} deep")
