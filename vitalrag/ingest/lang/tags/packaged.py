"""Resolution shared by the languages whose files declare a package (or
namespace, or belong to a module) and import names from others: Kotlin,
Scala, Swift and PHP.

A file sees, in this order, and the first place that has a name wins: the
objects defined inside the caller and inside the definitions around it, its
class's members among them (when the language calls methods without ``this``), the top-level objects of its own file, the
names it imports one by one (``import a.b.C``, ``use A\\B\\C``), the top-level
objects of the other files of its package (module), and those of the packages
it imports whole (``import a.b.*``). Several objects in the first place that
has the name leave the call unresolved (``ambiguous-name``, or
``ambiguous-overload`` for methods), never guessed.

Calls: ``f()`` through that scope (a class stands for its constructor;
PHP's functions fall back to the global namespace, ``Scoping.fallback``);
``this.f()`` to a member of the caller's class (``unknown-attribute`` when
not there: bases and mixins are not followed); ``Type.f()`` where the scope
has ``Type`` to its member (a static member, an ``object``'s or companion's).
A call on any other value is ``dynamic-receiver``; a name the repository
defines but the file does not see is ``unknown-name``; a name the repository
never defines is external (the standard library, a dependency).

An extension (Swift's ``extension Cart``) declared away from its type is an
object of its own whose members are the type's: ``self.f()`` and ``f()`` in it,
and ``Cart.f()`` anywhere, find them (the type is looked up as the extension's
file sees it; an extension of a type the repository lacks keeps its members).

Imports: one name links the file to the object (a type's member, Kotlin's
``import a.b.TestUtil.f``, to the type, and ``f`` is then the member); a whole
package to every file that declares it. A name imported one by one from
outside the repository hides the package's and the whole imports' objects of
that name. A path under a package the repository declares but
naming nothing there is ``missing-module``; anything else is external.
"""

from __future__ import annotations

from dataclasses import dataclass

from vitalrag.ingest.facts import Fact, FileFacts, RawRef, RefDetail, Resolution
from vitalrag.ingest.lang.tags.index import ObjectIndex, call_target, leave_open, link
from vitalrag.model import TYPE_KINDS, CodeObject, NodeId


@dataclass(frozen=True, slots=True)
class PackagedFacts(Fact):
    """A file's ``FileFacts.data``: the package (namespace, module) it belongs to ("" for none)."""

    package: str
    #: the extensions the file declares: (the extension object's id, the type's name as written)
    extensions: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Imported(RefDetail):
    """An import of one name (``alias`` the name it binds, if renamed) or of a whole package."""

    alias: str | None = None
    whole: bool = False


FACT_TYPES: tuple[type, ...] = (PackagedFacts, Imported)

_CALLABLE = frozenset({"function", "method", "test", "class", "enum"})


@dataclass(frozen=True, slots=True)
class Scoping:
    """What differs between the languages."""

    #: a bare ``f()`` inside a class may call its method (Kotlin, Scala, Swift; not PHP)
    implicit_self: bool
    #: the receivers that are the caller's own class in a call's name (``this.f``, Swift's
    #: ``self.f``, PHP's ``$this->f``, ``self::f``)
    self_words: frozenset[str] = frozenset({"this"})
    #: what separates a call's receiver from its member (PHP: ``->`` and ``::``)
    separators: tuple[str, ...] = (".",)
    #: a package every file sees last (PHP's global namespace, where unqualified functions fall back)
    fallback: str | None = None


class _Packages:
    """Top-level objects by package and name, and the files of each package."""

    def __init__(self, facts: list[FileFacts[PackagedFacts]], index: ObjectIndex[PackagedFacts]) -> None:
        self.tops: dict[str, dict[str, list[CodeObject]]] = {}
        self.files: dict[str, list[FileFacts[PackagedFacts]]] = {}
        self.names: set[str] = set()  # every object name the repository has
        self.top_names: set[str] = set()  # the names of its top-level objects
        for f in facts:
            package = f.data.package
            self.files.setdefault(package, []).append(f)
            tops = self.tops.setdefault(package, {})
            extensions = {oid for oid, _ in f.data.extensions}  # they name no new type
            for o in f.objects:
                self.names.add(o.name)
                if f.parents.get(o.id) == f.file.id and o.id not in extensions:
                    self.top_names.add(o.name)
                    tops.setdefault(o.name, []).append(o)
        self.roots = {p.split(".", 1)[0] for p in self.files if p}


def resolve_packaged(repo: str, facts: list[FileFacts[PackagedFacts]], scoping: Scoping) -> Resolution:
    res = Resolution()
    index = ObjectIndex(facts)
    packages = _Packages(facts, index)
    scopes: list[tuple[_Scope, set[str]]] = []
    for f in facts:
        imported: dict[str, list[CodeObject]] = {}
        wholes: list[str] = []
        outside: set[str] = set()  # names bound by imports of code outside the repository
        for ref in f.refs:
            if isinstance(ref.data, Imported):
                _resolve_import(f, ref, ref.data, index, packages, imported, wholes, outside, res)
        scopes.append((_Scope(f, index, packages, imported, wholes, scoping.fallback, outside), outside))
    members = _Members(index, scopes)
    for f, (scope, outside) in zip(facts, scopes):
        for ref in f.refs:
            if ref.kind == "call":
                _resolve_call(f, ref, members, scope, packages, outside, scoping, res)
    return res


