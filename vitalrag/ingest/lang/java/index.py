"""Java: the repository's types and methods, and type-name resolution over them.

A simple type name is looked up in (1) the enclosing classes and their member
types (inherited ones too), (2) the file's single-type imports (and statically
imported member types), (3) the file's own package, (4) its on-demand imports,
(5) ``java.lang``; a dotted name resolves its first part so and then member
types, or else as a fully qualified name. Names outside the repository raise
``External``; names that stay open raise ``Missing`` with a reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from vitalrag.ingest.facts import FileFacts, RawRef
from vitalrag.ingest.lang.java.facts import Anon, ImportDecl, JavaFacts, Supertype
from vitalrag.ingest.lang.java.platform import JAVA_LANG, PRIMITIVES

JavaFile = FileFacts[JavaFacts]


@dataclass(eq=False, slots=True)
class FileCtx:
    facts: JavaFile
    package: str
    single: dict[str, str] = field(default_factory=dict)  # simple name -> imported fqn
    ondemand: list[str] = field(default_factory=list)
    static_single: dict[str, list[str]] = field(default_factory=dict)  # member -> type fqns
    static_ondemand: list[str] = field(default_factory=list)


@dataclass(eq=False, slots=True)
class TypeInfo:
    id: str
    name: str
    fqn: str
    kind: str
    decl: str
    file: FileCtx
    outer: TypeInfo | None = None
    tparams: frozenset[str] = frozenset()
    bounds: dict[str, str] = field(default_factory=dict)
    fields: dict[str, str] = field(default_factory=dict)
    nested: dict[str, TypeInfo] = field(default_factory=dict)
    methods: dict[str, list[MethodInfo]] = field(default_factory=dict)
    ctors: list[MethodInfo] = field(default_factory=list)
    raw_supers: list[RawRef] = field(default_factory=list)
    #: resolved supertypes; ``None`` until computed, a str for an external one
    supers: list[TypeInfo | str] | None = None
    _hierarchy: tuple[list[TypeInfo], bool] | None = None
    _scope: Scope | None = None  # the scope of the type's own declarations (``JavaIndex.type_scope``)
    _named: dict[str, list[MethodInfo]] = field(default_factory=dict)  # ``JavaIndex.methods_named``


@dataclass(eq=False, slots=True)
class MethodInfo:
    id: str
    name: str
    owner: TypeInfo
    params: tuple[str, ...]
    varargs: bool
    returns: str
    tparams: frozenset[str]
    bounds: dict[str, str]
    _scope: Scope | None = None  # where its parameter and return types are read (``JavaIndex.method_scope``)


@dataclass(frozen=True, slots=True)
class JType:
    """The static type of an expression as far as the resolver knows it."""

    info: TypeInfo | None = None
    name: str = ""  # simple name of an external or primitive type, when known
    external: bool = False
    reason: str = ""  # why it is unknown
    elem: TypeInfo | None = None  # the element type of a one-dimensional array of a repository type


@dataclass(frozen=True, slots=True)
class Scope:
    file: FileCtx
    cls: TypeInfo | None
    tparams: frozenset[str] = frozenset()
    method: MethodInfo | None = None
    #: anonymous classes around the reference, innermost first: (supertype as written, own method names)
    anon: Anon = ()
    #: more anonymous classes are around it than ``anon`` holds
    deeper: bool = False
    #: type name -> its resolution here (``JavaIndex.resolve_type``); scopes are shared, so this pays
    types: dict[str, JType] = field(default_factory=dict, compare=False, repr=False)


EXTERNAL = JType(external=True)
Target = MethodInfo | TypeInfo


class Missing(Exception):
    """A reference that stays unresolved, with its reason."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


class External(Exception):
    """A reference into code outside the repository."""


