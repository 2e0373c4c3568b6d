"""`vitalrag watch` re-indexes after a burst of changes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from tests_support import pair_mismatch

from vitalrag.errors import StoreNotFound
from vitalrag.graph.memory import MemoryStore
from vitalrag.index import Index
from vitalrag.kernel import pause

FIXTURES = Path(__file__).parents[1] / "fixtures" / "repos"


def _wait_for(predicate, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if predicate():
                return True
        except Exception:  # the store may be mid-swap or not there yet
            pass
        time.sleep(0.2)
    return False


def test_watch_reindexes_changed_files(tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "py_resolution", repo)
    store = tmp_path / "idx"
    proc = subprocess.Popen([sys.executable, "-m", "vitalrag", "watch", str(repo), "--store", str(store),
                             "--name", "w", "--model", "hashing", "--debounce", "200"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        ids = lambda: {o.id for o in MemoryStore.open(store, create=False).find_objects(kind="function")}  # noqa: E731
        assert _wait_for(lambda: "w:pkg/util.py:tool" in ids())
        (repo / "pkg" / "util.py").write_text("def tool():\n    return 1\n\n\ndef gadget():\n    return 2\n")
        assert _wait_for(lambda: "w:pkg/util.py:gadget" in ids())
        (repo / "pkg" / "util.py").unlink()
        assert _wait_for(lambda: not any(i.startswith("w:pkg/util.py") for i in ids()))
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_watch_swaps_graph_and_retrieval_together(tmp_path):
    """Each step of watch is paused between its graph and retrieval writes: a
    reader then still sees the previous pair, whole, and the new one after."""
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "py_resolution", repo)
    store, marker = tmp_path / "idx", tmp_path / "paused"
    proc = subprocess.Popen([sys.executable, "-m", "vitalrag", "watch", str(repo), "--store", str(store),
                             "--name", "w", "--no-embed", "--debounce", "200"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, **pause.env(pause.RETRIEVAL, marker)})
    pauses: list[set[str]] = []

    def functions() -> set[str]:
        retriever = Index.open(str(store)).retriever()
        try:
            assert pair_mismatch(retriever) == set()
            return {o.name for o in retriever.store.find_objects(kind="function")}
        finally:
            retriever.store.close()

    def step_until(done) -> bool:  # release each paused step until ``done`` holds
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and proc.poll() is None:
            if marker.exists():
                try:
                    pauses.append(functions())
                except StoreNotFound:  # the first index: nothing before it
                    pauses.append(set())
                marker.unlink()
            try:
                if done(functions()):
                    return True
            except StoreNotFound:
                pass
            time.sleep(0.05)
        return False

    try:
        assert step_until(lambda names: "tool" in names)
        time.sleep(1)  # the catch-up run, if any, is released by the next step
        (repo / "pkg" / "util.py").write_text("def tool():\n    return 1\n\n\ndef gadget():\n    return 2\n")
        assert step_until(lambda names: "gadget" in names)
        assert any("tool" in p and "gadget" not in p for p in pauses)  # paused with the old pair live
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_watch_logs_the_real_time_of_a_step(tmp_path):
    """A step held for a second between its graph and its retrieval writes logs
    at least that second, not the graph's part alone."""
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "py_resolution", repo)
    marker = tmp_path / "paused"
    proc = subprocess.Popen([sys.executable, "-m", "vitalrag", "watch", str(repo), "--store", str(tmp_path / "idx"),
                             "--name", "w", "--no-embed", "--debounce", "200"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **pause.env(pause.RETRIEVAL, marker)})
    try:
        assert _wait_for(marker.exists)
        time.sleep(1.2)
        marker.unlink()
        line = proc.stderr.readline()
        while "initial index" not in line and line:
            line = proc.stderr.readline()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        marker.unlink(missing_ok=True)
    assert "in all" in line, line
    total = float(line.split("; ")[-1].split("s in all")[0])
    assert total >= 1.2, line
