"""The same repository indexed into both stores reads back the same everywhere."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from vitalrag.graph.memory import MemoryStore
from vitalrag.graph.store import GraphStore
from vitalrag.graph.transfer import copy_store

FIXTURE_REPO = Path(__file__).parent / "fixtures" / "tiny_py"


def index_into(store: GraphStore, repo: str) -> None:
    ingest = pytest.importorskip("vitalrag.ingest", reason="the ingest pipeline is not importable yet")
    pytest.importorskip("vitalrag.ingest.lang.python.extraction", reason="the Python extractor is not importable yet")
    ingest.index_repository(FIXTURE_REPO, store, name=repo, workers=1)


def query_answers(store: GraphStore, repo: str) -> dict[str, Any]:
    """Every read the retrievers use, asked about every object of ``repo``."""
    ids = [o.id for o in store.find_objects(repo=repo)]
    return {
        "objects": store.get_objects(ids),
        "by_kind": {k: store.find_objects(repo=repo, kind=k) for k in ("file", "class", "method", "test")},
        "edges_of": {d: store.edges_of(ids, direction=d) for d in ("out", "in", "both")},
        "calls_in": {i: store.edges_of([i], kinds=["CALLS"], direction="in") for i in ids},
        "neighbors1": {i: store.neighbors([i]) for i in ids},
        "neighbors2": {i: store.neighbors([i], depth=2, kinds=["CALLS", "INHERITS", "TESTS"]) for i in ids},
        "same_file": store.same_file(ids),
        "unresolved": store.unresolved(repo),
        "sources": {i: store.source(i) for i in ids},
        "repositories": repo in store.repositories(),
    }


@pytest.mark.neo4j
def test_ingest_into_both_stores_exports_equal(tmp_path, open_neo4j, repo):
    memory = MemoryStore(tmp_path / "index")
    neo = open_neo4j()
    index_into(memory, repo)
    index_into(neo, repo)
    assert neo.export(repo) == memory.export(repo)
    assert neo.counts(repo) == memory.counts(repo)
    assert query_answers(neo, repo) == query_answers(memory, repo)
    assert neo.get_meta(repo).keys() == memory.get_meta(repo).keys()


@pytest.mark.neo4j
def test_reindexing_into_neo4j_is_idempotent(open_neo4j, repo):
    neo = open_neo4j()
    index_into(neo, repo)
    first = (neo.export(repo), neo.counts(repo), query_answers(neo, repo))
    index_into(neo, repo)
    assert (neo.export(repo), neo.counts(repo), query_answers(neo, repo)) == first


@pytest.mark.neo4j
def test_copy_both_ways_keeps_everything(tmp_path, open_neo4j, repo):
    memory = MemoryStore(tmp_path / "index")
    index_into(memory, repo)
    neo = open_neo4j()
    report = copy_store(memory, neo, repo)
    assert report.objects == len(memory.export(repo)["nodes"])
    assert neo.export(repo) == memory.export(repo)
    assert neo.get_meta(repo) == memory.get_meta(repo)
    back = MemoryStore(tmp_path / "back")
    copy_store(neo, back, repo)
    assert back.export(repo) == memory.export(repo)
    assert back.get_meta(repo) == memory.get_meta(repo)
    for node in memory.find_objects(repo=repo, kind="file"):
        assert back.source(node.id) == memory.source(node.id) == neo.source(node.id)
    assert MemoryStore.open(tmp_path / "back", create=False).export(repo) == memory.export(repo)


def test_fixture_repo_exercises_every_kind_we_rely_on(tmp_path, repo):
    memory = MemoryStore(tmp_path / "index")
    index_into(memory, repo)
    counts = memory.counts(repo)
    assert {"CALLS", "CONTAINS", "IMPORTS", "INHERITS", "TESTS"} <= set(counts["edges"])
    assert counts["unresolved"] >= 1
    assert FIXTURE_REPO.is_dir()


REPOS = Path(__file__).parents[1] / "fixtures" / "repos"


@pytest.mark.neo4j
@pytest.mark.parametrize("fixture", ["py_resolution", "java_shapes", "java_junit", "js_basic", "ts_basic",
                                     "go_basic", "rust_basic", "csharp_basic", "c_basic", "cpp_basic",
                                     "kotlin_basic", "scala_basic", "swift_basic", "php_basic", "ruby_basic",
                                     "lua_basic", "bash_basic", "elixir_basic", "haskell_basic", "zig_basic",
                                     "text_basic"])
def test_every_fixture_repo_exports_equal_on_both_stores(tmp_path, open_neo4j, repo, fixture):
    from vitalrag.ingest import index_repository

    memory = MemoryStore(tmp_path / "index")
    neo = open_neo4j()
    index_repository(REPOS / fixture, memory, name=repo, workers=1)
    index_repository(REPOS / fixture, neo, name=repo, workers=1)
    assert neo.export(repo) == memory.export(repo)


@pytest.mark.neo4j
@pytest.mark.network
def test_a_real_repository_exports_equal_on_both_stores(tmp_path, open_neo4j, repo):
    from vitalrag.eval.corpora import fetch
    from vitalrag.ingest import index_repository

    corpus = fetch("pypi:requests==2.32.3")
    memory = MemoryStore(tmp_path / "index")
    neo = open_neo4j()
    index_repository(corpus.path, memory, name=repo)
    index_repository(corpus.path, neo, name=repo)
    assert neo.export(repo) == memory.export(repo)
    assert query_answers(neo, repo)["neighbors1"] == query_answers(memory, repo)["neighbors1"]
