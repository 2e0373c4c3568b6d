"""C and C++: definitions from declarators, ``#include`` resolution, and the calls
an include makes certain.

**Headers and sources are one object per function: its definition.** A
prototype (a declaration without a body, in a header or a source file) makes no
object; it tells resolution that the name is declared, and ``prepare`` gives its
doc comment to the definition of the same qualified name when that definition
has none (libraries document their API in the header). A C++ method defined
outside its class (``void Logger::flush() {}``) is a ``method`` named
``Logger.flush``; ``prepare`` makes the class its container when exactly one
class of that qualified name exists in the repository, in whatever file. Types
defined only in a header (structs, unions, enums, typedefs, inline functions,
function-like macros) are objects of the header.

Objects: functions and function-like macros (``function``), structs, unions,
classes and type aliases (``typedef``, ``using X = ...``: ``class``), enums;
C++ namespaces prefix qualified names (``spd.details.Logger.log``) but are no
objects. C++ overloads in one file carry their parameter types
(``Logger.log(int)``), as C#'s do. ``.h`` files are C unless they read as C++
(``namespace``, ``template<``, a ``class`` body, ``std::``...).

``#include "x.h"`` resolves against the including file's folder, then to the one
repository file whose path ends with ``x.h``; ``#include <x.h>`` the same way
when some repository file ends with it, else it is external. Two candidates
leave it unresolved (``ambiguous-module``); a quoted include matching nothing
is ``missing-module``.

A call ``f()`` resolves to, in order: a member ``f`` of the caller's class
(C++), a definition of ``f`` in the same file, one in a header it includes
(transitively), or the one non-``static`` definition of ``f`` in the repository
when an included header or the file itself declares it. Several candidates stay
unresolved (``ambiguous-name``/``ambiguous-overload``); a name the repository
defines but the file does not see declared stays ``unknown-name``; a name the
repository never defines (libc, a dependency) is external. ``this->f()``
looks in the caller's class (``unknown-attribute`` when not there: a base class
is not followed); ``ns::f()``/``Type::f()`` match qualified names; a call
through a value (``p->f()``, ``s.f()``, ``(*fp)()``) is ``dynamic-receiver``.
``new T(...)`` calls the class ``T``.

Tests: in a test file (a ``test``/``tests`` folder, ``test_*``/``*_test*``
names), functions named ``test...``; anywhere, GoogleTest's ``TEST(Suite,
Name)``/``TEST_F``/``TEST_P`` (``Suite.Name``) and the functions a file runs
through Unity's ``RUN_TEST(f)`` or cmocka's ``cmocka_unit_test(f)``.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache

from tree_sitter import Node, Query, QueryCursor

from vitalrag.ingest.facts import Fact, FileFacts, IdSuffixes, RawRef, RefDetail, Resolution
from vitalrag.ingest.lang import grammar
from vitalrag.ingest.lang.tags.doc_comments import c_style_docstring
from vitalrag.ingest.lang.tags.extraction import Candidate, Support, leading_comments
from vitalrag.ingest.lang.tags.index import ObjectIndex, call_target, leave_open, link
from vitalrag.ingest.lang.treesitter import end_line, start_line, text
from vitalrag.kernel.text import content_hash
from vitalrag.model import TYPE_KINDS, CodeObject, object_id

_WS = re.compile(r"\s+")
_TEMPLATE_ARGS = re.compile(r"<[^<>]*>")
_STATIC = re.compile(r"^(?:[\w:]+\s+)*?static\b")
#: a ``.h`` file that reads as C++
_CPP_MARKERS = re.compile(
    rb"^\s*(?:namespace\b[^;\n]*\{|template\s*<|(?:class|struct)\s+\w+[^;()]*\{|(?:public|private|protected)\s*:)"
    rb"|\bstd::|\bnullptr\b|\bconstexpr\b|^\s*using\s+namespace\b", re.M)
_GTEST = frozenset({"TEST", "TEST_F", "TEST_P", "TYPED_TEST", "TYPED_TEST_P", "FRIEND_TEST"})
#: Catch2's and doctest's test macros: ``TEST_CASE("name", "[tags]") { ... }``
_CATCH = frozenset({"TEST_CASE", "TEST_CASE_METHOD", "SCENARIO", "TEMPLATE_TEST_CASE", "TEMPLATE_TEST_CASE_SIG",
                    "TEMPLATE_PRODUCT_TEST_CASE", "TEMPLATE_LIST_TEST_CASE", "TEST_CASE_PERSISTENT_FIXTURE",
                    "TEST_CASE_FIXTURE", "TEST_CASE_TEMPLATE"})
#: the test runners whose first argument is a test function
_RUNNERS = frozenset({"RUN_TEST", "cmocka_unit_test", "cmocka_unit_test_setup_teardown", "tcase_add_test"})
_TEST_DIRS = frozenset({"test", "tests", "testing", "unittest", "unittests", "unit_tests", "gtest", "t"})
_DECLARATORS = frozenset({"pointer_declarator", "reference_declarator", "parenthesized_declarator",
                          "attributed_declarator", "array_declarator", "init_declarator"})
_NAMES = frozenset({"identifier", "field_identifier", "qualified_identifier", "destructor_name",
                    "operator_name", "template_function", "type_identifier", "operator_cast"})
_SPECIFIERS = frozenset({"struct_specifier", "union_specifier", "enum_specifier", "class_specifier"})
#: nodes whose children may hold declarations at file level (annotate walks these only)
_BLOCKS = frozenset({"preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "preproc_elifdef",
                     "linkage_specification", "declaration_list", "template_declaration"})


@dataclass(frozen=True, slots=True)
class CFacts(Fact):
    """A C/C++ file's ``FileFacts.data``: its prototypes, (qualified name, doc comment)."""

    prototypes: list[tuple[str, str]]


