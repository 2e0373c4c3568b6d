"""JavaScript, TypeScript and TSX: imports, JSDoc, and their resolution.

Imports resolve like Node and TypeScript do for relative specifiers: the exact
file, then the file with an extension (.js .jsx .mjs .cjs .ts .tsx .mts .cts), then
``<dir>/index.<ext>``; a ``.js`` specifier may name a ``.ts`` source. Bare
specifiers (``react``, ``@scope/pkg``, path aliases) are external. A named
import points at the object it names when the target file defines exactly one
top-level object of that (exported) name, else at the file.

The three languages resolve as one family (a ``.ts`` file may import a ``.tsx``
one), but the pipeline resolves one language at a time, so ``prepare`` records
each language's facts for the family's ``resolve`` calls of the same run (see
``_Family``).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field

from tree_sitter import Node

from vitalrag.ingest.facts import Fact, FileFacts, RawRef, RefDetail, Resolution
from vitalrag.ingest.lang.tags.extraction import Candidate, Support
from vitalrag.ingest.lang.tags.index import ObjectIndex, call_target, leave_open, link, one
from vitalrag.ingest.lang.treesitter import descendants, start_line, text
from vitalrag.model import CodeObject

FAMILY = frozenset({"javascript", "typescript", "tsx"})
#: names a call may use without binding them: the language's and the runtimes'
#: globals, and the globals test runners provide; a call on one is external
_GLOBALS = frozenset({
    "Array", "ArrayBuffer", "BigInt", "Boolean", "DataView", "Date", "Error", "EvalError", "Function",
    "Intl", "JSON", "Map", "Math", "Number", "Object", "Promise", "Proxy", "RangeError", "Reflect",
    "RegExp", "Set", "String", "Symbol", "SyntaxError", "TypeError", "URIError", "URL",
    "URLSearchParams", "WeakMap", "WeakRef", "WeakSet", "AbortController", "Buffer", "TextDecoder",
    "TextEncoder", "atob", "btoa", "clearInterval", "clearTimeout", "console", "decodeURI",
    "decodeURIComponent", "document", "encodeURI", "encodeURIComponent", "fetch", "globalThis",
    "isFinite", "isNaN", "module", "navigator", "parseFloat", "parseInt", "process", "queueMicrotask",
    "require", "import", "setImmediate", "setInterval", "setTimeout", "structuredClone", "window",
    "afterAll", "afterEach", "beforeAll", "beforeEach", "describe", "expect", "it", "jest", "test", "vi",
    "super",
})
_EXTENSIONS = (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts")
_TS_FOR_JS = {".js": (".ts", ".tsx"), ".jsx": (".tsx",), ".mjs": (".mts",), ".cjs": (".cts",)}
_JSDOC_LINE = re.compile(r"^\s*\*? ?")


@dataclass(frozen=True, slots=True)
class JsFacts(Fact):
    """A JavaScript/TypeScript file's ``FileFacts.data``."""

    #: exported name -> the local name it exports (``export { a as b }``, ``export default f``)
    exports: dict[str, str]


@dataclass(frozen=True, slots=True)
class JsImport(RefDetail):
    """What an import (``import``, ``require``, ``import()``, a re-export) binds."""

    #: (imported name, local name) pairs
    names: list[tuple[str, str]] = field(default_factory=list)
    #: the default import's local name
    default: str | None = None
    #: the local name bound to the whole module (``* as ns``, ``const ns = require(...)``)
    namespace: str | None = None


FACT_TYPES: tuple[type, ...] = (JsFacts, JsImport)


# --- extraction -------------------------------------------------------------------------------

def _docstring(comments: list[str]) -> str:
    if not comments or not comments[-1].startswith("/**"):
        return ""
    body = comments[-1].removeprefix("/**").removesuffix("*/")
    lines = [_JSDOC_LINE.sub("", line).rstrip() for line in body.splitlines()]
    return "\n".join(lines).strip()


def _refine(cand: Candidate, path: str) -> Candidate | None:
    return cand


def _call_name(node: Node) -> str | None:
    if node.type == "identifier":
        return text(node)
    if node.type == "member_expression":
        obj, prop = node.child_by_field_name("object"), node.child_by_field_name("property")
        if obj is not None and prop is not None and obj.type in ("identifier", "this"):
            return f"{text(obj)}.{text(prop)}"
    return None


def _string_value(node: Node | None) -> str | None:
    if node is None or node.type not in ("string", "template_string"):
        return None
    frag = [c for c in node.named_children if c.type == "string_fragment"]
    if node.type == "template_string" and any(c.type == "template_substitution" for c in node.named_children):
        return None
    return text(frag[0]) if len(frag) == 1 else ""


