"""``Query``: one question to the retrievers, checked once where it is made.

    >>> Query.of("send a prepared request", file="src/requests/api.py", line=60)

A ``Query`` that exists is valid: its text says something, a line comes with
its file and is a line number. What only a store can check (that the
repositories exist, where the file is, that the line is in it) is resolved
once per search into a ``Scope``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from vitalrag.errors import InputError


@dataclass(frozen=True, slots=True)
class Query:
    """The query text, the file and line it is about (they anchor the graph walk),
    and the repositories to search (empty: every one)."""

    text: str
    file: str | None = None
    line: int | None = None
    repos: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.text, str) or not self.text.strip():
            raise InputError("empty query: say what code you are looking for")
        if self.file is not None and not isinstance(self.file, str):
            raise InputError(f"file must be a path, got {self.file!r}")
        if self.line is not None:
            if self.file is None:
                raise InputError("a line needs a file: give --file with --line")
            if isinstance(self.line, bool) or not isinstance(self.line, int) or self.line < 1:
                raise InputError(f"line must be >= 1, got {self.line!r}")
        if not all(isinstance(r, str) for r in self.repos):
            raise InputError(f"repositories are names, got {self.repos!r}")

    @classmethod
    def of(cls, text: str, file: str | os.PathLike[str] | None = None, line: int | None = None,
           repo: str | Sequence[str] | None = None) -> Query:
        """A query from the arguments callers pass (``file``: a path; ``repo``: a
        name or several)."""
        repos = (repo,) if isinstance(repo, str) else tuple(dict.fromkeys(repo or ()))
        return cls(text, os.fspath(file) if isinstance(file, os.PathLike) else file, line, repos)


@dataclass(frozen=True, slots=True)
class Scope:
    """A query's place in one store: the repositories a search may return views
    of (None: every one), the repository its file is in (or the only one
    searched), and the file's repo-relative path."""

    allowed: frozenset[str] | None = None
    repo: str | None = None
    path: str | None = None
