"""A candidate program parsed on its own: the snippet, its tree and its size.

A snippet is one function or class, as a model would write it. Python snippets
are dedented first (a method is usually indented). A Java snippet that is not a
type declaration (a method, a constructor) is wrapped in a class shell on the
same first line, so line numbers stay those of the snippet.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass

from tree_sitter import Node

from vitalrag.errors import InputError
from vitalrag.ingest.lang import parser
from vitalrag.ingest.lang.treesitter import error_lines

LANGUAGES = ("python", "java")

_JAVA_SHELL = "class VitalShell__ { "
_JAVA_TYPE_START = re.compile(
    r"^\s*(?:(?://[^\n]*\n|/\*.*?\*/)\s*)*(?:@\w+(?:\.\w+)*(?:\([^)]*\))?\s*)*"
    r"(?:(?:public|protected|private|static|final|abstract|sealed|non-sealed|strictfp)\s+)*"
    r"(?:package|import|class|interface|enum|record|@interface)\b",
    re.S,
)


@dataclass(frozen=True, slots=True)
class Program:
    """One candidate program. ``root`` spans the snippet (plus the Java shell,
    when ``shelled``); ``error_lines`` are snippet lines of ERROR/MISSING nodes."""

    text: str
    language: str
    root: Node
    shelled: bool
    error_lines: tuple[int, ...]
    tokens: int
    lines: int

    @property
    def valid(self) -> bool:
        return not self.error_lines


def parse_program(text: str, language: str) -> Program:
    """Parse a snippet standalone with the language's tree-sitter grammar."""
    if language not in LANGUAGES:
        raise InputError(f"program transfer supports {', '.join(LANGUAGES)}, not {language!r}")
    shelled = False
    if language == "python":
        source = textwrap.dedent(text)
        prefix = ""
    else:
        source = text
        shelled = _JAVA_TYPE_START.match(text) is None
        prefix = _JAVA_SHELL if shelled else ""
        source = f"{prefix}{text}\n}}" if shelled else text
    data = source.encode("utf-8")
    root = parser(language).parse(data).root_node
    lo, hi = len(prefix.encode("utf-8")), len(data) - (2 if shelled else 0)
    tokens = sum(1 for leaf in _leaves(root) if leaf.start_byte >= lo and leaf.end_byte <= hi
                 and leaf.end_byte > leaf.start_byte)
    lines = sum(1 for line in text.splitlines() if line.strip())
    return Program(text, language, root, shelled, tuple(error_lines(root, limit=50)), tokens, lines)


def _leaves(node: Node) -> list[Node]:
    out: list[Node] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if n.child_count == 0 or n.type in ("string_content", "string_fragment", "comment",
                                            "line_comment", "block_comment"):
            out.append(n)
            continue
        stack.extend(n.children)
    return out


def walk(node: Node) -> list[Node]:
    """Every node below ``node`` (itself included), pre-order."""
    out: list[Node] = []
    stack = [node]
    while stack:
        n = stack.pop()
        out.append(n)
        stack.extend(reversed(n.children))
    return out


def field_name(node: Node) -> str | None:
    """The field under which ``node`` hangs from its parent, if any."""
    parent = node.parent
    if parent is None:
        return None
    for i, child in enumerate(parent.children):
        if child.id == node.id:
            return parent.field_name_for_child(i)
    return None
