"""The transfer gate (paper Eq. 6) and the ablations of Table 6(d).

``full``: the alternative wins only when at least one typed witness strictly
favours it and none favours the default; otherwise the default stays
(abstention: no evidence, a tie, or conflicting evidence all keep it).

The ablations keep both programs and all witnesses and change only the rule:

``no-abstention``  the default branch is removed: the alternative is chosen
                   unless the witnesses favouring the default outnumber those
                   favouring it (no evidence, ties and balanced conflicts all go
                   to the alternative).
``no-veto``        the alternative is chosen when any witness favours it;
                   witnesses against it are ignored (abstention kept for the
                   no-evidence case only).
``no-direction``   families fire on "differs" without saying which side is
                   better: transfer whenever any family's feature differs
                   between the two programs.
``no-types``       the families are collapsed into one untyped score, the count
                   of flagged items in a program (parse-error lines + calls that
                   do not fit + unresolved names); transfer when the
                   alternative's count is lower, or equal and its token count
                   is lower. No family can veto, and compactness loses its
                   validity guard.
"""

from __future__ import annotations

from vitalrag.errors import InputError
from vitalrag.transfer.programs import parse_program
from vitalrag.transfer.witness_types import Decision, Witness
from vitalrag.transfer.witnesses import Scope, witnesses

GATES: tuple[str, ...] = ("full", "no-abstention", "no-veto", "no-direction", "no-types")


def _flagged(w: dict[str, Witness], side: str) -> int:
    syntax = w["syntax"].evidence[side]
    return (len(syntax["error_lines"]) + w["interface"].evidence[side]["unfit"]
            + len(w["names"].evidence[side]))


def rule(gate: str, found: tuple[Witness, ...]) -> tuple[bool, str]:
    """Whether ``gate`` transfers on these witnesses, and why."""
    pro = [w.family for w in found if w.direction > 0]
    con = [w.family for w in found if w.direction < 0]
    if gate == "full":
        if pro and not con:
            return True, "favoured by " + ", ".join(pro)
        if pro:
            return False, f"abstain: {', '.join(pro)} for, {', '.join(con)} against"
        return False, "abstain: no witness favours the alternative" + (
            f" (the default is favoured by {', '.join(con)})" if con else "")
    if gate == "no-abstention":
        ok = len(pro) >= len(con)
        return ok, f"{len(pro)} for, {len(con)} against"
    if gate == "no-veto":
        return bool(pro), ("favoured by " + ", ".join(pro)) if pro else "no witness favours the alternative"
    if gate == "no-direction":
        differ = [w.family for w in found if w.differs]
        return bool(differ), ("differs in " + ", ".join(differ)) if differ else "no family sees a difference"
    if gate == "no-types":
        by = {w.family: w for w in found}
        d, a = _flagged(by, "default"), _flagged(by, "alternative")
        tokens = by["compactness"].evidence
        shorter = tokens["alternative"]["tokens"] < tokens["default"]["tokens"]
        return (a < d or (a == d and shorter)), f"flagged items: default {d}, alternative {a}"
    raise InputError(f"unknown gate {gate!r}; choose from {', '.join(GATES)}")


def decide(default: str, alternative: str, scope: Scope, *, gate: str = "full", task: str = "",
           target: str = "") -> Decision:
    """Choose between two programs for one target (paper Eq. 6)."""
    if gate not in GATES:
        raise InputError(f"unknown gate {gate!r}; choose from {', '.join(GATES)}")
    d = parse_program(default, scope.language)
    a = parse_program(alternative, scope.language)
    found = witnesses(d, a, scope)
    return decide_on(found, default, alternative, gate=gate, task=task, target=target)


def decide_on(found: tuple[Witness, ...], default: str, alternative: str, *, gate: str = "full",
              task: str = "", target: str = "") -> Decision:
    """The decision of ``gate`` on witnesses already computed (the bench reuses them)."""
    transfer, reason = rule(gate, found)
    return Decision("alternative" if transfer else "default", alternative if transfer else default,
                    gate, reason, found, target=target, task=task)

