"""The ``Language`` descriptions of C, C++, Kotlin, Scala, Swift and PHP: cheap
to import (the walk reads them); grammars and rules load on first use.

``.h`` belongs to C; a header that reads as C++ (``c.looks_like_cpp``) is
extracted as C++, which shares C's family.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import cast

from vitalrag.ingest.facts import FileFacts
from vitalrag.ingest.lang.limits import NO_DEADLINE, Deadline
from vitalrag.ingest.lang.tags import Rules, TagsLanguage


def _rules(module: str) -> Rules:
    return cast(Rules, import_module(f"vitalrag.ingest.lang.tags.{module}"))


def _grammar(wheel: str, function: str = "language") -> object:
    return getattr(import_module(wheel), function)()


@dataclass(frozen=True, slots=True)
class CLanguage(TagsLanguage):
    """C, whose ``.h`` files may be C++."""

    def extract(self, repo: str, path: str, text: str, deadline: Deadline = NO_DEADLINE) -> FileFacts:
        if path.lower().endswith(".h"):
            from vitalrag.ingest.lang.tags.c import looks_like_cpp

            if looks_like_cpp(text.encode("utf-8")):
                return CPP.extract(repo, path, text, deadline)
        return TagsLanguage.extract(self, repo, path, text, deadline)


C = CLanguage("c", "c", (".c", ".h"), "c", lambda: _grammar("tree_sitter_c"), lambda: _rules("c"))
CPP = TagsLanguage("cpp", "c", (".cc", ".cpp", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h++", ".ipp", ".inl",
                                ".tpp", ".tcc"), "cpp", lambda: _grammar("tree_sitter_cpp"), lambda: _rules("cpp"))
KOTLIN = TagsLanguage("kotlin", "kotlin", (".kt", ".kts"), "kotlin", lambda: _grammar("tree_sitter_kotlin"),
                      lambda: _rules("kotlin"))
SCALA = TagsLanguage("scala", "scala", (".scala", ".sc"), "scala", lambda: _grammar("tree_sitter_scala"),
                     lambda: _rules("scala"))
SWIFT = TagsLanguage("swift", "swift", (".swift",), "swift", lambda: _grammar("tree_sitter_swift"),
                     lambda: _rules("swift"))
#: ``language_php``, not ``language_php_only``: a ``.php`` file opens with ``<?php`` and may hold HTML
PHP = TagsLanguage("php", "php", (".php",), "php", lambda: _grammar("tree_sitter_php", "language_php"),
                   lambda: _rules("php"))
