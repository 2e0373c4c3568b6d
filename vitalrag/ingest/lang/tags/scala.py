"""Scala: packages, imports, companions, and the calls the ``packaged`` scope rules make certain.

Objects: classes (case classes too), ``object``\\ s, package objects and type
aliases are ``class`` objects, traits ``interface``\\ s, Scala 3 enums
``enum``\\ s; a ``def`` is a ``function``, in a type a ``method``. A companion
``object`` (named like a class or trait of the same file, at the same level)
makes no object of its own: its members are the type's (``Cart.empty``), as
Scala calls them. A Scala 3 ``extension (c: Cart) def total`` is named
``Cart.total`` (contained by ``Cart`` when the file defines it).

A file's package is its ``package`` clauses joined (``package a`` then
``package b`` is ``a.b``); ``import a.b.C``, ``import a.b.{C, D => E}``,
``import a.b.C as E`` import names, ``import a.b._`` and ``a.b.*`` a whole
package (or a type's members), wherever the import stands in the file.

Tests: ``@Test`` methods (JUnit), and in a test file (under ``src/test/`` or
``test/``, or named ``*Test``, ``*Spec``, ``*Suite``) the blocks of ScalaTest,
munit and specs2: ``test("...") {}`` and ``it("...") {}`` (FunSuite, munit,
FunSpec), ``"..." in {}`` and ``"x" should "y" in {}`` (FlatSpec, WordSpec,
specs2), ``"..." >> {}`` (specs2), named by their text inside the groups that
prefix it (``describe("...") {}``, ``"..." should {}``, ``"..." when {}``,
``"..." - {}``).
"""

from __future__ import annotations

import re
from dataclasses import replace

from tree_sitter import Node

from vitalrag.ingest.facts import FileFacts, RawRef, Resolution
from vitalrag.ingest.lang.tags.doc_comments import c_style_docstring
from vitalrag.ingest.lang.tags.extraction import Candidate, Support
from vitalrag.ingest.lang.tags.packaged import FACT_TYPES, Imported, PackagedFacts, Scoping, resolve_packaged
from vitalrag.ingest.lang.treesitter import descendants, start_line, text

__all__ = ["FACT_TYPES", "SUPPORT", "is_test_file", "prepare", "resolve"]

_TEST_FILE = re.compile(r"(^|/)(src/test|tests?)/|(Test|Tests|Spec|Suite|Props)\.scala$")
_TESTS = frozenset({"Test", "ParameterizedTest", "RepeatedTest", "TestFactory"})
_TYPES = frozenset({"class_definition", "trait_definition"})
_DEF = re.compile(r"^(\S+\s+)*def\s")


def is_test_file(path: str) -> bool:
    return bool(_TEST_FILE.search(path))


def _unquote(s: str) -> str:
    s = s.strip()
    for quote in ('"""', '"'):
        if len(s) >= 2 * len(quote) and s.startswith(quote) and s.endswith(quote):
            return s[len(quote):-len(quote)]
    return s


def _described(node: Node) -> str:
    """``"A cart" should "add"`` -> ``A cart should add``; ``it should "x"`` -> ``it should x``."""
    if node.type == "string":
        return " ".join(_unquote(text(node)).split())
    if node.type == "infix_expression":
        left, op, right = (node.child_by_field_name(f) for f in ("left", "operator", "right"))
        parts = [_described(left) if left is not None else "", text(op), _described(right) if right is not None else ""]
        return " ".join(p for p in parts if p)
    return text(node) if node.type == "identifier" else ""


def _is_companion(node: Node) -> bool:
    """An ``object`` named like a class or trait beside it."""
    name = text(node.child_by_field_name("name"))
    parent = node.parent
    return parent is not None and any(
        c.type in _TYPES and text(c.child_by_field_name("name")) == name for c in parent.named_children)


def _annotations(node: Node) -> list[str]:
    return [text(a.child_by_field_name("name")).rsplit(".", 1)[-1] for a in node.named_children
            if a.type == "annotation"]


