"""Store write speed and neighbourhood query latency: Neo4j over loopback vs the embedded store.

    python bench/neo4j_ingest.py [PATH_OR_SPEC] [--uri bolt://127.0.0.1:7687] [--repeat 3] [--queries 200]

The repository (default ``pypi:requests==2.32.3``, fetched into the corpus cache,
not timed) is parsed once with ``index_repository`` into an embedded store; then
only the store writes are timed, by copying that graph (objects, edges,
unresolved references, sources, metadata) into a fresh embedded store (saved to
disk) and into Neo4j (``copy_store``). Neo4j is timed two ways: a first ingest
(the repository is deleted before each run, untimed) and a re-index over the
previous copy (``copy_store`` deletes it first, timed). Two row counts are
given: the code graph (objects + edges) over the time of writing just those,
and every Neo4j node and relationship the ingest writes (objects, edges,
``:Unresolved`` nodes and their links, ``:Source`` nodes) over the whole copy.
The figures are for a warm server, as a shared server runs: ``--warmup`` copies
(default 3) go first, untimed, because a just-started JVM compiles its write
path during the first tens of thousands of rows (the first copy into a fresh
server ran about half as fast here).
Afterwards ``neighbors`` at depth 1 and 2 is timed on the same sampled
definitions in both stores (p50 / p95 in ms), and the answers are compared.

Neo4j settings come from NEO4J_URI / NEO4J_USERNAME / NEO4J_PASSWORD /
NEO4J_DATABASE / VITALRAG_NEO4J_BATCH; the repository is written as
``bench-<name>`` and removed at the end unless ``--keep``.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from vitalrag.eval.corpora import fetch
from vitalrag.graph.memory import MemoryStore
from vitalrag.graph.neo4j import Neo4jStore
from vitalrag.graph.store import GraphStore
from vitalrag.graph.transfer import copy_store
from vitalrag.ingest import index_repository
from vitalrag.model import DEFINITION_KINDS


def timed_phases(store: Neo4jStore, phases: dict[str, float]) -> None:
    """Add the time of each bulk write of ``store`` to ``phases``, by method name."""
    for name in ("upsert_objects", "upsert_edges", "upsert_unresolved", "put_sources", "delete_repository"):
        method = getattr(store, name)

        def timed(*args: object, _method: object = method, _name: str = name, **kwargs: object) -> object:
            start = time.perf_counter()
            try:
                return _method(*args, **kwargs)  # type: ignore[operator]
            finally:
                phases[_name] = phases.get(_name, 0.0) + time.perf_counter() - start

        setattr(store, name, timed)


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1))))
    return ordered[k]


def time_queries(store: GraphStore, ids: list[str], depth: int) -> tuple[list[float], list[dict[str, int]]]:
    times, answers = [], []
    for node in ids:
        start = time.perf_counter()
        answers.append(store.neighbors([node], depth=depth))
        times.append((time.perf_counter() - start) * 1000)
    return times, answers


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("repo", nargs="?", default="pypi:requests==2.32.3")
    ap.add_argument("--uri", default=os.environ.get("NEO4J_URI", "bolt://127.0.0.1:7687"))
    ap.add_argument("--repeat", type=int, default=3, help="write runs per store")
    ap.add_argument("--queries", type=int, default=200, help="sampled start objects for the query timings")
    ap.add_argument("--warmup", type=int, default=3,
                    help="untimed Neo4j copies first: a just-started server runs its first tens of "
                         "thousands of rows JIT-cold, at about half the steady speed")
    ap.add_argument("--keep", action="store_true", help="leave the benchmark repository in Neo4j")
    args = ap.parse_args()

    corpus = fetch(args.repo)
    name = f"bench-{corpus.name}"
    with tempfile.TemporaryDirectory() as tmp:
        parsed = MemoryStore(Path(tmp) / "parsed")
        start = time.perf_counter()
        report = index_repository(corpus.path, parsed, name=name)
        parse_s = time.perf_counter() - start
        counts = parsed.counts(name)
        rows = sum(counts["objects"].values()) + sum(counts["edges"].values())
        print(f"repository {corpus.spec}: {report.files} files, {report.loc} LOC, "
              f"{sum(counts['objects'].values())} nodes + {sum(counts['edges'].values())} edges = {rows} rows, "
              f"{counts['unresolved']} unresolved; index_repository (parse+resolve+write) {parse_s:.2f}s")

        embedded_runs = []
        for run in range(args.repeat):
            dst = MemoryStore(Path(tmp) / f"copy{run}")
            start = time.perf_counter()
            copy_store(parsed, dst, name)
            embedded_runs.append(time.perf_counter() - start)

        neo = Neo4jStore.from_uri(args.uri)
        try:
            phases: dict[str, float] = {}
            timed_phases(neo, phases)
            for _ in range(args.warmup):  # a freshly started server compiles its code paths first
                copy_store(parsed, neo, name)
            first_runs, code_runs = [], []
            for _ in range(args.repeat):
                neo.delete_repository(name)
                phases.clear()
                start = time.perf_counter()
                copy_store(parsed, neo, name)
                first_runs.append(time.perf_counter() - start)
                code_runs.append(phases.get("upsert_objects", 0.0) + phases.get("upsert_edges", 0.0))
            assert neo.export(name) == parsed.export(name), "Neo4j export differs from the embedded one"
            replace_runs = []
            for _ in range(args.repeat):
                start = time.perf_counter()
                copy_store(parsed, neo, name)
                replace_runs.append(time.perf_counter() - start)
            assert neo.export(name) == parsed.export(name), "Neo4j export differs from the embedded one"

            n_sources = sum(1 for o in parsed.find_objects(repo=name, kind="file") if parsed.source(o.id) is not None)
            all_rows = rows + 2 * counts["unresolved"] + n_sources
            settings = f"batch {neo.settings.batch_size}, {neo.settings.writers} writers"
            print(f"\n{'store writes (' + str(args.repeat) + ' runs each)':<44} {'first s':>8} {'best s':>8} "
                  f"{'rows/s (best)':>14}")
            print(f"{'embedded, whole copy (' + str(rows) + ' rows)':<44} {embedded_runs[0]:>8.3f} "
                  f"{min(embedded_runs):>8.3f} {rows / min(embedded_runs):>14,.0f}")
            print(f"{'neo4j first ingest, code graph (' + str(rows) + ' rows)':<44} {code_runs[0]:>8.3f} "
                  f"{min(code_runs):>8.3f} {rows / min(code_runs):>14,.0f}")
            print(f"{'neo4j first ingest, whole (' + str(all_rows) + ' rows)':<44} {first_runs[0]:>8.3f} "
                  f"{min(first_runs):>8.3f} {all_rows / min(first_runs):>14,.0f}")
            print(f"{'neo4j re-index over a copy, whole':<44} {replace_runs[0]:>8.3f} "
                  f"{min(replace_runs):>8.3f} {all_rows / min(replace_runs):>14,.0f}")
            print(f"(neo4j {args.uri}, {settings}; whole = objects + edges + {counts['unresolved']} "
                  f":Unresolved nodes and their links + {n_sources} :Source nodes)")

            defs = [o.id for o in parsed.find_objects(repo=name) if o.kind in DEFINITION_KINDS]
            sample = random.Random(0).sample(defs, min(args.queries, len(defs)))
            print(f"\n{'neighbors on ' + str(len(sample)) + ' definitions':<34} {'p50 ms':>8} {'p95 ms':>8} "
                  f"{'mean hits':>10}")
            for depth in (1, 2):
                results = {}
                for label, store in (("embedded", parsed), ("neo4j", neo)):
                    time_queries(store, sample[:10], depth)  # warm caches and query plans
                    times, answers = time_queries(store, sample, depth)
                    results[label] = answers
                    hits = statistics.mean(len(a) for a in answers)
                    print(f"{f'{depth}-hop {label}':<34} {percentile(times, 50):>8.2f} "
                          f"{percentile(times, 95):>8.2f} {hits:>10.1f}")
                assert results["embedded"] == results["neo4j"], f"{depth}-hop answers differ"
        finally:
            if not args.keep:
                neo.delete_repository(name)
            neo.close()
    print(f"\n(cpu count {os.cpu_count()}; answers of both stores compared equal)")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
