"""Rust: module paths from file paths, ``mod``/``use`` resolution, ``#[test]`` functions.

A file's module path follows cargo's layout: under the nearest ``src/`` folder,
``lib.rs``/``main.rs`` are ``crate``, ``a/mod.rs`` and ``a.rs`` are ``crate::a``,
``a/b.rs`` is ``crate::a::b``; ``src/bin/*`` and files outside ``src/`` (tests,
examples, benches, build scripts) are crate roots of their own. That path is the
file's ``namespace``; Rust has no package folders, so no module nodes.

``mod foo;`` imports the file of module ``foo``. ``use`` paths starting with
``crate``, ``self``, ``super`` or a child module of the current one resolve
through the module table to the named item when its module file defines
exactly one top-level item of that name, else to the module file; other paths
(``std``, dependencies) are external.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from tree_sitter import Node

from vitalrag.ingest.facts import Fact, FileFacts, RawRef, RefDetail, Resolution
from vitalrag.ingest.lang.tags.extraction import Candidate, Support
from vitalrag.ingest.lang.tags.index import ObjectIndex, call_target, leave_open, link, one
from vitalrag.ingest.lang.treesitter import start_line, text
from vitalrag.model import CodeObject

_TEST_ATTR = re.compile(r"^#\[\s*(?:[\w:]*::)?test\s*[\](]")
_DOC_LINE = re.compile(r"^///(?!/) ?")
_DOC_BLOCK = re.compile(r"^/\*\*(?!\*)|\*/$")
#: what ``_walk`` answers for a path into another crate (``std``, a dependency)
_EXTERNAL = "external"


@dataclass(frozen=True, slots=True)
class RustFacts(Fact):
    """A Rust file's ``FileFacts.data``: its crate root key and module path (``module_path``)."""

    crate: str
    module: list[str]


@dataclass(frozen=True, slots=True)
class RustImport(RefDetail):
    """A ``use`` path (``mod`` False) or a ``mod x;`` declaration (``mod`` True)."""

    #: the ``as`` name of a ``use``
    alias: str | None
    #: the inline ``mod`` blocks around it, outermost first
    scope: list[str]
    mod: bool = False


FACT_TYPES: tuple[type, ...] = (RustFacts, RustImport)


def _docstring(comments: list[str]) -> str:
    lines: list[str] = []
    for c in comments:
        c = c.rstrip("\n")
        if _DOC_LINE.match(c):
            lines.append(_DOC_LINE.sub("", c))
        elif c.startswith("/**") and not c.startswith("/***"):
            lines.extend(re.sub(r"^\s*\* ?", "", x) for x in _DOC_BLOCK.sub("", c).splitlines())
    return "\n".join(lines).strip()


def _has_test_attribute(node: Node) -> bool:
    prev = node.prev_sibling
    while prev is not None and prev.type in ("attribute_item", "line_comment", "block_comment"):
        if prev.type == "attribute_item" and _TEST_ATTR.match(text(prev)):
            return True
        prev = prev.prev_sibling
    return False


def _refine(cand: Candidate, path: str) -> Candidate | None:
    if cand.kind == "function" and _has_test_attribute(cand.node):
        cand.kind = "test"
    return cand


def _call_name(node: Node) -> str | None:
    if node.type == "identifier":
        return text(node)
    if node.type == "scoped_identifier":
        return re.sub(r"\s+", "", text(node))
    return None


def module_path(path: str) -> tuple[str, list[str]]:
    """(crate root key, module path segments) of a file."""
    parts = path.split("/")
    stem = posixpath.splitext(parts[-1])[0]
    src = max((i for i, p in enumerate(parts[:-1]) if p == "src"), default=-1)
    rel = parts[src + 1:]
    if src < 0 or (len(rel) > 1 and rel[0] == "bin"):
        return path, ["crate"]
    root = "/".join(parts[:src + 1])
    dirs = rel[:-1]
    if not dirs and stem in ("lib", "main"):
        return root, ["crate"]
    if stem == "mod":
        return root, ["crate", *dirs]
    return root, ["crate", *dirs, stem]


def _use_paths(node: Node, prefix: list[str]) -> list[tuple[list[str], str | None]]:
    """The (segments, alias) pairs one use tree names."""
    t = node.type
    if t in ("identifier", "crate", "self", "super", "scoped_identifier", "metavariable"):
        return [(prefix + re.sub(r"\s+", "", text(node)).split("::"), None)]
    if t == "use_as_clause":
        path, alias = node.child_by_field_name("path"), node.child_by_field_name("alias")
        return [(prefix + re.sub(r"\s+", "", text(path)).split("::"), text(alias) or None)]
    if t == "use_wildcard":
        inner = node.named_children[0] if node.named_children else None
        base = re.sub(r"\s+", "", text(inner)).split("::") if inner is not None else []
        return [(prefix + base + ["*"], None)]
    if t == "use_list":
        return [p for child in node.named_children for p in _use_paths(child, prefix)]
    if t == "scoped_use_list":
        path, items = node.child_by_field_name("path"), node.child_by_field_name("list")
        base = prefix + (re.sub(r"\s+", "", text(path)).split("::") if path is not None else [])
        return _use_paths(items, base) if items is not None else []
    return []


