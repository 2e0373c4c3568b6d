"""The values every stage shares: code objects, edges, unresolved references,
views, and the record of an allocation (which ``allocate`` makes and a Neo4j
store keeps as provenance).

A node id is stable across re-indexing of unchanged code, unique within a store
(the repository name prefixes it), and readable in the Neo4j Browser:

    repository   requests
    module       requests:src/requests/            (a package directory, trailing slash)
    file         requests:src/requests/api.py
    object       requests:src/requests/api.py:Session.request
    overload     commons-csv:src/main/java/.../CSVFormat.java:CSVFormat.print(Object,Appendable,boolean)
    section      requests:docs/user/install.rst:installation/get-the-source-code   (heading slugs)

A second definition of the same qualified name in one file (``if``/``else``
branches) gets a ``#2`` suffix, in source order.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

SCHEMA_VERSION = 1

NodeKind = Literal[
    "repository", "module", "file", "class", "interface", "enum", "function", "method", "test", "section"
]
EdgeKind = Literal["CONTAINS", "IMPORTS", "CALLS", "INHERITS", "TESTS", "REFERENCES"]

NODE_KINDS: tuple[str, ...] = (
    "repository", "module", "file", "class", "interface", "enum", "function", "method", "test", "section",
)
EDGE_KINDS: tuple[str, ...] = ("CONTAINS", "IMPORTS", "CALLS", "INHERITS", "TESTS", "REFERENCES")
#: kinds that are definitions: spans of lines inside a file (not containers such as
#: files and modules); a ``section`` is one of a document (``ingest.text``)
DEFINITION_KINDS: frozenset[str] = frozenset(
    {"class", "interface", "enum", "function", "method", "test", "section"}
)
TYPE_KINDS: frozenset[str] = frozenset({"class", "interface", "enum"})

NodeId = str


def normalize_newlines(text: str) -> str:
    """``\\r\\n`` and a lone ``\\r`` as ``\\n``: the one line break every parser counts."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def split_lines(text: str) -> list[str]:
    """The lines of source ``text``, split at ``\\n`` only, as tree-sitter counts them.

    ``str.splitlines`` also breaks at U+2028, U+0085, form feeds and other
    characters that are inside a line for the parsers, and would shift every
    later line number. Like ``splitlines``, a final line break ends the last line.
    """
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def repository_id(repo: str) -> NodeId:
    return repo


def module_id(repo: str, directory: str) -> NodeId:
    """A package directory; ``directory`` is repo-relative, posix, without trailing slash."""
    return f"{repo}:{directory.rstrip('/')}/"


def file_id(repo: str, path: str) -> NodeId:
    return f"{repo}:{path}"


def object_id(repo: str, path: str, qualname: str) -> NodeId:
    return f"{repo}:{path}:{qualname}"


@dataclass(frozen=True, slots=True)
class CodeObject:
    """One canonical code object: a node of the code graph.

    Lines are 1-based and inclusive. ``path`` is repo-relative and posix; it is
    empty for the repository node and ends with ``/`` for a module (package).
    """

    id: NodeId
    kind: str
    name: str
    qualname: str
    repo: str
    path: str
    language: str = ""
    start_line: int = 0
    end_line: int = 0
    signature: str = ""
    docstring: str = ""
    content_hash: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "name": self.name, "qualname": self.qualname,
                "repo": self.repo, "path": self.path, "language": self.language,
                "start_line": self.start_line, "end_line": self.end_line, "signature": self.signature,
                "docstring": self.docstring, "content_hash": self.content_hash}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CodeObject:
        return cls(**{k: data[k] for k in _OBJECT_FIELDS if k in data})

    def __reduce__(self) -> tuple[Any, ...]:
        # the fields in order: pickled and unpickled (parse workers send objects) about
        # a third faster than the default state of a frozen slots dataclass
        return (CodeObject, (self.id, self.kind, self.name, self.qualname, self.repo, self.path, self.language,
                             self.start_line, self.end_line, self.signature, self.docstring, self.content_hash))


_OBJECT_FIELDS: tuple[str, ...] = tuple(CodeObject.__dataclass_fields__)


@dataclass(frozen=True, slots=True)
class Edge:
    """A directed relation between two objects. ``lines`` are the 1-based lines of
    the source file where the relation is written (call sites, import lines)."""

    source: NodeId
    target: NodeId
    kind: str
    lines: tuple[int, ...] = field(default=())

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.source, self.target, self.kind)

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "target": self.target, "kind": self.kind,
                "lines": list(self.lines)}

    def row(self) -> tuple[str, str, str, tuple[int, ...]]:
        """(source, target, kind, lines): the compact form files and pipes carry."""
        return (self.source, self.target, self.kind, self.lines)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Edge:
        return cls(data["source"], data["target"], data["kind"], tuple(data.get("lines") or ()))


@dataclass(frozen=True, slots=True)
class UnresolvedRef:
    """A reference the resolver could not tie to one object, kept instead of guessed.

    ``kind`` is the edge kind it would have made; ``reason`` says why it stayed
    open (``unknown-name``, ``dynamic-receiver``, ``ambiguous-overload``,
    ``missing-module``, ...).
    """

    source: NodeId
    kind: str
    name: str
    line: int
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "kind": self.kind, "name": self.name, "line": self.line,
                "reason": self.reason}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> UnresolvedRef:
        return cls(data["source"], data["kind"], data["name"], int(data["line"]), data["reason"])

    def row(self) -> tuple[str, str, str, int, str]:
        """(source, kind, name, line, reason): the compact form files and pipes carry."""
        return (self.source, self.kind, self.name, self.line, self.reason)

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> UnresolvedRef:
        source, kind, name, line, reason = row
        return cls(source, kind, name, int(line), reason)

    @property
    def key(self) -> tuple[str, str, str, int]:
        return (self.source, self.kind, self.name, self.line)