@dataclass(frozen=True, slots=True)
class Include(RefDetail):
    #: ``#include <x.h>`` (True) or ``#include "x.h"``
    system: bool


FACT_TYPES: tuple[type, ...] = (CFacts, Include)


def looks_like_cpp(source: bytes) -> bool:
    """Whether a ``.h`` file reads as C++ (see the module docstring)."""
    return _CPP_MARKERS.search(source) is not None


def is_test_path(path: str) -> bool:
    parts = path.lower().split("/")
    stem = posixpath.splitext(parts[-1])[0]
    return (any(p in _TEST_DIRS for p in parts[:-1]) or stem.startswith("test")
            or stem.endswith(("_test", "_tests", "_unittest", "test")))


def _declarator_name(node: Node | None) -> tuple[Node | None, Node | None]:
    """(name node, innermost function declarator) of a declarator chain."""
    function: Node | None = None
    for _ in range(64):  # declarators nest shallowly; a hostile chain is cut off
        if node is None or node.type in _NAMES:
            return node, function
        if node.type == "function_declarator":
            function = node
        inner = node.child_by_field_name("declarator")
        if inner is None:
            inner = next((c for c in node.named_children if c.type in _NAMES or c.type in _DECLARATORS
                          or c.type == "function_declarator"), None)
        node = inner
    return None, function


def _plain(name: str) -> str:
    """``ns::Foo<int>::bar`` -> ``ns.Foo.bar``, whitespace and template arguments dropped."""
    name = _WS.sub("", name)
    for _ in range(8):
        if "<" not in name:
            break
        name = _TEMPLATE_ARGS.sub("", name)
    return name.removeprefix("::").replace("::", ".")


def _namespaces_around(node: Node) -> list[str]:
    """The names of the namespaces around ``node``, outermost first (walks up a
    bounded number of levels: only out-of-class definitions ask)."""
    out: list[str] = []
    cur = node.parent
    for _ in range(128):
        if cur is None:
            break
        if cur.type == "namespace_definition":
            name = cur.child_by_field_name("name")
            if name is not None:
                out.extend(reversed(_plain(text(name)).split(".")))
        cur = cur.parent
    out.reverse()
    return out


