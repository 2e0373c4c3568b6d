"""The graph-walk retriever: from anchors, along the code graph, with decay.

Anchors are the objects the query names (an identifier equal to an object's
name; a name shared by n objects gives each 1/n), the object enclosing
``--file/--line``, and what that file imports. From them the walk follows
IMPORTS, CALLS, INHERITS and TESTS edges (both ways) and same-file neighbours,
up to ``depth`` hops; an object's score is the best anchor weight times
``decay ** hops``. Only ``GraphStore`` methods are used, so it works on every store.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from vitalrag.graph.store import GraphStore
from vitalrag.model import DEFINITION_KINDS, file_id
from vitalrag.retrieve.tokenize import identifiers

WALK_EDGES: tuple[str, ...] = ("IMPORTS", "CALLS", "INHERITS", "TESTS")


@dataclass(frozen=True, slots=True)
class WalkConfig:
    depth: int = 2
    decay: float = 0.5
    same_file: bool = True
    import_weight: float = 0.8
    max_names: int = 25  # a name shared by more objects than this is no anchor


def enclosing_object(store: GraphStore, repo: str, path: str, line: int) -> str | None:
    """The innermost definition in ``path`` that spans ``line``."""
    best = None
    for o in store.find_objects(repo=repo, path=path):
        if o.kind in DEFINITION_KINDS and o.start_line <= line <= o.end_line:
            if best is None or (o.end_line - o.start_line) < (best.end_line - best.start_line):
                best = o
    return best.id if best else None


def anchors(store: GraphStore, query: str, names: Mapping[str, Sequence[str]], *, repo: str | None,
            path: str | None, line: int | None, config: WalkConfig) -> dict[str, float]:
    out: dict[str, float] = {}

    def add(node: str, weight: float) -> None:
        out[node] = max(out.get(node, 0.0), weight)

    for ident in set(identifiers(query)):
        ids = names.get(ident, ())
        if 0 < len(ids) <= config.max_names:
            for node in ids:
                add(node, 1.0 / len(ids))
    if repo and path:
        fid = file_id(repo, path)
        if line is not None:
            inner = enclosing_object(store, repo, path, line)
            if inner:
                add(inner, 1.0)
        for e in store.find_edges(source=fid, kind="IMPORTS"):
            add(e.target, config.import_weight)
    return out


def walk(store: GraphStore, seeds: Mapping[str, float], config: WalkConfig) -> dict[str, float]:
    """Scores of every object reached from the seeds (seeds included)."""
    scores = dict(seeds)
    frontier = dict(seeds)
    for _ in range(config.depth):
        if not frontier:
            break
        nxt: dict[str, float] = {}
        for e in store.edges_of(list(frontier), kinds=WALK_EDGES, direction="both"):
            for a, b in ((e.source, e.target), (e.target, e.source)):
                if a in frontier:
                    s = frontier[a] * config.decay
                    if s > scores.get(b, 0.0) and s > nxt.get(b, 0.0):
                        nxt[b] = s
        if config.same_file:
            for node, peers in store.same_file(list(frontier)).items():
                s = frontier[node] * config.decay
                for p in peers:
                    if s > scores.get(p, 0.0) and s > nxt.get(p, 0.0):
                        nxt[p] = s
        scores.update(nxt)
        frontier = nxt
    return scores
