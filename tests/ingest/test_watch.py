"""`vitalrag watch` re-indexes after a burst of changes."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

from vitalrag.graph.memory import MemoryStore

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
