"""Ingest speed and memory: parse-only floor vs the full ingest, per repository.

    python bench/ingest.py PATH_OR_SPEC [PATH_OR_SPEC ...] [--workers N]

A spec is a local folder, ``pypi:NAME==VER`` or ``maven:G:A:V`` (fetched into the
corpus cache first, not timed). For each repository it prints files, lines of
code, the time to only parse every file with tree-sitter in one process (the
floor), the full ingest time (walk, parse+extract on the workers, resolve, write
the embedded store), their ratio, files/s, LOC/s, and peak RSS of the run
(the repository's process and, separately, its largest worker); then the time
of each step (``IndexReport.phases``) of each repository's best ingest. Each
repository is measured in a fresh process, with the collector set as ``vitalrag``
sets it at its start (``vitalrag.cli.tune_gc``).

The parse workers are a ``ParsePool`` the bench owns, as ``vitalrag index``
does: each repository's first ingest is printed apart, timed with the start of
the pool (``first s``, with its ratio), and later ingests reuse its workers
(``--pool-per-run`` starts a pool for each ingest instead). The
best is taken over at least ``--repeat`` ingests and, for small repositories,
as many more as fit in ``--min-time`` seconds of ingesting (as ``timeit``'s
autorange does): this VM has slow spells of several seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from vitalrag.cli import tune_gc
from vitalrag.eval.corpora import Corpus, fetch
from vitalrag.graph.memory import MemoryStore
from vitalrag.ingest import index_repository
from vitalrag.ingest.lang import REGISTRY, parser
from vitalrag.ingest.parallel import ParsePool
from vitalrag.ingest.walk import walk_repository


def parse_floor(root: Path) -> tuple[int, int, float]:
    files = walk_repository(root).files
    parsers: dict[str, object] = {}
    blobs = [(f.language, Path(f.abspath).read_bytes()) for f in files]
    loc = sum(b.count(b"\n") for _, b in blobs)
    start = time.perf_counter()
    for lang, blob in blobs:
        p = parsers.get(lang) or parsers.setdefault(lang, parser(lang))
        p.parse(blob)  # type: ignore[attr-defined]
    return len(files), loc, time.perf_counter() - start


def ingest_once(corpus: Corpus, pool: ParsePool) -> tuple[float, dict[str, float]]:
    with tempfile.TemporaryDirectory() as tmp:
        store = MemoryStore(Path(tmp) / "idx")
        start = time.perf_counter()
        report = index_repository(corpus.path, store, name=corpus.name, executor=pool)
        return time.perf_counter() - start, report.phases


def measure(spec: str, workers: int | None, repeat: int, min_time: float, per_run: bool) -> dict[str, object]:
    """One repository's figures (run in a process of its own: see ``main``)."""
    corpus = fetch(spec)
    tune_gc()  # as ``vitalrag`` does at its start
    # the grammars and extractors loaded, but no workers: the first ingest, with the
    # start of the pool, as a one-shot ``vitalrag index`` does them (after its imports)
    floors: list[tuple[int, int, float]] = [parse_floor(corpus.path)]
    for language in REGISTRY.values():
        language.load()
    start = time.perf_counter()
    pool = ParsePool(workers)
    pool.start()
    first = time.perf_counter() - start + ingest_once(corpus, pool)[0]
    # floor and ingest runs alternate, so a slow spell of the machine (this VM
    # has them) weighs on both sides of the ratio alike
    best, steps, spent, runs = float("inf"), {}, 0.0, 0
    while runs < repeat or (spent < min_time and runs < 100):
        floors.extend(parse_floor(corpus.path) for _ in range(2))
        if per_run:
            pool.close()
            start = time.perf_counter()
            pool.start()
            took = time.perf_counter() - start
        else:
            took = 0.0
        took_run, phases = ingest_once(corpus, pool)
        took += took_run
        runs += 1
        spent += took
        if took < best:
            best, steps = took, phases
    pool.close()  # the parse workers and the resolve children, all waited for
    worker = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    n_files, loc, parse_s = min(floors, key=lambda r: r[2])
    return {"name": corpus.name, "files": n_files, "loc": loc, "parse": parse_s, "first": first, "best": best,
            "runs": runs, "steps": steps, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "worker": worker}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("repos", nargs="+")
    ap.add_argument("--workers", type=int, default=None, help="parser processes (default: up to 2)")
    ap.add_argument("--repeat", type=int, default=5, help="at least this many ingests per repository")
    ap.add_argument("--min-time", type=float, default=1.0,
                    help="and as many more (up to 100) as fit in this many seconds of ingesting")
    ap.add_argument("--pool-per-run", action="store_true", help="start the parse workers for each ingest")
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # a child: one repository, JSON out
    args = ap.parse_args()
    if args.one:
        print(json.dumps(measure(args.repos[0], args.workers, args.repeat, args.min_time, args.pool_per_run)))
        return
    print(f"{'repository':<28} {'files':>6} {'LOC':>8} {'parse s':>8} {'first s':>8} {'ratio':>6} "
          f"{'ingest s':>9} {'ratio':>6} {'files/s':>8} {'LOC/s':>9} {'runs':>5} {'RSS MiB':>8} {'worker MiB':>10}")
    steps: dict[str, dict[str, float]] = {}
    for spec in args.repos:
        fetch(spec)  # fetched here, so that a fetch error shows as it is
        # each repository in a fresh process: its figures (peak RSS too) are its own,
        # and its workers start from a process that has indexed nothing before
        cmd = [sys.executable, __file__, spec, "--one", "--repeat", str(args.repeat), "--min-time", str(args.min_time)]
        if args.workers is not None:
            cmd += ["--workers", str(args.workers)]
        if args.pool_per_run:
            cmd.append("--pool-per-run")
        r = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.splitlines()[-1])
        parse_s, best, first = r["parse"], r["best"], r["first"]
        print(f"{r['name'][:28]:<28} {r['files']:>6} {r['loc']:>8} {parse_s:>8.3f} {first:>8.3f} "
              f"{first / parse_s:>6.2f} {best:>9.3f} {best / parse_s:>6.2f} {r['files'] / best:>8.0f} "
              f"{r['loc'] / best:>9.0f} {r['runs']:>5} {r['rss']:>8.0f} {r['worker']:>10.0f}")
        sys.stdout.flush()
        steps[r["name"]] = r["steps"]
    print(f"\n(cpu count {os.cpu_count()}; each repository in a fresh process; first: its first ingest, timed "
          "with the start of the parse workers; ingest: the best of the runs, with twice as many parse floors, "
          "alternating; the parse floor runs in one process, the ingest on a pool of parse workers, kept for "
          "every ingest unless --pool-per-run; "
          "RSS MiB: peak of the repository's process, worker MiB: of its largest worker)")
    print("\nsteps of the best ingest, ms (IndexReport.phases):")
    for name, phases in steps.items():
        print(f"  {name[:28]:<28} " + "  ".join(f"{k} {v * 1000:.1f}" for k, v in phases.items()))


if __name__ == "__main__":
    main()
