"""What extraction hands to resolution: per-file facts and raw references.

Extraction runs per file (in worker processes), sees one file and knows nothing
of the others. Resolution runs once per repository and language, sees every
file's facts, and turns raw references into edges or ``UnresolvedRef``s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from operator import attrgetter
from typing import Any, Generic, Protocol, TypeVar

from vitalrag.model import CodeObject, Edge, NodeId, UnresolvedRef

RefKind = str  # "import" | "call" | "inherit" | "reference"


class Fact:
    """The base of a language's facts, which are frozen, slotted dataclasses
    (``FileFacts.data``, ``RawRef.data`` and what they hold): they pickle as
    their fields in order (parse workers send thousands), not through the
    ``__setstate__`` a frozen dataclass gets, which is much slower to load."""

    __slots__ = ()
    __match_args__: tuple[str, ...] = ()  # a dataclass's fields, in order

    def __reduce__(self) -> tuple[Any, ...]:
        t = type(self)
        get = _FIELDS_OF.get(t)
        if get is None:
            get = _FIELDS_OF[t] = _getter(t.__match_args__)
        return (t, get(self))


def _getter(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    if len(names) > 1:
        return attrgetter(*names)
    return lambda obj: tuple([getattr(obj, n) for n in names])


_FIELDS_OF: dict[type, Callable[[Any], tuple[Any, ...]]] = {}


@dataclass(frozen=True, slots=True)
class RefDetail(Fact):
    """What a language knows of one reference beyond its name: each language
    subclasses it (Java's call sites, JavaScript's named imports...)."""


@dataclass(slots=True)
class RawRef:
    """A name written in the source that may point at another object.

    ``source`` is the innermost enclosing object (or the file for module-level
    code); ``name`` is the text as written (``helper``, ``self.run``,
    ``mod.Cls``); ``data`` carries the language's details (import aliases, a
    call's receiver and arguments); ``dynamic`` marks a callee or base that no
    name stands for (``f()()``, ``xs[0]()``), kept so that resolution reports it.
    """

    kind: RefKind
    source: NodeId
    name: str
    line: int
    data: RefDetail | None = None
    dynamic: bool = False

    def __reduce__(self) -> tuple[Any, ...]:
        # positional fields: parse workers send thousands of these
        return (RawRef, (self.kind, self.source, self.name, self.line, self.data, self.dynamic))


#: what a language learns of a whole file beyond objects and references (its own frozen dataclass)
D = TypeVar("D")


@dataclass(slots=True)
class FileFacts(Generic[D]):
    """Everything extraction learnt from one file; ``data`` is the language's own
    (``PythonFacts``, ``JavaFacts``...), what its resolution reads."""

    path: str
    language: str
    file: CodeObject
    data: D
    objects: list[CodeObject] = field(default_factory=list)
    #: object id -> id of its container (the file or an enclosing definition)
    parents: dict[NodeId, NodeId] = field(default_factory=dict)
    refs: list[RawRef] = field(default_factory=list)
    #: dotted namespace this file belongs to (Python module, Java/Go package, C# namespace)
    namespace: str = ""
    #: repo-relative folder that is a package (a ``module`` node), if any
    package_dir: str | None = None
    #: dotted package name for ``package_dir``
    package_name: str = ""
    #: human-readable problems found while parsing (syntax errors recovered)
    problems: list[str] = field(default_factory=list)
    text: str = ""


@dataclass(slots=True)
class Resolution:
    edges: list[Edge] = field(default_factory=list)
    unresolved: list[UnresolvedRef] = field(default_factory=list)
    #: references to code outside the repository (standard library, dependencies)
    external: int = 0

    def rows(self) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], int]:
        """Plain tuples, what a pipe carries cheaply (``from_rows`` reads them)."""
        return [e.row() for e in self.edges], [u.row() for u in self.unresolved], self.external

    @classmethod
    def from_rows(cls, edges: list[tuple[Any, ...]], unresolved: list[tuple[Any, ...]],
                  external: int) -> Resolution:
        return cls([Edge(*row) for row in edges], [UnresolvedRef(*row) for row in unresolved], external)


class Resolver(Protocol):
    """One language's resolution of one repository's files, in two steps: the
    whole-repository work, once (``shared``: imports, inheritance), then the
    references written in some of the files (``files``). ``files`` over
    consecutive shares of the files, combined in order, equals ``files`` over
    all of them, so a ``ParsePool`` may run the shares on forked processes."""

    def shared(self) -> Resolution: ...

    def files(self, facts: list[FileFacts[Any]]) -> Resolution: ...

    def close(self) -> None:
        """Free what it holds (a Java index holds reference cycles)."""


def resolve_all(resolver: Resolver, facts: list[FileFacts[Any]]) -> Resolution:
    """Both steps of ``resolver`` in this process, over ``facts``; closes it."""
    try:
        return combine(resolver.shared(), resolver.files(facts))
    finally:
        resolver.close()


@dataclass(frozen=True, slots=True)
class WholeResolver:
    """The ``Resolver`` of a language that resolves a repository in one step."""

    resolve: Callable[[str, list[FileFacts[Any]]], Resolution]
    repo: str
    facts: list[FileFacts[Any]]

    def shared(self) -> Resolution:
        return self.resolve(self.repo, self.facts)

    def files(self, facts: list[FileFacts[Any]]) -> Resolution:
        return Resolution()

    def close(self) -> None:
        pass


def combine(*parts: Resolution) -> Resolution:
    """One resolution of several, in order."""
    out = Resolution()
    for r in parts:
        out.edges.extend(r.edges)
        out.unresolved.extend(r.unresolved)
        out.external += r.external
    return out


class IdSuffixes:
    """Ids met in source order: a second object of one id gets a ``#2`` suffix
    (third ``#3``...), on its id and its qualname alike."""

    def __init__(self) -> None:
        self.seen: dict[str, int] = {}  # id before the suffix -> how many objects had it

    def __call__(self, oid: str, qualname: str) -> tuple[str, str]:
        n = self.seen[oid] = self.seen.get(oid, 0) + 1
        return (oid, qualname) if n == 1 else (f"{oid}#{n}", f"{qualname}#{n}")


def dedupe_ids(objects: list[CodeObject]) -> list[CodeObject]:
    """``IdSuffixes`` over a list of objects in source order."""
    suffixes = IdSuffixes()
    out = []
    for o in objects:
        oid, qualname = suffixes(o.id, o.qualname)
        out.append(o if oid == o.id else replace(o, id=oid, qualname=qualname))
    return out
