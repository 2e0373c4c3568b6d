"""One behavioural suite for every ``GraphStore`` (see ``conftest.store``)."""

from __future__ import annotations

import pytest

from vitalrag.errors import StoreError
from vitalrag.graph.store import GraphStore, HeldGraph
from vitalrag.model import CodeObject, Edge, UnresolvedRef


def obj(repo: str, kind: str, path: str = "", qualname: str = "", **kw: object) -> CodeObject:
    if kind == "repository":
        oid = repo
    elif kind in ("file", "module"):
        oid = f"{repo}:{path}"
    else:
        oid = f"{repo}:{path}:{qualname}"
    name = qualname.rsplit(".", 1)[-1] if qualname else (path.rstrip("/").rsplit("/", 1)[-1] or repo)
    return CodeObject(id=oid, kind=kind, name=name, qualname=qualname or name, repo=repo, path=path,
                      language="python" if path.endswith(".py") else "", **kw)  # type: ignore[arg-type]


class Graph:
    """A small repository: a package with two modules, a class hierarchy and a test."""

    def __init__(self, r: str) -> None:
        self.r = r
        self.objects = [
            obj(r, "repository"),
            obj(r, "module", "pkg/"),
            obj(r, "file", "pkg/a.py", start_line=1, end_line=20, content_hash="h-a"),
            obj(r, "class", "pkg/a.py", "Base", start_line=4, end_line=9, signature="class Base:",
                docstring="The base."),
            obj(r, "method", "pkg/a.py", "Base.run", start_line=6, end_line=9, signature="def run(self) -> int:"),
            obj(r, "function", "pkg/a.py", "helper", start_line=12, end_line=14, signature="def helper(x):"),
            obj(r, "file", "pkg/b.py", start_line=1, end_line=12),
            obj(r, "class", "pkg/b.py", "Child", start_line=3, end_line=10),
            obj(r, "method", "pkg/b.py", "Child.run", start_line=5, end_line=10),
            obj(r, "file", "tests/test_b.py", start_line=1, end_line=6),
            obj(r, "test", "tests/test_b.py", "test_child", start_line=3, end_line=6),
        ]
        self.ids = {o.qualname if o.kind not in ("file", "module", "repository") else o.path or "repo": o.id
                    for o in self.objects}
        i = self.ids
        self.edges = [
            Edge(i["repo"], i["pkg/"], "CONTAINS"),
            Edge(i["pkg/"], i["pkg/a.py"], "CONTAINS"),
            Edge(i["pkg/"], i["pkg/b.py"], "CONTAINS"),
            Edge(i["repo"], i["tests/test_b.py"], "CONTAINS"),
            Edge(i["pkg/a.py"], i["Base"], "CONTAINS"),
            Edge(i["Base"], i["Base.run"], "CONTAINS"),
            Edge(i["pkg/a.py"], i["helper"], "CONTAINS"),
            Edge(i["pkg/b.py"], i["Child"], "CONTAINS"),
            Edge(i["Child"], i["Child.run"], "CONTAINS"),
            Edge(i["tests/test_b.py"], i["test_child"], "CONTAINS"),
            Edge(i["pkg/b.py"], i["pkg/a.py"], "IMPORTS", (1,)),
            Edge(i["Child"], i["Base"], "INHERITS", (3,)),
            Edge(i["Base.run"], i["helper"], "CALLS", (8,)),
            Edge(i["Child.run"], i["helper"], "CALLS", (6, 9)),
            Edge(i["Child.run"], i["Base.run"], "CALLS", (7,)),
            Edge(i["test_child"], i["Child"], "TESTS", (5,)),
            Edge(i["test_child"], i["helper"], "REFERENCES", (4,)),
        ]
        self.unresolved = [
            UnresolvedRef(i["Child.run"], "CALLS", "os.getcwd", 8, "missing-module"),
            UnresolvedRef(i["helper"], "CALLS", "mystery", 13, "unknown-name"),
            UnresolvedRef(i["test_child"], "CALLS", "fixture", 4, "dynamic-receiver"),
        ]
        self.sources = {
            i["pkg/a.py"]: "import os\n\n\nclass Base:\n    def run(self):\n        return helper(1)\n",
            i["pkg/b.py"]: "from pkg.a import Base\n\n\nclass Child(Base):\n    pass\n",
            i["tests/test_b.py"]: "def test_child():\n    assert Child()\n",
        }
        self.meta = {"root": f"/src/{r}", "indexed_at": 1700000000.5, "options": {"max_bytes": 100, "langs": ["python"]}}

    def load(self, store: GraphStore) -> None:
        store.upsert_objects(self.objects)
        store.upsert_edges(self.edges)
        store.upsert_unresolved(self.unresolved)
        store.put_sources(self.sources)
        store.set_meta(self.r, self.meta)
        store.save()


