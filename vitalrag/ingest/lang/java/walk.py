"""Java: walk a file's tree for references, knowing each one's scope.

Locals, parameters, lambda parameters and pattern variables are tracked per
block, so that a receiver or an argument that is a variable carries its
declared type; fields, enum constants and record components go to their type's
entry. What a reference needs later (receiver, arguments, enclosing class,
enclosing anonymous classes) is encoded as ``facts`` for ``calls``; see
``ReferenceWalker.encode``.
"""

from __future__ import annotations

from collections.abc import Callable

from tree_sitter import Node

from vitalrag.ingest.facts import RawRef
from vitalrag.ingest.lang.java.facts import (
    MAX_ANON,
    Anon,
    Call,
    CallSite,
    Cast,
    Cond,
    Element,
    Expr,
    FieldAccess,
    ImportDecl,
    JavaMethod,
    JavaType,
    Lit,
    Name,
    New,
    Opaque,
    Super,
    Supertype,
    This,
    TypeUse,
    Var,
)
from vitalrag.ingest.lang.java.syntax import (
    DECLARATION_KINDS,
    PRIMITIVE_TYPES,
    TYPE_DECLS,
    TYPE_NODES,
    erase,
    formal_params,
    modifiers,
    param_type_nodes,
    type_names,
    type_params,
)
from vitalrag.ingest.lang.limits import NO_DEADLINE, Deadline, check_nesting
from vitalrag.ingest.lang.treesitter import start_line, text
from vitalrag.model import CodeObject

_SCOPE_NODES = frozenset({"block", "constructor_body", "for_statement", "enhanced_for_statement",
                          "catch_clause", "try_with_resources_statement", "lambda_expression",
                          "switch_block_statement_group", "switch_rule"})
#: nodes whose subtrees hold nothing the walk records (type uses are read at their declarations)
_INERT = frozenset({
    "identifier", "type_identifier", "scoped_type_identifier", "generic_type", "array_type",
    "integral_type", "floating_point_type", "boolean_type", "void_type", "line_comment", "block_comment",
    "modifiers", "marker_annotation", "string_literal", "character_literal", "decimal_integer_literal",
    "hex_integer_literal", "decimal_floating_point_literal", "true", "false", "null_literal",
    "package_declaration", "type_parameters", "superclass", "super_interfaces",
    "extends_interfaces", "throws", "dimensions", "this", "super", "formal_parameters",
})
#: nodes ``visit`` acts on (besides definitions)
_VISITED = frozenset({
    "class_declaration", "record_declaration", "interface_declaration", "annotation_type_declaration",
    "enum_declaration", "method_declaration", "constructor_declaration", "compact_constructor_declaration",
    "annotation_type_element_declaration", "class_body", "local_variable_declaration", "field_declaration",
    "constant_declaration", "resource", "catch_formal_parameter", "instanceof_expression", "method_invocation",
    "object_creation_expression", "explicit_constructor_invocation", "method_reference", "enum_constant",
    "import_declaration",
}) | _SCOPE_NODES
_LITERALS = {
    "string_literal": "String", "text_block": "String", "character_literal": "char",
    "true": "boolean", "false": "boolean", "null_literal": "null", "class_literal": "Class",
}
_MAX_DEPTH = 24
_COMMENTS = frozenset({"line_comment", "block_comment"})
#: nodes whose visit only records a call (and cannot change the scope)
_CALL_NODES = frozenset({"method_invocation", "object_creation_expression", "explicit_constructor_invocation",
                         "method_reference"})
_MISSING = Opaque("missing")
_TOO_DEEP = Opaque("too-deep")


def _arguments(args: Node | None) -> list[Node]:
    return [a for a in args.named_children if a.type not in _COMMENTS] if args is not None else []


