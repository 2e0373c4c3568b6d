"""Lookups the tree-sitter language resolvers share: objects by file, name and container.

A lookup answers only when exactly one object fits; the resolvers turn "none"
and "several" into ``UnresolvedRef``s instead of guessing.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Generic, TypeVar

from vitalrag.ingest.facts import FileFacts, Resolution
from vitalrag.model import CodeObject, Edge, NodeId, UnresolvedRef

D = TypeVar("D")


class ObjectIndex(Generic[D]):
    """Objects of a set of files: top-level ones by (path, name), members by container."""

    def __init__(self, facts: Iterable[FileFacts[D]]) -> None:
        self.files: dict[str, FileFacts[D]] = {}
        self.objects: dict[NodeId, CodeObject] = {}
        self._top: dict[str, dict[str, list[CodeObject]]] = {}
        self._members: dict[NodeId, list[CodeObject]] = {}
        for f in facts:
            self.files[f.path] = f
            top = self._top.setdefault(f.path, {})
            for o in f.objects:
                self.objects[o.id] = o
                parent = f.parents.get(o.id, f.file.id)
                if parent == f.file.id:
                    top.setdefault(o.name, []).append(o)
                else:
                    self._members.setdefault(parent, []).append(o)

    def top_level(self, path: str, name: str) -> list[CodeObject]:
        """Objects named ``name`` directly in the file ``path`` (not inside another object)."""
        return self._top.get(path, {}).get(name, [])

    def members(self, container: NodeId, name: str) -> list[CodeObject]:
        return [o for o in self._members.get(container, ()) if o.name == name]


def one(found: list[CodeObject]) -> CodeObject | None:
    return found[0] if len(found) == 1 else None


def link(res: Resolution, source: NodeId, target: NodeId, kind: str, line: int) -> None:
    if source != target:
        res.edges.append(Edge(source, target, kind, (line,) if line > 0 else ()))


def leave_open(res: Resolution, source: NodeId, kind: str, name: str, line: int, reason: str) -> None:
    res.unresolved.append(UnresolvedRef(source, kind, name, line, reason))


def call_target(res: Resolution, source: NodeId, name: str, line: int, found: list[CodeObject],
                reason_none: str = "unknown-name") -> None:
    """A CALLS edge when exactly one object fits, otherwise an unresolved reference."""
    if len(found) == 1:
        link(res, source, found[0].id, "CALLS", line)
    elif found:
        overloads = all(o.kind == "method" for o in found)
        leave_open(res, source, "CALLS", name, line, "ambiguous-overload" if overloads else "ambiguous-name")
    else:
        leave_open(res, source, "CALLS", name, line, reason_none)