@pytest.fixture
def graph(store: GraphStore, repo: str) -> Graph:
    g = Graph(repo)
    g.load(store)
    return g


def test_the_store_is_a_graph_store(store):
    assert isinstance(store, GraphStore)
    assert isinstance(store.location, str)


def test_get_objects_returns_the_present_ones(store, graph):
    i = graph.ids
    wanted = [i["Base"], f"{graph.r}:missing", i["helper"], i["Base"]]
    found = store.get_objects(wanted)
    assert found == {i["Base"]: graph.objects[3], i["helper"]: graph.objects[5]}
    assert store.get_objects([]) == {}


def test_objects_round_trip_every_field(store, graph):
    back = store.get_objects([o.id for o in graph.objects])
    assert [back[o.id] for o in graph.objects] == graph.objects


def test_find_objects_filters(store, graph):
    r, i = graph.r, graph.ids
    assert store.find_objects(repo=r) == sorted(graph.objects, key=lambda o: o.id)
    assert [o.id for o in store.find_objects(repo=r, kind="method")] == sorted([i["Base.run"], i["Child.run"]])
    assert [o.id for o in store.find_objects(repo=r, path="pkg/a.py")] == sorted(
        [i["pkg/a.py"], i["Base"], i["Base.run"], i["helper"]])
    assert [o.id for o in store.find_objects(repo=r, name="run", path="pkg/b.py")] == [i["Child.run"]]
    assert [o.id for o in store.find_objects(repo=r, kind="class", name="Base")] == [i["Base"]]
    assert store.find_objects(repo=r, kind="enum") == []
    assert store.find_objects(repo=r, kind="no-such-kind") == []
    assert store.find_objects(repo=f"{r}-none") == []
    everything = store.find_objects()
    assert [o for o in everything if o.repo == r] == store.find_objects(repo=r)
    assert [o.id for o in everything] == sorted(o.id for o in everything)
    # one filter alone, over every repository the store holds
    assert store.find_objects(path="pkg/a.py") == [o for o in everything if o.path == "pkg/a.py"]
    assert store.find_objects(name="run") == [o for o in everything if o.name == "run"]
    assert store.find_objects(kind="method") == [o for o in everything if o.kind == "method"]
    assert store.find_objects(kind="method", name="run", path="pkg/b.py") == [
        o for o in everything if (o.kind, o.name, o.path) == ("method", "run", "pkg/b.py")]


def test_find_edges_filters(store, graph):
    r, i = graph.r, graph.ids
    assert store.find_edges(repo=r) == sorted(graph.edges, key=lambda e: e.key)
    assert store.find_edges(repo=r, kind="CALLS") == sorted(
        [e for e in graph.edges if e.kind == "CALLS"], key=lambda e: e.key)
    assert store.find_edges(source=i["Child.run"]) == sorted(
        [e for e in graph.edges if e.source == i["Child.run"]], key=lambda e: e.key)
    assert store.find_edges(target=i["helper"]) == sorted(
        [e for e in graph.edges if e.target == i["helper"]], key=lambda e: e.key)
    assert store.find_edges(source=i["Child.run"], target=i["helper"]) == [
        Edge(i["Child.run"], i["helper"], "CALLS", (6, 9))]
    assert store.find_edges(source=i["Child.run"], target=i["helper"], kind="TESTS") == []
    assert store.find_edges(source=f"{r}:missing") == []
    assert store.find_edges(kind="NOT_AN_EDGE_KIND") == []
    assert store.find_edges(repo=f"{r}-none") == []


def test_edges_keep_their_lines(store, graph):
    i = graph.ids
    (e,) = store.find_edges(source=i["Child"], kind="INHERITS")
    assert e.lines == (3,)
    assert isinstance(e.lines, tuple)
    (contains,) = store.find_edges(source=i["repo"], target=i["pkg/"])
    assert contains.lines == ()


