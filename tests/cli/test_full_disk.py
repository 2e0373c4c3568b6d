"""A full disk: the failed run says so in one line, removes what it wrote, and the
next run starts by removing what killed runs left (issue 38 item 9).

The real thing runs on a small tmpfs, mounted where this process may (root);
elsewhere that test is skipped, and the error shapes a full disk raises (the
OS's, SQLite's, FAISS's) are raised at the write boundaries instead."""

from __future__ import annotations

import errno
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests_support import make_python_tree

from vitalrag.cli import main
from vitalrag.graph.version import current
from vitalrag.kernel import pause

VITALRAG = [sys.executable, "-m", "vitalrag"]
FIXTURES = Path(__file__).parents[1] / "fixtures" / "repos"


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 600 KiB file system of its own (a tmpfs), or the test is skipped."""
    mount = tmp_path / "disk"
    mount.mkdir()
    try:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=600k", "tmpfs", str(mount)],
                              capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"cannot mount a tmpfs here: {exc}")
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True, timeout=30)


def _index(repo: Path, store: Path, name: str, *extra: str, env: dict[str, str] | None = None,
           ) -> subprocess.Popen[str]:
    return subprocess.Popen([*VITALRAG, "index", str(repo), "--store", str(store), "--name", name,
                             "--model", "hashing", "--workers", "1", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})})


def _run(repo: Path, store: Path, name: str, *extra: str) -> tuple[int, str]:
    proc = _index(repo, store, name, *extra)
    _, err = proc.communicate(timeout=300)
    return proc.returncode, err


def _snapshots(store: Path) -> set[str]:
    return {p.name for p in store.iterdir() if p.name.startswith(("graph-", "retrieval-"))}


def _free(path: Path) -> int:
    return os.statvfs(path).f_bavail * os.statvfs(path).f_frsize


def test_a_full_disk_is_one_line_and_failed_runs_fill_nothing(tmp_path, small_disk):
    small = make_python_tree(tmp_path / "small", files=5)
    big = make_python_tree(tmp_path / "big", files=60)  # its retrieval snapshot alone is ~500 KB
    store = small_disk / "idx"
    rc, err = _run(small, store, "small")
    assert rc == 0, err

    # a writer killed with its new graph written and not switched to leaves it behind
    marker = tmp_path / "paused"
    proc = _index(small, store, "small", "--force", env=pause.env(pause.RETRIEVAL, marker))
    deadline = time.monotonic() + 120
    while not marker.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marker.exists(), proc.communicate()[1]
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    live = current(store).names()
    (left,) = _snapshots(store) - live

    free = []
    for _ in range(3):
        rc, err = _run(big, store, "big")
        assert rc == 1
        assert "Traceback" not in err
        line = err.strip().splitlines()[-1]
        assert line.startswith(f"Error: no space left on {small_disk} (") and "MB needed" in line, err
        assert str(store) in line
        assert _snapshots(store) == live  # the killed run's graph and this run's files are gone
        free.append(_free(small_disk))
    assert not (store / left).exists()
    assert max(free) - min(free) < 64 * 1024, free  # a failure leaves nothing that adds up

    rc, err = _run(small, store, "small", "--force")  # the disk still takes a normal run
    assert rc == 0, err
    search = CliRunner().invoke(main, ["search", "f3", "--store", str(store), "--json"])
    assert search.exit_code == 0 and json.loads(search.stdout), search.output


def _enospc(*args: object, **kwargs: object) -> None:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "bm25/data.csc.index.npy")


def _sqlite_full(*args: object, **kwargs: object) -> None:
    raise sqlite3.OperationalError("database or disk is full")


def _faiss_full(*args: object, **kwargs: object) -> None:
    raise RuntimeError("Error in void faiss::write_index(...): 'ret == (size * 4)' failed: write error in "
                       f"vectors.faiss: 0 != 4096 ({os.strerror(errno.ENOSPC)})")


@pytest.mark.parametrize("seam, error", [
    ("vitalrag.retrieve.sparse.SparseIndex.save", _enospc),  # numpy writing the BM25 arrays
    ("vitalrag.graph.packed.write", _sqlite_full),  # SQLite writing the graph
    ("vitalrag.retrieve.dense.DenseIndex.save", _faiss_full),  # FAISS writing the vectors
])
def test_each_shape_of_a_full_disk_is_one_line_and_leaves_nothing(tmp_path, monkeypatch, seam, error):
    store = tmp_path / "idx"
    runner = CliRunner()
    first = runner.invoke(main, ["index", str(FIXTURES / "py_resolution"), "--store", str(store),
                                 "--name", "pyr", "--model", "hashing", "--workers", "1"])
    assert first.exit_code == 0, first.output
    before = _snapshots(store)
    monkeypatch.setattr(seam, error)
    result = runner.invoke(main, ["index", str(FIXTURES / "py_resolution"), "--store", str(store),
                                  "--name", "pyr", "--model", "hashing", "--workers", "1", "--force"])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.exception
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("Error: no space left on /") and "MB needed" in line and str(store) in line
    assert _snapshots(store) == before
