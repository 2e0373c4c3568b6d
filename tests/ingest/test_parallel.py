"""``ParsePool``: parsing on worker processes the caller owns gives
what one process gives, loses nothing when a worker dies, and leaves nothing
behind."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests_support import graph_file, graph_payload, make_java_tree, make_python_tree

from vitalrag.graph import delta
from vitalrag.graph.memory import MemoryStore
from vitalrag.ingest import index_repository, parallel, parse, pipeline
from vitalrag.ingest.parallel import ParsePool

FIXTURES = Path(__file__).parents[1] / "fixtures" / "repos"


@pytest.fixture
def parallel_from_the_first_byte(monkeypatch):
    """Pools parse every repository in their workers and resolve it on forked
    processes, however small."""
    monkeypatch.setattr(parallel, "_PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(parallel, "_PARALLEL_MIN_REFS", 0)


def _pool(workers: int = 2, method: str = "fork") -> ParsePool:
    return ParsePool(workers, mp_context=multiprocessing.get_context(method))


def _java(tmp_path: Path, files: int = 40) -> tuple[Path, dict]:
    """A Java tree and its graph made in one process (an exported store)."""
    root = make_java_tree(tmp_path / "j", files=files)
    one = MemoryStore(tmp_path / "one")
    index_repository(root, one, name="j")
    return root, one.export()


def _logging_parse(monkeypatch, marks: Path, dies_in_a_worker: bool = False) -> None:
    """Every parsed file writes the parsing process's id to ``marks`` (patched
    before a pool starts, so forked workers run it too)."""
    real = parse.parse_file

    def logged(repo, sf):
        if dies_in_a_worker and multiprocessing.parent_process() is not None:
            os._exit(3)
        with open(marks, "a") as fh:
            fh.write(f"{os.getpid()}\n")
        return real(repo, sf)

    monkeypatch.setattr(parse, "parse_file", logged)


def test_parallel_and_serial_give_the_same_graph(tmp_path):
    root = make_python_tree(tmp_path / "many", files=80)
    a, b = MemoryStore(tmp_path / "a"), MemoryStore(tmp_path / "b")
    index_repository(root, a, name="many")
    index_repository(root, b, name="many", workers=2)  # a pool for this call
    assert a.export() == b.export()
    assert len(a.find_objects(kind="function")) == len(a.find_objects(kind="method")) == 80


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_workers_started_either_way_give_the_same_graph(tmp_path, method, parallel_from_the_first_byte):
    """Forked when this process has one thread, started fresh (the platform's
    default) when it has more; progress is told in order, to the last file."""
    root = make_python_tree(tmp_path / "many", files=60)
    a, b = MemoryStore(tmp_path / "a"), MemoryStore(tmp_path / "b")
    index_repository(root, a, name="many")
    seen: list[tuple[str, int, int]] = []
    with _pool(3, method) as pool:
        index_repository(root, b, name="many", executor=pool, progress=lambda *a: seen.append(a))
    assert a.export() == b.export()
    parse_steps = [(done, total) for stage, done, total in seen if stage == "parse"]
    assert parse_steps[-1] == (61, 61) and [d for d, _ in parse_steps] == sorted(d for d, _ in parse_steps)


def test_a_pool_serves_many_runs_on_the_same_workers(tmp_path, monkeypatch, parallel_from_the_first_byte):
    """The caller's pool parses every run it is given on the same workers (and
    this process), started once, and each run makes the graph one process makes."""
    root, expected = _java(tmp_path)
    marks = tmp_path / "marks"
    _logging_parse(monkeypatch, marks)
    with _pool(3) as pool:
        workers = {p.pid for p in multiprocessing.active_children()}
        assert len(workers) == 2  # started on entry: three parsing processes with this one
        for k in range(3):
            store = MemoryStore(tmp_path / f"s{k}")
            index_repository(root, store, name="j", executor=pool)
            assert store.export() == expected
    pids = {int(p) for p in marks.read_text().split()}
    assert pids - {os.getpid()} <= workers and pids & workers
    assert len(marks.read_text().split()) == 3 * 42
    assert not multiprocessing.active_children()  # closed on exit


def test_one_worker_means_this_process(tmp_path, monkeypatch, parallel_from_the_first_byte):
    root, expected = _java(tmp_path, files=10)
    marks = tmp_path / "marks"
    _logging_parse(monkeypatch, marks)
    with ParsePool(1) as pool:
        assert not multiprocessing.active_children()
        store = MemoryStore(tmp_path / "s")
        index_repository(root, store, name="j", executor=pool)
    assert store.export() == expected
    assert set(marks.read_text().split()) == {str(os.getpid())}


def test_files_of_a_worker_that_dies_are_parsed_here(tmp_path, monkeypatch, caplog, parallel_from_the_first_byte):
    """A worker killed mid-run (out of memory, a crash in a grammar) breaks the
    pool: the files not yet parsed are parsed in this process, the run goes on,
    and the pool's next run starts new workers."""
    root = make_python_tree(tmp_path / "many", files=80)
    a, b, c = (MemoryStore(tmp_path / k) for k in "abc")
    index_repository(root, a, name="many")
    real = parse.parse_file
    marks = tmp_path / "marks"
    _logging_parse(monkeypatch, marks, dies_in_a_worker=True)
    with _pool() as pool:
        first = {p.pid for p in multiprocessing.active_children()}
        with caplog.at_level("WARNING", logger="vitalrag.ingest.parallel"):
            report = index_repository(root, b, name="many", executor=pool)
        assert "a parse worker ended early" in caplog.text
        assert a.export() == b.export()
        assert report.files == 81 and not report.skipped  # 80 modules and __init__.py
        assert set(marks.read_text().split()) == {str(os.getpid())}
        monkeypatch.setattr(parse, "parse_file", real)
        index_repository(root, c, name="many", executor=pool)
        assert not first & {p.pid for p in multiprocessing.active_children()}  # new workers
    assert c.export() == a.export()


