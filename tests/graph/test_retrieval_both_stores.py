"""Retrieval and allocation give the same answers on both stores for the same index."""

from __future__ import annotations

from pathlib import Path

import pytest

from vitalrag.allocate import allocate
from vitalrag.allocate.controls import policy_names
from vitalrag.graph.memory import MemoryStore
from vitalrag.ingest import index_repository
from vitalrag.retrieve.api import Retriever
from vitalrag.retrieve.dense import HashingEmbedder
from vitalrag.retrieve.index import RetrievalIndex

FIXTURES = Path(__file__).parents[1] / "fixtures" / "repos"
QUERIES = [
    ("make an engine and run it", None, None),
    ("complete this", "pkg/core.py", 34),
    ("slugify text", "app.py", 12),
]


def _retriever(store, repo, folder):
    index_repository(FIXTURES / "py_resolution", store, name=repo, workers=1)
    RetrievalIndex.build(store, folder, embedder=HashingEmbedder(64), repos=[repo])
    return Retriever(store, RetrievalIndex.load(folder), HashingEmbedder(64))


def _hits(r, repo):
    out = {}
    for retriever in ("bm25", "dense", "walk", "fused"):
        for q, f, line in QUERIES:
            hits = r.search(q, retriever=retriever, file=f, line=line, repo=repo, k=15)
            out[(retriever, q)] = [(h.view.id, round(h.score, 9), h.retrievers) for h in hits]
    return out


@pytest.mark.neo4j
def test_every_retriever_and_policy_agrees_across_stores(open_neo4j, repo, tmp_path):
    """The server store against the embedded one (not parametrised over ``store``:
    its embedded variant would compare the embedded store with itself)."""
    reference = _retriever(MemoryStore(tmp_path / "ref"), repo, tmp_path / "ref")
    subject = _retriever(open_neo4j(), repo, tmp_path / "subject")
    assert _hits(subject, repo) == _hits(reference, repo)
    for q, f, line in QUERIES:
        views = reference.search(q, file=f, line=line, repo=repo, k=40)
        for policy in policy_names():
            a = allocate(q, views, policy=policy, store=reference.store)
            b = allocate(q, views, policy=policy, store=subject.store)
            assert a.record.to_dict() == b.record.to_dict(), (policy, q)
            assert a.text == b.text


def test_walk_uses_the_graph_of_each_store(store, repo, tmp_path):
    r = _retriever(store, repo, tmp_path / "w")
    hits = r.search("complete this", retriever="walk", file="pkg/core.py", line=34, repo=repo, k=20)
    scores = {h.view.object_id: h.score for h in hits}
    assert scores[f"{repo}:pkg/core.py:Runner.go"] == 1.0
    assert scores[f"{repo}:pkg/core.py:helper_local"] == pytest.approx(0.5)
    assert scores[f"{repo}:pkg/base.py:Base"] == pytest.approx(0.8)


def test_repo_filters_every_retriever_and_the_context(store, repo, tmp_path):
    """Two repositories with the same code in one store: --repo keeps every
    retriever, and so the context, inside the ones named."""
    other = f"{repo}b"  # starts with the test's prefix, so the Neo4j namespace is purged
    for name in (repo, other):
        index_repository(FIXTURES / "py_resolution", store, name=name, workers=1)
    RetrievalIndex.build(store, tmp_path / "two", embedder=HashingEmbedder(64), repos=[repo, other])
    r = Retriever(store, RetrievalIndex.load(tmp_path / "two"), HashingEmbedder(64))
    for retriever in ("bm25", "dense", "walk", "fused"):
        both = {h.view.repo for h in r.search("make an engine and run it", retriever=retriever, k=40)}
        assert both == {repo, other}, retriever
        for only in (repo, other):
            hits = r.search("make an engine and run it", retriever=retriever, k=40, repo=only)
            assert hits and {h.view.repo for h in hits} == {only}, retriever
        several = r.search("make an engine and run it", retriever=retriever, k=40, repo=[repo, other])
        assert {h.view.repo for h in several} == {repo, other}
    from vitalrag.context import ContextSettings, context_from
    from vitalrag.retrieve.query import Query

    result = context_from(r, Query.of("make an engine and run it", repo=other), ContextSettings(budget=2048))
    assert result.record.slots and {s.key.split(":")[0] for s in result.record.slots} == {other}
    assert len({s.key for s in result.record.slots}) == len(result.record.slots)