@pytest.mark.parametrize("direction", ["out", "in", "both"])
def test_edges_of_directions(store, graph, direction):
    i = graph.ids
    node = i["helper"] if direction == "in" else i["Child.run"]
    want = [e for e in graph.edges
            if (direction in ("out", "both") and e.source == node)
            or (direction in ("in", "both") and e.target == node)]
    assert store.edges_of([node, f"{graph.r}:missing"], direction=direction) == sorted(want, key=lambda e: e.key)


def test_edges_of_kinds_and_many_ids(store, graph):
    i = graph.ids
    ids = [i["helper"], i["Base.run"], i["helper"]]
    calls = store.edges_of(ids, kinds=["CALLS"])
    assert calls == sorted([e for e in graph.edges if e.kind == "CALLS"
                            and (e.source in ids or e.target in ids)], key=lambda e: e.key)
    assert store.edges_of(ids, kinds=[]) == store.edges_of(ids)  # empty means every kind
    assert store.edges_of(ids, kinds=["NOPE"]) == []
    assert store.edges_of([]) == []
    mixed = store.edges_of([i["helper"]], kinds=["REFERENCES", "NOPE"], direction="in")
    assert mixed == [Edge(i["test_child"], i["helper"], "REFERENCES", (4,))]


@pytest.mark.parametrize("direction", ["out", "in", "both"])
@pytest.mark.parametrize("kinds", [None, ["CALLS"], ["CALLS", "INHERITS"], ["NOPE"]])
def test_adjacent_is_the_ends_of_edges_of(store, graph, direction, kinds):
    ids = [graph.ids["helper"], graph.ids["Child.run"], graph.ids["Base"], graph.ids["helper"],
           f"{graph.r}:missing"]
    want: dict[str, set[str]] = {}
    for e in store.edges_of(ids, kinds=kinds, direction=direction):
        for a, b in ((e.source, e.target), (e.target, e.source)):
            if a in ids and (direction == "both" or (direction == "out") == (a == e.source)):
                want.setdefault(a, set()).add(b)
    got = store.adjacent(ids, kinds=kinds, direction=direction)
    assert got == {a: sorted(b) for a, b in want.items()}
    assert (got != {}) == (kinds != ["NOPE"])


def test_neighbors_depth_direction_kinds(store, graph):
    i = graph.ids
    assert store.neighbors([i["helper"]]) == {
        i["pkg/a.py"]: 1, i["Base.run"]: 1, i["Child.run"]: 1, i["test_child"]: 1}
    assert store.neighbors([i["helper"]], kinds=["CALLS"], direction="in", depth=2) == {
        i["Base.run"]: 1, i["Child.run"]: 1}
    assert store.neighbors([i["Child.run"]], kinds=["CALLS"], direction="out", depth=3) == {
        i["helper"]: 1, i["Base.run"]: 1}
    assert store.neighbors([i["test_child"]], direction="out", depth=2) == {
        i["Child"]: 1, i["helper"]: 1, i["Base"]: 2, i["Child.run"]: 2}
    two = store.neighbors([i["Child"]], depth=2)
    assert two[i["Base"]] == 1 and two[i["pkg/b.py"]] == 1 and two[i["helper"]] == 2
    assert i["Child"] not in two
    assert store.neighbors([i["Child"]], depth=0) == {}
    assert store.neighbors([f"{graph.r}:missing"], depth=3) == {}
    assert store.neighbors([i["Child"]], kinds=["NOPE"]) == {}
    whole = store.neighbors([i["repo"]], depth=10)
    assert set(whole) == {o.id for o in graph.objects} - {i["repo"]}
    assert list(whole) == sorted(whole)


def test_neighbors_of_several_starts_excludes_them(store, graph):
    i = graph.ids
    got = store.neighbors([i["Base"], i["Child"]], kinds=["INHERITS", "CONTAINS"], depth=1)
    assert got == {i["pkg/a.py"]: 1, i["Base.run"]: 1, i["pkg/b.py"]: 1, i["Child.run"]: 1}


def test_same_file(store, graph):
    i = graph.ids
    got = store.same_file([i["Base"], i["pkg/b.py"], i["test_child"], f"{graph.r}:missing", i["repo"]])
    assert got == {
        i["Base"]: sorted([i["Base.run"], i["helper"]]),
        i["pkg/b.py"]: sorted([i["Child"], i["Child.run"]]),
        i["test_child"]: [],
        i["repo"]: [],
    }


