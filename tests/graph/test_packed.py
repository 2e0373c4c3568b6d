"""The packed graph snapshot refuses a pack format it does not know, whole or by the piece."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from tests_support import graph_file

from vitalrag.errors import SchemaMismatch
from vitalrag.graph.memory import MemoryStore, open_snapshot
from vitalrag.ingest import index_repository

FIXTURES = Path(__file__).parents[1] / "fixtures" / "repos"


def test_another_pack_format_is_refused(tmp_path):
    store = MemoryStore(tmp_path / "idx")
    index_repository(FIXTURES / "py_resolution", store, name="pyr", workers=1)
    assert open_snapshot(tmp_path / "idx").get_objects(["pyr:pkg/util.py"])  # read by the piece
    con = sqlite3.connect(graph_file(tmp_path / "idx"))
    with con:
        con.execute("UPDATE info SET value = '99' WHERE key = 'pack_format'")
    con.close()
    with pytest.raises(SchemaMismatch, match="pack format 99"):
        MemoryStore.open(tmp_path / "idx", create=False)
    with pytest.raises(SchemaMismatch, match="pack format 99"):
        open_snapshot(tmp_path / "idx")


def test_stats_and_listings_by_the_piece_do_not_load_the_graph(tmp_path, monkeypatch):
    """``vitalrag stats``, ``objects --path/--kind`` and ``edges`` answer from the snapshot's
    tables and the packs they name: loading the whole graph is an error here."""
    from vitalrag.graph.packed import PackedGraph

    store = MemoryStore(tmp_path / "idx")
    for name in ("a", "b"):
        index_repository(FIXTURES / "py_resolution", store, name=name, workers=1)
    whole = MemoryStore.open(tmp_path / "idx", create=False)
    piece = open_snapshot(tmp_path / "idx")
    assert isinstance(piece, PackedGraph)

    def load(self):
        raise AssertionError("the whole graph was loaded")

    monkeypatch.setattr(PackedGraph, "_all", load)
    for repo in (None, "a", "b", "none"):
        assert piece.counts(repo) == whole.counts(repo), repo
    for query in ({"path": "pkg/core.py"}, {"kind": "class"}, {"repo": "b", "kind": "function"},
                  {"name": "prepare"}, {"repo": "a"}):
        assert piece.find_objects(**query) == whole.find_objects(**query), query
    for edges in ({}, {"repo": "a"}, {"repo": "b", "kind": "CALLS"}, {"kind": "IMPORTS"}, {"repo": "none"}):
        assert piece.find_edges(**edges) == whole.find_edges(**edges), edges
