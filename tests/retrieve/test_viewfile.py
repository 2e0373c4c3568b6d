"""The views file of a retrieval snapshot, and the snapshot read by the piece: a
one-shot reader (``SnapshotViews``) answers every ``ViewIndex`` question as the
snapshot loaded whole (``RetrievalIndex``) does."""

from __future__ import annotations

import sqlite3

import pytest

from vitalrag.errors import StoreCorrupt
from vitalrag.graph.memory import MemoryStore
from vitalrag.graph.version import current
from vitalrag.model import View
from vitalrag.retrieve import viewfile
from vitalrag.index import Index
from vitalrag.ingest import index_repository
from vitalrag.retrieve.api import Retriever
from vitalrag.retrieve.index import RetrievalIndex, SnapshotViews

from tests_support import FIXTURES, CountingEmbedder


def _views(n: int) -> list[View]:
    out = []
    for i in range(n):
        repo = "a" if i < n // 3 or i > 2 * n // 3 else "b"  # a's views in two runs
        kind = ("body", "signature", "window", "body")[i % 4]  # a second body of an object comes later
        out.append(View(f"v{i}", f"{repo}:m.py:f{i // 4}", kind, "m.py", i, i + 2, f"def f{i // 4}(): ünïcode {i}",
                        f"h{i}", f"f{i // 4}" if i % 3 else "", repo))
    return out


def test_the_file_gives_back_what_was_written(tmp_path):
    views = _views(300)  # several blocks, the last one short
    path = tmp_path / viewfile.FILE
    viewfile.write(path, views)
    assert viewfile.read(path) == views
    f = viewfile.ViewFile(path)
    assert f.count == 300
    positions = [299, 0, 64, 63, 128, 5, 5]
    assert f.views(positions) == [views[p] for p in positions]
    whole = RetrievalIndex(tmp_path, views, None, None, None)  # type: ignore[arg-type]
    objects = sorted({v.object_id for v in views}) + ["a:nothing"]
    assert f.bodies(objects) == whole.bodies(objects)
    names = ["f1", "f2", "f7", "nothing"]
    assert f.names(names) == {n: whole.names[n] for n in names if n in whole.names}
    assert f.runs() == [("a", 0, 100), ("b", 100, 201), ("a", 201, 300)]
    f.close()


def test_a_file_of_another_format_is_refused(tmp_path):
    path = tmp_path / viewfile.FILE
    viewfile.write(path, _views(10))
    con = sqlite3.connect(path)
    with con:
        con.execute("UPDATE info SET value = '1' WHERE key = 'format'")
    con.close()
    for read in (viewfile.read, viewfile.ViewFile):
        with pytest.raises(StoreCorrupt, match="format 1 .*this VitalRAG reads format 2"):
            read(path)


def test_a_damaged_file_is_one_line(tmp_path):
    path = tmp_path / viewfile.FILE
    viewfile.write(path, _views(100))
    con = sqlite3.connect(path)
    con.execute("UPDATE blocks SET data = x'00ff' WHERE b = 1")
    con.commit()
    con.close()
    with pytest.raises(StoreCorrupt, match="malformed block"):
        viewfile.read(path)
    f = viewfile.ViewFile(path)
    assert f.views([3])[0].id == "v3"  # block 0 is whole
    with pytest.raises(StoreCorrupt, match="malformed block"):
        f.views([70])
    path.write_bytes(b"not a database at all")
    with pytest.raises(StoreCorrupt, match="cannot read retrieval views"):
        viewfile.ViewFile(path)


def test_read_by_the_piece_answers_as_loaded_whole(tmp_path):
    store = MemoryStore(tmp_path / "s")
    for name in ("a", "b", "c"):
        index_repository(FIXTURES / "py_resolution", store, name=name, workers=1)
    emb = CountingEmbedder()
    RetrievalIndex.build(store, store.folder, embedder=emb)
    version = current(store.folder)
    whole = RetrievalIndex.load(store.folder)
    piece = SnapshotViews.open(store.folder, version)
    assert isinstance(piece, SnapshotViews)
    assert (piece.size, piece.model, piece.has_dense, piece.repos) == (whole.size, whole.model, True, whole.repos)
    queries = ["make an engine and run it", "Engine prepare", "setup base", "zzzz"]
    idents = sorted(whole.names) + ["missing"]
    for allowed in (None, frozenset({"b"}), frozenset({"a", "c"}), frozenset({"a", "b", "c"})):
        for q in queries:
            for k in (1, 5, whole.size):
                assert piece.bm25(q, k, allowed) == whole.bm25(q, k, allowed), (q, k, allowed)
                vector = emb.encode([q])[0]
                assert piece.nearest(vector, k, allowed) == whole.nearest(vector, k, allowed), (q, k, allowed)
        assert piece.names_of(idents, allowed) == {
            n: ids for n, ids in whole.names_of(idents, allowed).items() if n in idents}
    objects = sorted({v.object_id for v in whole.views})
    assert piece.bodies(objects) == whole.bodies(objects)
    assert piece.views == whole.views
    # a one-shot retriever reads the snapshot by the piece and ranks as a loaded one
    loaded = Retriever(store, whole, emb)
    opened = Index.open(str(store.folder)).retriever(emb)
    assert isinstance(opened.views, SnapshotViews)
    for name in ("bm25", "dense", "walk", "fused"):
        got = opened.search("make an engine and run it", retriever=name, k=10)
        assert got == loaded.search("make an engine and run it", retriever=name, k=10), name
