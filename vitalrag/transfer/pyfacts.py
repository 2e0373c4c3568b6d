"""What a Python tree says about names: what it binds, what it reads, what it calls.

Scopes are flattened: a name bound anywhere in a snippet counts as bound
everywhere in it. That errs towards leniency (a witness should not fire on a
scoping subtlety); what it catches is names bound nowhere at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tree_sitter import Node

from vitalrag.ingest.lang.treesitter import inside_error, start_line, text
from vitalrag.transfer.programs import field_name, walk
from vitalrag.transfer.signatures import PyCallShape, PySignature, python_signature

_PATTERNS = frozenset({"pattern_list", "tuple_pattern", "list_pattern", "list_splat_pattern",
                       "parenthesized_expression", "tuple", "list", "expression_list"})
_TARGET_OWNERS = {("assignment", "left"), ("augmented_assignment", "left"), ("for_statement", "left"),
                  ("for_in_clause", "left"), ("named_expression", "name")}
_IMPORTS = frozenset({"import_statement", "import_from_statement", "future_import_statement"})
_PARAMS = frozenset({"parameters", "lambda_parameters"})


@dataclass(frozen=True, slots=True)
class PyImport:
    """``local`` is the bound name; ``name`` the imported object (or dotted module
    for ``import a.b``); ``module`` the ``from`` part ('' for ``import``)."""

    local: str
    name: str
    module: str
    line: int


@dataclass(slots=True)
class PyClass:
    qualname: str
    members: set[str] = field(default_factory=set)
    methods: dict[str, list[PySignature]] = field(default_factory=dict)
    bases: list[str] = field(default_factory=list)  # base expressions as written


@dataclass(slots=True)
class PyModule:
    """The module-level view of one file."""

    names: set[str] = field(default_factory=set)
    imports: list[PyImport] = field(default_factory=list)
    functions: dict[str, list[PySignature]] = field(default_factory=dict)
    classes: dict[str, PyClass] = field(default_factory=dict)
    star_import: bool = False


@dataclass(frozen=True, slots=True)
class PyCall:
    """One call in a snippet. ``receiver`` is '' for a bare name, else the
    receiver as written (``self``, ``super()``, ``utils``)."""

    text: str
    line: int
    receiver: str
    name: str
    shape: PyCallShape


@dataclass(slots=True)
class PySnippet:
    bound: set[str] = field(default_factory=set)
    reads: list[tuple[str, int]] = field(default_factory=list)
    # (receiver, attribute, line) for reads of ``name.attr`` with a plain-name receiver
    attributes: list[tuple[str, str, int]] = field(default_factory=list)
    self_assigned: set[str] = field(default_factory=set)
    calls: list[PyCall] = field(default_factory=list)
    definitions: dict[str, list[PySignature]] = field(default_factory=dict)


def imports_of(node: Node) -> list[PyImport]:
    """The names an import statement binds."""
    out: list[PyImport] = []
    line = start_line(node)
    if node.type == "import_statement":
        for item in node.named_children:
            if item.type == "aliased_import":
                out.append(PyImport(text(item.child_by_field_name("alias")),
                                    text(item.child_by_field_name("name")), "", line))
            elif item.type == "dotted_name":
                dotted = text(item)
                out.append(PyImport(dotted.split(".", 1)[0], dotted, "", line))
    elif node.type == "import_from_statement":
        module = text(node.child_by_field_name("module_name"))
        for item in node.named_children:
            if field_name(item) == "module_name":
                continue
            if item.type == "aliased_import":
                out.append(PyImport(text(item.child_by_field_name("alias")),
                                    text(item.child_by_field_name("name")), module, line))
            elif item.type == "dotted_name":
                out.append(PyImport(text(item), text(item), module, line))
            elif item.type == "wildcard_import":
                out.append(PyImport("*", "*", module, line))
    return out


def _target_names(node: Node | None, into: set[str], self_attrs: set[str]) -> None:
    if node is None:
        return
    if node.type == "identifier":
        into.add(text(node))
    elif node.type == "attribute":
        obj = node.child_by_field_name("object")
        if obj is not None and obj.type == "identifier" and text(obj) in ("self", "cls"):
            self_attrs.add(text(node.child_by_field_name("attribute")))
    elif node.type in _PATTERNS:
        for c in node.named_children:
            _target_names(c, into, self_attrs)


def _is_binding(ident: Node) -> bool | None:
    """True: the identifier binds a name; False: it reads one; None: neither
    (an attribute or keyword name, part of an import)."""
    parent = ident.parent
    if parent is None:
        return False
    fname = field_name(ident)
    pt = parent.type
    if (pt == "attribute" and fname == "attribute") or (pt == "keyword_argument" and fname == "name"):
        return None
    if pt in ("function_definition", "class_definition") and fname == "name":
        return True
    if pt in _PARAMS or pt in ("list_splat_pattern", "dictionary_splat_pattern", "as_pattern_target",
                               "global_statement", "nonlocal_statement"):
        return True
    if pt in ("default_parameter", "typed_default_parameter") and fname == "name":
        return True
    if pt == "typed_parameter" and parent.named_children and parent.named_children[0].id == ident.id:
        return True
    node: Node = ident
    owner: Node | None = parent
    while owner is not None and owner.type in _PATTERNS:
        node, owner = owner, owner.parent
    if owner is not None and (owner.type, field_name(node)) in _TARGET_OWNERS:
        return True
    up: Node | None = parent
    while up is not None:
        if up.type in _IMPORTS:
            return None
        if up.type == "case_pattern":
            return True
        if up.type in ("block", "module"):
            break
        up = up.parent
    return False


def _call_shape(args: Node | None) -> PyCallShape:
    positional, keywords, star, dstar = 0, [], False, False
    for a in args.named_children if args is not None else []:
        if a.type == "keyword_argument":
            keywords.append(text(a.child_by_field_name("name")))
        elif a.type == "list_splat":
            star = True
        elif a.type == "dictionary_splat":
            dstar = True
        elif a.type != "comment":
            positional += 1
    if args is not None and args.type == "generator_expression":
        positional = 1
    return PyCallShape(positional, tuple(keywords), star, dstar)


def snippet_facts(root: Node) -> PySnippet:
    """Bindings, reads, member reads and calls of a snippet (flattened scopes)."""
    facts = PySnippet()
    for node in walk(root):
        t = node.type
        if t == "identifier":
            # inside a region the parser could not make sense of, roles are
            # guesses: count such names as bound, so they neither read as
            # unresolved nor hide a real read elsewhere
            role = True if inside_error(node) else _is_binding(node)
            if role is True:
                facts.bound.add(text(node))
            elif role is False:
                facts.reads.append((text(node), start_line(node)))
        elif t in _IMPORTS:
            facts.bound.update(i.local for i in imports_of(node))
        elif t in ("assignment", "augmented_assignment", "for_statement", "for_in_clause"):
            left = node.child_by_field_name("left")
            if left is not None:
                _target_names(left, set(), facts.self_assigned)
        elif t == "attribute":
            obj, attr = node.child_by_field_name("object"), node.child_by_field_name("attribute")
            if obj is not None and attr is not None and obj.type == "identifier":
                if not (node.parent is not None and node.parent.type == "call"
                        and field_name(node) == "function"):
                    facts.attributes.append((text(obj), text(attr), start_line(attr)))
        elif t == "function_definition":
            facts.definitions.setdefault(text(node.child_by_field_name("name")), []).append(
                python_signature(node))
        elif t == "call":
            call = _call(node)
            if call is not None:
                facts.calls.append(call)
    return facts


def _call(node: Node) -> PyCall | None:
    fn = node.child_by_field_name("function")
    shape = _call_shape(node.child_by_field_name("arguments"))
    snippet = " ".join(text(node).split())
    snippet = snippet if len(snippet) <= 80 else snippet[:77] + "..."
    if fn is None:
        return None
    if fn.type == "identifier":
        return PyCall(snippet, start_line(node), "", text(fn), shape)
    if fn.type == "attribute":
        obj, attr = fn.child_by_field_name("object"), fn.child_by_field_name("attribute")
        if obj is None or attr is None:
            return None
        if obj.type == "identifier":
            return PyCall(snippet, start_line(node), text(obj), text(attr), shape)
        if obj.type == "call" and text(obj.child_by_field_name("function")) == "super":
            return PyCall(snippet, start_line(node), "super()", text(attr), shape)
    return None


def module_facts(root: Node) -> PyModule:
    """Module-level names, imports, functions (by qualname) and classes of a file."""
    mod = PyModule()
    _collect(root, mod, prefix="", cls=None, toplevel=True)
    return mod


def _collect(node: Node, mod: PyModule, prefix: str, cls: PyClass | None, toplevel: bool) -> None:
    for child in node.named_children:
        t = child.type
        inner = child
        if t == "decorated_definition":
            inner = child.child_by_field_name("definition") or child
        if inner.type == "function_definition":
            name = text(inner.child_by_field_name("name"))
            sig = python_signature(inner)
            mod.functions.setdefault(prefix + name, []).append(sig)
            if toplevel:
                mod.names.add(name)
            if cls is not None:
                cls.members.add(name)
                cls.methods.setdefault(name, []).append(sig)
                for n in walk(inner):
                    if n.type in ("assignment", "augmented_assignment", "for_statement"):
                        left = n.child_by_field_name("left")
                        if left is not None:
                            _target_names(left, set(), cls.members)
            continue
        if inner.type == "class_definition":
            name = text(inner.child_by_field_name("name"))
            qual = prefix + name
            klass = mod.classes.setdefault(qual, PyClass(qual))
            supers = inner.child_by_field_name("superclasses")
            for b in supers.named_children if supers is not None else []:
                if b.type != "keyword_argument":
                    klass.bases.append(text(b))
            if toplevel:
                mod.names.add(name)
            if cls is not None:
                cls.members.add(name)
            body = inner.child_by_field_name("body")
            if body is not None:
                _collect(body, mod, prefix=qual + ".", cls=klass, toplevel=False)
            continue
        if t in _IMPORTS:
            imps = imports_of(child)
            if toplevel:
                mod.imports.extend(imps)
                mod.names.update(i.local for i in imps if i.local != "*")
                mod.star_import |= any(i.local == "*" for i in imps)
            continue
        if t in ("expression_statement",):
            for n in child.named_children:
                if n.type in ("assignment", "augmented_assignment"):
                    names: set[str] = set()
                    _target_names(n.child_by_field_name("left"), names, set())
                    if toplevel:
                        mod.names.update(names)
                    if cls is not None:
                        cls.members.update(names)
            continue
        if t == "global_statement" and toplevel:
            mod.names.update(text(n) for n in child.named_children)
            continue
        if t in ("if_statement", "try_statement", "with_statement", "for_statement", "while_statement",
                 "block", "else_clause", "elif_clause", "except_clause", "finally_clause",
                 "except_group_clause"):
            if t in ("for_statement",) and toplevel:
                _target_names(child.child_by_field_name("left"), mod.names, set())
            if t == "with_statement" and toplevel:
                for n in walk(child):
                    if n.type == "as_pattern_target":
                        _target_names(n.named_children[0], mod.names, set()) if n.named_children else None
            if t == "except_clause" and toplevel:
                for n in child.named_children:
                    if n.type == "as_pattern":
                        for m in n.named_children:
                            if m.type == "as_pattern_target" and m.named_children:
                                _target_names(m.named_children[0], mod.names, set())
            _collect(child, mod, prefix, cls, toplevel)
