"""Graph and retrieval are one version: readers never see ids of one that the
other lacks, and a kill between the two writes leaves the previous pair."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests_support import pair_mismatch

from vitalrag.errors import StoreNotFound
from vitalrag.index import Index
from vitalrag.kernel import pause
from vitalrag.serve.service import ContextService

VITALRAG = [sys.executable, "-m", "vitalrag"]


def _release(repo: Path, i: int) -> None:
    """Version ``i`` of the repository: its one function's id changes with ``i``."""
    pkg = repo / "pkg"
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "mod.py").write_text(f'def release{i}():\n    """Release {i} of the module."""\n    return {i}\n')


def _index(repo: Path, store: Path, marker: Path | None = None) -> subprocess.Popen[str]:
    env = dict(os.environ)
    if marker is not None:
        env.update(pause.env(pause.RETRIEVAL, marker))
    return subprocess.Popen([*VITALRAG, "index", str(repo), "--store", str(store), "--name", "r",
                             "--no-embed", "--workers", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _paused(proc: subprocess.Popen[str], marker: Path) -> None:
    deadline = time.monotonic() + 120
    while not marker.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert marker.exists(), proc.communicate()[1]


def _finish(proc: subprocess.Popen[str]) -> None:
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err


def _released(store: Path) -> set[str]:
    """The releases a one-shot reader sees, after checking that its pair agrees."""
    retriever = Index.open(str(store)).retriever()
    try:
        assert pair_mismatch(retriever) == set()
        return {o.name for o in retriever.store.find_objects(kind="function")}
    finally:
        retriever.store.close()


def test_a_kill_between_the_graph_and_retrieval_writes_leaves_the_previous_pair(tmp_path):
    repo, store, marker = tmp_path / "repo", tmp_path / "idx", tmp_path / "paused"
    _release(repo, 0)
    _finish(_index(repo, store))
    _release(repo, 1)
    proc = _index(repo, store, marker)
    _paused(proc, marker)  # the new graph is written, the retrieval snapshot is not
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    assert _released(store) == {"release0"}
    hits = Index.open(str(store)).retriever().search("Release of the module", retriever="bm25", k=5)
    assert {h.view.object_id for h in hits} == {"r:pkg/mod.py:release0"}

    _finish(_index(repo, store))  # the next run completes the switch
    assert _released(store) == {"release1"}


def test_readers_never_see_an_id_one_side_lacks_during_reindexes(tmp_path):
    repo, store, marker = tmp_path / "repo", tmp_path / "idx", tmp_path / "paused"
    _release(repo, 0)
    _finish(_index(repo, store))
    service = ContextService(str(store)).open(warm=False)
    stop = threading.Event()
    seen: list[set[str]] = []
    problems: list[str] = []

    def poll() -> None:  # one-shot readers (what each CLI command loads), all the time
        while not stop.is_set():
            try:
                seen.append(_released(store))
            except AssertionError as exc:
                problems.append(f"mixed pair: {exc}")
            except StoreNotFound as exc:
                problems.append(f"no index: {exc}")

    def ask_server() -> set[str]:  # search, then fetch every hit, as an agent does
        found = set()
        for hit in service.search("Release of the module", k=10):
            found.add(service.get_object(hit["id"])["object"]["name"])
        return found

    poller = threading.Thread(target=poll)
    poller.start()
    try:
        for i in range(1, 11):
            _release(repo, i)
            proc = _index(repo, store, marker)
            _paused(proc, marker)
            assert ask_server() == {f"release{i - 1}"}  # the previous pair, whole
            marker.unlink()
            _finish(proc)
            assert ask_server() == {f"release{i}"}
    finally:
        stop.set()
        poller.join(timeout=60)
    assert problems == []
    assert len(seen) > 20 and service.reloads >= 10
