"""Warm ``context`` latency (retrieve + vital-fill, one call at a time) on the stores
``bench/context_quality.py`` leaves, one per dev corpus, each at its pinned commit.

    python bench/context_latency.py [--budget 4096] [--history 21] [--mirrors /work/.mirror]

Queries per corpus: its hand questions (``bench/quality_questions.json``) and the
subjects of the latest commits at its pinned commit (four words or more). Each query runs once to warm
the caches, then once timed. Prints p50/p95/max per corpus and over all, to set
against the 100 ms p95 target. Run it on a quiet machine: it measures time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import time
from pathlib import Path

from _common import pct
from context_quality import CORPORA

from vitalrag.context import ContextSettings, context_from
from vitalrag.eval.corpora import cache_root
from vitalrag.graph.memory import MemoryStore
from vitalrag.retrieve.api import Retriever
from vitalrag.retrieve.dense import make_embedder
from vitalrag.retrieve.index import RetrievalIndex
from vitalrag.retrieve.query import Query


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--budget", type=int, default=4096)
    ap.add_argument("--history", type=int, default=21, help="commit subjects per corpus")
    ap.add_argument("--mirrors", default="/work/.mirror")
    args = ap.parse_args()
    hand = json.loads((Path(__file__).parent / "quality_questions.json").read_text())
    embedder = make_embedder(None)
    every: list[float] = []
    for corpus in CORPORA.values():
        folder = cache_root().parent / "bench-quality" / corpus.name / "store"
        if not (folder / "current.json").exists():
            print(f"{corpus.name:12} no store (run bench/context_quality.py first)")
            continue
        r = Retriever(MemoryStore.open(folder), RetrievalIndex.load(folder), embedder)
        log = subprocess.run(["git", f"--git-dir={Path(args.mirrors) / corpus.mirror / 'repo'}", "log",
                              "--no-merges", "--format=%s", "-n", "200", corpus.pinned],
                             capture_output=True, text=True).stdout.splitlines()
        qs = [h["query"] for h in hand if h["corpus"] == corpus.name]
        qs += [s for s in log if len(s.split()) >= 4][:args.history]
        for q in qs:
            context_from(r, Query.of(q, repo=corpus.name), ContextSettings(budget=args.budget))
        ts = []
        for q in qs:
            t = time.perf_counter()
            context_from(r, Query.of(q, repo=corpus.name), ContextSettings(budget=args.budget))
            ts.append((time.perf_counter() - t) * 1000)
        every += ts
        print(f"{corpus.name:12} n={len(ts):3} p50 {statistics.median(ts):6.1f} ms  p95 {pct(ts, 95):6.1f} ms  "
              f"max {max(ts):6.1f} ms", flush=True)
    if every:
        print(f"{'all':12} n={len(every):3} p50 {statistics.median(every):6.1f} ms  p95 {pct(every, 95):6.1f} ms  "
              f"(target: p95 < 100 ms)")


if __name__ == "__main__":
    main()