def merge_edges(edges: list[Edge]) -> list[Edge]:
    """One edge per (source, target, kind) with the union of their lines, sorted;
    in the order each first appears. An edge that occurs once is kept as it is."""
    first: dict[tuple[str, str, str], Edge] = {}
    extra: dict[tuple[str, str, str], list[int]] = {}
    for e in edges:
        key = (e.source, e.target, e.kind)
        seen = first.get(key)
        if seen is None:
            first[key] = e
        elif key in extra:
            extra[key].extend(e.lines)
        else:
            extra[key] = [*seen.lines, *e.lines]
    out = []
    for key, e in first.items():
        lines = extra.get(key)
        if lines is None and len(e.lines) > 1 and any(a >= b for a, b in zip(e.lines, e.lines[1:])):
            lines = list(e.lines)
        out.append(e if lines is None else Edge(key[0], key[1], key[2], tuple(sorted(set(lines)))))
    return out


VIEW_KINDS: tuple[str, ...] = ("body", "slice", "signature", "docstring", "call_site", "test", "window", "text")


@dataclass(frozen=True, slots=True)
class View:
    """One rendering of a code object that a retriever can return.

    ``object_id`` is the provenance: the node id of the object the view belongs
    to. External candidates that only know a path and an identifier leave it
    empty and set ``identifier``; the provenance adapter then keys them by
    (normalised path, casefolded identifier).
    """

    id: str
    object_id: NodeId
    kind: str
    path: str
    start_line: int
    end_line: int
    text: str
    content_hash: str = ""
    identifier: str = ""
    repo: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> View:
        if data.keys() == _VIEW_FIELD_SET:  # as saved: no copy
            return cls(**data)
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


_VIEW_FIELD_SET = frozenset(View.__dataclass_fields__)


@dataclass(frozen=True, slots=True)
class ScoredView:
    """A view ranked for one query: its score and, per retriever, its rank there."""

    view: View
    score: float
    retrievers: tuple[tuple[str, int], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"view": self.view.to_dict(), "score": self.score,
                "retrievers": {name: rank for name, rank in self.retrievers}}


# -- the allocation record ----------------------------------------------------------
# Why every candidate view and every slot ended as it did. Plain data,
# JSON-serialisable and deterministic: the same query, candidates, policy and
# parameters give an equal record (and equal JSON), so records can be diffed,
# stored next to evaluation runs, shown by ``explain`` and written to Neo4j.

ViewStatus = Literal["representative", "merged", "dropped"]
Role = Literal["core", "companion", "fill", "outline", "view"]


@dataclass(frozen=True, slots=True)
class ViewDecision:
    """What happened to one candidate view.

    ``representative``: it holds a slot for its object (or, under view-level
    policies, for itself). ``merged``: it shares an object (or, for exact dedup,
    its text) with ``merged_into``, the view that represents it. ``dropped``: it
    represents an object that got no slot."""

    view_id: str
    rank: int
    score: float
    object_key: str
    status: ViewStatus
    reason: str
    merged_into: str | None = None
    slot: int | None = None


@dataclass(frozen=True, slots=True)
class SlotRecord:
    """One selected object (or view) and the tokens it got.

    ``d``: tokens of its unclipped rendering. ``b``: its token share (Eq. 4
    under token authority; under the controls, the allowance min(b_obj, budget
    left)). ``tokens``: what its rendering used (<= b). ``spans``: source lines
    shown, inclusive, in file line numbers."""

    slot: int
    key: str
    object_key: str
    role: Role
    score: float
    view_id: str
    path: str
    identifier: str
    d: int
    b: int
    tokens: int
    clipped: bool
    spans: tuple[tuple[int, int], ...]
    reason: str

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["spans"] = [list(s) for s in self.spans]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SlotRecord:
        values = {k: data[k] for k in cls.__dataclass_fields__}
        values["spans"] = tuple((int(a), int(b)) for a, b in data["spans"])
        return cls(**values)


@dataclass(frozen=True, slots=True)
class AllocationRecord:
    policy: str
    params: dict[str, Any]
    query: str
    query_tokens: tuple[str, ...]
    views: tuple[ViewDecision, ...]
    slots: tuple[SlotRecord, ...]
    tokens: int

    @property
    def objects(self) -> tuple[str, ...]:
        """Object keys in allocation order (Auth@K counts the distinct ones)."""
        return tuple(s.object_key for s in self.slots)

    def slot_of(self, object_key: str) -> SlotRecord | None:
        return next((s for s in self.slots if s.object_key == object_key), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "policy": self.policy,
            "params": dict(sorted(self.params.items())),
            "query": self.query,
            "query_tokens": list(self.query_tokens),
            "views": [asdict(v) for v in self.views],
            "slots": [s.to_dict() for s in self.slots],
            "tokens": self.tokens,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AllocationRecord:
        return cls(
            policy=data["policy"],
            params=dict(data["params"]),
            query=data["query"],
            query_tokens=tuple(data["query_tokens"]),
            views=tuple(ViewDecision(**v) for v in data["views"]),
            slots=tuple(SlotRecord.from_dict(s) for s in data["slots"]),
            tokens=int(data["tokens"]),
        )

    def to_json(self, *, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)
