"""What extraction hands to resolution: per-file facts and raw references.

Extraction runs per file (in worker processes), sees one file and knows nothing
of the others. Resolution runs once per repository and language, sees every
file's facts, and turns raw references into edges or ``UnresolvedRef``s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from vitalrag.model import CodeObject, Edge, NodeId, UnresolvedRef

RefKind = str  # "import" | "call" | "inherit" | "reference"


@dataclass(slots=True)
class RawRef:
    """A name written in the source that may point at another object.

    ``source`` is the innermost enclosing object (or the file for module-level
    code); ``name`` is the text as written (``helper``, ``self.run``,
    ``mod.Cls``); ``data`` carries language-specific details (import aliases,
    argument count, declared receiver type).
    """

    kind: RefKind
    source: NodeId
    name: str
    line: int
    data: dict[str, Any] = field(default_factory=dict)

    def __reduce__(self) -> tuple[Any, ...]:
        # positional fields: parse workers send thousands of these
        return (RawRef, (self.kind, self.source, self.name, self.line, self.data))


@dataclass(slots=True)
class FileFacts:
    """Everything extraction learnt from one file."""

    path: str
    language: str
    file: CodeObject
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
    data: dict[str, Any] = field(default_factory=dict)
    text: str = ""


@dataclass(slots=True)
class Resolution:
    edges: list[Edge] = field(default_factory=list)
    unresolved: list[UnresolvedRef] = field(default_factory=list)
    #: references to code outside the repository (standard library, dependencies)
    external: int = 0


Extractor = Callable[[str, str, str], FileFacts]
Resolver = Callable[[str, list[FileFacts]], Resolution]


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
