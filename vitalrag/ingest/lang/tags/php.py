"""PHP: namespaces, ``use``, ``require``, and the calls the ``packaged`` scope rules make certain.

Objects: classes and traits are ``class`` objects, interfaces ``interface``\\ s,
enums ``enum``\\ s; a ``function`` is a ``function``, in a type a ``method``.
A file's namespace (``namespace App\\Shop;``) is its package, written
``App.Shop`` inside (ids do not repeat it: ``src/Cart.php:Cart.add``).

Imports: ``use App\\Util\\Money;``, ``use App\\Util\\{Money, Other as O};`` and
``use function App\\Util\\format;`` import one name each (``use const`` names no
object); ``require``/``include`` (``_once`` too) of a literal path link the
file to the file it names: ``__DIR__ . '/x.php'`` beside the file, a plain
``'x.php'`` beside it, from the root, or by the one repository path ending so.

Calls: ``$this->f()``, ``self::f()`` and ``static::f()`` go to the caller's
class; ``Type::f()`` to the type's member; ``f()`` through the namespace, its
imports and, as PHP does for functions, the global namespace. A bare ``f()``
never means a method (PHP has no implicit ``$this``). ``new Cart()`` is a call
of ``Cart``.

Tests (PHPUnit, Pest): methods named ``test*`` of a class deriving from a
``...TestCase`` (or of any class in a test file: under ``tests/``, or named
``*Test.php``), methods with a ``@test`` docblock or a ``#[Test]`` attribute,
and in test files Pest's ``test('...', fn)`` and ``it('...', fn)``.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from tree_sitter import Node

from vitalrag.ingest.facts import FileFacts, RawRef, RefDetail, Resolution
from vitalrag.ingest.lang.tags.doc_comments import c_style_docstring
from vitalrag.ingest.lang.tags.extraction import Candidate, Support
from vitalrag.ingest.lang.tags.index import leave_open, link
from vitalrag.ingest.lang.tags.packaged import Imported, PackagedFacts, Scoping, resolve_packaged
from vitalrag.ingest.lang.treesitter import descendants, start_line, text

__all__ = ["FACT_TYPES", "SUPPORT", "is_test_file", "prepare", "resolve"]

_TEST_FILE = re.compile(r"(^|/)tests?/|Test\.php$", re.IGNORECASE)
_REQUIRES = frozenset({"require_expression", "require_once_expression", "include_expression",
                       "include_once_expression"})


@dataclass(frozen=True, slots=True)
class PhpRequire(RefDetail):
    """A ``require``/``include`` of a literal path; ``beside``: written ``__DIR__ . '/x.php'``."""

    beside: bool


FACT_TYPES: tuple[type, ...] = (PackagedFacts, Imported, PhpRequire)


def is_test_file(path: str) -> bool:
    return bool(_TEST_FILE.search(path))


def _qualified(node: Node) -> str:
    r"""``\App\Util\Money`` -> ``App.Util.Money``."""
    return ".".join(p for p in "".join(text(node).split()).split("\\") if p)


def _string(node: Node | None) -> str | None:
    """The text of a string literal without interpolation, else None."""
    if node is None or node.type not in ("string", "encapsed_string"):
        return None
    parts = node.named_children
    if any(p.type != "string_content" for p in parts):
        return None
    return "".join(text(p) for p in parts)


# --- extraction -------------------------------------------------------------------------------

def _is_test_method(node: Node, path: str) -> bool:
    attributes = node.child_by_field_name("attributes")
    if attributes is not None and any(text(a).rsplit("\\", 1)[-1] == "Test"
                                      for a in descendants(attributes, frozenset({"name", "qualified_name"}))
                                      if a.parent is not None and a.parent.type == "attribute"):
        return True
    doc = node.prev_sibling
    if doc is not None and doc.type == "comment" and re.search(r"@test\b", text(doc)):
        return True
    name = text(node.child_by_field_name("name"))
    if not name.startswith("test"):
        return False
    body = node.parent
    cls = body.parent if body is not None else None
    base = next((c for c in cls.named_children if c.type == "base_clause"), None) if cls is not None else None
    return (base is not None and text(base).rstrip().endswith("TestCase")) or is_test_file(path)


def _refine(cand: Candidate, path: str) -> Candidate | None:
    node = cand.node
    if cand.kind == "test":  # Pest: in test files only
        if not is_test_file(path):
            return None
        args = node.child_by_field_name("arguments")
        first = args.named_children[0].named_children[0] if args is not None and args.named_children and \
            args.named_children[0].named_children else None
        name = _string(first)
        if not name:
            return None
        cand.name = " ".join(name.split())
    elif node.type == "method_declaration" and _is_test_method(node, path):
        cand.kind = "test"
    return cand


def _receiver(node: Node | None) -> str | None:
    if node is None:
        return None
    if node.type == "variable_name":
        return text(node)
    if node.type in ("name", "relative_scope"):
        return text(node)
    if node.type == "qualified_name":
        return _qualified(node)
    return None


def _call_name(node: Node) -> str | None:
    if node.type == "name":
        return text(node)
    if node.type == "qualified_name":
        return _qualified(node)
    if node.type in ("member_call_expression", "nullsafe_member_call_expression", "scoped_call_expression"):
        member = node.child_by_field_name("name")
        if member is None or member.type != "name":  # ``$obj->$method()``
            return None
        if node.type == "scoped_call_expression":
            scope = _receiver(node.child_by_field_name("scope"))
            return f"{scope}::{text(member)}" if scope is not None else None
        obj = node.child_by_field_name("object")
        return f"{text(obj)}->{text(member)}" if obj is not None and obj.type == "variable_name" else None
    return None


def _use_refs(node: Node, facts: FileFacts[PackagedFacts]) -> None:
    if any(c.type == "const" for c in node.children):
        return
    line = start_line(node)
    prefix_node = next((c for c in node.named_children if c.type == "namespace_name"), None)
    prefix = _qualified(prefix_node) if prefix_node is not None else ""
    group = node.child_by_field_name("body")
    clauses = group.named_children if group is not None else node.named_children
    for clause in clauses:
        if clause.type != "namespace_use_clause" or any(c.type == "const" for c in clause.children):
            continue
        alias = clause.child_by_field_name("alias")
        target = next((c for c in clause.named_children if c.type in ("qualified_name", "name")
                       and (alias is None or c.id != alias.id)), None)
        if target is None:
            continue
        path = ".".join(p for p in (prefix, _qualified(target)) if p)
        facts.refs.append(RawRef("import", facts.file.id, path, line, Imported(text(alias) if alias else None)))


def _require_ref(node: Node, facts: FileFacts[PackagedFacts]) -> None:
    arg = node.named_children[0] if node.named_children else None
    while arg is not None and arg.type == "parenthesized_expression" and arg.named_children:
        arg = arg.named_children[0]
    spec, beside = _string(arg), False
    if spec is None and arg is not None and arg.type == "binary_expression":
        left, right = arg.child_by_field_name("left"), arg.child_by_field_name("right")
        if left is not None and text(left) in ("__DIR__", "dirname(__FILE__)"):
            spec, beside = _string(right), True
    if spec:
        facts.refs.append(RawRef("import", facts.file.id, spec, start_line(node), PhpRequire(beside)))


def _annotate(root: Node, facts: FileFacts[PackagedFacts]) -> PackagedFacts:
    package = ""
    for node in root.named_children:
        if node.type == "namespace_definition" and not package:
            name = node.child_by_field_name("name")
            package = _qualified(name) if name is not None else ""
    wanted = frozenset({"namespace_use_declaration", *_REQUIRES})
    for node in descendants(root, wanted):
        if node.type == "namespace_use_declaration":
            _use_refs(node, facts)
        else:
            _require_ref(node, facts)
    facts.namespace = package
    return PackagedFacts(package)


SUPPORT = Support(
    wrappers=frozenset(),
    comments=frozenset({"comment"}),
    docstring=c_style_docstring,
    refine=_refine,
    call_name=_call_name,
    annotate=_annotate,
    attributes=frozenset(),
)

_SCOPING = Scoping(implicit_self=False, self_words=frozenset({"$this", "self", "static"}),
                   separators=("->", "::"), fallback="")


# --- resolution -------------------------------------------------------------------------------

def prepare(repo: str, facts: list[FileFacts[PackagedFacts]]) -> None:
    """Nothing needs every file before the graph is built."""


def resolve(repo: str, facts: list[FileFacts[PackagedFacts]]) -> Resolution:
    res = resolve_packaged(repo, facts, _SCOPING)
    by_path = {f.path: f for f in facts}
    for f in facts:
        for ref in f.refs:
            if isinstance(ref.data, PhpRequire):
                _resolve_require(f, ref, ref.data, by_path, res)
    return res


def _resolve_require(f: FileFacts[PackagedFacts], ref: RawRef, req: PhpRequire,
                     by_path: dict[str, FileFacts[PackagedFacts]], res: Resolution) -> None:
    """The file a literal ``require`` names, when exactly one fits (none: outside the index, external)."""
    here = posixpath.dirname(f.path)
    beside = posixpath.normpath(posixpath.join(here, ref.name.lstrip("/") if req.beside else ref.name))
    if beside in by_path:
        link(res, f.file.id, by_path[beside].file.id, "IMPORTS", ref.line)
        return
    if req.beside or ref.name.startswith(("./", "../", "/")):
        res.external += 1  # an absolute path, or beside the file but not indexed (vendor/)
        return
    spec = posixpath.normpath(ref.name)
    found = [p for p in by_path if p == spec or p.endswith("/" + spec)]
    if len(found) == 1:
        link(res, f.file.id, by_path[found[0]].file.id, "IMPORTS", ref.line)
    elif found:
        leave_open(res, f.file.id, "IMPORTS", ref.name, ref.line, "ambiguous-module")
    else:
        res.external += 1
