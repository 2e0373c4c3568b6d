"""Write a repository's new graph into a store with the fewest changes.

A re-index computes the whole graph of the repository (only changed files are
parsed again, everything is resolved again, so edges into changed files are
right), then this module compares it with what the store holds and applies the
difference: removed objects, edges and unresolved references are deleted,
new or changed ones upserted, and only the sources of changed files rewritten.
The store then exports exactly what a clean rebuild would.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from vitalrag.graph.store import GraphStore
from vitalrag.model import CodeObject, Edge, UnresolvedRef


@dataclass(frozen=True, slots=True)
class Delta:
    objects_added: int = 0
    objects_changed: int = 0
    objects_removed: int = 0
    edges_added: int = 0
    edges_removed: int = 0
    sources_written: int = 0

    def to_dict(self) -> dict[str, int]:
        return {f: getattr(self, f) for f in self.__dataclass_fields__}


def write_repository(store: GraphStore, repo: str, objects: Sequence[CodeObject], edges: Sequence[Edge],
                     unresolved: Sequence[UnresolvedRef], sources: Mapping[str, str],
                     meta: Mapping[str, Any]) -> Delta:
    """Make the store hold exactly this graph for ``repo``, writing only what changed
    (in one ``writing`` block: a server store's readers see the old graph or this one)."""
    with store.writing([repo]):
        return _write_delta(store, repo, objects, edges, unresolved, sources, meta)


def _write_delta(store: GraphStore, repo: str, objects: Sequence[CodeObject], edges: Sequence[Edge],
                 unresolved: Sequence[UnresolvedRef], sources: Mapping[str, str],
                 meta: Mapping[str, Any]) -> Delta:
    if repo not in store.repositories():
        store.delete_repository(repo)  # leftovers of an interrupted first index
        store.upsert_objects(objects, fresh=True)
        store.upsert_edges(edges, fresh=True)
        store.upsert_unresolved(unresolved, fresh=True)
        store.put_sources(sources)
        store.set_meta(repo, meta)
        return Delta(objects_added=len(objects), edges_added=len(edges), sources_written=len(sources))

    old = store.held(repo)
    new_objects = {o.id: o for o in objects}
    removed = [i for i in old.objects if i not in new_objects]
    added = [o for i, o in new_objects.items() if i not in old.objects]
    changed = [o for i, o in new_objects.items() if i in old.objects and o != old.objects[i]]

    new_edges = {e.key: e for e in edges}
    gone_edges = [k for k in old.edges if k not in new_edges]
    put_edges = [e for k, e in new_edges.items() if old.edges.get(k) != e.lines]

    new_refs = {u.key: u for u in unresolved}
    gone_refs = [k for k in old.unresolved if k not in new_refs]
    put_refs = [u for k, u in new_refs.items() if old.unresolved.get(k) != u.reason]

    # sources of files that are new or whose content changed
    changed_files = {o.id for o in added + changed if o.kind == "file"}
    new_sources = {fid: text for fid, text in sources.items() if fid in changed_files}

    # deletions first (removing an object removes its edges), then writes
    gone_files = sorted(old.objects[i].path for i in removed if old.objects[i].kind == "file")
    in_gone = set(gone_files)
    store.delete_edges(gone_edges)
    store.delete_unresolved(gone_refs)
    store.delete_files(repo, gone_files)
    store.delete_objects([i for i in removed if old.objects[i].path not in in_gone])
    store.upsert_objects(added + changed)
    store.upsert_edges(put_edges)
    store.upsert_unresolved(put_refs)
    store.put_sources(new_sources)
    store.set_meta(repo, meta)
    return Delta(objects_added=len(added), objects_changed=len(changed), objects_removed=len(removed),
                 edges_added=len(put_edges), edges_removed=len(gone_edges), sources_written=len(new_sources))
