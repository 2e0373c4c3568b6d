"""An index run that finds nothing changed since the run that made the live
version (files, options, model) loads nothing and writes nothing; any change, a
pull, or ``--force`` makes it do the work."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from vitalrag.cli import main
from vitalrag.graph.memory import MemoryStore
from vitalrag.graph.version import current, runs

FIXTURES = Path(__file__).parents[1] / "fixtures" / "repos"


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "pyr"
    shutil.copytree(FIXTURES / "py_resolution", path)
    return path


def _index(store: Path, repo: Path, *extra: str, name: str = "pyr") -> dict:
    result = CliRunner().invoke(main, ["index", str(repo), "--store", str(store), "--name", name,
                                       "--model", "hashing", "--workers", "1", "--json", *extra])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _files(store: Path) -> dict[str, float]:
    return {str(p.relative_to(store)): p.stat().st_mtime_ns for p in store.rglob("*") if p.is_file()
            and not p.name.startswith(".")}


def test_an_unchanged_repository_is_neither_loaded_nor_written(tmp_path, repo, monkeypatch):
    store = tmp_path / "s"
    first = _index(store, repo)
    before, version = _files(store), current(store)

    def no_load(*args, **kwargs):
        raise AssertionError("an unchanged run loaded the graph")

    monkeypatch.setattr(MemoryStore, "open", no_load)
    again = _index(store, repo)
    assert _files(store) == before and current(store) == version
    assert again["parsed"] == 0 and again["reused"] == first["files"]
    assert again["unchanged_since"] is not None and again["embedded"] == 0
    assert sum(again["changes"].values()) == 0
    for key in ("objects", "edges", "unresolved", "files", "loc", "views", "model", "skipped"):
        assert again[key] == first[key], key


@pytest.mark.parametrize("change", ["edit", "new file", "delete", "model", "max-bytes", "force"])
def test_any_change_indexes_again(tmp_path, repo, change):
    store = tmp_path / "s"
    _index(store, repo)
    extra: list[str] = []
    if change == "edit":
        with (repo / "pkg" / "util.py").open("a") as fh:
            fh.write("\n\ndef added():\n    return 1\n")
    elif change == "new file":
        (repo / "pkg" / "extra.py").write_text("def extra():\n    return 2\n")
    elif change == "delete":
        (repo / "pkg" / "util.py").unlink()
    elif change == "model":
        extra = ["--model", "hashing-128"]
    elif change == "max-bytes":
        extra = ["--max-bytes", "200"]
    else:
        extra = ["--force"]
    version = current(store)
    again = _index(store, repo, *extra)
    assert "unchanged_since" not in again
    assert current(store) != version
    assert runs(store)["pyr"]["report"]["files"] == again["files"]


def test_a_run_with_another_model_invalidates_the_other_repositories_records(tmp_path, repo):
    store = tmp_path / "s"
    _index(store, repo)
    other = tmp_path / "other"
    shutil.copytree(repo, other)
    _index(store, other, name="other")
    assert set(runs(store)) == {"pyr", "other"}
    assert "unchanged_since" in _index(store, repo)  # the same model: pyr's views were rebuilt alike
    _index(store, other, "--model", "hashing-128", name="other")  # every repository's views re-embedded
    assert set(runs(store)) == {"other"}
    assert "unchanged_since" not in _index(store, repo, "--model", "hashing-128")


def test_a_switch_by_anything_but_an_index_run_drops_the_records(tmp_path, repo):
    from vitalrag.graph.version import switch
    from vitalrag.kernel.locks import folder_lock

    store = tmp_path / "s"
    _index(store, repo)
    with folder_lock(store):
        switch(store)  # a pull, or a retrieval index saved alone
    assert runs(store) == {}
    assert "unchanged_since" not in _index(store, repo)
