"""``Query``: one question to the retrievers, checked once where it is made.

    >>> Query.of("send a prepared request", file="src/requests/api.py", line=60)

A ``Query`` that exists is valid: its text says something, a line comes with
its file and is a line number. What only a store can check (that the
repositories exist, where the file is, that the line is in it) is resolved
once per search into a ``Scope``.

Its text is at most ``MAX_QUERY_CHARS`` characters (a question and the code it
is about: about a hundred lines), and it has a searchable word unless a file
anchors the graph walk: a word of two or more characters, starting with a
letter, that is not an English function word ("the", "and", "how"). A query of
punctuation, numbers, single letters and function words ("*", "AND", "how do I
do this") is refused whatever the retriever, so every store and retriever
answers it alike: the dense retriever could embed it, but the views nearest
such an embedding are arbitrary. A reserved word is searchable ("class",
"import", "Base": C#'s ``base`` is also a class's name), though BM25 skips it:
the dense retriever and the names of definitions find what it is about.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

from vitalrag.errors import InputError
from vitalrag.kernel.text import STOPWORDS, identifiers

#: the longest query text, in characters: every step a query takes is linear in
#: its length, and this bounds them (CLI, MCP server and Python API alike)
MAX_QUERY_CHARS = 8_000
#: a query that is one name and nothing else
_LONE_NAME = re.compile(r"[^\W\d][\w$]*")
#: how much of a refused query its message quotes
_QUOTED = 60


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
        if len(self.text) > MAX_QUERY_CHARS:
            raise InputError(f"the query is {len(self.text):,} characters long, over the limit of "
                             f"{MAX_QUERY_CHARS:,}: ask about less at a time")
        if self.file is not None and not isinstance(self.file, str):
            raise InputError(f"file must be a path, got {self.file!r}")
        if self.line is not None:
            if self.file is None:
                raise InputError("a line needs a file: give --file with --line")
            if isinstance(self.line, bool) or not isinstance(self.line, int) or self.line < 1:
                raise InputError(f"line must be >= 1, got {self.line!r}")
        if not all(isinstance(r, str) for r in self.repos):
            raise InputError(f"repositories are names, got {self.repos!r}")
        if self.file is None and not has_searchable_word(self.text):
            raise InputError(f"the query has no searchable words: {_quoted(self.text)} (punctuation, numbers, "
                             "single letters and function words such as 'the' or 'and' are not searched): "
                             "name the code or say what it does")

    @classmethod
    def of(cls, text: str, file: str | os.PathLike[str] | None = None, line: int | None = None,
           repo: str | Sequence[str] | None = None) -> Query:
        """A query from the arguments callers pass (``file``: a path; ``repo``: a
        name or several)."""
        repos = (repo,) if isinstance(repo, str) else tuple(dict.fromkeys(repo or ()))
        return cls(text, os.fspath(file) if isinstance(file, os.PathLike) else file, line, repos)


def has_searchable_word(text: str) -> bool:
    """Whether ``text`` has a word a retriever can search for: an identifier of two
    or more characters that is not an English function word, or one name alone,
    whatever its length (Flask's ``g``, a type parameter ``T``)."""
    lone = text.strip().strip("`").removesuffix("()")
    if _LONE_NAME.fullmatch(lone) and lone.casefold() not in STOPWORDS:
        return True
    return any(len(w) > 1 and w.casefold() not in STOPWORDS for w in identifiers(text))


def _quoted(text: str) -> str:
    """``text`` quoted on one line (``repr`` escapes line breaks and control
    characters), its start only when it is long."""
    text = text.strip()
    return repr(text) if len(text) <= _QUOTED else repr(text[:_QUOTED]) + "..."


@dataclass(frozen=True, slots=True)
class Scope:
    """A query's place in one store: the repositories a search may return views
    of (None: every one), the repository its file is in (or the only one
    searched), and the file's repo-relative path."""

    allowed: frozenset[str] | None = None
    repo: str | None = None
    path: str | None = None
