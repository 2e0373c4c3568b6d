"""Failures a user can cause: one clean line, a non-zero exit, the store as it was."""

from __future__ import annotations

import json
import os
import shutil
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests_support import retrieval_snapshot

from vitalrag.cli import main
from vitalrag.retrieve import viewfile

FIXTURES = Path(__file__).parents[1] / "fixtures" / "repos"
REPO = FIXTURES / "py_resolution"


@pytest.fixture
def runner():
    return CliRunner()


@pytest.fixture
def indexed(runner, tmp_path):
    store = tmp_path / "idx"
    result = runner.invoke(main, ["index", str(REPO), "--store", str(store), "--name", "pyr",
                                  "--model", "hashing", "--json"])
    assert result.exit_code == 0, result.output
    return store


def _clean_error(result, *fragments):
    assert result.exit_code != 0
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    err = result.stderr.strip().splitlines()
    assert len(err) == 1, result.stderr
    for f in fragments:
        assert f in err[0]


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_file_name_that_is_not_utf8_is_skipped(runner, tmp_path):
    repo = tmp_path / "r"
    repo.mkdir()
    (repo / "a.py").write_text("def a():\n    return 1\n")
    with open(os.path.join(os.fsencode(repo), b"caf\xe9.py"), "w") as f:
        f.write("def b():\n    return 2\n")
    r = runner.invoke(main, ["index", str(repo), "--store", str(tmp_path / "s"), "--no-embed"])
    assert r.exit_code == 0, r.output
    assert "caf\ufffd.py: file name is not UTF-8" in r.stdout


def test_a_store_path_under_a_file_is_refused(runner, tmp_path):
    (tmp_path / "file").write_text("")
    r = runner.invoke(main, ["index", str(REPO), "--store", str(tmp_path / "file" / "s"), "--no-embed"])
    _clean_error(r, "is not a folder")


def test_an_unwritable_store_path_is_refused(runner, tmp_path):
    if os.geteuid() == 0:  # root writes any folder: take one no one can create files in
        store = Path("/proc/vitalrag-store")
    else:
        (tmp_path / "ro").mkdir(mode=0o500)
        store = tmp_path / "ro" / "s"
    r = runner.invoke(main, ["index", str(REPO), "--store", str(store), "--no-embed"])
    _clean_error(r, "cannot write store", str(store))
    assert not store.exists()


def test_a_bad_model_is_found_before_the_graph_is_rewritten(runner, indexed, tmp_path):
    bad = tmp_path / "model"
    bad.mkdir()
    (bad / "config.json").write_text("{}")
    repo = tmp_path / "changed"
    shutil.copytree(REPO, repo)
    (repo / "pkg" / "new.py").write_text("def new():\n    return 3\n")
    before = _files(indexed)
    r = runner.invoke(main, ["index", str(repo), "--store", str(indexed), "--name", "pyr",
                             "--model", str(bad)])
    _clean_error(r, "cannot load embedding model", str(bad))
    assert _files(indexed) == before


def test_an_index_of_another_format_says_to_index_again_and_is_kept(runner, indexed):
    """Before 1.0 a format change means re-indexing: nothing reads or migrates a
    folder of an earlier format, readers and writers alike say so in one line."""
    pointer = json.loads((indexed / "current.json").read_text())
    (indexed / "current.json").write_text(json.dumps({**pointer, "format": 1}))
    before = _files(indexed)
    for args in (["search", "slugify"], ["context", "slugify"], ["stats"],
                 ["index", str(REPO), "--name", "pyr", "--model", "hashing"]):
        _clean_error(runner.invoke(main, [*args, "--store", str(indexed)]),
                     f"index {indexed} has format 1", "re-index into a new --store")
    assert _files(indexed) == before


def test_a_corrupt_version_pointer_is_one_line_and_the_store_is_kept(runner, indexed):
    """For readers; ``index`` rebuilds it (tests/cli/test_repair.py)."""
    (indexed / "current.json").write_text('{"graph')
    before = _files(indexed)
    for args in (["search", "slugify"], ["show", "pyr:pkg"]):
        _clean_error(runner.invoke(main, [*args, "--store", str(indexed)]),
                     "cannot read the index version", "index again")
    assert _files(indexed) == before


def _snapshot(store: Path) -> Path:
    return retrieval_snapshot(store)


def test_a_snapshot_without_its_bm25_arrays_is_one_line(runner, indexed):
    shutil.rmtree(_snapshot(indexed) / "bm25")
    _clean_error(runner.invoke(main, ["search", "slugify", "--store", str(indexed)]),
                 "cannot read BM25 index", "re-index")


def test_views_and_bm25_of_different_lengths_are_one_line(runner, indexed):
    snap = _snapshot(indexed)
    views = viewfile.read(snap / viewfile.FILE)[:-3]
    (snap / viewfile.FILE).unlink()
    viewfile.write(snap / viewfile.FILE, views)
    _clean_error(runner.invoke(main, ["search", "slugify", "--store", str(indexed)]),
                 "is damaged", "re-index")


@pytest.mark.parametrize("command, says", [("search", "no views found for 'zzqx'"),
                                           ("context", "no code found for 'zzqx'")])
def test_a_query_nothing_matches_says_so_and_succeeds(runner, indexed, command, says):
    r = runner.invoke(main, [command, "zzqx", "--store", str(indexed), "--retriever", "bm25"])
    assert r.exit_code == 0 and r.stdout == "" and r.stderr.strip() == says, (r.stdout, r.stderr)


def test_a_budget_nothing_fits_in_says_so(runner, indexed):
    _clean_error(runner.invoke(main, ["context", "slugify text", "--store", str(indexed), "--budget", "1"]),
                 "nothing fits in --budget 1")


@pytest.mark.parametrize("command", ["search", "context"])
def test_a_line_past_the_end_of_the_file_is_an_error(runner, indexed, command):
    r = runner.invoke(main, [command, "complete", "--store", str(indexed), "--file", "pkg/core.py",
                             "--line", "999"])
    _clean_error(r, "line 999 is past the end of pkg/core.py")


@pytest.fixture
def busy_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield s.getsockname()[1]


def test_serve_on_a_busy_port_fails_before_it_says_serving(runner, indexed, busy_port):
    r = runner.invoke(main, ["serve", "--store", str(indexed), "--transport", "http",
                             "--port", str(busy_port), "--no-warm"])
    assert "serving" not in r.output
    _clean_error(r, f"cannot serve on 127.0.0.1:{busy_port}")


def test_an_empty_token_does_not_turn_auth_off(runner, indexed, busy_port):
    r = runner.invoke(main, ["serve", "--store", str(indexed), "--transport", "http",
                             "--port", str(busy_port), "--no-warm"], env={"VITALRAG_TOKEN": ""})
    _clean_error(r, "VITALRAG_TOKEN is set but empty")