class _Members:
    """Members of a type: its own and its extensions' (an extension's are its type's)."""

    def __init__(self, index: ObjectIndex[PackagedFacts], scopes: list[tuple[_Scope, set[str]]]) -> None:
        self.index = index
        self.extended: dict[NodeId, NodeId] = {}  # extension -> the type it extends
        self.family: dict[NodeId, list[NodeId]] = {}  # type -> itself and its extensions
        for scope, _ in scopes:
            for ext, name in scope.f.data.extensions:
                types = [o for o in scope.lookup(name.rsplit(".", 1)[-1]) if o.kind in TYPE_KINDS]
                if len(types) == 1 and types[0].id != ext:
                    self.extended[ext] = types[0].id
                    self.family.setdefault(types[0].id, [types[0].id]).append(ext)

    def of(self, container: NodeId, name: str) -> list[CodeObject]:
        target = self.extended.get(container, container)
        return [o for c in self.family.get(target, [target]) for o in self.index.members(c, name)]


def _resolve_import(f: FileFacts[PackagedFacts], ref: RawRef, imp: Imported, index: ObjectIndex[PackagedFacts],
                    packages: _Packages, imported: dict[str, list[CodeObject]], wholes: list[str], outside: set[str],
                    res: Resolution) -> None:
    fid = f.file.id
    if imp.whole:
        files = packages.files.get(ref.name) if ref.name else None
        if files:
            for target in files:
                if target is not f:
                    link(res, fid, target.file.id, "IMPORTS", ref.line)
            wholes.append(ref.name)
        elif ref.name.split(".", 1)[0] in packages.roots and ref.name not in packages.files:
            _missing_or_member(f, ref, packages, wholes, res)
        else:
            res.external += 1
        return
    package, _, name = ref.name.rpartition(".")
    found = packages.tops.get(package, {}).get(name, [])
    if found:
        for o in found:
            link(res, fid, o.id, "IMPORTS", ref.line)
        imported.setdefault(imp.alias or name, []).extend(found)
    elif package in packages.files or (package.split(".", 1)[0] in packages.roots and "." in package
                                       and _owner_type(package, packages) is None):
        leave_open(res, fid, "IMPORTS", ref.name, ref.line, "missing-module")
    elif (owner := _owner_type(package, packages)) is not None:
        # a member of a repository type (Kotlin's ``import a.b.TestUtil.makeSegments``)
        link(res, fid, owner.id, "IMPORTS", ref.line)
        found = [o for o in index.members(owner.id, name) if o.kind in _CALLABLE]
        if found:
            imported.setdefault(imp.alias or name, []).extend(found)
        else:  # inherited, or a property: the name is bound, to nothing we can name
            outside.add(imp.alias or name)
    else:
        outside.add(imp.alias or name)
        res.external += 1


def _missing_or_member(f: FileFacts[PackagedFacts], ref: RawRef, packages: _Packages, wholes: list[str],
                       res: Resolution) -> None:
    """``import a.b.Type.*`` (a type's members) links to the type; else the package is missing."""
    owner = _owner_type(ref.name, packages)
    if owner is not None:
        link(res, f.file.id, owner.id, "IMPORTS", ref.line)
    else:
        leave_open(res, f.file.id, "IMPORTS", ref.name, ref.line, "missing-module")


def _owner_type(path: str, packages: _Packages) -> CodeObject | None:
    package, _, name = path.rpartition(".")
    found = [o for o in packages.tops.get(package, {}).get(name, []) if o.kind in TYPE_KINDS]
    return found[0] if len(found) == 1 else None


class _Scope:
    """The names one file sees, in the order of the module docstring."""

    def __init__(self, f: FileFacts[PackagedFacts], index: ObjectIndex[PackagedFacts], packages: _Packages,
                 imported: dict[str, list[CodeObject]], wholes: list[str], fallback: str | None = None,
                 outside: frozenset[str] | set[str] = frozenset()) -> None:
        self.f, self.index, self.packages = f, index, packages
        self.imported = imported
        self.outside = outside  # names imported one by one from outside the repository
        self.wholes = wholes if fallback is None or fallback == f.data.package else [*wholes, fallback]
        self.extensions = {oid for oid, _ in f.data.extensions}

    def lookup(self, name: str) -> list[CodeObject]:
        own = [o for o in self.index.top_level(self.f.path, name) if o.id not in self.extensions]
        if own:
            return own
        if name in self.imported:
            return self.imported[name]
        if name in self.outside:  # an import of that name shadows the package's and whole imports
            return []
        same = [o for o in self.packages.tops.get(self.f.data.package, {}).get(name, []) if o.path != self.f.path]
        if same:
            return same
        return [o for p in self.wholes for o in self.packages.tops.get(p, {}).get(name, [])]


