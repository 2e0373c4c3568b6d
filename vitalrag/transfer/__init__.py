"""Optional program-semantic transfer (paper section 5.5, Eq. 6).

Given a default program and an alternative for one target object, keep the
default unless a typed, directional witness shows the alternative is better
and none shows it is worse. It never changes the allocated context.

    index = RepositoryIndex(store, "requests")
    scope = load_scope(index, "requests:src/requests/sessions.py:Session.send")
    decision = decide(default_code, alternative_code, scope)
    decision.chosen, [w.to_dict() for w in decision.witnesses]
"""

from __future__ import annotations

from vitalrag.errors import InputError
from vitalrag.model import NodeId
from vitalrag.transfer.gate import GATES, decide, decide_on, rule
from vitalrag.transfer.javascope import JavaScope
from vitalrag.transfer.pyscope import PythonScope
from vitalrag.transfer.repository import RepositoryIndex, Target, resolve_target
from vitalrag.transfer.witness_types import FAMILIES, CallCheck, Decision, NameIssue, Witness
from vitalrag.transfer.witnesses import Scope, witnesses

__all__ = [
    "FAMILIES", "GATES", "CallCheck", "Decision", "JavaScope", "NameIssue", "PythonScope",
    "RepositoryIndex", "Scope", "Target", "Witness", "decide", "decide_on", "load_scope",
    "resolve_target", "rule", "witnesses",
]


def load_scope(index: RepositoryIndex, target: NodeId) -> PythonScope | JavaScope:
    """The scope of ``target`` (an object id, or ``repo:path:qualname`` of a new
    object in an indexed file) in an indexed repository."""
    resolved = resolve_target(index.store, target, index)
    if resolved.repo != index.repo:
        raise InputError(f"target {target!r} is in repository {resolved.repo!r}, not {index.repo!r}")
    if resolved.language == "python":
        return PythonScope(index, resolved)
    if resolved.language == "java":
        return JavaScope(index, resolved)
    raise InputError(f"program transfer supports Python and Java targets; {target!r} is {resolved.language or 'neither'}")
