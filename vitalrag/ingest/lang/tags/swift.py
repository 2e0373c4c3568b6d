"""Swift: modules, imports, extensions, and the calls the ``packaged`` scope rules make certain.

Objects: ``class``, ``struct``, ``actor`` and ``typealias`` are ``class``
objects, ``enum`` an ``enum``, ``protocol`` an ``interface``; ``func`` is a
``function``, in a type a ``method``, as are ``init`` (named ``init``) and
computed properties (``var body: some View { ... }``). Overloads are named by
their argument labels, as Swift names them (``Cart.add(_:)``, ``Cart.add(item:)``).

An ``extension Cart`` in the file that declares ``Cart`` adds its members to
``Cart``; elsewhere it is a ``class`` object named ``Cart`` whose members
resolution treats as ``Cart``'s (``packaged``).

A file's module (its ``package``) is the folder under ``Sources/`` or
``Tests/`` (SwiftPM's layout; "" elsewhere): the files of a module see each
other's declarations. ``import Shop`` imports a module whole, ``import struct
Shop.Money`` one name. Tests: ``test*`` methods without parameters of an
``XCTestCase`` subclass, or of any class in a test file (under ``Tests/``, or
named ``*Tests.swift``, ``*Test.swift``), and Swift Testing's ``@Test`` functions.
"""

from __future__ import annotations

import re
from dataclasses import replace

from tree_sitter import Node

from vitalrag.ingest.facts import FileFacts, RawRef, Resolution
from vitalrag.ingest.lang.tags.doc_comments import c_style_docstring
from vitalrag.ingest.lang.tags.extraction import Candidate, Support
from vitalrag.ingest.lang.tags.packaged import FACT_TYPES, Imported, PackagedFacts, Scoping, resolve_packaged
from vitalrag.ingest.lang.treesitter import start_line, text

__all__ = ["FACT_TYPES", "SUPPORT", "is_test_file", "module_of", "prepare", "resolve"]

_TEST_FILE = re.compile(r"(^|/)Tests?/|Tests?\.swift$")
_MODULE = re.compile(r"(?:^|/)(?:Sources|Tests)/([^/]+)/")
_EXTENSION = re.compile(r"^(?:[\w@()]+\s+)*extension\s")
_KINDS = {"class": "class", "struct": "class", "actor": "class", "enum": "enum"}
_TYPE_DECLS = frozenset({"class_declaration", "protocol_declaration"})


def is_test_file(path: str) -> bool:
    return bool(_TEST_FILE.search(path))


def module_of(path: str) -> str:
    """SwiftPM's module of a file: ``Sources/Shop/Cart.swift`` is in ``Shop``."""
    found = _MODULE.search(path)
    return found.group(1) if found else ""


def _type_name(node: Node | None) -> str:
    """``Foo.Bar<T>`` -> ``Foo.Bar``."""
    return "".join(text(node).split("<", 1)[0].split())


def _declared(root: Node, parts: list[str]) -> bool:
    """Whether the file declares the type ``parts`` (``["Outer", "Inner"]``), not as an extension."""
    scope: Node | None = root
    for part in parts:
        if scope is None:
            return False
        scope = next((c for c in scope.named_children if c.type in _TYPE_DECLS
                      and text(c.child_by_field_name("declaration_kind")) != "extension"
                      and _type_name(c.child_by_field_name("name")) == part), None)
        scope = scope.child_by_field_name("body") if scope is not None else None
    return scope is not None


def _attributes(node: Node) -> list[str]:
    out = []
    for child in node.children:
        if child.type == "modifiers":
            for a in child.named_children:
                if a.type == "attribute" and a.named_children:
                    out.append(_type_name(a.named_children[0]).rsplit(".", 1)[-1])
    return out


def _labels(node: Node) -> str:
    """The argument labels, Swift's way: ``add(_ c: Int, to cart: Cart)`` -> ``_:to:``."""
    out = []
    for p in node.named_children:
        if p.type == "parameter":
            label = p.child_by_field_name("external_name") or p.child_by_field_name("name")
            out.append(f"{text(label)}:")
    return "".join(out)


