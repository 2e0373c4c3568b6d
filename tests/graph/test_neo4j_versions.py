"""Versions in the Neo4j store (issue 20 item 6, issue 18 item 4): a push or an
index run is switched to at once, a killed one leaves the old copy whole, and a
reader during a write sees the old copy or the new one, never a mix."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests_support import make_python_tree

from test_store_suite import Graph, obj
from vitalrag.cli import main
from vitalrag.errors import InputError, SchemaMismatch, StoreBusy
from vitalrag.graph.memory import MemoryStore
from vitalrag.kernel import pause
from vitalrag.model import View
from vitalrag.retrieve.index import RetrievalIndex

pytest.importorskip("neo4j", reason="the neo4j driver is not installed (pip install -e '.[dev]')")

from vitalrag.graph.neo4j import Neo4jSettings, Neo4jStore  # noqa: E402
from vitalrag.graph.neo4j_views import Neo4jViews  # noqa: E402
from vitalrag.retrieve.server_index import ServerViews  # noqa: E402

MODEL = "hashing-64"


def _stats(vs: list[View]) -> tuple[dict[str, int], int]:
    """The BM25 statistics a writer records with ``vs``: document frequencies, total length."""
    from collections import Counter

    return Counter(t for v in vs for t in set(v.text.split())), sum(len(v.text.split()) for v in vs)


def _cli(*args: str) -> Any:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout) if "--json" in args else result.output


def _raw(uri: str, query: str, **params: Any) -> list[dict[str, Any]]:
    import neo4j

    with neo4j.GraphDatabase.driver(Neo4jSettings.from_env(uri).uri) as driver:
        return [dict(r) for r in driver.execute_query(query, parameters_=params).records]


def _tree(root: Path, files: int, doc: str) -> Path:
    make_python_tree(root, files)
    for f in (root / "pkg").glob("m*.py"):
        f.write_text(f.read_text().replace('"""Function', f'"""{doc} function'))
    return root


@pytest.fixture
def copies(tmp_path: Path, repo: str) -> dict[str, Any]:
    """Two embedded indexes of one repository name that differ in objects removed,
    changed and kept, and what a reader of each should see."""
    out: dict[str, Any] = {}
    for name, files, doc in (("v1", 40, "Old"), ("v2", 30, "New")):
        src = _tree(tmp_path / f"src-{name}", files, doc)
        folder = tmp_path / name
        _cli("index", str(src), "--store", str(folder), "--name", repo, "--model", MODEL, "--json")
        mem = MemoryStore.open(folder, create=False)
        out[name] = {"folder": folder, "src": src, "export": mem.export(repo), "counts": mem.counts(repo),
                     "views": len(RetrievalIndex.load(folder).views)}
    assert out["v1"]["export"] != out["v2"]["export"]
    return out


def _seen(uri: str, repo: str) -> tuple[dict[str, Any], int]:
    """The graph and the view count of ``repo`` one reader sees, in one snapshot."""
    store = Neo4jStore.from_uri(uri)
    try:
        with store.snapshot():
            return store.export(repo), Neo4jViews(store).count([repo])
    finally:
        store.close()


def _which(seen: tuple[dict[str, Any], int], copies: dict[str, Any]) -> str:
    for name in ("v1", "v2"):
        if seen == (copies[name]["export"], copies[name]["views"]):
            return name
    return "mixed"


@pytest.mark.neo4j
@pytest.mark.parametrize("where", [pause.neo4j_write(1), pause.neo4j_write(4), pause.NEO4J_FLIP],
                         ids=["first-batch", "mid-push", "before-switch"])
def test_a_push_killed_anywhere_leaves_the_old_copy_whole(copies, neo4j_url, repo, open_neo4j, where, tmp_path,
                                                          monkeypatch):
    open_neo4j()  # purges the namespace at the end
    _cli("push", "--store", str(copies["v1"]["folder"]), "--to", neo4j_url, "--json")
    marker = tmp_path / "paused"
    env = {**os.environ, **pause.env(where, marker), "VITALRAG_NEO4J_BATCH": "25",
           "VITALRAG_NEO4J_LEASE": "2"}
    proc = subprocess.Popen([sys.executable, "-m", "vitalrag", "push", "--store", str(copies["v2"]["folder"]),
                             "--to", neo4j_url], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not marker.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marker.exists(), proc.communicate()[1].decode()[-2000:]
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()

    assert _which(_seen(neo4j_url, repo), copies) == "v1"
    assert _cli("stats", "--store", neo4j_url, "--repo", repo, "--json") == {repo: copies["v1"]["counts"]}
    old_only = f"{repo}:pkg/m35.py:f35"  # in v1 (40 files), not in v2 (30)
    assert _cli("show", old_only, "--store", neo4j_url, "--json")["object"]["id"] == old_only
    hits = _cli("search", "function thirty five", "--store", neo4j_url, "--repo", repo, "--json")
    v1_ids = {n["id"] for n in copies["v1"]["export"]["nodes"]}
    assert hits and all(h["view"]["object_id"] in v1_ids for h in hits)

    # the next push waits out the killed one's lease, undoes what it wrote, and switches
    monkeypatch.setenv("VITALRAG_NEO4J_GRACE", "0")
    _cli("push", "--store", str(copies["v2"]["folder"]), "--to", neo4j_url, "--wait", "--json")
    assert _which(_seen(neo4j_url, repo), copies) == "v2"
    result = CliRunner().invoke(main, ["show", old_only, "--store", neo4j_url])
    assert result.exit_code == 1 and "no object with id" in result.output
    (left,) = _raw(neo4j_url, "MATCH (n:CodeObject {repo: $repo}) RETURN count(n) AS n", repo=repo)
    assert left["n"] == len(copies["v2"]["export"]["nodes"])  # nothing of v1 or the killed push is left


def _read_until(uri: str, repo: str, copies: dict[str, Any], stop: threading.Event, seen: list[str]) -> None:
    while not stop.is_set():
        seen.append(_which(_seen(uri, repo), copies))


@pytest.mark.neo4j
@pytest.mark.parametrize("writer", ["push", "index"])
def test_readers_during_a_write_see_the_old_copy_or_the_new_one(copies, neo4j_url, repo, open_neo4j, writer,
                                                               tmp_path, monkeypatch):
    """Two readers loop over one snapshot each (the graph and the view count) while a
    push, or an incremental index run, replaces v1 by v2 in many small transactions."""
    open_neo4j()
    if writer == "push":
        _cli("push", "--store", str(copies["v1"]["folder"]), "--to", neo4j_url, "--json")
        write = ["push", "--store", str(copies["v2"]["folder"]), "--to", neo4j_url, "--json"]
    else:
        src = tmp_path / "live"
        shutil.copytree(copies["v1"]["src"], src)
        build = ["--store", neo4j_url, "--name", repo, "--model", MODEL, "--index-dir", str(tmp_path / "b"),
                 "--json"]
        _cli("index", str(src), *build)
        shutil.rmtree(src)
        shutil.copytree(copies["v2"]["src"], src)
        write = ["index", str(src), *build]
    assert _which(_seen(neo4j_url, repo), copies) == "v1"
    monkeypatch.setenv("VITALRAG_NEO4J_BATCH", "25")
    stop = threading.Event()
    seen: list[list[str]] = [[], []]
    readers = [threading.Thread(target=_read_until, args=(neo4j_url, repo, copies, stop, s)) for s in seen]
    for t in readers:
        t.start()
    try:
        done = _cli(*write)
    finally:
        stop.set()
        for t in readers:
            t.join()
    if writer == "index":
        assert done["parsed"] < done["files"]  # incremental: only the changed files were parsed
    reads = seen[0] + seen[1]
    assert "mixed" not in reads and reads.count("v1") >= 2, reads
    assert _which(_seen(neo4j_url, repo), copies) == "v2"


@pytest.mark.neo4j
def test_a_failed_write_is_undone_and_its_lease_given_back(open_neo4j, repo):
    store, reader = open_neo4j(), open_neo4j()
    Graph(repo).load(store)
    before = reader.export(repo)
    with pytest.raises(InputError, match="not JSON"):
        with store.writing([repo]):
            store.delete_files(repo, ["pkg/a.py"])
            store.upsert_objects([obj(repo, "file", "pkg/new.py")])
            assert reader.export(repo) == before  # nothing seen while it is written
            store.set_meta(repo, {"bad": object()})
    assert reader.export(repo) == before
    (n,) = _raw(store.location, "MATCH (x:CodeObject {repo: $repo}) RETURN count(x) AS n", repo=repo)
    assert n["n"] == len(before["nodes"])
    store.upsert_objects([obj(repo, "file", "pkg/c.py")])  # the lease was given back


@pytest.mark.neo4j
def test_a_live_lease_is_refused_and_an_expired_one_cleaned_up(open_neo4j, repo, monkeypatch):
    monkeypatch.setenv("VITALRAG_NEO4J_LEASE", "1")
    first, second = open_neo4j(), open_neo4j()
    Graph(repo).load(first)
    before = second.export(repo)
    block = first.writing([repo])
    block.__enter__()  # a writer that dies in its block: it never exits
    first.delete_repository(repo)
    with pytest.raises(StoreBusy, match=f"another writer is writing repository '{repo}'"):
        second.upsert_objects([obj(repo, "file", "pkg/c.py")])
    first._versions._scope.stop.set()  # it stops renewing, as a killed process would
    first._versions._scope = None
    time.sleep(1.2)
    second.upsert_objects([obj(repo, "file", "pkg/c.py")])  # takes over, undoes the dead one's rows
    after = second.export(repo)
    assert [n for n in after["nodes"] if n["id"] != f"{repo}:pkg/c.py"] == before["nodes"]
    assert after["edges"] == before["edges"]


@pytest.mark.neo4j
def test_what_a_switch_replaced_is_kept_for_pinned_readers_then_collected(open_neo4j, repo, monkeypatch):
    monkeypatch.setenv("VITALRAG_NEO4J_GRACE", "600")
    writer, reader = open_neo4j(), open_neo4j()
    g = Graph(repo)
    g.load(writer)
    before = reader.export(repo)
    with reader.snapshot():
        assert reader.export(repo) == before  # pinned here
        writer.delete_files(repo, ["pkg/a.py", "pkg/b.py"])
        assert reader.export(repo) == before  # still the version it pinned, whole
    assert reader.export(repo) != before  # a new read sees the switch
    count = "MATCH (x:CodeObject {repo: $repo}) RETURN count(x) AS n"
    assert _raw(writer.location, count, repo=repo)[0]["n"] == len(g.objects)  # kept for the grace
    writer.collect(repo, grace=0)
    assert _raw(writer.location, count, repo=repo)[0]["n"] == len(reader.export(repo)["nodes"])


@pytest.mark.neo4j
def test_a_search_while_a_version_is_written_finds_k_views_of_the_live_one(open_neo4j, repo):
    """The fulltext and vector indexes hold the unswitched version's views too: a
    search keeps the live ones and asks for more until it has k."""
    import numpy as np

    writer, reader = open_neo4j(), open_neo4j()
    writer.upsert_objects([obj(repo, "repository"), obj(repo, "file", "a.py")])
    views = Neo4jViews(writer)

    def make(tag: str, n: int) -> tuple[list[View], Any]:
        vs = [View(f"{repo}|{tag}{i}", f"{repo}:a.py", "body", "a.py", 1, 1, f"needle {tag} {i}", f"{tag}{i}",
                   repo=repo) for i in range(n)]
        return vs, np.ones((n, 8), dtype=np.float32)

    live, live_vectors = make("old", 5)
    views.write_repository(repo, live, str.split, live_vectors, "m", _stats(live))
    with writer.writing([repo]):
        staged, staged_vectors = make("new", 40)
        views.write_repository(repo, live + staged, str.split, np.concatenate([live_vectors, staged_vectors]), "m",
                               _stats(live + staged))
        index = ServerViews.open(reader)
        assert index is not None
        hits = index.bm25("needle", 5, frozenset([repo]))
        assert sorted(v.id for v, _ in hits) == sorted(v.id for v in live)
        nearest = index.nearest(np.ones(8, dtype=np.float32), 5, None)
        assert sorted(v.id for v, _ in nearest if v.repo == repo) == sorted(v.id for v in live)



@pytest.mark.neo4j
def test_a_rescored_search_reads_past_the_unswitched_views_it_leaves_out(open_neo4j, repo):
    """With BM25 statistics the server's hits are rescored from their search texts
    (``fulltext_terms``): the hits it leaves out (an unswitched version's, here all of
    Lucene's first 20: shorter texts score higher) still count as fetched, so the
    search asks for more instead of taking the index for exhausted."""
    import numpy as np

    writer, reader = open_neo4j(), open_neo4j()
    writer.upsert_objects([obj(repo, "repository"), obj(repo, "file", "a.py")])
    views = Neo4jViews(writer)

    def make(tag: str, n: int, pad: str) -> list[View]:
        return [View(f"{repo}|{tag}{i}", f"{repo}:a.py", "body", "a.py", 1, 1, f"needle {tag}{i}{pad}", f"{tag}{i}",
                     repo=repo) for i in range(n)]

    live = make("old", 5, " pad pad pad pad pad pad")
    views.write_repository(repo, live, str.split, np.ones((5, 8), dtype=np.float32), "m", _stats(live))
    with writer.writing([repo]):
        every = live + make("new", 40, "")
        views.write_repository(repo, every, str.split, np.ones((45, 8), dtype=np.float32), "m", _stats(every))
        index = ServerViews.open(reader)
        assert index is not None
        found = Neo4jViews(reader).fulltext_terms(["needle"], 20, [repo])
        assert found.fetched == 20 and found.hits == []  # Lucene's first 20 are the unswitched version's
        hits = index.bm25("needle", 5, frozenset([repo]))
        assert sorted(v.id for v, _ in hits) == sorted(v.id for v in live)

@pytest.mark.neo4j
def test_a_database_of_another_layout_says_to_index_again(open_neo4j, repo):
    """Before 1.0 a layout change means re-indexing: nothing migrates a database an
    earlier VitalRAG wrote, opening it is one ``SchemaMismatch``."""
    from vitalrag.graph import neo4j_queries as q

    store = open_neo4j()
    store.upsert_objects([obj(repo, "repository")])
    schema = "MATCH (v:VitalRAGSchema {name: 'vitalrag'}) SET v.layout = $layout"
    _raw(store.location, schema, layout=q.LAYOUT - 1)
    try:
        with pytest.raises(SchemaMismatch, match=rf"\(layout {q.LAYOUT - 1}\), this VitalRAG reads .*"
                                                 rf"\(layout {q.LAYOUT}\); re-index into another database"):
            Neo4jStore.from_uri(store.location)
    finally:
        _raw(store.location, schema, layout=q.LAYOUT)


def test_grace_and_lease_come_from_the_environment():
    s = Neo4jSettings.from_env("bolt://h:7687", {"VITALRAG_NEO4J_GRACE": "0", "VITALRAG_NEO4J_LEASE": "2.5"})
    assert (s.grace, s.lease) == (0.0, 2.5)
    d = Neo4jSettings.from_env("bolt://h:7687", {})
    assert (d.grace, d.lease) == (10.0, 30.0)
    for name, bad in (("VITALRAG_NEO4J_GRACE", "-1"), ("VITALRAG_NEO4J_LEASE", "0"), ("VITALRAG_NEO4J_LEASE", "x"),
                      ("VITALRAG_NEO4J_GRACE", "inf")):
        with pytest.raises(InputError, match=name):
            Neo4jSettings.from_env("bolt://h:7687", {name: bad})


@pytest.mark.neo4j
def test_a_deleted_repository_is_collected_by_the_next_write_of_any_repository(open_neo4j, repo, monkeypatch):
    """Nobody writes a deleted repository again: the next writer of another one
    removes its rows once the grace its own writer recorded is over, views included."""
    import numpy as np

    monkeypatch.setenv("VITALRAG_NEO4J_GRACE", "1")
    store = open_neo4j()
    gone, other = f"{repo}gone", f"{repo}other"
    for name in (gone, other):
        store.upsert_objects([obj(name, "repository"), obj(name, "file", "a.py")])
    Neo4jViews(store).write_repository(gone, [View(f"{gone}|v", f"{gone}:a.py", "body", "a.py", 1, 1, "needle",
                                                   "v", repo=gone)],
                                       str.split, np.ones((1, 8), dtype=np.float32), "m", ({"needle": 1}, 1))
    Neo4jViews(store).delete_repositories([gone])
    store.delete_repository(gone)
    store.delete_objects([gone])
    rows = "MATCH (x) WHERE x.repo = $repo AND NOT x:RepositoryVersion RETURN count(x) AS n"
    left = _raw(store.location, rows, repo=gone)[0]["n"]  # kept for the grace
    time.sleep(1.5)
    store.upsert_objects([obj(other, "file", "b.py")])  # a write of another repository
    assert left > 0 and _raw(store.location, rows, repo=gone)[0]["n"] == 0
    assert store.find_objects(repo=other, kind="file")  # and the other one is whole
    # a repository's own writer's grace holds: readers pinned to what it replaced keep it
    monkeypatch.setenv("VITALRAG_NEO4J_GRACE", "600")
    patient = open_neo4j()
    kept = f"{repo}kept"
    patient.upsert_objects([obj(kept, "repository"), obj(kept, "file", "a.py")])
    patient.delete_files(kept, ["a.py"])
    before = _raw(store.location, rows, repo=kept)[0]["n"]
    time.sleep(1.5)
    store.upsert_objects([obj(other, "file", "c.py")])  # grace 1 s: not the one that counts for kept
    assert before > 0 and _raw(store.location, rows, repo=kept)[0]["n"] == before
