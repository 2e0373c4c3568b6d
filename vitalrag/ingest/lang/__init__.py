"""The languages VitalRAG indexes: one ``Language`` each, in one ``REGISTRY``.

A language is a package here: ``python/``, ``java/``, and ``tags/`` for the
languages the shared, query-driven extractor serves (JavaScript, TypeScript,
TSX, Go, Rust, C#). Its ``__init__`` is the description the registry holds
(name, extensions, grammar, tag query); extraction and resolution are imported
on first use, so reading the registry (``walk`` does) stays cheap. Tag queries
are package data, ``queries/<tags>-tags.scm``; grammars come from the
per-language PyPI wheels (``tree-sitter-python`` and friends), loaded on first use.

Adding a language: a package with its ``Language`` (or a ``TagsLanguage`` and a
module in ``tags/``), its query file, and its line in ``REGISTRY``.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Protocol

import tree_sitter

from vitalrag.ingest.facts import FileFacts, Resolver
from vitalrag.ingest.lang import java, python, tags
from vitalrag.ingest.lang.tags import descriptions
from vitalrag.ingest.lang.tags import more_descriptions
from vitalrag.ingest.lang.limits import NO_DEADLINE, Deadline


class Language(Protocol):
    """One language: what the walk, the parse workers and the pipeline need of it."""

    @property
    def name(self) -> str:
        """The name files and code objects carry (``python``, ``tsx``)."""

    @property
    def family(self) -> str:
        """The language whose ``prepare`` and ``resolve`` see this one's files
        (TypeScript's and TSX's are JavaScript's: they import each other); its own name otherwise."""

    @property
    def extensions(self) -> tuple[str, ...]:
        """File name endings, lower case, with the dot."""

    @property
    def tags(self) -> str:
        """The tag query's name: ``queries/<tags>-tags.scm``."""

    def grammar(self) -> object:
        """The grammar's language pointer, from its wheel (imported here, on first use)."""

    def load(self) -> None:
        """Import extraction and resolution now (a ``ParsePool`` does, before its
        workers fork and inherit them)."""

    def fact_types(self) -> tuple[type, ...]:
        """The frozen dataclasses its facts hold, ``FileFacts.data``'s first (then
        ``RawRef.data``'s and their parts): the only classes the facts cache
        rebuilds for it."""

    def extract(self, repo: str, path: str, text: str, deadline: Deadline = NO_DEADLINE) -> FileFacts:
        """Objects and raw references of one file (in a parse worker: it sees no other
        file); ``limits.Unindexable`` past ``deadline`` or ``limits.MAX_NESTING``."""

    def prepare(self, repo: str, facts: list[FileFacts]) -> None:
        """Facts that need every file of the family, before the graph is built
        (Python's packages, Go's module path); nothing for most."""

    def resolver(self, repo: str, facts: list[FileFacts]) -> Resolver:
        """The resolution of the family's files: edges and unresolved references
        (``resolve_all`` runs it here; a ``ParsePool`` may spread its ``files`` step)."""


_ALL: tuple[Language, ...] = (
    python.PYTHON,
    java.JAVA,
    tags.JAVASCRIPT,
    tags.TYPESCRIPT,
    tags.TSX,
    tags.GO,
    tags.RUST,
    tags.CSHARP,
    descriptions.C,
    descriptions.CPP,
    descriptions.KOTLIN,
    descriptions.SCALA,
    descriptions.SWIFT,
    descriptions.PHP,
    more_descriptions.RUBY,
    more_descriptions.LUA,
    more_descriptions.BASH,
    more_descriptions.ELIXIR,
    more_descriptions.ZIG,
    more_descriptions.HASKELL,
)
#: every language, by name
REGISTRY: dict[str, Language] = {language.name: language for language in _ALL}

LANGUAGES: tuple[str, ...] = tuple(sorted(REGISTRY))

#: file name ending -> language name
EXTENSIONS: dict[str, str] = {ext: name for name, language in REGISTRY.items() for ext in language.extensions}


def language_for_path(path: str) -> str | None:
    dot = path.rfind(".")
    if dot < 0 or "/" in path[dot:]:
        return None
    return EXTENSIONS.get(path[dot:].lower())


@cache
def grammar(language: str) -> tree_sitter.Language:
    return tree_sitter.Language(REGISTRY[language].grammar())


def parser(language: str) -> tree_sitter.Parser:
    """A fresh parser (parsers are not shared between threads)."""
    return tree_sitter.Parser(grammar(language))


@cache
def tags_query(language: str) -> tree_sitter.Query:
    """The compiled tag query of ``language`` (package data)."""
    name = REGISTRY[language].tags
    text = resources.files(__name__).joinpath(f"queries/{name}-tags.scm").read_text("utf-8")
    return tree_sitter.Query(grammar(language), text)
