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
from vitalrag.kernel.text import identifiers

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
        for a, ends in store.adjacent(list(frontier), kinds=WALK_EDGES, direction="both").items():
            s = frontier[a] * config.decay
            for b in ends:
                if s > scores.get(b, 0.0) and s > nxt.get(b, 0.0):
                    nxt[b] = s
        if config.same_file:
            for p, s in _same_file_scores(store, frontier, config.decay).items():
                if s > scores.get(p, 0.0) and s > nxt.get(p, 0.0):
                    nxt[p] = s
        scores.update(nxt)
        frontier = nxt
    return scores


def _same_file_scores(store: GraphStore, frontier: Mapping[str, float], decay: float) -> dict[str, float]:
    """Each same-file neighbour's best score through a frontier object of its file.

    A file's definitions each get the best frontier score of the file times
    ``decay``, except the object holding that best score, which gets the second
    best (an object is not its own neighbour). Grouping by file keeps this linear
    in the file's size, where scoring every (frontier object, peer) pair is not.
    """
    # file -> [best score, its object, that object's peers, second-best score]; a file
    # is known by its smallest definition id (every definition lies in one file)
    best: dict[str, list] = {}
    for node, peers in store.same_file(list(frontier)).items():
        if not peers:
            continue
        s = frontier[node] * decay
        key = min(min(peers), node)
        cur = best.get(key)
        if cur is None:
            best[key] = [s, node, peers, 0.0]
        elif s > cur[0]:
            cur[3] = cur[0]
            cur[0], cur[1], cur[2] = s, node, peers
        elif s > cur[3]:
            cur[3] = s
    out: dict[str, float] = {}
    for s1, top, peers, s2 in best.values():
        for p in peers:
            out[p] = s1
        if s2 > 0.0:
            out[top] = s2
    return out