def _params(function: Node | None) -> str:
    params = function.child_by_field_name("parameters") if function is not None else None
    if params is None:
        return ""
    types = []
    for p in params.named_children:
        if p.type in ("parameter_declaration", "optional_parameter_declaration"):
            t = p.child_by_field_name("type")
            decl = p.child_by_field_name("declarator")
            marks = "".join(c for c in _WS.sub("", text(decl)) if c in "*&") if decl is not None else ""
            types.append(_WS.sub("", text(t)) + marks)
        elif p.type == "variadic_parameter":
            types.append("...")
    return ",".join(types)


def _without_prefix(name: str) -> str:
    """A qualified name that the grammar read together with what stood before it,
    cut to its last word: a macro before the return type (``SPDLOG_INLINE void
    spdlog::logger::flush``, ``std::shared_ptr<logger> spdlog::logger::clone``) is
    ``spdlog::logger::flush``; an operator's own words are kept (``A::operator bool``)."""
    head, op, tail = name.partition("operator")
    for _ in range(8):
        if "<" not in head:
            break
        head = _TEMPLATE_ARGS.sub("", head)
    words = head.split()
    if len(words) > 1 and not words[-1].startswith("::") and not words[-2].endswith("::"):
        head = words[-1]
    return head + op + tail


def _misread_declarator(node: Node) -> Node | None:
    """The function declarator of a definition whose declarator the grammar lost to
    a macro after the parameters (``void A::swap(A &o) SPDLOG_NOEXCEPT {``: the
    declarator is ``SPDLOG_NOEXCEPT``, the function sits in an ``ERROR`` before it;
    without parameters, ``std::tm localtime() SPDLOG_NOEXCEPT {``, it reads as a
    variable initialised by ``()``)."""
    for child in node.children:
        if child.type == "ERROR":
            for c in child.named_children:
                if c.type == "function_declarator":
                    return c
                value = c.child_by_field_name("value") if c.type == "init_declarator" else None
                if value is not None and value.type == "argument_list":
                    return c
    return None


def _function(cand: Candidate, path: str, cpp: bool) -> Candidate | None:
    declarator = cand.node.child_by_field_name("declarator")
    name_node, function = _declarator_name(declarator)
    if function is None and declarator is not None and declarator.type == "identifier":
        recovered = _misread_declarator(cand.node)
        if recovered is not None:
            name_node, function = _declarator_name(recovered)
    type_node = cand.node.child_by_field_name("type")
    if (function is None and declarator is not None and declarator.type == "parenthesized_declarator"
            and type_node is not None and type_node.type == "type_identifier"):
        # ``int CJSON_CDECL main(void)``: a calling-convention macro makes the grammar read
        # ``int CJSON_CDECL`` as a declaration and ``main (void)`` as a type and a declarator
        name_node = type_node
    if name_node is not None and name_node.type == "qualified_identifier" and any(
            c.is_missing for c in name_node.children):
        # C++ reads the same macro as a scope with its ``::`` missing: ``CJSON_CDECL::main``
        name_node = name_node.child_by_field_name("name")
    if name_node is None:
        return None
    if cpp and cand.node.parent is not None and cand.node.parent.type == "template_declaration":
        cand.outer = cand.node.parent
    if function is not None and text(function.child_by_field_name("declarator")) in _GTEST:
        args = [_WS.sub("", text(p)) for p in (function.child_by_field_name("parameters") or cand.node).named_children]
        cand.name, cand.kind = ".".join(a for a in args[:2] if a), "test"
        return cand
    parts = _plain(_without_prefix(text(name_node))).split(".") if name_node.type == "qualified_identifier" else []
    if len(parts) > 1 and cpp:
        cand.name = parts[-1]
        cand.owner = ".".join(_namespaces_around(cand.node) + parts[:-1])
        cand.kind = "method"
    elif len(parts) == 1:  # the scope was the return type's (``ns::T f()`` misread as one name)
        cand.name = parts[0]
    elif name_node.type == "template_function":
        cand.name = text(name_node.child_by_field_name("name"))
    else:
        cand.name = _WS.sub("", text(name_node))
    if cpp:
        cand.params = _params(function)
    if cand.kind == "function" and is_test_path(path) and cand.name.lower().startswith("test"):
        cand.kind = "test"
    return cand


