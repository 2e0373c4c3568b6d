"""C#: namespaces, ``using`` resolution, overloads, and test attributes.

A file's ``namespace`` is the first innermost namespace it declares
(file-scoped or block; nested blocks joined with dots); qualified names do not repeat it
(``Greeter.Greet``), and overloads carry their parameter types like Java's
(``Greeter.Greet(string,int)``). Namespaces are not folders, so there are no
module nodes.

``using Ns.Sub;`` imports every file that declares ``Ns.Sub``; ``using static
Ns.Type;`` and ``using Alias = Ns.Type;`` import the type when exactly one such
type exists. A namespace nobody in the repository declares is external unless
it shares its first segment with a repository namespace (then it is left
unresolved as ``missing-module``).

Calls resolve when cheap and certain: ``Type.Method()`` for a type visible
through the file's namespaces and usings, ``Method()``/``this.Method()`` within
the caller's own type, and ``new Type()`` to the type; overloads stay
unresolved (``ambiguous-overload``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node

from vitalrag.ingest.facts import Fact, FileFacts, RawRef, RefDetail, Resolution
from vitalrag.ingest.lang.tags.extraction import Candidate, Support
from vitalrag.ingest.lang.tags.index import ObjectIndex, call_target, leave_open, link, one
from vitalrag.ingest.lang.treesitter import end_line, start_line, text
from vitalrag.model import TYPE_KINDS, CodeObject


@dataclass(frozen=True, slots=True)
class CSharpFacts(Fact):
    """A C# file's ``FileFacts.data``: its namespace blocks (name, first line, last line)."""

    namespaces: list[tuple[str, int, int]]


@dataclass(frozen=True, slots=True)
class Using(RefDetail):
    #: ``using Alias = Ns.Type;``
    alias: str | None
    #: ``using static Ns.Type;``
    static: bool


FACT_TYPES: tuple[type, ...] = (CSharpFacts, Using)
TEST_ATTRIBUTES = frozenset({"Test", "TestCase", "TestCaseSource", "Fact", "Theory", "TestMethod",
                             "DataTestMethod"})
_XML_TAG = re.compile(r"</?[A-Za-z][^>]*>")
_WS = re.compile(r"\s+")


def _docstring(comments: list[str]) -> str:
    lines = [c.removeprefix("///").strip() for c in comments if c.startswith("///")]
    cleaned = [_XML_TAG.sub("", line).strip() for line in lines]
    return "\n".join(line for line in cleaned if line)


def _attribute_names(node: Node) -> list[str]:
    names = []
    for child in node.children:
        if child.type == "attribute_list":
            for attr in child.named_children:
                if attr.type == "attribute":
                    name = text(attr.child_by_field_name("name")).rsplit(".", 1)[-1]
                    names.append(name.removesuffix("Attribute"))
    return names


def _refine(cand: Candidate, path: str) -> Candidate | None:
    if cand.node.type in ("method_declaration", "constructor_declaration"):
        params = cand.node.child_by_field_name("parameters")
        types = [] if params is None else [
            _WS.sub("", text(p.child_by_field_name("type"))) for p in params.named_children
            if p.type == "parameter"
        ]
        cand.params = ",".join(types)
        if any(a in TEST_ATTRIBUTES for a in _attribute_names(cand.node)):
            cand.kind = "test"
    return cand


def _call_name(node: Node) -> str | None:
    if node.type == "identifier":
        return text(node)
    if node.type == "generic_name" and node.named_children:
        return text(node.named_children[0])
    if node.type == "member_access_expression":
        obj, name = node.child_by_field_name("expression"), node.child_by_field_name("name")
        if obj is not None and name is not None and obj.type in ("identifier", "this_expression", "this"):
            member = text(name.named_children[0]) if name.type == "generic_name" else text(name)
            return f"{'this' if obj.type != 'identifier' else text(obj)}.{member}"
    if node.type == "qualified_name":
        return _WS.sub("", text(node))
    return None