def test_unresolved(store, graph, repo):
    assert store.unresolved(repo) == sorted(graph.unresolved, key=lambda u: u.key)
    assert store.unresolved(f"{repo}-none") == []
    everything = store.unresolved()
    assert set(graph.unresolved) <= set(everything)
    assert everything == sorted(everything, key=lambda u: u.key)
    store.upsert_unresolved([graph.unresolved[0]])  # same key: replaced, not added
    assert store.unresolved(repo) == sorted(graph.unresolved, key=lambda u: u.key)


def test_unresolved_whose_source_is_no_object(store, repo):
    orphan = UnresolvedRef(f"{repo}:gone.py:f", "CALLS", "x", 1, "unknown-name")
    store.upsert_unresolved([orphan])
    assert orphan in store.unresolved()
    assert store.unresolved(repo) == []


def test_sources(store, graph):
    i = graph.ids
    assert store.source(i["pkg/a.py"]) == graph.sources[i["pkg/a.py"]]
    assert store.source(f"{graph.r}:nope.py") is None
    store.put_sources({i["pkg/a.py"]: "changed\n"})
    assert store.source(i["pkg/a.py"]) == "changed\n"
    assert store.source(i["pkg/b.py"]) == graph.sources[i["pkg/b.py"]]


def test_sources_and_file_objects_of_many_files_at_once(store, graph):
    i = graph.ids
    files = [i["pkg/b.py"], f"{graph.r}:nope.py", i["pkg/a.py"], i["pkg/a.py"], i["tests/test_b.py"]]
    assert store.sources(files) == {f: graph.sources[f] for f in (i["pkg/a.py"], i["pkg/b.py"],
                                                                   i["tests/test_b.py"])}
    assert store.sources([]) == {}
    found = store.file_objects(files)
    assert set(found) == {i["pkg/a.py"], i["pkg/b.py"], i["tests/test_b.py"]}
    for f, objs in found.items():
        single = store.find_objects(repo=graph.r, path=store.get_objects([f])[f].path)
        assert objs == single and objs == sorted(objs, key=lambda o: o.id) and len(objs) >= 2
    assert [o.qualname for o in found[i["pkg/a.py"]]] == ["a.py", "Base", "Base.run", "helper"]
    assert store.file_objects([f"{graph.r}:nope.py"]) == {}
    # the same objects as spans: where each lies
    assert store.file_spans(files) == {f: [(o.id, o.kind, o.start_line, o.end_line) for o in objs]
                                       for f, objs in found.items()}
    assert store.file_spans([f"{graph.r}:nope.py"]) == {} and store.file_spans([]) == {}


def test_meta_is_replaced_per_repository(store, graph, repo):
    assert store.get_meta(repo) == graph.meta
    assert store.get_meta(f"{repo}-none") == {}
    store.set_meta(repo, {"root": "/elsewhere"})
    assert store.get_meta(repo) == {"root": "/elsewhere"}
    store.get_meta(repo)["root"] = "mutated"
    assert store.get_meta(repo) == {"root": "/elsewhere"}


def test_repositories_and_counts(store, graph, repo):
    assert repo in store.repositories()
    assert store.repositories() == sorted(store.repositories())
    assert store.counts(repo) == {
        "objects": {"class": 2, "file": 3, "function": 1, "method": 2, "module": 1, "repository": 1, "test": 1},
        "edges": {"CALLS": 3, "CONTAINS": 10, "IMPORTS": 1, "INHERITS": 1, "REFERENCES": 1, "TESTS": 1},
        "unresolved": 3,
    }
    assert list(store.counts(repo)["objects"]) == sorted(store.counts(repo)["objects"])
    assert store.counts(f"{repo}-none") == {"objects": {}, "edges": {}, "unresolved": 0}
    total = store.counts()
    assert all(total["objects"][k] >= n for k, n in store.counts(repo)["objects"].items())


def test_export(store, graph, repo):
    ex = store.export(repo)
    assert ex["nodes"] == [o.to_dict() for o in sorted(graph.objects, key=lambda o: o.id)]
    assert ex["edges"] == [e.to_dict() for e in sorted(graph.edges, key=lambda e: e.key)]
    assert ex["unresolved"] == [u.to_dict() for u in sorted(graph.unresolved, key=lambda u: u.key)]