def _classes_around(f: FileFacts[PackagedFacts], index: ObjectIndex[PackagedFacts], source: NodeId) -> list[NodeId]:
    """The classes around a caller, innermost first."""
    out: list[NodeId] = []
    cur = f.parents.get(source)
    for _ in range(128):
        if cur is None or cur == f.file.id:
            break
        o = index.objects.get(cur)
        if o is not None and o.kind in TYPE_KINDS:
            out.append(cur)
        cur = f.parents.get(cur)
    return out


def _enclosing(f: FileFacts[PackagedFacts], source: NodeId) -> list[NodeId]:
    """The caller and the objects around it, innermost first (a local ``def`` or class
    shadows the class's member of that name)."""
    out: list[NodeId] = []
    cur: NodeId | None = source
    for _ in range(128):
        if cur is None or cur == f.file.id:
            break
        out.append(cur)
        cur = f.parents.get(cur)
    return out


def _resolve_call(f: FileFacts[PackagedFacts], ref: RawRef, members: _Members, scope: _Scope,
                  packages: _Packages, outside: set[str], scoping: Scoping, res: Resolution) -> None:
    """A CALLS edge, an external call, or an unresolved reference with its reason."""
    if ref.dynamic:
        leave_open(res, ref.source, "CALLS", ref.name, ref.line, "dynamic-receiver")
        return
    index = members.index
    head, member = _split(ref.name, scoping.separators)
    if head in scoping.self_words:
        around = _classes_around(f, index, ref.source)
        found = members.of(around[0], member) if around else []
        call_target(res, ref.source, ref.name, ref.line, found, reason_none="unknown-attribute")
        return
    if not head and "." in member and "." not in scoping.separators:
        # a function named with its package (PHP's ``\A\B\f()``, written ``A.B.f``)
        package, _, name = member.rpartition(".")
        found = [o for o in packages.tops.get(package, {}).get(name, []) if o.kind in _CALLABLE]
        if found:
            call_target(res, ref.source, ref.name, ref.line, found)
        elif package.split(".", 1)[0] in packages.roots and name in packages.names:
            leave_open(res, ref.source, "CALLS", ref.name, ref.line, "unknown-name")
        else:
            res.external += 1
        return
    if not head:
        if scoping.implicit_self:  # lexical scope: what the caller and the definitions around it hold
            for cls in _enclosing(f, ref.source):
                found = members.of(cls, member)
                if found:
                    call_target(res, ref.source, ref.name, ref.line, found)
                    return
        found = [o for o in scope.lookup(member) if o.kind in _CALLABLE]
        # without implicit ``this`` (PHP) a bare name is never a method: ``count()`` is the builtin
        known = packages.names if scoping.implicit_self else packages.top_names
        if found:
            call_target(res, ref.source, ref.name, ref.line, found)
        elif member in outside or member not in known:
            res.external += 1
        else:  # the repository defines it, in a place this file does not see (or a base class)
            leave_open(res, ref.source, "CALLS", ref.name, ref.line, "unknown-name")
        return
    if "." not in head:
        types = [o for o in scope.lookup(head) if o.kind in TYPE_KINDS]
        if len(types) == 1:
            call_target(res, ref.source, ref.name, ref.line, members.of(types[0].id, member),
                        reason_none="unknown-attribute")
            return
        if len(types) > 1:
            leave_open(res, ref.source, "CALLS", ref.name, ref.line, "ambiguous-name")
            return
    else:  # ``a.b.Type.f()``: a fully qualified type
        package, _, name = head.rpartition(".")
        types = [o for o in packages.tops.get(package, {}).get(name, []) if o.kind in TYPE_KINDS]
        if len(types) == 1:
            call_target(res, ref.source, ref.name, ref.line, members.of(types[0].id, member),
                        reason_none="unknown-attribute")
            return
    first = head.split(".", 1)[0]
    if first in outside or (first[:1].isupper() and first not in packages.names):
        res.external += 1  # a type of the standard library or a dependency
    elif first[:1].isupper():  # a repository type this file does not see, or a constant
        leave_open(res, ref.source, "CALLS", ref.name, ref.line, "unknown-name")
    else:  # a method of a local, a parameter or a property: its type is not followed
        leave_open(res, ref.source, "CALLS", ref.name, ref.line, "dynamic-receiver")


def _split(name: str, separators: tuple[str, ...]) -> tuple[str, str]:
    """``a.b.f`` -> (``a.b``, ``f``): the receiver and the member, at the last separator."""
    at, width = -1, 0
    for sep in separators:
        i = name.rfind(sep)
        if i > at:
            at, width = i, len(sep)
    return (name[:at], name[at + width:]) if at >= 0 else ("", name)
