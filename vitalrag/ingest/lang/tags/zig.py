"""Zig: containers, ``@import``, ``self`` and container members, test blocks.

Objects: ``const Name = struct { ... }`` (and ``union``, ``opaque``) is a
``class`` object, ``enum`` and ``error{...}`` sets are ``enum`` objects, a
``fn`` inside a container a ``method`` of it (``Cart.total``), elsewhere a
``function``; every ``test "..." { }`` block (and ``test name { }``) is a
``test``, wherever it is (Zig keeps tests beside the code; ``test f`` is
named ``test f``). ``///`` comments
are the docstrings. A file is itself a container: its top-level functions are
its members.

Imports: ``@import("x.zig")`` names the file relative to the importing one
(missing: ``missing-module``); ``@import("std")``, ``"builtin"`` and the
packages a build file names are external. ``const x = @import("x.zig")`` binds
``x`` to that file, ``const T = @import("x.zig").T`` binds ``T`` to its
declaration ``T``.

Calls resolve when certain: ``f()`` to a function of the enclosing containers
(innermost first, then the file); ``self.f()`` to a member of the container
the method is in; ``T.f()`` and ``Self.f()`` (any name bound to ``@This()``)
to a member of a container of this file or of one bound by an import;
``x.f()``/``x.T.f()`` through an imported file. ``std`` and the other
external imports' calls are external; a method of any other value stays
unresolved (``dynamic-receiver``), a member a container does not define
``unknown-attribute``, a bare name no container in reach defines
``unknown-name``. Builtins (``@intCast``) are not calls.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, replace

from tree_sitter import Node

from vitalrag.ingest.facts import Fact, FileFacts, RawRef, RefDetail, Resolution
from vitalrag.ingest.lang.tags.extraction import Candidate, Support
from vitalrag.ingest.lang.tags.index import ObjectIndex, call_target, leave_open, link
from vitalrag.ingest.lang.treesitter import descendants, start_line, text
from vitalrag.model import TYPE_KINDS, CodeObject

_NAME = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


@dataclass(frozen=True, slots=True)
class ZigFacts(Fact):
    """A Zig file's ``FileFacts.data``."""

    #: names bound to ``@This()``, with the qualified name of the container they mean ("" for the file)
    this: dict[str, str]


@dataclass(frozen=True, slots=True)
class ZigImport(RefDetail):
    #: the name the import is bound to (``const x = @import(...)``)
    alias: str | None
    #: the declaration of the file it names (``@import("x.zig").T``)
    member: str | None


FACT_TYPES: tuple[type, ...] = (ZigFacts, ZigImport)


# --- extraction -------------------------------------------------------------------------------

def _docstring(comments: list[str]) -> str:
    lines = [re.sub(r"^/// ?", "", c.strip()) for c in comments if c.startswith("///") and not c.startswith("////")]
    return "\n".join(lines).strip()


def _refine(cand: Candidate, path: str) -> Candidate | None:
    if cand.kind == "test":  # ``test "name"``; a doctest ``test f`` is ``test f``, not ``f`` again
        written = cand.name
        cand.name = " ".join(written.strip('"').split()) if written.startswith('"') else f"test {written}"
    return cand


def _call_name(node: Node) -> str | None:
    if node.type in ("identifier", "field_expression"):
        written = re.sub(r"\s+", "", text(node))
        return written if _NAME.match(written) else None
    return None


def _import_of(node: Node | None) -> tuple[str, str | None] | None:
    """(path, member) of ``@import("path")`` or ``@import("path").member``."""
    member = None
    if node is not None and node.type == "field_expression":
        obj, m = node.child_by_field_name("object"), node.child_by_field_name("member")
        member = text(m) if m is not None else None
        node = obj
    if node is None or node.type != "builtin_function":
        return None
    if not node.named_children or text(node.named_children[0]) != "@import":
        return None
    args = node.named_children[1] if len(node.named_children) > 1 else None
    first = args.named_children[0] if args is not None and args.named_children else None
    if first is None or first.type != "string":
        return None
    return text(first).strip('"'), member


def _container_at(containers: list[CodeObject], line: int) -> str:
    inside = [c for c in containers if c.start_line <= line <= c.end_line]
    return max(inside, key=lambda c: c.start_line).qualname if inside else ""


def _annotate(root: Node, facts: FileFacts[ZigFacts]) -> ZigFacts:
    lines = facts.text.split("\n")
    containers = [o for o in facts.objects if o.kind in TYPE_KINDS]
    this: dict[str, str] = {}
    for decl in descendants(root, frozenset({"variable_declaration"})):
        names = [c for c in decl.named_children if c.type == "identifier"]
        value = decl.named_children[-1] if decl.named_children else None
        if not names or value is None:
            continue
        if value.type == "builtin_function" and value.named_children and text(value.named_children[0]) == "@This":
            this[text(names[0])] = _container_at(containers, start_line(decl))
            continue
        found = _import_of(value)
        if found is not None:
            path, member = found
            facts.refs.append(RawRef("import", facts.file.id, path, start_line(decl),
                                     ZigImport(text(names[0]), member)))
    objects = []
    for o in facts.objects:
        if o.kind in TYPE_KINDS or o.kind == "test":  # the first line, not the whole declaration
            o = replace(o, signature=lines[o.start_line - 1].strip().split("{", 1)[0].rstrip())
        objects.append(o)
    facts.objects = objects
    return ZigFacts(this)


