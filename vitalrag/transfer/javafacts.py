"""What a Java tree says about names: declarations, reads, calls and member uses.

Like the Python side, scopes inside a snippet are flattened: a local declared
anywhere in it counts as declared everywhere in it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tree_sitter import Node

from vitalrag.ingest.lang.treesitter import inside_error, start_line, text
from vitalrag.transfer.programs import field_name, walk
from vitalrag.transfer.signatures import JavaSignature, java_signature

TYPE_DECLARATIONS = frozenset({"class_declaration", "interface_declaration", "enum_declaration",
                               "record_declaration", "annotation_type_declaration"})
_DECLARING = {
    ("variable_declarator", "name"), ("formal_parameter", "name"), ("catch_formal_parameter", "name"),
    ("enhanced_for_statement", "name"), ("resource", "name"), ("method_declaration", "name"),
    ("constructor_declaration", "name"), ("enum_constant", "name"), ("lambda_expression", "parameters"),
    ("class_declaration", "name"), ("interface_declaration", "name"), ("enum_declaration", "name"),
    ("record_declaration", "name"), ("annotation_type_declaration", "name"), ("type_pattern", None),
    ("record_pattern_component", None), ("inferred_parameters", None), ("spread_parameter", None),
    ("annotation_type_element_declaration", "name"), ("compact_constructor_declaration", "name"),
    ("pattern", None),
}
_SKIPPED_PARENTS = frozenset({"labeled_statement", "break_statement", "continue_statement", "marker_annotation",
                              "annotation", "element_value_pair", "switch_label", "scoped_identifier",
                              "import_declaration", "package_declaration", "module_declaration"})


@dataclass(slots=True)
class JClass:
    qualname: str
    kind: str
    fields: set[str] = field(default_factory=set)
    methods: dict[str, list[JavaSignature]] = field(default_factory=dict)
    constructors: list[JavaSignature] = field(default_factory=list)
    nested: set[str] = field(default_factory=set)
    superclass: str | None = None
    interfaces: list[str] = field(default_factory=list)
    type_params: set[str] = field(default_factory=set)


@dataclass(slots=True)
class JFile:
    package: str = ""
    imports: dict[str, str] = field(default_factory=dict)  # simple name -> fully qualified
    static_members: dict[str, str] = field(default_factory=dict)  # member -> class fqn
    wildcards: list[str] = field(default_factory=list)  # packages imported with .*
    static_wildcards: list[str] = field(default_factory=list)  # classes imported with static .*
    classes: dict[str, JClass] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class JCall:
    """``kind``: bare, this, super, qualified (``X.m``), new, other."""

    text: str
    line: int
    kind: str
    receiver: str
    name: str
    arity: int


@dataclass(slots=True)
class JSnippet:
    bound: set[str] = field(default_factory=set)
    reads: list[tuple[str, int]] = field(default_factory=list)
    calls: list[JCall] = field(default_factory=list)
    # (receiver, member, line): ``this.x`` and ``Name.x`` reads
    members: list[tuple[str, str, int]] = field(default_factory=list)
    methods: dict[str, list[JavaSignature]] = field(default_factory=dict)


def simple_type(node: Node | None) -> str:
    """``Map`` for ``java.util.Map<K, V>``; '' for primitives and arrays of them."""
    if node is None:
        return ""
    if node.type == "generic_type":
        return simple_type(node.named_children[0] if node.named_children else None)
    if node.type == "scoped_type_identifier":
        return simple_type(node.named_children[-1] if node.named_children else None)
    if node.type == "type_identifier":
        return text(node)
    if node.type in ("superclass", "type_list", "super_interfaces", "extends_interfaces"):
        return simple_type(node.named_children[0] if node.named_children else None)
    return ""


def _is_declaration(ident: Node) -> bool | None:
    """True: declares a name; False: reads one; None: neither (a member name,
    a label, an annotation, part of an import)."""
    parent = ident.parent
    if parent is None:
        return False
    fname = field_name(ident)
    pt = parent.type
    if (pt, fname) in _DECLARING or (pt, None) in _DECLARING:
        return True
    if pt == "method_invocation" and fname == "name":
        return None
    if pt == "field_access" and fname == "field":
        return None
    if pt == "method_reference" and ident.prev_sibling is not None and ident.prev_sibling.type == "::":
        return None
    if pt in _SKIPPED_PARENTS:
        return None
    up: Node | None = parent
    while up is not None and up.type not in ("block", "class_body", "program"):
        if up.type in ("import_declaration", "package_declaration", "annotation", "marker_annotation"):
            return None
        up = up.parent
    return False


def _call_text(node: Node) -> str:
    s = " ".join(text(node).split())
    return s if len(s) <= 80 else s[:77] + "..."


def snippet_facts(root: Node) -> JSnippet:
    facts = JSnippet()
    for node in walk(root):
        t = node.type
        if t == "identifier":
            # see pyfacts: names inside ERROR regions count as declared
            role = True if inside_error(node) else _is_declaration(node)
            if role is True:
                facts.bound.add(text(node))
            elif role is False:
                facts.reads.append((text(node), start_line(node)))
        elif t == "type_parameter":
            facts.bound.update(text(c) for c in node.named_children if c.type == "type_identifier")
        elif t in TYPE_DECLARATIONS:
            facts.bound.add(text(node.child_by_field_name("name")))
        elif t == "method_declaration":
            facts.methods.setdefault(text(node.child_by_field_name("name")), []).append(java_signature(node))
        elif t == "method_invocation":
            obj = node.child_by_field_name("object")
            args = node.child_by_field_name("arguments")
            n = len(args.named_children) - sum(1 for a in args.named_children if "comment" in a.type) if args else 0
            name = text(node.child_by_field_name("name"))
            if obj is None:
                kind, receiver = "bare", ""
            elif obj.type == "this":
                kind, receiver = "this", "this"
            elif obj.type == "super":
                kind, receiver = "super", "super"
            elif obj.type == "identifier":
                kind, receiver = "qualified", text(obj)
            else:
                kind, receiver = "other", text(obj)
            facts.calls.append(JCall(_call_text(node), start_line(node), kind, receiver, name, n))
        elif t == "object_creation_expression":
            args = node.child_by_field_name("arguments")
            n = len([a for a in args.named_children if "comment" not in a.type]) if args else 0
            created = node.child_by_field_name("type")
            type_name = simple_type(created)
            if type_name and created is not None and created.type != "scoped_type_identifier":
                facts.calls.append(JCall(_call_text(node), start_line(node), "new", "", type_name, n))
        elif t == "field_access":
            obj, member = node.child_by_field_name("object"), node.child_by_field_name("field")
            if (obj is not None and member is not None and obj.type in ("this", "identifier")
                    and member.type == "identifier"):
                facts.members.append((text(obj), text(member), start_line(member)))
    return facts


def file_facts(root: Node) -> JFile:
    """Package, imports and every type declared in a Java file."""
    jf = JFile()
    for child in root.named_children:
        if child.type == "package_declaration":
            jf.package = text(child.named_children[0]) if child.named_children else ""
        elif child.type == "import_declaration":
            raw = " ".join(text(child).removeprefix("import").rstrip(";").split())
            static = raw.startswith("static ")
            name = raw.removeprefix("static ").strip()
            if name.endswith(".*"):
                (jf.static_wildcards if static else jf.wildcards).append(name[:-2])
            elif static:
                jf.static_members[name.rsplit(".", 1)[-1]] = name.rsplit(".", 1)[0]
            else:
                jf.imports[name.rsplit(".", 1)[-1]] = name
        elif child.type in TYPE_DECLARATIONS:
            _collect_type(child, "", jf)
    return jf


def _collect_type(node: Node, prefix: str, jf: JFile) -> JClass:
    name = text(node.child_by_field_name("name"))
    klass = JClass(prefix + name, node.type.removesuffix("_declaration"))
    jf.classes[klass.qualname] = klass
    sup = node.child_by_field_name("superclass")
    written = sup.named_children[0] if sup is not None and sup.named_children else None
    if written is not None and written.type == "generic_type" and written.named_children:
        written = written.named_children[0]
    if written is not None and written.type == "scoped_type_identifier":
        klass.superclass = text(written)  # fully qualified as written
    else:
        klass.superclass = simple_type(sup) or None
    for fname in ("interfaces",):
        ifaces = node.child_by_field_name(fname)
        for tl in ifaces.named_children if ifaces is not None else []:
            klass.interfaces.extend(simple_type(t) for t in tl.named_children if simple_type(t))
    for c in node.named_children:
        if c.type == "extends_interfaces":
            for tl in c.named_children:
                klass.interfaces.extend(simple_type(t) for t in tl.named_children if simple_type(t))
    tparams = node.child_by_field_name("type_parameters")
    for tp in tparams.named_children if tparams is not None else []:
        klass.type_params.update(text(i) for i in tp.named_children if i.type == "type_identifier")
    if node.type == "record_declaration":
        params = node.child_by_field_name("parameters")
        for p in params.named_children if params is not None else []:
            comp = text(p.child_by_field_name("name"))
            if comp:
                klass.fields.add(comp)
                klass.methods.setdefault(comp, []).append(JavaSignature(0, False))
    body = node.child_by_field_name("body")
    members = list(body.named_children) if body is not None else []
    for m in list(members):
        if m.type == "enum_body_declarations":
            members.extend(m.named_children)
    for m in members:
        if m.type in ("field_declaration", "constant_declaration"):
            for d in m.named_children:
                if d.type == "variable_declarator":
                    klass.fields.add(text(d.child_by_field_name("name")))
        elif m.type == "enum_constant":
            klass.fields.add(text(m.child_by_field_name("name")))
        elif m.type in ("method_declaration", "annotation_type_element_declaration"):
            mname = text(m.child_by_field_name("name"))
            sig = java_signature(m) if m.type == "method_declaration" else JavaSignature(0, False)
            klass.methods.setdefault(mname, []).append(sig)
        elif m.type == "constructor_declaration":
            klass.constructors.append(java_signature(m))
        elif m.type in TYPE_DECLARATIONS:
            nested = _collect_type(m, klass.qualname + ".", jf)
            klass.nested.add(nested.qualname.rsplit(".", 1)[-1])
    return klass
