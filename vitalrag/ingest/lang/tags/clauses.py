"""One object for a function written as several clauses (Elixir's
``def f(0)`` / ``def f(n)``, Haskell's equations): the extractor makes one
object per clause, the later ones with ``#2``, ``#3`` ids; ``merge_clauses``
folds each run of adjacent clauses of one name into the first, which then spans
them all, and gives it their references."""

from __future__ import annotations

from dataclasses import replace

from vitalrag.ingest.facts import FileFacts
from vitalrag.kernel.text import content_hash
from vitalrag.model import CodeObject


def merge_clauses(facts: FileFacts, lines: list[str], kinds: frozenset[str]) -> None:
    """Fold ``X#k`` objects of ``kinds`` that directly follow a clause of ``X``
    (same container, no other object between) into it."""
    kept: list[CodeObject] = []
    into: dict[str, str] = {}  # folded id -> the id it was folded into
    for o in facts.objects:
        base = o.id.split("#", 1)[0]
        prev = kept[-1] if kept else None
        if (prev is not None and o.kind in kinds and prev.kind == o.kind and "#" in o.id
                and prev.id == base and facts.parents.get(o.id) == facts.parents.get(prev.id)):
            last = max(prev.end_line, o.end_line)
            kept[-1] = replace(prev, end_line=last,
                               content_hash=content_hash("\n".join(lines[prev.start_line - 1:last])))
            into[o.id] = prev.id
            continue
        kept.append(o)
    if not into:
        return
    facts.objects = kept
    for folded in into:
        facts.parents.pop(folded, None)
    for child, parent in list(facts.parents.items()):
        if parent in into:
            facts.parents[child] = into[parent]
    for ref in facts.refs:
        if ref.source in into:
            ref.source = into[ref.source]
