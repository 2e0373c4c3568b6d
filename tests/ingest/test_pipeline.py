"""The index pipeline: several repositories in one store, containment, re-indexing."""

from __future__ import annotations

from dataclasses import fields, replace
from pathlib import Path

import networkx as nx
import pytest
from tests_support import graph_file, graph_payload, write_graph_payload

from vitalrag.errors import StoreCorrupt, StoreError
from vitalrag.graph.memory import MemoryStore
from vitalrag.graph.store import open_store
from vitalrag.ingest import index_repository
from vitalrag.model import CodeObject, Edge, merge_edges

FIXTURES = Path(__file__).parents[1] / "fixtures" / "repos"


def test_two_repositories_share_a_store_without_collisions(tmp_path):
    store = MemoryStore(tmp_path / "idx")
    index_repository(FIXTURES / "py_resolution", store, name="one", workers=1)
    index_repository(FIXTURES / "py_resolution", store, name="two", workers=1)
    reopened = MemoryStore.open(tmp_path / "idx", create=False)
    assert reopened.repositories() == ["one", "two"]
    one = reopened.find_objects(repo="one")
    two = reopened.find_objects(repo="two")
    assert len(one) == len(two) > 0
    assert not {o.id for o in one} & {o.id for o in two}
    # edges stay inside their repository
    for e in reopened.find_edges(repo="one"):
        assert e.source.startswith("one") and e.target.startswith("one")
    # re-indexing one leaves the other untouched
    before = reopened.export("two")
    index_repository(FIXTURES / "py_resolution", reopened, name="one", workers=1)
    assert MemoryStore.open(tmp_path / "idx").export("two") == before


def test_store_round_trips_through_its_file(tmp_path):
    store = MemoryStore(tmp_path / "idx")
    index_repository(FIXTURES / "py_resolution", store, name="pyr", workers=1)
    loaded = MemoryStore.open(tmp_path / "idx", create=False)
    assert loaded.export() == store.export()
    assert loaded.counts() == store.counts()
    assert loaded.source("pyr:pkg/util.py") == (FIXTURES / "py_resolution" / "pkg" / "util.py").read_text()
    assert loaded.get_meta("pyr")["root"] == str((FIXTURES / "py_resolution").resolve())


def test_save_is_atomic(tmp_path, monkeypatch):
    """A crash while writing leaves the previous index file intact and no stray temp file."""
    import os

    store = MemoryStore(tmp_path / "idx")
    index_repository(FIXTURES / "py_resolution", store, name="pyr", workers=1)
    before = graph_file(tmp_path / "idx").read_bytes()
    files = sorted(p.name for p in (tmp_path / "idx").iterdir())

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", boom)  # the new file is written, not yet synced nor renamed
    try:
        index_repository(FIXTURES / "py_resolution", store, name="other", workers=1)
    except OSError:
        pass
    assert graph_file(tmp_path / "idx").read_bytes() == before
    assert sorted(p.name for p in (tmp_path / "idx").iterdir()) == files


def test_every_object_is_contained_once(tmp_path):
    store = MemoryStore(tmp_path / "idx")
    index_repository(FIXTURES / "py_resolution", store, name="pyr", workers=1)
    targets = [e.target for e in store.find_edges(kind="CONTAINS")]
    assert sorted(targets) == sorted(o.id for o in store.find_objects() if o.kind != "repository")


def test_merge_edges_keeps_one_edge_per_key_with_the_union_of_lines():
    a = Edge("r:x", "r:y", "CALLS", (9,))
    b = Edge("r:x", "r:z", "CALLS", (4, 2, 4))  # one edge, lines out of order
    c = Edge("r:x", "r:y", "TESTS", ())
    merged = merge_edges([a, b, Edge("r:x", "r:y", "CALLS", (3,)), c, Edge("r:x", "r:y", "CALLS", (9, 1))])
    assert merged == [Edge("r:x", "r:y", "CALLS", (1, 3, 9)), Edge("r:x", "r:z", "CALLS", (2, 4)), c]
    assert merged[2] is c  # an edge seen once and already in order is kept as it is


def test_code_object_to_dict_has_every_field_in_order():
    obj = CodeObject(id="r:a.py:f", kind="function", name="f", qualname="f", repo="r", path="a.py",
                     language="python", start_line=1, end_line=2, signature="def f()", docstring="d",
                     content_hash="h")
    assert list(obj.to_dict().items()) == [(f.name, getattr(obj, f.name)) for f in fields(CodeObject)]
    assert CodeObject.from_dict(obj.to_dict()) == obj