def _clause_bindings(clause: Node) -> JsImport:
    names: list[tuple[str, str]] = []
    default = namespace = None
    for child in clause.named_children:
        if child.type == "identifier":
            default = text(child)
        elif child.type == "namespace_import":
            namespace = text(child.named_children[0]) if child.named_children else None
        elif child.type == "named_imports":
            for spec in child.named_children:
                if spec.type == "import_specifier":
                    name = text(spec.child_by_field_name("name"))
                    alias = spec.child_by_field_name("alias")
                    names.append((name, text(alias) if alias is not None else name))
    return JsImport(names, default, namespace)


def _annotate(root: Node, facts: FileFacts[JsFacts]) -> JsFacts:
    fid = facts.file.id
    exports: dict[str, str] = {}
    for stmt in root.named_children:
        if stmt.type == "import_statement":
            spec = _string_value(stmt.child_by_field_name("source"))
            imp = JsImport()
            for child in stmt.named_children:
                if child.type == "import_clause":
                    imp = _clause_bindings(child)
                elif child.type == "import_require_clause":
                    imp = JsImport(namespace=text(child.named_children[0]))
                    spec = _string_value(child.child_by_field_name("source"))
            if spec:
                facts.refs.append(RawRef("import", fid, spec, start_line(stmt), imp))
        elif stmt.type == "export_statement":
            _export(stmt, facts, exports)
    # require('./x') and import('./x') anywhere (walk the tree only when they can occur)
    if "require" in facts.text or "import(" in facts.text:
        _dynamic_imports(root, facts)
    return JsFacts(exports)


def _dynamic_imports(root: Node, facts: FileFacts[JsFacts]) -> None:
    """``require('./x')`` and ``import('./x')`` anywhere, with what their result is bound to."""
    for call in descendants(root, frozenset({"call_expression"})):
        fn = call.child_by_field_name("function")
        args = call.child_by_field_name("arguments")
        if fn is None or args is None or not (fn.type == "import" or text(fn) == "require"):
            continue
        spec = _string_value(args.named_children[0]) if args.named_children else None
        if not spec:
            continue
        names: list[tuple[str, str]] = []
        namespace = None
        holder = call.parent
        if holder is not None and holder.type == "await_expression":
            holder = holder.parent
        if holder is not None and holder.type == "variable_declarator":
            target = holder.child_by_field_name("name")
            if target is not None and target.type == "identifier":
                namespace = text(target)
            elif target is not None and target.type == "object_pattern":
                for p in target.named_children:
                    if p.type == "shorthand_property_identifier_pattern":
                        names.append((text(p), text(p)))
                    elif p.type == "pair_pattern":
                        key, value = p.child_by_field_name("key"), p.child_by_field_name("value")
                        if value is not None and value.type == "identifier":
                            names.append((text(key), text(value)))
        facts.refs.append(RawRef("import", facts.file.id, spec, start_line(call), JsImport(names, None, namespace)))


def _export(stmt: Node, facts: FileFacts[JsFacts], exports: dict[str, str]) -> None:
    source = _string_value(stmt.child_by_field_name("source"))
    clause = next((c for c in stmt.named_children if c.type == "export_clause"), None)
    if source:  # re-export: an import of the other file
        names: list[tuple[str, str]] = []
        if clause is not None:
            for spec in clause.named_children:
                if spec.type == "export_specifier":
                    name = text(spec.child_by_field_name("name"))
                    names.append((name, name))
        facts.refs.append(RawRef("import", facts.file.id, source, start_line(stmt), JsImport(names)))
        return
    if clause is not None:
        for spec in clause.named_children:
            if spec.type == "export_specifier":
                name = text(spec.child_by_field_name("name"))
                alias = spec.child_by_field_name("alias")
                exports[text(alias) if alias is not None else name] = name
        return
    is_default = any(c.type == "default" for c in stmt.children)
    decl = stmt.child_by_field_name("declaration") or stmt.child_by_field_name("value")
    if decl is None:
        return
    name_node = decl if decl.type == "identifier" else decl.child_by_field_name("name")
    if is_default and name_node is not None:
        exports["default"] = text(name_node)


SUPPORT = Support(
    wrappers=frozenset({"export_statement", "lexical_declaration", "variable_declaration"}),
    comments=frozenset({"comment"}),
    docstring=_docstring,
    refine=_refine,
    call_name=_call_name,
    annotate=_annotate,
)


# --- resolution -------------------------------------------------------------------------------

def prepare(repo: str, facts: list[FileFacts[JsFacts]]) -> None:
    """Nothing to prepare: the pipeline resolves JavaScript, TypeScript and TSX
    files as one family, so an import across them is seen whole."""


