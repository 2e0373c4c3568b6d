"""Every kind of bad file is reported with its reason and the run goes on."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
from pathlib import Path

import pytest

from vitalrag.errors import EmptyRepository, RepositoryNotFound
from vitalrag.graph.memory import MemoryStore
from vitalrag.ingest import index_repository, parallel
from vitalrag.ingest.parallel import ParsePool


def _reasons(report) -> dict[str, str]:
    return {s.path: s.reason for s in report.skipped}


@pytest.fixture
def messy_repo(tmp_path) -> Path:
    root = tmp_path / "messy"
    root.mkdir()
    (root / "good.py").write_text("def fine():\n    return 1\n")
    (root / "latin.py").write_bytes(b"# caf\xe9\ndef f():\n    pass\n")
    (root / "blob.py").write_bytes(b"\x00\x01\x02binary\x00")
    (root / "broken.py").write_text("def ok():\n    return 1\n\ndef bad(:\n    pass\n")
    (root / "huge.py").write_text("x = 1\n" * 5000)
    outside = tmp_path / "outside.py"
    outside.write_text("def secret():\n    pass\n")
    (root / "escape.py").symlink_to(outside)
    (root / "loop_a.py").symlink_to(root / "loop_b.py")
    (root / "loop_b.py").symlink_to(root / "loop_a.py")
    (root / "dangling.py").symlink_to(root / "nowhere.py")
    os.mkfifo(root / "pipe.py")  # a named pipe with a source extension is not a file
    sub = root / "sub"
    sub.mkdir()
    (sub / "mod.py").write_text("from good import fine\n\ndef use():\n    return fine()\n")
    (sub / "cycle").symlink_to(root, target_is_directory=True)
    (root / "node_modules").mkdir()
    (root / "node_modules" / "dep.js").write_text("function dep() {}\n")
    (root / ".gitignore").write_text("ignored_dir/\n*.gen.py\n")
    (root / "ignored_dir").mkdir()
    (root / "ignored_dir" / "x.py").write_text("def ignored():\n    pass\n")
    (root / "out.gen.py").write_text("def generated():\n    pass\n")
    return root


def test_bad_files_reported_and_run_goes_on(messy_repo, tmp_path):
    store = MemoryStore(tmp_path / "idx")
    report = index_repository(messy_repo, store, name="messy", workers=1, max_bytes=20_000)
    reasons = _reasons(report)
    assert reasons["latin.py"].startswith("not UTF-8")
    assert reasons["blob.py"] == "binary content under a source extension"
    assert reasons["broken.py"].startswith("syntax errors at line(s) 4")
    assert reasons["huge.py"] == "over size limit (30000 bytes > 20000)"
    assert reasons["escape.py"] == "symlink points outside the repository"
    assert reasons["loop_a.py"] == "symlink loop"
    assert reasons["loop_b.py"] == "symlink loop"
    assert reasons["dangling.py"] == "broken symlink"
    assert reasons["pipe.py"] == "not a regular file"
    assert reasons["sub/cycle/"] == "symlinked folder (indexed at its real path)"
    ids = {o.id for o in store.find_objects()}
    # the good files are indexed, the partly parsed one keeps what was recovered
    assert {"messy:good.py:fine", "messy:broken.py:ok", "messy:sub/mod.py:use"} <= ids
    assert not any("secret" in i or "ignored" in i or "generated" in i or "dep" in i for i in ids)
    assert report.files == 3
    assert [(e.source, e.target) for e in store.find_edges(kind="CALLS")] == [
        ("messy:sub/mod.py:use", "messy:good.py:fine")]


def test_unreadable_file_is_reported(messy_repo, tmp_path, monkeypatch):
    # root reads every file, so an EACCES is produced at the read itself
    real = Path.read_bytes

    def deny(self):
        if self.name == "good.py":
            raise PermissionError(13, "Permission denied")
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", deny)
    report = index_repository(messy_repo, MemoryStore(tmp_path / "idx"), name="messy", workers=1)
    assert _reasons(report)["good.py"] == "unreadable: Permission denied"


@pytest.mark.parametrize("workers", [1, 2])
def test_a_raising_extractor_is_reported_and_the_file_skipped(tmp_path, monkeypatch, workers):
    from vitalrag.ingest.lang.python import extraction as python

    root = tmp_path / "r"
    root.mkdir()
    (root / "good.py").write_text("def fine():\n    return 1\n")
    (root / "bad.py").write_text("def trips():\n    return 2\n")
    (root / "use.py").write_text("from good import fine\n\n\ndef use():\n    return fine()\n")
    real = python.extract

    def trips_on_bad(repo, path, source, *deadline):
        if path == "bad.py":
            raise IndexError("a bug in the extractor")
        return real(repo, path, source, *deadline)

    monkeypatch.setattr(python, "extract", trips_on_bad)
    monkeypatch.setattr(parallel, "_PARALLEL_MIN_BYTES", 0)  # the extractor raises in a parse worker
    store = MemoryStore(tmp_path / "idx")
    with ParsePool(workers, mp_context=multiprocessing.get_context("fork")) as pool:
        report = index_repository(root, store, name="x", executor=pool)
    assert _reasons(report) == {"bad.py": "extractor error: IndexError: a bug in the extractor"}
    assert report.files == 2
    assert {o.id for o in store.find_objects(kind="function")} == {"x:good.py:fine", "x:use.py:use"}
    assert [(e.source, e.target) for e in store.find_edges(kind="CALLS")] == [("x:use.py:use", "x:good.py:fine")]


def test_gitignore_through_git_ls_files(tmp_path):
    root = tmp_path / "g"
    root.mkdir()
    (root / "a.py").write_text("def a():\n    pass\n")
    (root / "build").mkdir()
    (root / "build" / "b.py").write_text("def b():\n    pass\n")
    (root / ".gitignore").write_text("build/\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    store = MemoryStore(tmp_path / "idx")
    report = index_repository(root, store, name="g", workers=1)
    assert report.files == 1
    assert [o.id for o in store.find_objects(kind="function")] == ["g:a.py:a"]


def test_nested_gitignore_without_git(tmp_path):
    root = tmp_path / "n"
    (root / "pkg" / "gen").mkdir(parents=True)
    (root / "pkg" / ".gitignore").write_text("gen/\n")
    (root / "pkg" / "keep.py").write_text("def keep():\n    pass\n")
    (root / "pkg" / "gen" / "drop.py").write_text("def drop():\n    pass\n")
    store = MemoryStore(tmp_path / "idx")
    index_repository(root, store, name="n", workers=1)
    assert [o.id for o in store.find_objects(kind="function")] == ["n:pkg/keep.py:keep"]


def test_missing_path_and_empty_repository(tmp_path):
    with pytest.raises(RepositoryNotFound, match="does not exist"):
        index_repository(tmp_path / "nope", MemoryStore(tmp_path / "idx"))
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "README.md").write_text("# nothing to parse\n")
    with pytest.raises(EmptyRepository, match="no source files"):
        index_repository(tmp_path / "empty", MemoryStore(tmp_path / "idx"), content="code")


@pytest.mark.skipif(os.geteuid() != 0 and os.name != "posix", reason="posix only")
def test_reindex_replaces_previous_objects(tmp_path):
    root = tmp_path / "r"
    root.mkdir()
    (root / "a.py").write_text("def one():\n    pass\n")
    store = MemoryStore(tmp_path / "idx")
    index_repository(root, store, name="r", workers=1)
    (root / "a.py").write_text("def two():\n    pass\n")
    index_repository(root, store, name="r", workers=1)
    assert [o.id for o in store.find_objects(kind="function")] == ["r:a.py:two"]