def _namespace_name(node: Node) -> str:
    return _WS.sub("", text(node.child_by_field_name("name")))


def _annotate(root: Node, facts: FileFacts[CSharpFacts]) -> CSharpFacts:
    ranges: list[tuple[str, int, int]] = []  # namespace, first line, last line
    stack: list[tuple[Node, str]] = [(c, "") for c in reversed(root.named_children)]
    while stack:
        node, outer = stack.pop()
        if node.type == "file_scoped_namespace_declaration":
            name = _namespace_name(node)
            ranges.append((name, start_line(node), end_line(root)))
        elif node.type == "namespace_declaration":
            name = f"{outer}.{_namespace_name(node)}" if outer else _namespace_name(node)
            ranges.append((name, start_line(node), end_line(node)))
            body = node.child_by_field_name("body")
            if body is not None:
                stack.extend((c, name) for c in reversed(body.named_children))
        elif node.type == "using_directive":
            _using(node, facts)
    # the innermost of nested blocks (``namespace A { namespace B {...} }`` declares A.B)
    names = [r[0] for r in ranges]
    facts.namespace = next((n for n in names if not any(m.startswith(n + ".") for m in names)), "")
    return CSharpFacts(ranges)


def _using(node: Node, facts: FileFacts[CSharpFacts]) -> None:
    alias = node.child_by_field_name("name")
    target = next((c for c in node.named_children
                   if c.type in ("identifier", "qualified_name") and c != alias), None)
    if target is None:
        return
    is_static = any(c.type == "static" for c in node.children)
    facts.refs.append(RawRef("import", facts.file.id, _WS.sub("", text(target)), start_line(node),
                             Using(text(alias) if alias is not None else None, is_static)))


SUPPORT = Support(
    wrappers=frozenset(),
    comments=frozenset({"comment"}),
    docstring=_docstring,
    refine=_refine,
    call_name=_call_name,
    annotate=_annotate,
)


def prepare(repo: str, facts: list[FileFacts[CSharpFacts]]) -> None:
    """Nothing needs every file before the graph is built."""


def _namespace_of(f: FileFacts[CSharpFacts], obj: CodeObject) -> str:
    """The innermost namespace block around ``obj`` in its file ("" for the global one)."""
    best, size = "", None
    for name, first, last in f.data.namespaces:
        if first <= obj.start_line and obj.end_line <= last and (size is None or last - first < size):
            best, size = name, last - first
    return best


class _Types:
    """Top-level types by (namespace, name), and which files declare a namespace."""

    def __init__(self, facts: list[FileFacts[CSharpFacts]]) -> None:
        self.by_name: dict[tuple[str, str], list[CodeObject]] = {}
        self.files: dict[str, list[FileFacts[CSharpFacts]]] = {}
        self.roots: set[str] = set()
        for f in facts:
            for name, _first, _last in f.data.namespaces:
                declaring = self.files.setdefault(name, [])
                if not any(d.path == f.path for d in declaring):
                    declaring.append(f)
                self.roots.add(name.split(".", 1)[0])
            for o in f.objects:
                if o.kind in TYPE_KINDS and f.parents.get(o.id) == f.file.id:
                    self.by_name.setdefault((_namespace_of(f, o), o.name), []).append(o)

    def find(self, namespaces: list[str], name: str) -> list[CodeObject]:
        return [o for ns in namespaces for o in self.by_name.get((ns, name), [])]


def _split(qualified: str) -> tuple[str, str]:
    ns, _, name = qualified.rpartition(".")
    return ns, name


def resolve(repo: str, facts: list[FileFacts[CSharpFacts]]) -> Resolution:
    res = Resolution()
    index = ObjectIndex(facts)
    types = _Types(facts)
    for f in facts:
        visible = _visible_namespaces(f)
        aliases: dict[str, CodeObject] = {}
        for ref in f.refs:
            if isinstance(ref.data, Using):
                _resolve_using(f, ref, ref.data, types, visible, aliases, res)
        for ref in f.refs:
            if ref.kind == "call":
                _resolve_call(f, ref, index, types, visible, aliases, res)
    return res


