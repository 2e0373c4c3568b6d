"""What a source file imports and where it uses the imported names.

The task builder needs, per file, the names its import statements bind (with
the lines of each statement, to match the graph's IMPORTS edges) and, per code
line, which of those names the line uses. Only names written in an import
statement count: a Java class of the same package used without an import is
not an import, and neither is a name imported inside a Python function.

- Python: ``ast`` for the module-level import statements (also inside
  module-level ``if``/``try``, e.g. ``if TYPE_CHECKING:``), ``tokenize`` for
  the names each line uses, so strings, docstrings and comments never count.
- Java: import declarations by pattern, and each line's code with comments,
  string and character literals blanked out first.

A name counts as used on a line when it appears as an identifier that is not
an attribute (``x.Name`` is not a use of an imported ``Name``). A Python line
also records the dotted chains it writes (``m.X``, ``pkg.sub.mod.X``), so that
a module import (``import httpx``, ``import pkg.mod as m``, ``from pkg import
mod``) counts as importing the module's definitions the file reaches through it.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass, field


class ImportParseError(ValueError):
    """The file's imports or tokens could not be read."""


@dataclass(frozen=True, slots=True)
class ImportBinding:
    """One name an import statement binds in the file.

    ``local`` is the name the file's code uses, ``imported`` the name of the
    thing in the module it comes from (they differ under ``as``), ``start`` and
    ``end`` the lines of the statement."""

    local: str
    imported: str
    start: int
    end: int
    #: the dotted module the statement may bind (``a.b.c`` for ``import a.b.c``
    #: and for ``from a.b import c``; relative dots left out), and the chain the
    #: code writes to reach it (``("a", "b", "c")`` after ``import a.b.c``,
    #: ``("m",)`` after ``import a.b.c as m``)
    module: str = ""
    prefix: tuple[str, ...] = ()


@dataclass(slots=True)
class FileImports:
    """A file's import section and its per-line name uses."""

    bindings: list[ImportBinding] = field(default_factory=list)
    #: every line of every import statement (the query repeats them)
    import_lines: list[int] = field(default_factory=list)
    #: the last line of the import section (0 without imports)
    end: int = 0
    #: ``from x import *`` / ``import a.b.*``: binds no name we can see
    wildcards: int = 0
    #: line -> identifiers used on it (attributes excluded)
    names_by_line: dict[int, frozenset[str]] = field(default_factory=dict)
    #: line -> dotted chains written on it, every prefix of two parts or more
    #: (``a.b.c(x)`` gives ``a.b`` and ``a.b.c``); Python only
    dotted_by_line: dict[int, frozenset[str]] = field(default_factory=dict)


def read_imports(language: str, text: str) -> FileImports:
    """The imports and name uses of one file in ``language`` (python or java)."""
    if language == "python":
        return _python(text)
    if language == "java":
        return _java(text)
    raise ImportParseError(f"no import reader for {language}")


# -- Python --------------------------------------------------------------------

def _module_level_imports(body: list[ast.stmt]) -> list[ast.Import | ast.ImportFrom]:
    out: list[ast.Import | ast.ImportFrom] = []
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out.append(node)
        elif isinstance(node, ast.If):
            out.extend(_module_level_imports(node.body))
            out.extend(_module_level_imports(node.orelse))
        elif isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            out.extend(_module_level_imports(node.body))  # type: ignore[attr-defined]
            for handler in node.handlers:  # type: ignore[attr-defined]
                out.extend(_module_level_imports(handler.body))
            out.extend(_module_level_imports(node.orelse))  # type: ignore[attr-defined]
            out.extend(_module_level_imports(node.finalbody))  # type: ignore[attr-defined]
    return out


def _python(text: str) -> FileImports:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError) as exc:
        raise ImportParseError(f"not parsable as Python: {exc}") from exc
    out = FileImports()
    lines: set[int] = set()
    for node in _module_level_imports(tree.body):
        start, end = node.lineno, node.end_lineno or node.lineno
        lines.update(range(start, end + 1))
        out.end = max(out.end, end)
        for alias in node.names:
            if alias.name == "*":
                out.wildcards += 1
                continue
            if isinstance(node, ast.ImportFrom):
                local, imported = alias.asname or alias.name, alias.name
                module = ".".join(p for p in (node.module or "", alias.name) if p)
                prefix: tuple[str, ...] = (local,)
            else:  # import a.b.c [as d]: binds d, else a
                local = alias.asname or alias.name.split(".")[0]
                imported = alias.name.rsplit(".", 1)[-1]
                module = alias.name
                prefix = (alias.asname,) if alias.asname else tuple(alias.name.split("."))
            out.bindings.append(ImportBinding(local, imported, start, end, module, prefix))
    out.import_lines = sorted(lines)
    out.names_by_line, out.dotted_by_line = _python_names(text)
    return out


