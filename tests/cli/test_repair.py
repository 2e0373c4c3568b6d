"""Damage to an index is repaired by the next ``index``: a live version whose files
changed since its switch is never "unchanged", a graph that cannot be read is
built again, and ``search`` and ``context`` work afterwards (issue 38 item 10)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from vitalrag.cli import main
from vitalrag.graph.version import OWNED_FILE, current

FIXTURES = Path(__file__).parents[1] / "fixtures" / "repos"
REPO = FIXTURES / "py_resolution"


def _index(store: Path, *extra: str, repo: Path = REPO, name: str = "pyr") -> dict:
    result = CliRunner().invoke(main, ["index", str(repo), "--store", str(store), "--name", name,
                                       "--model", "hashing", "--workers", "1", "--json", *extra])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("pristine") / "idx"
    _index(store)
    return store


@pytest.fixture
def store(pristine: Path, tmp_path: Path) -> Path:
    """A copy of the index (times kept: it is as it was switched to)."""
    copy = tmp_path / "idx"
    shutil.copytree(pristine, copy, copy_function=shutil.copy2)
    return copy


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _random(path: Path) -> None:
    path.write_bytes(os.urandom(max(path.stat().st_size, 64)))


def _empty(path: Path) -> None:
    path.write_bytes(b"")


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink()


def _graph(store: Path) -> Path:
    return store / str(current(store).graph)


def _retrieval(rel: str) -> Callable[[Path], Path]:
    return lambda store: store / str(current(store).retrieval) / rel


DAMAGE = {
    "graph truncated": (_graph, _truncate),
    "graph random bytes": (_graph, _random),
    "graph empty": (_graph, _empty),
    "graph removed": (_graph, _remove),
    "views truncated": (_retrieval("views.db"), _truncate),
    "views random bytes": (_retrieval("views.db"), _random),
    "meta random bytes": (_retrieval("meta.json"), _random),
    "bm25 params random bytes": (_retrieval("bm25/params.index.json"), _random),
    "bm25 indices random bytes": (_retrieval("bm25/indices.csc.index.npy"), _random),
    "bm25 data truncated": (_retrieval("bm25/data.csc.index.npy"), _truncate),
    "bm25 vocabulary removed": (_retrieval("bm25/vocab.index.json"), _remove),
    "dense vectors truncated": (_retrieval("dense/vectors.faiss"), _truncate),
    "dense vectors random bytes": (_retrieval("dense/vectors.faiss"), _random),
    "dense hashes random bytes": (_retrieval("dense/hashes.npy"), _random),
    "retrieval snapshot removed": (_retrieval(""), _remove),
    "version pointer random bytes": (lambda store: store / "current.json", _random),
}


def _works(store: Path) -> None:
    runner = CliRunner()
    search = runner.invoke(main, ["search", "slugify", "--store", str(store), "--json"])
    assert search.exit_code == 0, search.output
    assert "pyr:pkg/helpers.py:slugify" in {h["view"]["object_id"] for h in json.loads(search.stdout)}
    context = runner.invoke(main, ["context", "slugify the text", "--store", str(store)])
    assert context.exit_code == 0, context.output
    assert "def slugify" in context.stdout


def test_an_undamaged_copy_is_unchanged(store):
    assert "unchanged_since" in _index(store)


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_plain_index_repairs_the_damage(store, damage):
    where, how = DAMAGE[damage]
    how(where(store))
    again = _index(store)
    assert "unchanged_since" not in again and again["parsed"] + again["reused"] == again["files"]
    _works(store)
    # what the damaged version held is gone once the next switch drops it
    assert "unchanged_since" in _index(store)


def test_a_damaged_graph_of_several_repositories_names_those_to_index_again(store, tmp_path, caplog):
    other = tmp_path / "other"
    shutil.copytree(FIXTURES / "py_resolution", other)
    _index(store, repo=other, name="other")
    _random(_graph(store))
    _index(store, "--force")
    assert "building the graph again" in caplog.text and "other" in caplog.text
    _works(store)


def test_damaged_records_are_written_again_from_the_version(store, caplog):
    _random(store / OWNED_FILE)
    assert "unchanged_since" in _index(store)  # the live pair is whole: nothing to rebuild
    assert "cannot read" in caplog.text
    live = json.loads((store / "current.json").read_text())
    assert set(json.loads((store / OWNED_FILE).read_text())["snapshots"]) == {live["graph"], live["retrieval"]}
    _works(store)