class _Bindings:
    """The scopes open at the walk's position (outermost first) and, per name, the
    open scopes that bind it (innermost last): a lookup is one dict access however
    deep the scopes nest (walking up the scopes cost the depth, quadratic in
    nested anonymous classes). Exact because the walk is depth-first and a node's
    scope is opened before its children are seen: only the innermost open scope
    gains names or looks one up."""

    __slots__ = ("by_name", "open")

    def __init__(self) -> None:
        self.by_name: dict[str, list[_Scope]] = {}
        self.open: list[_Scope] = []

    def close(self) -> None:
        """Forget the scopes (they refer to this table: a cycle to break)."""
        self.open.clear()
        self.by_name.clear()

    def reach(self, scope: _Scope) -> None:
        """Close the scopes opened inside ``scope`` (the walk has left them)."""
        while self.open[-1] is not scope:
            for name in self.open.pop().names:
                binders = self.by_name[name]
                binders.pop()
                if not binders:
                    del self.by_name[name]


class _Scope:
    """Names a block (a method, a lambda...) declares, and their types; opened
    (made the innermost) as it is made, inside ``parent``."""

    __slots__ = ("names", "table")

    def __init__(self, parent: _Scope | None) -> None:
        self.names: dict[str, str] = {}
        self.table: _Bindings = parent.table if parent is not None else _Bindings()
        self.table.open.append(self)

    def bind(self, name: str, declared: str) -> None:
        if name not in self.names:
            self.table.by_name.setdefault(name, []).append(self)
        self.names[name] = declared

    def lookup(self, name: str) -> str | None:
        binders = self.table.by_name.get(name)
        return binders[-1].names[name] if binders else None


class _Ctx:
    """Where the walker is: the object that owns what it finds, the class, the scope."""

    __slots__ = ("owner", "cls", "scope", "anon")

    def __init__(self, owner: str, cls: str | None, scope: _Scope, anon: Anon) -> None:
        self.owner = owner
        self.cls = cls
        self.scope = scope
        self.anon = anon


#: declaration node types that make an object (with a ``name`` identifier, outside anonymous classes)
DECLARATIONS = frozenset(DECLARATION_KINDS)
#: ``define(node, type, name, parent id, enclosing class id)``: the object a declaration
#: makes and, for a method, its ``formal_params``
Define = Callable[[Node, str, str, str, "str | None"], tuple[CodeObject, "tuple[list[tuple[str, str]], bool] | None"]]


