"""Neo4j store failures: every one is a clear VitalRAG error that never names the password."""

from __future__ import annotations

import logging
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from vitalrag.errors import InputError, StoreAuthError, StoreError, StoreUnavailable
from vitalrag.graph.store import open_store
from vitalrag.model import CodeObject, Edge

pytest.importorskip("neo4j", reason="the neo4j driver is not installed (pip install -e '.[dev]')")

from vitalrag.graph.neo4j import Neo4jSettings, Neo4jStore  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "neo4j-local"
PASSWORD = "pw-Secret-4711-do-not-print"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_unreachable_server_is_store_unavailable(monkeypatch, caplog):
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("NEO4J_PASSWORD", PASSWORD)
    uri = f"bolt://127.0.0.1:{free_port()}"
    with pytest.raises(StoreUnavailable) as info:
        open_store(uri)
    assert str(info.value) == f"cannot reach Neo4j at {uri}"
    assert PASSWORD not in caplog.text


def test_credentials_in_the_uri_are_stripped(monkeypatch):
    monkeypatch.delenv("NEO4J_PASSWORD", raising=False)
    port = free_port()
    settings = Neo4jSettings.from_env(f"neo4j://alice:{PASSWORD}@127.0.0.1:{port}")
    assert (settings.uri, settings.username, settings.password) == (f"neo4j://127.0.0.1:{port}", "alice", PASSWORD)
    assert PASSWORD not in repr(settings)
    with pytest.raises(StoreUnavailable) as info:
        open_store(f"bolt://alice:{PASSWORD}@127.0.0.1:{port}")
    assert PASSWORD not in str(info.value)
    assert f"127.0.0.1:{port}" in str(info.value)


def test_settings_from_the_environment():
    env = {"NEO4J_USERNAME": "bob", "NEO4J_PASSWORD": "x" * 8, "NEO4J_DATABASE": "code",
           "VITALRAG_NEO4J_BATCH": "50", "VITALRAG_NEO4J_WRITERS": "3"}
    s = Neo4jSettings.from_env("bolt://h:7687", env)
    assert (s.username, s.password, s.database, s.batch_size, s.writers) == ("bob", "x" * 8, "code", 50, 3)
    d = Neo4jSettings.from_env("bolt://h:7687", {})
    assert (d.username, d.password, d.database, d.batch_size, d.writers) == ("neo4j", None, None, 10000, 2)
    for name in ("VITALRAG_NEO4J_BATCH", "VITALRAG_NEO4J_WRITERS"):
        for bad in ("0", "-3", "many"):
            with pytest.raises(InputError, match=name):
                Neo4jSettings.from_env("bolt://h:7687", {name: bad})


