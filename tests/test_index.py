"""``Index``: opening, the change stamp, an index run; and that nothing above the
layers names their files."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

import vitalrag
from vitalrag.errors import InputError, StoreBusy, StoreNotFound
from vitalrag.index import Index, IndexLocation

from tests_support import FIXTURES

#: what only graph/ and retrieve/ may name (issue 19)
LAYER_FILES = {"VERSION_FILE", "current.json"}


def _run(where: IndexLocation, repo: Path) -> None:
    with Index.open(where.store, mode="write") as index:
        index.update(repo, embedder=None, name="pyr")


def test_the_stamp_changes_when_a_reindex_switches_and_only_then(tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "py_resolution", repo)
    where = IndexLocation.of(str(tmp_path / "idx"))
    empty = where.stamp()
    with pytest.raises(StoreNotFound):
        Index.open(where.store)
    _run(where, repo)
    first = where.stamp()
    assert first != empty
    with Index.open(str(where.folder)) as index:
        assert index.location.stamp() == first  # reading changes nothing
        hits = index.retriever().search("slugify", retriever="bm25", k=3)
        assert hits[0].view.object_id == "pyr:pkg/helpers.py:slugify"
        (repo / "pkg" / "extra.py").write_text("def shout_twice(text):\n    return text.upper() * 2\n")
        _run(where, repo)
        assert index.location.stamp() != first
        assert not index.store.find_objects(name="shout_twice")  # the open index is the old version
        again = index.reopen()
        assert again.store.find_objects(name="shout_twice")
        again.close()


def test_an_index_opened_for_writing_holds_the_writer_lock_and_answers_no_queries(tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "py_resolution", repo)
    folder = str(tmp_path / "idx")
    with Index.open(folder, mode="write") as index:
        with pytest.raises(StoreBusy):  # one writer at a time: a second fails at once
            Index.open(folder, mode="write")
        with pytest.raises(InputError, match="open for writing"):
            _ = index.store
        index.update(repo, embedder=None, name="pyr")
    with Index.open(folder, mode="write"):  # released
        pass
    with Index.open(folder, mode="serve") as index:
        assert index.store.find_objects(name="slugify")
        with pytest.raises(InputError, match="open for queries"):
            index.update(repo, embedder=None, name="pyr")
    with pytest.raises(InputError, match="not 'read'"):
        Index.open(folder, mode="read")  # type: ignore[arg-type]


def test_a_failed_first_write_leaves_no_folder_behind(tmp_path):
    folder = tmp_path / "idx"
    with pytest.raises(StoreNotFound), Index.open(str(folder), mode="write") as index:
        index.push("bolt://127.0.0.1:1")  # an embedded index that is not there yet
    assert not folder.exists()


def test_a_server_store_keeps_its_views_beside_it_in_the_index_folder(monkeypatch, tmp_path):
    monkeypatch.delenv("VITALRAG_INDEX_DIR", raising=False)
    where = IndexLocation.of("bolt://127.0.0.1:1")
    assert where.server and where.folder == Path(".vitalrag")
    assert IndexLocation.of("bolt://127.0.0.1:1", str(tmp_path)).folder == tmp_path
    local = IndexLocation.of(str(tmp_path / "idx"))
    assert not local.server and local.folder == tmp_path / "idx"


def test_no_module_above_the_layers_names_their_files():
    root = Path(vitalrag.__file__).parent
    for path in sorted(root.rglob("*.py")):
        if path.relative_to(root).parts[0] in ("graph", "retrieve"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        named = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
        named |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        named |= {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
        assert not named & LAYER_FILES, f"{path.relative_to(root)} names {sorted(named & LAYER_FILES)}"


def test_only_the_index_module_puts_a_store_and_its_views_together():
    root = Path(vitalrag.__file__).parent
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if rel.parts[0] in ("graph", "retrieve") or rel.as_posix() == "index.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        named = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        named |= {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
        calls = {(f.value.id, f.attr) if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
                 else (None, f.id) if isinstance(f, ast.Name) else None
                 for f in (n.func for n in ast.walk(tree) if isinstance(n, ast.Call))}
        opening = (named & {"ServerViews", "SnapshotViews", "load_consistent"}
                   | calls & {("RetrievalIndex", "load"), ("RetrievalIndex", "build"), (None, "Index"),
                              (None, "Retriever")})
        assert not opening, f"{rel} opens an index by hand: {sorted(map(str, opening))}"