def _refine(cand: Candidate, path: str) -> Candidate | None:
    node = cand.node
    if cand.kind in ("test", "module"):
        if not is_test_file(path):
            return None
        name_node = node.child_by_field_name("left")
        if name_node is None:  # ``test("...") {}``: the string of the inner call
            name_node = next((n for n in node.named_children[0].named_children[-1].named_children
                              if n.type == "string"), None) if node.named_children else None
        cand.name = _described(name_node) if name_node is not None else ""
        return cand if '"' not in cand.name else None
    if node.type == "object_definition" and _is_companion(node):
        cand.kind = "impl"  # a scope: its members are the type's
    elif node.type in ("function_definition", "function_declaration"):
        if any(a in _TESTS for a in _annotations(node)):
            cand.kind = "test"
        ext = node.parent
        if ext is not None and ext.type in ("template_body", "block", "indented_block"):
            ext = ext.parent
        if ext is not None and ext.type == "extension_definition":
            params = ext.child_by_field_name("parameters")
            first = params.named_children[0] if params is not None and params.named_children else None
            kind = first.child_by_field_name("type") if first is not None else None
            if kind is not None:
                cand.owner = text(kind).split("[", 1)[0].strip()
    return cand


def _call_name(node: Node) -> str | None:
    if node.type == "generic_function":
        inner = node.child_by_field_name("function")
        return _call_name(inner) if inner is not None else None
    if node.type in ("identifier", "type_identifier"):
        return text(node)
    if node.type == "generic_type":
        inner = node.child_by_field_name("type")
        return _call_name(inner) if inner is not None else None
    if node.type == "stable_type_identifier":
        return "".join(text(node).split())
    if node.type == "field_expression":
        obj, field = node.child_by_field_name("value"), node.child_by_field_name("field")
        if obj is None or field is None:
            return None
        if obj.type == "identifier":
            return f"{text(obj)}.{text(field)}"
    return None


def _import_refs(node: Node, facts: FileFacts[PackagedFacts]) -> None:
    path = ".".join(text(p) for p in node.children_by_field_name("path") if p.is_named)
    line = start_line(node)
    last = node.named_children[-1] if node.named_children else None
    selectors = [last] if last is not None and last.type in ("as_renamed_identifier", "namespace_wildcard") else (
        last.named_children if last is not None and last.type == "namespace_selectors" else [])
    if not selectors:  # ``import a.b.C``
        facts.refs.append(RawRef("import", facts.file.id, path, line, Imported()))
        return
    whole = False
    for sel in selectors:
        if sel.type == "namespace_wildcard" and not whole:  # ``{given, *}`` is one package
            whole = True
            facts.refs.append(RawRef("import", facts.file.id, path, line, Imported(whole=True)))
        elif sel.type == "identifier":
            facts.refs.append(RawRef("import", facts.file.id, f"{path}.{text(sel)}", line, Imported()))
        elif sel.type in ("arrow_renamed_identifier", "as_renamed_identifier"):
            name, alias = sel.child_by_field_name("name"), sel.child_by_field_name("alias")
            if name is None or alias is None or alias.type == "wildcard":  # ``C => _`` hides C
                continue
            facts.refs.append(RawRef("import", facts.file.id, f"{path}.{text(name)}", line, Imported(text(alias))))


def _annotate(root: Node, facts: FileFacts[PackagedFacts]) -> PackagedFacts:
    package = ".".join("".join(text(c.child_by_field_name("name")).split()) for c in root.named_children
                       if c.type == "package_clause" and c.child_by_field_name("name") is not None)
    for node in descendants(root, frozenset({"import_declaration"})):
        _import_refs(node, facts)
    lines = facts.text.split("\n")
    objects = []
    for o in facts.objects:
        if o.kind == "test" and not _DEF.match(o.signature):  # a test block: its first line
            o = replace(o, signature=lines[o.start_line - 1].strip().removesuffix("{").rstrip())
        elif o.kind in ("function", "method", "test"):  # ``def f(): Int = expr`` has no block
            o = replace(o, signature=o.signature.removesuffix("=").rstrip())
        objects.append(o)
    facts.objects = objects
    facts.namespace = package
    return PackagedFacts(package)


SUPPORT = Support(
    wrappers=frozenset(),
    comments=frozenset({"comment", "block_comment"}),
    docstring=c_style_docstring,
    refine=_refine,
    call_name=_call_name,
    annotate=_annotate,
    attributes=frozenset(),
)

_SCOPING = Scoping(implicit_self=True)


def prepare(repo: str, facts: list[FileFacts[PackagedFacts]]) -> None:
    """Nothing needs every file before the graph is built."""


def resolve(repo: str, facts: list[FileFacts[PackagedFacts]]) -> Resolution:
    return resolve_packaged(repo, facts, _SCOPING)
