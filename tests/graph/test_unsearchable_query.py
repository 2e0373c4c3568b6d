"""A query with no searchable word ("*", "AND", only function words) gets the same
answer from every store and retriever: a one-line refusal naming the query, not
arbitrary views (the embedded store's dense neighbours of noise) or an empty
answer with exit status 0 (a server store's). A file anchors such a query, and a
reserved word that names code ("Base") is still a query."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from vitalrag.cli import main
from vitalrag.context import ContextSettings, context_from
from vitalrag.errors import InputError
from vitalrag.ingest import index_repository
from vitalrag.retrieve.api import RETRIEVERS, Retriever
from vitalrag.retrieve.dense import HashingEmbedder
from vitalrag.retrieve.index import RetrievalIndex
from vitalrag.retrieve.query import Query

FIXTURES = Path(__file__).parents[1] / "fixtures" / "repos"
UNSEARCHABLE = ["*", "AND", "the of a", "how do I do this?", "404", "x y", "--- ( ) ---"]


def _retriever(store, repo, folder):
    index_repository(FIXTURES / "py_resolution", store, name=repo, workers=1)
    RetrievalIndex.build(store, folder, embedder=HashingEmbedder(64), repos=[repo])
    return Retriever(store, RetrievalIndex.load(folder), HashingEmbedder(64))


def test_no_store_or_retriever_answers_a_query_with_no_searchable_word(store, repo, tmp_path):
    r = _retriever(store, repo, tmp_path / "views")
    for query in UNSEARCHABLE:
        for retriever in RETRIEVERS:
            with pytest.raises(InputError, match=re.escape(f"the query has no searchable words: {query!r}")):
                r.search(query, retriever=retriever, repo=repo)
        with pytest.raises(InputError, match="no searchable words"):
            context_from(r, Query.of(query, repo=repo))


def test_a_file_anchors_a_query_with_no_searchable_word(store, repo, tmp_path):
    r = _retriever(store, repo, tmp_path / "views")
    hits = r.search("*", retriever="walk", file="pkg/core.py", line=34, repo=repo, k=5)
    assert hits[0].view.object_id == f"{repo}:pkg/core.py:Runner.go"
    assert context_from(r, Query.of("*", "pkg/core.py", 34, repo), ContextSettings(budget=300)).text


def test_one_name_alone_is_a_query_whatever_its_length(store, repo, tmp_path):
    """Flask's ``g``: a one-letter name asked alone is code, not noise."""
    r = _retriever(store, repo, tmp_path / "views")
    for query in ("g", "`T`", "x()"):
        assert r.search(query, repo=repo, k=3)
        assert context_from(r, Query.of(query, repo=repo), ContextSettings(budget=300)).text


def test_a_reserved_word_that_names_code_is_a_query(store, repo, tmp_path):
    """C#'s ``base`` is a reserved word BM25 skips, and the name of a class here."""
    r = _retriever(store, repo, tmp_path / "views")
    ids = [h.view.object_id for h in r.search("Base", repo=repo, k=5)]
    assert f"{repo}:pkg/base.py:Base" in ids


@pytest.fixture(params=["memory", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def indexed(request, tmp_path, repo) -> str:
    """The fixture repository indexed by the CLI into a store folder or a Neo4j
    server (its views on the server), under the test's own repository name."""
    location = str(tmp_path / "idx")
    if request.param == "neo4j":
        request.getfixturevalue("open_neo4j")()  # its namespace is purged at the end
        location = request.getfixturevalue("neo4j_url")
    result = CliRunner().invoke(main, ["index", str(FIXTURES / "py_resolution"), "--store", location,
                                       "--name", repo, "--model", "hashing-64",
                                       "--index-dir", str(tmp_path / "local")])
    assert result.exit_code == 0, result.output
    return location


def test_the_cli_refuses_it_in_one_line_on_both_stores(indexed, repo, tmp_path):
    runner = CliRunner()
    for query in ("*", "AND", "the of a"):
        for command in ("context", "search", "explain"):
            result = runner.invoke(main, [command, query, "--store", indexed, "--repo", repo,
                                          "--index-dir", str(tmp_path / "local")])
            assert result.exit_code != 0, (command, query, result.output)
            assert isinstance(result.exception, SystemExit)  # no traceback
            lines = result.output.strip().splitlines()
            assert len(lines) == 1 and f"the query has no searchable words: {query!r}" in lines[0], result.output
    answer = runner.invoke(main, ["context", "Base", "--store", indexed, "--repo", repo, "--budget", "200",
                                  "--index-dir", str(tmp_path / "local")])
    assert answer.exit_code == 0 and "class Base" in answer.output, answer.output
