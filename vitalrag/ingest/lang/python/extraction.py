"""Python: extract objects and raw references with tree-sitter.

Objects: the file (its module docstring), classes, functions (nested ones
qualified ``outer.inner``), methods, and tests (pytest ``test*`` functions in
test files, ``test*`` methods of ``Test*`` classes there, and ``test*`` methods
of ``unittest.TestCase`` subclasses anywhere). An object's lines include its
decorators; its signature is the ``def``/``class`` header.

References are recorded per innermost enclosing definition and resolved later
by ``vitalrag.ingest.lang.python.resolution`` with the whole repository in view.
"""

from __future__ import annotations

import ast
import bisect
import inspect
import posixpath
import re

from tree_sitter import Node, QueryCursor

from vitalrag.ingest.facts import FileFacts, RawRef
from vitalrag.ingest.lang import parser, tags_query
from vitalrag.ingest.lang.limits import NO_DEADLINE, Deadline, check_nesting
from vitalrag.ingest.lang.python.facts import FromImport, Import, PythonFacts
from vitalrag.ingest.lang.treesitter import end_line, header, start_line, syntax_problem, text
from vitalrag.kernel.text import content_hash
from vitalrag.model import CodeObject, file_id, object_id, split_lines

__all__ = ["extract", "is_test_file"]


def is_test_file(path: str) -> bool:
    base = posixpath.basename(path)
    parts = path.split("/")[:-1]
    return (base.startswith("test_") or base.endswith("_test.py") or base == "tests.py"
            or any(p in ("tests", "test", "testing") for p in parts))


def dotted(node: Node | None) -> str | None:
    """``a.b.c`` for identifier/attribute chains, ``super().m`` for super calls, else None."""
    if node is None:
        return None
    if node.type == "identifier":
        return text(node)
    if node.type == "attribute":
        base = dotted(node.child_by_field_name("object"))
        attr = node.child_by_field_name("attribute")
        if base is None or attr is None:
            return None
        return f"{base}.{text(attr)}"
    if node.type == "call":
        fn = node.child_by_field_name("function")
        if fn is not None and fn.type == "identifier" and text(fn) == "super":
            return "super()"
        # `Engine(...).run`: the resolver may know what a constructor call returns
        inner = dotted(fn)
        return f"{inner}()" if inner is not None and not inner.endswith("()") else None
    return None


def _docstring(body: Node | None) -> str:
    if body is None or not body.named_children:
        return ""
    first = body.named_children[0]
    if first.type != "expression_statement" or not first.named_children:
        return ""
    s = first.named_children[0]
    if s.type != "string":
        return ""
    raw = text(s)
    # the literal's value as Python reads it (escapes, prefixes, implicit concatenation);
    # ast.parse rather than ast.literal_eval, whose recursive helpers leave a reference
    # cycle per call (garbage that only a collection frees) and which is slower
    try:
        node: ast.expr | None = ast.parse(raw, mode="eval").body
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        node = None
    value = node.value if isinstance(node, ast.Constant) else raw.strip("\"'rRbBuUfF")
    return inspect.cleandoc(value) if isinstance(value, str) else ""


