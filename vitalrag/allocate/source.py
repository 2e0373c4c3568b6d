"""Where the allocator gets an object's text: ``ObjectSource`` and its implementations.

The allocator renders objects, not views: a selected function is shown from
its own source lines even when the view that won it a slot was a call site.
An ``ObjectSource`` answers, per object key, the path, identifier, signature and
the object's full source lines with their line numbers, and (where it knows the
code graph) which definitions share a file with an object.

- ``GraphObjectSource`` reads objects and file texts from a ``GraphStore``;
- ``ViewObjectSource`` builds objects from the candidate views themselves, for
  external candidates that carry only a path and an identifier;
- ``MappingObjectSource`` holds ready objects in memory (tests, callers that
  already have the text).

The two stored sources fall back to the views for keys they do not hold.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from vitalrag.allocate.provenance import (
    ObjectKey,
    normalise_path,
    object_file,
    object_identifier,
)
from vitalrag.graph.store import GraphStore, Span
from vitalrag.model import DEFINITION_KINDS, CodeObject, View, file_id, split_lines

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ObjectText:
    """One object's source as the renderer sees it.

    ``lines`` carry no line terminators; ``lines[0]`` is line ``start_line`` of
    ``path``. ``file`` is ``repo:path``, the unit of "same file". ``verbatim`` is
    False for text that is not the file's lines as written (a signature with its
    whitespace collapsed, a docstring): its renderings claim no source span."""

    key: ObjectKey
    path: str
    identifier: str
    signature: str
    start_line: int
    lines: tuple[str, ...]
    file: str = ""
    verbatim: bool = True
    #: the object's kind in the graph (``method``, ``test``, ...); "" when unknown
    kind: str = ""
    #: the definitions directly inside this one, as (start_line, end_line, key), in source order
    children: tuple[tuple[int, int, ObjectKey], ...] = ()

    @property
    def end_line(self) -> int:
        return self.start_line + max(len(self.lines), 1) - 1

    @classmethod
    def from_text(cls, key: ObjectKey, path: str, identifier: str, text: str, *,
                  start_line: int = 1, signature: str = "", repo: str = "") -> ObjectText:
        return cls(key, path, identifier, signature, start_line, tuple(split_lines(text)),
                   f"{repo}:{normalise_path(path)}")


@runtime_checkable
class ObjectSource(Protocol):
    def objects(self, keys: Sequence[ObjectKey],
                views: Mapping[ObjectKey, Sequence[View]]) -> dict[ObjectKey, ObjectText]:
        """The text of each object in ``keys``; ``views`` are each object's
        candidate views, strongest first, for sources that build from them."""

    def same_file(self, keys: Sequence[ObjectKey]) -> dict[ObjectKey, frozenset[ObjectKey]]:
        """For the keys this source knows the file of, the other definitions in
        that file. Keys it does not know are left out; the allocator then
        compares paths."""


def first_signature(lines: Sequence[str]) -> str:
    """The first non-blank line, stripped: a signature when nothing better is known."""
    return next((line.strip() for line in lines if line.strip()), "")


class ViewObjectSource:
    """Objects built from their views: the widest view (most lines, strongest
    first on ties) is the object's text, a ``signature`` view its signature."""

    def objects(self, keys: Sequence[ObjectKey],
                views: Mapping[ObjectKey, Sequence[View]]) -> dict[ObjectKey, ObjectText]:
        out: dict[ObjectKey, ObjectText] = {}
        for key in keys:
            vs = views.get(key) or ()
            if not vs:
                continue
            widest = max(vs, key=lambda v: len(split_lines(v.text)))  # max keeps the first on ties
            lines = tuple(split_lines(widest.text))
            sig_view = next((v for v in vs if v.kind == "signature"), None)
            signature = first_signature(split_lines(sig_view.text)) if sig_view else first_signature(lines)
            out[key] = ObjectText(key, widest.path, object_identifier(widest), signature,
                                  widest.start_line or 1, lines, object_file(widest))
        return out

    def same_file(self, keys: Sequence[ObjectKey]) -> dict[ObjectKey, frozenset[ObjectKey]]:
        return {}