def test_held_is_the_repository_keyed_for_a_delta(store, graph, repo):
    """``held`` (what a re-index compares its new graph with): the repository's
    objects, edges and unresolved references, none of another repository's."""
    other = Graph(f"{repo}-other")
    other.load(store)
    held = store.held(repo)
    assert held.objects == {o.id: o for o in graph.objects}
    assert held.edges == {e.key: e.lines for e in graph.edges}
    assert held.unresolved == {u.key: u.reason for u in graph.unresolved}
    assert held == HeldGraph.of(store, repo)
    assert store.held(other.r).objects == {o.id: o for o in other.objects}
    assert store.held(f"{repo}-none") == HeldGraph({}, {}, {})


def test_reupsert_is_idempotent(store, graph, repo):
    before = (store.export(repo), store.counts(repo))
    graph.load(store)
    graph.load(store)
    assert (store.export(repo), store.counts(repo)) == before


def test_upsert_replaces_object_and_edge(store, graph, repo):
    i = graph.ids
    changed = CodeObject(i["helper"], "method", "helper", "helper", repo, "pkg/a.py", "python", 30, 40,
                         "def helper(y):", "Now documented.", "h2")
    store.upsert_objects([changed])
    assert store.get_objects([i["helper"]]) == {i["helper"]: changed}
    assert [o.id for o in store.find_objects(repo=repo, kind="function")] == []
    assert i["helper"] in [o.id for o in store.find_objects(repo=repo, kind="method")]
    store.upsert_edges([Edge(i["Child.run"], i["helper"], "CALLS", (42,))])
    assert store.find_edges(source=i["Child.run"], target=i["helper"]) == [
        Edge(i["Child.run"], i["helper"], "CALLS", (42,))]
    moved = CodeObject(i["Base.run"], "method", "run", "Base.run", repo, "pkg/b.py")
    store.upsert_objects([moved])
    assert i["Base.run"] in [o.id for o in store.find_objects(repo=repo, path="pkg/b.py")]
    assert i["Base.run"] not in [o.id for o in store.find_objects(repo=repo, path="pkg/a.py")]


def test_last_duplicate_in_one_batch_wins(store, repo):
    a = obj(repo, "function", "m.py", "f", start_line=1)
    b = obj(repo, "function", "m.py", "f", start_line=2)
    store.upsert_objects([obj(repo, "file", "m.py"), a, b])
    assert store.get_objects([a.id])[a.id].start_line == 2


def test_edge_to_a_missing_node_is_refused(store, graph):
    i = graph.ids
    with pytest.raises(StoreError, match="no node"):
        store.upsert_edges([Edge(i["helper"], f"{graph.r}:nowhere", "CALLS", (1,))])


def test_delete_files(store, graph, repo):
    i = graph.ids
    store.delete_files(repo, ["pkg/a.py", "does/not/exist.py"])
    gone = {i["pkg/a.py"], i["Base"], i["Base.run"], i["helper"]}
    assert store.get_objects(gone) == {}
    assert {o.id for o in store.find_objects(repo=repo)} == {o.id for o in graph.objects} - gone
    remaining = [e for e in graph.edges if e.source not in gone and e.target not in gone]
    assert store.find_edges(repo=repo) == sorted(remaining, key=lambda e: e.key)
    assert store.edges_of([i["Child"]], kinds=["INHERITS"]) == []  # its in-file edge went too
    assert store.unresolved(repo) == sorted([u for u in graph.unresolved if u.source not in gone],
                                            key=lambda u: u.key)
    assert store.source(i["pkg/a.py"]) is None
    assert store.source(i["pkg/b.py"]) == graph.sources[i["pkg/b.py"]]
    assert store.get_meta(repo) == graph.meta
    assert store.same_file([i["Child"]]) == {i["Child"]: [i["Child.run"]]}
    store.delete_files(repo, ["pkg/a.py"])  # twice is harmless


