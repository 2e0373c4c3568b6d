"""Index time by phase, per repository size and embedding model, and a re-index after one edit.

    python bench/index_time.py [--sizes 10k,100k,1m] [--models minilm,static] [--no-results]

Sizes: ``10k`` gson 2.11.0 (Maven Central sources jar, about 15K lines), ``100k``
commons-lang3 3.17.0 (about 100K lines), ``1m`` Django 5.1.4 (the PyPI sdist,
about 1M lines with its tests and docs' code); each is fetched once into the corpus
cache (``~/.cache/vitalrag/corpora``, never committed) and copied for every run.
Models: ``minilm`` the packaged all-MiniLM-L6-v2 on onnxruntime (the default on a
CPU), ``static`` the static model distilled from it (``--model static``). Each
model's one-time build (the ONNX export, the distillation) is done before the runs
and reported apart, as the time it took here or ``cached``.

Each run is what a user runs, in a fresh process: ``vitalrag index COPY --store
NEW --model M --json`` on a fresh copy, then one edit (a small definition appended
to the repository's largest source file, the costliest one file to parse again)
and ``vitalrag index`` again. Two tables give the first index's and the
re-index's phases, grouped: ``start`` (worker processes, loading the model and
opening the store), ``walk+parse`` (survey, walk, parse, graph), ``resolve``,
``views``, ``bm25``, ``embed``, ``write`` (the graph's write and save, the
retrieval snapshot, the switch), and the run's wall time (``vitalrag index``'s
``seconds``: from the command's start, after Python's imports). Every phase of
every run is in the JSON written by ``_common.write_results``; ``--table
RESULTS.json`` prints the tables of such a file again.
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

from _common import write_results

from vitalrag.eval.corpora import fetch
from vitalrag.ingest.walk import walk_repository

SIZES: dict[str, tuple[str, str]] = {
    "10k": ("gson", "maven:com.google.code.gson:gson:2.11.0"),
    "100k": ("commons-lang3", "maven:org.apache.commons:commons-lang3:3.17.0"),
    "1m": ("django", "pypi:Django==5.1.4"),
}
MODELS: dict[str, str] = {"minilm": "all-MiniLM-L6-v2", "static": "static"}
#: phases of ``vitalrag index --json``, grouped into the table's columns
GROUPS: dict[str, tuple[str, ...]] = {
    "start": ("start", "load"),
    "walk+parse": ("survey", "walk", "parse", "graph"),
    "resolve": ("resolve",),
    "views": ("views",),
    "bm25": ("bm25",),
    "embed": ("embed",),
    "write": ("write", "save", "snapshot", "switch"),
}
#: a definition appended by the edit, per language of the edited file
EDITS = {
    ".py": "\n\ndef vitalrag_bench_edit(count):\n    \"\"\"Count one more.\"\"\"\n    return count + 1\n",
    ".java": "\nclass VitalragBenchEdit {\n    int countOneMore(int count) {\n        return count + 1;\n    }\n}\n",
}


def build_models(models: list[str]) -> dict[str, str]:
    """Make each model's one-time artefact (the ONNX export, the distilled static
    model) before the timed runs; how long each took, or ``cached``."""
    from vitalrag.retrieve.dense import make_embedder
    from vitalrag.retrieve.onnx_embed import export_path
    from vitalrag.retrieve.static_embed import StaticEmbedder

    out = {}
    for key in models:
        embedder = make_embedder(MODELS[key], backend="onnx")
        artefact = embedder.path if isinstance(embedder, StaticEmbedder) else export_path(embedder.dir)  # type: ignore[attr-defined]
        cached = artefact.exists()
        start = time.perf_counter()
        _ = embedder.dim  # builds what is missing
        out[key] = "cached" if cached else f"{time.perf_counter() - start:.1f}s"
    return out


def index(path: Path, store: Path, model: str) -> dict:
    env = {**os.environ, "VITALRAG_PROGRESS_EVERY": "0", "VITALRAG_EMBED_BACKEND": "onnx"}
    done = subprocess.run([sys.executable, "-m", "vitalrag", "index", str(path), "--store", str(store),
                           "--model", model, "--json"], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"vitalrag index {path} --model {model} failed: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout)


def edit(root: Path) -> str:
    """Append a definition to the largest source file of a language in ``EDITS``;
    the file's path."""
    files = [f for f in walk_repository(root).files if Path(f.path).suffix in EDITS]
    target = max(files, key=lambda f: (Path(f.abspath).stat().st_size, f.path))
    p = Path(target.abspath)
    p.write_text(p.read_text(encoding="utf-8") + EDITS[p.suffix], encoding="utf-8")
    return target.path


