"""Go: packages, receivers, tests, and import-path resolution.

A Go package is a folder, so every folder with Go files (except the repository
root) is a ``module`` node; its dotted ``package_name`` is the package's import
path when the module path is known.

The module path is not read from ``go.mod`` (extraction sees one source file
and no repository root); ``prepare`` infers it from the import paths the code
writes: an import ``example.com/m/internal/util`` of a repository that has the
folder ``internal/util`` votes for ``example.com/m``. The prefix with the most
votes wins (one whose first element has a dot, as every non-standard path has,
is preferred); a tie leaves it unknown, and then in-repo-looking imports stay
unresolved (``ambiguous-module``) rather than guessed. Imports under the module
path link the importing file to every non-test file of the package folder;
other import paths are external.

Calls resolve when cheap and certain: ``pkg.Name()`` through an import of a
repository package, and ``name()`` within the file's own package.
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from dataclasses import dataclass, replace

from tree_sitter import Node

from vitalrag.ingest.facts import Fact, FileFacts, RawRef, RefDetail, Resolution
from vitalrag.ingest.lang.tags.extraction import Candidate, Support
from vitalrag.ingest.lang.tags.index import ObjectIndex, call_target, leave_open, link
from vitalrag.ingest.lang.treesitter import descendants, start_line, text
from vitalrag.model import TYPE_KINDS


@dataclass(frozen=True, slots=True)
class GoFacts(Fact):
    """A Go file's ``FileFacts.data``."""

    #: the package clause's name ("" without one)
    package: str = ""
    #: the repository's module path (``prepare`` infers it; None when unknown)
    module: str | None = None


@dataclass(frozen=True, slots=True)
class GoImport(RefDetail):
    #: the name the import binds (``.`` and ``_`` too), None for the package's own name
    alias: str | None = None


FACT_TYPES: tuple[type, ...] = (GoFacts, GoImport)

_BLOCK = re.compile(r"^/\*+|\*+/$")


def _docstring(comments: list[str]) -> str:
    lines: list[str] = []
    for c in comments:
        if c.startswith("//"):
            line = c[2:]
            lines.append(line[1:] if line.startswith(" ") else line)
        else:
            lines.extend(_BLOCK.sub("", c).strip().splitlines())
    return "\n".join(lines).strip()


def _receiver_type(node: Node) -> str | None:
    receiver = node.child_by_field_name("receiver")
    if receiver is None:
        return None
    for t in descendants(receiver, frozenset({"type_identifier"}), stop=frozenset({"type_arguments"})):
        return text(t)
    return None


def is_test_name(name: str) -> bool:
    """``TestXxx`` where Xxx does not start with a lower-case letter (the ``go test`` rule)."""
    return name.startswith("Test") and (len(name) == 4 or not name[4].islower())


def _refine(cand: Candidate, path: str) -> Candidate | None:
    if cand.node.type == "method_declaration":
        cand.owner = _receiver_type(cand.node)
    elif cand.kind == "function" and path.endswith("_test.go") and is_test_name(cand.name):
        cand.kind = "test"
    return cand


def _call_name(node: Node) -> str | None:
    if node.type == "identifier":
        return text(node)
    if node.type == "selector_expression":
        operand, field_ = node.child_by_field_name("operand"), node.child_by_field_name("field")
        if operand is not None and field_ is not None and operand.type == "identifier":
            return f"{text(operand)}.{text(field_)}"
    return None


def _annotate(root: Node, facts: FileFacts[GoFacts]) -> GoFacts:
    package = ""
    for child in root.named_children:
        if child.type == "package_clause" and child.named_children:
            package = facts.namespace = text(child.named_children[0])
    for spec in descendants(root, frozenset({"import_spec"}), stop=frozenset({"function_declaration",
                                                                            "method_declaration"})):
        path_node = spec.child_by_field_name("path")
        if path_node is None:
            continue
        import_path = text(path_node).strip('"`')
        alias = spec.child_by_field_name("name")
        facts.refs.append(RawRef("import", facts.file.id, import_path, start_line(spec),
                                 GoImport(text(alias) if alias is not None else None)))
    return GoFacts(package)


SUPPORT = Support(
    wrappers=frozenset({"type_declaration"}),
    comments=frozenset({"comment"}),
    docstring=_docstring,
    refine=_refine,
    call_name=_call_name,
    annotate=_annotate,
)


def _folder(path: str) -> str:
    return posixpath.dirname(path)


def infer_module_path(facts: list[FileFacts[GoFacts]]) -> str | None:
    """The module path the imports agree on (see the module docstring), or None."""
    folders = {_folder(f.path) for f in facts} - {""}
    imports = {r.name for f in facts for r in f.refs if r.kind == "import"}
    votes: Counter[str] = Counter()
    for imp in imports:
        parts = imp.split("/")
        for i in range(1, len(parts)):
            if "/".join(parts[i:]) in folders:
                votes["/".join(parts[:i])] += 1
    if not votes:
        return None
    dotted = {p: n for p, n in votes.items() if "." in p.split("/")[0]}
    pool = dotted or dict(votes)
    best = max(pool.values())
    winners = [p for p, n in pool.items() if n == best]
    return winners[0] if len(winners) == 1 else None


