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
