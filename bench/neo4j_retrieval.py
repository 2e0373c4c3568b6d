"""Retrieval served by Neo4j beside the embedded store: views/s written, warm query latency.

    NEO4J_URI=bolt://127.0.0.1:7687 python bench/neo4j_retrieval.py [PATH] [--views 100000]
        [--queries 100] [--in-flight 8] [--model hashing-384]

PATH (default: this checkout's ``vitalrag`` package) is indexed into an embedded
store and into Neo4j, its views embedded once (``--model``; the hashing embedder
by default, so the bench needs no model and embedding time stays out of it).
Copies of its views under other repository names fill Neo4j up to ``--views``
(views only: no graph, they are there to be searched past). Then:

- write: views and vectors pushed into Neo4j per second (embedding excluded),
  first write and an unchanged re-push (incremental: hashes compared only);
- latency: warm p50/p95 of ``get_context`` (fused retrieval + vital-fill) on the
  real repository, one call at a time on both stores and ``--in-flight`` calls
  at once on Neo4j, with dense (vector index), BM25 (fulltext) and the walk alone
  (each search pinned to one version of each repository, as ``serve`` and the
  command line pin theirs);
  and dense search without ``--repo`` (every repository: the approximate vector
  index above ``server_index.EXACT_VIEWS`` views, exact below), with its top-20 agreement;
  beside each Neo4j row, the CPU each call cost this process and, when the server
  runs here (``scripts/neo4j-local``'s pidfile, or ``--server-pid``), the server:
  with calls in flight on 2 cores, their sum bounds the throughput.

Everything written goes under a repository prefix of its own and is removed at the end.

To compare two trees of vitalrag, pass both the same copy of the package (``git
archive``): the default PATH is the checkout's own code, so a change to it changes
the corpus and the sampled questions too.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import resource
import statistics
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from _common import pct, queries

from vitalrag.context import context_from
from vitalrag.graph.memory import MemoryStore
from vitalrag.graph.neo4j import Neo4jStore
from vitalrag.graph.neo4j_views import Neo4jViews
from vitalrag.ingest import index_repository
from vitalrag.model import CodeObject
from vitalrag.retrieve.api import Retriever
from vitalrag.retrieve.dense import make_embedder
from vitalrag.retrieve.index import RetrievalIndex
from vitalrag.retrieve.query import Query
from vitalrag.retrieve.server_index import ServerViews, push_views
from vitalrag.retrieve.sparse import SparseIndex


def local_server_pid() -> int | None:
    """The pid of the Neo4j that ``scripts/neo4j-local`` runs for this bolt port, if any."""
    port = os.environ.get("NEO4J_URI", "").rsplit(":", 1)[-1]
    home = Path(os.environ.get("NEO4J_LOCAL_DIR") or Path.home() / ".cache/vitalrag/neo4j-local" / port)
    try:
        pid = int((home / "neo4j.pid").read_text().split()[0])
        os.kill(pid, 0)
        return pid
    except (OSError, ValueError, IndexError):
        return None


def cpu_seconds(pid: int | None) -> float:
    """User + system CPU seconds of this process (``pid`` None) or of ``pid``."""
    if pid is None:
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def with_cpu(measure, server_pid):  # noqa: ANN001, ANN202
    """``measure()``'s latencies, and the CPU ms per call it cost here and on the server."""
    here, there = cpu_seconds(None), cpu_seconds(server_pid) if server_pid else 0.0
    xs = measure()
    cost = f"   cpu/call: client {1000 * (cpu_seconds(None) - here) / len(xs):6.1f} ms"
    if server_pid:
        cost += f", Neo4j {1000 * (cpu_seconds(server_pid) - there) / len(xs):6.1f} ms"
    return xs, cost


def timed(fn, qs):  # noqa: ANN001, ANN202
    out = []
    for q in qs:
        t = time.perf_counter()
        fn(q)
        out.append((time.perf_counter() - t) * 1000)
    return out


def in_flight(fn, qs, n):  # noqa: ANN001, ANN202
    def one(q):  # noqa: ANN001, ANN202
        t = time.perf_counter()
        fn(q)
        return (time.perf_counter() - t) * 1000

    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(one, qs))


def one_version(searcher, query, **kwargs):  # noqa: ANN001, ANN003, ANN201
    """A search as ``serve`` and the command line make it: its reads pinned to one
    version of each repository (one read of the versions, not one per read)."""
    with searcher.store.snapshot():
        return searcher.search(query, **kwargs)