def _refine(cand: Candidate, path: str, cpp: bool) -> Candidate | None:
    node = cand.node
    if node.type == "function_definition":
        return _function(cand, path, cpp)
    parent = node.parent
    if node.type in _SPECIFIERS and parent is not None and parent.type == "type_definition":
        return None  # the typedef is the object
    if node.type == "type_definition":
        inner = node.child_by_field_name("type")
        if inner is not None and inner.type in _SPECIFIERS and inner.child_by_field_name("body") is not None:
            cand.node, cand.outer = inner, node
            cand.kind = "enum" if inner.type == "enum_specifier" else "class"
        return cand
    if cpp and parent is not None and parent.type == "template_declaration":
        cand.outer = parent
    if node.type in _SPECIFIERS or node.type == "namespace_definition":
        cand.name = _plain(cand.name)
        if node.type == "namespace_definition" and "." in cand.name:
            # ``namespace a::b {`` is two scopes: the last is the name, the others an owner
            head, _, cand.name = cand.name.rpartition(".")
            cand.owner = ".".join(_namespaces_around(node) + [head])
    return cand


def _call_name(node: Node, cpp: bool) -> str | None:
    t = node.type
    if t in ("identifier", "type_identifier"):
        return text(node)
    if not cpp:
        return None
    if t in ("qualified_identifier", "template_function", "template_type"):
        name = _plain(text(node))
        return None if "<" in name or "(" in name else name.replace(".", "::")
    if t == "field_expression":
        arg, field_ = node.child_by_field_name("argument"), node.child_by_field_name("field")
        if arg is not None and arg.type == "this" and field_ is not None:
            return f"this.{_plain(text(field_))}"
    return None


@cache
def _runner_query(language: str) -> Query:
    return Query(grammar(language), "(call_expression function: (identifier) @runner"
                                    " arguments: (argument_list . (identifier) @test))")


def _annotate(root: Node, facts: FileFacts[CFacts], support: Support[CFacts], cpp: bool) -> CFacts:
    prototypes: list[tuple[str, str]] = []
    namespaces: list[str] = []
    stack: list[tuple[Node, str]] = [(c, "") for c in reversed(root.named_children)]
    while stack:
        node, prefix = stack.pop()
        t = node.type
        if t == "preproc_include":
            path = node.child_by_field_name("path")
            if path is not None:
                spec = text(path)
                facts.refs.append(RawRef("import", facts.file.id, spec.strip('"<> '), start_line(node),
                                         Include(spec.startswith("<"))))
        elif t in _BLOCKS:
            stack.extend((c, prefix) for c in reversed(node.named_children))
        elif t == "namespace_definition":
            body, name = node.child_by_field_name("body"), node.child_by_field_name("name")
            inner = f"{prefix}.{_plain(text(name))}".lstrip(".") if name is not None else prefix
            namespaces.append(inner)
            if body is not None:
                stack.extend((c, inner) for c in reversed(body.named_children))
        elif t in _SPECIFIERS and cpp:
            body, name = node.child_by_field_name("body"), node.child_by_field_name("name")
            if body is not None and name is not None:
                inner = f"{prefix}.{_plain(text(name))}".lstrip(".")
                stack.extend((c, inner) for c in reversed(body.named_children))
        elif t in ("declaration", "field_declaration"):
            declarator = node.child_by_field_name("declarator")
            name_node, function = _declarator_name(declarator)
            if function is not None and name_node is not None:
                qualname = f"{prefix}.{_plain(text(name_node))}".lstrip(".")
                prototypes.append((qualname, support.docstring(leading_comments(node, support))))
            elif cpp:  # ``class A {...};`` is a declaration of its specifier
                inner_type = node.child_by_field_name("type")
                if inner_type is not None and inner_type.type in _SPECIFIERS:
                    stack.append((inner_type, prefix))
    # the first namespace declared, innermost of its nesting (``shop.detail``)
    facts.namespace = next((n for n in namespaces if not any(m.startswith(n + ".") for m in namespaces)), "")
    _mark_runner_tests(root, facts)
    if cpp:
        _catch_tests(root, facts)
        if facts.problems and _only_macro_blocks(root):
            facts.problems = [p for p in facts.problems if not p.startswith("syntax errors")]
    return CFacts(prototypes)