def _annotate(root: Node, facts: FileFacts[RustFacts]) -> RustFacts:
    crate, segments = module_path(facts.path)
    facts.namespace = "::".join(segments)
    # (node, the names of the inline ``mod`` blocks around it, outermost first): carried
    # down, as walking up from each node costs the depth squared (tree-sitter finds a
    # parent from the root down); the references of one block share its list
    top: list[str] = []
    stack = [(child, top) for child in reversed(root.named_children)]
    while stack:
        node, scope = stack.pop()
        if node.type == "mod_item":
            body = node.child_by_field_name("body")
            if body is None:
                facts.refs.append(RawRef("import", facts.file.id, text(node.child_by_field_name("name")),
                                         start_line(node), RustImport(None, scope, mod=True)))
            else:
                inner = [*scope, text(node.child_by_field_name("name"))]
                stack.extend((child, inner) for child in reversed(body.named_children))
        elif node.type == "use_declaration":
            arg = node.child_by_field_name("argument")
            if arg is None:
                continue
            for segs, alias in _use_paths(arg, []):
                facts.refs.append(RawRef("import", facts.file.id, "::".join(segs), start_line(node),
                                         RustImport(alias, scope)))
    return RustFacts(crate, segments)


SUPPORT = Support(
    wrappers=frozenset(),
    comments=frozenset({"line_comment", "block_comment"}),
    docstring=_docstring,
    refine=_refine,
    call_name=_call_name,
    annotate=_annotate,
    attributes=frozenset({"attribute_item"}),
)


def prepare(repo: str, facts: list[FileFacts[RustFacts]]) -> None:
    """Nothing needs every file before the graph is built."""


@dataclass(slots=True)
class _Target:
    """Where a path leads: a module file, and maybe one item in it."""

    file: FileFacts[RustFacts]
    item: CodeObject | None = None
    rest: tuple[str, ...] = ()


class _Modules:
    def __init__(self, facts: list[FileFacts[RustFacts]]) -> None:
        self.table: dict[tuple[str, tuple[str, ...]], FileFacts[RustFacts]] = {}
        # ``lib.rs`` sorts before ``main.rs``: the library is the crate others name
        for f in sorted(facts, key=lambda f: f.path):
            key = (f.data.crate, tuple(f.data.module))
            self.table.setdefault(key, f)

    def get(self, crate: str, segments: list[str]) -> FileFacts[RustFacts] | None:
        return self.table.get((crate, tuple(segments)))


def _walk(f: FileFacts[RustFacts], segs: list[str], scope: list[str], modules: _Modules,
          index: ObjectIndex[RustFacts]) -> _Target | None | str:
    """Resolve a path as written in ``f``: a target, None (missing), or "external"."""
    crate = f.data.crate
    here = list(f.data.module)
    if not segs:
        return None
    if segs[0] == "crate":
        base, rest = ["crate"], segs[1:]
    elif segs[0] in ("self", "super"):
        base, rest = here, list(segs)
        while rest and rest[0] in ("self", "super"):
            if rest.pop(0) == "super":
                if scope:
                    scope = scope[:-1]
                elif len(base) > 1:
                    base = base[:-1]
                else:
                    return None
        if scope:  # still inside an inline module: its items live in this file
            return _Target(f, None, tuple(scope + rest))
    elif modules.get(crate, here + [segs[0]]) is not None:
        base, rest = here, list(segs)
    else:
        return _EXTERNAL
    module = modules.get(crate, base)
    if module is None:
        return None
    consumed = False
    while rest and (child := modules.get(crate, base + [rest[0]])) is not None:
        base, module, consumed = base + [rest.pop(0)], child, True
    if not rest or rest[0] in ("*", "self"):
        return _Target(module)
    item = one([o for o in index.top_level(module.path, rest[0]) if o.kind != "method"])
    if item is None and not consumed and segs[0] == "crate":
        return None
    return _Target(module, item, tuple(rest[1:]))


def resolve(repo: str, facts: list[FileFacts[RustFacts]]) -> Resolution:
    res = Resolution()
    index = ObjectIndex(facts)
    modules = _Modules(facts)
    for f in facts:
        bound: dict[str, _Target] = {}
        outside: set[str] = set()  # names a ``use`` of another crate binds
        for ref in f.refs:
            if isinstance(ref.data, RustImport):
                _resolve_import(f, ref, ref.data, modules, index, bound, outside, res)
        for ref in f.refs:
            if ref.kind == "call":
                _resolve_call(f, ref, modules, index, bound, outside, res)
    return res


