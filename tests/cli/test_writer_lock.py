"""One index writes a store at a time: a second fails fast, or waits with --wait."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from tests_support import graph_file, graph_payload, retrieval_snapshot

from vitalrag.retrieve import viewfile

FIXTURES = Path(__file__).parents[1] / "fixtures" / "repos"
HOLD = """
import sys
from vitalrag.kernel.locks import writer_lock
with writer_lock(sys.argv[1]):
    print("locked", flush=True)
    sys.stdin.read()
"""


def _index(repo: Path, store: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "vitalrag", "index", str(repo), "--store", str(store),
         "--model", "hashing", "--workers", "1", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _holder(store: Path) -> subprocess.Popen[str]:
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(store)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "locked"
    return holder


def test_a_second_writer_fails_fast_and_leaves_the_store(tmp_path):
    store = tmp_path / "s"
    first = _index(FIXTURES / "py_resolution", store)
    assert first.wait(120) == 0, first.stderr.read()
    before = graph_file(store).read_bytes()
    holder = _holder(store)
    try:
        second = _index(FIXTURES / "js_basic", store)
        out, err = second.communicate(timeout=120)
    finally:
        holder.communicate("")
    assert second.returncode != 0
    assert err.strip().splitlines() == [f"Error: another index is writing {store}: try again when it is "
                                        "done, or pass --wait"]
    assert graph_file(store).read_bytes() == before


def test_a_writer_with_wait_waits_for_the_first_and_keeps_both(tmp_path):
    store = tmp_path / "s"
    holder = _holder(store)
    try:
        a = _index(FIXTURES / "py_resolution", store, "--wait")
        b = _index(FIXTURES / "js_basic", store, "--wait")
        for p in (a, b):  # both say they wait, and do
            line = p.stderr.readline()
            assert "another index is writing" in line and "waiting" in line
            assert p.poll() is None
    finally:
        holder.communicate("")
    for p in (a, b):
        out, err = p.communicate(timeout=180)
        assert p.returncode == 0, err
    graph = graph_payload(store)
    text = json.dumps(graph)
    assert '"py_resolution:' in text and '"js_basic:' in text
    snapshot = retrieval_snapshot(store)
    repos = {v.repo for v in viewfile.read(snapshot / viewfile.FILE)}
    assert repos == {"py_resolution", "js_basic"}


def test_a_failed_first_index_of_a_new_store_leaves_no_folder(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    store = tmp_path / "s"
    p = _index(empty, store)
    p.communicate(timeout=120)
    assert p.returncode != 0
    assert not store.exists()
    shutil.rmtree(empty)
