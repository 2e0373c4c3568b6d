"""Extraction and resolution for JavaScript, TypeScript/TSX, Go, Rust and C#.

The pipeline calls this module for every language without a module of its own.
Extraction is shared and query-driven (``generic_extract``); each language adds
a ``Support`` and its own ``prepare``/``resolve`` in ``generic_<language>``:

- ``generic_js``: JavaScript, TypeScript and TSX (relative imports, named imports);
- ``generic_go``: Go (packages are folders, import paths mapped through the module path);
- ``generic_rust``: Rust (module paths from file paths, ``mod`` and ``use``);
- ``generic_csharp``: C# (namespaces, ``using``, overloads by parameter types).
"""

from __future__ import annotations

import importlib
from types import ModuleType

from vitalrag.ingest.facts import FileFacts, Resolution
from vitalrag.ingest.generic_extract import extract_file
from vitalrag.ingest.languages import language_for_path

_MODULES = {
    "javascript": "vitalrag.ingest.generic_js",
    "typescript": "vitalrag.ingest.generic_js",
    "tsx": "vitalrag.ingest.generic_js",
    "go": "vitalrag.ingest.generic_go",
    "rust": "vitalrag.ingest.generic_rust",
    "csharp": "vitalrag.ingest.generic_csharp",
}


def _module(language: str) -> ModuleType:
    name = _MODULES.get(language)
    if name is None:
        raise ValueError(f"no tree-sitter extractor for language {language!r}")
    return importlib.import_module(name)


def extract(repo: str, path: str, text: str) -> FileFacts:
    """Objects, containers, call sites and imports of one file."""
    language = language_for_path(path) or ""
    return extract_file(repo, path, text, language, _module(language).SUPPORT)


def prepare(repo: str, facts: list[FileFacts]) -> None:
    """Facts that need every file of the language (Go packages, the JS family)."""
    if facts:
        _module(facts[0].language).prepare(repo, facts)


def resolve(repo: str, facts: list[FileFacts]) -> Resolution:
    """IMPORTS and CALLS edges of one language's files, or unresolved references."""
    if not facts:
        return Resolution()
    result: Resolution = _module(facts[0].language).resolve(repo, facts)
    return result
