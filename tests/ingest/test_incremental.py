"""Re-indexing parses only changed files and ends equal to a clean rebuild."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from vitalrag.graph.memory import MemoryStore
from vitalrag.ingest import index_repository

FIXTURES = Path(__file__).parents[1] / "fixtures" / "repos"


def _edit_add_rename_delete(repo: Path) -> None:
    # edit: a renamed function changes who resolves to what in unchanged files
    (repo / "pkg" / "helpers.py").write_text(
        'def slugify(text):\n    """Lower-case and dash-join."""\n    return "-".join(text.split())\n\n\n'
        "def shout(text):\n    return text.upper()\n")
    # edit a re-export: app.py (unchanged) imports deep_fn through pkg.sub
    (repo / "pkg" / "sub" / "__init__.py").write_text("from .deep import deep_fn, deeper\n")
    (repo / "pkg" / "sub" / "deep.py").write_text(
        'def deep_fn():\n    return "deep"\n\n\ndef deeper():\n    return deep_fn()\n')
    # add
    (repo / "pkg" / "extra.py").write_text("from pkg.helpers import shout\n\n\ndef loud(x):\n    return shout(x)\n")
    # rename
    (repo / "pkg" / "util.py").rename(repo / "pkg" / "tools.py")
    (repo / "pkg" / "core.py").write_text(
        (repo / "pkg" / "core.py").read_text().replace("from . import util", "from . import tools as util"))
    # delete
    (repo / "tests" / "test_core.py").unlink()


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

    _edit_add_rename_delete(repo)
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
    # corrupt every cached entry: the run must fall back to parsing, not fail
    for p in (tmp_path / "facts" / "r").glob("*.pickle"):
        p.write_bytes(b"not a pickle")
    report = index_repository(repo, store, name="r", workers=1, cache_dir=tmp_path / "facts")
    assert report.parsed == 9