SUPPORT = Support(
    wrappers=frozenset(),
    comments=frozenset({"comment"}),
    docstring=_docstring,
    refine=_refine,
    call_name=_call_name,
    annotate=_annotate,
)


def prepare(repo: str, facts: list[FileFacts[ZigFacts]]) -> None:
    """Nothing needs every file before the graph is built."""


# --- resolution -------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class _Scope:
    """A file, or a declaration of a file (``member``), that a name stands for."""

    file: FileFacts[ZigFacts]
    member: str = ""


def resolve(repo: str, facts: list[FileFacts[ZigFacts]]) -> Resolution:
    res = Resolution()
    index = ObjectIndex(facts)
    by_path = {f.path: f for f in facts}
    for f in facts:
        by_qualname: dict[str, list[CodeObject]] = {}
        for o in f.objects:
            by_qualname.setdefault(o.qualname, []).append(o)
        bound: dict[str, _Scope] = {}
        outside: set[str] = set()
        for ref in f.refs:
            if not isinstance(ref.data, ZigImport):
                continue
            if not ref.name.endswith(".zig"):  # ``std``, ``builtin``, a package: external
                res.external += 1
                if ref.data.alias:
                    outside.add(ref.data.alias)
                continue
            path = posixpath.normpath(posixpath.join(posixpath.dirname(f.path), ref.name))
            target = by_path.get(path)
            if target is None:
                leave_open(res, f.file.id, "IMPORTS", ref.name, ref.line, "missing-module")
                continue
            link(res, f.file.id, target.file.id, "IMPORTS", ref.line)
            if ref.data.alias:
                bound[ref.data.alias] = _Scope(target, ref.data.member or "")
        for ref in f.refs:
            if ref.kind == "call":
                _resolve_call(f, ref, index, by_qualname, bound, outside, res)
    return res


def _members(scope: _Scope, name: str) -> list[CodeObject]:
    qual = f"{scope.member}.{name}" if scope.member else name
    return [o for o in scope.file.objects if o.qualname == qual and o.kind != "test"]


def _resolve_call(f: FileFacts[ZigFacts], ref: RawRef, index: ObjectIndex[ZigFacts],
                  by_qualname: dict[str, list[CodeObject]], bound: dict[str, _Scope], outside: set[str],
                  res: Resolution) -> None:
    """A CALLS edge, an external call, or an unresolved reference with its reason."""
    if ref.dynamic:
        leave_open(res, ref.source, "CALLS", ref.name, ref.line, "dynamic-receiver")
        return
    caller = index.objects.get(ref.source)
    parent = index.objects.get(f.parents.get(ref.source, "")) if caller is not None else None
    container = parent.qualname if parent is not None and parent.kind in TYPE_KINDS else ""
    if caller is not None and caller.kind in TYPE_KINDS:
        container = caller.qualname
    parts = ref.name.split(".")
    if len(parts) == 1:
        scopes = container.split(".") if container else []
        for i in range(len(scopes), -1, -1):
            qual = ".".join([*scopes[:i], parts[0]])
            found = [o for o in by_qualname.get(qual, []) if o.kind != "test"]
            if found:
                call_target(res, ref.source, ref.name, ref.line, found)
                return
        imported = bound.get(parts[0])
        if imported is not None and imported.member:  # ``const f = @import("x.zig").f``
            call_target(res, ref.source, ref.name, ref.line, _members(_Scope(imported.file), imported.member))
            return
        # a function value, a parameter, a name we do not know
        leave_open(res, ref.source, "CALLS", ref.name, ref.line, "unknown-name")
        return
    head, rest = parts[0], parts[1:]
    if head == "self":
        if not container or len(rest) != 1:
            leave_open(res, ref.source, "CALLS", ref.name, ref.line, "dynamic-receiver")
            return
        call_target(res, ref.source, ref.name, ref.line, by_qualname.get(f"{container}.{rest[0]}", []),
                    reason_none="unknown-attribute")
        return
    if head in f.data.this:
        scope: _Scope | None = _Scope(f, f.data.this[head])
    elif head in bound:
        scope = bound[head]
    elif head in outside:
        res.external += 1
        return
    else:  # a container of this file, seen from the caller's
        scopes = container.split(".") if container else []
        quals = [".".join([*scopes[:i], head]) for i in range(len(scopes), -1, -1)]
        owner = next((q for q in quals if any(o.kind in TYPE_KINDS for o in by_qualname.get(q, []))), None)
        scope = _Scope(f, owner) if owner is not None else None
    if scope is None:  # a value: its type is not known
        leave_open(res, ref.source, "CALLS", ref.name, ref.line, "dynamic-receiver")
        return
    member = ".".join([scope.member, *rest[:-1]]) if scope.member else ".".join(rest[:-1])
    call_target(res, ref.source, ref.name, ref.line, _members(_Scope(scope.file, member), rest[-1]),
                reason_none="unknown-attribute")
