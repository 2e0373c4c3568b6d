"""Python name resolution over a whole repository: import-aware, never guessed.

A name is looked up the way Python would: the enclosing function scopes (nested
definitions and local imports), the module's own definitions, its imports, and
the builtins. Attribute chains then step through modules (``pkg.mod.f``),
classes and their in-repository bases (``Cls.method``, ``self.m``, ``cls.m``,
``super().m``), and instances whose class is known from an annotation
(``def f(s: Session)``), a constructor assignment (``s = Session()``), an
attribute assigned in the class (``self.adapter = HTTPAdapter()``), or the
return annotation of the function, method or property that gave the value
(``r = self._send(...)`` where ``_send(...) -> Response``; ``self.cookies``
where the property is ``-> Cookies``).

``from x import y`` follows re-exports through ``__init__`` modules and star
imports. A reference that leads outside the repository (standard library,
dependencies, builtins) is counted as external; anything else that cannot be
tied to exactly one object becomes an ``UnresolvedRef`` with its reason.
"""

from __future__ import annotations

import builtins
import posixpath
from collections import defaultdict
from dataclasses import dataclass, field, replace

from vitalrag.ingest.facts import FileFacts, Resolution
from vitalrag.ingest.lang.python.facts import Import, PythonFacts
from vitalrag.model import Edge, UnresolvedRef

_BUILTINS = frozenset(dir(builtins)) | {"__file__", "__name__", "__doc__", "__spec__"}

# A target is one of:
#   ("object", id)      a code object
#   ("instance", id)    an instance of the class with this id
#   ("module", dotted)  a repository module
#   ("variable", file)  a module-level variable of that file (not an object)
#   ("external", text)  something outside the repository
#   ("missing", reason) nothing we can tie it to, and why
Target = tuple[str, str]
PyFile = FileFacts[PythonFacts]


def prepare(repo: str, facts: list[PyFile]) -> None:
    """Module names and packages: a folder is a package when it has ``__init__.py``."""
    paths = {f.path for f in facts}
    for f in facts:
        folder = posixpath.dirname(f.path)
        parts: list[str] = []
        cur = folder
        while cur and f"{cur}/__init__.py" in paths:
            parts.insert(0, posixpath.basename(cur))
            cur = posixpath.dirname(cur)
        stem = posixpath.basename(f.path)[:-3]
        is_package = stem == "__init__"
        f.namespace = ".".join(parts if is_package else parts + [stem])
        f.data = replace(f.data, source_root=cur, is_package=is_package)
        if folder and f"{folder}/__init__.py" in paths:
            f.package_dir = folder
            f.package_name = ".".join(parts)


@dataclass
class _Index:
    facts: list[PyFile]
    modules: dict[str, list[PyFile]] = field(default_factory=lambda: defaultdict(list))
    kinds: dict[str, str] = field(default_factory=dict)
    parents: dict[str, str] = field(default_factory=dict)
    file_of: dict[str, PyFile] = field(default_factory=dict)
    children: dict[str, dict[str, list[str]]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(list)))
    bindings: dict[str, dict[str, Target]] = field(default_factory=lambda: defaultdict(dict))
    raw_bindings: dict[str, dict[str, tuple]] = field(default_factory=lambda: defaultdict(dict))
    stars: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    bases: dict[str, list[Target]] = field(default_factory=dict)
    returns_self: set[str] = field(default_factory=set)
    #: function id -> its return annotation as written; the ids of properties
    returns: dict[str, str] = field(default_factory=dict)
    properties: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        for f in self.facts:
            self.modules[f.namespace].append(f)
            self.kinds[f.file.id] = "file"
            self.file_of[f.file.id] = f
            secondary = set(f.data.secondary)
            self.returns_self.update(f.data.returns_self)
            self.returns.update(f.data.returns)
            self.properties.update(f.data.properties)
            for o in f.objects:
                self.kinds[o.id] = o.kind
                self.file_of[o.id] = f
                self.children[f.parents[o.id]][o.name].append(o.id)
            self.parents.update(f.parents)
            # `@overload` stubs and property setters yield to the main definition
            for container in {f.parents[o.id] for o in f.objects}:
                for name, ids in self.children[container].items():
                    main = [i for i in ids if i not in secondary]
                    if len(ids) > 1 and len(main) == 1:
                        ids[:] = main


