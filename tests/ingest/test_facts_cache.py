"""The facts cache is data: nothing planted in it runs, and what it holds
round-trips the extraction exactly (issue 20 failure 11)."""

from __future__ import annotations

import gzip
import json
import os
import pickle
import shutil
from pathlib import Path

import pytest

from vitalrag.graph.memory import MemoryStore
from vitalrag.ingest import cache as cache_module, index_repository
from vitalrag.ingest.cache import FactsCache, file_digest
from vitalrag.ingest.parse import parse_file
from vitalrag.ingest.walk import walk_repository

FIXTURES = Path(__file__).parents[1] / "fixtures" / "repos"


class _Bomb:
    """Unpickling it creates a folder: code run by loading the cache."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self):
        return (os.mkdir, (self.marker,))


def _plant(folder: Path, name: str, marker: Path) -> None:
    """A pickle in place of the repository's JSON file."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.jsonl.gz").write_bytes(pickle.dumps(("", _Bomb(marker))))


@pytest.mark.parametrize("workers", [1, 2])
def test_a_planted_pickle_does_not_run_on_index(tmp_path, workers):
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "py_resolution", repo)
    marker = tmp_path / "ran"
    _plant(tmp_path / "facts", "r", marker)
    report = index_repository(repo, MemoryStore(tmp_path / "s"), name="r", workers=workers,
                              cache_dir=tmp_path / "facts")
    assert not marker.exists()
    assert report.parsed == 9 and report.reused == 0
    again = index_repository(repo, MemoryStore(tmp_path / "s"), name="r", workers=workers,
                             cache_dir=tmp_path / "facts")
    assert not marker.exists() and again.reused == 9
    # one file per repository, the pickle written over
    assert sorted(p.name for p in (tmp_path / "facts").iterdir()) == ["r.jsonl.gz"]


@pytest.mark.parametrize("fixture", sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()))
def test_cached_facts_equal_the_extraction(tmp_path, fixture):
    """Every fixture repository (every language): what the cache gives back is what
    extraction returned, tuples, sets and all."""
    root = FIXTURES / fixture
    cache = FactsCache(tmp_path, "r")
    cache.lookup({})
    parsed = {}
    wanted = {}
    for sf in walk_repository(root).files:
        facts = parse_file("r", sf)
        if not hasattr(facts, "objects"):
            continue
        raw = Path(sf.abspath).read_bytes()
        parsed[sf.path] = facts
        wanted[sf.path] = (file_digest(raw), sf.language, facts.text)
        cache.put(sf.path, wanted[sf.path][0], facts)
    cache.save(set(parsed))
    back = FactsCache(tmp_path, "r").lookup(wanted)
    assert back == parsed


def _indexed(tmp_path: Path) -> tuple[Path, MemoryStore, Path, list[bytes]]:
    """A fixture repository indexed with a facts cache: the repository, the
    store, the cache's file and its lines."""
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "py_resolution", repo)
    store = MemoryStore(tmp_path / "idx")
    index_repository(repo, store, name="r", workers=1, cache_dir=tmp_path / "facts")
    path = tmp_path / "facts" / "r.jsonl.gz"
    return repo, store, path, gzip.decompress(path.read_bytes()).splitlines(keepends=True)


def test_an_entry_of_other_content_or_shape_is_not_used(tmp_path):
    repo, store, path, lines = _indexed(tmp_path)
    # a wrong digest on the first entry, a malformed object on the second, a torn last line
    first = json.loads(lines[1])
    first[1] = "0" * 32
    second = json.loads(lines[2])
    second[3]["objects"] = [["not", "an", "object"]]
    path.write_bytes(gzip.compress(lines[0] + json.dumps(first).encode() + b"\n"
                                   + json.dumps(second).encode() + b"\n" + b"".join(lines[3:])[:-20]))
    report = index_repository(repo, store, name="r", workers=1, cache_dir=tmp_path / "facts")
    assert report.parsed == 3 and report.reused == 6
    assert index_repository(repo, store, name="r", workers=1, cache_dir=tmp_path / "facts").reused == 9


@pytest.mark.parametrize("planted", [
    ["JavaFacts", "p", [], []],  # a class of another language
    ["_Bomb", "x"],  # no fact class at all
    ["Import", "os", None, 1, "r:a.py"],  # a fact of the language, but not a file's
    ["PythonFacts", [], {}, {}, {}, {}, [], {}, {}, [], [], "", False, "extra"],  # one field too many
])
def test_an_entry_builds_only_its_own_languages_facts(tmp_path, planted):
    """A cached entry rebuilds only the classes its language's ``fact_types``
    names, with their fields: anything else is parsed again."""
    repo, store, path, lines = _indexed(tmp_path)
    first = json.loads(lines[1])
    first[3]["data"] = {"\0o": planted}
    path.write_bytes(gzip.compress(lines[0] + json.dumps(first).encode() + b"\n" + b"".join(lines[2:])))
    report = index_repository(repo, store, name="r", workers=1, cache_dir=tmp_path / "facts")
    assert report.parsed == 1 and report.reused == 8


def test_a_cache_of_another_version_is_rebuilt(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "py_resolution", repo)
    store = MemoryStore(tmp_path / "idx")
    monkeypatch.setattr(cache_module, "FACTS_VERSION", "0/old")
    index_repository(repo, store, name="r", workers=1, cache_dir=tmp_path / "facts")
    monkeypatch.undo()
    assert index_repository(repo, store, name="r", workers=1, cache_dir=tmp_path / "facts").parsed == 9
    assert index_repository(repo, store, name="r", workers=1, cache_dir=tmp_path / "facts").reused == 9


def test_a_failed_run_leaves_no_segments(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "py_resolution", repo)
    store = MemoryStore(tmp_path / "idx")

    def fails() -> None:
        raise OSError("disk gone")

    monkeypatch.setattr(store, "save", fails)
    with pytest.raises(OSError):
        index_repository(repo, store, name="r", workers=1, cache_dir=tmp_path / "facts")
    assert list((tmp_path / "facts").iterdir()) == []


def test_a_pipe_in_place_of_the_cache_is_not_read(tmp_path):
    """A folder handed over with a FIFO there would block the index forever."""
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "py_resolution", repo)
    (tmp_path / "facts").mkdir()
    os.mkfifo(tmp_path / "facts" / "r.jsonl.gz")
    report = index_repository(repo, MemoryStore(tmp_path / "s"), name="r", workers=1, cache_dir=tmp_path / "facts")
    assert report.parsed == 9
    assert (tmp_path / "facts" / "r.jsonl.gz").is_file()


def test_a_header_extracted_as_cpp_is_reused(tmp_path):
    """A ``.h`` the walk names C and extraction reads as C++ is a hit the second
    time, like every other file (its entry is of C's family)."""
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "cpp_basic", repo)
    store = MemoryStore(tmp_path / "idx")
    first = index_repository(repo, store, name="r", workers=1, cache_dir=tmp_path / "facts")
    assert {sf.language for sf in walk_repository(repo).files if sf.path.endswith(".h")} == {"c"}
    assert store.get_objects(["r:include/shop/cart.h"])["r:include/shop/cart.h"].language == "cpp"
    again = index_repository(repo, store, name="r", workers=1, cache_dir=tmp_path / "facts")
    assert again.parsed == 0 and again.reused == first.parsed
