"""``AllocationRecord``: why every candidate view and every slot ended as it did.

The record is plain data, JSON-serialisable and deterministic: the same query,
candidates, policy and parameters give an equal record (and equal JSON), so
records can be diffed, stored next to evaluation runs and shown by ``explain``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any, Literal

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
