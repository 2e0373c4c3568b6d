"""The shared, query-driven half of extraction for the tree-sitter languages.

The tag query (``queries/<lang>-tags.scm``) says where definitions and call
sites are; this module turns them into code objects. Nesting gives qualified
names and containers; a per-language ``Support`` adds what a query cannot say:
which functions are tests, a Go method's receiver, C# overload parameters, the
doc comment markers, and the file's imports and namespace.

Capture names follow aider: ``@definition.<kind>`` on the definition node and
``@name.definition.<kind>`` on its name. Kinds ``module`` (a TypeScript
namespace, a Rust inline ``mod``) and ``impl`` (a Rust ``impl`` block) are
scopes: they prefix qualified names but make no object. A method inside a scope
whose qualified name is a type of the same file is contained by that type.
Calls outside every definition (module-level code) are not recorded.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from tree_sitter import Node, QueryCursor

from vitalrag.ingest.facts import FileFacts, RawRef, dedupe_ids
from vitalrag.ingest.lang import parser, tags_query
from vitalrag.ingest.lang.limits import NO_DEADLINE, Deadline, check_nesting
from vitalrag.ingest.lang.treesitter import end_line, start_line, syntax_problem, text
from vitalrag.kernel.text import content_hash
from vitalrag.model import TYPE_KINDS, CodeObject, file_id, object_id, split_lines

D = TypeVar("D")

_WS = re.compile(r"\s+")
#: leading children that are not part of a signature
_PREAMBLE = frozenset({"attribute_list", "decorator", "comment"})
_SCOPES = frozenset({"module", "impl"})
_OBJECT_KINDS = frozenset({"class", "interface", "enum", "function", "method"})
#: body node types of grammars that give them no ``body`` field
_UNNAMED_BODIES = frozenset({"class_body", "function_body", "enum_class_body", "protocol_body"})
#: a function directly inside one of these is a method
_MEMBER_OF = frozenset({"class", "interface", "enum", "impl"})


@dataclass(slots=True)
class Candidate:
    """One definition found by the query, before qualified names are known.

    A language's ``refine`` may change ``kind`` (tests), set ``owner`` (the
    qualified name of the type a Go method belongs to) or ``params`` (the
    parameter types that tell C# overloads apart), or drop the candidate.
    """

    kind: str
    name: str
    node: Node
    outer: Node
    owner: str | None = None
    params: str | None = None


@dataclass(frozen=True, slots=True)
class Support(Generic[D]):
    """What one language adds to the shared extractor; ``D`` is its ``FileFacts.data``."""

    #: parent node types that belong to the definition (``export``, a one-spec ``type (...)``)
    wrappers: frozenset[str]
    #: comment node types
    comments: frozenset[str]
    #: doc text from the contiguous comments right before a definition (in order)
    docstring: Callable[[list[str]], str]
    #: adjust or drop a candidate; gets the file path too
    refine: Callable[[Candidate, str], Candidate | None]
    #: the written name of a call's callee node, or None when it is not worth resolving
    call_name: Callable[[Node], str | None]
    #: add the file's imports (references) and namespace; returns its data
    annotate: Callable[[Node, FileFacts[Any]], D]
    #: sibling node types before a definition that belong to it (Rust ``#[attr]``)
    attributes: frozenset[str] = frozenset()


@dataclass(slots=True)
class _Entry:
    cand: Candidate
    qualname: str
    #: the enclosing object's entry, None for the file
    parent: _Entry | None
    #: qualified name of the type a scope or receiver names; its container if found in the file
    owner: str | None = None
    index: int = -1  # position in ``objects`` (objects only)


def lift(node: Node, wrappers: frozenset[str]) -> Node:
    """The node with the parents that only wrap it (``export``, a one-declarator ``const``)."""
    out = node
    while out.parent is not None and out.parent.type in wrappers and out.parent.named_child_count == 1:
        out = out.parent
    # ``export`` wraps one declaration but may also hold decorators and comments
    if out.parent is not None and out.parent.type == "export_statement":
        out = out.parent
    return out


def leading_comments(node: Node, support: Support) -> list[str]:
    """The comments right before ``node`` (no blank line between), in source order."""
    out: list[str] = []
    cur = node
    prev = node.prev_sibling
    while prev is not None and prev.type in support.attributes:
        cur, prev = prev, prev.prev_sibling
    while prev is not None and prev.type in support.comments and end_line(prev) >= start_line(cur) - 1:
        out.append(text(prev))
        cur, prev = prev, prev.prev_sibling
    out.reverse()
    return out


def first_line(node: Node, support: Support) -> int:
    """Start line including leading attributes (``#[test]``)."""
    cur = node
    prev = node.prev_sibling
    while prev is not None and prev.type in support.attributes:
        cur, prev = prev, prev.prev_sibling
    return start_line(cur)


def body_of(node: Node) -> Node | None:
    """The body node, whose start ends the signature."""
    body = node.child_by_field_name("body")
    if body is not None:
        return body
    for name in ("value", "type"):
        inner = node.child_by_field_name(name)
        if inner is not None and inner.type in ("arrow_function", "function_expression"):
            return inner.child_by_field_name("body")
        if inner is not None and inner.type in ("struct_type", "interface_type"):
            return next((c for c in inner.children if c.type in ("{", "field_declaration_list")), None)
    # grammars whose bodies are children without a field name (Kotlin, Swift)
    return next((c for c in node.children if c.type in _UNNAMED_BODIES), None)


def signature(cand: Candidate, source: bytes, limit: int = 400) -> str:
    """The declaration up to its body, without attributes and decorators, whitespace collapsed."""
    start = cand.outer.start_byte
    for child in cand.outer.children:
        if child.type not in _PREAMBLE:
            start = child.start_byte
            break
    body = body_of(cand.node)
    raw = source[start:body.start_byte if body is not None else cand.outer.end_byte]
    sig = _WS.sub(" ", raw.decode("utf-8", "replace")).strip().rstrip("{").rstrip()
    sig = sig.removesuffix("=>").rstrip().removesuffix(";").rstrip()
    return sig if len(sig) <= limit else sig[: limit - 3] + "..."


def candidates(root: Node, language: str, support: Support, path: str,
               deadline: Deadline = NO_DEADLINE) -> tuple[list[Candidate], list[Node]]:
    """Definitions (source order, outer before inner) and callee nodes of the file."""
    found: list[Candidate] = []
    calls: list[Node] = []
    seen: set[int] = set()
    for _pattern, captures in QueryCursor(tags_query(language)).matches(root):
        deadline.check()
        callee = captures.get("name.reference.call")
        if callee:
            calls.append(callee[0])
            continue
        for capture, nodes in captures.items():
            if not capture.startswith("definition."):
                continue
            kind = capture.removeprefix("definition.")
            names = captures.get(f"name.{capture}")
            if not names or not nodes:
                continue
            node = nodes[0]
            if node.id in seen:
                continue
            seen.add(node.id)
            cand = Candidate(kind, text(names[0]), node, lift(node, support.wrappers))
            refined = support.refine(cand, path)
            if refined is not None and refined.name:
                found.append(refined)
    found.sort(key=lambda c: (c.node.start_byte, -c.node.end_byte))
    return found, calls


def extract_file(repo: str, path: str, text_: str, language: str, support: Support[D],
                 deadline: Deadline = NO_DEADLINE) -> FileFacts[D]:
    source = text_.encode("utf-8")
    root = parser(language).parse(source).root_node
    lines = split_lines(text_)
    fid = file_id(repo, path)
    # the data is the annotation's, made last (with the imports it reads off the whole tree)
    facts: FileFacts[Any] = FileFacts(
        path=path, language=language,
        file=CodeObject(id=fid, kind="file", name=os.path.basename(path), qualname=path, repo=repo,
                        path=path, language=language, start_line=1, end_line=len(lines),
                        content_hash=content_hash(text_)),
        data=None, text=text_,
    )
    problem = syntax_problem(root)
    if problem:
        facts.problems.append(problem)

    found, callees = candidates(root, language, support, path, deadline)
    entries = _nest(found)
    _disambiguate_overloads(entries)

    objects: list[CodeObject] = []
    for e in entries:
        deadline.check()
        if e.cand.kind in _SCOPES:
            continue
        c = e.cand
        first, last = first_line(c.outer, support), end_line(c.outer)
        e.index = len(objects)
        objects.append(CodeObject(
            id=object_id(repo, path, e.qualname), kind=c.kind, name=c.name, qualname=e.qualname, repo=repo,
            path=path, language=language, start_line=first, end_line=last,
            signature=signature(c, source),
            docstring=support.docstring(leading_comments(c.outer, support)),
            content_hash=content_hash("\n".join(lines[first - 1:last])),
        ))
    objects = dedupe_ids(objects)
    by_qualname: dict[str, int] = {}
    for e in entries:
        if e.index >= 0 and objects[e.index].kind in TYPE_KINDS:
            by_qualname.setdefault(e.qualname, e.index)
    owners: list[tuple[Node, str]] = []  # (definition node, its object's id), outer before inner
    for e in entries:
        if e.index < 0:
            continue
        parent = e.parent.index if e.parent is not None else -1
        if e.owner is not None:
            parent = by_qualname.get(e.owner, parent)
        facts.parents[objects[e.index].id] = objects[parent].id if parent >= 0 else fid
        owners.append((e.cand.node, objects[e.index].id))
    facts.objects = objects

    for callee, owner in zip(callees, _enclosing_owners(callees, owners, deadline)):
        deadline.check()
        name = support.call_name(callee)
        # a call outside every definition (module-level code, a test runner's
        # ``describe`` block) is the file's, as in Python
        source_id = owner or fid
        if name:
            facts.refs.append(RawRef("call", source_id, name, start_line(callee)))
        else:
            # a callee no name stands for (``f()()``, ``a.b().c()``, ``xs[0]()``): kept,
            # so resolution reports it as an unresolved reference rather than losing it
            shown = " ".join(text(callee).split())
            facts.refs.append(RawRef("call", source_id, shown if len(shown) <= 80 else shown[:77] + "...",
                                     start_line(callee), dynamic=True))
    facts.data = support.annotate(root, facts)
    return facts


def _nest(found: list[Candidate]) -> list[_Entry]:
    """Qualified names and containers from nesting (``found`` is outer-before-inner)."""
    entries: list[_Entry] = []
    stack: list[_Entry] = []
    for cand in found:
        while stack and stack[-1].cand.node.end_byte <= cand.node.start_byte:
            stack.pop()
        enclosing = stack[-1] if stack else None
        if cand.kind == "function" and enclosing is not None and enclosing.cand.kind in _MEMBER_OF:
            cand.kind = "method"
        # the innermost enclosing object: the enclosing entry, or past a scope its own
        parent = enclosing.parent if enclosing is not None and enclosing.cand.kind in _SCOPES else enclosing
        if cand.owner is not None:
            qualname = f"{cand.owner}.{cand.name}"
            owner: str | None = cand.owner
        else:
            prefix = enclosing.qualname if enclosing is not None else ""
            qualname = f"{prefix}.{cand.name}" if prefix else cand.name
            # a method of an ``impl`` (or any scope named like a type of this file) belongs to that type
            owner = enclosing.qualname if enclosing is not None and enclosing.cand.kind in _SCOPES else None
        entry = _Entry(cand, qualname, parent, owner)
        entries.append(entry)
        stack.append(entry)
        check_nesting(len(stack))
    return entries


def _disambiguate_overloads(entries: list[_Entry]) -> None:
    """Overloads (same qualified name, parameter types known) get the types in their name."""
    counts: dict[str, int] = {}
    for e in entries:
        if e.cand.params is not None:
            counts[e.qualname] = counts.get(e.qualname, 0) + 1
    for e in entries:
        if e.cand.params is not None and counts.get(e.qualname, 0) > 1:
            e.qualname = f"{e.qualname}({e.cand.params})"


def _enclosing_owners(callees: list[Node], owners: list[tuple[Node, str]], deadline: Deadline) -> list[str | None]:
    """The object of the innermost definition around each callee (None: none is),
    in one sweep over byte ranges: walking up from every callee costs the depth
    squared each (tree-sitter finds a node's parent from the root down), cubic
    in a file of deeply nested callbacks.

    A callee (a call's function) is never a whole ancestor: the call holds its
    arguments too. So a definition is an ancestor of a non-empty callee exactly
    when its bytes hold the callee's and more; an empty one (a missing name in
    broken code) is looked up by walking up, as no range tells."""
    spans = [(n.start_byte, n.end_byte, oid) for n, oid in owners]  # start ascending, outer first
    by_node: dict[int, str] | None = None
    found: list[str | None] = [None] * len(callees)
    open_: list[tuple[int, int, str]] = []  # definitions around the position, outer to inner
    nxt = 0
    for i in sorted(range(len(callees)), key=lambda k: callees[k].start_byte):
        deadline.check()
        callee = callees[i]
        start, end = callee.start_byte, callee.end_byte
        if start == end:
            by_node = by_node if by_node is not None else {n.id: oid for n, oid in owners}
            found[i] = _walk_up(callee, by_node)
            continue
        while nxt < len(spans) and spans[nxt][0] <= start:
            span = spans[nxt]
            nxt += 1
            while open_ and open_[-1][1] <= span[0]:
                open_.pop()
            open_.append(span)
        while open_ and open_[-1][1] <= start:
            open_.pop()
        # what is left holds the callee's start; a definition inside the callee
        # (starting where it starts) stays open for the calls within it
        found[i] = next((oid for s, e, oid in reversed(open_) if end <= e and (s, e) != (start, end)), None)
    return found


def _walk_up(node: Node, owners: dict[int, str]) -> str | None:
    cur = node.parent
    while cur is not None:
        found = owners.get(cur.id)
        if found is not None:
            return found
        cur = cur.parent
    return None