def _only_macro_blocks(root: Node) -> bool:
    """Are all the tree's errors a macro call's missing ``;`` before a block
    (``TEST_CASE("x") {``, ``SECTION("y") {``): an idiom, not a syntax error?"""
    stack = [root]
    while stack:
        n = stack.pop()
        if n.is_missing and n.type == ";" and n.parent is not None and n.parent.type == "expression_statement":
            after = n.parent.next_named_sibling
            if after is not None and after.type == "compound_statement":
                continue
        if n.is_error or n.is_missing:
            return False
        if n.has_error:
            stack.extend(n.children)
    return True


def _catch_tests(root: Node, facts: FileFacts[CFacts]) -> None:
    """Catch2's and doctest's ``TEST_CASE("name") { ... }`` (and ``SCENARIO``,
    ``TEST_CASE_METHOD(Fixture, "name")``...): the grammar reads a call statement
    and a block after it; together they are a ``test`` object named by the
    macro's first string, and the calls in the block are the test's."""
    spans: list[tuple[int, int, str]] = []
    stack = [root]
    while stack:
        children = stack.pop().named_children
        stack.extend(body for c in children if c.type == "namespace_definition"
                     and (body := c.child_by_field_name("body")) is not None)
        for node, block in zip(children, children[1:]):
            call = node.named_children[0] if node.type == "expression_statement" and node.named_children else None
            if call is None or call.type != "call_expression" or block.type != "compound_statement":
                continue
            function, args = call.child_by_field_name("function"), call.child_by_field_name("arguments")
            if function is None or text(function) not in _CATCH or args is None:
                continue
            name = next((_string_value(a) for a in args.named_children
                         if a.type in ("string_literal", "raw_string_literal")), None)
            if name:
                spans.append((start_line(node), end_line(block), name))
    if not spans:
        return
    lines = facts.text.split("\n")
    fid = facts.file.id
    suffixes = IdSuffixes()
    taken = {o.id for o in facts.objects}
    for first, last, written in sorted(spans):
        oid, qualname = suffixes(object_id(facts.file.repo, facts.path, written), written)
        if oid in taken:
            continue
        facts.objects.append(CodeObject(
            id=oid, kind="test", name=written, qualname=qualname, repo=facts.file.repo, path=facts.path,
            language=facts.language, start_line=first, end_line=last, signature=lines[first - 1].strip(),
            content_hash=content_hash("\n".join(lines[first - 1:last]))))
        facts.parents[oid] = fid
        for ref in facts.refs:
            if ref.source == fid and first <= ref.line <= last and ref.kind == "call":
                ref.source = oid


def _string_value(node: Node) -> str:
    """The text of a string literal, quotes and a raw string's delimiters off, on one line."""
    raw = text(node)
    if node.type == "raw_string_literal":
        raw = re.sub(r'^[A-Za-z0-9]*R"[^(]*\(|\)[^)]*"$', "", raw)
    else:
        raw = re.sub(r'^[A-Za-z0-9]*"|"$', "", raw)
    return " ".join(raw.split())


def _mark_runner_tests(root: Node, facts: FileFacts[CFacts]) -> None:
    if not any(r.kind == "call" and r.name in _RUNNERS for r in facts.refs):
        return
    run: set[str] = set()
    for _pattern, captures in QueryCursor(_runner_query(facts.language)).matches(root):
        if text(captures["runner"][0]) in _RUNNERS:
            run.add(text(captures["test"][0]))
    facts.objects = [replace(o, kind="test") if o.kind == "function" and o.name in run else o
                     for o in facts.objects]


