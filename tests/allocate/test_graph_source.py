"""Allocation over a real MemoryStore: object text from the stored file, and
same-file companions from ``store.same_file``."""

from __future__ import annotations

from vitalrag.allocate import GraphObjectSource, allocate
from vitalrag.graph.memory import MemoryStore
from vitalrag.model import CodeObject, Edge, ScoredView, View, file_id

CORE = """def helper(z: int) -> int:
    return z


def cleanup():
    pass


def f(x: int) -> int:
    check(x)
    return helper(x)
"""
OTHER = "def test_f():\n    assert f(5) == 5\n"


def make_store(tmp_path) -> MemoryStore:
    store = MemoryStore(tmp_path / "idx")
    core, tests = file_id("demo", "pkg/core.py"), file_id("demo", "tests/test_core.py")
    # opaque node ids: nothing about the file can be read off them
    store.upsert_objects([
        CodeObject("demo", "repository", "demo", "", "demo", ""),
        CodeObject(core, "file", "core.py", "pkg/core.py", "demo", "pkg/core.py"),
        CodeObject(tests, "file", "test_core.py", "tests/test_core.py", "demo", "tests/test_core.py"),
        CodeObject("n-helper", "function", "helper", "helper", "demo", "pkg/core.py", "python", 1, 2,
                   "def helper(z: int) -> int:"),
        CodeObject("n-cleanup", "function", "cleanup", "cleanup", "demo", "pkg/core.py", "python", 5, 6),
        CodeObject("n-f", "function", "f", "f", "demo", "pkg/core.py", "python", 9, 11,
                   "def f(x: int) -> int:"),
        CodeObject("n-test", "test", "test_f", "test_f", "demo", "tests/test_core.py", "python", 1, 2),
    ])
    store.upsert_edges([Edge(core, "n-f", "CONTAINS"), Edge("n-f", "n-helper", "CALLS", (11,))])
    store.put_sources({core: CORE, tests: OTHER})
    return store


class SpyStore:
    """Counts same_file calls; everything else goes to the real store."""

    def __init__(self, store):
        self._store, self.asked = store, []

    def same_file(self, ids):
        ids = list(ids)
        self.asked.append(ids)
        return self._store.same_file(ids)

    def __getattr__(self, name):
        return getattr(self._store, name)


def views():
    # Retrieved as call sites elsewhere: the views' paths are not the objects' files.
    return [
        ScoredView(View("v-f", "n-f", "call_site", "app/main.py", 3, 3, "y = f(x)", repo="demo"), 0.9),
        ScoredView(View("v-test", "n-test", "test", "tests/test_core.py", 1, 2, OTHER, repo="demo"), 0.8),
        ScoredView(View("v-helper", "n-helper", "call_site", "app/util.py", 7, 7, "helper(z)",
                        repo="demo"), 0.5),
    ]


def test_companion_comes_from_store_same_file(tmp_path, counter):
    spy = SpyStore(make_store(tmp_path))
    result = allocate("Complete f using helper", views(), k=3, store=spy, counter=counter)
    slots = result.record.slots
    assert [s.object_key for s in slots] == ["n-f", "n-test", "n-helper"]
    assert slots[2].role == "companion" and "n-f" in slots[2].reason
    assert ["n-f", "n-test"] in spy.asked
    # without the store, paths say helper's call site is in another file
    alone = allocate("Complete f using helper", views(), k=3, counter=counter)
    assert alone.record.slots[2].role == "fill"


def test_objects_render_from_the_stored_file(tmp_path, counter):
    store = make_store(tmp_path)
    result = allocate("Complete f using helper", views(), k=3, store=store, counter=counter)
    f_part, _, helper_part = result.parts
    assert f_part == "--- pkg/core.py:9-11 f\ndef f(x: int) -> int:\n    check(x)\n    return helper(x)\n"
    assert helper_part == "--- pkg/core.py:1-2 helper\ndef helper(z: int) -> int:\n    return z\n"
    assert result.record.slots[0].spans == ((9, 11),)


def test_keys_missing_from_the_store_render_from_their_views(tmp_path, counter):
    source = GraphObjectSource(make_store(tmp_path))
    ext = View("x", "", "body", "lib/ext.py", 4, 5, "def ext():\n    return 1\n", identifier="ext")
    result = allocate("ext", [*views(), ScoredView(ext, 0.95)], source=source, counter=counter)
    assert result.parts[0] == "--- lib/ext.py:4-5 ext\ndef ext():\n    return 1\n"
    assert result.record.slots[0].object_key == "lib/ext.py::ext"
