"""Python scope of a target: what a program written for it can name and call.

Bare names resolve to the program's own bindings, the target file's module
names and builtins. ``self.x`` / ``cls.x`` resolve to members of the target's
class and of its repository base classes; a class with a base outside the
repository is open (its members are unknown, so nothing is flagged). ``mod.x``
and ``Cls.x`` resolve through the file's imports to repository files and classes.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass

from vitalrag.model import TYPE_KINDS, CodeObject, NodeId, file_id, split_lines
from vitalrag.transfer.programs import Program, parse_program
from vitalrag.transfer.pyfacts import PyCall, PyClass, PyModule, PySnippet, module_facts, snippet_facts
from vitalrag.transfer.repository import RepositoryIndex, Target
from vitalrag.transfer.signatures import PySignature, python_fit
from vitalrag.transfer.witness_types import CallCheck, NameIssue

BUILTINS = frozenset(dir(builtins)) | {"__file__", "__name__", "__doc__", "__package__", "__spec__",
                                        "__loader__", "__path__", "__builtins__", "__class__",
                                        "__annotations__", "__dict__", "__module__", "__qualname__"}
_FUNCTION_KINDS = frozenset({"function", "method", "test"})


@dataclass(frozen=True, slots=True)
class ClassRef:
    file: NodeId
    qualname: str


@dataclass(frozen=True, slots=True)
class Member:
    """A class member found by lookup: ``sigs`` when it is a method."""

    owner: ClassRef
    sigs: tuple[PySignature, ...]


class PythonScope:
    language = "python"

    def __init__(self, index: RepositoryIndex, target: Target) -> None:
        self.index = index
        self.target = target
        self.module: PyModule = self._module(target.file) or PyModule()
        qual = target.qualname
        self.cls: ClassRef | None = ClassRef(target.file, qual) if target.kind in TYPE_KINDS else None
        #: names bound by enclosing functions (a nested function sees them)
        self.enclosing: set[str] = set()
        owner = qual
        while self.cls is None and "." in owner:
            owner = owner.rsplit(".", 1)[0]
            if owner in self.module.classes:
                self.cls = ClassRef(target.file, owner)
            elif owner in self.module.functions or f"{target.file}:{owner}" in index.by_id:
                self.enclosing |= self._bound_in(f"{target.file}:{owner}")

    def _bound_in(self, object_id: NodeId) -> set[str]:
        obj = self.index.by_id.get(object_id)
        source = self.index.store.source(self.target.file) if obj is not None else None
        if obj is None or source is None:
            return set()
        lines = split_lines(source)[obj.start_line - 1:obj.end_line]
        return snippet_facts(parse_program("\n".join(lines), "python").root).bound

    # -- resolution -----------------------------------------------------------
    def _module(self, file_node: NodeId) -> PyModule | None:
        facts = self.index.file_facts(file_node, "python", module_facts)
        return facts if isinstance(facts, PyModule) else None

    def _module_file(self, obj: CodeObject) -> NodeId | None:
        if obj.kind == "file":
            return obj.id
        if obj.kind == "module":
            init = file_id(obj.repo, obj.path + "__init__.py")
            return init if init in self.index.by_id else None
        return None

    def _imported(self, file_node: NodeId, module: PyModule, local: str) -> CodeObject | None:
        """The repository object an import binds to ``local`` in a file, if any."""
        for imp in module.imports:
            if imp.local != local:
                continue
            leaf = imp.name.rsplit(".", 1)[-1]
            for target_id, lines in self.index.imports_from(file_node):
                obj = self.index.by_id.get(target_id)
                if obj is None or imp.line not in lines:
                    continue
                if obj.kind in ("file", "module"):
                    stem = obj.path.rstrip("/").rsplit("/", 1)[-1].removesuffix(".py")
                    if stem in (leaf, imp.name.split(".", 1)[0]):
                        return obj
                elif obj.name == leaf:
                    return obj
        return None

    def _class_of(self, file_node: NodeId, module: PyModule, expr: str) -> ClassRef | None:
        """The repository class an expression (``Base``, ``mod.Base``) names in a file."""
        if expr in module.classes:
            return ClassRef(file_node, expr)
        head, _, rest = expr.partition(".")
        obj = self._imported(file_node, module, head)
        if obj is None:
            return None
        if obj.kind in TYPE_KINDS and not rest:
            return ClassRef(file_id(obj.repo, obj.path), obj.qualname)
        target_file = self._module_file(obj)
        if target_file is not None and rest:
            other = self._module(target_file)
            if other is not None and rest in other.classes:
                return ClassRef(target_file, rest)
        return None

    def _klass(self, ref: ClassRef) -> tuple[PyModule, PyClass] | None:
        module = self._module(ref.file)
        if module is None or ref.qualname not in module.classes:
            return None
        return module, module.classes[ref.qualname]

    def lookup(self, ref: ClassRef, name: str, *, skip_self: bool = False) -> Member | None | bool:
        """A member of a class or its repository bases: ``Member``; ``None``
        when the hierarchy is open (unknown); ``False`` when it is missing."""
        seen: set[ClassRef] = set()
        queue, open_ = [ref], False
        while queue:
            cur = queue.pop(0)
            if cur in seen:
                continue
            seen.add(cur)
            found = self._klass(cur)
            if found is None:
                open_ = True
                continue
            module, klass = found
            if {"__getattr__", "__getattribute__"} & klass.members:
                open_ = True  # attributes are forwarded: any name may exist
            if not (skip_self and cur == ref) and name in klass.members:
                return Member(cur, tuple(klass.methods.get(name, ())))
            for base in klass.bases:
                if base in ("object", "ABC", "abc.ABC") or base.startswith(("Generic[", "Protocol")):
                    continue
                resolved = self._class_of(cur.file, module, base)
                if resolved is None:
                    open_ = True
                else:
                    queue.append(resolved)
        if open_:
            return None
        # a mixin reads members its repository subclasses define
        return self._in_subclasses(ref, name) or False

    def _in_subclasses(self, ref: ClassRef, name: str) -> Member | None:
        seen, queue = {ref}, [ref]
        while queue:
            cur = queue.pop(0)
            cid = f"{cur.file}:{cur.qualname}"
            for edge in self.index.store.find_edges(kind="INHERITS", target=cid):
                obj = self.index.by_id.get(edge.source)
                if obj is None or obj.kind not in TYPE_KINDS:
                    continue
                sub = ClassRef(file_id(obj.repo, obj.path), obj.qualname)
                found = self._klass(sub)
                if sub in seen or found is None:
                    continue
                seen.add(sub)
                if name in found[1].members:
                    return Member(sub, tuple(found[1].methods.get(name, ())))
                queue.append(sub)
        return None

    def _constructor(self, ref: ClassRef) -> tuple[PySignature, ...] | None:
        found = self.lookup(ref, "__init__")
        if isinstance(found, Member) and found.sigs:
            return tuple(s.bound() for s in found.sigs)
        return None  # no __init__ in the repository (dataclass, base outside it): unknown

    # -- checks ---------------------------------------------------------------
    def facts(self, program: Program) -> PySnippet:
        facts = snippet_facts(program.root)
        facts.bound |= self.enclosing
        return facts

    def check_calls(self, program: Program) -> list[CallCheck]:
        snippet = self.facts(program)
        out: list[CallCheck] = []
        for call in snippet.calls:
            check = self._check_call(call, snippet)
            if check is not None:
                out.append(check)
        return out

    def _fit(self, call: PyCall, target: str, sigs: tuple[PySignature, ...] | None) -> CallCheck | None:
        if not sigs:
            return None
        problems = [python_fit(s, call.shape) for s in sigs]
        if any(p is None for p in problems):
            return CallCheck(call.text, call.line, target, True, "fits")
        return CallCheck(call.text, call.line, target, False, problems[0] or "")

    def _check_call(self, call: PyCall, snippet: PySnippet) -> CallCheck | None:
        mod, here = self.module, self.target.file
        if call.receiver == "":
            name = call.name
            if name in snippet.bound:
                return None
            if name in mod.classes:
                return self._fit(call, f"{here}:{name}", self._constructor(ClassRef(here, name)))
            if name in mod.functions and name not in {i.local for i in mod.imports}:
                return self._fit(call, f"{here}:{name}", tuple(mod.functions[name]))
            if name in mod.names or name in BUILTINS:
                obj = self._imported(here, mod, name)
                return self._check_object(call, obj, bind=False) if obj is not None else None
            if mod.star_import:
                return None
            elsewhere = self.index.named(name, frozenset({"function", "class"}))
            why = f"{name!r} is not defined or imported here" + (
                f" (the repository has {elsewhere[0].id})" if elsewhere else "")
            return CallCheck(call.text, call.line, None, False, why)
        if call.receiver in ("self", "cls", "super()"):
            if self.cls is None:
                return None
            if call.receiver != "super()" and (call.name in snippet.self_assigned
                                               or call.name in snippet.definitions):
                return None
            if call.name.startswith("__") and call.name.endswith("__"):
                found = self.lookup(self.cls, call.name, skip_self=call.receiver == "super()")
                if not isinstance(found, Member) or not found.sigs:
                    return None  # object's own dunders (``super().__init__()``)
            found = self.lookup(self.cls, call.name, skip_self=call.receiver == "super()")
            if found is False:
                return CallCheck(call.text, call.line, None, False,
                                 f"no member {call.name!r} in {self.cls.qualname} or its bases")
            if not isinstance(found, Member) or not found.sigs:
                return None
            owner = f"{found.owner.file}:{found.owner.qualname}.{call.name}"
            return self._fit(call, owner, tuple(s.bound() if s.binds_first else s for s in found.sigs))
        if call.receiver in snippet.bound:
            return None
        ref = self._class_of(here, mod, call.receiver)
        if ref is not None:
            found = self.lookup(ref, call.name)
            if found is False:
                return CallCheck(call.text, call.line, None, False,
                                 f"no member {call.name!r} in {ref.qualname} or its bases")
            if not isinstance(found, Member) or not found.sigs:
                return None
            sigs = tuple(s.bound() if "classmethod" in s.decorators else s for s in found.sigs)
            return self._fit(call, f"{found.owner.file}:{found.owner.qualname}.{call.name}", sigs)
        obj = self._imported(here, mod, call.receiver)
        target_file = self._module_file(obj) if obj is not None else None
        if target_file is None:
            return None
        other = self._module(target_file)
        if other is None:
            return None
        if call.name not in other.names:
            if other.star_import:
                return None
            return CallCheck(call.text, call.line, None, False,
                             f"module {call.receiver!r} ({target_file}) has no {call.name!r}")
        if call.name in other.classes:
            return self._fit(call, f"{target_file}:{call.name}", self._constructor(ClassRef(target_file, call.name)))
        if call.name in other.functions:
            return self._fit(call, f"{target_file}:{call.name}", tuple(other.functions[call.name]))
        return None

    def _check_object(self, call: PyCall, obj: CodeObject, *, bind: bool) -> CallCheck | None:
        where = file_id(obj.repo, obj.path)
        if obj.kind in TYPE_KINDS:
            return self._fit(call, obj.id, self._constructor(ClassRef(where, obj.qualname)))
        if obj.kind in _FUNCTION_KINDS:
            other = self._module(where)
            sigs = other.functions.get(obj.qualname) if other is not None else None
            return self._fit(call, obj.id, tuple(sigs) if sigs else None)
        return None

    def suspicious_names(self, program: Program) -> list[NameIssue]:
        snippet = self.facts(program)
        mod = self.module
        issues: dict[str, NameIssue] = {}
        for name, line in snippet.reads:
            if name in snippet.bound or name in mod.names or name in BUILTINS or name in issues:
                continue
            if mod.star_import and self.index.named(name):
                continue
            issues[name] = NameIssue(name, line, "not bound in the program, its module or builtins")
        members = [(r, a, ln) for r, a, ln in snippet.attributes]
        members += [(c.receiver, c.name, c.line) for c in snippet.calls if c.receiver]
        for receiver, attr, line in members:
            shown = f"{receiver}.{attr}"
            if shown in issues or (attr.startswith("__") and attr.endswith("__")):
                continue
            if receiver in ("self", "cls", "super()"):
                if self.cls is None or attr in snippet.self_assigned or attr in snippet.definitions:
                    continue
                if self.lookup(self.cls, attr, skip_self=receiver == "super()") is False:
                    issues[shown] = NameIssue(shown, line, f"no member {attr!r} in {self.cls.qualname} or its bases")
                continue
            if receiver in snippet.bound:
                continue
            ref = self._class_of(self.target.file, mod, receiver)
            if ref is not None:
                if self.lookup(ref, attr) is False:
                    issues[shown] = NameIssue(shown, line, f"no member {attr!r} in {ref.qualname} or its bases")
                continue
            obj = self._imported(self.target.file, mod, receiver)
            target_file = self._module_file(obj) if obj is not None else None
            other = self._module(target_file) if target_file is not None else None
            if other is not None and not other.star_import and attr not in other.names:
                issues[shown] = NameIssue(shown, line, f"module {receiver!r} ({target_file}) has no {attr!r}")
        return sorted(issues.values(), key=lambda i: (i.line, i.name))