def _support(cpp: bool) -> Support[CFacts]:
    refine: Callable[[Candidate, str], Candidate | None] = lambda c, p: _refine(c, p, cpp)  # noqa: E731
    partial = Support(
        wrappers=frozenset(),
        comments=frozenset({"comment"}),
        docstring=c_style_docstring,
        refine=refine,
        call_name=lambda n: _call_name(n, cpp),
        annotate=lambda root, facts: CFacts([]),
    )
    return replace(partial, annotate=lambda root, facts: _annotate(root, facts, partial, cpp))


SUPPORT = _support(cpp=False)
CPP_SUPPORT = _support(cpp=True)


def _bare(qualname: str) -> str:
    """A qualified name without its overload parameters and ``#2`` suffix."""
    return qualname.split("(", 1)[0].split("#", 1)[0]


def prepare(repo: str, facts: list[FileFacts[CFacts]]) -> None:
    """Prototype docs to definitions; out-of-class methods into their classes (see the module docstring)."""
    docs: dict[str, str] = {}
    for f in facts:
        for qualname, doc in f.data.prototypes:
            if doc:
                docs.setdefault(qualname, doc)
    classes: dict[str, list[CodeObject]] = {}
    for f in facts:
        for o in f.objects:
            if o.kind in TYPE_KINDS:
                classes.setdefault(_bare(o.qualname), []).append(o)
    for f in facts:
        changed = False
        objects = list(f.objects)
        for i, o in enumerate(objects):
            new = o
            if o.kind in ("function", "method", "test") and not o.docstring and _bare(o.qualname) in docs:
                new = replace(new, docstring=docs[_bare(o.qualname)])
            if o.kind == "method" and f.parents.get(o.id) == f.file.id:
                owner = _bare(o.qualname).rsplit(".", 1)[0]
                found = classes.get(owner, [])
                if len(found) == 1:
                    f.parents[o.id] = found[0].id
                elif not found:
                    new = replace(new, kind="function")  # ``ns::f`` defined outside its namespace
            if new is not o:
                objects[i], changed = new, True
        if changed:
            f.objects = objects


class _Includes:
    """Repository files by path and by base name, for ``#include`` lookups."""

    def __init__(self, facts: list[FileFacts[CFacts]]) -> None:
        self.paths = {f.path for f in facts}
        self.by_base: dict[str, list[str]] = {}
        for f in facts:
            self.by_base.setdefault(posixpath.basename(f.path), []).append(f.path)

    def find(self, including: str, spec: str, system: bool) -> list[str]:
        if not system:
            near = posixpath.normpath(posixpath.join(posixpath.dirname(including), spec))
            if near in self.paths:
                return [near]
        spec = posixpath.normpath(spec)
        return [p for p in self.by_base.get(posixpath.basename(spec), ())
                if p == spec or p.endswith("/" + spec)]


def resolve(repo: str, facts: list[FileFacts[CFacts]]) -> Resolution:
    res = Resolution()
    index = ObjectIndex(facts)
    includes = _Includes(facts)
    direct: dict[str, list[str]] = {}
    for f in facts:
        out = direct[f.path] = []
        for ref in f.refs:
            if isinstance(ref.data, Include):
                found = includes.find(f.path, ref.name, ref.data.system)
                if len(found) == 1:
                    link(res, f.file.id, index.files[found[0]].file.id, "IMPORTS", ref.line)
                    out.append(found[0])
                elif found:
                    leave_open(res, f.file.id, "IMPORTS", ref.name, ref.line, "ambiguous-module")
                elif ref.data.system:
                    res.external += 1
                else:
                    leave_open(res, f.file.id, "IMPORTS", ref.name, ref.line, "missing-module")
    names = _Names(facts)
    for f in facts:
        visible = _closure(f.path, direct)
        declared = {q.rsplit(".", 1)[-1] for p in [f.path, *visible] for q, _ in index.files[p].data.prototypes}
        for ref in f.refs:
            if ref.kind == "call":
                _resolve_call(f, ref, index, names, visible, declared, res)
    return res


