"""Kotlin: packages, imports, and the calls the ``packaged`` scope rules make certain.

Objects: classes, ``object``\\ s and type aliases (``class``), interfaces, enum
classes, functions; a function in a class is a ``method``, and the functions of
a ``companion object`` are members of its class (``Cart.empty``). An extension
function ``fun Cart.describe()`` is named ``Cart.describe`` (contained by
``Cart`` when the file defines it). A file's package is its ``package``
header; ``import a.b.C`` (``as`` renames) and ``import a.b.*`` resolve through
``packaged``. Tests: functions annotated ``@Test`` (JUnit, kotlin.test).
"""

from __future__ import annotations

from tree_sitter import Node

from vitalrag.ingest.facts import FileFacts, RawRef, Resolution
from vitalrag.ingest.lang.tags.doc_comments import c_style_docstring
from vitalrag.ingest.lang.tags.extraction import Candidate, Support
from vitalrag.ingest.lang.tags.packaged import FACT_TYPES, Imported, PackagedFacts, Scoping, resolve_packaged
from vitalrag.ingest.lang.treesitter import start_line, text

__all__ = ["FACT_TYPES", "SUPPORT", "prepare", "resolve"]

_TESTS = frozenset({"Test", "ParameterizedTest", "RepeatedTest", "TestFactory"})


def _annotations(node: Node) -> list[str]:
    out = []
    for child in node.children:
        if child.type == "modifiers":
            for m in child.named_children:
                if m.type == "annotation":
                    out.append(text(m).lstrip("@").split("(", 1)[0].rsplit(".", 1)[-1].strip())
    return out


def _refine(cand: Candidate, path: str) -> Candidate | None:
    node = cand.node
    if node.type == "class_declaration":
        if any(c.type == "interface" for c in node.children):
            cand.kind = "interface"
        elif any(c.type == "modifiers" and "enum" in text(c).split() for c in node.children):
            cand.kind = "enum"
    elif node.type == "function_declaration":
        name = node.child_by_field_name("name")
        receiver = next((c for c in node.named_children if name is not None and c.end_byte <= name.start_byte
                         and c.type in ("user_type", "nullable_type")), None)
        if receiver is not None:
            cand.owner = text(receiver).split("<", 1)[0].rstrip("?").strip()
        if any(a in _TESTS for a in _annotations(node)):
            cand.kind = "test"
    return cand


def _call_name(node: Node) -> str | None:
    if node.type == "identifier":
        return text(node)
    if node.type == "navigation_expression" and node.named_child_count == 2:
        obj, member = node.named_children
        if member.type != "identifier":
            return None
        if obj.type == "this_expression":
            return f"this.{text(member)}"
        if obj.type == "identifier":
            return f"{text(obj)}.{text(member)}"
    return None


def _annotate(root: Node, facts: FileFacts[PackagedFacts]) -> PackagedFacts:
    package = ""
    for child in root.named_children:
        if child.type == "package_header" and child.named_children:
            package = "".join(text(child.named_children[0]).split())
        elif child.type == "import":
            parts = [c for c in child.named_children if c.type in ("qualified_identifier", "identifier")]
            if not parts:
                continue
            path = "".join(text(parts[0]).split())
            whole = text(child).rstrip().endswith("*")
            alias = text(parts[1]) if len(parts) > 1 and not whole else None
            facts.refs.append(RawRef("import", facts.file.id, path, start_line(child), Imported(alias, whole)))
    facts.namespace = package
    return PackagedFacts(package)


SUPPORT = Support(
    wrappers=frozenset(),
    comments=frozenset({"block_comment", "line_comment"}),
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
