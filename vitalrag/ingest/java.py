"""Java: extract objects and raw references with tree-sitter.

Objects: the file; classes (records too), interfaces (annotation types too) and
enums, nested and local ones qualified ``Outer.Inner``; methods and
constructors (kind ``method``); JUnit 4/5 test methods (``@Test``,
``@ParameterizedTest``, ``@RepeatedTest``, ``@TestFactory``, ``@TestTemplate``;
JUnit 3 ``public void testX()`` in a ``TestCase`` subclass) as kind ``test``.
Members of anonymous classes and enum-constant bodies are not objects; what
they call is attributed to the enclosing object.

Overloads are told apart by parameter types in the qualname, written as in the
source with type arguments and annotations dropped: ``Foo.print(Object,Appendable,boolean)``,
``Foo.of(String...)``, ``Foo.sum(int[])``, ``Foo.put(Map.Entry)``. A constructor is
``Foo.Foo(String)``; ``name`` is always the bare name.

Lines are the declaration node's lines: annotations and modifiers included, the
Javadoc before them not (it is the ``docstring``, markers stripped). The
signature is the declaration text before the body, whitespace collapsed.

Definitions come from the ``@definition.*`` captures of ``queries/java-tags.scm``
and imports from its ``@reference.import`` captures; calls and type uses are
walked in the tree so that each one knows its scope (locals, parameters,
anonymous classes). Raw references (``FileFacts.refs``), resolved by
``vitalrag.ingest.java_resolve``:

- ``import``: ``name`` the dotted target; ``data``: ``static``, ``ondemand``.
- ``inherit``: source the type, ``name`` the erased supertype as written; ``data``: ``rel``.
- ``call``: ``data``: ``mode`` (``call``, ``new``, ``this``, ``super``, ``ref``
  for method references), ``n`` (method name or type), ``recv`` (receiver, see
  ``java_walk.ReferenceWalker.encode``), ``args`` (count, None for method references),
  ``argv`` (argument encodings), ``cls`` (innermost named class id), ``anon``
  (enclosing anonymous classes, innermost first: supertype and own method names).
- ``reference``: a type written in a field, parameter, return, throws or local declaration.

``FileFacts.data``: ``package``, ``types`` (per type: id, name, qualname, kind,
decl, outer, tparams with bounds, fields) and ``methods`` (per method: id, name, cls, params,
varargs, returns, static, tparams, ctor).
"""

from __future__ import annotations

import posixpath

from tree_sitter import Node, QueryCursor

from vitalrag.ingest.facts import FileFacts, RawRef, content_hash, dedupe_ids
from vitalrag.ingest.java_resolve import INDEX_REF_KINDS, index_view, resolve, resolve_each, resolve_parts
from vitalrag.ingest.java_syntax import TYPE_DECLS, annotation_names, erase, formal_params, javadoc, modifiers
from vitalrag.ingest.java_walk import ReferenceWalker
from vitalrag.ingest.languages import parser, tags_query_for
from vitalrag.ingest.treesitter import end_line, header, start_line, syntax_problem, text
from vitalrag.model import CodeObject, file_id, object_id

__all__ = ["INDEX_REF_KINDS", "extract", "index_view", "resolve", "resolve_each", "resolve_parts"]

#: tag-query capture -> object kind
_KINDS = {
    "definition.class": "class",
    "definition.interface": "interface",
    "definition.enum": "enum",
    "definition.method": "method",
    "definition.constructor": "method",
}
#: the tag-query captures extraction reads
_CAPTURES = (*_KINDS, "reference.import")
_TEST_ANNOTATIONS = frozenset({"Test", "ParameterizedTest", "RepeatedTest", "TestFactory", "TestTemplate"})


def extract(repo: str, path: str, text_: str) -> FileFacts:
    """Objects and raw references of one Java file."""
    source = text_.encode("utf-8")
    lines = text_.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    fid = file_id(repo, path)
    root = parser("java").parse(source).root_node
    package = ""
    pkg = next((c for c in root.named_children if c.type == "package_declaration"), None)
    if pkg is not None:
        name = next((c for c in pkg.named_children if c.type in ("identifier", "scoped_identifier")), None)
        package = "".join(text(name).split())
    captures = QueryCursor(tags_query_for("java", _CAPTURES)).captures(root)
    params_of: dict[int, tuple[list[tuple[str, str]], bool]] = {}
    objects, parents, by_node = _definitions(repo, path, source, lines, captures, params_of)
    walker = ReferenceWalker(fid, by_node, parents, params_of)
    walker.refs.extend(_imports(fid, captures))
    walker.walk(root)
    fobj = CodeObject(
        id=fid, kind="file", name=posixpath.basename(path), qualname=path, repo=repo, path=path,
        language="java", start_line=1, end_line=max(1, len(lines)), content_hash=content_hash(text_),
    )
    problem = syntax_problem(root)
    return FileFacts(
        path=path, language="java", file=fobj, objects=objects, parents=parents, refs=walker.refs,
        namespace=package, package_dir=posixpath.dirname(path) if pkg is not None else None,
        package_name=package, problems=[problem] if problem else [],
        data={"package": package, "types": walker.types, "methods": walker.methods},
        text=text_,
    )


