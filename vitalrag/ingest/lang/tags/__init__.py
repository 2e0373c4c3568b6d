"""The languages extracted by their tag query alone: JavaScript, TypeScript/TSX,
Go, Rust and C#.

Extraction is shared (``extraction``: definitions and calls from the tag
query, nesting for qualified names; ``index``: the lookups the resolvers
share). Each language adds its ``Rules`` in a module of its own:

- ``javascript``: JavaScript, TypeScript and TSX (relative imports, named imports);
- ``go``: Go (packages are folders, import paths mapped through the module path);
- ``rust``: Rust (module paths from file paths, ``mod`` and ``use``);
- ``csharp``: C# (namespaces, ``using``, overloads by parameter types).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from vitalrag.ingest.facts import FileFacts, Resolution, Resolver, WholeResolver
from vitalrag.ingest.lang.limits import NO_DEADLINE, Deadline

if TYPE_CHECKING:
    from vitalrag.ingest.lang.tags.extraction import Support


class Rules(Protocol):
    """What one language's module adds to the shared extractor (a module is one):
    ``SUPPORT`` for extraction, the frozen dataclasses its facts hold
    (``FACT_TYPES``), and its ``prepare`` and ``resolve``."""

    SUPPORT: Support[Any]
    FACT_TYPES: tuple[type, ...]

    def prepare(self, repo: str, facts: list[FileFacts]) -> None: ...

    def resolve(self, repo: str, facts: list[FileFacts]) -> Resolution: ...


@dataclass(frozen=True, slots=True)
class TagsLanguage:
    """The ``Language`` of a tags-extracted language: its ``rules`` and
    ``grammar`` are imported on first use."""

    name: str
    family: str
    extensions: tuple[str, ...]
    tags: str
    load_grammar: Callable[[], object]
    rules: Callable[[], Rules]

    def grammar(self) -> object:
        return self.load_grammar()

    def load(self) -> None:
        from vitalrag.ingest.lang.tags import extraction  # noqa: F401

        self.rules()

    def fact_types(self) -> tuple[type, ...]:
        return self.rules().FACT_TYPES

    def extract(self, repo: str, path: str, text: str, deadline: Deadline = NO_DEADLINE) -> FileFacts:
        from vitalrag.ingest.lang.tags.extraction import extract_file

        return extract_file(repo, path, text, self.name, self.rules().SUPPORT, deadline)

    def prepare(self, repo: str, facts: list[FileFacts]) -> None:
        self.rules().prepare(repo, facts)

    def resolver(self, repo: str, facts: list[FileFacts]) -> Resolver:
        """Its rules resolve a repository in one step."""
        return WholeResolver(self.rules().resolve, repo, facts)


def _javascript() -> Rules:
    from vitalrag.ingest.lang.tags import javascript

    return javascript


def _go() -> Rules:
    from vitalrag.ingest.lang.tags import go

    return go


def _rust() -> Rules:
    from vitalrag.ingest.lang.tags import rust

    return rust


def _csharp() -> Rules:
    from vitalrag.ingest.lang.tags import csharp

    return csharp


def _javascript_grammar() -> object:
    import tree_sitter_javascript

    return tree_sitter_javascript.language()


def _typescript_grammar() -> object:
    import tree_sitter_typescript

    return tree_sitter_typescript.language_typescript()


def _tsx_grammar() -> object:
    import tree_sitter_typescript

    return tree_sitter_typescript.language_tsx()


def _go_grammar() -> object:
    import tree_sitter_go

    return tree_sitter_go.language()


def _rust_grammar() -> object:
    import tree_sitter_rust

    return tree_sitter_rust.language()


def _csharp_grammar() -> object:
    import tree_sitter_c_sharp

    return tree_sitter_c_sharp.language()


JAVASCRIPT = TagsLanguage("javascript", "javascript", (".js", ".mjs", ".cjs", ".jsx"), "javascript",
                          _javascript_grammar, _javascript)
TYPESCRIPT = TagsLanguage("typescript", "javascript", (".ts", ".mts", ".cts"), "typescript",
                          _typescript_grammar, _javascript)
TSX = TagsLanguage("tsx", "javascript", (".tsx",), "typescript", _tsx_grammar, _javascript)
GO = TagsLanguage("go", "go", (".go",), "go", _go_grammar, _go)
RUST = TagsLanguage("rust", "rust", (".rs",), "rust", _rust_grammar, _rust)
CSHARP = TagsLanguage("csharp", "csharp", (".cs",), "csharp", _csharp_grammar, _csharp)
