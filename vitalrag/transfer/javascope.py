"""Java scope of a target: what a program written for it can name and call.

Simple names resolve to the program's declarations, the members of the
target's class, its enclosing classes and their repository supertypes, the
file's imports (static ones included), same-package repository types and
``java.lang``. A class whose superclass is outside the repository is open: its
members are unknown, so nothing is flagged there. Overloads are told apart by
arity only (argument types are not inferred).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from vitalrag.model import TYPE_KINDS, NodeId, file_id
from vitalrag.transfer.javafacts import JCall, JClass, JFile, JSnippet, file_facts, snippet_facts
from vitalrag.transfer.programs import Program
from vitalrag.transfer.repository import RepositoryIndex, Target
from vitalrag.transfer.signatures import JavaSignature, java_fit
from vitalrag.transfer.witness_types import CallCheck, NameIssue

JAVA_LANG = frozenset("""
AbstractMethodError Appendable ArithmeticException ArrayIndexOutOfBoundsException ArrayStoreException
AssertionError AutoCloseable Boolean Byte CharSequence Character Class ClassCastException
ClassCastException ClassLoader ClassNotFoundException CloneNotSupportedException Cloneable Comparable
Deprecated Double Enum Error Exception ExceptionInInitializerError Float FunctionalInterface
IllegalAccessException IllegalArgumentException IllegalMonitorStateException IllegalStateException
IndexOutOfBoundsException InstantiationException Integer InterruptedException Iterable LinkageError
Long Math NegativeArraySizeException NoSuchFieldException NoSuchMethodException NullPointerException
Number NumberFormatException Object OutOfMemoryError Override Package Process ProcessBuilder Readable
Record ReflectiveOperationException Runnable Runtime RuntimeException SafeVarargs SecurityException
Short StackOverflowError StrictMath String StringBuffer StringBuilder StringIndexOutOfBoundsException
SuppressWarnings System Thread ThreadLocal Throwable TypeNotPresentException UnsupportedOperationException
VirtualMachineError Void
""".split())
#: members every object has (java.lang.Object), callable without a receiver
_OBJECT_METHODS = {"equals": 1, "hashCode": 0, "toString": 0, "getClass": 0, "clone": 0, "finalize": 0,
                   "notify": 0, "notifyAll": 0, "wait": 0}
_PACKAGE_ROOTS = frozenset({"java", "javax", "jakarta", "org", "com", "net", "io", "sun", "jdk", "android"})
_ENUM_METHODS = {"values": 0, "valueOf": 1, "name": 0, "ordinal": 0, "compareTo": 1}


@dataclass(frozen=True, slots=True)
class JRef:
    file: NodeId
    qualname: str


class JavaScope:
    language = "java"

    def __init__(self, index: RepositoryIndex, target: Target) -> None:
        self.index = index
        self.target = target
        self.file: JFile = self._file(target.file) or JFile()
        qual = target.qualname.split("(", 1)[0]
        owner = qual if target.kind in TYPE_KINDS else qual.rsplit(".", 1)[0] if "." in qual else ""
        chain: list[JRef] = []
        while owner:
            if owner in self.file.classes:
                chain.append(JRef(target.file, owner))
            owner = owner.rsplit(".", 1)[0] if "." in owner else ""
        self.chain = chain  # the target's class, then its enclosing classes
        self._types = self._visible_types()

    # -- resolution -----------------------------------------------------------
    def _file(self, node: NodeId) -> JFile | None:
        facts = self.index.file_facts(node, "java", file_facts)
        return facts if isinstance(facts, JFile) else None

    def _visible_types(self) -> set[str]:
        names = set(JAVA_LANG) | set(self.file.imports) | set(self.file.static_members)
        names.update(q.rsplit(".", 1)[-1] for q in self.file.classes)
        folder = posixpath.dirname(self.target.path)
        for objs in self.index.by_name.values():
            for o in objs:
                if o.kind in TYPE_KINDS and posixpath.dirname(o.path) == folder and "." not in o.qualname:
                    names.add(o.name)
        for ref in self.chain:
            for cls, _ in self._hierarchy(ref)[0]:
                names.update(cls.nested)
                names.update(cls.type_params)
        return names

    def resolve_type(self, name: str, context: NodeId, jf: JFile) -> JRef | None:
        """The repository type a simple name denotes in a file, if any."""
        if "." in name:  # written fully qualified: only that exact repository type
            fqn: str | None = name
            name = name.rsplit(".", 1)[-1]
        else:
            for qual in jf.classes:
                if qual == name or qual.endswith("." + name):
                    return JRef(context, qual)
            fqn = jf.imports.get(name)
            if fqn is None and name in jf.static_members:  # ``import static a.Outer.Nested``
                fqn = f"{jf.static_members[name]}.{name}"
        folder = posixpath.dirname(self.index.by_id[context].path) if context in self.index.by_id else ""
        for o in self.index.named(name, TYPE_KINDS):
            dotted = posixpath.dirname(o.path).replace("/", ".")
            full = f"{dotted}.{o.qualname}"
            if fqn is not None:
                if full == fqn or full.endswith("." + fqn):
                    return JRef(file_id(o.repo, o.path), o.qualname)
            elif "." not in o.qualname and (posixpath.dirname(o.path) == folder or
                                            any(full == f"{w}.{o.qualname}" or full.endswith(f".{w}.{o.qualname}")
                                                for w in jf.wildcards)):
                return JRef(file_id(o.repo, o.path), o.qualname)
        return None

    def _hierarchy(self, ref: JRef) -> tuple[list[tuple[JClass, JRef]], bool]:
        """The class and its repository supertypes; ``open`` when a superclass
        lies outside the repository."""
        out: list[tuple[JClass, JRef]] = []
        open_, queue, seen = False, [ref], set()
        while queue:
            cur = queue.pop(0)
            if cur in seen:
                continue
            seen.add(cur)
            jf = self._file(cur.file)
            cls = jf.classes.get(cur.qualname) if jf is not None else None
            if jf is None or cls is None:
                open_ = True
                continue
            out.append((cls, cur))
            for i, sup in enumerate(([cls.superclass] if cls.superclass else []) + cls.interfaces):
                resolved = self.resolve_type(sup, cur.file, jf)
                if resolved == cur:  # ``class X extends other.pkg.X``: not itself
                    resolved = None
                if resolved is not None:
                    queue.append(resolved)
                elif i == 0 and cls.superclass and sup not in ("Object",):
                    open_ = True  # members inherited from outside the repository are unknown
        return out, open_

    def methods(self, ref: JRef, name: str, *, skip_self: bool = False) -> tuple[list[JavaSignature], bool, str]:
        """Overloads of ``name`` in a class and its supertypes, whether the
        hierarchy is open, and the owning class id."""
        classes, open_ = self._hierarchy(ref)
        sigs: list[JavaSignature] = []
        owner = ""
        for cls, where in classes:
            if skip_self and where == ref:
                continue
            if name in cls.methods:
                sigs.extend(cls.methods[name])
                owner = owner or f"{where.file}:{where.qualname}.{name}"
            if cls.kind == "enum" and name in _ENUM_METHODS:
                sigs.append(JavaSignature(_ENUM_METHODS[name], False))
        if name in _OBJECT_METHODS:
            sigs.append(JavaSignature(_OBJECT_METHODS[name], False))
        return sigs, open_, owner

    def _has_field(self, ref: JRef, name: str) -> bool | None:
        classes, open_ = self._hierarchy(ref)
        if any(name in c.fields or name in c.nested for c, _ in classes):
            return True
        return None if open_ else False

    # -- checks ---------------------------------------------------------------
    def facts(self, program: Program) -> JSnippet:
        return snippet_facts(program.root)

    def check_calls(self, program: Program) -> list[CallCheck]:
        snippet = self.facts(program)
        out = []
        for call in snippet.calls:
            check = self._check_call(call, snippet)
            if check is not None:
                out.append(check)
        return out

    def _fit(self, call: JCall, owner: str, sigs: list[JavaSignature]) -> CallCheck:
        problem = java_fit(sigs, call.arity)
        return CallCheck(call.text, call.line, owner or None, problem is None, problem or "fits")

    def _check_call(self, call: JCall, snippet: JSnippet) -> CallCheck | None:
        if call.kind in ("bare", "this", "super"):
            refs = self.chain if call.kind == "bare" else self.chain[:1]
            if not refs:
                return None
            sigs: list[JavaSignature] = list(snippet.methods.get(call.name, [])) if call.kind != "super" else []
            any_open, owner = False, ""
            for ref in refs:
                found, open_, where = self.methods(ref, call.name, skip_self=call.kind == "super")
                sigs.extend(found)
                any_open |= open_
                owner = owner or where
            if call.kind == "bare" and call.name in self.file.static_members:
                return None
            if not sigs:
                if any_open or (call.kind == "bare" and self.file.static_wildcards):
                    return None
                return CallCheck(call.text, call.line, None, False,
                                 f"no method {call.name!r} in {refs[0].qualname}, its enclosing or super types")
            if any_open and java_fit(sigs, call.arity) is not None:
                return None  # an overload from outside the repository may fit
            return self._fit(call, owner, sigs)
        if call.kind == "qualified":
            if call.receiver in snippet.bound:
                return None
            named = self.resolve_type(call.receiver, self.target.file, self.file)
            if named is None:
                return None
            sigs, open_, owner = self.methods(named, call.name)
            if not sigs:
                if open_:
                    return None
                return CallCheck(call.text, call.line, None, False, f"no method {call.name!r} in {named.qualname}")
            if open_ and java_fit(sigs, call.arity) is not None:
                return None
            return self._fit(call, owner, sigs)
        if call.kind == "new":
            created = self.resolve_type(call.name, self.target.file, self.file)
            if created is None:
                if call.name in self._types or call.name in snippet.bound or self.file.wildcards:
                    return None
                return CallCheck(call.text, call.line, None, False, f"type {call.name!r} is not visible here")
            jf = self._file(created.file)
            cls = jf.classes.get(created.qualname) if jf is not None else None
            if cls is None:
                return None
            ctors = cls.constructors or [JavaSignature(0, False)]
            return self._fit(call, f"{created.file}:{created.qualname}", ctors)
        return None

    def _bare_known(self, name: str, snippet: JSnippet) -> bool:
        if name in _PACKAGE_ROOTS:
            return True  # the head of a fully qualified name (``org.x.Y.method()``)
        if name in snippet.bound or name in self._types or name in self.file.static_members:
            return True
        for ref in self.chain:
            if self._has_field(ref, name) is not False:
                return True
        if name[:1].isupper() and self.file.wildcards:
            return True
        return bool(self.file.static_wildcards)

    def suspicious_names(self, program: Program) -> list[NameIssue]:
        snippet = self.facts(program)
        issues: dict[str, NameIssue] = {}
        for name, line in snippet.reads:
            if name not in issues and not self._bare_known(name, snippet):
                issues[name] = NameIssue(name, line, "not declared in the program, its classes or imports")
        for receiver, member, line in snippet.members:
            shown = f"{receiver}.{member}"
            if shown in issues:
                continue
            if receiver == "this":
                if not self.chain or member in snippet.bound:
                    continue
                if self._has_field(self.chain[0], member) is False:
                    issues[shown] = NameIssue(shown, line, f"no field {member!r} in {self.chain[0].qualname}")
            elif receiver not in snippet.bound and not self._field_shadowed(receiver):
                ref = self.resolve_type(receiver, self.target.file, self.file)
                if ref is not None and self._has_field(ref, member) is False:
                    sigs, _, _ = self.methods(ref, member)
                    if not sigs:
                        issues[shown] = NameIssue(shown, line, f"no member {member!r} in {ref.qualname}")
        for call in snippet.calls:
            if call.kind not in ("bare", "this", "new", "qualified"):
                continue
            check = self._check_call(call, snippet)
            if check is None or check.fits or check.target is not None:
                continue
            shown = call.name if call.kind in ("bare", "new") else f"{call.receiver}.{call.name}"
            issues.setdefault(shown, NameIssue(shown, call.line, check.why))
        return sorted(issues.values(), key=lambda i: (i.line, i.name))

    def _field_shadowed(self, name: str) -> bool:
        """A lower-case receiver that is a field of the target's classes is a value, not a type."""
        return any(self._has_field(ref, name) for ref in self.chain)
