"""Retrieval latency and encoding throughput on a real repository.

    python bench/retrieve.py [SPEC] [--queries 200] [--model all-MiniLM-L6-v2]

SPEC defaults to pypi:werkzeug==3.1.3 (35k LOC). The repository is indexed into
a temporary embedded store with the real embedding model on this machine (CPU
here), then 200 queries (docstring first lines and object names from the
repository, seeded) are run against each retriever. Prints p50/p95 per
retriever (BM25 and FAISS exclude query encoding; the walk runs on the embedded
store), fused with query encoding, query encoding alone, encoding throughput in
views/s, and the size of the index on disk.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from _common import pct, queries

from vitalrag.eval.corpora import fetch
from vitalrag.graph.memory import MemoryStore, graph_path
from vitalrag.ingest import index_repository
from vitalrag.retrieve.api import Retriever
from vitalrag.retrieve.dense import make_embedder
from vitalrag.retrieve.index import RetrievalIndex
from vitalrag.retrieve.query import Query, Scope


def timed(fn, qs):  # noqa: ANN001, ANN202
    times = []
    for q in qs:
        t = time.perf_counter()
        fn(q)
        times.append((time.perf_counter() - t) * 1000)
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("spec", nargs="?", default="pypi:werkzeug==3.1.3")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--model", default=None)
    args = ap.parse_args()
    corpus = fetch(args.spec)
    with tempfile.TemporaryDirectory() as tmp:
        store = MemoryStore(Path(tmp) / "idx")
        report = index_repository(corpus.path, store, name=corpus.name)
        embedder = make_embedder(args.model)
        embedder.encode(["warm up"])  # model load is not encoding
        t = time.perf_counter()
        index, stats = RetrievalIndex.build(store, store.folder, embedder=embedder)
        build_s = time.perf_counter() - t
        r = Retriever(store, RetrievalIndex.load(store.folder), embedder)
        qs = queries(store, args.queries)
        vectors = {q: embedder.encode([q])[0] for q in qs}
        assert r.views.dense is not None
        bm25, walk = r.ranker("bm25"), r.ranker("walk")
        rows = {
            "bm25": timed(lambda q: bm25.rank(Query(q), Scope(), 100), qs),
            "faiss (no encoding)": timed(lambda q: r.views.dense.search(vectors[q], 100), qs),
            "walk (embedded store)": timed(lambda q: walk.rank(Query(q), Scope(repo=corpus.name), 100), qs),
            "query encoding": timed(lambda q: embedder.encode([q]), qs),
            "fused (with encoding)": timed(lambda q: r.search(q, k=20), qs),
        }
        graph_bytes = graph_path(store.folder).stat().st_size  # type: ignore[union-attr]
        print(f"repository {corpus.name}: {report.files} files, {report.loc} LOC, {stats.views} views, "
              f"model {stats.model}")
        print(f"index build (views + BM25 + encoding {stats.encoded} views + FAISS): {build_s:.1f} s, "
              f"encoding throughput {stats.encoded / build_s:.0f} views/s (CPU, includes BM25 and view building)")
        print(f"{'retriever':<24} {'p50 ms':>8} {'p95 ms':>8}   over {len(qs)} queries")
        for name, xs in rows.items():
            print(f"{name:<24} {statistics.median(xs):>8.2f} {pct(xs, 95):>8.2f}")
        print(f"index size on disk: graph {graph_bytes / 2**20:.1f} MiB, "
              f"retrieval (views, BM25, FAISS, embedding cache) {index.size_on_disk() / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
