"""Which language a file is in, and its tree-sitter parser and tag query.

Grammars come from the per-language PyPI wheels (``tree-sitter-python`` and
friends). Tag queries live beside this module as ``queries/<lang>-tags.scm``.
"""

from __future__ import annotations

import importlib
from functools import cache
from importlib import resources
from typing import Any

from tree_sitter import Language, Parser, Query

#: extension -> language name
EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".java": "java",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".cs": "csharp",
}

#: language -> (module, function returning the grammar pointer)
_GRAMMARS: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    "java": ("tree_sitter_java", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "csharp": ("tree_sitter_c_sharp", "language"),
}

LANGUAGES: tuple[str, ...] = tuple(sorted(_GRAMMARS))

#: languages whose files import each other and are resolved together
_FAMILY = {"typescript": "javascript", "tsx": "javascript"}

#: language -> module with ``extract(repo, path, text) -> FileFacts``, an optional
#: ``prepare(repo, facts)`` run on all of a language's files before the graph is
#: built, and ``resolve(repo, facts) -> Resolution``; the other languages share the
#: generic one
_MODULES = {"python": "vitalrag.ingest.python", "java": "vitalrag.ingest.java"}
_GENERIC = "vitalrag.ingest.generic"


def language_module(language: str) -> Any:
    """The extraction and resolution module of ``language``."""
    return importlib.import_module(_MODULES.get(language, _GENERIC))


def language_family(language: str) -> str:
    """The group a language is resolved in (JavaScript, TypeScript and TSX share one)."""
    return _FAMILY.get(language, language)


def language_for_path(path: str) -> str | None:
    dot = path.rfind(".")
    if dot < 0 or "/" in path[dot:]:
        return None
    return EXTENSIONS.get(path[dot:].lower())


@cache
def grammar(language: str) -> Language:
    module_name, func = _GRAMMARS[language]
    module = importlib.import_module(module_name)
    return Language(getattr(module, func)())


def parser(language: str) -> Parser:
    """A fresh parser (parsers are not shared between threads)."""
    return Parser(grammar(language))


def _tags_text(language: str) -> str:
    name = "typescript" if language == "tsx" else language
    return resources.files("vitalrag.ingest").joinpath(f"queries/{name}-tags.scm").read_text("utf-8")


@cache
def tags_query(language: str) -> Query:
    """The compiled ``queries/<language>-tags.scm`` of the package data."""
    return Query(grammar(language), _tags_text(language))
