"""Latency of allocation + rendering (token counting included) for 50, 200 and
1,000 candidate views built from real code: the installed ``click`` and ``rich``
packages, indexed into a MemoryStore with their file texts.

Views per function/method/class: body, signature, docstring (when present), up
to three call sites (the calling line, in the caller's file) and a 12-line
window. Each trial draws a query from a real identifier, a random candidate set
of the requested size and random scores, and times ``allocate``.

    .venv/bin/python bench/allocate.py [--trials 200] [--policy vital]

"cold" clears the token counter's caches (per line, long texts) before every trial (a fresh
process); "warm" keeps it (a long-running server answering many queries).
"""

from __future__ import annotations

import argparse
import ast
import random
import statistics
import sys
import time
from importlib.metadata import version
from pathlib import Path

import click
import rich

from vitalrag.allocate import allocate
from vitalrag.graph.memory import MemoryStore
from vitalrag.model import CodeObject, ScoredView, View, file_id, object_id
from vitalrag.tokens import get_counter

REPO = "bench"


def _objects(pkg_root: Path, prefix: str) -> tuple[list[CodeObject], dict[str, str]]:
    objects: list[CodeObject] = []
    sources: dict[str, str] = {}
    for path in sorted(pkg_root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        rel = f"{prefix}/{path.relative_to(pkg_root).as_posix()}"
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        lines = text.splitlines()
        sources[file_id(REPO, rel)] = text
        objects.append(CodeObject(file_id(REPO, rel), "file", path.name, rel, REPO, rel))

        def walk(node: ast.AST, qual: str) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    q = f"{qual}.{child.name}" if qual else child.name
                    kind = "class" if isinstance(child, ast.ClassDef) else ("method" if qual else "function")
                    start = min([d.lineno for d in child.decorator_list] + [child.lineno])
                    sig = lines[child.lineno - 1].strip()
                    objects.append(CodeObject(object_id(REPO, rel, q), kind, child.name, q, REPO, rel,
                                              "python", start, child.end_lineno or start, sig,
                                              ast.get_docstring(child) or ""))
                    walk(child, q)

        walk(tree, "")
    return objects, sources


def build_corpus() -> tuple[MemoryStore, list[list[View]], list[str]]:
    objs, sources = _objects(Path(click.__file__).parent, "click")
    more, more_src = _objects(Path(rich.__file__).parent, "rich")
    objs += more
    sources.update(more_src)
    store = MemoryStore("/nonexistent-bench-store")
    store.upsert_objects(objs)
    store.put_sources(sources)
    file_lines = {fid: text.splitlines() for fid, text in sources.items()}
    defs = [o for o in objs if o.kind != "file"]
    by_name: dict[str, list[CodeObject]] = {}
    for o in defs:
        by_name.setdefault(o.name, []).append(o)
    views_per_object: list[list[View]] = []
    for o in defs:
        lines = file_lines[file_id(REPO, o.path)]
        body = "\n".join(lines[o.start_line - 1:o.end_line])
        vs = [View(f"{o.id}#body", o.id, "body", o.path, o.start_line, o.end_line, body, repo=REPO),
              View(f"{o.id}#sig", o.id, "signature", o.path, o.start_line, o.start_line, o.signature, repo=REPO)]
        if o.docstring:
            vs.append(View(f"{o.id}#doc", o.id, "docstring", o.path, o.start_line, o.start_line,
                           o.docstring, repo=REPO))
        mid = (o.start_line + o.end_line) // 2
        lo, hi = max(o.start_line, mid - 6), min(o.end_line, mid + 5)
        vs.append(View(f"{o.id}#win", o.id, "window", o.path, lo, hi, "\n".join(lines[lo - 1:hi]), repo=REPO))
        views_per_object.append(vs)
    # call sites: a line in some file that calls the object's name
    call_sites: dict[str, list[View]] = {}
    for fid, lines in file_lines.items():
        path = fid.split(":", 1)[1]
        for no, line in enumerate(lines, 1):
            for name in set(_called_names(line)):
                for target in by_name.get(name, [])[:1]:
                    lst = call_sites.setdefault(target.id, [])
                    if len(lst) < 3:
                        lst.append(View(f"{target.id}#call{len(lst)}", target.id, "call_site", path,
                                        no, no, line.strip(), repo=REPO))
    for vs in views_per_object:
        vs.extend(call_sites.get(vs[0].object_id, []))
    names = sorted({o.name for o in defs if not o.name.startswith("_")})
    return store, views_per_object, names


def _called_names(line: str) -> list[str]:
    out = []
    for part in line.split("(")[:-1]:
        token = part.replace(".", " ").split()
        if token and token[-1].isidentifier():
            out.append(token[-1])
    return out


def candidates(rng: random.Random, views_per_object: list[list[View]], n: int) -> list[ScoredView]:
    chosen: list[View] = []
    while len(chosen) < n:
        chosen.extend(rng.choice(views_per_object))
    chosen = chosen[:n]
    return [ScoredView(v, rng.random()) for v in chosen]


def measure(store: MemoryStore, views_per_object: list[list[View]], names: list[str], n: int,
            trials: int, policy: str, cold: bool) -> list[float]:
    rng = random.Random(n * 7919 + (1 if cold else 0))
    counter = get_counter()
    out = []
    for _ in range(trials):
        cands = candidates(rng, views_per_object, n)
        query = f"Complete {rng.choice(names)} using {rng.choice(names)} and fix the error"
        if cold:
            counter.clear_caches()
        t = time.perf_counter()
        allocate(query, cands, policy=policy, store=store, counter=counter)
        out.append((time.perf_counter() - t) * 1000)
    return out


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--policy", default="vital")
    args = ap.parse_args()
    t = time.perf_counter()
    counter = get_counter()
    print(f"token counter: {counter} loaded in {time.perf_counter() - t:.2f}s", file=sys.stderr)
    store, vpo, names = build_corpus()
    n_views = sum(len(v) for v in vpo)
    print(f"corpus: click {version('click')} + rich {version('rich')}: "
          f"{len(vpo)} objects, {n_views} views", file=sys.stderr)
    allocate("warm up", candidates(random.Random(0), vpo, 50), policy=args.policy, store=store)
    print(f"policy={args.policy} trials={args.trials}")
    print(f"{'views':>6} {'cache':>5} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
    for n in (50, 200, 1000):
        for cold in (True, False):
            xs = measure(store, vpo, names, n, args.trials, args.policy, cold)
            print(f"{n:>6} {'cold' if cold else 'warm':>5} {statistics.median(xs):8.2f} "
                  f"{pct(xs, 95):8.2f} {max(xs):8.2f}")


if __name__ == "__main__":
    main()