class ReferenceWalker:
    """Collects a file's objects (made by ``define`` as their declarations are
    met, in source order), calls, type uses, imports and supertypes, and its
    types' fields and methods.

    A declaration makes an object when it has a name and no anonymous class
    (or enum-constant body) encloses it; its parent is the object that
    encloses it, else the file."""

    def __init__(self, fid: str, define: Define, deadline: Deadline = NO_DEADLINE) -> None:
        self.fid = fid
        self.define = define
        self.deadline = deadline
        self._depth: dict[str, int] = {fid: 0}  # object id -> how deep its declaration nests
        self.objects: list[CodeObject] = []
        self.parents: dict[str, str] = {}  # object id -> its container's id
        self.imports: list[RawRef] = []
        self.refs: list[RawRef] = []
        self.types: list[JavaType] = []
        self.methods: list[JavaMethod] = []
        self.type_info: dict[str, JavaType] = {}  # type id -> its entry in self.types
        self.method_tparams: dict[str, dict[str, str]] = {}  # generic method id -> its type parameters
        #: node id -> (its encoding, the depth it was encoded at); see ``encode``
        self._encoded: dict[int, tuple[Expr, int]] = {}
        self._type_uses: dict[str | None, TypeUse] = {}  # one per class: they are values
        self._cuts = 0  # encodings cut at ``_MAX_DEPTH`` so far

    def walk(self, root: Node) -> None:
        # (node, its type, the context it is seen in, its parent); inert nodes are never
        # pushed. The parent comes along: tree-sitter finds it from the root down, which
        # costs the depth (quadratic in nested anonymous classes)
        stack: list[tuple[Node, str, _Ctx, Node | None]] = [
            (root, root.type, _Ctx(self.fid, None, _Scope(None), ()), None)]
        pop, push = stack.pop, stack.append
        inert, visited = _INERT, _VISITED
        bindings = stack[0][2].scope.table
        try:
            while stack:
                node, t, ctx, parent = pop()
                if bindings.open[-1] is not ctx.scope:
                    bindings.reach(ctx.scope)
                if t == "method_invocation":  # the most frequent by far: straight to it
                    self.call(node, ctx)
                elif t in visited:
                    ctx = self.visit(node, t, ctx, parent)
                for c in reversed(node.named_children):
                    ct = c.type
                    if ct not in inert:
                        push((c, ct, ctx, node))
        finally:
            bindings.close()

    def visit(self, node: Node, t: str, ctx: _Ctx, parent: Node | None) -> _Ctx:
        self.deadline.check()
        if t not in _CALL_NODES:
            self._encoded.clear()  # the scope may change here (see ``encode``)
        if t in DECLARATIONS and not ctx.anon:
            name = node.child_by_field_name("name")
            if name is not None and name.type == "identifier":
                depth = self._depth[ctx.owner] + 1
                check_nesting(depth)
                obj, params = self.define(node, t, text(name), ctx.owner, ctx.cls)
                self._depth[obj.id] = depth
                self.objects.append(obj)
                self.parents[obj.id] = ctx.owner
                if t in TYPE_DECLS:
                    return self.enter_type(node, obj, ctx)
                return self.enter_method(node, obj, ctx, params)
        if t == "import_declaration":
            self.add_import(node)
            return ctx
        if t in ("method_declaration", "constructor_declaration"):  # anonymous-class member
            scope = _Scope(ctx.scope)
            for ptype, pname in formal_params(node)[0]:
                scope.bind(pname, ptype.replace("...", "[]"))
            return _Ctx(ctx.owner, ctx.cls, scope, ctx.anon)
        if t in _SCOPE_NODES:
            ctx = _Ctx(ctx.owner, ctx.cls, _Scope(ctx.scope), ctx.anon)
            if t == "lambda_expression":
                self.lambda_params(node, ctx.scope)
            elif t == "enhanced_for_statement":
                vtype = erase(node.child_by_field_name("type"))
                ctx.scope.bind(text(node.child_by_field_name("name")), "?var" if vtype == "var" else vtype)
                self.type_refs(node.child_by_field_name("type"), ctx)
            return ctx
        if t == "class_body" and parent is not None and parent.type in ("object_creation_expression", "enum_constant"):
            if parent.type == "object_creation_expression":
                sup = erase(parent.child_by_field_name("type"))
            else:  # an enum constant's body extends the enum
                sup = self.type_info[ctx.cls].name if ctx.cls is not None else ""
            own = tuple(text(m.child_by_field_name("name")) for m in node.named_children
                        if m.type == "method_declaration")
            # one more than a reference keeps, to tell that there were more
            return _Ctx(ctx.owner, ctx.cls, _Scope(ctx.scope), (((sup, own),) + ctx.anon)[:MAX_ANON + 1])
        if t in ("local_variable_declaration", "field_declaration", "constant_declaration", "resource",
                 "catch_formal_parameter"):
            self.declare(node, ctx)
        elif t == "instanceof_expression":
            name = node.child_by_field_name("name")
            if name is not None:
                ctx.scope.bind(text(name), erase(node.child_by_field_name("right")))
        elif t == "object_creation_expression":
            tnode = node.child_by_field_name("type")
            # ``outer.new Inner()``: the type is a member of the outer expression's type
            outer = node.children[0] if node.children and node.children[0].is_named else None
            self.add_call(ctx, "new", erase(tnode), outer, node.child_by_field_name("arguments"), start_line(node))
        elif t == "explicit_constructor_invocation":
            ctor = node.child_by_field_name("constructor")
            mode = "super" if ctor is not None and ctor.type == "super" else "this"
            self.add_call(ctx, mode, mode, None, node.child_by_field_name("arguments"), start_line(node))
        elif t == "method_reference":
            self.method_reference(node, ctx)
        elif t == "enum_constant" and ctx.cls is not None:
            enum_name = self.type_info[ctx.cls].name
            self.type_info[ctx.cls].fields[text(node.child_by_field_name("name"))] = enum_name
            args = node.child_by_field_name("arguments")
            if args is not None:
                self.add_call(ctx, "new", enum_name, None, args, start_line(node))
        return ctx

    def enter_type(self, node: Node, obj: CodeObject, ctx: _Ctx) -> _Ctx:
        outer = ctx.cls if self.parents.get(obj.id) != self.fid else None
        tparams = type_params(node)
        if ctx.owner in self.method_tparams:  # a local class sees its method's type parameters
            tparams = {**self.method_tparams[ctx.owner], **tparams}
        entry = JavaType(obj.id, obj.name, obj.qualname, obj.kind, node.type, outer, tparams, {})
        self.types.append(entry)
        self.type_info[obj.id] = entry
        sup = node.child_by_field_name("superclass")
        if sup is not None and sup.named_children:
            self.refs.append(RawRef("inherit", obj.id, erase(sup.named_children[0]), start_line(sup),
                                    Supertype("extends")))
        ifaces = node.child_by_field_name("interfaces") or next(
            (c for c in node.named_children if c.type == "extends_interfaces"), None)
        if ifaces is not None:
            rel = "extends" if node.type == "interface_declaration" else "implements"
            tlist = next((c for c in ifaces.named_children if c.type == "type_list"), None)
            for tnode in tlist.named_children if tlist is not None else ():
                self.refs.append(RawRef("inherit", obj.id, erase(tnode), start_line(tnode), Supertype(rel)))
        new_ctx = _Ctx(obj.id, obj.id, _Scope(ctx.scope), ())
        if node.type == "record_declaration":
            for ptype, pname in formal_params(node)[0]:
                entry.fields[pname] = ptype
            for tnode in param_type_nodes(node):
                self.type_refs(tnode, new_ctx)
        return new_ctx

    def enter_method(self, node: Node, obj: CodeObject, ctx: _Ctx,
                     formal: tuple[list[tuple[str, str]], bool] | None = None) -> _Ctx:
        params, varargs = formal or formal_params(node)
        ctor = node.type in ("constructor_declaration", "compact_constructor_declaration")
        rtype = node.child_by_field_name("type")
        tparams = type_params(node)
        if tparams:
            self.method_tparams[obj.id] = tparams
        self.methods.append(JavaMethod(
            obj.id, obj.name, ctx.cls, [p for p, _ in params], varargs, erase(rtype) if rtype is not None else "",
            "static" in modifiers(node), tparams, ctor,
        ))
        scope = _Scope(ctx.scope)
        for ptype, pname in params:
            scope.bind(pname, ptype.replace("...", "[]"))
        new_ctx = _Ctx(obj.id, ctx.cls, scope, ())
        self.type_refs(rtype, new_ctx)
        for tnode in param_type_nodes(node):
            self.type_refs(tnode, new_ctx)
        throws = next((c for c in node.named_children if c.type == "throws"), None)
        for tnode in throws.named_children if throws is not None else ():
            self.type_refs(tnode, new_ctx)
        return new_ctx

    def add_import(self, node: Node) -> None:
        name_node = next((c for c in node.named_children if c.type in ("identifier", "scoped_identifier")), None)
        if name_node is None:
            return
        static = any(c.type == "static" for c in node.children)
        ondemand = any(c.type == "asterisk" for c in node.children)
        self.imports.append(RawRef("import", self.fid, "".join(text(name_node).split()), start_line(node),
                                   ImportDecl(static, ondemand)))

    def lambda_params(self, node: Node, scope: _Scope) -> None:
        params = node.child_by_field_name("parameters")
        if params is None:
            return
        if params.type == "identifier":
            scope.bind(text(params), "?lambda")
            return
        for p in params.named_children:
            if p.type == "identifier":
                scope.bind(text(p), "?lambda")
            elif p.type == "formal_parameter":
                ptype = erase(p.child_by_field_name("type"))
                scope.bind(text(p.child_by_field_name("name")), "?lambda" if ptype == "var" else ptype)
            elif p.type == "inferred_parameters":
                for ident in p.named_children:
                    scope.bind(text(ident), "?lambda")

    def declare(self, node: Node, ctx: _Ctx) -> None:
        """Locals go into the scope, fields into the class; their types are references."""
        if node.type == "catch_formal_parameter":
            ctype = next((c for c in node.named_children if c.type == "catch_type"), None)
            alts = [erase(c) for c in ctype.named_children] if ctype is not None else []
            ctx.scope.bind(text(node.child_by_field_name("name")), alts[0] if len(alts) == 1 else "?union")
            for c in ctype.named_children if ctype is not None else ():
                self.type_refs(c, ctx)
            return
        tnode = node.child_by_field_name("type")
        vtype = erase(tnode)
        is_field = node.type in ("field_declaration", "constant_declaration") and ctx.owner == ctx.cls
        if node.type == "resource":
            declarators = [node] if node.child_by_field_name("name") is not None else []
        else:
            declarators = [d for d in node.named_children if d.type == "variable_declarator"]
        for d in declarators:
            name = text(d.child_by_field_name("name"))
            dims = d.child_by_field_name("dimensions")
            dtype = vtype + "[]" * text(dims).count("[") if dims is not None else vtype
            if vtype == "var":
                value = d.child_by_field_name("value")
                dtype = (erase(value.child_by_field_name("type"))
                         if value is not None and value.type == "object_creation_expression" else "?var")
            if is_field and ctx.cls is not None:
                self.type_info[ctx.cls].fields[name] = dtype
            else:
                ctx.scope.bind(name, dtype)
        if vtype != "var":
            self.type_refs(tnode, ctx)

    def type_refs(self, tnode: Node | None, ctx: _Ctx) -> None:
        if tnode is None:
            return
        t = tnode.type
        if t in PRIMITIVE_TYPES:
            return
        use = self._type_uses.get(ctx.cls)
        if use is None:
            use = self._type_uses[ctx.cls] = TypeUse(ctx.cls)
        if t == "type_identifier":  # the most frequent: what ``type_names`` gives, directly
            name = text(tnode)
            if name != "var":
                self.refs.append(RawRef("reference", ctx.owner, name, tnode.start_point[0] + 1, use))
            return
        for name, line in type_names(tnode):
            self.refs.append(RawRef("reference", ctx.owner, name, line, use))

    def call(self, node: Node, ctx: _Ctx) -> None:
        self.deadline.check()
        name_node = node.child_by_field_name("name")
        line = (name_node or node).start_point[0] + 1
        self.add_call(ctx, "call", text(name_node), node.child_by_field_name("object"),
                      node.child_by_field_name("arguments"), line)

    def method_reference(self, node: Node, ctx: _Ctx) -> None:
        kids = node.named_children
        if not kids:
            return
        target = kids[0]
        last = node.children[-1]
        name = "new" if last.type == "new" else text(last)
        if name == "new":
            self.add_call(ctx, "new", erase(target) if target.type in TYPE_NODES else text(target), None, None,
                          start_line(node))
        else:
            self.add_call(ctx, "ref", name, target, None, start_line(node))

    def add_call(self, ctx: _Ctx, mode: str, name: str, recv: Node | None, args: Node | None, line: int) -> None:
        scope = ctx.scope
        argv = ([self.encode(a, scope, 0) for a in args.named_children if a.type not in _COMMENTS]
                if args is not None else None)
        call = Call(name, self.encode(recv, scope, 0) if recv is not None else None,
                    len(argv) if argv is not None else None, argv or [])
        anon = ctx.anon
        site = CallSite(mode, call, ctx.cls, anon[:MAX_ANON], len(anon) > MAX_ANON)
        if recv is None:
            written = name
        elif mode == "ref":
            written = f"{text(recv)}::{name}"
        elif mode == "new":
            written = f"{text(recv)}.new {name}"
        else:
            written = f"{text(recv)}.{name}"
        self.refs.append(RawRef("call", ctx.owner, written if len(written) <= 120 else written[:117] + "...",
                                line, site))

    def encode(self, node: Node | None, scope: _Scope, depth: int) -> Expr:
        """``_encode``, once per node where that gives the same result.

        A call's receiver and arguments are encoded for the call, and again for
        each call nested in them when the walk reaches it: a nested call reuses
        the encodings made for its ancestor (shared objects, which the resolver
        also types once). That is exact: ancestors are reached first, so at a
        smaller depth (an encoding that was not cut at ``_MAX_DEPTH`` is the
        same at any smaller depth), and ``visit`` forgets every encoding
        wherever names may enter the scope (declarations, pattern variables,
        new blocks), which ``encode`` never descends into."""
        if node is None:
            return _MISSING
        key = node.id
        hit = self._encoded.get(key)
        if hit is not None and hit[1] >= depth:
            return hit[0]
        cuts = self._cuts
        enc = self._encode(node, scope, depth)
        if self._cuts == cuts:
            self._encoded[key] = (enc, depth)
        return enc

    def _encode(self, node: Node, scope: _Scope, depth: int) -> Expr:
        """What the resolver needs to type an expression (receivers and arguments):
        one of ``facts.Expr``."""
        t = node.type
        if depth > _MAX_DEPTH:
            self._cuts += 1
            return _TOO_DEEP
        if t == "identifier":
            name = text(node)
            declared = scope.lookup(name)
            return Var(declared) if declared is not None else Name(name)
        if t == "this":
            return This()
        if t == "super":
            return Super()
        if t == "field_access":
            obj = node.child_by_field_name("object")
            fld = node.child_by_field_name("field")
            if fld is not None and fld.type in ("this", "super"):
                return This(text(obj)) if fld.type == "this" else Super(text(obj))
            if obj is None or fld is None:
                return Opaque(t)
            return FieldAccess(self.encode(obj, scope, depth + 1), text(fld))
        if t == "method_invocation":
            obj = node.child_by_field_name("object")
            args = node.child_by_field_name("arguments")
            argv = [self.encode(a, scope, depth + 1) for a in _arguments(args)]
            return Call(text(node.child_by_field_name("name")),
                        self.encode(obj, scope, depth + 1) if obj is not None else None, len(argv), argv)
        if t == "object_creation_expression":
            outer = node.children[0] if node.children and node.children[0].is_named else None
            return New(erase(node.child_by_field_name("type")),
                       self.encode(outer, scope, depth + 1) if outer is not None else None)
        if t == "cast_expression":
            return Cast(erase(node.child_by_field_name("type")))
        if t == "assignment_expression":
            return self.encode(node.child_by_field_name("right"), scope, depth + 1)
        if t == "parenthesized_expression" and node.named_children:
            return self.encode(node.named_children[0], scope, depth + 1)
        if t in _LITERALS:
            return Lit(_LITERALS[t])
        if t in ("decimal_integer_literal", "hex_integer_literal", "octal_integer_literal", "binary_integer_literal"):
            return Lit("long" if text(node)[-1:] in "lL" else "int")
        if t == "decimal_floating_point_literal":
            return Lit("float" if text(node)[-1:] in "fF" else "double")
        if t == "array_creation_expression":
            return Lit(erase(node.child_by_field_name("type")) + "[]")
        if t == "array_access":
            return Element(self.encode(node.child_by_field_name("array"), scope, depth + 1))
        if t in ("lambda_expression", "method_reference"):
            return Opaque("lambda")
        if t == "ternary_expression":
            return Cond(self.encode(node.child_by_field_name("consequence"), scope, depth + 1),
                        self.encode(node.child_by_field_name("alternative"), scope, depth + 1))
        return Opaque(t)
