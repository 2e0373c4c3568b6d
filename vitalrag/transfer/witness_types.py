"""Values a transfer decision is made of: per-program findings, witnesses, the decision."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Family = Literal["syntax", "interface", "names", "compactness"]
FAMILIES: tuple[str, ...] = ("syntax", "interface", "names", "compactness")
Chosen = Literal["default", "alternative"]


@dataclass(frozen=True, slots=True)
class CallCheck:
    """A call to a repository object (or to a name that should be one), and
    whether it fits: ``target`` is the callee's id when it was found."""

    call: str
    line: int
    target: str | None
    fits: bool
    why: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class NameIssue:
    """A name (or ``receiver.member``) that resolves to nothing."""

    name: str
    line: int
    why: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Witness:
    """One family's verdict. ``direction``: +1 favours the alternative, -1 the
    default, 0 neither. ``differs``: the family's feature differs between the
    programs (what the no-direction ablation reads). ``evidence`` is JSON."""

    family: str
    direction: int
    differs: bool
    summary: str
    evidence: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"family": self.family, "direction": self.direction, "differs": self.differs,
                "summary": self.summary, "evidence": self.evidence}


@dataclass(frozen=True, slots=True)
class Decision:
    """The chosen program and the witnesses that decided it."""

    chosen: Chosen
    program: str
    gate: str
    reason: str
    witnesses: tuple[Witness, ...]
    target: str = ""
    task: str = ""

    @property
    def transferred(self) -> bool:
        return self.chosen == "alternative"

    def to_dict(self) -> dict[str, Any]:
        return {"chosen": self.chosen, "gate": self.gate, "reason": self.reason, "target": self.target,
                "task": self.task, "program": self.program,
                "witnesses": [w.to_dict() for w in self.witnesses]}
