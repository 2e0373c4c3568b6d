"""Small helpers over tree-sitter nodes shared by the language extractors."""

from __future__ import annotations

from collections.abc import Iterator

from tree_sitter import Node


def text(node: Node | None) -> str:
    if node is None:
        return ""
    raw = node.text  # a new slice of the source on every access: read it once
    return "" if raw is None else raw.decode("utf-8", "replace")


def start_line(node: Node) -> int:
    return node.start_point[0] + 1


def end_line(node: Node) -> int:
    """1-based last line; a node ending at column 0 ends on the line before."""
    row, col = node.end_point
    if col == 0 and row > node.start_point[0]:
        return row
    return row + 1


def header(node: Node, body: Node | None, source: bytes, limit: int = 400) -> str:
    """The declaration text before ``body``, whitespace collapsed: a signature.

    No space after an opening or before a closing bracket, no trailing comma
    before ``)``. (String methods: a whitespace run is one space after the
    split, so each bracket rule is one ``replace``.)"""
    end = body.start_byte if body is not None else node.end_byte
    sig = " ".join(source[node.start_byte:end].decode("utf-8", "replace").split()).rstrip(":{").strip()
    if " " in sig:
        sig = (sig.replace(" )", ")").replace(" ]", "]").replace(" >", ">")
               .replace("( ", "(").replace("[ ", "[").replace("< ", "<"))
    sig = sig.replace(",)", ")")
    return sig if len(sig) <= limit else sig[: limit - 3] + "..."


def error_lines(root: Node, limit: int = 10) -> list[int]:
    """Lines of ERROR / MISSING nodes, first ``limit`` of them."""
    if not root.has_error:
        return []
    out: list[int] = []
    stack = [root]
    while stack and len(out) < limit:
        n = stack.pop()
        if n.is_error or n.is_missing:
            out.append(start_line(n))
            continue
        if n.has_error:
            stack.extend(reversed(n.children))
    return sorted(set(out))


def descendants(node: Node, types: frozenset[str], stop: frozenset[str] = frozenset()) -> Iterator[Node]:
    """Pre-order descendants of given types, not entering ``stop`` types below the root."""
    stack = list(reversed(node.children))
    while stack:
        n = stack.pop()
        if n.type in types:
            yield n
        if n.type in stop:
            continue
        stack.extend(reversed(n.children))


def inside_error(node: Node) -> bool:
    """Whether an ERROR node encloses ``node`` (tree-sitter's recovery region)."""
    up = node.parent
    while up is not None:
        if up.type == "ERROR":
            return True
        up = up.parent
    return False


def syntax_problem(root: Node) -> str | None:
    lines = error_lines(root)
    if not lines:
        return None
    shown = ", ".join(map(str, lines))
    return f"syntax errors at line(s) {shown}: indexed what tree-sitter recovered"
