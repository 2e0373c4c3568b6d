"""Shared by the bench scripts (run as ``python bench/NAME.py``, so this folder is on sys.path)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

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


def write_results(bench: str, data: dict, table: str) -> Path:
    """Write a bench's results to ``bench/results/<commit>-<bench>.json`` and its
    table beside it (``.md``); the commit is HEAD's short hash, marked ``-dirty``
    when the work tree has changes. Returns the JSON file's path."""
    root = Path(__file__).resolve().parent
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"],
                          capture_output=True, text=True).stdout.strip() or "nogit"
    dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    stem = f"{head}{'-dirty' if dirty else ''}-{bench}"
    out = root / "results"
    out.mkdir(exist_ok=True)
    path = out / f"{stem}.json"
    path.write_text(json.dumps({"bench": bench, "commit": head, "dirty": bool(dirty),
                                "argv": sys.argv, **data}, indent=1) + "\n")
    (out / f"{stem}.md").write_text(f"# {bench} at {head}{' (dirty)' if dirty else ''}\n\n"
                                    f"`python {' '.join(sys.argv)}`\n\n{table}\n")
    return path