def measure(size: str, model_key: str, work: Path) -> dict:
    name, spec = SIZES[size]
    corpus = fetch(spec)
    copy = work / name
    if copy.exists():
        shutil.rmtree(copy)
    shutil.copytree(corpus.path, copy)
    store = work / f"{name}-{model_key}-store"
    first = index(copy, store, MODELS[model_key])
    edited = edit(copy)
    again = index(copy, store, MODELS[model_key])
    shutil.rmtree(store)
    return {"size": size, "corpus": name, "spec": spec, "model": model_key, "model_name": first["model"],
            "files": first["files"], "loc": first["loc"], "views": first["views"],
            "embedded": first["embedded"], "seconds": first["seconds"], "phases": first["phases"],
            "edited": edited, "reindex_seconds": again["seconds"], "reindex_embedded": again["embedded"],
            "reindex_parsed": again["parsed"], "reindex_phases": again["phases"]}


def _table(rows: list[dict], which: str) -> list[str]:
    """One markdown table: the first index's phases (``which`` ``""``) or the re-index's (``"reindex_"``)."""
    head = ["size", "corpus", "model", "files", "lines", "views", "embedded", *GROUPS, "total s"]
    if which:
        head[3:4] = ["edited file"]
    lines = ["| " + " | ".join(head) + " |",
             "|" + "|".join("---" if i < 3 or h == "edited file" else "---:" for i, h in enumerate(head)) + "|"]
    for r in rows:
        phases = r[f"{which}phases"]
        groups = [sum(phases.get(p, 0.0) for p in names) for names in GROUPS.values()]
        files = r["edited"] if which else f"{r['files']:,}"
        cells = [r["size"], r["corpus"], r["model"], files, f"{r['loc']:,}", f"{r['views']:,}",
                 f"{r[f'{which}embedded']:,}", *(f"{g:.2f}" for g in groups), f"{r[f'{which}seconds']:.2f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def table(rows: list[dict], builds: dict[str, str]) -> str:
    return "\n".join(["first index, seconds by phase:", "", *_table(rows, ""), "",
                      "re-index after one edit (a definition appended to the file named), seconds by phase:", "",
                      *_table(rows, "reindex_"), "",
                      "one-time model builds before the runs: " + ", ".join(f"{k} {v}" for k, v in builds.items())])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10k,100k,1m", help=f"comma-separated, of {', '.join(SIZES)}")
    ap.add_argument("--models", default="minilm,static", help=f"comma-separated, of {', '.join(MODELS)}")
    ap.add_argument("--no-results", action="store_true", help="print the table only")
    ap.add_argument("--table", metavar="RESULTS.json", help="print the tables of an earlier run's results")
    args = ap.parse_args()
    if args.table:
        done = json.loads(Path(args.table).read_text())
        print(table(done["rows"], done["builds"]))
        return
    sizes, models = args.sizes.split(","), args.models.split(",")
    for bad in [s for s in sizes if s not in SIZES] + [m for m in models if m not in MODELS]:
        raise SystemExit(f"unknown size or model {bad!r}: sizes {', '.join(SIZES)}; models {', '.join(MODELS)}")
    for size in sizes:  # fetched before anything is timed
        fetch(SIZES[size][1])
    builds = build_models(models)
    rows = []
    with tempfile.TemporaryDirectory(prefix="vitalrag-index-time-") as tmp:
        for size in sizes:
            for model in models:
                rows.append(measure(size, model, Path(tmp)))
                r = rows[-1]
                print(f"{size} {r['corpus']} {model}: {r['seconds']:.1f}s, re-index {r['reindex_seconds']:.1f}s",
                      file=sys.stderr)
    text = table(rows, builds)
    print(text)
    if not args.no_results:
        write_results("index_time", {"sizes": sizes, "models": models, "builds": builds, "rows": rows,
                                     "cores": os.cpu_count()}, text)


if __name__ == "__main__":
    main()
