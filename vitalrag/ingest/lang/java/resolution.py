"""Java: resolve raw references into IMPORTS, CALLS, INHERITS and REFERENCES edges.

Name resolution follows the language, never bare names: types through
``index`` (enclosing classes, single-type imports, the package, on-demand
imports, ``java.lang``), calls through ``calls`` (the receiver's declared
type, then overloads by arity and argument types). Whatever cannot be tied to
one object is kept as an ``UnresolvedRef``; targets outside the repository
(``java.*``, dependencies) count in ``Resolution.external``.

Unresolved reasons: ``unknown-type``, ``unknown-name`` (an unqualified call or
receiver found nowhere), ``unknown-method`` (a repository type without such a
method), ``no-matching-overload``, ``ambiguous-overload``, ``ambiguous-type``
(one qualified name defined twice), ``var-inferred`` (a ``var`` local not
initialised with ``new``), ``lambda-parameter``, ``type-variable``,
``generic-return``, ``untyped-chain`` (a receiver returned by a platform method
of unknown type), ``unresolved-receiver``, ``complex-receiver``,
``anonymous-class`` (a method of the anonymous class itself, which is no
object), ``too-deep`` (a name written inside more nested anonymous classes than
``facts.MAX_ANON``), ``missing-type`` (an import of a repository package's type
that is not there).
"""

from __future__ import annotations

import logging

from vitalrag.ingest.facts import RawRef, Resolution
from vitalrag.ingest.lang.java.calls import CallResolver
from vitalrag.ingest.lang.java.facts import CallSite, ImportDecl, TypeUse
from vitalrag.ingest.lang.java.index import External, FileCtx, JavaFile, JavaIndex, Missing, Scope, TypeInfo
from vitalrag.model import Edge, UnresolvedRef, module_id

log = logging.getLogger(__name__)

__all__ = ["JavaResolver"]


# ---- the resolver entry point ---------------------------------------------------------


class _Resolver:
    def __init__(self, repo: str, facts: list[JavaFile]) -> None:
        self.repo = repo
        self.index = JavaIndex(facts)
        self.calls = CallResolver(self.index)
        self.res = Resolution()
        self._ctx_of = {id(file.facts): file for file in self.index.files}

    def release(self) -> None:
        """Break the cycles of the index and the call resolver's memos."""
        self.index.release()
        self.calls = CallResolver(self.index)
        self._ctx_of = {}

    def unresolved(self, ref: RawRef, kind: str, reason: str) -> None:
        self.res.unresolved.append(UnresolvedRef(ref.source, kind, ref.name, ref.line, reason))

    def run_files(self, facts: list[JavaFile]) -> Resolution:
        """The imports, calls and type references written in these files."""
        self.res = Resolution()
        for f in facts:
            file = self._ctx_of[id(f)]
            for ref in f.refs:
                detail = ref.data
                if isinstance(detail, CallSite):
                    self.call(ref, detail, file)
                elif isinstance(detail, TypeUse):
                    self.reference(ref, detail, file)
                elif isinstance(detail, ImportDecl):
                    self.import_(ref, detail, file)
        return self.res

    def run_inherits(self) -> Resolution:
        """INHERITS of every type (whole-repository work, done once)."""
        self.res = Resolution()
        for info in self.index.types.values():
            for ref, sup in zip(info.raw_supers, self.index.supertypes(info)):
                if isinstance(sup, TypeInfo):
                    self.res.edges.append(Edge(info.id, sup.id, "INHERITS", (ref.line,)))
                else:
                    jt = self.index.resolve_type(ref.name, Scope(info.file, info.outer, info.tparams))
                    if jt.external:
                        self.res.external += 1
                    else:
                        self.unresolved(ref, "INHERITS", jt.reason or "unknown-type")
        return self.res

    def import_(self, ref: RawRef, imp: ImportDecl, file: FileCtx) -> None:
        idx = self.index
        src = file.facts.file.id
        parts = ref.name.split(".")
        targets: list[str] = []
        try:
            if imp.ondemand and not imp.static and ref.name in idx.package_dirs:
                targets = [module_id(self.repo, d) for d in sorted(idx.package_dirs[ref.name])]
            elif imp.static and not imp.ondemand:
                owner = idx.qualified_type(parts[:-1], file)
                member = parts[-1]
                found = idx.methods_named(owner, member)
                nested = idx.member_type(owner, member)
                targets = [m.id for m in found] or ([nested.id] if nested is not None else [owner.id])
            else:
                targets = [idx.qualified_type(parts, file).id]
        except External:
            self.res.external += 1
            return
        except Missing as exc:
            self.unresolved(ref, "IMPORTS", "missing-type" if exc.reason == "unknown-type" else exc.reason)
            return
        self.res.edges.extend(Edge(src, t, "IMPORTS", (ref.line,)) for t in targets)

    def call(self, ref: RawRef, site: CallSite, file: FileCtx) -> None:
        scope = self.index.scope_of(ref.source, site.cls, site.anon, file, site.deeper)
        try:
            target = self.calls.resolve_call(site.call, scope, site.mode)
        except External:
            self.res.external += 1
            return
        except Missing as exc:
            self.unresolved(ref, "CALLS", exc.reason)
            return
        except RecursionError:
            self.unresolved(ref, "CALLS", "complex-receiver")
            return
        self.res.edges.append(Edge(ref.source, target.id, "CALLS", (ref.line,)))

    def reference(self, ref: RawRef, use: TypeUse, file: FileCtx) -> None:
        jt = self.index.resolve_type(ref.name, self.index.scope_of(ref.source, use.cls, (), file))
        if jt.info is not None:
            if jt.info.id != ref.source:
                self.res.edges.append(Edge(ref.source, jt.info.id, "REFERENCES", (ref.line,)))
        elif jt.external:
            self.res.external += 1
        elif jt.reason != "type-variable":
            self.unresolved(ref, "REFERENCES", jt.reason or "unknown-type")


class JavaResolver:
    """The ``Resolver`` of a repository's Java files: INHERITS once
    (``shared``), then the imports, calls and type references of each file
    (``files``), over one index of the repository's types."""

    def __init__(self, repo: str, facts: list[JavaFile]) -> None:
        self.repo = repo
        self._r = _Resolver(repo, facts)

    def shared(self) -> Resolution:
        return self._r.run_inherits()

    def files(self, facts: list[JavaFile]) -> Resolution:
        res = self._r.run_files(facts)
        log.debug("java %s: %d edges, %d unresolved, %d external in %d files",
                  self.repo, len(res.edges), len(res.unresolved), res.external, len(facts))
        return res

    def close(self) -> None:
        self._r.release()

