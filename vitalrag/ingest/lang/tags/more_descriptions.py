"""The ``Language`` descriptions of Ruby, Lua, Bash, Elixir, Haskell and Zig:
cheap to import (the walk reads them); each language's grammar (its PyPI
wheel) and rules (``tags/<name>.py``) load on first use."""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import cast

from vitalrag.ingest.lang.tags import Rules, TagsLanguage


def _rules(module: str) -> Callable[[], Rules]:
    return lambda: cast(Rules, import_module(f"vitalrag.ingest.lang.tags.{module}"))


def _grammar(wheel: str) -> Callable[[], object]:
    return lambda: import_module(wheel).language()


RUBY = TagsLanguage("ruby", "ruby", (".rb", ".rake"), "ruby", _grammar("tree_sitter_ruby"), _rules("ruby"))
LUA = TagsLanguage("lua", "lua", (".lua",), "lua", _grammar("tree_sitter_lua"), _rules("lua"))
BASH = TagsLanguage("bash", "bash", (".sh", ".bash", ".bats"), "bash", _grammar("tree_sitter_bash"), _rules("bash"))
ELIXIR = TagsLanguage("elixir", "elixir", (".ex", ".exs"), "elixir", _grammar("tree_sitter_elixir"), _rules("elixir"))
ZIG = TagsLanguage("zig", "zig", (".zig",), "zig", _grammar("tree_sitter_zig"), _rules("zig"))
HASKELL = TagsLanguage("haskell", "haskell", (".hs",), "haskell", _grammar("tree_sitter_haskell"), _rules("haskell"))
