"""Natural-language questions with file-level labels: does ``search`` rank the
files that answer first, and does ``context`` show them within a budget?
VitalRAG beside BM25 over 40-line chunks and semble, in one run.

    python bench/nl_quality.py [--corpora flask,requests,click | dev | ours | all]
        [--questions bench/nl_questions | bench/lang_questions]
        [--budgets 500,1000,2000,4000,8000] [--systems context,search,bm25-chunks,semble]
        [--semble-python PATH] [--semble-model DIR] [--neo4j URI] [--out runs/nl]

Questions (JSON lists in the semble benchmark's form: ``query``, ``relevant``,
``secondary``, ``category``):

- ``dev``: requests, click and flask, from ``../shared/bench/nl-questions/``
  (``--dev-questions``), the semble benchmark's own questions;
- ``bench/nl_questions/``: werkzeug, pytest, jsoup, commons-csv and commons-io,
  written for this bench by reading the code at the pinned revision, before
  any ranking was looked at;
- ``bench/lang_questions/`` (``--questions``; ``--corpora ours`` for these
  alone): one repository for each of C, C++, Kotlin, Scala, Swift, PHP, Ruby,
  Lua, Bash, Elixir, Haskell and Zig, written the same way, with documentation
  questions (category ``docs``) whose answer is a doc file. Every file of these
  repositories is given to each system (Python and Java: the language's files,
  as the semble benchmark does).

Each repository is indexed at its pinned revision (``repos.json``), files under
its ``benchmark_root`` only, with ``vitalrag index`` as a user runs it (the
default model; the index is kept under ``--out`` and reused on the next run).
Repositories come from git mirrors (``--mirrors``, default ``$VITALRAG_MIRRORS``
or ``/work/.mirror``; ``OWNER+NAME/repo``, as the search tool's fetch leaves it).

Metrics, means over questions; a target is a labelled file (relevant and
secondary together), covered by a unit whose path ends with it:

- **NDCG@10**: over a ranked list of units (``search``: its views as the CLI
  lists them; BM25 and semble: their chunks), each target gains at the rank of
  the first unit covering it; the ideal puts min(10, targets) at the top;
- **recall@B**: the share of targets covered by what an agent reads within B
  tokens (cl100k). ``context``: the context text (paths, headers and line
  numbers counted); BM25 chunks: chunks with a path header in rank order, the
  last clipped to whole lines; semble: its chunks' text in rank order, the last
  clipped (as semble's own benchmark counts: chunk text only).

Systems:

- ``search`` / ``context``: VitalRAG as installed (``Retriever.search`` as the
  ``search`` command calls it; ``context`` with its default policy);
- ``bm25-chunks``: BM25 (VitalRAG's code tokenizer) over 40-line chunks;
- ``semble``: semble 0.7.0 in its own virtualenv (``--semble-python``; make it
  with ``bench/semble_setup.sh``) with a static model distilled offline from the
  packaged all-MiniLM-L6-v2 (``--semble-model``; the same script makes it);
- ``search@neo4j`` / ``context@neo4j`` (``--neo4j URI``): the same two served by
  Neo4j after ``vitalrag push``.

Results: a markdown table on stdout (overall, per repository, per category),
and ``bench/results/<commit>-nl_quality.json`` and ``.md`` (``--out`` keeps the
indexes and the rows).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from _common import write_results

from vitalrag.context import ContextSettings, context_from
from vitalrag.errors import InputError
from vitalrag.index import Index
from vitalrag.retrieve.api import Retriever
from vitalrag.retrieve.query import Query
from vitalrag.retrieve.sparse import SparseIndex
from vitalrag.tokens import get_counter

HERE = Path(__file__).resolve().parent
DEV = HERE.parent.parent / "shared" / "bench" / "nl-questions"
OURS = HERE / "nl_questions"
BUDGETS = (500, 1000, 2000, 4000, 8000)
SYSTEMS = ("search", "context", "bm25-chunks", "semble")
EXT = {"python": (".py",), "java": (".java",)}
MIRRORS = {"flask": "pallets+flask", "requests": "psf+requests", "click": "pallets+click",
           "werkzeug": "pallets+werkzeug", "pytest": "pytest-dev+pytest", "jsoup": "jhy+jsoup",
           "commons-csv": "apache+commons-csv", "commons-io": "apache+commons-io"}
SEARCH_K = 10


@dataclass(frozen=True)
class Repo:
    name: str
    language: str
    revision: str
    root: str
    questions: Path
    url: str = ""

    def mirror(self, mirrors: Path) -> Path:
        """The git directory of its mirror: ``OWNER+NAME/repo`` (or its ``.git``)."""
        owner_name = "+".join(self.url.removesuffix(".git").rstrip("/").split("/")[-2:])
        folder = mirrors / MIRRORS.get(self.name, owner_name) / "repo"
        return folder / ".git" if (folder / ".git").is_dir() else folder

    def keeps(self, name: str) -> bool:
        """Whether the bench indexes the file ``name``: the language's files for
        Python and Java (the semble benchmark's own rule), every file otherwise
        (what VitalRAG indexes of them is its own choice)."""
        ext = EXT.get(self.language)
        return ext is None or name.endswith(ext)


@dataclass(frozen=True)
class Question:
    id: str
    repo: str
    query: str
    category: str
    targets: tuple[str, ...]


def load_repos(dev: Path, ours: Path) -> dict[str, Repo]:
    repos: dict[str, Repo] = {}
    for folder in (dev, ours):
        listing = folder / "repos.json"
        if not listing.exists():
            continue
        for r in json.loads(listing.read_text()):
            repos[r["name"]] = Repo(r["name"], r["language"], r["revision"], r["benchmark_root"],
                                    folder / f"{r['name']}.json", r.get("url", ""))
    return repos


def load_questions(repo: Repo) -> list[Question]:
    out = []
    for i, q in enumerate(json.loads(repo.questions.read_text()), 1):
        targets = [t if isinstance(t, str) else t["path"] for t in [*q["relevant"], *q.get("secondary", [])]]
        out.append(Question(f"{repo.name}/{i}", repo.name, q["query"], q.get("category", "?"),
                            tuple(dict.fromkeys(targets))))
    return out


# -- the repository at its revision ----------------------------------------------------

def git(git_dir: Path, *args: str, data: bytes | None = None) -> bytes:
    return subprocess.run(["git", "--git-dir", str(git_dir), *args], input=data, check=True,
                          capture_output=True).stdout


def snapshot(git_dir: Path, repo: Repo, dest: Path) -> None:
    """The files of ``repo.language`` under its benchmark root at its revision,
    blob by blob (a mirror may lack large blobs, which ``git archive`` trips on)."""
    if (dest / ".complete").exists():
        return
    names = [n for n in git(git_dir, "ls-tree", "-r", "--name-only", "-z", repo.revision, "--",
                            repo.root).decode().split("\0")
             if repo.keeps(n)]
    batch = git(git_dir, "cat-file", "--batch", data="".join(f"{repo.revision}:{n}\n" for n in names).encode())
    pos = 0
    for name in names:
        end = batch.index(b"\n", pos)
        header = batch[pos:end].split()
        pos = end + 1
        if len(header) < 3 or header[1] != b"blob":
            continue
        size = int(header[2])
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(batch[pos:pos + size])
        pos += size + 1
    (dest / ".complete").write_text(repo.revision)


def index(tree: Path, store: Path, name: str, model: str | None = None) -> float:
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "vitalrag", "index", str(tree), "--store", str(store),
                           "--name", name, *(["--model", model] if model else [])], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"vitalrag index {tree} failed: {proc.stderr.strip()[-2000:]}")
    return time.perf_counter() - t


# -- answers: a ranked unit list, and what an agent reads within a budget -------------

Unit = tuple[str, int, int]  # path, first line, last line


def covered(target: str, path: str) -> bool:
    return path == target or path.endswith("/" + target)


def ndcg(units: Sequence[Unit], targets: Sequence[str], k: int = 10) -> float:
    dcg = 0.0
    for t in targets:
        for rank, (path, _, _) in enumerate(units[:k], 1):
            if covered(t, path):
                dcg += 1 / math.log2(rank + 1)
                break
    ideal = sum(1 / math.log2(i + 1) for i in range(1, min(k, len(targets)) + 1))
    return dcg / ideal if ideal else 0.0


def recall(paths: set[str], targets: Sequence[str]) -> float:
    return sum(any(covered(t, p) for p in paths) for t in targets) / len(targets)


def fill(chunks: Sequence[tuple[str, str]], budget: int, counter, header: bool) -> set[str]:  # noqa: ANN001
    """The paths of the (path, text) chunks an agent reads within ``budget``, in
    order, the last clipped to whole lines (``header``: a path line counts too)."""
    used = 0
    paths: set[str] = set()
    for path, text in chunks:
        head = f"--- {path}\n" if header else ""
        n = counter.count(head + text)
        if used + n <= budget:
            used += n
            paths.add(path)
            continue
        lines = text.splitlines(keepends=True)
        for keep in range(len(lines) - 1, 0, -1):
            if used + counter.count(head + "".join(lines[:keep])) <= budget:
                paths.add(path)
                break
        break
    return paths


class Chunks:
    """BM25 over 40-line chunks of every indexed file."""

    def __init__(self, tree: Path, repo: Repo, lines: int = 40) -> None:
        self.chunks: list[tuple[str, int, int, str]] = []
        for f in sorted(p for p in tree.rglob("*") if p.is_file() and p.name != ".complete"):
            rel = f.relative_to(tree).as_posix()
            if not repo.keeps(rel):
                continue
            data = f.read_bytes()
            if b"\0" in data[:8192] or len(data) > 1_000_000:  # binary or over-size, as the index skips them
                continue
            file_lines = data.decode(errors="replace").splitlines()
            for start in range(0, len(file_lines), lines):
                part = file_lines[start:start + lines]
                self.chunks.append((rel, start + 1, start + len(part), "\n".join(part) + "\n"))
        self.index = SparseIndex.build([c[3] for c in self.chunks])

    def ranked(self, query: str) -> list[tuple[str, int, int, str]]:
        return [self.chunks[pos] for pos, _ in self.index.search(query, len(self.chunks))]


def semble_rankings(python: str, model: str, tree: Path, qs: Sequence[Question], k: int) -> dict[str, list]:
    request = {"root": str(tree), "model": model, "k": k, "queries": {q.id: q.query for q in qs}}
    proc = subprocess.run([python, str(HERE / "semble_run.py")], input=json.dumps(request),
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"semble failed: {proc.stderr.strip()[-2000:]}")
    return json.loads(proc.stdout)


def context_paths(r: Retriever, q: Question, budget: int) -> tuple[set[str], float, int]:
    t = time.perf_counter()
    try:
        result = context_from(r, Query.of(q.query, repo=q.repo), ContextSettings(budget=budget))
    except InputError:  # a refused question finds nothing
        return set(), (time.perf_counter() - t) * 1000, 0
    ms = (time.perf_counter() - t) * 1000
    return {s.path for s in result.record.slots if s.spans}, ms, result.record.tokens


# -- report -----------------------------------------------------------------------------

def table(rows: list[dict], systems: Sequence[str], budgets: Sequence[int], by: str | None) -> str:
    groups: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        groups["all" if by is None else row[by]].append(row)
    head = ["group", "system", "n", "NDCG@10", *[f"R@{b}" for b in budgets]]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * 3 + "---:|" * (1 + len(budgets))]
    for group in sorted(groups):
        for system in systems:
            pick = [r for r in groups[group] if r["system"] == system]
            if not pick:
                continue
            cells = [group, system, str(len(pick))]
            nd = [r["ndcg"] for r in pick if r.get("ndcg") is not None]
            cells.append(f"{statistics.mean(nd):.3f}" if nd else "")
            for b in budgets:
                rec = [r["recall"][str(b)] for r in pick if str(b) in r.get("recall", {})]
                cells.append(f"{statistics.mean(rec):.3f}" if rec else "")
            out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpora", default="all",
                    help="names, 'dev' (requests, click, flask), 'ours' (--questions) or 'all'")
    ap.add_argument("--budgets", default=",".join(map(str, BUDGETS)))
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--dev-questions", default=str(DEV))
    ap.add_argument("--questions", default=str(OURS),
                    help="our questions' folder (bench/lang_questions: one repository per language)")
    ap.add_argument("--mirrors", default=os.environ.get("VITALRAG_MIRRORS", "/work/.mirror"))
    ap.add_argument("--semble-python", default=str(Path.home() / ".cache/vitalrag-semble-venv/bin/python"))
    ap.add_argument("--semble-model", default=str(Path.home() / ".cache/vitalrag-semble-model"))
    ap.add_argument("--neo4j", metavar="URI", default=None, help="also serve each index from Neo4j")
    ap.add_argument("--out", default="runs/nl")
    ap.add_argument("--no-results", action="store_true", help="do not write bench/results/")
    ap.add_argument("--model", default=None, help="the embedding model to index with (default: vitalrag's)")
    ap.add_argument("--reuse-index", action="store_true",
                    help="query an index left under --out as it is (ranking changes need no re-index)")
    args = ap.parse_args()

    repos = load_repos(Path(args.dev_questions), Path(args.questions))
    if args.corpora == "all":
        names = list(repos)
    elif args.corpora in ("dev", "ours"):
        folder = Path(args.dev_questions if args.corpora == "dev" else args.questions)
        names = [n for n in repos if repos[n].questions.parent == folder]
    else:
        names = args.corpora.split(",")
    missing = [n for n in names if n not in repos]
    if missing or not names:
        raise SystemExit(f"no questions for {', '.join(missing) or args.corpora!r} "
                         f"(looked in {args.dev_questions} and {args.questions})")
    budgets = [int(b) for b in args.budgets.split(",")]
    systems = args.systems.split(",")
    if args.neo4j:
        systems += [s + "@neo4j" for s in ("search", "context") if s in systems]
    counter = get_counter()
    out = Path(args.out)
    rows: list[dict] = []
    latency: list[float] = []
    server = None
    if args.neo4j:
        from vitalrag.graph.neo4j import Neo4jStore

        server = Neo4jStore(args.neo4j)
    for name in names:
        repo = repos[name]
        qs = load_questions(repo)
        tree = out / name / f"tree-{repo.revision[:12]}"
        snapshot(repo.mirror(Path(args.mirrors)), repo, tree)
        store = out / name / "store"
        secs = 0.0 if args.reuse_index and (store / "current.json").exists() else index(tree, store, name, args.model)
        print(f"{name}: {len(qs)} questions, index {secs:.1f}s", file=sys.stderr)
        r = Index.open(str(store)).retriever()
        served = None
        if server is not None:
            subprocess.run([sys.executable, "-m", "vitalrag", "push", "--store", str(store), "--to", args.neo4j,
                            "--repo", name], check=True, capture_output=True)
            served = Index.open(args.neo4j).retriever()
        chunks = Chunks(tree, repo) if "bm25-chunks" in systems else None
        semble = (semble_rankings(args.semble_python, args.semble_model, tree, qs, 100)
                  if "semble" in systems else {})
        for q in qs:
            for system in systems:
                row: dict = {"question": q.id, "repo": name, "category": q.category, "system": system,
                             "recall": {}}
                if system in ("search", "search@neo4j"):
                    rr = served if system.endswith("@neo4j") else r
                    assert rr is not None
                    try:
                        hits = rr.search(q.query, k=SEARCH_K, repo=name)
                    except InputError as e:  # a refused question finds nothing
                        print(f"  {q.id}: {e}", file=sys.stderr)
                        hits = []
                    row["ndcg"] = ndcg([(h.view.path, h.view.start_line, h.view.end_line) for h in hits],
                                       q.targets)
                    row["top"] = [h.view.path for h in hits[:5]]
                elif system in ("context", "context@neo4j"):
                    rr = served if system.endswith("@neo4j") else r
                    assert rr is not None
                    for b in budgets:
                        paths, ms, _ = context_paths(rr, q, b)
                        row["recall"][str(b)] = recall(paths, q.targets)
                        if system == "context":
                            latency.append(ms)
                elif system == "bm25-chunks":
                    assert chunks is not None
                    ranked = chunks.ranked(q.query)
                    row["ndcg"] = ndcg([(p, a, b) for p, a, b, _ in ranked], q.targets)
                    for b in budgets:
                        row["recall"][str(b)] = recall(
                            fill([(p, t) for p, _, _, t in ranked], b, counter, header=True), q.targets)
                elif system == "semble":
                    top, read = semble[q.id]["ndcg"], semble[q.id]["read"]
                    row["ndcg"] = ndcg([(c["path"], c["start"], c["end"]) for c in top], q.targets)
                    row["top"] = [c["path"] for c in top[:5]]
                    for b in budgets:
                        row["recall"][str(b)] = recall(
                            fill([(c["path"], c["text"]) for c in read], b, counter, header=False), q.targets)
                rows.append(row)
        r.store.close()
        out.mkdir(parents=True, exist_ok=True)
        (out / "rows.json").write_text(json.dumps(rows))
    # search and context are two views of one system: show them on one line
    merged: list[dict] = []
    for row in rows:
        system = row["system"]
        if system.startswith("context"):
            system = system.replace("context", "vitalrag")
            pair = next((x for x in merged if x["question"] == row["question"] and x["system"] == system), None)
            if pair is not None:
                pair["recall"] = row["recall"]
                continue
            row = {**row, "ndcg": None}
        merged.append({**row, "system": system.replace("search", "vitalrag")})
    shown = list(dict.fromkeys(m["system"] for m in merged))
    report = ["## overall", table(merged, shown, budgets, None),
              "\n## per repository", table(merged, shown, budgets, "repo"),
              "\n## per category", table(merged, shown, budgets, "category")]
    if latency:
        latency.sort()
        report.append(f"\ncontext latency (warm, all budgets): p50 {latency[len(latency) // 2]:.0f} ms, "
                      f"p95 {latency[int(len(latency) * 0.95)]:.0f} ms")
    text = "\n".join(report)
    print(text)
    if not args.no_results:
        write_results("nl_quality", {"budgets": budgets, "systems": shown, "rows": merged,
                                     "corpora": names}, text)


if __name__ == "__main__":
    main()