class _Resolver:
    def __init__(self, repo: str, facts: list[PyFile]) -> None:
        self.repo = repo
        self.ix = _Index(facts)
        self.res = Resolution()
        self.edges: list[Edge] = []
        self._memo: dict[tuple[str, str], Target] = {}
        self._active: set[tuple[str, str]] = set()
        self._variables: dict[str, frozenset[str]] = {}
        self._top_cache: frozenset[str] | None = None

    # -- modules ----------------------------------------------------------------
    def module_facts(self, dotted: str, importer: PyFile | None) -> PyFile | None | str:
        """The file of a module, None when it is not in the repository, or "ambiguous"."""
        found = self.ix.modules.get(dotted)
        if not found:
            return None
        if len(found) == 1:
            return found[0]
        if importer is not None:
            same_root = [f for f in found if f.data.source_root == importer.data.source_root]
            if len(same_root) == 1:
                return same_root[0]
        return "ambiguous"

    def in_repo(self, dotted: str) -> bool:
        """Whether the top-level package of ``dotted`` is one of the repository's."""
        return dotted.split(".", 1)[0] in self._tops

    @property
    def _tops(self) -> frozenset[str]:
        if self._top_cache is None:
            self._top_cache = frozenset(m.split(".", 1)[0] for m in self.ix.modules if m)
        return self._top_cache

    def absolute(self, f: PyFile, module: str, level: int) -> str:
        if level == 0:
            return module
        parts = f.namespace.split(".") if f.namespace else []
        if not f.data.is_package:
            parts = parts[:-1]
        if level > 1:
            parts = parts[: len(parts) - (level - 1)] if level - 1 <= len(parts) else []
        return ".".join(parts + ([module] if module else []))

    def lookup_in_module(self, dotted: str, name: str, importer: PyFile | None) -> Target:
        key = (f"module:{dotted}", name)
        if key in self._memo:
            return self._memo[key]
        if key in self._active:
            return ("missing", "import-cycle")
        self._active.add(key)
        try:
            result = self._lookup_in_module(dotted, name, importer)
        finally:
            self._active.discard(key)
        self._memo[key] = result
        return result

    def _lookup_in_module(self, dotted: str, name: str, importer: PyFile | None) -> Target:
        mf = self.module_facts(dotted, importer)
        if mf == "ambiguous":
            return ("missing", "ambiguous-module")
        if mf is None:
            sub = f"{dotted}.{name}" if dotted else name
            if self.module_facts(sub, importer) not in (None, "ambiguous"):
                return ("module", sub)
            return ("external", f"{dotted}.{name}") if not self.in_repo(dotted) else ("missing", "missing-module")
        assert not isinstance(mf, str)
        own = self.ix.children[mf.file.id].get(name)
        if own:
            return ("object", own[0]) if len(own) == 1 else ("missing", "ambiguous-definition")
        bound = self.binding(mf, mf.file.id, name)
        if bound is not None:
            return bound
        for star in self.ix.stars.get(mf.file.id, []):
            found = self.lookup_in_module(star, name, mf)
            if found[0] != "missing":
                return found
        sub = f"{dotted}.{name}" if dotted else name
        subf = self.module_facts(sub, importer)
        if subf is not None:
            return ("module", sub) if subf != "ambiguous" else ("missing", "ambiguous-module")
        if name in self.variables(mf.file.id):
            return self.local_type(mf.file.id, name) or ("variable", mf.file.id)
        return ("missing", "unknown-name")

    def variables(self, scope: str) -> frozenset[str]:
        names = self._variables.get(scope)
        if names is None:
            names = frozenset(self.ix.file_of[scope].data.variables.get(scope, ()))
            self._variables[scope] = names
        return names

    # -- imports ----------------------------------------------------------------
    def build_bindings(self) -> None:
        for f in self.ix.facts:
            for imp in f.data.imports:
                scope = imp.source
                if isinstance(imp, Import):
                    module = imp.module
                    if imp.alias:
                        self.ix.raw_bindings[scope][imp.alias] = ("module", module)
                    else:
                        top = module.split(".", 1)[0]
                        self.ix.raw_bindings[scope][top] = ("module", top)
                else:
                    module = self.absolute(f, imp.module, imp.level)
                    if imp.star:
                        self.ix.stars[scope].append(module)
                    for name, alias in imp.names:
                        self.ix.raw_bindings[scope][alias or name] = ("symbol", module, name)

    def binding(self, f: PyFile, scope: str, name: str) -> Target | None:
        raw = self.ix.raw_bindings.get(scope, {}).get(name)
        if raw is None:
            return None
        if raw[0] == "module":
            module = raw[1]
            mf = self.module_facts(module, f)
            if mf is None:
                return ("external", module) if not self.in_repo(module) else ("missing", "missing-module")
            return ("module", module) if mf != "ambiguous" else ("missing", "ambiguous-module")
        _, module, symbol = raw
        if module == f.namespace and f.data.is_package:
            # `from . import sub` inside a package's __init__ names the submodule
            sub = self.module_facts(f"{module}.{symbol}", f)
            if isinstance(sub, FileFacts):
                return ("module", f"{module}.{symbol}")
        if self.module_facts(module, f) is None and not self.in_repo(module):
            return ("external", f"{module}.{symbol}")
        return self.lookup_in_module(module, symbol, f)

    def file_target(self, target: Target, f: PyFile) -> str | None:
        """The node an IMPORTS edge points at: the object, or the module's file."""
        if target[0] == "object":
            return target[1]
        if target[0] == "module":
            mf = self.module_facts(target[1], f)
            return mf.file.id if isinstance(mf, FileFacts) else None
        if target[0] == "variable":
            return target[1]
        return None

    def import_edges(self) -> None:
        for f in self.ix.facts:
            for imp in f.data.imports:
                line = imp.line
                if isinstance(imp, Import):
                    module = imp.module
                    mf = self.module_facts(module, f)
                    if isinstance(mf, FileFacts):
                        self.edges.append(Edge(f.file.id, mf.file.id, "IMPORTS", (line,)))
                    elif mf == "ambiguous":
                        self._unresolved(f.file.id, "IMPORTS", module, line, "ambiguous-module")
                    elif self.in_repo(module):
                        self._unresolved(f.file.id, "IMPORTS", module, line, "missing-module")
                    else:
                        self.res.external += 1
                    continue
                module = self.absolute(f, imp.module, imp.level)
                if imp.star:
                    mf = self.module_facts(module, f)
                    if isinstance(mf, FileFacts):
                        self.edges.append(Edge(f.file.id, mf.file.id, "IMPORTS", (line,)))
                    elif self.in_repo(module) or imp.level:
                        self._unresolved(f.file.id, "IMPORTS", module + ".*", line, "missing-module")
                    else:
                        self.res.external += 1
                for name, _alias in imp.names:
                    target = self.lookup_in_module(module, name, f)
                    if target[0] == "instance":  # a module-level variable of a known class
                        target = ("module", module)
                    node = self.file_target(target, f)
                    if node is not None:
                        self.edges.append(Edge(f.file.id, node, "IMPORTS", (line,)))
                    elif target[0] == "external":
                        self.res.external += 1
                    else:
                        reason = target[1] if target[0] == "missing" else "missing-module"
                        self._unresolved(f.file.id, "IMPORTS", f"{module}.{name}", line, reason)

    # -- names in scopes --------------------------------------------------------
    def scope_chain(self, scope: str) -> list[str]:
        """The scope itself, its enclosing function scopes (classes skipped), the file."""
        chain = [scope]
        cur = self.ix.parents.get(scope)
        while cur is not None:
            kind = self.ix.kinds.get(cur)
            if kind != "class":
                chain.append(cur)
            cur = self.ix.parents.get(cur)
        return chain

    def lookup_name(self, scope: str, name: str) -> Target:
        key = (scope, name)
        if key in self._memo:
            return self._memo[key]
        f = self.ix.file_of[scope]
        result: Target | None = None
        for s in self.scope_chain(scope):
            own = self.ix.children.get(s, {}).get(name)
            if own:
                result = ("object", own[0]) if len(own) == 1 else ("missing", "ambiguous-definition")
                break
            bound = self.binding(f, s, name)
            if bound is not None:
                result = bound
                break
            if name in self.variables(s):
                result = self.local_type(s, name) or ("missing", "untyped-variable")
                break
        if result is None:
            for star in self.ix.stars.get(f.file.id, []):
                found = self.lookup_in_module(star, name, f)
                if found[0] != "missing":
                    result = found
                    break
        if result is not None and result[0] == "variable":
            result = ("missing", "module-variable")
        if result is None:
            result = ("external", name) if name in _BUILTINS else ("missing", "unknown-name")
        self._memo[key] = result
        return result

    def local_type(self, scope: str, name: str) -> Target | None:
        """An instance type for a parameter annotation or a constructor assignment."""
        f = self.ix.file_of[scope]
        annotation = f.data.params.get(scope, {}).get(name)
        callee = f.data.assigns.get(scope, {}).get(name)
        entered = f.data.with_assigns.get(scope, {}).get(name)
        if entered and (scope, entered) not in self._active:
            self._active.add((scope, entered))
            try:
                t = self.resolve_expr(scope, entered)
            finally:
                self._active.discard((scope, entered))
            if t[0] == "object" and self.ix.kinds.get(t[1]) == "class":
                enter = self.member(t[1], "__enter__")
                if enter[0] == "object" and enter[1] in self.ix.returns_self:
                    return ("instance", t[1])
        if annotation and (scope, annotation) not in self._active:
            self._active.add((scope, annotation))
            try:
                t = self.resolve_expr(self.ix.parents.get(scope, scope), annotation)
            finally:
                self._active.discard((scope, annotation))
            if t[0] == "object" and self.ix.kinds.get(t[1]) in ("class", "interface", "enum"):
                return ("instance", t[1])
        if callee and (scope, callee) not in self._active:
            self._active.add((scope, callee))
            try:
                # `x = Cls(...)`, or `x = f(...)` where f's return annotation names a class
                t = self.construct(self.resolve_expr(scope, callee))
            finally:
                self._active.discard((scope, callee))
            if t[0] == "instance":
                return t
        return None

    def enclosing_class(self, scope: str) -> str | None:
        """For ``self``/``cls``: the class of the nearest enclosing method."""
        cur: str | None = scope
        while cur is not None:
            parent = self.ix.parents.get(cur)
            if parent is not None and self.ix.kinds.get(parent) == "class" and self.ix.kinds.get(cur) != "class":
                return parent
            cur = parent
        return None

    # -- classes ----------------------------------------------------------------
    def mro(self, cls: str) -> tuple[list[str], bool]:
        """In-repository classes in lookup order, and whether an external base exists."""
        order: list[str] = []
        external = False
        stack = [cls]
        while stack:
            c = stack.pop(0)
            if c in order:
                continue
            order.append(c)
            for b in self.ix.bases.get(c, []):
                if b[0] == "object":
                    stack.append(b[1])
                else:
                    external = True
        return order, external

    def member(self, cls: str, attr: str, skip_self: bool = False) -> Target:
        order, external = self.mro(cls)
        for c in order[1:] if skip_self else order:
            ids = self.ix.children.get(c, {}).get(attr)
            if ids:
                return ("object", ids[0]) if len(ids) == 1 else ("missing", "ambiguous-definition")
            assigned = self.ix.file_of[c].data.attr_assigns.get(c, {}).get(attr)
            if assigned:
                t = self.construct(self.resolve_expr(self.ix.parents[c], assigned))
                return t if t[0] == "instance" else ("missing", "dynamic-receiver")
            if attr in self.variables(c):
                return ("missing", "untyped-attribute")
        if external or (attr.startswith("__") and attr.endswith("__")):
            return ("external", attr)  # inherited from outside, or from ``object``
        return ("missing", "unknown-attribute")

    # -- expressions ------------------------------------------------------------
    def resolve_expr(self, scope: str, expr: str) -> Target:
        parts = expr.split(".")
        head = parts[0]
        if head in ("self", "cls"):
            cls = self.enclosing_class(scope)
            if cls is None:
                return ("missing", "dynamic-receiver")
            # `cls(...)` constructs: cls is the class itself, self an instance of it
            target: Target = ("object", cls) if head == "cls" else ("instance", cls)
        elif head == "super()":
            cls = self.enclosing_class(scope)
            if cls is None or len(parts) < 2:
                return ("missing", "dynamic-receiver")
            target = self.member(cls, parts[1], skip_self=True)
            parts = parts[1:]
        else:
            target = self.lookup_name(scope, head.removesuffix("()"))
            if head.endswith("()"):
                target = self.construct(target)
        for attr in parts[1:]:
            if target[0] in ("missing", "external"):
                break
            target = self.step(target, attr.removesuffix("()"), scope)
            if attr.endswith("()"):
                target = self.construct(target)
        return target

    def construct(self, target: Target) -> Target:
        """What calling ``target`` gives: an instance when it is a class we know,
        or a function or method whose return annotation names one."""
        if target[0] == "object" and self.ix.kinds.get(target[1]) in ("class", "enum"):
            return ("instance", target[1])
        if target[0] == "object" and target[1] in self.ix.returns:
            return self.returned(target[1])
        if target[0] in ("missing", "external"):
            return target
        return ("missing", "dynamic-receiver")

    def returned(self, fn: str) -> Target:
        """An instance of the class ``fn``'s return annotation names (``Self``:
        the class of the method), resolved where ``fn`` is defined."""
        annotation = self.ix.returns.get(fn)
        if annotation is None:
            return ("missing", "dynamic-receiver")
        if annotation.rsplit(".", 1)[-1] == "Self":
            cls = self.enclosing_class(fn)
            return ("instance", cls) if cls is not None else ("missing", "dynamic-receiver")
        key = (fn, "-> " + annotation)
        if key in self._active:
            return ("missing", "dynamic-receiver")
        self._active.add(key)
        try:
            t = self.resolve_expr(self.ix.parents.get(fn, fn), annotation)
        finally:
            self._active.discard(key)
        if t[0] == "object" and self.ix.kinds.get(t[1]) in ("class", "interface", "enum"):
            return ("instance", t[1])
        return ("missing", "dynamic-receiver")

    def step(self, target: Target, attr: str, scope: str) -> Target:
        kind, value = target
        if kind == "module":
            return self.lookup_in_module(value, attr, self.ix.file_of[scope])
        if kind == "variable":
            return ("missing", "module-variable")
        if kind == "object" and value in self.ix.properties:
            # `self.cookies.extract_cookies`: the property's value, by its return annotation
            kind, value = self.returned(value)
            if kind != "instance":
                return (kind, value)
        if kind in ("instance", "object"):
            if kind == "object" and self.ix.kinds.get(value) not in ("class", "interface", "enum"):
                return ("missing", "dynamic-receiver")
            return self.member(value, attr)
        return target

    # -- the passes ---------------------------------------------------------------
    def _unresolved(self, source: str, kind: str, name: str, line: int, reason: str) -> None:
        self.res.unresolved.append(UnresolvedRef(source, kind, name, line, reason))

    def resolve_bases(self) -> None:
        for f in self.ix.facts:
            for ref in f.refs:
                if ref.kind != "inherit":
                    continue
                scope = self.ix.parents[ref.source]
                if ref.dynamic:
                    self._unresolved(ref.source, "INHERITS", ref.name, ref.line, "dynamic-base")
                    self.ix.bases.setdefault(ref.source, []).append(("missing", "dynamic-base"))
                    continue
                t = self.resolve_expr(scope, ref.name)
                if t[0] == "instance":
                    t = ("object", t[1])
                self.ix.bases.setdefault(ref.source, []).append(t)
                if t[0] == "object" and self.ix.kinds.get(t[1]) in ("class", "interface", "enum"):
                    self.edges.append(Edge(ref.source, t[1], "INHERITS", (ref.line,)))
                elif t[0] == "external":
                    self.res.external += 1
                else:
                    self._unresolved(ref.source, "INHERITS", ref.name, ref.line,
                                     t[1] if t[0] == "missing" else "not-a-class")

    def resolve_calls(self, files: list[PyFile]) -> None:
        for f in files:
            for ref in f.refs:
                if ref.kind != "call":
                    continue
                if ref.dynamic:
                    self._unresolved(ref.source, "CALLS", ref.name, ref.line, "dynamic-receiver")
                    continue
                t = self.resolve_expr(ref.source, ref.name)
                if t[0] == "object":
                    if t[1] != ref.source or self.ix.kinds.get(t[1]) != "class":
                        self.edges.append(Edge(ref.source, t[1], "CALLS", (ref.line,)))
                elif t[0] == "instance":
                    call = self.member(t[1], "__call__")
                    if call[0] == "object":
                        self.edges.append(Edge(ref.source, call[1], "CALLS", (ref.line,)))
                    else:
                        self._unresolved(ref.source, "CALLS", ref.name, ref.line, "not-callable")
                elif t[0] == "external":
                    self.res.external += 1
                elif t[0] == "module":
                    self._unresolved(ref.source, "CALLS", ref.name, ref.line, "not-callable")
                elif t[0] == "variable":
                    self._unresolved(ref.source, "CALLS", ref.name, ref.line, "module-variable")
                else:
                    self._unresolved(ref.source, "CALLS", ref.name, ref.line, t[1])


class PythonResolver:
    """The ``Resolver`` of a repository's Python files: imports are bound and
    IMPORTS and INHERITS resolved once (``shared``), then the calls written in
    each file (``files``)."""

    def __init__(self, repo: str, facts: list[PyFile]) -> None:
        self._r = _Resolver(repo, facts)

    def shared(self) -> Resolution:
        self._r.build_bindings()
        self._r.import_edges()
        self._r.resolve_bases()
        self._r._memo.clear()  # names cached before bases were known may have missed inherited members
        return self._taken()

    def files(self, facts: list[PyFile]) -> Resolution:
        self._r.resolve_calls(facts)
        return self._taken()

    def close(self) -> None:
        pass

    def _taken(self) -> Resolution:
        """What the resolver found since the last call (and it starts afresh)."""
        r = self._r
        done = Resolution(r.edges, r.res.unresolved, r.res.external)
        r.edges, r.res = [], Resolution()
        return done