class JavaIndex:
    """Every type and method of the repository's Java files, and the lookups over them."""

    def __init__(self, facts: list[JavaFile]) -> None:
        self.files: list[FileCtx] = []
        self.types: dict[str, TypeInfo] = {}
        self.by_fqn: dict[str, list[TypeInfo]] = {}
        self.package_types: dict[str, dict[str, list[TypeInfo]]] = {}
        self.package_dirs: dict[str, set[str]] = {}
        self.methods: dict[str, MethodInfo] = {}
        self._type_memo: dict[tuple[int, str | None, frozenset[str], str], JType] = {}
        #: (file, class id, source) -> the scope of references without anonymous classes around them
        self._scope_memo: dict[tuple[int, str, str], Scope] = {}
        for f in facts:
            self._add_file(f)

    def _add_file(self, f: JavaFile) -> None:
        package = f.data.package
        ctx = FileCtx(f, package)
        self.files.append(ctx)
        if f.package_dir is not None:
            self.package_dirs.setdefault(package, set()).add(f.package_dir)
        for ref in f.refs:
            if not isinstance(ref.data, ImportDecl):
                continue
            static, ondemand = ref.data.static, ref.data.ondemand
            if static and ondemand:
                ctx.static_ondemand.append(ref.name)
            elif static:
                owner_fqn, _, member = ref.name.rpartition(".")
                ctx.static_single.setdefault(member, []).append(owner_fqn)
            elif ondemand:
                ctx.ondemand.append(ref.name)
            else:
                ctx.single[ref.name.rsplit(".", 1)[-1]] = ref.name
        for t in f.data.types:
            outer = self.types.get(t.outer) if t.outer else None
            fqn = f"{package}.{t.qualname}" if package else t.qualname
            info = TypeInfo(t.id, t.name, fqn, t.kind, t.decl, ctx, outer,
                            frozenset(t.tparams), dict(t.tparams), dict(t.fields))
            self.types[info.id] = info
            self.by_fqn.setdefault(fqn, []).append(info)
            if outer is not None:
                outer.nested.setdefault(info.name, info)
            elif t.id in f.parents and f.parents[t.id] == f.file.id:
                self.package_types.setdefault(package, {}).setdefault(info.name, []).append(info)
        for m in f.data.methods:
            owner = self.types.get(m.cls) if m.cls else None
            if owner is None:
                continue
            mi = MethodInfo(m.id, m.name, owner, tuple(m.params), m.varargs, m.returns,
                            frozenset(m.tparams), dict(m.tparams))
            self.methods[mi.id] = mi
            (owner.ctors if m.ctor else owner.methods.setdefault(mi.name, [])).append(mi)
        for ref in f.refs:
            if ref.kind == "inherit" and ref.source in self.types:
                self.types[ref.source].raw_supers.append(ref)

    def release(self) -> None:
        """Break the index's reference cycles (methods and their owner, nested
        types and their outer one, types and the scopes and hierarchies that
        name them) and empty it: it is then freed as soon as it is dropped,
        with the facts it holds, instead of waiting for a cyclic collection."""
        for info in self.types.values():
            info.outer = None
            info.nested = {}
            info.methods = {}
            info.ctors = []
            info._named = {}
            info._hierarchy = None
            info.supers = None
            info._scope = None
        for m in self.methods.values():
            m._scope = None
        self.files, self.types, self.by_fqn, self.methods = [], {}, {}, {}
        self.package_types, self.package_dirs = {}, {}
        self._type_memo, self._scope_memo = {}, {}

    # ---- types ---------------------------------------------------------------

    def scope_of(self, source: str, cls: str | None, anon: Anon, file: FileCtx, deeper: bool = False) -> Scope:
        """Where a reference is written (in ``source``, inside the named class
        ``cls`` and the anonymous ones ``anon``); one object for all references
        of one method (and class) that no anonymous class encloses."""
        cls_id = cls or ""
        key = (id(file), cls_id, source)
        if not anon:
            found = self._scope_memo.get(key)
            if found is not None:
                return found
        info = self.types.get(cls_id)
        method = self.methods.get(source)
        scope = Scope(file, info, method.tparams if method is not None else frozenset(), method, anon, deeper)
        if not anon:
            self._scope_memo[key] = scope
        return scope

    def type_scope(self, info: TypeInfo) -> Scope:
        """The scope of a type's own declarations (its fields' types)."""
        if info._scope is None:
            info._scope = Scope(info.file, info)
        return info._scope

    def method_scope(self, m: MethodInfo) -> Scope:
        """The scope a method's parameter and return types are read in."""
        if m._scope is None:
            m._scope = Scope(m.owner.file, m.owner, m.tparams)
        return m._scope

    def one(self, infos: list[TypeInfo], file: FileCtx) -> TypeInfo:
        if len(infos) == 1:
            return infos[0]
        same = [i for i in infos if i.file is file] or [
            i for i in infos if i.file.facts.package_dir == file.facts.package_dir]
        if len(same) == 1:
            return same[0]
        raise Missing("ambiguous-type")

    def resolve_type(self, name: str, scope: Scope) -> JType:
        found = scope.types.get(name)
        if found is not None:
            return found
        key = (id(scope.file), scope.cls.id if scope.cls else None, scope.tparams, name)
        found = self._type_memo.get(key)
        if found is None:
            try:
                found = self._resolve_type(name, scope)
            except Missing as exc:
                found = JType(reason=exc.reason)
            except External:
                found = JType(name=name.rsplit(".", 1)[-1], external=True)
            self._type_memo[key] = found
        scope.types[name] = found
        return found

    def _resolve_type(self, name: str, scope: Scope) -> JType:
        if name.endswith("[]") or name.endswith("..."):  # arrays are never repository types
            base = name[:-2] if name.endswith("[]") else name[:-3]
            elem = self.resolve_type(base, scope).info if not base.endswith("[]") else None
            return JType(name=name.rsplit(".", 1)[-1], external=True, elem=elem)
        if name in PRIMITIVES:
            return JType(name=name, external=True)
        parts = name.split(".")
        try:
            info = self._simple_type(parts[0], scope)
        except Missing:
            if len(parts) == 1:
                raise
            info = self.qualified_type(parts, scope.file)
        else:
            for part in parts[1:]:
                nested = self.member_type(info, part)
                if nested is None:
                    raise Missing("unknown-type")
                info = nested
        return JType(info=info, name=info.name)

    def qualified_type(self, parts: list[str], file: FileCtx) -> TypeInfo:
        """A fully qualified name (``pkg.Type.Nested``); raises External outside the repository."""
        for i in range(len(parts), 0, -1):
            infos = self.by_fqn.get(".".join(parts[:i]))
            if infos:
                info = self.one(infos, file)
                for part in parts[i:]:
                    nested = self.member_type(info, part)
                    if nested is None:
                        raise Missing("unknown-type")
                    info = nested
                return info
            if ".".join(parts[:i]) in self.package_types:
                raise Missing("unknown-type")  # a repository package without that type
        raise External

    def _simple_type(self, name: str, scope: Scope) -> TypeInfo:
        if name in scope.tparams:
            raise Missing("type-variable")
        c = scope.cls
        while c is not None:  # (1) enclosing classes and their member types
            if name in c.tparams:
                raise Missing("type-variable")
            if c.name == name:
                return c
            member = self.member_type(c, name)
            if member is not None:
                return member
            c = c.outer
        file = scope.file
        fqn = file.single.get(name)  # (2) single-type imports
        if fqn is not None:
            return self.qualified_type(fqn.split("."), file)
        for owner in file.static_single.get(name, ()):  # a member type imported statically
            infos = self.by_fqn.get(owner)
            member = self.member_type(self.one(infos, file), name) if infos else None
            if member is not None:
                return member
        same = self.package_types.get(file.package, {}).get(name)  # (3) the file's package
        if same:
            return self.one(same, file)
        external_ondemand = False  # (4) on-demand imports
        for pkg in file.ondemand:
            if pkg in self.package_types:
                if name in self.package_types[pkg]:
                    return self.one(self.package_types[pkg][name], file)
            elif pkg in self.by_fqn:
                member = self.member_type(self.one(self.by_fqn[pkg], file), name)
                if member is not None:
                    return member
            else:
                external_ondemand = True
        for owner in file.static_ondemand:  # import static a.B.*; brings B's member types too
            infos = self.by_fqn.get(owner)
            member = self.member_type(self.one(infos, file), name) if infos else None
            if member is not None:
                return member
        if name in JAVA_LANG or external_ondemand:  # (5) java.lang
            raise External
        if any(self.has_external(c) for c in chain(scope.cls)):
            raise External  # a member type inherited from an external supertype
        raise Missing("unknown-type")

    def member_type(self, info: TypeInfo, name: str) -> TypeInfo | None:
        for t in self.hierarchy(info)[0]:
            if name in t.nested:
                return t.nested[name]
        return None

    def supertypes(self, info: TypeInfo) -> list[TypeInfo | str]:
        if info.supers is None:
            info.supers = []  # breaks cycles while resolving
            scope = Scope(info.file, info.outer, info.tparams)
            out: list[TypeInfo | str] = []
            for ref in info.raw_supers:
                jt = self.resolve_type(ref.name, scope)
                out.append(jt.info if jt.info is not None else ref.name)
            if info.decl in ("enum_declaration", "record_declaration"):
                out.append("Enum" if info.decl == "enum_declaration" else "Record")
            info.supers = out
        return info.supers

    def hierarchy(self, info: TypeInfo) -> tuple[list[TypeInfo], bool]:
        """The type and its repository supertypes (nearest first), and whether any supertype is external."""
        if info._hierarchy is None:
            info._hierarchy = ([info], False)  # breaks cycles
            seen = {info.id}
            out = [info]
            external = False
            queue = [info]
            while queue:
                cur = queue.pop(0)
                for sup in self.supertypes(cur):
                    if isinstance(sup, str):
                        external = True
                    elif sup.id not in seen:
                        seen.add(sup.id)
                        out.append(sup)
                        queue.append(sup)
            info._hierarchy = (out, external)
        return info._hierarchy

    def has_external(self, info: TypeInfo) -> bool:
        return self.hierarchy(info)[1]

    def superclass(self, info: TypeInfo) -> TypeInfo | str | None:
        sups = self.supertypes(info)
        for ref, sup in zip(info.raw_supers, sups):
            if isinstance(ref.data, Supertype) and ref.data.rel == "extends" and info.kind != "interface":
                return sup
        return None

    def methods_named(self, info: TypeInfo, name: str) -> list[MethodInfo]:
        """Methods called ``name`` visible in ``info``; an override hides what it overrides.
        (Computed once per type and name: the index does not change while resolving.)"""
        out = info._named.get(name)
        if out is None:
            seen: set[tuple[str, ...]] = set()
            out = info._named[name] = []
            for t in self.hierarchy(info)[0]:
                for m in t.methods.get(name, ()):
                    if m.params not in seen:
                        seen.add(m.params)
                        out.append(m)
        return out

    def field_type(self, info: TypeInfo, name: str, own: bool = False) -> JType | None:
        """The declared type of field ``name`` seen in ``info``. Only inside its own class
        (``own``) does a type-variable field stand for its bound; elsewhere a type
        argument, which erasure lost, would replace it."""
        for t in self.hierarchy(info)[0]:
            if name in t.fields:
                scope = self.type_scope(t)
                if own and t is info:
                    return self.declared_type(t.fields[name], scope)
                return self.resolve_type(t.fields[name], scope)
        return None

    def declared_type(self, name: str, scope: Scope) -> JType:
        """The type of a variable declared ``name``: a type variable stands for its bound."""
        jt = self.resolve_type(name, scope)
        if jt.reason != "type-variable":
            return jt
        bound = scope.method.bounds.get(name) if scope.method is not None else None
        c = scope.cls
        while bound is None and c is not None:
            bound = c.bounds.get(name)
            c = c.outer
        if not bound:
            return EXTERNAL  # unbounded: only Object's methods
        jt = self.resolve_type(bound, scope)
        return EXTERNAL if jt.reason == "type-variable" else jt


def chain(cls: TypeInfo | None) -> list[TypeInfo]:
    """A class and its enclosing classes, innermost first."""
    out = []
    while cls is not None:
        out.append(cls)
        cls = cls.outer
    return out
