"""Neo4j under change and failure: incremental equals rebuild, and a server
killed in the middle of an ingest."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests_support import edit_add_rename_delete, make_python_tree

from vitalrag.graph.memory import MemoryStore
from vitalrag.ingest import index_repository

pytest.importorskip("neo4j", reason="the neo4j driver is not installed (pip install -e '.[dev]')")

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "neo4j-local"
FIXTURES = Path(__file__).parents[1] / "fixtures" / "repos"


@pytest.mark.neo4j
def test_incremental_equals_clean_rebuild_on_neo4j(tmp_path, open_neo4j, repo):
    src = tmp_path / "src"
    shutil.copytree(FIXTURES / "py_resolution", src)
    store = open_neo4j()
    index_repository(src, store, name=repo, workers=1, cache_dir=tmp_path / "facts")
    edit_add_rename_delete(src)
    report = index_repository(src, store, name=repo, workers=1, cache_dir=tmp_path / "facts")
    assert report.parsed == 6 and report.reused == 3
    fresh = MemoryStore(tmp_path / "fresh")
    index_repository(src, fresh, name=repo, workers=1)
    assert store.export(repo) == fresh.export(repo)
    for f in fresh.find_objects(kind="file"):
        assert store.source(f.id) == fresh.source(f.id)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.neo4j
def test_server_killed_mid_ingest_then_the_same_command_completes(tmp_path):
    if not (shutil.which("java") and shutil.which("javac") and shutil.which("mvn")):
        pytest.skip("needs Java 17+ (java, javac) and Maven to run scripts/neo4j-local")
    home = tmp_path / "neo4j"
    env = {**os.environ, "NEO4J_BOLT_PORT": str(_free_port()), "NEO4J_HTTP_PORT": str(_free_port()),
           "NEO4J_LOCAL_DIR": str(home), "NEO4J_LOCAL_HEAP": "512m", "NEO4J_LOCAL_PAGECACHE": "32m"}
    env.pop("NEO4J_PASSWORD", None)

    def start() -> str:
        out = subprocess.run([str(SCRIPT), "start"], env=env, capture_output=True, text=True, timeout=900)
        assert out.returncode == 0, out.stderr[-2000:]
        return out.stdout.strip()

    uri = start()
    repo_dir = make_python_tree(tmp_path / "big", files=400)
    cmd = [sys.executable, "-m", "vitalrag", "index", str(repo_dir), "--store", uri, "--name", "big",
           "--no-embed", "--index-dir", str(tmp_path / "idx")]
    # small batches: the ingest takes long enough to be killed in the middle
    run_env = {**env, "VITALRAG_NEO4J_BATCH": "25"}
    try:
        proc = subprocess.Popen(cmd, env=run_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        import neo4j

        with neo4j.GraphDatabase.driver(uri) as driver:  # wait until writing has begun
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                n = driver.execute_query("MATCH (n:CodeObject {repo: 'big'}) RETURN count(n) AS n").records[0]["n"]
                if n > 100:
                    break
                time.sleep(0.05)
        pid = int((home / "neo4j.pid").read_text())
        os.kill(pid, signal.SIGKILL)  # the server dies, not politely
        out, err = proc.communicate(timeout=300)
        assert proc.returncode != 0
        lines = err.strip().splitlines()
        assert lines and lines[-1].startswith("Error: cannot reach Neo4j at"), err[-2000:]
        assert "Traceback" not in err

        uri = start()  # same data folder: what was written before the kill is there
        done = subprocess.run(cmd, env=run_env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        from vitalrag.graph.neo4j import Neo4jStore

        store = Neo4jStore.from_uri(uri)
        try:
            clean = MemoryStore(tmp_path / "clean")
            index_repository(repo_dir, clean, name="big", workers=1)
            assert store.export("big") == clean.export("big")
        finally:
            store.close()
    finally:
        subprocess.run([str(SCRIPT), "stop"], env=env, capture_output=True, timeout=120)