def _definitions(repo: str, path: str, source: bytes, lines: list[str], captures: dict[str, list[Node]],
                 params_of: dict[int, tuple[list[tuple[str, str]], bool]],
                 ) -> tuple[list[CodeObject], dict[str, str], dict[int, CodeObject]]:
    """Objects in source order, their containers, and the object of each declaration
    node; ``params_of`` gets each method's ``formal_params`` (the walk reuses them)."""
    fid = file_id(repo, path)
    found: list[tuple[Node, str]] = []
    for capture, kind in _KINDS.items():
        found.extend((n, kind) for n in captures.get(capture, ()))
    found.sort(key=lambda nk: nk[0].start_byte)
    kinds = {n.id: k for n, k in found}
    qual: dict[int, str] = {}  # node id -> qualname (before dedupe), for nesting
    pending: list[tuple[Node, CodeObject, int | None]] = []
    for node, kind in found:
        parent, crosses_anon = _enclosing_definition(node, kinds)
        if crosses_anon or (parent is not None and parent.id not in qual):
            continue  # a member of an anonymous class: not an object
        name = text(node.child_by_field_name("name"))
        outer_type = parent
        while outer_type is not None and outer_type.type not in TYPE_DECLS:
            outer_type, _ = _enclosing_definition(outer_type, kinds)
        prefix = qual[outer_type.id] + "." if outer_type is not None else ""
        if kind == "method":
            params_of[node.id] = params = formal_params(node)
            qualname = f"{prefix}{name}({','.join(p for p, _ in params[0])})"
            if _is_test(node, outer_type):
                kind = "test"
        else:
            qualname = prefix + name
        qual[node.id] = qualname
        first, last = start_line(node), end_line(node)
        pending.append((node, CodeObject(
            id=object_id(repo, path, qualname), kind=kind, name=name, qualname=qualname,
            repo=repo, path=path, language="java", start_line=first, end_line=last,
            signature=header(node, node.child_by_field_name("body"), source).rstrip(";").rstrip(),
            docstring=javadoc(node),
            content_hash=content_hash("\n".join(lines[first - 1:last])),
        ), parent.id if parent is not None else None))
    # ids are final before the walk, which records references by them
    final = dedupe_ids([obj for _, obj, _ in pending])
    by_node = {node.id: obj for (node, _, _), obj in zip(pending, final)}
    parents = {obj.id: by_node[parent_id].id if parent_id is not None else fid
               for (_, _, parent_id), obj in zip(pending, final)}
    return final, parents, by_node


def _enclosing_definition(node: Node, kinds: dict[int, str]) -> tuple[Node | None, bool]:
    """The nearest enclosing definition, and whether an anonymous class body lies between."""
    crosses_anon = False
    p = node.parent
    while p is not None:
        if p.id in kinds:
            return p, crosses_anon
        if p.type == "class_body" and p.parent is not None and p.parent.type in (
                "object_creation_expression", "enum_constant"):
            crosses_anon = True
        p = p.parent
    return None, crosses_anon


def _is_test(node: Node, outer_type: Node | None) -> bool:
    if node.type != "method_declaration":
        return False
    if any(a in _TEST_ANNOTATIONS for a in annotation_names(node)):
        return True
    # JUnit 3: public void testX() in a TestCase subclass
    name = text(node.child_by_field_name("name"))
    if outer_type is None or not name.startswith("test") or "public" not in modifiers(node):
        return False
    sup = outer_type.child_by_field_name("superclass")
    plist = node.child_by_field_name("parameters")
    return (sup is not None and bool(sup.named_children) and erase(sup.named_children[0]).endswith("TestCase")
            and plist is not None and plist.named_child_count == 0)


def _imports(fid: str, captures: dict[str, list[Node]]) -> list[RawRef]:
    out = []
    # in source order: a captures() list is not (its order varies from one parse to the next)
    for node in sorted(captures.get("reference.import", ()), key=lambda n: n.start_byte):
        name_node = next((c for c in node.named_children if c.type in ("identifier", "scoped_identifier")), None)
        if name_node is None:
            continue
        static = any(c.type == "static" for c in node.children)
        ondemand = any(c.type == "asterisk" for c in node.children)
        out.append(RawRef("import", fid, "".join(text(name_node).split()), start_line(node),
                          {"static": static, "ondemand": ondemand}))
    return out