def test_references_are_resolved_on_a_forked_process_too(tmp_path, monkeypatch, parallel_from_the_first_byte):
    """A pool resolves the files' references in shares: the first here, the
    others on processes forked after the whole-repository step; the graph, edge
    order included, is the one a single process makes."""
    from vitalrag.ingest.lang.java.resolution import JavaResolver

    root = make_java_tree(tmp_path / "j", files=40)
    one = MemoryStore(tmp_path / "one")
    index_repository(root, one, name="j")
    marks = tmp_path / "marks"
    real = JavaResolver.files

    def logged(self, facts):
        with open(marks, "a") as fh:
            fh.write(f"{os.getpid()} {len(facts)}\n")
        return real(self, facts)

    monkeypatch.setattr(JavaResolver, "files", logged)
    store = MemoryStore(tmp_path / "s")
    with _pool(3) as pool:
        workers = {p.pid for p in multiprocessing.active_children()}
        index_repository(root, store, name="j", executor=pool)
        assert {p.pid for p in multiprocessing.active_children()} == workers  # the resolvers were reaped
    shares = [line.split() for line in marks.read_text().splitlines()]
    assert len(shares) == 3 and sum(int(n) for _, n in shares) == 42
    pids = [int(pid) for pid, _ in shares]
    assert pids.count(os.getpid()) == 1 and len(set(pids)) == 3 and not set(pids) & workers
    assert graph_payload(tmp_path / "s") | {"meta": None} == graph_payload(tmp_path / "one") | {"meta": None}


def test_a_forked_resolver_that_dies_has_its_share_resolved_here(tmp_path, monkeypatch, caplog,
                                                                parallel_from_the_first_byte):
    root, expected = _java(tmp_path)

    def dies(resolver, share, conn):
        os._exit(3)

    monkeypatch.setattr(parallel, "_resolve_share", dies)
    store = MemoryStore(tmp_path / "s")
    with _pool() as pool, caplog.at_level("WARNING", logger="vitalrag.ingest.parallel"):
        index_repository(root, store, name="j", executor=pool)
    assert "a resolver ended early" in caplog.text
    assert store.export() == expected


def test_a_worker_killed_between_runs_costs_nothing_but_time(tmp_path, caplog, parallel_from_the_first_byte):
    root, expected = _java(tmp_path)
    with _pool() as pool:
        index_repository(root, MemoryStore(tmp_path / "a"), name="j", executor=pool)
        victim = multiprocessing.active_children()[0]
        os.kill(victim.pid, signal.SIGKILL)
        victim.join(5)
        for k in range(2):  # the first parses here (the pool is broken), the second on new workers
            store = MemoryStore(tmp_path / f"b{k}")
            index_repository(root, store, name="j", executor=pool)
            assert store.export() == expected


def test_a_failed_run_leaves_the_store_and_the_pool_as_they_were(tmp_path, monkeypatch,
                                                                  parallel_from_the_first_byte):
    """A run that fails after the parse (here: writing the store) changes nothing
    in the store, and the pool serves the next run."""
    root, expected = _java(tmp_path)
    store = MemoryStore(tmp_path / "s")
    (root / "src" / "p" / "Extra.java").write_text("package p;\n\nclass Extra {}\n")
    with _pool() as pool:
        index_repository(root, store, name="j", executor=pool)
        before = store.export()
        (root / "src" / "p" / "Extra.java").unlink()

        def fails(*args, **kwargs):
            raise OSError("disk full")

        monkeypatch.setattr(pipeline, "write_repository", fails)
        with pytest.raises(OSError, match="disk full"):
            index_repository(root, store, name="j", executor=pool)
        assert store.export() == before
        assert MemoryStore.open(tmp_path / "s", create=False).export() == before
        monkeypatch.setattr(pipeline, "write_repository", delta.write_repository)
        index_repository(root, store, name="j", executor=pool)
    assert store.export() == expected