def test_memory_store_bulk_edges_match_networkx_add_edge(tmp_path):
    """The embedded store writes edges into networkx's maps directly; the graph
    must be the one MultiDiGraph.add_edge builds, in both directions."""
    store = MemoryStore(tmp_path / "idx")
    index_repository(FIXTURES / "py_resolution", store, name="pyr", workers=1)
    ref = nx.MultiDiGraph()
    ref.add_nodes_from(store.graph.nodes(data=True))
    for s, t, k, lines in store.graph.edges(keys=True, data="lines"):
        ref.add_edge(s, t, key=k, lines=lines)
    assert nx.utils.edges_equal(store.graph.edges(keys=True, data=True), ref.edges(keys=True, data=True))
    assert {(s, t, k) for s, t, k in store.graph.in_edges(keys=True)} == {
        (s, t, k) for s, t, k in ref.in_edges(keys=True)}
    assert store.graph.number_of_edges() == ref.number_of_edges() > 0
    for node in store.graph:
        assert store.graph.succ[node].keys() == ref.succ[node].keys()
        assert store.graph.pred[node].keys() == ref.pred[node].keys()
    # an edge written again replaces its lines, an edge to a missing node is refused
    s, t, k = next(iter(store.graph.edges(keys=True)))
    store.upsert_edges([Edge(s, t, k, (99,))])
    assert store.graph.edges[s, t, k]["lines"] == (99,)
    assert store.graph.number_of_edges() == ref.number_of_edges()
    with pytest.raises(StoreError, match="no node pyr:nowhere"):
        store.upsert_edges([Edge(s, "pyr:nowhere", "CALLS", (1,))])


def test_memory_store_bulk_nodes_match_networkx_add_nodes_from(tmp_path):
    """Objects go into networkx's maps directly too (on writes and on load): the
    nodes, their order and their adjacency are those add_nodes_from makes."""
    store = MemoryStore(tmp_path / "idx")
    index_repository(FIXTURES / "java_shapes", store, name="j", workers=1)
    ref = nx.MultiDiGraph()
    ref.add_nodes_from((n, {"obj": dict(d)}) for n, d in store.graph.nodes(data="obj"))
    assert list(store.graph.nodes(data=True)) == list(ref.nodes(data=True))
    assert all(store.graph.succ[n] is not None and n in store.graph.pred for n in ref)
    loaded = open_store(str(tmp_path / "idx"))
    assert list(loaded.graph.nodes(data=True)) == list(ref.nodes(data=True))
    assert loaded.export() == store.export()
    # an object written again replaces its data and keeps its place and its edges
    first = next(iter(store.graph))
    obj = store.get_objects([first])[first]
    edges_before = store.graph.number_of_edges()
    store.upsert_objects([replace(obj, docstring="changed")])
    assert next(iter(store.graph)) == first and store.graph.number_of_edges() == edges_before
    assert store.get_objects([first])[first].docstring == "changed"


def test_malformed_edge_rows_are_a_corrupt_store(tmp_path):
    store = MemoryStore(tmp_path / "idx")
    index_repository(FIXTURES / "py_resolution", store, name="pyr", workers=1)
    data = graph_payload(tmp_path / "idx")
    data["edges"][0] = data["edges"][0][:3]  # a row without its lines
    write_graph_payload(tmp_path / "idx", data)
    with pytest.raises(StoreCorrupt, match="malformed content"):
        MemoryStore.open(tmp_path / "idx", create=False)


@pytest.mark.parametrize("fixture", ["java_shapes", "py_resolution"])
def test_an_index_leaves_no_cyclic_garbage(tmp_path, fixture):
    """What an index run made and dropped is freed by reference counting: the
    Java index releases its cycles, docstrings are read without literal_eval's
    recursive helpers. (Cyclic garbage of a large index would wait for a full
    collection, which scans the whole index.)"""
    import gc

    index_repository(FIXTURES / fixture, MemoryStore(tmp_path / "warm"), name="r", workers=1)  # imports
    found = []
    for attempt in range(3):  # the least of three: threads an earlier test left running make garbage too
        gc.collect()
        store = MemoryStore(tmp_path / f"s{attempt}")
        index_repository(FIXTURES / fixture, store, name="r", workers=1)
        found.append(gc.collect())
    assert min(found) < 50, found
    assert store.find_objects(kind="class")


def test_pickled_objects_and_refs_keep_every_field():
    """``CodeObject`` and ``RawRef`` pickle as positional tuples (parse workers
    send thousands); a field added later must not be dropped on the way."""
    import pickle

    from vitalrag.ingest.facts import RawRef
    from vitalrag.ingest.lang.java.facts import Call, CallSite, Var

    values = {f.name: (i if f.type == "int" else f"v{i}") for i, f in enumerate(fields(CodeObject))}
    obj = CodeObject(**values)
    assert pickle.loads(pickle.dumps(obj)) == obj
    ref = RawRef("call", "src", "name", 7, CallSite("call", Call("m", Var("T"), 1, [Var("U")]), "cls"), True)
    back = pickle.loads(pickle.dumps(ref))
    assert [getattr(back, f.name) for f in fields(RawRef)] == [getattr(ref, f.name) for f in fields(RawRef)]


def test_the_report_times_each_step(tmp_path):
    """``IndexReport.phases``: seconds per step, in order, within the run's time;
    ``--json`` has them too."""
    report = index_repository(FIXTURES / "java_shapes", MemoryStore(tmp_path / "s"), name="j", workers=1)
    assert list(report.phases) == ["walk", "parse", "graph", "resolve", "write", "save"]
    assert all(v >= 0 for v in report.phases.values())
    assert sum(report.phases.values()) <= report.seconds
    assert report.phases["parse"] > 0
    assert list(report.to_json()["phases"]) == list(report.phases)