def prepare(repo: str, facts: list[FileFacts[GoFacts]]) -> None:
    """Package folders and names, and methods declared apart from their receiver type."""
    module = infer_module_path(facts)
    for f in facts:
        f.data = replace(f.data, module=module)
        folder = _folder(f.path)
        if folder:
            f.package_dir = folder
            f.package_name = f"{module}/{folder}" if module else folder
            f.namespace = f.package_name
        elif module:
            f.namespace = module
    # a method whose receiver type lives in another file of the package belongs to that type
    types: dict[tuple[str, str, str], list[str]] = {}
    for f in facts:
        for o in f.objects:
            if o.kind in TYPE_KINDS and f.parents.get(o.id) == f.file.id:
                types.setdefault((_folder(f.path), f.data.package, o.qualname), []).append(o.id)
    for f in facts:
        for o in f.objects:
            if o.kind == "method" and "." in o.qualname and f.parents.get(o.id) == f.file.id:
                key = (_folder(f.path), f.data.package, o.qualname.split(".", 1)[0])
                owners = types.get(key, [])
                if len(owners) == 1:
                    f.parents[o.id] = owners[0]


def resolve(repo: str, facts: list[FileFacts[GoFacts]]) -> Resolution:
    res = Resolution()
    index = ObjectIndex(facts)
    packages: dict[str, list[FileFacts[GoFacts]]] = {}  # folder -> importable (non-test) files
    for f in facts:
        if not f.path.endswith("_test.go"):
            packages.setdefault(_folder(f.path), []).append(f)
    same_package: dict[tuple[str, str], list[FileFacts[GoFacts]]] = {}
    for f in facts:
        same_package.setdefault((_folder(f.path), f.data.package), []).append(f)
    for f in facts:
        outside: set[str] = set()
        bound = _resolve_imports(f, packages, res, outside)
        siblings = same_package[(_folder(f.path), f.data.package)]
        for ref in f.refs:
            if ref.kind == "call":
                _resolve_call(ref, index, bound, siblings, outside, res)
    return res


#: predeclared functions and conversions to predeclared types
_BUILTINS = frozenset({
    "append", "cap", "clear", "close", "complex", "copy", "delete", "imag", "len", "make", "max", "min",
    "new", "panic", "print", "println", "real", "recover", "any", "bool", "byte", "complex64",
    "complex128", "error", "float32", "float64", "int", "int8", "int16", "int32", "int64", "rune",
    "string", "uint", "uint8", "uint16", "uint32", "uint64", "uintptr",
})


def _outside_name(path: str, alias: str | None) -> str:
    """The name an import of a package outside the repository binds: its alias,
    else the path's last element (``yaml.v3`` and ``/v2`` suffixes left out)."""
    if alias:
        return alias
    parts = path.split("/")
    last = parts[-1]
    if re.fullmatch(r"v\d+", last) and len(parts) > 1:
        last = parts[-2]
    return re.sub(r"\.v\d+$", "", last).removeprefix("go-").replace("-", "_")


def _resolve_imports(f: FileFacts[GoFacts], packages: dict[str, list[FileFacts[GoFacts]]],
                     res: Resolution, outside: set[str]) -> dict[str, list[FileFacts[GoFacts]]]:
    """IMPORTS edges of one file; returns the local names bound to repository
    packages, and adds those bound to other packages to ``outside``."""
    module = f.data.module
    bound: dict[str, list[FileFacts[GoFacts]]] = {}
    for ref in f.refs:
        if not isinstance(ref.data, GoImport):
            continue
        if module is None:
            parts = ref.name.split("/")
            if any("/".join(parts[i:]) in packages for i in range(1, len(parts))):
                leave_open(res, f.file.id, "IMPORTS", ref.name, ref.line, "ambiguous-module")
            else:
                res.external += 1
                outside.add(_outside_name(ref.name, ref.data.alias))
            continue
        if ref.name != module and not ref.name.startswith(module + "/"):
            res.external += 1
            outside.add(_outside_name(ref.name, ref.data.alias))
            continue
        target = packages.get(ref.name[len(module) + 1:])
        if not target:
            leave_open(res, f.file.id, "IMPORTS", ref.name, ref.line, "missing-module")
            continue
        for t in target:
            link(res, f.file.id, t.file.id, "IMPORTS", ref.line)
        alias = ref.data.alias
        local = alias if alias not in (None, ".", "_") else target[0].data.package
        if alias != "." and local:
            bound[local] = target
    return bound


def _resolve_call(ref: RawRef, index: ObjectIndex[GoFacts], bound: dict[str, list[FileFacts[GoFacts]]],
                  siblings: list[FileFacts[GoFacts]], outside: set[str], res: Resolution) -> None:
    """A CALLS edge, an external call, or an unresolved reference with its reason."""
    if ref.dynamic:
        leave_open(res, ref.source, "CALLS", ref.name, ref.line, "dynamic-receiver")
        return
    head, _, member = ref.name.partition(".")
    if member:
        if head in bound:
            found = [o for p in bound[head] for o in index.top_level(p.path, member) if o.kind != "method"]
            call_target(res, ref.source, ref.name, ref.line, found)
        elif head in outside:
            res.external += 1
        else:  # a method call on a value: its type is unknown here
            leave_open(res, ref.source, "CALLS", ref.name, ref.line, "dynamic-receiver")
        return
    found = [o for p in siblings for o in index.top_level(p.path, head) if o.kind != "method"]
    if found:
        call_target(res, ref.source, ref.name, ref.line, found)
    elif head in _BUILTINS:
        res.external += 1
    else:  # a function value (parameter, local, closure) or a name we do not know
        leave_open(res, ref.source, "CALLS", ref.name, ref.line, "unknown-name")