def row(name: str, xs: list[float], cost: str = "") -> None:
    print(f"  {name:<40} p50 {statistics.median(xs):8.1f} ms   p95 {pct(xs, 95):8.1f} ms{cost}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("path", nargs="?", default=str(Path(__file__).parents[1] / "vitalrag"))
    ap.add_argument("--views", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--in-flight", type=int, default=8)
    ap.add_argument("--model", default="hashing-384")
    ap.add_argument("--server-pid", type=int, help="the Neo4j server's pid, for its CPU per call "
                    "(default: scripts/neo4j-local's, when it runs here)")
    args = ap.parse_args()
    uri = os.environ.get("NEO4J_URI") or sys.exit("set NEO4J_URI (scripts/neo4j-local start)")
    prefix = f"bench18{uuid.uuid4().hex[:8]}"
    repo = f"{prefix}main"
    embedder = make_embedder(args.model)
    embedder.encode(["warm up"])
    server = Neo4jStore.from_uri(uri)
    views = Neo4jViews(server)
    copies: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        local = MemoryStore(Path(tmp) / "idx")
        try:
            index_repository(args.path, local, name=repo, workers=1)
            index_repository(args.path, server, name=repo, workers=1)
            index, _ = RetrievalIndex.build(local, Path(tmp) / "idx", embedder=embedder)
            n = len(index.views)
            print(f"{args.path}: {n} views, model {index.model}")
            assert index.dense is not None
            vectors = index.dense.vectors()
            filler = []
            while n * (1 + len(copies)) < args.views:
                name = f"{prefix}copy{len(copies)}"
                copies.append(name)
                # a repository node, so the copy counts as a repository of the graph (a
                # push removes the views of repositories the graph does not hold)
                for store in (server, local):  # (the embedded store holds them too, below)
                    store.upsert_objects([CodeObject(id=name, kind="repository", name=name, qualname=name,
                                                     repo=name, path="")])
                filler.extend(dataclasses.replace(v, id=f"{name}|{v.id}", object_id=f"{name}|{v.object_id}",
                                                  repo=name) for v in index.views)
            every = [*index.views, *filler]
            # its own BM25 arrays: a push reads each repository's statistics off them
            big = RetrievalIndex(Path(tmp) / "big", every, SparseIndex.build([v.text for v in every]),
                                 None, index.model)
            import numpy as np

            from vitalrag.retrieve.dense import DenseIndex

            big.dense = DenseIndex.build(np.concatenate([vectors] * (1 + len(copies))), index.model or "")
            t = time.perf_counter()
            push_views(server, big, [repo, *copies])
            first = time.perf_counter() - t
            t = time.perf_counter()
            push_views(server, big, [repo, *copies])
            again = time.perf_counter() - t
            total = len(big.views)
            print(f"write into Neo4j ({total} views with {vectors.shape[1]}-d vectors, "
                  f"VITALRAG_NEO4J_WRITERS={server.settings.writers}, batch {server.settings.batch_size}):")
            print(f"  first write   {first:7.1f} s   {total / first:9.0f} views/s")
            print(f"  unchanged     {again:7.1f} s   {total / again:9.0f} views/s (hashes compared only)")
            print(f"  views in Neo4j now: {views.count()}")

            qs = queries(local, args.queries)
            # the embedded store of the same views (the copies too: BM25's statistics
            # count every repository a store holds, on both stores)
            ref = Retriever(local, big, embedder)
            served = Retriever(server, ServerViews.open(server), embedder)  # type: ignore[arg-type]
            for r in (ref, served):  # warm: caches, page cache, index readers
                for q in qs[:10]:
                    context_from(r, Query.of(q, repo=repo))
            print(f"warm latency over {len(qs)} queries (repository {repo}, --repo given):")
            row("get_context, embedded store", timed(lambda q: context_from(ref, Query.of(q, repo=repo)), qs))
            pid = args.server_pid or local_server_pid()
            row("get_context, Neo4j", *with_cpu(lambda: timed(lambda q: context_from(served, Query.of(q, repo=repo)), qs),
                                                 pid))
            row(f"get_context, Neo4j, {args.in_flight} in flight",
                *with_cpu(lambda: in_flight(lambda q: context_from(served, Query.of(q, repo=repo)), qs, args.in_flight),
                          pid))
            for retriever in ("dense", "bm25", "walk"):
                row(f"search {retriever}, embedded store",
                    timed(lambda q, r=retriever: ref.search(q, retriever=r, repo=repo, k=50), qs))
                row(f"search {retriever}, Neo4j",
                    *with_cpu(lambda r=retriever: timed(
                        lambda q: one_version(served, q, retriever=r, repo=repo, k=50), qs), pid))
            # without --repo: every repository of the index searched, so dense search runs
            # on the approximate vector index above EXACT_VIEWS views (exact below)
            row("search dense, all repos, embedded store",
                timed(lambda q: ref.search(q, retriever="dense", k=50), qs))
            row("search dense, all repos, Neo4j",
                *with_cpu(lambda: timed(lambda q: one_version(served, q, retriever="dense", k=50), qs), pid))
            shared_all = []
            for q in qs:
                a = {h.view.id for h in ref.search(q, retriever="dense", k=20)}
                b = {h.view.id for h in served.search(q, retriever="dense", k=20)}
                shared_all.append(len(a & b) / max(len(a), len(b)) if a or b else 1.0)
            print(f"  dense, every repository: top-20 views shared with the embedded store: "
                  f"{100 * statistics.mean(shared_all):.1f}%"
                  + (" (the copies repeat each vector: equal cosines order differently)" if copies else ""))
            for retriever in ("dense", "bm25", "walk", "fused"):
                shared = []
                for q in qs:
                    a = {h.view.id for h in ref.search(q, retriever=retriever, repo=repo, k=20)}
                    b = {h.view.id for h in served.search(q, retriever=retriever, repo=repo, k=20)}
                    shared.append(len(a & b) / max(len(a), len(b)) if a or b else 1.0)  # both empty: agree
                print(f"  {retriever:<6} top-20 views shared with the embedded store: "
                      f"{100 * statistics.mean(shared):.1f}%")
            same = jaccard = 0.0
            for q in qs:
                a = {s.key for s in context_from(ref, Query.of(q, repo=repo)).record.slots}
                b = {s.key for s in context_from(served, Query.of(q, repo=repo)).record.slots}
                same += a == b
                jaccard += len(a & b) / max(1, len(a | b))
                if a != b:
                    print(f"  differs: {q!r}: embedded only {sorted(a - b)}, Neo4j only {sorted(b - a)}")
            print(f"same objects in the context: {same:.0f} of {len(qs)} queries; "
                  f"mean Jaccard of the object sets {jaccard / len(qs):.3f}")
        finally:
            views.delete_repositories([repo, *copies])
            for name in (repo, *copies):
                server.delete_repository(name)
            server.delete_objects(copies)
            server.close()


if __name__ == "__main__":
    main()