def _in_test_class(node: Node, path: str) -> bool:
    body = node.parent
    cls = body.parent if body is not None else None
    if cls is None or cls.type != "class_declaration":
        return False
    bases = [_type_name(c) for c in cls.named_children if c.type == "inheritance_specifier"]
    return "XCTestCase" in bases or is_test_file(path)


def _refine(cand: Candidate, path: str) -> Candidate | None:
    node = cand.node
    if node.type == "class_declaration":
        kind = text(node.child_by_field_name("declaration_kind"))
        cand.name = _type_name(node.child_by_field_name("name"))
        if kind == "extension":
            root = node
            while root.parent is not None:
                root = root.parent
            if _declared(root, cand.name.split(".")):
                cand.kind = "impl"  # a scope: the members are the type's
                return cand
        cand.kind = _KINDS.get(kind, "class")
        if "." in cand.name:
            cand.owner, _, cand.name = cand.name.rpartition(".")
    elif node.type in ("function_declaration", "init_declaration"):
        cand.params = _labels(node)
        if "Test" in _attributes(node):
            cand.kind = "test"
        elif cand.name.startswith("test") and not cand.params and _in_test_class(node, path):
            cand.kind = "test"
    return cand


def _call_name(node: Node) -> str | None:
    if node.type == "simple_identifier":
        return text(node)
    # the grammar reads ``x + f(y)`` and ``!f(y)`` as ``(x + f)(y)`` and ``(!f)(y)``:
    # the callee is the rightmost operand
    rhs = node.child_by_field_name("rhs")
    if rhs is not None:
        return _call_name(rhs)
    if node.type == "prefix_expression" and node.children and node.children[0].type != ".":
        target = node.child_by_field_name("target")
        return _call_name(target) if target is not None else None
    if node.type == "user_type":  # ``Box<Int>()``
        return _type_name(node)
    if node.type == "navigation_expression":
        target, suffix = node.child_by_field_name("target"), node.child_by_field_name("suffix")
        member = suffix.child_by_field_name("suffix") if suffix is not None else None
        if target is None or member is None or member.type != "simple_identifier":
            return None
        if target.type == "self_expression":
            return f"self.{text(member)}"
        head = target if target.type == "simple_identifier" else None
        if target.type == "navigation_expression":  # ``Module.Type.f``: identifiers only
            inner = _call_name(target)
            return f"{inner}.{text(member)}" if inner and not inner.startswith("self.") else None
        return f"{text(head)}.{text(member)}" if head is not None else None
    return None


def _annotate(root: Node, facts: FileFacts[PackagedFacts]) -> PackagedFacts:
    for node in root.named_children:
        if node.type != "import_declaration":
            continue
        path = next((c for c in node.named_children if c.type == "identifier"), None)
        if path is None:
            continue
        name = "".join(text(path).split())
        # ``import struct Shop.Money`` names one declaration; ``import Shop`` a module
        kind = any(not c.is_named and c.type in ("struct", "class", "enum", "protocol", "typealias", "func",
                                                 "var", "let", "actor") for c in node.children)
        facts.refs.append(RawRef("import", facts.file.id, name, start_line(node), Imported(whole=not kind)))
    objects = []
    extensions = []
    for o in facts.objects:
        if o.kind == "class" and _EXTENSION.match(o.signature):
            extensions.append((o.id, o.qualname))
        elif o.kind in ("method", "function") and o.signature.split("{", 1)[0].rstrip() != o.signature:
            # a computed property has no body the signature stops at
            o = replace(o, signature=o.signature.split("{", 1)[0].rstrip())
        objects.append(o)
    facts.objects = objects
    module = module_of(facts.path)
    facts.namespace = module
    return PackagedFacts(module, tuple(extensions))


SUPPORT = Support(
    wrappers=frozenset(),
    comments=frozenset({"comment", "multiline_comment"}),
    docstring=c_style_docstring,
    refine=_refine,
    call_name=_call_name,
    annotate=_annotate,
    attributes=frozenset(),
)

_SCOPING = Scoping(implicit_self=True, self_words=frozenset({"self"}))


def prepare(repo: str, facts: list[FileFacts[PackagedFacts]]) -> None:
    """Nothing needs every file before the graph is built."""


def resolve(repo: str, facts: list[FileFacts[PackagedFacts]]) -> Resolution:
    return resolve_packaged(repo, facts, _SCOPING)
