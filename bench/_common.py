"""Shared by the bench scripts (run as ``python bench/NAME.py``, so this folder is on sys.path)."""

from __future__ import annotations

import random

from vitalrag.graph.store import GraphStore


def pct(xs: list[float], p: float) -> float:
    """The p-th percentile (nearest rank)."""
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def queries(store: GraphStore, n: int, seed: int = 7) -> list[str]:
    """``n`` queries from the repository, seeded: docstring first lines (three
    words or more), else "where is NAME used"; repeated when it has fewer objects."""
    objs = [o for o in store.find_objects() if o.kind in ("function", "method", "class")]
    rng = random.Random(seed)
    rng.shuffle(objs)
    out: list[str] = []
    while len(out) < n and objs:
        for o in objs:
            if len(out) >= n:
                break
            doc = o.docstring.strip().splitlines()[0] if o.docstring.strip() else ""
            out.append(doc if len(doc.split()) >= 3 else f"where is {o.name} used")
    return out
