"""The repository side of a transfer decision: objects by name, parsed files,
and the target whose file and class give a program its scope.

One ``RepositoryIndex`` serves many decisions on the same repository (the
bench asks thousands); it reads every object once and parses a file only when
a lookup first needs it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from vitalrag.errors import InputError, ObjectNotFound
from vitalrag.graph.store import GraphStore
from vitalrag.ingest.lang import parser
from vitalrag.model import DEFINITION_KINDS, CodeObject, NodeId, file_id


class RepositoryIndex:
    """Objects of one repository by id and by simple name, and parsed files."""

    def __init__(self, store: GraphStore, repo: str) -> None:
        objects = store.find_objects(repo=repo)
        if not objects:
            raise InputError(f"repository {repo!r} is not in the store {store.location}")
        self.store = store
        self.repo = repo
        self.by_id: dict[NodeId, CodeObject] = {o.id: o for o in objects}
        self.by_name: dict[str, list[CodeObject]] = defaultdict(list)
        for o in objects:
            if o.kind in DEFINITION_KINDS:
                self.by_name[o.name].append(o)
        self._facts: dict[tuple[NodeId, str], Any] = {}
        self._imports: dict[NodeId, list[tuple[NodeId, tuple[int, ...]]]] | None = None

    def named(self, name: str, kinds: frozenset[str] | None = None) -> list[CodeObject]:
        found = self.by_name.get(name, [])
        return [o for o in found if kinds is None or o.kind in kinds]

    def file_facts(self, file_node: NodeId, language: str, build: Any) -> Any:
        """``build(root)`` of the file's tree, cached; None when the store has no text."""
        key = (file_node, language)
        if key not in self._facts:
            source = self.store.source(file_node)
            self._facts[key] = None if source is None else build(
                parser(language).parse(source.encode("utf-8")).root_node)
        return self._facts[key]

    def imports_from(self, file_node: NodeId) -> list[tuple[NodeId, tuple[int, ...]]]:
        """IMPORTS edges leaving a file: (target id, lines)."""
        if self._imports is None:
            self._imports = defaultdict(list)
            for e in self.store.find_edges(repo=self.repo, kind="IMPORTS"):
                self._imports[e.source].append((e.target, e.lines))
        return self._imports.get(file_node, [])


@dataclass(frozen=True, slots=True)
class Target:
    """The object being generated: its repository, file and qualified name.

    It need not exist yet: an id ``repo:path:qualname`` whose file is indexed
    names a new function in that file.
    """

    id: NodeId
    repo: str
    path: str
    qualname: str
    kind: str
    language: str

    @property
    def file(self) -> NodeId:
        return file_id(self.repo, self.path)


def resolve_target(store: GraphStore, target: NodeId, index: RepositoryIndex | None = None) -> Target:
    """The target object, or a new one in an indexed file; ``ObjectNotFound`` otherwise."""
    found = (index.by_id.get(target) if index is not None else None) or store.get_objects([target]).get(target)
    if found is not None:
        if found.kind not in DEFINITION_KINDS:
            raise InputError(f"target {target!r} is a {found.kind}, not a function, method or class")
        return Target(found.id, found.repo, found.path, found.qualname, found.kind, found.language)
    head, sep, qualname = target.rpartition(":")
    file_obj = store.get_objects([head]).get(head) if sep else None
    if file_obj is None or file_obj.kind != "file" or not qualname:
        raise ObjectNotFound(f"no object {target!r} in the store, and {head or target!r} is not an indexed file")
    kind = "method" if "." in qualname.split("(", 1)[0] else "function"
    return Target(target, file_obj.repo, file_obj.path, qualname, kind, file_obj.language)
