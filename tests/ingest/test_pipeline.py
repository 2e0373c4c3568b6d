"""The index pipeline: several repositories in one store, containment, re-indexing."""

from __future__ import annotations

from pathlib import Path

from vitalrag.graph.memory import MemoryStore
from vitalrag.ingest import index_repository

FIXTURES = Path(__file__).parents[1] / "fixtures" / "repos"


def test_two_repositories_share_a_store_without_collisions(tmp_path):
    store = MemoryStore(tmp_path / "idx")
    index_repository(FIXTURES / "py_resolution", store, name="one", workers=1)
    index_repository(FIXTURES / "py_resolution", store, name="two", workers=1)
    reopened = MemoryStore.open(tmp_path / "idx", create=False)
    assert reopened.repositories() == ["one", "two"]
    one = reopened.find_objects(repo="one")
    two = reopened.find_objects(repo="two")
    assert len(one) == len(two) > 0
    assert not {o.id for o in one} & {o.id for o in two}
    # edges stay inside their repository
    for e in reopened.find_edges(repo="one"):
        assert e.source.startswith("one") and e.target.startswith("one")
    # re-indexing one leaves the other untouched
    before = reopened.export("two")
    index_repository(FIXTURES / "py_resolution", reopened, name="one", workers=1)
    assert MemoryStore.open(tmp_path / "idx").export("two") == before


def test_store_round_trips_through_its_file(tmp_path):
    store = MemoryStore(tmp_path / "idx")
    index_repository(FIXTURES / "py_resolution", store, name="pyr", workers=1)
    loaded = MemoryStore.open(tmp_path / "idx", create=False)
    assert loaded.export() == store.export()
    assert loaded.counts() == store.counts()
    assert loaded.source("pyr:pkg/util.py") == (FIXTURES / "py_resolution" / "pkg" / "util.py").read_text()
    assert loaded.get_meta("pyr")["root"] == str((FIXTURES / "py_resolution").resolve())


def test_save_is_atomic(tmp_path, monkeypatch):
    """A crash while writing leaves the previous index file intact and no stray temp file."""
    import os

    store = MemoryStore(tmp_path / "idx")
    index_repository(FIXTURES / "py_resolution", store, name="pyr", workers=1)
    before = (tmp_path / "idx" / "graph.json").read_bytes()

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", boom)  # the new file is written, not yet synced nor renamed
    try:
        index_repository(FIXTURES / "py_resolution", store, name="other", workers=1)
    except OSError:
        pass
    assert (tmp_path / "idx" / "graph.json").read_bytes() == before
    assert sorted(p.name for p in (tmp_path / "idx").iterdir()) == [".write.lock", "graph.json"]


def test_every_object_is_contained_once(tmp_path):
    store = MemoryStore(tmp_path / "idx")
    index_repository(FIXTURES / "py_resolution", store, name="pyr", workers=1)
    targets = [e.target for e in store.find_edges(kind="CONTAINS")]
    assert sorted(targets) == sorted(o.id for o in store.find_objects() if o.kind != "repository")