#: what a call may name without a ``use``: the prelude's functions and constructors
_PRELUDE = frozenset({"Some", "None", "Ok", "Err", "drop", "Box", "Vec", "String", "Option", "Result",
                      "Default", "From", "Into", "Iterator"})


def _resolve_import(f: FileFacts[RustFacts], ref: RawRef, imp: RustImport, modules: _Modules,
                    index: ObjectIndex[RustFacts], bound: dict[str, _Target], outside: set[str],
                    res: Resolution) -> None:
    fid = f.file.id
    scope = imp.scope
    if imp.mod:
        if scope:
            return  # ``mod x;`` inside an inline module: a path attribute territory, rare
        target = modules.get(f.data.crate, [*f.data.module, ref.name])
        if target is None:
            leave_open(res, fid, "IMPORTS", ref.name, ref.line, "missing-module")
        else:
            link(res, fid, target.file.id, "IMPORTS", ref.line)
        return
    segs = ref.name.split("::")
    found = _walk(f, segs, scope, modules, index)
    if found == _EXTERNAL:
        res.external += 1
        outside.add(imp.alias or (segs[-2] if segs[-1] == "self" and len(segs) > 1 else segs[-1]))
        return
    if not isinstance(found, _Target):
        leave_open(res, fid, "IMPORTS", ref.name, ref.line, "missing-module")
        return
    if found.file is f:
        return  # ``use super::*`` from an inline test module: nothing crosses files
    link(res, fid, found.item.id if found.item is not None else found.file.file.id, "IMPORTS", ref.line)
    local = imp.alias or segs[-1]
    if local not in ("*", "self") and not found.rest:
        bound[local] = found
    elif local == "self" and len(segs) > 1:
        bound[segs[-2]] = found


def _resolve_call(f: FileFacts[RustFacts], ref: RawRef, modules: _Modules, index: ObjectIndex[RustFacts],
                  bound: dict[str, _Target], outside: set[str], res: Resolution) -> None:
    """A CALLS edge, an external call, or an unresolved reference with its reason."""
    if ref.dynamic:  # ``x.method()``, ``f()()``: the receiver's type is not known
        leave_open(res, ref.source, "CALLS", ref.name, ref.line, "dynamic-receiver")
        return
    segs = ref.name.split("::")
    if len(segs) == 1:
        imported = bound.get(segs[0])
        if imported is not None and imported.item is not None:
            call_target(res, ref.source, ref.name, ref.line, [imported.item])
            return
        local = [o for o in index.top_level(f.path, segs[0]) if o.kind in ("function", "test")]
        if local:
            call_target(res, ref.source, ref.name, ref.line, local)
        elif segs[0] in outside or segs[0] in _PRELUDE:
            res.external += 1
        else:  # a closure, a function value, a tuple struct or variant, a name we do not know
            leave_open(res, ref.source, "CALLS", ref.name, ref.line, "unknown-name")
        return
    if segs[0] == "Self" and len(segs) == 2:  # an associated function of the impl's type
        caller = index.objects.get(ref.source)
        owner = f.parents.get(caller.id) if caller is not None else None
        found = index.members(owner, segs[1]) if owner is not None and owner != f.file.id else []
        call_target(res, ref.source, ref.name, ref.line, found)
        return
    head = bound.get(segs[0])
    target: _Target | None | str
    if head is not None and head.item is None:  # a module brought in by ``use``
        item = one([o for o in index.top_level(head.file.path, segs[1]) if o.kind != "method"])
        target = _Target(head.file, item, tuple(segs[2:]))
    elif head is not None:
        target = _Target(head.file, head.item, tuple(segs[1:]))
    else:
        target = _walk(f, segs, [], modules, index)
    if target == _EXTERNAL:
        res.external += 1
        return
    if not isinstance(target, _Target) or target.file is f and target.item is None:
        leave_open(res, ref.source, "CALLS", ref.name, ref.line, "unknown-name")
        return
    _call_item(f, ref, target, index, res)


def _call_item(f: FileFacts[RustFacts], ref: RawRef, target: _Target, index: ObjectIndex[RustFacts],
               res: Resolution) -> None:
    if target.item is None:
        leave_open(res, ref.source, "CALLS", ref.name, ref.line, "unknown-name")
        return
    if not target.rest:
        call_target(res, ref.source, ref.name, ref.line, [target.item])
    elif len(target.rest) == 1 and target.item.kind in ("class", "enum", "interface"):
        # ``Type::new()``: a method of an impl in the type's own file (an impl
        # elsewhere, a trait's default method or an enum variant is not found)
        qual = f"{target.item.qualname}.{target.rest[0]}"
        found = [o for o in index.files[target.item.path].objects if o.qualname == qual]
        call_target(res, ref.source, ref.name, ref.line, found, reason_none="unknown-attribute")
    else:
        leave_open(res, ref.source, "CALLS", ref.name, ref.line, "unknown-name")