class MappingObjectSource:
    """Objects held in memory, with optional same-file peers; views fill the rest."""

    def __init__(self, objects: Mapping[ObjectKey, ObjectText],
                 peers: Mapping[ObjectKey, Collection[ObjectKey]] | None = None) -> None:
        self._objects = dict(objects)
        self._peers = {k: frozenset(v) for k, v in (peers or {}).items()}
        self._fallback = ViewObjectSource()

    def objects(self, keys: Sequence[ObjectKey],
                views: Mapping[ObjectKey, Sequence[View]]) -> dict[ObjectKey, ObjectText]:
        out = {k: self._objects[k] for k in keys if k in self._objects}
        missing = [k for k in keys if k not in out]
        if missing:
            out.update(self._fallback.objects(missing, views))
        return out

    def same_file(self, keys: Sequence[ObjectKey]) -> dict[ObjectKey, frozenset[ObjectKey]]:
        return {k: self._peers[k] for k in keys if k in self._peers}


class GraphObjectSource:
    """Objects and file texts from a ``GraphStore``; same-file peers from
    ``store.same_file``. Keys the store lacks (external candidates, objects of
    a stale index) are built from their views."""

    def __init__(self, store: GraphStore) -> None:
        self.store = store
        self._fallback = ViewObjectSource()

    def objects(self, keys: Sequence[ObjectKey],
                views: Mapping[ObjectKey, Sequence[View]]) -> dict[ObjectKey, ObjectText]:
        found = {k: o for k, o in self.store.get_objects(keys).items() if o.start_line >= 1}
        # every file's text and definitions in two reads (a server store: two round trips)
        fids = list(dict.fromkeys(file_id(o.repo, o.path) for o in found.values()))
        files = {fid: split_lines(text) for fid, text in self.store.sources(fids).items()}
        defs = {fid: [s for s in spans if s.kind in DEFINITION_KINDS and s.start_line >= 1]
                for fid, spans in self.store.file_spans([f for f in fids if f in files]).items()}
        out: dict[ObjectKey, ObjectText] = {}
        for key in keys:
            obj = found.get(key)
            if obj is None:
                continue
            fid = file_id(obj.repo, obj.path)
            file_lines = files.get(fid)
            if file_lines is None:
                log.debug("no source for %s in the store; rendering %s from its views", fid, key)
                continue
            lines = tuple(file_lines[obj.start_line - 1:max(obj.end_line, obj.start_line)])
            signature = obj.signature or first_signature(lines)
            out[key] = ObjectText(key, obj.path, obj.qualname or obj.name, signature,
                                  obj.start_line, lines, f"{obj.repo}:{normalise_path(obj.path)}",
                                  kind=obj.kind, children=_children(obj, defs.get(fid, [])))
        missing = [k for k in keys if k not in out]
        if missing:
            out.update(self._fallback.objects(missing, views))
        return out

    def same_file(self, keys: Sequence[ObjectKey]) -> dict[ObjectKey, frozenset[ObjectKey]]:
        return {k: frozenset(peers) for k, peers in self.store.same_file(keys).items()}


def _children(obj: CodeObject, defs: Sequence[Span]) -> tuple[tuple[int, int, ObjectKey], ...]:
    """The definitions directly inside ``obj`` (inside it, and inside no other
    definition that is inside it), in source order; ``defs``: the file's, as
    ``file_spans`` gives them."""
    inner = [(d.start_line, d.end_line, d.id) for d in defs
             if d.id != obj.id and obj.start_line <= d.start_line and d.end_line <= obj.end_line
             and (d.start_line, d.end_line) != (obj.start_line, obj.end_line)]
    inner.sort(key=lambda d: (d[0], -d[1]))
    out: list[tuple[int, int, ObjectKey]] = []
    for start, end, oid in inner:
        if out and end <= out[-1][1]:
            continue  # nested in the previous child
        out.append((start, end, oid))
    return tuple(out)