def test_a_raising_parse_leaves_the_store_untouched(tmp_path, monkeypatch, parallel_from_the_first_byte):
    """What no file can cause (a parse that raises instead of skipping) fails
    the run before the store is touched, and leaves no cache segment behind."""
    root, expected = _java(tmp_path)
    store = MemoryStore(tmp_path / "s")
    index_repository(root, store, name="j")
    (root / "src" / "p" / "C0.java").write_text("package p;\n\nclass C0 {}\n")
    real = parse.parse_file

    def raises(repo, sf):
        if sf.path.endswith("C0.java"):
            raise MemoryError("out of memory")
        return real(repo, sf)

    monkeypatch.setattr(parse, "parse_file", raises)
    with _pool() as pool:
        with pytest.raises(MemoryError):
            index_repository(root, store, name="j", executor=pool, cache_dir=tmp_path / "facts")
        assert store.export() == expected
        assert (tmp_path / "facts").is_dir() and not list((tmp_path / "facts").glob(".*.part"))


def test_workers_write_the_facts_cache_of_their_files(tmp_path, monkeypatch, parallel_from_the_first_byte):
    """With a facts cache (as ``vitalrag index`` runs), each process writes the
    cache entries of the files it parsed, whole; a second run reuses every file."""
    import gzip

    import orjson

    from vitalrag.ingest.cache import SegmentWriter, facts_from_json

    root, expected = _java(tmp_path)
    writers = tmp_path / "writers"
    real = SegmentWriter.write

    def logged(self, path, digest, facts):
        with open(writers, "a") as fh:
            fh.write(f"{os.getpid()}\n")
        return real(self, path, digest, facts)

    monkeypatch.setattr(SegmentWriter, "write", logged)
    cache_dir = tmp_path / "facts"
    b = MemoryStore(tmp_path / "b")
    with _pool() as pool:
        first = index_repository(root, b, name="j", executor=pool, cache_dir=cache_dir)
        assert b.export() == expected and first.parsed == 42 and first.reused == 0
        pids = writers.read_text().split()
        assert len(pids) == 42 and len(set(pids)) == 2  # here and in the worker
        entries = [orjson.loads(line)
                   for line in gzip.decompress((cache_dir / "j.jsonl.gz").read_bytes()).splitlines()[1:]]
        assert len(entries) == 42
        for path, _digest, _language, body in entries:
            if "/C" in path:  # whole: every class calls
                assert any(r.kind == "call" for r in facts_from_json(body).refs), path
        again = index_repository(root, b, name="j", executor=pool, cache_dir=cache_dir)
    assert again.parsed == 0 and again.reused == 42
    assert b.export() == expected


def test_spawned_workers_write_the_facts_cache_too(tmp_path, parallel_from_the_first_byte):
    root, expected = _java(tmp_path, files=30)
    b = MemoryStore(tmp_path / "b")
    with _pool(2, "spawn") as pool:
        first = index_repository(root, b, name="j", executor=pool, cache_dir=tmp_path / "facts")
        assert b.export() == expected and first.parsed == 32
        again = index_repository(root, b, name="j", executor=pool, cache_dir=tmp_path / "facts")
    assert again.reused == 32 and b.export() == expected


def test_the_saved_graph_is_the_same_whatever_the_workers(tmp_path, parallel_from_the_first_byte):
    """Not only the same graph: the same file, edge order included (objects,
    edges and unresolved references are saved in the order they were made)."""
    import orjson

    root = make_java_tree(tmp_path / "j", files=50)
    (root / "src" / "p" / "Imports.java").write_text(
        "package p;\n\n" + "".join(f"import static p.Util.twice;\nimport p.C{i};\n" for i in range(30))
        + "public class Imports { int f() { return twice(1); } }\n")
    saved = []
    for workers in (1, 2, 3):
        store = MemoryStore(tmp_path / f"w{workers}")
        with _pool(workers) as pool:
            index_repository(root, store, name="j", executor=pool)
        data = graph_payload(tmp_path / f"w{workers}")
        data.pop("meta")
        saved.append(data)
    assert saved[0] == saved[1] == saved[2]


_HOLDS_WORKERS = r"""
import multiprocessing, sys, time
from vitalrag.ingest.parallel import ParsePool

with ParsePool(3):
    print(" ".join(str(p.pid) for p in multiprocessing.active_children()), flush=True)
    time.sleep(600)
"""


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state in ("Z", "X")  # a zombie waits for a reaper, but has ended


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states from /proc")
def test_workers_end_when_the_main_process_is_killed(tmp_path):
    """Workers (each holding the queue's pipe open for the others) do not
    outlive a main process killed without a chance to stop them."""
    proc = subprocess.Popen([sys.executable, "-c", _HOLDS_WORKERS], stdout=subprocess.PIPE, text=True)
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