def test_the_driver_is_imported_only_for_server_stores():
    code = ("import sys, vitalrag.cli, vitalrag.graph.store, vitalrag.graph.memory; "
            "assert 'neo4j' not in sys.modules and 'vitalrag.graph.neo4j' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.neo4j
def test_unknown_database_names_it(monkeypatch, neo4j_url):
    uri = neo4j_url
    monkeypatch.setenv("NEO4J_DATABASE", "nosuchdb4711")
    with pytest.raises(StoreError, match="no database 'nosuchdb4711'") as info:
        open_store(uri)
    assert not isinstance(info.value, StoreUnavailable)


@pytest.mark.neo4j
def test_open_store_gives_a_neo4j_store(neo4j_url):
    store = open_store(neo4j_url)
    try:
        assert isinstance(store, Neo4jStore)
        assert store.location == neo4j_url
    finally:
        store.close()


@pytest.mark.neo4j
def test_kinds_outside_the_closed_sets_are_refused(open_neo4j, repo):
    store = open_neo4j()
    with pytest.raises(InputError, match="unknown object kind 'macro'"):
        store.upsert_objects([CodeObject(f"{repo}:m", "macro", "m", "m", repo, "")])
    with pytest.raises(InputError, match="unknown edge kind 'USES'"):
        store.upsert_edges([Edge(repo, repo, "USES")])
    assert store.find_objects(repo=repo) == []


@pytest.mark.neo4j
def test_small_batches_write_everything(open_neo4j, repo, monkeypatch):
    monkeypatch.setenv("VITALRAG_NEO4J_BATCH", "3")
    store = open_neo4j()
    objs = [CodeObject(repo, "repository", repo, repo, repo, "")] + [
        CodeObject(f"{repo}:f{i}.py", "file", f"f{i}.py", f"f{i}.py", repo, f"f{i}.py") for i in range(10)]
    store.upsert_objects(objs)
    store.upsert_edges([Edge(repo, o.id, "CONTAINS", (i,)) for i, o in enumerate(objs[1:])])
    store.put_sources({o.id: o.path * 3 for o in objs[1:]})
    assert store.counts(repo) == {"objects": {"file": 10, "repository": 1}, "edges": {"CONTAINS": 10},
                                  "unresolved": 0}
    assert store.neighbors([repo]) == {o.id: 1 for o in objs[1:]}
    assert store.get_objects([o.id for o in objs]) == {o.id: o for o in objs}
    assert store.source(objs[5].id) == objs[5].path * 3
    store.delete_files(repo, [o.path for o in objs[1:]])
    assert store.counts(repo)["objects"] == {"repository": 1}


@pytest.mark.neo4j
def test_concurrent_writers_write_what_one_writer_does(open_neo4j, repo, monkeypatch, tmp_path):
    """Small batches on three writers at once: the same export as the embedded store,
    and an edge to a missing node still fails its batch with the node named."""
    from tests_support import FIXTURES

    from vitalrag.graph.memory import MemoryStore
    from vitalrag.graph.transfer import copy_store
    from vitalrag.ingest import index_repository

    monkeypatch.setenv("VITALRAG_NEO4J_BATCH", "2")
    monkeypatch.setenv("VITALRAG_NEO4J_WRITERS", "3")
    mem = MemoryStore(tmp_path / "idx")
    index_repository(FIXTURES / "py_resolution", mem, name=repo, workers=1)
    store = open_neo4j()
    assert store.settings.writers == 3
    copy_store(mem, store, repo)
    assert store.export(repo) == mem.export(repo)
    assert len(mem.unresolved(repo)) > 2  # the fresh-CREATE path ran in several batches
    objs = [o for o in mem.find_objects(repo=repo) if o.kind != "repository"]
    edges = [Edge(repo, o.id, "CALLS") for o in objs] + [Edge(repo, f"{repo}:nowhere.py", "CALLS")]
    with pytest.raises(StoreError, match=f"no node {repo}:nowhere.py"):
        store.upsert_edges(edges)


# -- a second local server, started with a password ---------------------------


@pytest.fixture(scope="module")
def auth_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    if not (shutil.which("java") and shutil.which("javac") and shutil.which("mvn")):
        pytest.skip("needs Java 17+ (java, javac) and Maven to run scripts/neo4j-local")
    env = {
        **os.environ,
        "NEO4J_BOLT_PORT": str(free_port()),
        "NEO4J_HTTP_PORT": str(free_port()),
        "NEO4J_PASSWORD": PASSWORD,
        "NEO4J_LOCAL_DIR": str(tmp_path_factory.mktemp("neo4j-auth")),
        "NEO4J_LOCAL_HEAP": "512m",
        "NEO4J_LOCAL_PAGECACHE": "32m",
    }
    started = subprocess.run([str(SCRIPT), "start"], env=env, capture_output=True, text=True, timeout=900)
    if started.returncode != 0:
        pytest.fail(f"scripts/neo4j-local start failed:\n{started.stderr[-3000:]}")
    uri = started.stdout.strip()
    try:
        yield uri, env
    finally:
        subprocess.run([str(SCRIPT), "stop"], env=env, capture_output=True, timeout=120)


@pytest.mark.neo4j
def test_local_script_reports_status_and_is_idempotent(auth_server):
    uri, env = auth_server
    status = subprocess.run([str(SCRIPT), "status"], env=env, capture_output=True, text=True)
    assert status.returncode == 0, status.stdout
    again = subprocess.run([str(SCRIPT), "start"], env=env, capture_output=True, text=True, timeout=60)
    assert again.returncode == 0 and again.stdout.strip() == uri
    assert "already running" in again.stderr
    assert PASSWORD not in status.stdout + again.stdout + again.stderr


@pytest.mark.neo4j
def test_wrong_password_is_store_auth_error(auth_server, monkeypatch, caplog):
    uri, _ = auth_server
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("NEO4J_PASSWORD", "wrong-" + PASSWORD)
    with pytest.raises(StoreAuthError) as info:
        open_store(uri)
    message = str(info.value)
    assert uri in message and "'neo4j'" in message and "NEO4J_PASSWORD" in message
    assert PASSWORD not in message and PASSWORD not in caplog.text
    assert "\n" not in message


@pytest.mark.neo4j
def test_missing_password_is_store_auth_error(auth_server, monkeypatch):
    uri, _ = auth_server
    monkeypatch.delenv("NEO4J_PASSWORD", raising=False)
    with pytest.raises(StoreAuthError):
        open_store(uri)


@pytest.mark.neo4j
def test_right_password_works(auth_server, monkeypatch, repo):
    uri, _ = auth_server
    monkeypatch.setenv("NEO4J_PASSWORD", PASSWORD)
    store = open_store(uri)
    try:
        store.upsert_objects([CodeObject(repo, "repository", repo, repo, repo, "")])
        assert store.repositories() == [repo]
    finally:
        store.close()  # the server is a throwaway: nothing to clean up


@pytest.mark.neo4j
def test_reads_in_a_snapshot_share_one_read_transaction(open_neo4j, repo, monkeypatch):
    """A ``snapshot()`` block (one ``get_context``) reads in one transaction of one
    session instead of a transaction per read; a read that fails in it ends that
    transaction, runs again on its own (so its error is the store's), and the block's
    next read opens a new one."""
    store = open_neo4j()
    f = CodeObject(id=f"{repo}:a.py", kind="file", name="a.py", qualname="a.py", repo=repo, path="a.py",
                   language="python", start_line=1, end_line=3)
    g = CodeObject(id=f"{repo}:a.py:g", kind="function", name="g", qualname="g", repo=repo, path="a.py",
                   language="python", start_line=1, end_line=2)
    store.upsert_objects([f, g])
    store.upsert_edges([Edge(f.id, g.id, "CONTAINS")])
    expected = (store.get_objects([g.id]), store.file_objects([f.id]), store.same_file([g.id]),
                store.neighbors([f.id]))
    driver = store._driver
    sessions: list[object] = []
    own: list[str] = []
    session, execute_query = driver.session, driver.execute_query
    monkeypatch.setattr(driver, "session", lambda **kw: sessions.append(kw) or session(**kw))
    monkeypatch.setattr(driver, "execute_query", lambda query, **kw: own.append(query) or execute_query(query, **kw))
    with store.snapshot():
        seen = (store.get_objects([g.id]), store.file_objects([f.id]), store.same_file([g.id]),
                store.neighbors([f.id]))
    assert seen == expected
    assert len(sessions) == 1 and own == []
    with store.snapshot():
        with pytest.raises(StoreError, match="Neo4j"):
            store.read("RETURN 1 / 0 AS x")
        assert own == ["RETURN 1 / 0 AS x"]
        assert store.get_objects([g.id]) == expected[0]
    assert len(sessions) == 3 and len(own) == 1
    closing = open_neo4j()
    with closing.snapshot():  # the store closed in the block: leaving it is quiet
        assert closing.get_objects([g.id]) == expected[0]
        closing.close()
