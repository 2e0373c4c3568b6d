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

One walk of the tree (``walk.ReferenceWalker``) makes the objects as it
meets their declarations (the declarations ``queries/java-tags.scm`` marks
``@definition.*``; a test checks that the two agree) and finds the imports, calls
and type uses, each knowing its scope (locals, parameters, anonymous classes).
What ``resolution`` reads of them (the file's ``JavaFacts``, the references'
details) is typed in ``facts``.
"""

from __future__ import annotations

import posixpath

from tree_sitter import Node

from vitalrag.ingest.facts import FileFacts, IdSuffixes
from vitalrag.ingest.lang import parser
from vitalrag.ingest.lang.java.facts import JavaFacts
from vitalrag.ingest.lang.java.syntax import (
    DECLARATION_KINDS,
    TYPE_DECLS,
    annotation_names,
    erase,
    formal_params,
    javadoc,
    modifiers,
)
from vitalrag.ingest.lang.java.walk import ReferenceWalker
from vitalrag.ingest.lang.limits import NO_DEADLINE, Deadline
from vitalrag.ingest.lang.treesitter import end_line, header, start_line, syntax_problem, text
from vitalrag.kernel.text import content_hash
from vitalrag.model import CodeObject, file_id, object_id

__all__ = ["extract"]

_TEST_ANNOTATIONS = frozenset({"Test", "ParameterizedTest", "RepeatedTest", "TestFactory", "TestTemplate"})


def extract(repo: str, path: str, text_: str, deadline: Deadline = NO_DEADLINE) -> FileFacts[JavaFacts]:
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
    walker = ReferenceWalker(fid, _Definer(repo, path, source, lines).define, deadline)
    walker.walk(root)
    fobj = CodeObject(
        id=fid, kind="file", name=posixpath.basename(path), qualname=path, repo=repo, path=path,
        language="java", start_line=1, end_line=max(1, len(lines)), content_hash=content_hash(text_),
    )
    problem = syntax_problem(root)
    return FileFacts(
        path=path, language="java", file=fobj, data=JavaFacts(package, walker.types, walker.methods),
        objects=walker.objects, parents=walker.parents,
        refs=walker.imports + walker.refs,
        namespace=package, package_dir=posixpath.dirname(path) if pkg is not None else None,
        package_name=package, problems=[problem] if problem else [],
        text=text_,
    )


class _Definer:
    """Makes the objects of one file's declarations, in source order (the walk's):
    qualnames nest under the enclosing type's, and a second object of one id gets
    a ``#2`` suffix (``facts.IdSuffixes``), which the names nested in it do not
    repeat."""

    def __init__(self, repo: str, path: str, source: bytes, lines: list[str]) -> None:
        self.repo = repo
        self.path = path
        self.source = source
        self.lines = lines
        self.suffixes = IdSuffixes()
        self.qual: dict[str, str] = {}  # type id -> its qualname before the suffix
        self.type_nodes: dict[str, Node] = {}  # type id -> its declaration

    def define(self, node: Node, t: str, name: str, parent: str, cls: str | None,
               ) -> tuple[CodeObject, tuple[list[tuple[str, str]], bool] | None]:
        kind = DECLARATION_KINDS[t]
        prefix = self.qual[cls] + "." if cls is not None else ""
        params = None
        if kind == "method":
            params = formal_params(node)
            qualname = f"{prefix}{name}({','.join(p for p, _ in params[0])})"
            if t == "method_declaration" and _is_test(node, self.type_nodes.get(cls) if cls is not None else None):
                kind = "test"
        else:
            qualname = prefix + name
        bare = qualname
        oid, qualname = self.suffixes(object_id(self.repo, self.path, qualname), qualname)
        if t in TYPE_DECLS:
            self.qual[oid] = bare
            self.type_nodes[oid] = node
        first, last = start_line(node), end_line(node)
        obj = CodeObject(
            id=oid, kind=kind, name=name, qualname=qualname, repo=self.repo, path=self.path, language="java",
            start_line=first, end_line=last,
            signature=header(node, node.child_by_field_name("body"), self.source).rstrip(";").rstrip(),
            docstring=javadoc(node), content_hash=content_hash("\n".join(self.lines[first - 1:last])),
        )
        return obj, params


def _is_test(node: Node, outer_type: Node | None) -> bool:
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
