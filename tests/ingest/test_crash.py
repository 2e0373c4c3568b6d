"""A re-index killed at any moment leaves the previous index usable."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests_support import make_python_tree

from vitalrag.graph import packed

from vitalrag.graph.memory import MemoryStore
from vitalrag.kernel import pause
from vitalrag.graph.version import current
from vitalrag.index import Index

VITALRAG = [sys.executable, "-m", "vitalrag"]


def _index(repo: Path, store: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen([*VITALRAG, "index", str(repo), "--store", str(store), "--name", "big",
                             "--model", "hashing", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, **(env or {})})


def previous(store: Path) -> set[str]:
    return {n for n in json.loads((store / "current.json").read_text())["previous"].values() if n}


def test_kill_mid_reindex_keeps_previous_index(tmp_path):
    repo = make_python_tree(tmp_path / "big", files=300)
    store = tmp_path / "idx"
    proc = _index(repo, store)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err.decode()
    full_seconds = json.loads(out)["seconds"]
    before = MemoryStore.open(store, create=False).export()

    # change every file, so the re-index has real work to do everywhere
    for p in (repo / "pkg").glob("m*.py"):
        p.write_text(p.read_text().replace('"""Function', '"""Changed function'))
    outcomes = []
    for delay in (0.2, 0.5, 0.9, 1.4, 2.0, 3.0):
        proc = _index(repo, store)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        graph = MemoryStore.open(store, create=False)   # never a torn file
        state = graph.export()
        outcomes.append("old" if state == before else "new")
        if state != before:
            assert any("Changed function" in n["docstring"] for n in state["nodes"])
        # the retrieval index is whole too: searching works
        hits = Index.open(str(store)).retriever().search("C12 g12", retriever="bm25", k=3)
        assert hits
    proc = _index(repo, store)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err.decode()
    fresh = tmp_path / "fresh"
    proc = _index(repo, fresh)
    proc.communicate(timeout=300)
    assert MemoryStore.open(store).export() == MemoryStore.open(fresh).export()
    # what killed writers left behind (temp files, half-written snapshots) is gone
    # after the next complete run; the pair before it stays for readers still loading it
    leftovers = [p.name for p in store.iterdir() if p.name.endswith(".tmp")]
    snapshots = {p.name for p in store.iterdir() if p.name.startswith(("retrieval-", "graph"))}
    version = json.loads((store / "current.json").read_text())
    named = {version["graph"], version["retrieval"], *version["previous"].values()}
    assert leftovers == [] and snapshots == named and len(named) == 4
    print("kill outcomes", outcomes, "full index seconds", full_seconds)
    assert "old" in outcomes  # at least one kill landed before the new index was in place


def test_kill_inside_the_graph_save_keeps_previous_index(tmp_path):
    """The kill lands after the new graph is written and before anything names
    it: the store must still load as the previous version."""
    repo = make_python_tree(tmp_path / "small", files=20)
    store = tmp_path / "idx"
    proc = _index(repo, store)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err.decode()
    before = MemoryStore.open(store, create=False).export()

    (repo / "pkg" / "m3.py").write_text(
        (repo / "pkg" / "m3.py").read_text().replace('"""Function', '"""Changed function'))
    marker = tmp_path / "paused"
    proc = _index(repo, store, env=pause.env(pause.GRAPH_WRITTEN, marker))
    deadline = time.monotonic() + 120
    while not marker.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marker.exists(), proc.communicate()[1].decode()
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    assert MemoryStore.open(store, create=False).export() == before
    # the new graph was whole, under a name the folder's records claim and no version names
    named = current(store).names() | previous(store)
    (unnamed,) = [p for p in store.glob("graph-*.db") if p.name not in named]
    assert unnamed.name in json.loads((store / "snapshots.json").read_text())["snapshots"]
    assert any("Changed function" in text for text in packed.read(unnamed)["sources"].values())

    proc = _index(repo, store)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err.decode()
    after = MemoryStore.open(store, create=False).export()
    assert any("Changed function" in n["docstring"] for n in after["nodes"])
    assert not unnamed.exists()  # what the killed writer left is gone
