"""Ingest speed and memory: parse-only floor vs the full ingest, per repository.

    python bench/ingest.py PATH_OR_SPEC [PATH_OR_SPEC ...] [--workers N]

A spec is a local folder, ``pypi:NAME==VER`` or ``maven:G:A:V`` (fetched into the
corpus cache first, not timed). For each repository it prints files, lines of
code, the time to only parse every file with tree-sitter in one process (the
floor), the full ingest time (walk, parse+extract on the workers, resolve, write
the embedded store), their ratio, files/s, LOC/s, and peak RSS of the run
(this process and, separately, the largest worker); then the time of each step
(``IndexReport.phases``) of each repository's best ingest.

Parse workers are kept between runs of a process (``vitalrag.ingest.pipeline``),
so each repository's first ingest is printed apart, timed with the start of the
workers (``first s``, with its ratio): what a one-shot ``vitalrag index`` pays
after its imports (it starts them first thing, ``start_workers``). The
best is taken over at least ``--repeat`` ingests and, for small repositories,
as many more as fit in ``--min-time`` seconds of ingesting (as ``timeit``'s
autorange does): this VM has slow spells of several seconds.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

from vitalrag.eval.corpora import Corpus, fetch
from vitalrag.graph.memory import MemoryStore
from vitalrag.ingest import index_repository
from vitalrag.ingest.languages import parser
from vitalrag.ingest.pipeline import language_module, shutdown_workers, start_workers, worker_pids
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


def peak_rss_mib(pid: int) -> float:
    """A live process's peak resident set (``VmHWM``), 0 when it cannot be read."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def ingest_once(corpus: Corpus, workers: int | None) -> tuple[float, dict[str, float]]:
    with tempfile.TemporaryDirectory() as tmp:
        store = MemoryStore(Path(tmp) / "idx")
        start = time.perf_counter()
        report = index_repository(corpus.path, store, name=corpus.name, workers=workers)
        return time.perf_counter() - start, report.phases


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("repos", nargs="+")
    ap.add_argument("--workers", type=int, default=None, help="parser processes (default: up to 2)")
    ap.add_argument("--repeat", type=int, default=5, help="at least this many ingests per repository")
    ap.add_argument("--min-time", type=float, default=1.0,
                    help="and as many more (up to 100) as fit in this many seconds of ingesting")
    args = ap.parse_args()
    steps: dict[str, dict[str, float]] = {}  # repository -> seconds per step of its best ingest
    print(f"{'repository':<28} {'files':>6} {'LOC':>8} {'parse s':>8} {'first s':>8} {'ratio':>6} "
          f"{'ingest s':>9} {'ratio':>6} {'files/s':>8} {'LOC/s':>9} {'runs':>5} {'RSS MiB':>8} {'worker MiB':>10}")
    worker_peak = 0.0
    for spec in args.repos:
        corpus = fetch(spec)
        # the grammars loaded, but no workers: the first ingest, with the start of
        # the workers, as a one-shot ``vitalrag index`` does them (after its imports)
        floors: list[tuple[int, int, float]] = [parse_floor(corpus.path)]
        for language in ("python", "java", "go"):  # the extractors a one-shot run imports
            language_module(language)
        shutdown_workers()
        start = time.perf_counter()
        start_workers(args.workers)
        first = time.perf_counter() - start + ingest_once(corpus, args.workers)[0]
        # floor and ingest runs alternate, so a slow spell of the machine (this VM
        # has them) weighs on both sides of the ratio alike
        best = float("inf")
        spent = 0.0
        runs = 0
        while runs < args.repeat or (spent < args.min_time and runs < 100):
            floors.extend(parse_floor(corpus.path) for _ in range(2))
            took, phases = ingest_once(corpus, args.workers)
            runs += 1
            spent += took
            if took < best:
                best = took
                steps[corpus.name] = phases
        worker_peak = max([worker_peak] + [peak_rss_mib(pid) for pid in worker_pids()])
        n_files, loc, parse_s = min(floors, key=lambda r: r[2])
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        child = max(worker_peak, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)
        print(f"{corpus.name[:28]:<28} {n_files:>6} {loc:>8} {parse_s:>8.3f} {first:>8.3f} {first / parse_s:>6.2f} "
              f"{best:>9.3f} {best / parse_s:>6.2f} {n_files / best:>8.0f} {loc / best:>9.0f} {runs:>5} "
              f"{rss:>8.0f} {child:>10.0f}")
        sys.stdout.flush()
    print(f"\n(cpu count {os.cpu_count()}; first: the first ingest, which starts the parse workers; ingest: "
          "the best of the runs, with twice as many parse floors, alternating; the parse floor runs in one "
          "process, the ingest on the parse workers and this process; RSS MiB: peak of this process so far, "
          "worker MiB: the largest worker's so far)")
    print("\nsteps of the best ingest, ms (IndexReport.phases):")
    for name, phases in steps.items():
        print(f"  {name[:28]:<28} " + "  ".join(f"{k} {v * 1000:.1f}" for k, v in phases.items()))


if __name__ == "__main__":
    main()
