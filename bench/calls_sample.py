"""Draw CALLS edges of an index at random, for checking them by hand (issue 41's
"CALLS precision on a hand-checked sample of 20 edges per language").

For each drawn edge it prints the caller, the call site's line, the target's
definition (its first line in the tree), and the other objects of the repository
with the target's name, so a reader can judge whether the call reaches that
definition (and not another with the same name).

Run (from the repository root), on an index of a dev repository and its tree:

    .venv/bin/python bench/calls_sample.py /work/cache/runs/lang/cJSON/store \\
        /work/cache/runs/lang/cJSON/tree-a29814f285cc --language c --seed 41 -n 20

``--language`` keeps the edges whose caller is of that language (a repository's
other languages are skipped). The draw is ``random.Random(seed).sample`` over the
edges sorted by (source, target), so one index, seed and n give the same sample.
"""
from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

from vitalrag.index import Index


def line_of(root: Path, path: str, line: int) -> str:
    try:
        lines = (root / path).read_text(errors="replace").split("\n")
    except OSError as exc:
        return f"<unreadable: {exc}>"
    return lines[line - 1].strip() if 0 < line <= len(lines) else f"<no line {line}>"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("store", help="index folder (vitalrag index --store)")
    parser.add_argument("tree", type=Path, help="the indexed repository's source tree")
    parser.add_argument("--language", help="only calls whose caller is of this language")
    parser.add_argument("--seed", type=int, default=41)
    parser.add_argument("-n", type=int, default=20)
    args = parser.parse_args(argv)

    store = Index.open(args.store).store
    edges = sorted(store.find_edges(kind="CALLS"), key=lambda e: (e.source, e.target))
    ends = store.get_objects({e.source for e in edges} | {e.target for e in edges})
    if args.language:
        edges = [e for e in edges if e.source in ends and ends[e.source].language == args.language]
    drawn = random.Random(args.seed).sample(edges, min(args.n, len(edges)))
    print(f"{len(edges)} CALLS edges, {len(drawn)} drawn (seed {args.seed})")
    for number, edge in enumerate(drawn, 1):
        caller, callee = ends[edge.source], ends[edge.target]
        line = edge.lines[0] if edge.lines else caller.start_line
        print(f"\n{number}. {edge.source}\n   -> {edge.target} ({callee.kind}, "
              f"L{callee.start_line}-{callee.end_line})")
        print(f"   call   {caller.path}:{line}: {line_of(args.tree, caller.path, line)[:160]}")
        print(f"   target {callee.path}:{callee.start_line}: "
              f"{line_of(args.tree, callee.path, callee.start_line)[:160]}")
        others = [o for o in store.find_objects(repo=callee.repo, name=callee.name)
                  if o.id != callee.id and o.kind not in ("file", "module")]
        for other in others[:8]:
            print(f"   same name: {other.id} ({other.kind}, L{other.start_line})")
        if len(others) > 8:
            print(f"   same name: ... {len(others) - 8} more")
    return 0


if __name__ == "__main__":
    sys.exit(main())
