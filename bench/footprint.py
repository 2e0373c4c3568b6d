"""Store size and memory at scale: a generated repository of many small files.

    python bench/footprint.py [--files 100000] [--shape module|tiny] [--model hashing|default|none] [--keep DIR]

Writes a synthetic Python repository of ``--files`` modules in packages of 1,000
(``module``: about 20 lines, a class with two methods and a function that calls
into the previous module; ``tiny``: a two-line function), then runs, each in a
fresh ``vitalrag`` process: 1. ``index`` (first run), 2. ``index`` again with
nothing changed, 3. ``index`` after one file was edited, 4. one ``search`` and
5. one ``context``. For each it prints wall time and peak RSS (the largest of the
``vitalrag`` process and its parse workers, from ``getrusage`` in a wrapper
process), then the live version's size on disk by part (graph, facts,
retrieval: views, BM25, dense) and the folder's, beside issue 20's targets
(store < 150 MB, unchanged re-index < 600 MB peak). ``--model none`` indexes with
``--no-embed``; ``hashing`` uses the model-free embedder (256 dimensions, the
default model has 384); ``default`` embeds with the packaged model (slow on 2
cores).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MODULE = '''"""Module {i}: records of kind {i} and their totals."""

from pkg{pp}.mod{prev} import total_{prev}


class Record{i}:
    """A record of kind {i}."""

    def __init__(self, value):
        self.value = value

    def scaled(self, factor):
        return Record{i}(self.value * factor)


def total_{i}(records):
    """Sum the values of records of kind {i}, plus the previous kind's total."""
    return sum(r.value for r in records) + total_{prev}([])
'''


TINY = 'def f{i}(x):\n    return x + {i}\n'


def generate(root: Path, n: int, shape: str) -> None:
    for i in range(n):
        pkg = root / f"pkg{i // 1000}"
        if i % 1000 == 0:
            pkg.mkdir(parents=True, exist_ok=True)
            (pkg / "__init__.py").write_text("", encoding="utf-8")
        prev = max(i - 1, 0)
        text = TINY.format(i=i) if shape == "tiny" else MODULE.format(i=i, prev=prev, pp=prev // 1000)
        (pkg / f"mod{i}.py").write_text(text, encoding="utf-8")


def measured(cmd: list[str]) -> tuple[float, float, int]:
    """Run ``cmd`` in a fresh Python process that reports its own child's peak RSS."""
    probe = ("import json,resource,subprocess,sys,time;s=time.perf_counter();"
             "p=subprocess.run(sys.argv[1:],stdout=subprocess.DEVNULL,stderr=subprocess.PIPE,text=True);"
             "w=time.perf_counter()-s;r=resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss/1024;"
             "print(json.dumps([w,r,p.returncode,p.stderr[-400:]]))")
    out = subprocess.run([sys.executable, "-c", probe, *cmd], capture_output=True, text=True, check=True)
    wall, rss, rc, err = json.loads(out.stdout)
    if rc:
        print(f"  {' '.join(cmd[1:3])}: exit {rc}: {err.strip()}", file=sys.stderr)
    return wall, rss, rc


def du(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def parts(store: Path) -> tuple[dict[str, int], int]:
    """Bytes of the live version by part, and of everything in the folder (with the
    previous version, kept for readers loading it)."""
    live = json.loads((store / "current.json").read_text())
    out: dict[str, int] = {}
    for p in sorted(store.iterdir()):
        if p.name.startswith(("graph-", "retrieval-")) and p.name not in (live["graph"], live["retrieval"]):
            continue
        if p.is_dir() and p.name.startswith("retrieval-"):
            for q in sorted(p.iterdir()):
                out[f"retrieval/{q.name}"] = du(q)
        else:
            out["graph" if p.name.startswith("graph-") else p.name] = du(p)
    return out, du(store)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--model", default="hashing", help="hashing, default (the packaged model) or none")
    ap.add_argument("--shape", choices=("module", "tiny"), default="module",
                    help="module: 20 lines, a class with two methods and a function; tiny: a two-line function")
    ap.add_argument("--keep", help="generate into (and keep) this folder")
    args = ap.parse_args()

    tmp = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="vr-footprint-"))
    repo, store = tmp / "repo", tmp / "store"
    if not (repo / "pkg0").exists():
        start = time.perf_counter()
        generate(repo, args.files, args.shape)
        print(f"generated {args.files:,} files in {time.perf_counter() - start:.1f} s")
    shutil.rmtree(store, ignore_errors=True)
    vr = [sys.executable, "-m", "vitalrag"]
    embed = ["--no-embed"] if args.model == "none" else ([] if args.model == "default" else ["--model", args.model])
    index = [*vr, "index", str(repo), "--store", str(store), "--name", "big", *embed]
    rows = []
    for label, cmd in [
        ("index (first)", index),
        ("index (unchanged)", index),
        ("index (1 file edited)", ["EDIT", *index]),
        ("search", [*vr, "search", "records of kind 4242", "--store", str(store), "--retriever", "bm25"]),
        ("context", [*vr, "context", "Sum the values of records of kind 4242", "--store", str(store),
                     "--budget", "2048"]),
    ]:
        if cmd[0] == "EDIT":
            with (repo / "pkg0" / "mod1.py").open("a", encoding="utf-8") as fh:
                fh.write(f"\n\ndef edited_{time.time_ns()}():\n    return 0\n")
            cmd = cmd[1:]
        wall, rss, rc = measured(cmd)
        rows.append((label, wall, rss, rc))
    size, on_disk = parts(store)
    total = sum(size.values())
    print(f"\n{args.files:,} files ({args.shape}), model {args.model}")
    print(f"{'step':<22} {'wall s':>8} {'peak MB':>9} {'exit':>5}")
    for label, wall, rss, rc in rows:
        print(f"{label:<22} {wall:>8.1f} {rss:>9.0f} {rc:>5}")
    print(f"\n{'store part':<28} {'MB':>8}")
    for name, b in sorted(size.items(), key=lambda kv: -kv[1]):
        print(f"{name:<28} {b / 1e6:>8.1f}")
    print(f"{'live version':<28} {total / 1e6:>8.1f}   (target < 150 MB)")
    print(f"{'folder (with the previous)':<28} {on_disk / 1e6:>8.1f}")
    print(f"unchanged re-index peak {rows[1][2]:.0f} MB   (target < 600 MB)")
    if not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
