"""Java: the static type of an expression, and the method a call reaches.

A call resolves its receiver's static type (locals, parameters and fields with a
declared type, ``this``/``super``, a type for static calls, ``new`` and casts,
and calls whose method is in the repository and returns a non-generic type, or
a platform method ``platform`` knows), then looks for the method in that type
and its supertypes. An unqualified call looks in the enclosing anonymous and
named classes, innermost first, then in static imports. Overloads are chosen by
argument count, then by simple argument type inference (fixed arity before
varargs, as javac); what stays ambiguous raises ``Missing("ambiguous-overload")``.
"""

from __future__ import annotations

from vitalrag.ingest.lang.java.facts import (
    Call,
    Cast,
    Cond,
    Element,
    Expr,
    FieldAccess,
    Lit,
    Name,
    New,
    Super,
    This,
    Var,
)
from vitalrag.ingest.lang.java.index import (
    EXTERNAL,
    External,
    JavaIndex,
    JType,
    MethodInfo,
    Missing,
    Scope,
    Target,
    TypeInfo,
    chain,
)
from vitalrag.ingest.lang.java.platform import (
    ARGUMENT_RETURNS,
    JAVA_LANG,
    KNOWN_RETURNS,
    OBJECT_METHODS,
    OBJECT_RETURNS,
    PRIMITIVES,
    compatibility,
)