class _Scopes:
    """Find the innermost definition enclosing a byte offset."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.items: list[tuple[int, int, str, int]] = []  # (start, end, id, parent index)

    def add(self, start: int, end: int, obj_id: str, parent: int) -> int:
        self.starts.append(start)
        self.items.append((start, end, obj_id, parent))
        return len(self.items) - 1

    def owner(self, pos: int, default: str) -> str:
        i = bisect.bisect_right(self.starts, pos) - 1
        while i >= 0:
            start, end, obj_id, parent = self.items[i]
            if start <= pos < end:
                return obj_id
            i = parent
        return default


def extract(repo: str, path: str, source: str, deadline: Deadline = NO_DEADLINE) -> FileFacts[PythonFacts]:
    data = source.encode("utf-8")
    tree = parser("python").parse(data)
    root = tree.root_node
    fid = file_id(repo, path)
    n_lines = source.count("\n") + (0 if source.endswith("\n") or not source else 1)
    file_obj = CodeObject(
        id=fid, kind="file", name=posixpath.basename(path), qualname=path, repo=repo, path=path,
        language="python", start_line=1, end_line=max(n_lines, 1),
        docstring=_docstring(root), content_hash=content_hash(source),
    )
    facts = FileFacts(path=path, language="python", file=file_obj, data=PythonFacts(), text=source)
    problem = syntax_problem(root)
    if problem:
        facts.problems.append(problem)
    lines = split_lines(source)
    test_file = is_test_file(path)

    matches = QueryCursor(tags_query("python")).matches(root)
    defs = sorted(
        ((caps["definition.class"][0], True) if "definition.class" in caps else (caps["definition.function"][0], False)
         for _, caps in matches if "definition.class" in caps or "definition.function" in caps),
        key=lambda p: p[0].start_byte,
    )
    scopes = _Scopes()
    # open definitions: (end byte, scope index, id, qualname, "class" | "function")
    stack: list[tuple[int, int, str, str, str]] = []
    seen: dict[str, int] = {}
    kinds: dict[str, str] = {}
    secondary: list[str] = []
    class_bases: dict[str, list[str]] = {}
    returns: dict[str, str] = {}
    properties: list[str] = []
    for node, is_class in defs:
        deadline.check()
        while stack and node.start_byte >= stack[-1][0]:
            stack.pop()
        check_nesting(len(stack) + 1)
        parent_id, parent_qual, parent_kind = (stack[-1][2], stack[-1][3], stack[-1][4]) if stack else (fid, "", "file")
        name = text(node.child_by_field_name("name"))
        qualname = f"{parent_qual}.{name}" if parent_qual else name
        outer = node.parent if node.parent is not None and node.parent.type == "decorated_definition" else node
        role = _secondary_role(outer) if outer is not node else None
        if role:
            # `@overload` stubs and property setters: `f#overload1`, `C.v#setter`,
            # so the implementation keeps the plain, readable id
            seen[f"{qualname}#{role}"] = n = seen.get(f"{qualname}#{role}", 0) + 1
            qualname = f"{qualname}#{role}{n if role == 'overload' or n > 1 else ''}"
        else:
            # a second definition of one qualname (if/else branches) gets "#2"
            seen[qualname] = seen.get(qualname, 0) + 1
            if seen[qualname] > 1:
                qualname = f"{qualname}#{seen[qualname]}"
        oid = object_id(repo, path, qualname)
        body = node.child_by_field_name("body")
        if is_class:
            kind = "class"
            bases = []
            supers = node.child_by_field_name("superclasses")
            for arg in supers.named_children if supers is not None else ():
                if arg.type == "keyword_argument":
                    continue
                d = dotted(arg)
                bases.append(d or text(arg))
                facts.refs.append(RawRef("inherit", oid, d or text(arg)[:80], start_line(arg), dynamic=d is None))
            class_bases[oid] = bases
        elif parent_kind == "class":
            kind = "method"
            cls_name = parent_qual.rsplit(".", 1)[-1]
            if name.startswith("test") and (
                any(b.endswith("TestCase") for b in class_bases.get(parent_id, ()))
                or (test_file and cls_name.startswith("Test"))
            ):
                kind = "test"
        else:
            kind = "test" if parent_kind == "file" and test_file and name.startswith("test") else "function"
        if role:
            secondary.append(oid)
        if not is_class:
            returned = annotation_name(node.child_by_field_name("return_type"))
            if returned:
                returns[oid] = returned
            if outer is not node and _is_property(outer):
                properties.append(oid)
        s_line, e_line = start_line(outer), end_line(outer)
        facts.objects.append(CodeObject(
            id=oid, kind=kind, name=name, qualname=qualname, repo=repo, path=path, language="python",
            start_line=s_line, end_line=e_line, signature=header(node, body, data),
            docstring=_docstring(body),
            content_hash=content_hash("\n".join(lines[s_line - 1:e_line])),
        ))
        kinds[oid] = kind
        facts.parents[oid] = parent_id
        si = scopes.add(node.start_byte, node.end_byte, oid, stack[-1][1] if stack else -1)
        stack.append((node.end_byte, si, oid, qualname, "class" if kind == "class" else "function"))

    assigns: dict[str, dict[str, str]] = {}
    attr_assigns: dict[str, dict[str, str]] = {}
    params: dict[str, dict[str, str]] = {}
    imports: list[Import | FromImport] = []
    variables: dict[str, set[str]] = {}
    with_assigns: dict[str, dict[str, str]] = {}
    for _, caps in matches:
        deadline.check()
        if "variable" in caps:
            node = caps["variable"][0]
            variables.setdefault(scopes.owner(node.start_byte, fid), set()).add(text(node))
        elif "with.target" in caps:
            owner = scopes.owner(caps["with.target"][0].start_byte, fid)
            callee = dotted(caps["with.callee"][0])
            if callee:
                with_assigns.setdefault(owner, {})[text(caps["with.target"][0])] = callee
        elif "attribute.name" in caps:
            if text(caps["attribute.object"][0]) in ("self", "cls"):
                node = caps["attribute.name"][0]
                cls = facts.parents.get(scopes.owner(node.start_byte, fid))
                if cls and kinds.get(cls) == "class":
                    variables.setdefault(cls, set()).add(text(node))
        elif "name.reference.call" in caps:
            callee_node = caps["name.reference.call"][0]
            owner = scopes.owner(callee_node.start_byte, fid)
            callee_name = dotted(callee_node)
            facts.refs.append(RawRef("call", owner, callee_name or text(callee_node)[:80],
                                     start_line(callee_node), dynamic=callee_name is None))
        elif "reference.import" in caps:
            node = caps["reference.import"][0]
            owner = scopes.owner(node.start_byte, fid)
            imports.extend(_imports(node, owner))
        elif "assign" in caps:
            owner = scopes.owner(caps["assign"][0].start_byte, fid)
            callee = dotted(caps["assign.callee"][0])
            if callee:
                assigns.setdefault(owner, {})[text(caps["assign.target"][0])] = callee
        elif "assign.attr" in caps:
            if text(caps["assign.attr.object"][0]) not in ("self", "cls"):
                continue
            owner = scopes.owner(caps["assign.attr"][0].start_byte, fid)
            cls = facts.parents.get(owner)
            callee = dotted(caps["assign.attr.callee"][0])
            if cls and callee and kinds.get(cls) == "class":
                attr_assigns.setdefault(cls, {})[text(caps["assign.attr.name"][0])] = callee
        elif "param.name" in caps:
            pname = caps["param.name"][0]
            owner = scopes.owner(pname.start_byte, fid)
            d = annotation_name(caps["param.type"][0])
            if d:
                params.setdefault(owner, {})[text(pname)] = d
    facts.data = PythonFacts(
        imports=imports, assigns=assigns, attr_assigns=attr_assigns, params=params,
        variables={k: sorted(v) for k, v in variables.items()}, secondary=secondary,
        with_assigns=with_assigns, returns=returns, properties=properties,
        returns_self=[o.id for o in facts.objects
                      if o.name == "__enter__" and _returns_self(lines[o.start_line - 1:o.end_line])],
    )
    return facts


_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_PROPERTY_DECORATORS = frozenset({"property", "cached_property", "functools.cached_property"})


def annotation_name(node: Node | None) -> str | None:
    """The class an annotation names, as written: ``Session``, ``models.Response``,
    the forward reference ``"Session"``, and ``X`` of ``X | None`` or
    ``Optional[X]``; None for anything else (generics, unions of classes)."""
    if node is not None and node.type == "type":
        node = node.named_children[0] if node.named_children else None
    if node is None:
        return None
    if node.type in ("identifier", "attribute"):
        return dotted(node)
    if node.type == "string":
        inner = text(node).strip("'\"").strip()
        return inner if _DOTTED.fullmatch(inner) else None
    if node.type == "binary_operator" and text(node.child_by_field_name("operator")) == "|":
        sides = [c for c in (node.child_by_field_name("left"), node.child_by_field_name("right"))
                 if c is not None and c.type != "none" and text(c) != "None"]
        return annotation_name(sides[0]) if len(sides) == 1 else None
    if node.type == "generic_type" and len(node.named_children) == 2:  # Optional[X]
        head, params = node.named_children
        if text(head) == "Optional" and len(params.named_children) == 1:
            return annotation_name(params.named_children[0])
    if node.type == "subscript" and text(node.child_by_field_name("value")) == "typing.Optional":
        subscripts = node.children_by_field_name("subscript")
        return annotation_name(subscripts[0]) if len(subscripts) == 1 else None
    return None


def _is_property(decorated: Node) -> bool:
    return any(dec.type == "decorator" and text(dec).lstrip("@").strip() in _PROPERTY_DECORATORS
               for dec in decorated.children)


def _returns_self(body: list[str]) -> bool:
    """Every ``return`` in these lines is ``return self``."""
    returns = [ln.strip() for ln in body if ln.strip().startswith("return")]
    return bool(returns) and all(r == "return self" for r in returns)


def _secondary_role(decorated: Node) -> str | None:
    """``overload`` for typing stubs, ``setter``/``deleter`` for property accessors:
    definitions that are not the name's main one."""
    for dec in decorated.children:
        if dec.type == "decorator":
            d = text(dec).lstrip("@").strip()
            if d == "overload" or d.endswith(".overload"):
                return "overload"
            if d.endswith(".setter"):
                return "setter"
            if d.endswith(".deleter"):
                return "deleter"
    return None


def _imports(node: Node, owner: str) -> list[Import | FromImport]:
    line = start_line(node)
    out: list[Import | FromImport] = []
    if node.type == "import_statement":
        for child in node.named_children:
            if child.type == "dotted_name":
                out.append(Import(text(child), None, line, owner))
            elif child.type == "aliased_import":
                out.append(Import(text(child.child_by_field_name("name")),
                                  text(child.child_by_field_name("alias")), line, owner))
        return out
    module_node = node.child_by_field_name("module_name")
    level = 0
    module = ""
    if module_node is not None:
        if module_node.type == "relative_import":
            for c in module_node.children:
                if c.type == "import_prefix":
                    level = text(c).count(".")
                elif c.type == "dotted_name":
                    module = text(c)
        else:
            module = text(module_node)
    names: list[tuple[str, str | None]] = []
    for child in node.children_by_field_name("name"):
        if child.type == "dotted_name":
            names.append((text(child), None))
        elif child.type == "aliased_import":
            names.append((text(child.child_by_field_name("name")), text(child.child_by_field_name("alias"))))
    star = any(c.type == "wildcard_import" for c in node.children)
    out.append(FromImport(module, level, names, star, line, owner))
    return out
