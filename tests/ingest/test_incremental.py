"""Re-indexing parses only changed files and ends equal to a clean rebuild."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tests_support import edit_add_rename_delete

from vitalrag.graph.memory import MemoryStore
from vitalrag.ingest import index_repository

FIXTURES = Path(__file__).parents[1] / "fixtures" / "repos"


@pytest.mark.parametrize("workers", [1, 2])
def test_incremental_equals_clean_rebuild(tmp_path, workers):
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "py_resolution", repo)
    store = MemoryStore(tmp_path / "inc")
    first = index_repository(repo, store, name="r", workers=workers, cache_dir=tmp_path / "facts")
    assert first.parsed == 9 and first.reused == 0

    again = index_repository(repo, store, name="r", workers=workers, cache_dir=tmp_path / "facts")
    assert again.parsed == 0 and again.reused == 9
    assert not any(again.delta[k] for k in again.delta)  # nothing to write
    # the facts of a repository are one file (not one per source file), rewritten only when they change
    cached = tmp_path / "facts" / "r.jsonl.gz"
    assert [p.name for p in (tmp_path / "facts").iterdir()] == [cached.name]
    written = cached.stat().st_mtime_ns
    index_repository(repo, store, name="r", workers=workers, cache_dir=tmp_path / "facts")
    assert cached.stat().st_mtime_ns == written

    edit_add_rename_delete(repo)
    inc = index_repository(repo, store, name="r", workers=workers, cache_dir=tmp_path / "facts")
    # edited helpers, sub/__init__, deep and core; added extra; tools (renamed) is a new path
    assert inc.parsed == 6 and inc.reused == 3
    fresh = MemoryStore(tmp_path / "fresh")
    index_repository(repo, fresh, name="r", workers=workers)
    assert MemoryStore.open(tmp_path / "inc").export() == fresh.export()
    for f in fresh.find_objects(kind="file"):
        assert store.source(f.id) == fresh.source(f.id)
    assert store.source("r:pkg/util.py") is None and store.source("r:tests/test_core.py") is None
    # an edge from an unchanged file follows the change: app.main still calls deep_fn
    assert ("r:app.py:main", "r:pkg/sub/deep.py:deep_fn") in {
        (e.source, e.target) for e in store.find_edges(kind="CALLS")}


def test_changed_cache_entry_is_not_trusted(tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "py_resolution", repo)
    store = MemoryStore(tmp_path / "idx")
    index_repository(repo, store, name="r", workers=1, cache_dir=tmp_path / "facts")
    # corrupt the cache: the run must fall back to parsing, not fail
    (tmp_path / "facts" / "r.jsonl.gz").write_bytes(b"not gzip")
    report = index_repository(repo, store, name="r", workers=1, cache_dir=tmp_path / "facts")
    assert report.parsed == 9
    assert index_repository(repo, store, name="r", workers=1, cache_dir=tmp_path / "facts").reused == 9