def test_delete_repository_leaves_others_alone(store, graph, repo):
    other = Graph(f"{repo}-other")
    other.load(store)
    store.delete_repository(repo)
    assert store.find_objects(repo=repo) == []
    assert store.find_edges(repo=repo) == []
    assert store.unresolved(repo) == []
    assert all(u.source not in {o.id for o in graph.objects} for u in store.unresolved())
    assert store.get_meta(repo) == {}
    assert all(store.source(k) is None for k in graph.sources)
    assert repo not in store.repositories()
    assert store.counts(repo) == {"objects": {}, "edges": {}, "unresolved": 0}
    assert store.export(other.r)["nodes"] == [o.to_dict() for o in sorted(other.objects, key=lambda o: o.id)]
    assert store.get_meta(other.r) == other.meta
    store.delete_repository(repo)  # twice is harmless
    graph.load(store)  # and it can come back
    assert store.export(repo)["edges"] == [e.to_dict() for e in sorted(graph.edges, key=lambda e: e.key)]


HOSTILE = [
    "it's",
    'say "hi"',
    "back`tick`",
    "{braces}",
    "$param",
    "MATCH (n) DETACH DELETE n",
    "x'}) DETACH DELETE n //",
    "`) MERGE (:Evil {x:1}) //",
    "naïve_日本語",
    "back\\slash",
    "new\nline",
]


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_names_round_trip(store, repo, name):
    path = f"src/{name}.py"
    file = obj(repo, "file", path)
    func = obj(repo, "function", path, name, docstring=name, signature=f"def {name}():")
    store.upsert_objects([obj(repo, "repository"), file, func])
    store.upsert_edges([Edge(file.id, func.id, "CONTAINS"), Edge(func.id, func.id, "CALLS", (1, 2))])
    ref = UnresolvedRef(func.id, "CALLS", name, 3, name)
    store.upsert_unresolved([ref])
    store.put_sources({file.id: name})
    store.set_meta(repo, {name: name})
    assert store.get_objects([func.id]) == {func.id: func}
    assert store.find_objects(repo=repo, name=name) == [func]
    assert store.find_objects(repo=repo, path=path) == sorted([file, func], key=lambda o: o.id)
    assert store.find_edges(source=func.id) == [Edge(func.id, func.id, "CALLS", (1, 2))]
    assert store.edges_of([func.id]) == sorted(
        [Edge(file.id, func.id, "CONTAINS"), Edge(func.id, func.id, "CALLS", (1, 2))], key=lambda e: e.key)
    assert store.neighbors([func.id]) == {file.id: 1}
    assert store.unresolved(repo) == [ref]
    assert store.source(file.id) == name
    assert store.get_meta(repo) == {name: name}
    assert store.counts(repo)["objects"] == {"file": 1, "function": 1, "repository": 1}
    store.delete_files(repo, [path])
    assert store.find_objects(repo=repo) == [obj(repo, "repository")]


def test_delete_objects(store, graph, repo):
    i = graph.ids
    store.delete_objects([i["helper"], i["pkg/b.py"], f"{repo}:missing"])
    assert store.get_objects([i["helper"], i["pkg/b.py"]]) == {}
    assert all(i["helper"] not in (e.source, e.target) for e in store.find_edges(repo=repo))
    assert store.find_edges(target=i["pkg/b.py"]) == [] and store.find_edges(source=i["pkg/b.py"]) == []
    assert [u.source for u in store.unresolved(repo)] == sorted(
        u.source for u in graph.unresolved if u.source != i["helper"])
    assert store.source(i["pkg/b.py"]) is None
    assert store.source(i["pkg/a.py"]) == graph.sources[i["pkg/a.py"]]
    assert i["Child"] in store.get_objects([i["Child"]])  # objects in the file stay: only ids go
    assert store.same_file([i["Base"]]) == {i["Base"]: [i["Base.run"]]}


def test_delete_edges_and_unresolved(store, graph, repo):
    i = graph.ids
    store.delete_edges([(i["Child.run"], i["helper"], "CALLS"), (i["Child"], i["Base"], "INHERITS"),
                        (i["Child"], i["Base"], "CALLS"), (i["Child"], i["Base"], "NOT_A_KIND"),
                        (f"{repo}:x", i["Base"], "CALLS")])
    gone = {(i["Child.run"], i["helper"], "CALLS"), (i["Child"], i["Base"], "INHERITS")}
    assert store.find_edges(repo=repo) == sorted([e for e in graph.edges if e.key not in gone],
                                                 key=lambda e: e.key)
    store.delete_unresolved([graph.unresolved[0].key, (f"{repo}:x", "CALLS", "y", 1)])
    assert store.unresolved(repo) == sorted(graph.unresolved[1:], key=lambda u: u.key)
    assert store.counts(repo)["edges"]["CALLS"] == 2