def resolve(repo: str, facts: list[FileFacts[JsFacts]]) -> Resolution:
    res = Resolution()
    if not facts:
        return res
    index = ObjectIndex(facts)
    for f in facts:
        _resolve_file(f, index, res)
    return res


def module_file(importer: str, spec: str, files: dict[str, FileFacts[JsFacts]]) -> str | None:
    """The repository file a relative specifier names, or None."""
    base = posixpath.normpath(posixpath.join(posixpath.dirname(importer), spec))
    tries = [base] + [base + ext for ext in _EXTENSIONS] + [f"{base}/index{ext}" for ext in _EXTENSIONS]
    stem, ext = posixpath.splitext(base)
    tries += [stem + alt for alt in _TS_FOR_JS.get(ext, ())]
    return next((t for t in tries if t in files), None)


def _exported(index: ObjectIndex[JsFacts], path: str, name: str) -> CodeObject | None:
    exports = index.files[path].data.exports
    local = exports.get(name, name)
    return one([o for o in index.top_level(path, local) if o.kind != "method"])


def _resolve_file(f: FileFacts[JsFacts], index: ObjectIndex[JsFacts], res: Resolution) -> None:
    fid = f.file.id
    bound: dict[str, str | None] = {}  # local name -> object id (None: imported but not found)
    namespaces: dict[str, str] = {}  # local name -> file path
    outside: set[str] = set()  # local names bound by imports of packages
    for ref in f.refs:
        imp = ref.data
        if not isinstance(imp, JsImport):
            continue
        spec = ref.name
        if not spec.startswith((".", "/")):
            res.external += 1
            outside.update(local for _name, local in imp.names)
            outside.update(local for local in (imp.default, imp.namespace) if local)
            continue
        target = module_file(f.path, spec, index.files) if not spec.startswith("/") else None
        if target is None or target.startswith("../"):
            leave_open(res, fid, "IMPORTS", spec, ref.line, "missing-module")
            continue
        target_id = index.files[target].file.id
        wanted = list(imp.names)
        if imp.default:
            wanted.append(("default", imp.default))
        if imp.namespace:
            namespaces[imp.namespace] = target
        whole_file = not wanted or bool(imp.namespace)
        for name, local in wanted:
            obj = _exported(index, target, name)
            bound[local] = obj.id if obj is not None else None
            if obj is None:
                whole_file = True
            else:
                link(res, fid, obj.id, "IMPORTS", ref.line)
        if whole_file:
            link(res, fid, target_id, "IMPORTS", ref.line)
    for ref in f.refs:
        if ref.kind == "call":
            _resolve_call(f, ref, index, bound, namespaces, outside, res)


def _resolve_call(f: FileFacts[JsFacts], ref: RawRef, index: ObjectIndex[JsFacts], bound: dict[str, str | None],
                  namespaces: dict[str, str], outside: set[str], res: Resolution) -> None:
    """A CALLS edge, an external call, or an unresolved reference with its reason."""
    if ref.dynamic:
        leave_open(res, ref.source, "CALLS", ref.name, ref.line, "dynamic-receiver")
        return
    head, _, member = ref.name.partition(".")
    if not member:
        if head in bound:
            target = bound[head]
            if target is None:
                leave_open(res, ref.source, "CALLS", ref.name, ref.line, "unknown-name")
            else:
                call_target(res, ref.source, ref.name, ref.line, [index.objects[target]])
            return
        local = [o for o in index.top_level(f.path, head) if o.kind != "method"]
        if local:
            call_target(res, ref.source, ref.name, ref.line, local)
        elif head in outside or head in _GLOBALS:
            res.external += 1
        else:  # a parameter, a local variable, or a global we do not know
            leave_open(res, ref.source, "CALLS", ref.name, ref.line, "unknown-name")
        return
    if head in namespaces:
        found = [o for o in index.top_level(namespaces[head], member) if o.kind != "method"]
        call_target(res, ref.source, ref.name, ref.line, found)
    elif head == "this":
        caller = index.objects.get(ref.source)
        container = f.parents.get(caller.id) if caller is not None and caller.kind == "method" else None
        if container is None or container == f.file.id:
            leave_open(res, ref.source, "CALLS", ref.name, ref.line, "dynamic-receiver")
            return
        # an inherited member, or one assigned at run time, is not among the class's own
        call_target(res, ref.source, ref.name, ref.line, index.members(container, member),
                    reason_none="unknown-attribute")
    elif head in outside or head in _GLOBALS:
        res.external += 1
    else:  # a method of a value whose type is not known here
        leave_open(res, ref.source, "CALLS", ref.name, ref.line, "dynamic-receiver")