def _visible_namespaces(f: FileFacts[CSharpFacts]) -> list[str]:
    """The file's namespaces with their parents, then the global namespace."""
    out: list[str] = []
    for name, _first, _last in f.data.namespaces:
        parts = name.split(".")
        for i in range(len(parts), 0, -1):
            candidate = ".".join(parts[:i])
            if candidate not in out:
                out.append(candidate)
    return out + [""]


def _resolve_using(f: FileFacts[CSharpFacts], ref: RawRef, using: Using, types: _Types, visible: list[str],
                   aliases: dict[str, CodeObject], res: Resolution) -> None:
    fid = f.file.id
    if not using.static and ref.name in types.files:
        for target in types.files[ref.name]:
            link(res, fid, target.file.id, "IMPORTS", ref.line)
        visible.append(ref.name)
        return
    ns, name = _split(ref.name)
    found = one(types.by_name.get((ns, name), []))
    if found is not None:
        link(res, fid, found.id, "IMPORTS", ref.line)
        if using.alias:
            aliases[using.alias] = found
        elif using.static:
            aliases[f"static:{found.id}"] = found
        return
    if ref.name.split(".", 1)[0] in types.roots:
        leave_open(res, fid, "IMPORTS", ref.name, ref.line, "missing-module")
    else:
        res.external += 1


#: the language's own type keywords (``string.Join``, ``int.Parse``)
_KEYWORD_TYPES = frozenset({"bool", "byte", "char", "decimal", "double", "float", "int", "long", "nint",
                            "nuint", "object", "sbyte", "short", "string", "uint", "ulong", "ushort"})


def _resolve_call(f: FileFacts[CSharpFacts], ref: RawRef, index: ObjectIndex[CSharpFacts], types: _Types,
                  visible: list[str], aliases: dict[str, CodeObject], res: Resolution) -> None:
    """A CALLS edge, an external call, or an unresolved reference with its reason."""
    if ref.dynamic:  # ``F(x).M()``, ``a.b.M()``: the receiver's type is not known
        leave_open(res, ref.source, "CALLS", ref.name, ref.line, "dynamic-receiver")
        return
    head, _, member = ref.name.rpartition(".")
    caller = index.objects.get(ref.source)
    if not head or head == "this":
        # own type first (methods), then a type of that name (``new Type()``)
        owner = f.parents.get(caller.id) if caller is not None else None
        if owner is not None and owner != f.file.id:
            found = index.members(owner, member)
            if found:
                call_target(res, ref.source, ref.name, ref.line, found)
                return
        if not head:
            # a member of a ``using static`` type, else a type (``new Type()``)
            statics = [m for key, t in aliases.items() if key.startswith("static:")
                       for m in index.members(t.id, member)]
            found = statics or [o for o in types.find(visible, member) if o.kind == "class"]
            if found:
                call_target(res, ref.source, ref.name, ref.line, found)
                return
        # inherited from a base we cannot see, or a delegate held in a local
        leave_open(res, ref.source, "CALLS", ref.name, ref.line, "unknown-name" if not head else "unknown-attribute")
        return
    owner_type = aliases.get(head) or one(types.find(visible, head) if "." not in head
                                          else types.by_name.get(_split(head), []))
    if owner_type is not None:
        call_target(res, ref.source, ref.name, ref.line, index.members(owner_type.id, member),
                    reason_none="unknown-attribute")
    elif head in _KEYWORD_TYPES or head == "System" or head.startswith(("System.", "global::")):
        res.external += 1
    elif head[:1].isupper():  # a type of another assembly, or a property: we cannot tell
        leave_open(res, ref.source, "CALLS", ref.name, ref.line, "unknown-name")
    else:  # a method of a local, parameter or field whose type is not followed
        leave_open(res, ref.source, "CALLS", ref.name, ref.line, "dynamic-receiver")
