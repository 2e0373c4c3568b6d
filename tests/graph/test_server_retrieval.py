"""The server store serves retrieval: views and embeddings in Neo4j, searched
there, from a folder that holds nothing (issue 18)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from vitalrag.cli import main
from vitalrag.graph import memory, version
from vitalrag.graph import neo4j_queries as q
from vitalrag.kernel.locks import writer_lock
from vitalrag.retrieve import index as index_mod
from vitalrag.retrieve.index import RetrievalIndex

FIXTURES = Path(__file__).parents[1] / "fixtures" / "repos"
MODEL = "hashing-64"
QUERIES = ["make an engine and run it", "slugify text", "helper local runner go"]


def test_lucene_terms_are_escaped():
    assert q.lucene_escape('a+b-c&&d||e!(f){g}[h]^"i"~j*k?l:m\\n/o') == (
        'a\\+b\\-c\\&\\&d\\|\\|e\\!\\(f\\)\\{g\\}\\[h\\]\\^\\"i\\"\\~j\\*k\\?l\\:m\\\\n\\/o')
    assert q.lucene_escape("AND") == '"AND"' and q.lucene_escape("and") == "and"
    assert q.lucene_query(["x", "x", "y:z", " "]) == "search:(x y\\:z)"
    assert q.lucene_query([" "], repos=["a"]) == ""
    scoped = q.lucene_query(["x"], repos=["b b", "a", "a"])
    assert scoped == f"+search:(x) +scope:({' '.join(sorted([q.view_scope('a'), q.view_scope('b b')]))})^0"
    assert q.view_scope("b b").isalnum() and q.view_scope("a") != q.view_scope("b b")
    assert q.lucene_query([f"t{i}" for i in range(2000)]).count(" ") == 999


def _run(*args: str) -> dict | list:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout) if "--json" in args else {}


@pytest.fixture
def indexed(neo4j_url, repo, tmp_path, open_neo4j, packaged_model):
    """The fixture repository indexed with the packaged model into an embedded store
    and, with its views, into Neo4j; returns (embedded folder, an empty folder to
    query from). (The hashing embedder ties many views at score 0, and ties may
    come back in any order.)"""
    open_neo4j()  # purges the test's namespace at the end
    ref = tmp_path / "ref"
    _run("index", str(FIXTURES / "py_resolution"), "--store", str(ref), "--name", repo, "--json")
    _run("index", str(FIXTURES / "py_resolution"), "--store", neo4j_url, "--name", repo,
         "--index-dir", str(tmp_path / "build"), "--json")
    empty = tmp_path / "empty"
    empty.mkdir()
    return ref, empty


def _text(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


def _ids(*args: str) -> list[str]:
    return [h["view"]["id"] for h in _run(*args)]


@pytest.mark.neo4j
def test_search_and_context_from_an_empty_folder_match_the_embedded_store(indexed, neo4j_url, repo,
                                                                           monkeypatch, open_neo4j):
    from vitalrag.graph.neo4j_views import Neo4jViews

    ref, empty = indexed
    others = sorted(set(Neo4jViews(open_neo4j()).models()) - {repo})
    # the server's BM25 statistics count every repository it holds views of
    assert not others, f"the test database holds views of other repositories too: {others[:5]}"
    monkeypatch.chdir(empty)
    for query in QUERIES:
        for retriever in ("dense", "walk", "fused"):
            # in the same order: equal scores rank by repository and view id on both stores
            served = _ids("search", query, "--store", neo4j_url, "--repo", repo, "--retriever", retriever,
                          "-k", "30", "--json")
            local = _ids("search", query, "--store", str(ref), "--retriever", retriever, "-k", "30", "--json")
            assert served == local, (query, retriever)
        # Lucene finds the candidates, and they are scored as bm25s scores them (the
        # server's statistics cover every repository it holds: this one alone here)
        served_hits = _run("search", query, "--store", neo4j_url, "--repo", repo, "--retriever", "bm25",
                           "-k", "200", "--json")
        local_hits = _run("search", query, "--store", str(ref), "--retriever", "bm25", "-k", "200", "--json")
        assert served_hits and ([(h["view"]["id"], h["score"]) for h in served_hits]
                                == [(h["view"]["id"], h["score"]) for h in local_hits]), query
        for retriever in ("dense", "fused"):
            a = _run("context", query, "--store", neo4j_url, "--repo", repo, "--retriever", retriever, "--json")
            b = _run("context", query, "--store", str(ref), "--retriever", retriever, "--json")
            assert a["slots"] and ([s["object_key"] for s in a["slots"]]
                                   == [s["object_key"] for s in b["slots"]]), (query, retriever)
            # and the same text, line for line
            assert _text("context", query, "--store", neo4j_url, "--repo", repo, "--retriever", retriever) == \
                _text("context", query, "--store", str(ref), "--retriever", retriever), (query, retriever)
    assert list(empty.iterdir()) == []  # nothing local was read or written


@pytest.mark.neo4j
def test_index_again_rewrites_only_changed_views(indexed, neo4j_url, repo, tmp_path, open_neo4j):
    from vitalrag.graph.neo4j_views import Neo4jViews

    views = Neo4jViews(open_neo4j())
    before = views.hashes(repo)
    assert before and views.models()[repo].views == len(before)
    local = RetrievalIndex.load(tmp_path / "build")
    from vitalrag.retrieve.server_index import push_views

    (write,) = push_views(views.store, local, [repo])
    assert (write.written, write.deleted, write.kept) == (0, 0, len(before))
    assert views.hashes(repo) == before


@pytest.mark.neo4j
def test_push_and_pull_round_trip(neo4j_url, repo, tmp_path, open_neo4j, monkeypatch):
    open_neo4j()
    ref = tmp_path / "ref"
    _run("index", str(FIXTURES / "py_resolution"), "--store", str(ref), "--name", repo, "--model", MODEL,
         "--json")
    pushed = _run("push", "--store", str(ref), "--to", neo4j_url, "--repo", repo, "--json")
    assert pushed["views"] == pushed["views_written"] > 0
    again = _run("push", "--store", str(ref), "--to", neo4j_url, "--repo", repo, "--json")
    assert again["views"] == pushed["views"] and again["views_written"] == 0

    pulled_dir = tmp_path / "pulled"
    switches = []
    real = version.switch

    def counted(*args, **kwargs):
        switches.append(kwargs)
        return real(*args, **kwargs)

    for module in (version, memory, index_mod):  # every name the pointer is switched through
        monkeypatch.setattr(module, "switch", counted)
    pulled = _run("pull", "--from", neo4j_url, "--store", str(pulled_dir), "--repo", repo, "--json")
    assert pulled["views"] == pushed["views"] == pulled["views_written"]
    # graph and retrieval index switched to together: no reader sees one without the other
    assert len(switches) == 1 and switches[0]["graph"] and switches[0]["retrieval"]
    monkeypatch.undo()
    with writer_lock(pulled_dir):  # another writer of the folder: the pull fails at once
        busy = CliRunner().invoke(main, ["pull", "--from", neo4j_url, "--store", str(pulled_dir)])
    assert busy.exit_code != 0 and "another index is writing" in busy.output
    a, b = RetrievalIndex.load(ref), RetrievalIndex.load(pulled_dir)
    assert b.views == a.views and b.model == a.model == MODEL
    assert a.dense is not None and b.dense is not None
    np.testing.assert_allclose(b.dense.vectors(), a.dense.vectors(), atol=1e-6)
    assert _run("pull", "--from", neo4j_url, "--store", str(pulled_dir), "--repo", repo,
                "--json")["views_written"] == 0
    monkeypatch.setenv("VITALRAG_MODEL", "nope-never-loaded")  # pulled: the index names its model
    for query in QUERIES:
        assert (_run("search", query, "--store", str(pulled_dir), "--json")
                == _run("search", query, "--store", str(ref), "--json"))


@pytest.mark.neo4j
@pytest.mark.parametrize("narrow", [False, True], ids=["ann", "exact"])
def test_repo_filters_every_retriever_on_the_server(neo4j_url, repo, tmp_path, open_neo4j, monkeypatch,
                                                    narrow):
    from vitalrag.retrieve import server_index

    open_neo4j()
    other = f"{repo}b"
    for name in (repo, other):
        _run("index", str(FIXTURES / "py_resolution"), "--store", neo4j_url, "--name", name, "--model", MODEL,
             "--index-dir", str(tmp_path / "build"), "--json")
    if narrow:
        monkeypatch.setattr(server_index, "NARROW", 1)  # every filter short of all is narrow: exact search
    else:
        monkeypatch.setattr(server_index, "EXACT_VIEWS", 0)  # the vector index, however few the views
    monkeypatch.chdir(tmp_path)
    for retriever in ("bm25", "dense", "walk", "fused"):
        for only in (repo, other):
            hits = _run("search", "make an engine and run it", "--store", neo4j_url, "--repo", only,
                        "--retriever", retriever, "-k", "30", "--json")
            assert hits and {h["view"]["repo"] for h in hits} == {only}, retriever
        both = _run("search", "make an engine and run it", "--store", neo4j_url, "--repo", repo, "--repo",
                    other, "--retriever", retriever, "-k", "40", "--json") if retriever != "fused" else None
        if both is not None:
            assert {h["view"]["repo"] for h in both} == {repo, other}, retriever


@pytest.mark.neo4j
def test_a_query_of_lucene_syntax_is_searched_as_words(indexed, neo4j_url, repo):
    hits = _run("search", 'make(engine) AND "run" OR x:y~2 [a TO b] \\ / ^3 *', "--store", neo4j_url,
                "--repo", repo, "--retriever", "bm25", "--json")
    assert hits and hits[0]["view"]["object_id"].startswith(f"{repo}:")
    from vitalrag.graph.neo4j import Neo4jStore
    from vitalrag.graph.neo4j_views import Neo4jViews

    store = Neo4jStore.from_uri(neo4j_url)
    try:
        raw = Neo4jViews(store).fulltext_terms(['make(engine)', 'AND', 'x:y~2', '"', '\\'], 10, [repo]).hits
    finally:
        store.close()
    assert all(r == repo for _, r, _ in raw)  # escaped: no Lucene syntax error


@pytest.mark.neo4j
def test_the_service_serves_from_the_server_with_nothing_local(indexed, neo4j_url, repo, monkeypatch):
    """What ``vitalrag serve --store URI`` runs: the model and the URI, no index folder."""
    from vitalrag.retrieve.query import Query
    from vitalrag.serve.service import ContextService

    ref, empty = indexed
    monkeypatch.chdir(empty)
    service = ContextService(neo4j_url).open()
    try:
        served = service.get_context(Query.of(QUERIES[0], repo=repo))
        status = service.index_status()
    finally:
        service.close()
    local = ContextService(str(ref)).open()
    try:
        expected = local.get_context(QUERIES[0])
    finally:
        local.close()
    assert served["context"] and {o["id"] for o in served["objects"]} == {o["id"] for o in expected["objects"]}
    assert status["dense"] and status["views"] >= len(RetrievalIndex.load(ref).views)
    assert list(empty.iterdir()) == []


@pytest.mark.neo4j
def test_a_reader_reads_each_repositorys_frequencies_once_a_version(neo4j_url, repo, tmp_path, open_neo4j):
    import shutil

    from vitalrag.graph.neo4j_views import Neo4jViews
    from vitalrag.retrieve.server_index import ServerViews

    store = open_neo4j()
    other = f"{repo}b"
    copy = tmp_path / "copy"
    shutil.copytree(FIXTURES / "py_resolution", copy)
    for name in (repo, other):
        _run("index", str(copy), "--store", neo4j_url, "--name", name, "--model", MODEL,
             "--index-dir", str(tmp_path / "build"), "--json")
    views = Neo4jViews(store)
    index = ServerViews(views)
    asked: list[list[str]] = []
    real = views.frequencies
    views.frequencies = lambda repos: (asked.append(sorted(repos)), real(repos))[1]  # type: ignore[method-assign]
    first = index.statistics()
    assert first is not None and {repo, other} <= set(asked[0])
    assert index.statistics() == first and len(asked) == 1  # the same versions: nothing read again
    (copy / "extra.py").write_text("def another_engine_runner(engine):\n    return engine.run()\n")
    _run("index", str(copy), "--store", neo4j_url, "--name", other, "--model", MODEL,
         "--index-dir", str(tmp_path / "build"), "--json")
    second = index.statistics()
    assert asked[1:] == [[other]]  # only the repository that switched
    assert second is not None and second[0] > first[0] and second[1] > first[1]


@pytest.mark.neo4j
def test_a_narrow_filter_is_searched_exactly_over_vectors_read_once_a_version(neo4j_url, repo, tmp_path,
                                                                             open_neo4j, monkeypatch):
    import shutil

    from vitalrag.graph.neo4j_views import Neo4jViews
    from vitalrag.retrieve import server_index
    from vitalrag.retrieve.dense import make_embedder
    from vitalrag.retrieve.server_index import ServerViews

    store = open_neo4j()
    other = f"{repo}b"
    copy = tmp_path / "copy"
    shutil.copytree(FIXTURES / "py_resolution", copy)
    ref = tmp_path / "ref"
    _run("index", str(copy), "--store", str(ref), "--name", repo, "--model", MODEL, "--json")
    for name in (repo, other):
        _run("index", str(copy), "--store", neo4j_url, "--name", name, "--model", MODEL,
             "--index-dir", str(tmp_path / "build"), "--json")
    monkeypatch.setattr(server_index, "NARROW", 1)  # every filter short of all is narrow: exact search
    monkeypatch.chdir(tmp_path)
    for query in QUERIES:  # the embedded store's hits, scores and order
        served = _run("search", query, "--store", neo4j_url, "--repo", repo, "--retriever", "dense",
                      "-k", "30", "--json")
        local = _run("search", query, "--store", str(ref), "--retriever", "dense", "-k", "30", "--json")
        assert served and ([(h["view"]["id"], round(h["score"], 5)) for h in served]
                           == [(h["view"]["id"], round(h["score"], 5)) for h in local]), query

    index = ServerViews(Neo4jViews(store))
    reads: list[str] = []
    real = index.views.vectors
    index.views.vectors = lambda r, pin: (reads.append(r), real(r, pin))[1]  # type: ignore[method-assign]
    vector = make_embedder(MODEL).encode(["make an engine and run it"])[0]
    first = index.nearest(vector, 10, frozenset({repo}))
    assert first and index.nearest(vector, 10, frozenset({repo})) == first and reads == [repo]
    assert {v.repo for v, _ in index.nearest(vector, 10, frozenset({other}))} == {other}
    assert reads == [repo, other]
    every = {v.path for v, _ in index.nearest(vector, 1000, frozenset({repo}))}
    assert "extra.py" not in every
    (copy / "extra.py").write_text("def make_engine_and_run(engine):\n    return engine.run()\n")
    _run("index", str(copy), "--store", neo4j_url, "--name", repo, "--model", MODEL,
         "--index-dir", str(tmp_path / "build"), "--json")
    # a new version of one repository: its vectors read again, the other's kept
    assert "extra.py" in {v.path for v, _ in index.nearest(vector, 1000, frozenset({repo}))}
    index.nearest(vector, 10, frozenset({other}))
    assert reads == [repo, other, repo]


def _rounded(hits: list) -> list[tuple[str, float]]:
    """Hits as (view id, cosine to 5 decimals): FAISS, numpy and Neo4j sum in different precisions."""
    return [(v.id, round(score, 5)) for v, score in hits]


@pytest.mark.neo4j
def test_the_vector_index_is_searched_with_a_wide_beam_and_only_the_kept_views_read(neo4j_url, repo, tmp_path,
                                                                                   open_neo4j, monkeypatch):
    """HNSW keeps as many candidates as it is asked for: ``nearest`` asks for
    ``HNSW_BEAM`` times the views it keeps (times the index's share the filter keeps
    out), reads back ids and cosines only, then the views it keeps by id; on an
    index this small the beam spans it, so the hits are the exact search's."""
    from vitalrag.graph.neo4j_views import Neo4jViews
    from vitalrag.retrieve import server_index
    from vitalrag.retrieve.dense import make_embedder
    from vitalrag.retrieve.server_index import HNSW_BEAM, TIE_MARGIN, ServerViews

    store = open_neo4j()
    for name in (repo, f"{repo}b"):
        _run("index", str(FIXTURES / "py_resolution"), "--store", neo4j_url, "--name", name, "--model", MODEL,
             "--index-dir", str(tmp_path / "build"), "--json")
    monkeypatch.setattr(server_index, "EXACT_VIEWS", 0)  # the vector index, however few the views
    index = ServerViews(Neo4jViews(store))
    asked: list[int] = []
    read: list[int] = []
    rows, by_id = store.read_rows, index.views.by_id

    def search(query: str, **params: object) -> list:
        if query == q.SEARCH_VIEWS_VECTOR:
            asked.append(params["n"])  # type: ignore[arg-type]
        return rows(query, **params)

    monkeypatch.setattr(store, "read_rows", search)
    monkeypatch.setattr(index.views, "by_id", lambda ids, pin: (read.append(len(ids)), by_id(ids, pin))[1])
    vector = make_embedder(MODEL).encode(["make an engine and run it"])[0]
    models = {m.repo: m.views for m in index.models().values()}
    total = sum(v for r, v in models.items() if r.startswith(repo))
    assert total == sum(models.values())  # the test's repositories are all the index holds
    with store.snapshot():
        everywhere = index.nearest(vector, 5, None)
        one = index.nearest(vector, 5, frozenset({repo}))
        share = -(-total // models[repo])
        assert asked == [HNSW_BEAM * (5 + TIE_MARGIN), min(total, HNSW_BEAM * (5 + TIE_MARGIN) * share)]
        assert read == [5 + TIE_MARGIN] * 2
        assert _rounded(everywhere) == _rounded(index._exact(vector, 5 + TIE_MARGIN, [repo, f"{repo}b"])[:5])
        assert _rounded(one) == _rounded(index._exact(vector, 5 + TIE_MARGIN, [repo])[:5])
        assert server_index.NARROW * models[repo] >= total  # (the filter was not narrow: no exact search)


@pytest.mark.neo4j
def test_a_search_over_few_views_is_exact_and_over_many_asks_the_vector_index(neo4j_url, repo, tmp_path,
                                                                              open_neo4j, monkeypatch):
    """Up to ``EXACT_VIEWS`` views searched (every repository, or those asked for),
    every vector is compared, as the embedded store does; the vector index above."""
    from vitalrag.graph.neo4j_views import Neo4jViews
    from vitalrag.retrieve import server_index
    from vitalrag.retrieve.dense import make_embedder
    from vitalrag.retrieve.server_index import ServerViews

    store = open_neo4j()
    for name in (repo, f"{repo}b"):
        _run("index", str(FIXTURES / "py_resolution"), "--store", neo4j_url, "--name", name, "--model", MODEL,
             "--index-dir", str(tmp_path / "build"), "--json")
    index = ServerViews(Neo4jViews(store))
    asked: list[int] = []
    rows = store.read_rows

    def search(query: str, **params: object) -> list:
        if query == q.SEARCH_VIEWS_VECTOR:
            asked.append(params["n"])  # type: ignore[arg-type]
        return rows(query, **params)

    monkeypatch.setattr(store, "read_rows", search)
    vector = make_embedder(MODEL).encode(["make an engine and run it"])[0]
    views = sum(m.views for m in index.models().values())
    with store.snapshot():
        for allowed in (None, frozenset({repo})):
            exact = index.nearest(vector, 5, allowed)
            assert exact and not asked, allowed
            assert _rounded(exact) == _rounded(index._exact(vector, 5 + server_index.TIE_MARGIN,
                                                            sorted(allowed or {repo, f"{repo}b"}))[:5])
        monkeypatch.setattr(server_index, "EXACT_VIEWS", views - 1)
        assert index.nearest(vector, 5, None) and len(asked) == 1


@pytest.mark.neo4j
def test_the_drivers_statement_log_does_not_format_the_rows_written(open_neo4j, repo, caplog):
    """The driver formats each statement's parameters for its debug log before it
    asks whether debug is on: a batch of views with their vectors must format short."""
    import logging

    from vitalrag.graph.neo4j_views import Neo4jViews
    from vitalrag.model import CodeObject, View

    store = open_neo4j()
    store.upsert_objects([CodeObject(id=repo, kind="repository", name=repo, qualname=repo, repo=repo, path="")])
    views = [View(f"{repo}|v{i}", f"{repo}:a.py", "body", "a.py", 1, 1, f"needle{i} haystack", f"n{i}", repo=repo)
             for i in range(50)]
    with caplog.at_level(logging.DEBUG, logger="neo4j"):
        Neo4jViews(store).write_repository(repo, views, str.split, np.full((50, 8), 0.25, dtype=np.float32), "m",
                                           ({}, 0))
    runs = [r.getMessage() for r in caplog.records if " C: RUN " in r.getMessage()]
    assert any("[50 items]" in m for m in runs)
    assert not any("needle1 haystack" in m or "0.25, 0.25" in m for m in runs)
