"""Text files on every store: sections are read, walked and rendered alike, and the
retrievers and the context agree between the embedded store and Neo4j."""

from __future__ import annotations

from pathlib import Path

import pytest

from vitalrag.allocate import allocate
from vitalrag.graph.memory import MemoryStore
from vitalrag.ingest import index_repository
from vitalrag.retrieve.api import Retriever
from vitalrag.retrieve.dense import HashingEmbedder
from vitalrag.retrieve.index import RetrievalIndex

FIXTURE = Path(__file__).parents[1] / "fixtures" / "repos" / "text_basic"
QUERIES = ["deploy release", "how do I roll back a deploy", "database host port", "refund payments"]


def _retriever(store, repo: str, folder: Path) -> Retriever:
    index_repository(FIXTURE, store, name=repo, workers=1)
    RetrievalIndex.build(store, folder, embedder=HashingEmbedder(64), repos=[repo])
    return Retriever(store, RetrievalIndex.load(folder), HashingEmbedder(64))


def test_sections_are_read_and_rendered_on_every_store(store, repo, tmp_path):
    r = _retriever(store, repo, tmp_path / "r")
    release = f"{repo}:DEPLOY.md:deploying/release-steps"
    sections = {o.id for o in store.find_objects(repo=repo, kind="section", path="DEPLOY.md")}
    assert release in sections and len(sections) == 5
    assert set(store.same_file([release])[release]) == sections - {release}
    assert store.file_spans([f"{repo}:DEPLOY.md"])[f"{repo}:DEPLOY.md"]
    hits = r.search("deploy release", repo=repo, k=10)
    assert hits[0].view.object_id == release
    context = allocate("deploy release", hits, policy="vital-fill", budget=300, store=store)
    assert "--- DEPLOY.md:9-17 Deploying > Release steps\n 9 ## Release steps\n" in context.text
    # the walk from a line of a document starts at its section
    walked = r.search("rollback", retriever="walk", file="DEPLOY.md", line=20, repo=repo, k=5)
    assert walked[0].view.object_id == f"{repo}:DEPLOY.md:deploying/rollback"


@pytest.mark.neo4j
def test_text_files_agree_across_stores(open_neo4j, repo, tmp_path):
    reference = _retriever(MemoryStore(tmp_path / "ref"), repo, tmp_path / "ref")
    subject = _retriever(open_neo4j(), repo, tmp_path / "subject")
    assert subject.store.export(repo) == reference.store.export(repo)
    for retriever in ("bm25", "dense", "walk", "fused"):
        for q in QUERIES:
            args = {"file": "DEPLOY.md", "line": 12} if retriever == "walk" else {}
            a = [(h.view.id, round(h.score, 9)) for h in reference.search(q, retriever=retriever, repo=repo, **args)]
            b = [(h.view.id, round(h.score, 9)) for h in subject.search(q, retriever=retriever, repo=repo, **args)]
            assert a == b, (retriever, q)
    for q in QUERIES:
        views = reference.search(q, repo=repo, k=40)
        a = allocate(q, views, policy="vital-fill", store=reference.store)
        b = allocate(q, views, policy="vital-fill", store=subject.store)
        assert a.record.to_dict() == b.record.to_dict() and a.text == b.text, q