class CallResolver:
    """Types expressions and resolves calls against a ``JavaIndex``."""

    def __init__(self, index: JavaIndex) -> None:
        self.index = index
        # an encoding belongs to one reference, so one scope: its type is computed once
        # (a chain a().b().c() would otherwise be re-typed at every link)
        self._types: dict[int, JType] = {}
        self._literals: dict[str, JType] = {}  # literal type name -> its JType
        #: (candidates' id, argument count, argument types) -> (candidates, the overload or None)
        self._chosen: dict[tuple[int, int, tuple[JType, ...]], tuple[list[MethodInfo], MethodInfo | None]] = {}

    def type_of(self, enc: Expr, scope: Scope) -> JType:
        """The static type of an encoded expression (see ``walk.ReferenceWalker.encode``)."""
        found = self._types.get(id(enc))
        if found is None:
            found = self._types[id(enc)] = self._type_of(enc, scope)
        return found

    def _type_of(self, enc: Expr, scope: Scope) -> JType:
        if isinstance(enc, Lit):
            lit = self._literals.get(enc.type_name)
            if lit is None:
                lit = self._literals[enc.type_name] = JType(name=enc.type_name, external=True)
            return lit
        if isinstance(enc, Var):
            declared = enc.declared
            if declared.startswith("?"):
                return JType(reason={"?var": "var-inferred", "?lambda": "lambda-parameter"}.get(
                    declared, "complex-receiver"))
            return self.index.declared_type(declared, scope)
        if isinstance(enc, New):
            return self.created_type(enc.type_name, enc.outer, scope)
        if isinstance(enc, Cast):
            return self.index.resolve_type(enc.type_name, scope)
        if isinstance(enc, Super) and enc.qualifier:  # Iface.super.m()
            return self.index.resolve_type(enc.qualifier, scope)
        if isinstance(enc, This):
            if enc.qualifier:
                return self.index.resolve_type(enc.qualifier, scope)
            return JType(info=scope.cls, name=scope.cls.name) if scope.cls else JType(reason="unknown-name")
        if isinstance(enc, Name):
            return self._name_type(enc.name, scope)
        if isinstance(enc, FieldAccess):
            return self._field_access(enc, scope)
        if isinstance(enc, Call):
            try:
                target = self.resolve_call(enc, scope, "call")
            except External:
                return self._external_return(enc, scope)
            except Missing as exc:
                return JType(reason="unresolved-receiver" if "overload" in exc.reason else exc.reason)
            if not isinstance(target, MethodInfo) or not target.returns or target.returns == "void":
                return JType(reason="complex-receiver")
            jt = self.index.resolve_type(target.returns, self.index.method_scope(target))
            return JType(reason="generic-return") if jt.reason == "type-variable" else jt
        if isinstance(enc, Cond):
            a, b = self.type_of(enc.then, scope), self.type_of(enc.otherwise, scope)
            if a.name == "null":
                return b
            if b.name == "null" or a == b:
                return a
            return JType(reason="complex-receiver")
        if isinstance(enc, Element):
            of = enc.of
            if isinstance(of, Var) and of.declared.endswith("[]"):
                return self.index.declared_type(of.declared[:-2], scope)
            inner = self.type_of(of, scope)
            if inner.elem is not None:
                return JType(info=inner.elem, name=inner.elem.name)
            if inner.external and inner.name.endswith("[]"):
                elem = inner.name[:-2]
                if elem in PRIMITIVES or elem in JAVA_LANG or elem.endswith("[]"):
                    return JType(name=elem, external=True)
            return JType(reason=inner.reason or "complex-receiver")
        return JType(reason="complex-receiver")

    def created_type(self, name: str, outer_expr: Expr | None, scope: Scope) -> JType:
        """The type a ``new`` makes; ``outer.new Inner()`` finds Inner in outer's type."""
        if outer_expr is None:
            return self.index.resolve_type(name, scope)
        outer = self.type_of(outer_expr, scope)
        if outer.info is None:
            return outer
        nested = self.index.member_type(outer.info, name)
        if nested is not None:
            return JType(info=nested, name=nested.name)
        return EXTERNAL if self.index.has_external(outer.info) else JType(reason="unknown-type")

    def _external_return(self, enc: Call, scope: Scope) -> JType:
        """What a platform call returns, where the tables of ``platform`` know it."""
        name = enc.name
        if name in OBJECT_RETURNS:
            return JType(name=OBJECT_RETURNS[name], external=True)
        recv = enc.receiver
        owner = ""
        if recv is not None:
            rt = self.type_of(recv, scope)
            if rt.info is not None and rt.info.kind == "enum" and name == "valueOf" and enc.args == 1:
                return rt  # an enum's implicit valueOf(String)
            owner = rt.name if rt.external else "Enum" if rt.info is not None and rt.info.kind == "enum" else ""
        if (owner, name) in ARGUMENT_RETURNS and enc.argv:
            return self.type_of(enc.argv[0], scope)
        known = KNOWN_RETURNS.get((owner, name))
        return JType(name=known, external=True) if known else JType(reason="untyped-chain")

    def _name_type(self, name: str, scope: Scope) -> JType:
        for sup, _ in scope.anon:  # a field inherited by an anonymous class
            st = self.index.resolve_type(sup, scope) if sup else EXTERNAL
            jt = self.index.field_type(st.info, name) if st.info is not None else None
            if jt is not None:
                return jt
        if scope.deeper:  # an anonymous class further out may have it
            return JType(reason="too-deep")
        for c in chain(scope.cls):  # a field of this or an enclosing class
            jt = self.index.field_type(c, name, own=True)
            if jt is not None:
                return jt
        jt = self.index.resolve_type(name, scope)
        if jt.info is not None or jt.external:
            return jt
        maybe_external = any(self.index.has_external(c) for c in chain(scope.cls))
        for fqn in scope.file.static_single.get(name, []) + scope.file.static_ondemand:
            infos = self.index.by_fqn.get(fqn)  # a statically imported field
            if not infos:
                maybe_external = True
                continue
            field_jt = self.index.field_type(self.index.one(infos, scope.file), name)
            if field_jt is not None:
                return field_jt
        if maybe_external:
            return EXTERNAL
        return JType(reason="unknown-name" if jt.reason == "unknown-type" else jt.reason)

    def _field_access(self, enc: FieldAccess, scope: Scope) -> JType:
        base = self.type_of(enc.of, scope)
        if base.info is not None:
            jt = self.index.field_type(base.info, enc.name)
            if jt is not None:
                return jt
            nested = self.index.member_type(base.info, enc.name)
            if nested is not None:
                return JType(info=nested, name=nested.name)
            return EXTERNAL if self.index.has_external(base.info) else JType(reason="unknown-name")
        if base.external:
            return EXTERNAL
        dotted = _dotted(enc)  # a qualified type name: pkg.Type or Outer.Inner
        if dotted is not None:
            try:
                info = self.index.qualified_type(dotted.split("."), scope.file)
                return JType(info=info, name=info.name)
            except Missing as exc:
                return JType(reason=exc.reason)
            except External:
                return EXTERNAL
        return base

    # ---- calls -------------------------------------------------------------------

    def resolve_call(self, data: Call, scope: Scope, mode: str) -> Target:
        """The method (or constructor-less class) a call reaches; raises Missing / External."""
        name = data.name
        if mode == "new":
            jt = self.created_type(name, data.receiver, scope)
            if jt.info is None:
                raise External if jt.external else Missing(jt.reason)
            return self.select(jt.info.ctors, data, scope, jt.info) if jt.info.ctors else jt.info
        if mode in ("this", "super"):
            cls = scope.cls
            if cls is None:
                raise Missing("unknown-name")
            target = cls if mode == "this" else self.index.superclass(cls)
            if target is None or isinstance(target, str):
                raise External
            return self.select(target.ctors, data, scope, target) if target.ctors else target
        recv = data.receiver
        if recv is None:
            return self._unqualified(data, scope)
        if isinstance(recv, Super) and not recv.qualifier:
            sup = self.index.superclass(scope.cls) if scope.cls else None
            if sup is None or isinstance(sup, str):
                # super.m() of an interface default or of Object
                if scope.cls is not None:
                    for s in self.index.supertypes(scope.cls):
                        if isinstance(s, TypeInfo) and self.index.methods_named(s, name):
                            return self.select(self.index.methods_named(s, name), data, scope, s)
                raise External
            jt = JType(info=sup)
        else:
            jt = self.type_of(recv, scope)
        if jt.info is None:
            raise External if jt.external else Missing(jt.reason or "complex-receiver")
        cands = self.index.methods_named(jt.info, name)
        if not cands:
            if self.index.has_external(jt.info) or name in OBJECT_METHODS:
                raise External
            raise Missing("unknown-method")
        return self.select(cands, data, scope, jt.info)

    def _unqualified(self, data: Call, scope: Scope) -> Target:
        name = data.name
        maybe_external = name in OBJECT_METHODS
        for sup, own in scope.anon:
            if name in own:
                raise Missing("anonymous-class")
            jt = self.index.resolve_type(sup, scope) if sup else EXTERNAL
            if jt.info is not None:
                cands = self.index.methods_named(jt.info, name)
                if cands:
                    return self.select(cands, data, scope, jt.info)
                maybe_external = maybe_external or self.index.has_external(jt.info)
            else:
                maybe_external = True
        if scope.deeper:  # an anonymous class further out may have it
            raise Missing("too-deep")
        for c in chain(scope.cls):
            cands = self.index.methods_named(c, name)
            if cands:
                return self.select(cands, data, scope, c, open_world=maybe_external)
            maybe_external = maybe_external or self.index.has_external(c)
        file = scope.file
        owners = list(file.static_single.get(name, ())) + file.static_ondemand
        for fqn in owners:
            infos = self.index.by_fqn.get(fqn)
            if not infos:
                maybe_external = True
                continue
            info = self.index.one(infos, file)
            cands = self.index.methods_named(info, name)
            if cands:
                return self.select(cands, data, scope, info)
        if maybe_external:
            raise External
        raise Missing("unknown-name")

    def select(self, cands: list[MethodInfo], data: Call, scope: Scope, where: TypeInfo,
               open_world: bool = False) -> MethodInfo:
        """One overload by arity, then by argument types; otherwise ambiguous. With no
        overload of the right arity, an external supertype of ``where`` (or ``open_world``)
        may declare the one called."""
        nargs = data.args
        if nargs is None:  # a method reference: the name alone must decide
            if len(cands) == 1:
                return cands[0]
            raise Missing("ambiguous-overload")
        fit = [m for m in cands if len(m.params) == nargs or (m.varargs and nargs >= len(m.params) - 1)]
        if not fit:
            if open_world or self.index.has_external(where):
                raise External
            raise Missing("no-matching-overload")
        if len(fit) == 1:
            return fit[0]
        args = tuple(self.type_of(a, scope) for a in data.argv)
        # the choice depends on the candidates and the argument types only: made once
        # (the memo holds ``cands``, so its id stays that list's)
        key = (id(cands), nargs, args)
        memo = self._chosen.get(key)
        if memo is None:
            memo = self._chosen[key] = (cands, self._choose(fit, nargs, args))
        if memo[1] is None:
            raise Missing("ambiguous-overload")
        return memo[1]

    def _choose(self, fit: list[MethodInfo], nargs: int, args: tuple[JType, ...]) -> MethodInfo | None:
        """The overload of ``fit`` the argument types select, None when ambiguous."""
        # as javac: fixed-arity overloads first, variable-arity ones only if none applies
        fixed = [m for m in fit if not m.varargs and len(m.params) == nargs]
        for group in (fixed, fit):
            applicable = []
            for m in group:
                verdicts = [self._compat(arg, m, i) for i, arg in enumerate(args)]
                if "no" not in verdicts:
                    applicable.append((m, all(v == "exact" for v in verdicts)))
            if len(applicable) == 1:
                return applicable[0][0]
            exact = [m for m, is_exact in applicable if is_exact]
            if len(exact) == 1:
                return exact[0]
            if applicable:
                break
        return None

    def _compat(self, arg: JType, m: MethodInfo, i: int) -> str:
        if i >= len(m.params) - 1 and m.varargs:
            param = m.params[-1][:-3]
            if i == len(m.params) - 1 and arg.name.endswith("[]"):
                param += "[]"  # an array passed as the varargs array itself
        elif i < len(m.params):
            param = m.params[i]
        else:
            return "no"
        if arg.info is None and not arg.external:
            return "maybe"
        ptype = self.index.resolve_type(param, self.index.method_scope(m))
        if ptype.reason == "type-variable":
            return "exact" if param == arg.name else "maybe"
        if arg.info is not None:
            if ptype.info is not None:
                if ptype.info is arg.info:
                    return "exact"
                return "maybe" if ptype.info in self.index.hierarchy(arg.info)[0] else "no"
            if ptype.external and param in PRIMITIVES:
                return "no"
            return "maybe" if param.rsplit(".", 1)[-1] == "Object" or self.index.has_external(arg.info) else "no"
        if ptype.info is not None:
            return "maybe" if arg.name == "null" else "no"  # an external type is no repository subtype
        return compatibility(arg.name, param.rsplit(".", 1)[-1])


def _dotted(enc: Expr) -> str | None:
    if isinstance(enc, Name):
        return enc.name
    if isinstance(enc, FieldAccess):
        base = _dotted(enc.of)
        return f"{base}.{enc.name}" if base is not None else None
    return None
