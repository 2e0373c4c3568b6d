"""The four typed, directional witness families of paper section 5.5.

Each family reads one code-visible feature of both programs and says which
side it favours (+1 the alternative, -1 the default, 0 neither) and whether the
feature differs at all:

- syntax repair: one program parses cleanly (no ERROR/MISSING node) and the
  other does not;
- interface consistency: fewer calls that do not fit the repository object
  they name (unknown name or member, arity, keyword names);
- suspicious names: fewer names that resolve to nothing (bare names in scope,
  ``self.x`` / ``Cls.x`` / ``mod.x`` members in the repository);
- validity-guarded compactness: both programs parse, one is shorter (fewer
  tokens without more non-blank lines, or fewer lines without more tokens), and
  no other family favours the other side.
"""

from __future__ import annotations

from typing import Protocol

from vitalrag.transfer.programs import Program
from vitalrag.transfer.witness_types import CallCheck, NameIssue, Witness


class Scope(Protocol):
    language: str

    def check_calls(self, program: Program) -> list[CallCheck]: ...

    def suspicious_names(self, program: Program) -> list[NameIssue]: ...


def _sign(default_cost: int, alternative_cost: int) -> int:
    """+1 when the alternative costs less, -1 when the default does."""
    return (alternative_cost < default_cost) - (alternative_cost > default_cost)


def syntax_witness(default: Program, alternative: Program) -> Witness:
    direction = _sign(int(not default.valid), int(not alternative.valid))
    summary = {1: "the alternative parses and the default does not",
               -1: "the default parses and the alternative does not"}.get(
        direction, "both parse" if default.valid else "neither parses")
    return Witness("syntax", direction, direction != 0, summary, {
        "default": {"valid": default.valid, "error_lines": list(default.error_lines)},
        "alternative": {"valid": alternative.valid, "error_lines": list(alternative.error_lines)},
    })


def interface_witness(default: list[CallCheck], alternative: list[CallCheck]) -> Witness:
    bad_d = sum(not c.fits for c in default)
    bad_a = sum(not c.fits for c in alternative)
    direction = _sign(bad_d, bad_a)
    summary = (f"calls that do not fit their repository object: default {bad_d} of {len(default)}, "
               f"alternative {bad_a} of {len(alternative)}")
    return Witness("interface", direction, bad_d != bad_a, summary, {
        "default": {"checked": len(default), "unfit": bad_d, "calls": [c.to_dict() for c in default]},
        "alternative": {"checked": len(alternative), "unfit": bad_a,
                        "calls": [c.to_dict() for c in alternative]},
    })


def names_witness(default: list[NameIssue], alternative: list[NameIssue]) -> Witness:
    direction = _sign(len(default), len(alternative))
    shown = lambda issues: ", ".join(i.name for i in issues) or "none"  # noqa: E731
    summary = f"unresolved names: default {shown(default)}; alternative {shown(alternative)}"
    return Witness("names", direction, len(default) != len(alternative), summary, {
        "default": [i.to_dict() for i in default],
        "alternative": [i.to_dict() for i in alternative],
    })


def compactness_witness(default: Program, alternative: Program, others: list[Witness]) -> Witness:
    sizes = {"default": {"tokens": default.tokens, "lines": default.lines},
             "alternative": {"tokens": alternative.tokens, "lines": alternative.lines}}
    if not (default.valid and alternative.valid):
        return Witness("compactness", 0, False, "guarded: both programs must parse", sizes)
    dt, dl, at, al = default.tokens, default.lines, alternative.tokens, alternative.lines
    if (at < dt and al <= dl) or (al < dl and at <= dt):
        direction = 1
    elif (dt < at and dl <= al) or (dl < al and dt <= at):
        direction = -1
    else:
        direction = 0
    differs = (dt, dl) != (at, al)
    against = [w.family for w in others if direction and w.direction == -direction]
    if against:
        side = "alternative" if direction == 1 else "default"
        return Witness("compactness", 0, differs,
                       f"guarded: the {side} is shorter but {', '.join(against)} favours the other side",
                       sizes | {"blocked_by": against})
    summary = {1: "the alternative is shorter", -1: "the default is shorter"}.get(
        direction, "neither is shorter on both tokens and lines")
    return Witness("compactness", direction, differs,
                   f"{summary} ({at} vs {dt} tokens, {al} vs {dl} lines)", sizes)


def witnesses(default: Program, alternative: Program, scope: Scope) -> tuple[Witness, ...]:
    """All four families, compactness last (its guard reads the others)."""
    typed = [
        syntax_witness(default, alternative),
        interface_witness(scope.check_calls(default), scope.check_calls(alternative)),
        names_witness(scope.suspicious_names(default), scope.suspicious_names(alternative)),
    ]
    typed.append(compactness_witness(default, alternative, typed))
    return tuple(typed)