def _closure(path: str, direct: dict[str, list[str]]) -> list[str]:
    """The repository files ``path`` includes, directly or not, nearest first."""
    seen = {path}
    order: list[str] = []
    queue = list(direct.get(path, ()))
    while queue:
        p = queue.pop(0)
        if p in seen:
            continue
        seen.add(p)
        order.append(p)
        queue.extend(direct.get(p, ()))
    return order


class _Names:
    """Definitions by their last name: functions and types anywhere, and the
    first segments of the qualified names (namespaces and classes) the repository has."""

    def __init__(self, facts: list[FileFacts[CFacts]]) -> None:
        self.by_name: dict[str, list[CodeObject]] = {}
        self.heads: set[str] = set()
        for f in facts:
            for o in f.objects:
                self.by_name.setdefault(o.name, []).append(o)
                self.heads.add(o.qualname.split(".", 1)[0])


_CALLABLE = frozenset({"function", "test"})


def _is_static(o: CodeObject) -> bool:
    return _STATIC.match(o.signature) is not None


def _resolve_call(f: FileFacts[CFacts], ref: RawRef, index: ObjectIndex[CFacts], names: _Names,
                  visible: list[str], declared: set[str], res: Resolution) -> None:
    """A CALLS edge, an external call, or an unresolved reference with its reason."""
    if ref.dynamic:  # ``p->f()``, ``s.f()``, ``(*fp)()``: what the value holds is not known
        leave_open(res, ref.source, "CALLS", ref.name, ref.line, "dynamic-receiver")
        return
    cpp = f.language == "cpp"
    caller = index.objects.get(ref.source)
    owner = f.parents.get(caller.id) if caller is not None else None
    cls = index.objects.get(owner) if owner is not None else None
    if cls is not None and cls.kind not in TYPE_KINDS:
        cls = None
    name = ref.name
    if name.startswith("this."):
        member = name.removeprefix("this.")
        found = index.members(cls.id, member) if cls is not None else []
        call_target(res, ref.source, name, ref.line, found, reason_none="unknown-attribute")
        return
    if "::" in name:
        qual = name.replace("::", ".").lstrip(".")
        last = qual.rsplit(".", 1)[-1]
        found = [o for o in names.by_name.get(last, ()) if _bare(o.qualname) == qual
                 or _bare(o.qualname).endswith("." + qual)]
        if found:
            call_target(res, ref.source, name, ref.line, found)
        elif qual.split(".", 1)[0] in names.heads:
            leave_open(res, ref.source, "CALLS", name, ref.line, "unknown-name")
        else:
            res.external += 1  # ``std::move``, a dependency's namespace
        return
    kinds = _CALLABLE | {"class"} if cpp else _CALLABLE
    if cls is not None:
        found = index.members(cls.id, name)
        if found:
            call_target(res, ref.source, name, ref.line, found)
            return
    local = [o for o in index.top_level(f.path, name) if o.kind in kinds]
    if local:
        call_target(res, ref.source, name, ref.line, local)
        return
    seen = [o for p in visible for o in index.top_level(p, name) if o.kind in kinds]
    if seen:
        call_target(res, ref.source, name, ref.line, seen)
        return
    defined = [o for o in names.by_name.get(name, ()) if o.kind in kinds and o.path != f.path
               and index.files[o.path].parents.get(o.id) == index.files[o.path].file.id and not _is_static(o)]
    if defined and name in declared:
        call_target(res, ref.source, name, ref.line, defined)
    elif defined:  # defined in the repository, but no header this file includes declares it
        leave_open(res, ref.source, "CALLS", name, ref.line, "unknown-name")
    elif caller is not None and _is_parameter(caller, name):  # a function pointer passed in
        leave_open(res, ref.source, "CALLS", name, ref.line, "dynamic-receiver")
    else:
        res.external += 1


def _is_parameter(caller: CodeObject, name: str) -> bool:
    params = caller.signature.partition("(")[2]
    return re.search(rf"\b{re.escape(name)}\b", params) is not None
