"""Every kind of bad file is reported with its reason and the run goes on."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from vitalrag.errors import EmptyRepository, RepositoryNotFound
from vitalrag.graph.memory import MemoryStore
from vitalrag.ingest import index_repository


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
    from vitalrag.ingest import python

    root = tmp_path / "r"
    root.mkdir()
    (root / "good.py").write_text("def fine():\n    return 1\n")
    (root / "bad.py").write_text("def trips():\n    return 2\n")
    (root / "use.py").write_text("from good import fine\n\n\ndef use():\n    return fine()\n")
    real = python.extract

    def trips_on_bad(repo, path, source):
        if path == "bad.py":
            raise IndexError("a bug in the extractor")
        return real(repo, path, source)

    monkeypatch.setattr(python, "extract", trips_on_bad)
    if workers > 1:
        _parallel_from_the_first_byte(monkeypatch)  # the extractor raises in a parse worker
    store = MemoryStore(tmp_path / "idx")
    report = index_repository(root, store, name="x", workers=workers)
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
        index_repository(tmp_path / "empty", MemoryStore(tmp_path / "idx"))


def test_parallel_and_serial_give_the_same_graph(tmp_path):
    from tests_support import make_python_tree

    root = make_python_tree(tmp_path / "many", files=80)
    a, b = MemoryStore(tmp_path / "a"), MemoryStore(tmp_path / "b")
    index_repository(root, a, name="many", workers=1)
    index_repository(root, b, name="many", workers=2)
    assert a.export() == b.export()
    assert len(a.find_objects(kind="function")) == len(a.find_objects(kind="method")) == 80


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_parse_workers_started_either_way_give_the_same_graph(tmp_path, monkeypatch, method):
    """Workers are forked when this process has one thread and started fresh
    (the platform's default) when it has more, e.g. under ``serve``'s watcher."""
    import multiprocessing

    from tests_support import make_python_tree
    from vitalrag.ingest import pipeline

    root = make_python_tree(tmp_path / "many", files=60)
    a, b = MemoryStore(tmp_path / "a"), MemoryStore(tmp_path / "b")
    index_repository(root, a, name="many", workers=1)
    monkeypatch.setattr(pipeline, "_worker_context", lambda: multiprocessing.get_context(method))
    seen: list[tuple[str, int, int]] = []
    index_repository(root, b, name="many", workers=3, progress=lambda *a: seen.append(a))
    assert a.export() == b.export()
    parse = [(done, total) for stage, done, total in seen if stage == "parse"]
    assert parse[-1] == (61, 61) and [d for d, _ in parse] == sorted(d for d, _ in parse)


_PARALLEL_RESOLVE = r"""
import json, multiprocessing, os, sys
from vitalrag.graph.memory import MemoryStore
from vitalrag.ingest import index_repository, pipeline

root, out, dies = sys.argv[1], sys.argv[2], sys.argv[3] == "dies"
pipeline._PARALLEL_MIN_REFS = 1
pipeline._PARALLEL_MIN_BYTES = 1 << 40  # parse here, resolve in parallel
forks = []
real_start = multiprocessing.process.BaseProcess.start
def counting_start(self):
    forks.append(self.name)
    return real_start(self)
multiprocessing.process.BaseProcess.start = counting_start
if dies:
    def _dies(part, share, conn):
        os._exit(3)
    pipeline._resolve_share = _dies
import threading
stop = threading.Event()
threading.Thread(target=stop.wait, daemon=True).start()  # a progress bar's thread, say
store = MemoryStore(out)
index_repository(root, store, name="r", workers=3)
stop.set()
json.dump({"forks": forks, "export": store.export()}, open(out + ".json", "w"))
"""


@pytest.mark.parametrize("fixture", ["py_resolution", "java_shapes"])
def test_parallel_resolution_equals_one_process(tmp_path, fixture):
    """References resolved in shares on forked processes give the graph one
    process gives; a resolve worker that dies has its share resolved here.
    (Run in a fresh interpreter with one extra thread, as under the CLI's
    progress bar: outside Linux, resolve workers are forked only from a process
    with one thread, which a test session need not be.)"""
    import json
    import subprocess
    import sys

    fixtures = Path(__file__).parents[1] / "fixtures" / "repos"
    one = MemoryStore(tmp_path / "one")
    index_repository(fixtures / fixture, one, name="r", workers=1)
    expected = json.loads(json.dumps(one.export()))  # tuples as lists, like the child's JSON
    for mode in ("lives", "dies"):
        out = str(tmp_path / mode)
        r = subprocess.run([sys.executable, "-c", _PARALLEL_RESOLVE, str(fixtures / fixture), out, mode],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr[-2000:]
        got = json.loads(Path(out + ".json").read_text())
        assert got["forks"] and set(got["forks"]) == {"vitalrag-resolve"}  # shares went to children
        assert got["export"] == expected, mode
        if mode == "dies":
            assert "a resolve worker ended early" in r.stderr


def test_files_of_a_worker_that_dies_are_parsed_here(tmp_path, monkeypatch, caplog):
    """A parse worker killed mid-run (out of memory, a crash in a grammar) loses
    nothing: the files it took and never sent back are parsed in this process."""
    import multiprocessing

    from tests_support import make_python_tree
    from vitalrag.ingest import pipeline

    root = make_python_tree(tmp_path / "many", files=80)
    a, b = MemoryStore(tmp_path / "a"), MemoryStore(tmp_path / "b")
    index_repository(root, a, name="many", workers=1)
    real = pipeline.parse_file

    def dies_in_a_worker(repo, sf):
        if multiprocessing.parent_process() is not None:
            os._exit(3)  # the worker dies on the first file it took
        time.sleep(0.01)  # this process is slow enough for the worker to take one
        return real(repo, sf)

    monkeypatch.setattr(pipeline, "parse_file", dies_in_a_worker)
    monkeypatch.setattr(pipeline, "_worker_context", lambda: multiprocessing.get_context("fork"))
    with caplog.at_level("WARNING", logger="vitalrag.ingest.pipeline"):
        report = index_repository(root, b, name="many", workers=2)
    assert "a parse worker ended early" in caplog.text  # it did die
    assert a.export() == b.export()
    assert report.files == 81 and not report.skipped  # 80 modules and __init__.py


def test_a_worker_killed_holding_the_file_counter_does_not_hang_the_run(tmp_path, monkeypatch, caplog):
    import multiprocessing

    from tests_support import make_python_tree
    from vitalrag.ingest import pipeline

    root = make_python_tree(tmp_path / "many", files=40)
    a, b = MemoryStore(tmp_path / "a"), MemoryStore(tmp_path / "b")
    index_repository(root, a, name="many", workers=1)

    def dies_holding_the_lock(repo, files, claim, results, budget, *rest):
        claim.get_lock().acquire()
        os._exit(3)

    real = pipeline.parse_file

    def slow_parse(repo, sf):  # so that the worker is surely up and holding the lock
        time.sleep(0.02)
        return real(repo, sf)

    monkeypatch.setattr(pipeline, "_worker_main", dies_holding_the_lock)
    monkeypatch.setattr(pipeline, "parse_file", slow_parse)
    monkeypatch.setattr(pipeline, "_worker_context", lambda: multiprocessing.get_context("fork"))
    monkeypatch.setattr(pipeline, "_CLAIM_TIMEOUT", 0.5)
    with caplog.at_level("WARNING", logger="vitalrag.ingest.pipeline"):
        index_repository(root, b, name="many", workers=2)
    assert "file counter is stuck" in caplog.text
    assert a.export() == b.export()


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


# ---- parse workers resolve what they parsed --------------------------------------------


def _parallel_from_the_first_byte(monkeypatch, method: str = "fork") -> None:
    import multiprocessing

    from vitalrag.ingest import pipeline

    monkeypatch.setattr(pipeline, "_PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(pipeline, "_worker_context", lambda: multiprocessing.get_context(method))


@pytest.mark.parametrize("workers", [2, 3])
def test_parse_workers_resolve_the_java_files_they_parsed(tmp_path, monkeypatch, workers):
    """Each parse worker resolves the references of the Java files it parsed,
    over the whole repository's index (it is sent the index view of every
    other file): the graph equals the one a single process makes."""
    from tests_support import make_java_tree
    from vitalrag.ingest import java

    root = make_java_tree(tmp_path / "j", files=60)
    (root / "tools.py").write_text("def helper():\n    return 1\n\n\ndef main():\n    return helper()\n")
    a, b = MemoryStore(tmp_path / "a"), MemoryStore(tmp_path / "b")
    one = index_repository(root, a, name="j", workers=1)
    _parallel_from_the_first_byte(monkeypatch)
    marks = tmp_path / "marks"
    real = java.resolve_each

    def counting(repo, group, files):  # runs in the workers (forked after this patch)
        with open(marks, "a") as fh:
            fh.write(f"{os.getpid()} {len(files)} {len(group)}\n")
        return real(repo, group, files)

    monkeypatch.setattr(java, "resolve_each", counting)
    report = index_repository(root, b, name="j", workers=workers)
    assert a.export() == b.export()
    # per class: its method calls twice, shared, its own f and the previous class's m and f,
    # and its field makes the previous class (C0: twice, shared, f and Base), and one Python call
    assert report.edges == one.edges and report.edges["CALLS"] == 59 * 6 + 4 + 1
    assert report.unresolved == one.unresolved == 0
    rows = [tuple(map(int, line.split())) for line in marks.read_text().splitlines()]
    assert rows and all(pid != os.getpid() for pid, _, _ in rows)
    assert 1 <= len({pid for pid, _, _ in rows}) <= workers - 1
    assert all(group == 62 for _, _, group in rows)  # every Java file, whole or as a view
    assert 0 < sum(n for _, n, _ in rows) < 62  # this process parsed (and resolved) some too


def test_a_parse_worker_that_dies_resolving_has_its_files_resolved_here(tmp_path, monkeypatch, caplog):
    from tests_support import make_java_tree
    from vitalrag.ingest import java

    root = make_java_tree(tmp_path / "j", files=40)
    a, b = MemoryStore(tmp_path / "a"), MemoryStore(tmp_path / "b")
    index_repository(root, a, name="j", workers=1)
    _parallel_from_the_first_byte(monkeypatch)

    def dies(repo, group, files):
        os._exit(3)

    monkeypatch.setattr(java, "resolve_each", dies)
    with caplog.at_level("WARNING", logger="vitalrag.ingest.pipeline"):
        index_repository(root, b, name="j", workers=2)
    assert "a parse worker ended early; resolving its" in caplog.text
    assert a.export() == b.export()


def test_spawned_parse_workers_resolve_java_too(tmp_path, monkeypatch):
    """Started fresh (as under the CLI's progress bar), workers resolve their files
    and write their facts-cache entries just the same."""
    from tests_support import make_java_tree

    root = make_java_tree(tmp_path / "j", files=30)
    a, b = MemoryStore(tmp_path / "a"), MemoryStore(tmp_path / "b")
    index_repository(root, a, name="j", workers=1)
    _parallel_from_the_first_byte(monkeypatch, "spawn")
    first = index_repository(root, b, name="j", workers=2, cache_dir=tmp_path / "facts")
    assert a.export() == b.export() and first.parsed == 32
    again = index_repository(root, b, name="j", workers=2, cache_dir=tmp_path / "facts")
    assert again.reused == 32 and a.export() == b.export()


def test_parse_workers_write_the_facts_cache_of_their_files(tmp_path, monkeypatch):
    """With a facts cache (as ``vitalrag index`` runs), each parse worker writes
    the cache entries of the files it parsed, whole, though it sends them here
    without the references it resolves itself; a second run reuses every file."""
    import gzip

    import orjson

    from tests_support import make_java_tree
    from vitalrag.ingest.cache import SegmentWriter, facts_from_json

    root = make_java_tree(tmp_path / "j", files=40)
    a, b = MemoryStore(tmp_path / "a"), MemoryStore(tmp_path / "b")
    index_repository(root, a, name="j", workers=1)
    _parallel_from_the_first_byte(monkeypatch)

    writers = tmp_path / "writers"
    real = SegmentWriter.write

    def logged(self, path, digest, facts):
        with open(writers, "a") as fh:
            fh.write(f"{os.getpid()}\n")
        return real(self, path, digest, facts)

    monkeypatch.setattr(SegmentWriter, "write", logged)
    cache_dir = tmp_path / "facts"
    first = index_repository(root, b, name="j", workers=2, cache_dir=cache_dir)
    assert a.export() == b.export() and first.parsed == 42 and first.reused == 0
    pids = writers.read_text().split()
    assert len(pids) == 42 and str(os.getpid()) in pids and len(set(pids)) == 2  # here and in the worker
    entries = [orjson.loads(line) for line in gzip.decompress((cache_dir / "j.jsonl.gz").read_bytes()).splitlines()[1:]]
    assert len(entries) == 42
    for path, _digest, _language, body in entries:
        facts = facts_from_json(body)
        if "/C" in path:  # whole, whoever parsed it: every class calls
            assert any(r.kind == "call" for r in facts.refs), path
    again = index_repository(root, b, name="j", workers=2, cache_dir=cache_dir)
    assert again.parsed == 0 and again.reused == 42
    assert a.export() == b.export()


def test_a_file_changed_while_its_worker_died_keeps_its_objects(tmp_path, monkeypatch, caplog):
    """A worker that dies before resolving sent its files' facts without their
    references: they are parsed again here, unless a file changed since (its
    objects stay as parsed, its references are left out, and the run says so)."""
    from tests_support import make_java_tree
    from vitalrag.ingest import java

    root = make_java_tree(tmp_path / "j", files=30)
    _parallel_from_the_first_byte(monkeypatch)

    def edits_then_dies(repo, group, files):
        for f in files:
            (root / f.path).write_text((root / f.path).read_text() + "// edited\n")
        os._exit(3)

    monkeypatch.setattr(java, "resolve_each", edits_then_dies)
    store = MemoryStore(tmp_path / "s")
    with caplog.at_level("WARNING", logger="vitalrag.ingest.pipeline"):
        report = index_repository(root, store, name="j", workers=2)
    edited = [p for p in caplog.messages if "changed while it was indexed" in p]
    assert edited and report.files == 32
    assert len(store.find_objects(kind="class")) == 32


def test_the_saved_graph_is_the_same_whatever_the_workers(tmp_path, monkeypatch):
    """Not only the same graph: the same file, edge order included (objects,
    edges and unresolved references are saved in the order they were made)."""
    import orjson

    from tests_support import graph_file, make_java_tree

    root = make_java_tree(tmp_path / "j", files=50)
    (root / "src" / "p" / "Imports.java").write_text(
        "package p;\n\n" + "".join(f"import static p.Util.twice;\nimport p.C{i};\n" for i in range(30))
        + "public class Imports { int f() { return twice(1); } }\n")
    _parallel_from_the_first_byte(monkeypatch)
    saved = []
    for workers in (1, 2, 3):
        store = MemoryStore(tmp_path / f"w{workers}")
        index_repository(root, store, name="j", workers=workers)
        data = orjson.loads(graph_file(tmp_path / f"w{workers}").read_bytes())
        data.pop("meta")
        saved.append(data)
    assert saved[0] == saved[1] == saved[2]


# ---- parse workers kept between runs ---------------------------------------------------


@pytest.fixture
def java_tree(tmp_path, monkeypatch):
    """A 40-class Java tree and its graph made on one process (an exported store);
    later runs parse in parallel from the first byte."""
    from tests_support import make_java_tree

    from vitalrag.ingest import pipeline

    root = make_java_tree(tmp_path / "j", files=40)
    one = MemoryStore(tmp_path / "one")
    index_repository(root, one, name="j", workers=1)
    _parallel_from_the_first_byte(monkeypatch)
    # what else the session holds (the real model is over 1 GiB resident) must not
    # decide whether workers are kept; the size rule has a test of its own
    monkeypatch.setattr(pipeline, "_KEEP_MAX_RSS", 1 << 62)
    return root, one.export()


def _record_pools(monkeypatch) -> list[bool]:
    """``shared`` of every parse pool started from now on."""
    from vitalrag.ingest import pipeline

    made: list[bool] = []
    real = pipeline._ParsePool.__init__

    def recording(self, n, shared):
        made.append(shared)
        real(self, n, shared)

    monkeypatch.setattr(pipeline._ParsePool, "__init__", recording)
    return made


def test_parse_workers_are_kept_for_the_next_run(tmp_path, java_tree):
    """A later run reuses the parse workers of the first (none is started again)
    and makes the same graph; ``shutdown_workers`` stops them."""
    from vitalrag.ingest import pipeline

    root, expected = java_tree
    stores = [MemoryStore(tmp_path / f"s{k}") for k in range(3)]
    index_repository(root, stores[0], name="j", workers=2)
    pids = pipeline.worker_pids()
    assert len(pids) == 1 and pids[0] != os.getpid()
    for store in stores[1:]:
        index_repository(root, store, name="j", workers=2)
        assert pipeline.worker_pids() == pids
    assert all(store.export() == expected for store in stores)
    index_repository(root, MemoryStore(tmp_path / "three"), name="j", workers=3)  # another size: a new pool
    assert len(pipeline.worker_pids()) == 2 and pids[0] not in pipeline.worker_pids()
    procs = list(pipeline._POOL.procs)
    pipeline.shutdown_workers()
    assert pipeline._POOL is None and not any(proc.is_alive() for proc in procs)


def test_a_kept_worker_that_died_between_runs_is_replaced(tmp_path, java_tree):
    import signal

    from vitalrag.ingest import pipeline

    root, expected = java_tree
    index_repository(root, MemoryStore(tmp_path / "a"), name="j", workers=2)
    (pid,) = pipeline.worker_pids()
    os.kill(pid, signal.SIGKILL)
    pipeline._POOL.procs[0].join(5)
    b = MemoryStore(tmp_path / "b")
    index_repository(root, b, name="j", workers=2)
    assert pipeline.worker_pids() not in ([], [pid])
    assert b.export() == expected


def test_a_failed_run_does_not_leave_its_workers_to_the_next(tmp_path, monkeypatch, java_tree):
    """A run that fails after the parse (here: writing the store) closes its
    workers, which may still hold its messages; the next run starts new ones."""
    from vitalrag.graph import delta
    from vitalrag.ingest import pipeline

    root, expected = java_tree
    index_repository(root, MemoryStore(tmp_path / "a"), name="j", workers=2)
    (pid,) = pipeline.worker_pids()

    def fails(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(pipeline, "write_repository", fails)
    with pytest.raises(OSError, match="disk full"):
        index_repository(root, MemoryStore(tmp_path / "b"), name="j", workers=2)
    assert pipeline._POOL is None
    monkeypatch.setattr(pipeline, "write_repository", delta.write_repository)
    c = MemoryStore(tmp_path / "c")
    index_repository(root, c, name="j", workers=2)
    assert pipeline.worker_pids() not in ([], [pid])
    assert c.export() == expected


def test_runs_on_two_threads_at_once_each_have_workers(tmp_path, monkeypatch, java_tree):
    """The kept workers serve one run at a time: a run on another thread
    meanwhile starts workers of its own, closed after it."""
    import threading

    from vitalrag.ingest import pipeline

    root, expected = java_tree
    index_repository(root, MemoryStore(tmp_path / "warm"), name="j", workers=2)
    kept = pipeline.worker_pids()
    made = _record_pools(monkeypatch)
    stores = [MemoryStore(tmp_path / f"t{k}") for k in range(2)]
    errors: list[BaseException] = []
    inside = threading.Barrier(2)
    real_start = pipeline._ParsePool.start

    def start_together(self, *args):
        inside.wait(10)  # both runs hold a pool at once
        return real_start(self, *args)

    monkeypatch.setattr(pipeline._ParsePool, "start", start_together)

    def run(store):
        try:
            index_repository(root, store, name="j", workers=2)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    assert made == [False]  # one run took the kept pool, the other made its own
    assert pipeline.worker_pids() == kept
    assert all(s.export() == expected for s in stores)


_KEEPS_WORKERS = r"""
import sys, time
from vitalrag.graph.memory import MemoryStore
from vitalrag.ingest import index_repository, pipeline

pipeline._PARALLEL_MIN_BYTES = 0
index_repository(sys.argv[1], MemoryStore(sys.argv[2]), name="j", workers=3)
print(" ".join(map(str, pipeline.worker_pids())), flush=True)
time.sleep(600)
"""


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state in ("Z", "X")  # a zombie waits for a reaper, but has ended


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states from /proc")
def test_kept_workers_end_when_the_main_process_is_killed(tmp_path):
    """Kept workers (two here, each holding the other's pipe end as forked) do
    not outlive a main process killed without a chance to stop them."""
    import signal
    import sys

    from tests_support import make_java_tree

    root = make_java_tree(tmp_path / "j", files=20)
    proc = subprocess.Popen([sys.executable, "-c", _KEEPS_WORKERS, str(root), str(tmp_path / "idx")],
                            stdout=subprocess.PIPE, text=True)
    try:
        pids = [int(p) for p in proc.stdout.readline().split()]
        assert len(pids) == 2 and not any(_gone(p) for p in pids)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        deadline = time.monotonic() + 15
        while not all(_gone(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert all(_gone(p) for p in pids)
    finally:
        proc.kill()
        proc.wait()


def test_workers_started_ahead_serve_the_first_run(tmp_path, java_tree):
    """``start_workers`` (the CLI calls it first thing) starts the workers the
    first run then uses; with one process there are none to start."""
    from vitalrag.ingest import pipeline

    root, expected = java_tree
    pipeline.start_workers(1)
    assert pipeline.worker_pids() == []
    pipeline.start_workers(2)
    pids = pipeline.worker_pids()
    assert len(pids) == 1
    b = MemoryStore(tmp_path / "b")
    index_repository(root, b, name="j", workers=2)
    assert pipeline.worker_pids() == pids
    assert b.export() == expected


def test_workers_are_not_kept_for_a_large_process(tmp_path, monkeypatch, java_tree):
    """Past ``_KEEP_MAX_RSS`` a run's workers are its own (a kept worker would
    hold on to the large process's memory): the run is the same, none is kept."""
    from vitalrag.ingest import pipeline

    root, expected = java_tree
    monkeypatch.setattr(pipeline, "_KEEP_MAX_RSS", 0)
    made = _record_pools(monkeypatch)
    b = MemoryStore(tmp_path / "b")
    index_repository(root, b, name="j", workers=2)
    assert made == [False] and pipeline.worker_pids() == []
    assert b.export() == expected
    assert pipeline._resident_bytes() > 10 << 20  # read from the system, not a stand-in
