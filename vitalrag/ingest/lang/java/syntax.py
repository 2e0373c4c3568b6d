"""Reading Java declarations off tree-sitter nodes: erased types, parameters, Javadoc."""

from __future__ import annotations

from tree_sitter import Node

from vitalrag.ingest.lang.treesitter import start_line, text

TYPE_DECLS = frozenset({"class_declaration", "record_declaration", "interface_declaration",
                        "annotation_type_declaration", "enum_declaration"})
#: declaration node type -> the kind of object it makes (with a ``name`` identifier,
#: outside anonymous classes)
DECLARATION_KINDS = {
    "class_declaration": "class",
    "record_declaration": "class",
    "interface_declaration": "interface",
    "annotation_type_declaration": "interface",
    "enum_declaration": "enum",
    "method_declaration": "method",
    "annotation_type_element_declaration": "method",
    "constructor_declaration": "method",
    "compact_constructor_declaration": "method",
}
PRIMITIVE_TYPES = frozenset({"integral_type", "floating_point_type", "boolean_type", "void_type"})
TYPE_NODES = frozenset({"type_identifier", "scoped_type_identifier", "generic_type", "array_type"})


def erase(node: Node | None) -> str:
    """A type as written, without type arguments or annotations: ``Map.Entry``, ``int[]``."""
    if node is None:
        return ""
    t = node.type
    if t == "type_identifier" or t in PRIMITIVE_TYPES:
        return text(node)
    if t == "generic_type":
        base = next((c for c in node.named_children if c.type in ("type_identifier", "scoped_type_identifier")), None)
        return erase(base)
    if t == "scoped_type_identifier":
        return ".".join(erase(c) for c in node.named_children if c.type in TYPE_NODES)
    if t == "array_type":
        dims = node.child_by_field_name("dimensions")
        return erase(node.child_by_field_name("element")) + "[]" * max(1, text(dims).count("["))
    if t == "annotated_type":
        return erase(next((c for c in node.named_children if "annotation" not in c.type), None))
    return "".join(text(node).split())


def type_names(node: Node | None) -> list[tuple[str, int]]:
    """Every class-like type written inside a type (type arguments and bounds too)."""
    out: list[tuple[str, int]] = []
    stack = [node] if node is not None else []
    while stack:
        n = stack.pop()
        if n.type in ("type_identifier", "scoped_type_identifier"):
            name = erase(n)
            if name != "var":
                out.append((name, start_line(n)))
            if n.type == "scoped_type_identifier":
                stack.extend(c for c in n.named_children if c.type == "generic_type")
            continue
        if n.type == "generic_type":
            stack.extend(reversed(n.named_children))
            continue
        stack.extend(reversed([c for c in n.named_children if "annotation" not in c.type]))
    return out


def javadoc(node: Node) -> str:
    prev = node.prev_named_sibling
    while prev is not None and prev.type == "line_comment":
        prev = prev.prev_named_sibling
    if prev is None or prev.type != "block_comment":
        return ""
    raw = text(prev)
    if not raw.startswith("/**") or raw == "/**/":
        return ""
    body = raw[3:-2] if raw.endswith("*/") else raw[3:]
    # per line: the leading "*" (and one space after it) and trailing whitespace go
    # (string methods: about three times faster than the equivalent regexes)
    out = []
    for line in body.split("\n"):
        bare = line.lstrip()
        if bare[:1] == "*":
            line = bare[2:] if bare[1:2] == " " else bare[1:]
        out.append(line.rstrip())
    return "\n".join(out).strip()


def modifiers_node(node: Node) -> Node | None:
    """A declaration's ``modifiers``: its first child when it has them (the
    grammar puts them first; comments between declarations are siblings)."""
    first = node.child(0)
    return first if first is not None and first.type == "modifiers" else None


def annotation_names(node: Node) -> list[str]:
    mods = modifiers_node(node)
    if mods is None:
        return []
    return [text(a.child_by_field_name("name")).rsplit(".", 1)[-1]
            for a in mods.named_children if a.type in ("marker_annotation", "annotation")]


def modifiers(node: Node) -> set[str]:
    mods = modifiers_node(node)
    return {c.type for c in mods.children if not c.is_named} if mods is not None else set()


def type_params(node: Node) -> dict[str, str]:
    """Type parameter -> its first bound (erased), ``""`` when unbounded."""
    tps = node.child_by_field_name("type_parameters")
    out: dict[str, str] = {}
    for tp in tps.named_children if tps is not None else ():
        ident = next((c for c in tp.named_children if c.type in ("type_identifier", "identifier")), None)
        bound = next((c for c in tp.named_children if c.type == "type_bound"), None)
        if ident is not None:
            out[text(ident)] = erase(bound.named_children[0]) if bound is not None and bound.named_children else ""
    return out


def formal_params(node: Node) -> tuple[list[tuple[str, str]], bool]:
    """(type, name) per formal parameter and whether the last one is varargs.

    A record's compact constructor takes the record's components."""
    if node.type == "compact_constructor_declaration" and node.parent is not None and node.parent.parent is not None:
        node = node.parent.parent
    plist = node.child_by_field_name("parameters")
    out: list[tuple[str, str]] = []
    varargs = False
    if plist is None:
        return out, varargs
    for p in plist.named_children:
        if p.type == "formal_parameter":
            ptype = erase(p.child_by_field_name("type"))
            dims = p.child_by_field_name("dimensions")
            if dims is not None:
                ptype += "[]" * text(dims).count("[")
            out.append((ptype, text(p.child_by_field_name("name"))))
        elif p.type == "spread_parameter":
            tnode = next((c for c in p.named_children if c.type in TYPE_NODES or c.type in PRIMITIVE_TYPES), None)
            decl = next((c for c in p.named_children if c.type == "variable_declarator"), None)
            name = text(decl.child_by_field_name("name")) if decl is not None else ""
            out.append((erase(tnode) + "...", name))
            varargs = True
    return out, varargs


def param_type_nodes(node: Node) -> list[Node]:
    plist = node.child_by_field_name("parameters")
    out = []
    for p in plist.named_children if plist is not None else ():
        tnode = p.child_by_field_name("type")
        if tnode is None:
            tnode = next((c for c in p.named_children if c.type in TYPE_NODES), None)
        if tnode is not None:
            out.append(tnode)
    return out
