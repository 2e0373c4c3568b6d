"""An allocation written to Neo4j: selected objects, considered views, merges."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from vitalrag.allocate import allocate
from vitalrag.ingest import index_repository
from vitalrag.retrieve.api import Retriever
from vitalrag.retrieve.dense import HashingEmbedder
from vitalrag.retrieve.index import RetrievalIndex

pytestmark = [pytest.mark.neo4j,
              pytest.mark.skipif(not os.environ.get("NEO4J_URI"), reason="NEO4J_URI is not set")]

FIXTURES = Path(__file__).parents[1] / "fixtures" / "repos"


def test_allocation_provenance_round_trip(tmp_path):
    from vitalrag.graph.neo4j import Neo4jStore

    repo = f"t{uuid.uuid4().hex[:10]}"
    store = Neo4jStore.from_uri(os.environ["NEO4J_URI"])
    try:
        index_repository(FIXTURES / "py_resolution", store, name=repo, workers=1)
        RetrievalIndex.build(store, tmp_path, embedder=HashingEmbedder(64))
        r = Retriever(store, RetrievalIndex.load(tmp_path), HashingEmbedder(64))
        views = r.search("Engine run prepare slugify", k=30)
        record = allocate("Engine run prepare slugify", views, store=store).record
        aid = store.write_allocation(record)
        assert store.write_allocation(record) == aid  # idempotent
        got = store.read_allocation(aid)
        assert got is not None
        assert got["allocation"]["policy"] == "vital" and got["allocation"]["tokens"] == record.tokens
        assert [s["object"] for s in got["selected"]] == list(record.objects)
        first = got["selected"][0]["props"]
        slot = record.slots[0]
        assert (first["tokens_given"], first["tokens_needed"], first["tokens_used"], first["clipped"]) == (
            slot.b, slot.d, slot.tokens, slot.clipped)
        statuses = {v["view"]["view_id"]: (v["edge"]["status"], v["into"]) for v in got["views"]}
        assert len(statuses) == len(record.views)
        for v in record.views:
            assert statuses[v.view_id] == (v.status, v.merged_into)
        # nothing of the allocation leaks into the code graph's answers
        assert all(o.kind != "Allocation" for o in store.find_objects(repo=repo))
        store.delete_allocation(aid)
        assert store.read_allocation(aid) is None
    finally:
        store.delete_repository(repo)
        store.close()


def test_explain_to_neo4j_refuses_a_repository_the_server_lacks(tmp_path):
    from click.testing import CliRunner

    from vitalrag.cli import main
    from vitalrag.graph.memory import MemoryStore
    from vitalrag.graph.neo4j import Neo4jStore

    repo = f"t{uuid.uuid4().hex[:10]}"
    local = MemoryStore(tmp_path / "idx")
    index_repository(FIXTURES / "py_resolution", local, name=repo, workers=1)
    RetrievalIndex.build(local, local.folder, embedder=HashingEmbedder(64))
    uri = os.environ["NEO4J_URI"]
    args = ["explain", "Engine run prepare", "--store", str(local.folder), "--to-neo4j", uri]
    runner = CliRunner()
    refused = runner.invoke(main, args)
    assert refused.exit_code != 0 and "does not hold" in refused.output and repo in refused.output
    assert "Traceback" not in refused.output
    server = Neo4jStore.from_uri(uri)
    try:
        assert runner.invoke(main, ["push", "--store", str(local.folder), "--to", uri]).exit_code == 0
        written = runner.invoke(main, args)
        assert written.exit_code == 0, written.output
        aid = written.stderr.split("wrote allocation ", 1)[1].split()[0]
        got = server.read_allocation(aid)
        assert got is not None and got["selected"]
        server.delete_allocation(aid)
    finally:
        server.delete_repository(repo)
        server.close()