def _python_names(text: str) -> tuple[dict[int, frozenset[str]], dict[int, frozenset[str]]]:
    """Per line: the names used (not attributes), and the dotted chains written."""
    found: dict[int, set[str]] = {}
    dotted: dict[int, set[str]] = {}
    prev = None
    chain: list[str] = []  # the dotted chain being read, from a name that is not an attribute
    dot = False  # the last significant token was the "." of that chain
    skip = (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT)
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type in skip:
                continue
            after_dot = prev is not None and prev.type == tokenize.OP and prev.string == "."
            if tok.type == tokenize.NAME:
                if not after_dot:
                    found.setdefault(tok.start[0], set()).add(tok.string)
                    chain = [tok.string]
                elif dot and chain:
                    chain.append(tok.string)
                    dotted.setdefault(tok.start[0], set()).add(".".join(chain))
                else:
                    chain = []
                dot = False
            elif tok.type == tokenize.OP and tok.string == "." and chain and not dot:
                dot = True
            else:
                chain, dot = [], False
            prev = tok
    except (tokenize.TokenError, IndentationError, SyntaxError) as exc:
        raise ImportParseError(f"cannot tokenize: {exc}") from exc
    return ({line: frozenset(names) for line, names in found.items()},
            {line: frozenset(names) for line, names in dotted.items()})


# -- Java ------------------------------------------------------------------------

_JAVA_IMPORT = re.compile(r"^\s*import\s+(static\s+)?([\w$]+(?:\s*\.\s*[\w$]+)*)(\s*\.\s*\*)?\s*;")
# an identifier that is not a member access (x.Name) nor part of a longer word
_JAVA_NAME = re.compile(r"(?<![\w$.])[A-Za-z_$][\w$]*")


def java_code_lines(text: str) -> list[str]:
    """Each line of ``text`` with comments and string, text-block and character
    literals replaced by spaces (line count and columns kept)."""
    out: list[str] = []
    state = "code"  # code | block | text (text block """)
    for line in text.split("\n"):
        buf: list[str] = []
        i, n = 0, len(line)
        while i < n:
            c = line[i]
            if state == "block":
                end = line.find("*/", i)
                if end < 0:
                    buf.append(" " * (n - i))
                    i = n
                else:
                    buf.append(" " * (end + 2 - i))
                    i = end + 2
                    state = "code"
            elif state == "text":
                end = line.find('"""', i)
                if end < 0:
                    buf.append(" " * (n - i))
                    i = n
                else:
                    buf.append(" " * (end + 3 - i))
                    i = end + 3
                    state = "code"
            elif line.startswith("//", i):
                buf.append(" " * (n - i))
                i = n
            elif line.startswith("/*", i):
                buf.append("  ")
                i += 2
                state = "block"
            elif line.startswith('"""', i):
                buf.append("   ")
                i += 3
                state = "text"
            elif c in "\"'":
                j = i + 1
                while j < n and line[j] != c:
                    j += 2 if line[j] == "\\" else 1
                j = min(j + 1, n)
                buf.append(c + " " * max(j - i - 2, 0) + (c if j - i >= 2 else ""))
                i = j
            else:
                buf.append(c)
                i += 1
        out.append("".join(buf))
    return out


def _java(text: str) -> FileImports:
    out = FileImports()
    code = java_code_lines(text)
    names: dict[int, frozenset[str]] = {}
    for lineno, line in enumerate(code, 1):
        m = _JAVA_IMPORT.match(line)
        if m:
            out.import_lines.append(lineno)
            out.end = lineno
            if m.group(3):
                out.wildcards += 1
                continue
            dotted = re.sub(r"\s+", "", m.group(2))
            last = dotted.rsplit(".", 1)[-1]
            out.bindings.append(ImportBinding(last, last, lineno, lineno))
            continue
        found = _JAVA_NAME.findall(line)
        if found:
            names[lineno] = frozenset(found)
    out.names_by_line = names
    return out
