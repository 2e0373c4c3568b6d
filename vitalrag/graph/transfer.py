"""Copy repositories between graph stores (embedded index <-> Neo4j).

A copied repository replaces the one of the same name in the destination, so
copying twice leaves the same graph; readers of the destination see the old copy
or the new one, never a mix (``GraphStore.writing``). Objects of every repository go first and
edges after, so an edge into another repository being copied finds its target.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

from vitalrag.graph.store import GraphStore, known_repositories
from vitalrag.kernel.progress import Progress
from vitalrag.model import CodeObject

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class TransferReport:
    """What one copy moved."""

    source: str
    destination: str
    repos: tuple[str, ...] = ()
    objects: int = 0
    edges: int = 0
    unresolved: int = 0
    sources: int = 0
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "destination": self.destination, "repos": list(self.repos),
                "objects": self.objects, "edges": self.edges, "unresolved": self.unresolved,
                "sources": self.sources, "seconds": round(self.seconds, 3)}


def copy_store(src: GraphStore, dst: GraphStore, repo: str | None = None, *,
               progress: Progress | None = None) -> TransferReport:
    """Copy one repository (or all of ``src``) into ``dst``: objects, edges,
    unresolved references, file sources and metadata. ``dst`` is saved at the end."""
    start = time.perf_counter()
    if repo is not None:
        known_repositories(src, [repo])
    repos = [repo] if repo is not None else src.repositories()
    steps = 2 * len(repos)
    done = 0

    def tick(stage: str) -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(stage, done, steps)

    objects_of: dict[str, list[CodeObject]] = {}
    n_edges = n_unresolved = n_sources = 0
    # one version of every repository copied: a server store's readers see the old
    # copies until the last write, then the new ones (a kill leaves the old ones)
    with dst.writing(repos):
        for r in repos:
            objects_of[r] = src.find_objects(repo=r)
            dst.delete_repository(r)
            dst.upsert_objects(objects_of[r], fresh=True)
            tick("copy objects")

        for r in repos:
            edges = src.find_edges(repo=r)
            dst.upsert_edges(edges, fresh=True)
            n_edges += len(edges)
            if repo is not None:
                refs = src.unresolved(r)
                dst.upsert_unresolved(refs, fresh=True)
                n_unresolved += len(refs)
            sources: dict[str, str] = {}
            for obj in objects_of[r]:
                if obj.kind == "file":
                    text = src.source(obj.id)
                    if text is not None:
                        sources[obj.id] = text
            dst.put_sources(sources)
            n_sources += len(sources)
            meta = src.get_meta(r)
            if meta:
                dst.set_meta(r, meta)
            tick("copy edges and sources")
        if repo is None:
            # every reference, also those whose source object is in no repository
            refs = src.unresolved(None)
            dst.upsert_unresolved(refs)
            n_unresolved = len(refs)
    dst.save()
    report = TransferReport(
        source=src.location, destination=dst.location, repos=tuple(repos),
        objects=sum(len(v) for v in objects_of.values()), edges=n_edges, unresolved=n_unresolved,
        sources=n_sources, seconds=time.perf_counter() - start,
    )
    log.info("copied %d repositories (%d objects, %d edges) from %s to %s in %.2fs",
             len(repos), report.objects, report.edges, src.location, dst.location, report.seconds)
    return report
