"""``ContextService``: one index loaded per process, reloaded only when a
re-index replaces it on disk."""

from __future__ import annotations

import json
import logging
import shutil

import pytest
from serve_server import FIXTURES, build_index

from vitalrag.errors import InputError, ObjectNotFound, StoreNotFound
from vitalrag.serve import ContextService


@pytest.fixture
def repo_copy(tmp_path):
    return shutil.copytree(FIXTURES / "py_resolution", tmp_path / "repo")


def test_calls_reuse_the_loaded_index(index_path):
    service = ContextService(str(index_path)).open()
    first = service.index_status()
    for _ in range(5):
        service.get_context("Engine run")
        service.search("slugify", 3)
    assert service.reloads == 0
    assert service.index_status()["loaded_at"] == first["loaded_at"]


def test_a_reindex_is_picked_up_on_the_next_call(repo_copy, tmp_path):
    folder = build_index(repo_copy, tmp_path / "idx")
    service = ContextService(str(folder)).open()
    with pytest.raises(ObjectNotFound):
        service.get_object("pyr:pkg/fresh.py:brand_new_function")

    (repo_copy / "pkg" / "fresh.py").write_text("def brand_new_function():\n    return 42\n")
    build_index(repo_copy, folder)

    obj = service.get_object("pyr:pkg/fresh.py:brand_new_function")
    assert obj["source"].startswith("def brand_new_function")
    hits = service.search("brand_new_function", 5)
    assert hits[0]["id"] == "pyr:pkg/fresh.py:brand_new_function"
    assert service.reloads == 1
    service.search("brand_new_function", 5)
    assert service.reloads == 1


def test_an_unreadable_new_snapshot_keeps_the_old_index_serving(index_path, tmp_path, caplog):
    folder = tmp_path / "copy"
    shutil.copytree(index_path, folder)
    service = ContextService(str(folder)).open()
    version = json.loads((folder / "current.json").read_text())
    (folder / "current.json").write_text(json.dumps({**version, "retrieval": "retrieval-gone"}))
    with caplog.at_level(logging.WARNING, logger="vitalrag.serve.service"):
        assert service.search("slugify", 1)
    assert service.reloads == 0
    assert "cannot be loaded yet" in caplog.text


def test_a_missing_index_fails_at_open(tmp_path):
    with pytest.raises(StoreNotFound):
        ContextService(str(tmp_path / "nothing")).open()


def test_arguments_are_checked_before_any_work(index_path):
    service = ContextService(str(index_path)).open()
    with pytest.raises(InputError, match="depth"):
        service.neighbors("pyr:pkg/core.py:Engine", depth=True)
    with pytest.raises(InputError, match="k must be"):
        service.search("engine", k=1.5)
