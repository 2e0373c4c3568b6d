"""Python extraction and import-aware resolution on a fixture written for it."""

from __future__ import annotations

from pathlib import Path

import pytest

from vitalrag.ingest.lang.python.extraction import extract

FIXTURES = Path(__file__).parents[1] / "fixtures" / "repos"

R = "py_resolution"


def _id(rest: str) -> str:
    return f"{R}:{rest}"


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    from vitalrag.graph.memory import MemoryStore
    from vitalrag.ingest import index_repository

    store = MemoryStore(tmp_path_factory.mktemp("py") / "idx")
    report = index_repository(FIXTURES / R, store, name=R, workers=1)
    return store, report


def edges(store, kind):
    return {(e.source, e.target) for e in store.find_edges(kind=kind)}


def test_objects_and_kinds(graph):
    store, _ = graph
    got = {(o.kind, o.id) for o in store.find_objects() if o.kind not in ("file",)}
    assert got == {
        ("repository", R),
        ("module", _id("pkg/")),
        ("module", _id("pkg/sub/")),
        ("function", _id("app.py:main")),
        ("class", _id("pkg/base.py:Base")),
        ("method", _id("pkg/base.py:Base.setup")),
        ("class", _id("pkg/core.py:Engine")),
        ("method", _id("pkg/core.py:Engine.__init__")),
        ("method", _id("pkg/core.py:Engine.run")),
        ("method", _id("pkg/core.py:Engine.prepare")),
        ("method", _id("pkg/core.py:Engine.build")),
        ("class", _id("pkg/core.py:Runner")),
        ("method", _id("pkg/core.py:Runner.go")),
        ("function", _id("pkg/core.py:helper_local")),
        ("function", _id("pkg/core.py:helper_local.inner")),
        ("function", _id("pkg/core.py:make")),
        ("function", _id("pkg/core.py:typed")),
        ("function", _id("pkg/helpers.py:slugify")),
        ("function", _id("pkg/sub/deep.py:deep_fn")),
        ("function", _id("pkg/util.py:tool")),
        ("function", _id("tests/test_core.py:helper")),
        ("test", _id("tests/test_core.py:test_make")),
        ("class", _id("tests/test_core.py:TestEngine")),
        ("method", _id("tests/test_core.py:TestEngine.setUp")),
        ("test", _id("tests/test_core.py:TestEngine.test_prepare")),
    }


def test_object_properties(graph):
    store, _ = graph
    build = store.get_objects([_id("pkg/core.py:Engine.build")])[_id("pkg/core.py:Engine.build")]
    assert (build.start_line, build.end_line) == (28, 30)  # decorator included
    assert build.signature == "def build(cls)"
    assert build.qualname == "Engine.build" and build.name == "build"
    engine = store.get_objects([_id("pkg/core.py:Engine")])[_id("pkg/core.py:Engine")]
    assert engine.docstring == "The engine."
    assert engine.signature == "class Engine(Base)"
    assert engine.language == "python" and len(engine.content_hash) == 24
    core = store.get_objects([_id("pkg/core.py")])[_id("pkg/core.py")]
    assert core.docstring == "Core module: the engine and its runner."
    assert core.kind == "file" and (core.start_line, core.end_line) == (1, 52)


def test_contains_hierarchy(graph):
    store, _ = graph
    contains = edges(store, "CONTAINS")
    assert (R, _id("pkg/")) in contains
    assert (_id("pkg/"), _id("pkg/sub/")) in contains
    assert (_id("pkg/"), _id("pkg/core.py")) in contains
    assert (R, _id("app.py")) in contains
    assert (R, _id("tests/test_core.py")) in contains  # tests/ is not a package
    assert (_id("pkg/core.py"), _id("pkg/core.py:Engine")) in contains
    assert (_id("pkg/core.py:Engine"), _id("pkg/core.py:Engine.run")) in contains
    assert (_id("pkg/core.py:helper_local"), _id("pkg/core.py:helper_local.inner")) in contains
    # every object but the repository has exactly one container
    targets = [t for _, t in contains]
    assert len(targets) == len(set(targets)) == len(store.find_objects()) - 1


def test_imports(graph):
    store, _ = graph
    assert edges(store, "IMPORTS") == {
        (_id("app.py"), _id("pkg/__init__.py")),                 # import pkg
        (_id("app.py"), _id("pkg/sub/deep.py")),                 # import pkg.sub.deep
        (_id("app.py"), _id("pkg/core.py:Engine")),              # re-export through __init__
        (_id("app.py"), _id("pkg/sub/deep.py:deep_fn")),         # re-export in a subpackage
        (_id("pkg/__init__.py"), _id("pkg/core.py:Engine")),     # relative from-import
        (_id("pkg/__init__.py"), _id("pkg/helpers.py")),         # from . import submodule
        (_id("pkg/core.py"), _id("pkg/helpers.py")),             # import a.b as c
        (_id("pkg/core.py"), _id("pkg/helpers.py:slugify")),     # from x import y as z
        (_id("pkg/core.py"), _id("pkg/base.py:Base")),
        (_id("pkg/core.py"), _id("pkg/util.py")),
        (_id("pkg/sub/__init__.py"), _id("pkg/sub/deep.py:deep_fn")),
        (_id("tests/test_core.py"), _id("pkg/core.py:Engine")),
        (_id("tests/test_core.py"), _id("pkg/core.py:make")),
    }


@pytest.mark.parametrize("source,target,case", [
    ("pkg/core.py:Engine.run", "pkg/core.py:Engine.prepare", "self.method"),
    ("pkg/core.py:Engine.run", "pkg/core.py:Runner.go", "self.attr typed by self.attr = Runner()"),
    ("pkg/core.py:Engine.run", "pkg/helpers.py:slugify", "module alias h.slugify and from-import alias"),
    ("pkg/core.py:Engine.run", "pkg/util.py:tool", "from . import util; util.tool()"),
    ("pkg/core.py:Engine.run", "pkg/core.py:Engine.build", "Class.classmethod"),
    ("pkg/core.py:Engine.prepare", "pkg/base.py:Base.setup", "super().setup"),
    ("pkg/core.py:Engine.build", "pkg/core.py:Engine", "cls(...) constructs"),
    ("pkg/core.py:Engine.__init__", "pkg/core.py:Runner", "constructor call"),
    ("pkg/core.py:Runner.go", "pkg/core.py:helper_local", "module-level function"),
    ("pkg/core.py:helper_local", "pkg/core.py:helper_local.inner", "nested function"),
    ("pkg/core.py:make", "pkg/core.py:Engine.run", "local typed by constructor assignment"),
    ("pkg/core.py:typed", "pkg/core.py:Engine.prepare", "parameter annotation"),
    ("app.py:main", "pkg/core.py:Engine", "constructor through a re-export"),
    ("app.py:main", "pkg/core.py:Engine.run", "method on a constructed instance"),
    ("app.py:main", "pkg/helpers.py:slugify", "pkg.helpers.slugify through the package"),
    ("app.py:main", "pkg/sub/deep.py:deep_fn", "re-exported function and pkg.sub.deep.deep_fn"),
])
def test_calls_resolved(graph, source, target, case):
    store, _ = graph
    assert (_id(source), _id(target)) in edges(store, "CALLS"), case


def test_calls_exact(graph):
    """No extra edge: every CALLS edge in the fixture is one a reader can check."""
    store, _ = graph
    expected = {
        ("app.py:main", "pkg/core.py:Engine"), ("app.py:main", "pkg/core.py:Engine.run"),
        ("app.py:main", "pkg/helpers.py:slugify"), ("app.py:main", "pkg/sub/deep.py:deep_fn"),
        ("pkg/core.py:Engine.__init__", "pkg/core.py:Runner"),
        ("pkg/core.py:Engine.build", "pkg/core.py:Engine"),
        ("pkg/core.py:Engine.prepare", "pkg/base.py:Base.setup"),
        ("pkg/core.py:Engine.run", "pkg/core.py:Engine.build"),
        ("pkg/core.py:Engine.run", "pkg/core.py:Engine.prepare"),
        ("pkg/core.py:Engine.run", "pkg/core.py:Runner.go"),
        ("pkg/core.py:Engine.run", "pkg/helpers.py:slugify"),
        ("pkg/core.py:Engine.run", "pkg/util.py:tool"),
        ("pkg/core.py:Runner.go", "pkg/core.py:helper_local"),
        ("pkg/core.py:helper_local", "pkg/core.py:helper_local.inner"),
        ("pkg/core.py:make", "pkg/core.py:Engine"), ("pkg/core.py:make", "pkg/core.py:Engine.run"),
        ("pkg/core.py:typed", "pkg/core.py:Engine.prepare"),
        ("tests/test_core.py:TestEngine.setUp", "pkg/core.py:Engine"),
        ("tests/test_core.py:TestEngine.test_prepare", "pkg/core.py:Engine"),
        ("tests/test_core.py:TestEngine.test_prepare", "pkg/core.py:Engine.prepare"),
        ("tests/test_core.py:helper", "pkg/core.py:Engine"),
        ("tests/test_core.py:test_make", "pkg/core.py:make"),
    }
    assert edges(store, "CALLS") == {(_id(s), _id(t)) for s, t in expected}


def test_call_lines(graph):
    store, _ = graph
    (e,) = [e for e in store.find_edges(kind="CALLS", source=_id("pkg/core.py:Engine.run"))
            if e.target == _id("pkg/helpers.py:slugify")]
    assert e.lines == (19, 20)  # h.slugify(...) and slug(...)


def test_inherits(graph):
    store, _ = graph
    assert edges(store, "INHERITS") == {(_id("pkg/core.py:Engine"), _id("pkg/base.py:Base"))}


def test_tests_edges(graph):
    store, _ = graph
    assert edges(store, "TESTS") == {
        (_id("tests/test_core.py:test_make"), _id("pkg/core.py:make")),
        (_id("tests/test_core.py:TestEngine.test_prepare"), _id("pkg/core.py:Engine")),
        (_id("tests/test_core.py:TestEngine.test_prepare"), _id("pkg/core.py:Engine.prepare")),
    }


def test_unresolved_kept_not_guessed(graph):
    store, report = graph
    got = {(u.source.split(":", 1)[1], u.kind, u.name, u.reason) for u in store.unresolved()}
    assert got == {
        ("app.py", "IMPORTS", "pkg.nothing.ghost", "missing-module"),
        ("app.py:main", "CALLS", "missing_thing", "unknown-name"),
        ("pkg/helpers.py:slugify", "CALLS", '"-".join', "dynamic-receiver"),
        ("pkg/helpers.py:slugify", "CALLS", "text.lower", "untyped-variable"),
        ("pkg/helpers.py:slugify", "CALLS", "text.lower().split", "untyped-variable"),
    }
    assert report.unresolved == 5
    assert report.external >= 1  # os.path.join, builtins


def test_a_name_defined_once_is_not_guessed(tmp_path):
    """``dispatch`` and ``unique_helper`` are each defined once in the repository,
    but nothing ties these calls to them: they stay unresolved, with a reason."""
    from vitalrag.graph.memory import MemoryStore
    from vitalrag.ingest import index_repository

    (tmp_path / "lib.py").write_text(
        "class Sender:\n    def dispatch(self):\n        return 1\n\n\n"
        "def unique_helper():\n    return 2\n")
    (tmp_path / "app.py").write_text(
        "import lib\n\n\n"
        "def run(conn, items):\n"
        "    conn.dispatch()\n"          # untyped parameter
        "    made = lib.unique_helper()\n"
        "    made.dispatch()\n"          # a value of a function without a return annotation
        "    for item in items:\n"
        "        item.dispatch()\n"      # a loop variable
        "    unique_helper()\n"          # defined in lib, never imported here
        "    return lib.Sender\n")
    store = MemoryStore(tmp_path / "idx")
    index_repository(tmp_path, store, name="g", workers=1)
    assert {(e.source, e.target) for e in store.find_edges(kind="CALLS")} == {
        ("g:app.py:run", "g:lib.py:unique_helper")}  # lib.unique_helper() only
    assert {(u.name, u.line, u.reason) for u in store.unresolved() if u.source == "g:app.py:run"} == {
        ("conn.dispatch", 5, "untyped-variable"),
        ("made.dispatch", 7, "untyped-variable"),
        ("item.dispatch", 9, "untyped-variable"),
        ("unique_helper", 10, "unknown-name"),
    }


def test_a_class_looked_up_before_its_bases_were_known_finds_inherited_members_later(tmp_path):
    """Resolving ``D``'s base (a.py, before b.py's bases are bound) looks up ``Base``'s
    members while ``Base`` has no known base; the calls, resolved once every base is
    known, find ``Root.make`` through ``Base``. A lookup order kept from the first pass
    would miss it (a cache of them filled while bases are bound fails this)."""
    from vitalrag.graph.memory import MemoryStore
    from vitalrag.ingest import index_repository

    (tmp_path / "a.py").write_text(
        "from b import Base\n\n\n"
        "class D(Base.make()):\n    pass\n\n\n"
        "def use():\n    return Base.make()\n")
    (tmp_path / "b.py").write_text(
        "class Root:\n    @classmethod\n    def make(cls):\n        return cls\n\n\n"
        "class Base(Root):\n    pass\n")
    store = MemoryStore(tmp_path / "idx")
    index_repository(tmp_path, store, name="m", workers=1)
    assert ("m:a.py:use", "m:b.py:Root.make") in {(e.source, e.target) for e in store.find_edges(kind="CALLS")}
    assert {(u.name, u.reason) for u in store.unresolved() if u.source == "m:a.py:D"} == {
        ("Base.make()", "unknown-attribute")}


RETURNS_MODELS = '''\
class Response:
    def read(self):
        return b""


class Cookies:
    def extract(self, response):
        return None


class Transport:
    def handle(self, request) -> "Response":
        return Response()
'''

RETURNS_CLIENT = '''\
from __future__ import annotations

import typing

from models import Cookies, Response, Transport


class Client:
    def __init__(self):
        self._cookies = Cookies()

    @property
    def cookies(self) -> Cookies:
        return self._cookies

    def _transport(self) -> Transport | None:
        return Transport()

    def _send(self, request) -> Response:
        transport = self._transport()
        response = transport.handle(request)
        self.cookies.extract(response)
        return response

    def send(self, request) -> Response:
        response = self._send(request)
        response.read()
        self._send(request).read()
        return response

    def copy(self) -> typing.Self:
        return self

    def again(self):
        return self.copy().send(None)

    def untyped(self):
        return None

    def name(self) -> str:
        return "c"

    def many(self) -> list[Response]:
        return []

    def unknown(self):
        self.untyped().read()
        value = self.untyped()
        value.read()
        self.name().upper()
        items = self.many()
        items.read()


class AsyncClient:
    async def send(self) -> Response:
        return Response()

    async def get(self):
        response = await self.send()
        response.read()
'''


@pytest.fixture(scope="module")
def returns_graph(tmp_path_factory):
    from vitalrag.graph.memory import MemoryStore
    from vitalrag.ingest import index_repository

    root = tmp_path_factory.mktemp("returns")
    (root / "models.py").write_text(RETURNS_MODELS)
    (root / "client.py").write_text(RETURNS_CLIENT)
    store = MemoryStore(root / ".idx")
    index_repository(root, store, name="rt", workers=1)
    return store


@pytest.mark.parametrize("source,targets", [
    # `transport` from `-> Transport | None`, `response` from the forward reference "Response",
    # `self.cookies` from the property's annotation
    ("Client._send", {"client.py:Client._transport", "models.py:Transport.handle", "models.py:Cookies.extract"}),
    # a local typed by `-> Response`, and the call on the call's value
    ("Client.send", {"client.py:Client._send", "models.py:Response.read"}),
    ("Client.again", {"client.py:Client.copy", "client.py:Client.send"}),  # -> typing.Self
    ("AsyncClient.get", {"client.py:AsyncClient.send", "models.py:Response.read"}),  # x = await f()
    # no annotation, one outside the repository, a generic: nothing more is known
    ("Client.unknown", {"client.py:Client.untyped", "client.py:Client.name", "client.py:Client.many"}),
])
def test_calls_on_values_typed_by_return_annotations(returns_graph, source, targets):
    got = {e.target for e in returns_graph.find_edges(source=f"rt:client.py:{source}", kind="CALLS")}
    assert got == {f"rt:{t}" for t in targets}


def test_calls_on_unannotated_values_stay_unresolved(returns_graph):
    got = {(u.name, u.reason) for u in returns_graph.unresolved() if u.source == "rt:client.py:Client.unknown"}
    assert got == {("self.untyped().read", "dynamic-receiver"), ("value.read", "untyped-variable"),
                   ("self.name().upper", "dynamic-receiver"), ("items.read", "untyped-variable")}


def test_overload_stubs_and_setters_yield(tmp_path):
    from vitalrag.graph.memory import MemoryStore
    from vitalrag.ingest import index_repository

    (tmp_path / "m.py").write_text(
        "import typing as t\n\n"
        "@t.overload\ndef f(x: int) -> int: ...\n"
        "@t.overload\ndef f(x: str) -> str: ...\n"
        "def f(x):\n    return x\n\n"
        "class C:\n    @property\n    def v(self):\n        return 1\n"
        "    @v.setter\n    def v(self, value):\n        pass\n"
        "    def use(self):\n        return self.v()\n\n"
        "def g():\n    return f(1)\n"
    )
    store = MemoryStore(tmp_path / "idx")
    index_repository(tmp_path, store, name="ov", workers=1)
    calls = {(e.source, e.target) for e in store.find_edges(kind="CALLS")}
    assert ("ov:m.py:g", "ov:m.py:f") in calls
    ids = {o.id for o in store.find_objects(repo="ov")}
    assert {"ov:m.py:f#overload1", "ov:m.py:f#overload2", "ov:m.py:C.v", "ov:m.py:C.v#setter"} <= ids
    assert ("ov:m.py:C.use", "ov:m.py:C.v") in calls


def test_conditional_duplicates_stay_ambiguous(tmp_path):
    from vitalrag.graph.memory import MemoryStore
    from vitalrag.ingest import index_repository

    (tmp_path / "m.py").write_text(
        "import sys\nif sys.version_info > (3,):\n    def f():\n        return 1\n"
        "else:\n    def f():\n        return 2\n\ndef g():\n    return f()\n"
    )
    store = MemoryStore(tmp_path / "idx")
    index_repository(tmp_path, store, name="dup", workers=1)
    assert {o.id for o in store.find_objects(kind="function")} == {"dup:m.py:f", "dup:m.py:f#2", "dup:m.py:g"}
    assert store.find_edges(kind="CALLS") == []
    assert [(u.name, u.reason) for u in store.unresolved()] == [("f", "ambiguous-definition")]


def test_with_as_only_when_enter_returns_self(tmp_path):
    from vitalrag.graph.memory import MemoryStore
    from vitalrag.ingest import index_repository

    (tmp_path / "m.py").write_text(
        "class S:\n    def __enter__(self):\n        return self\n    def get(self):\n        return 1\n\n"
        "class T:\n    def __enter__(self):\n        return 42\n    def get(self):\n        return 2\n\n"
        "def a():\n    with S() as s:\n        return s.get()\n\n"
        "def b():\n    with T() as t:\n        return t.get()\n"
    )
    store = MemoryStore(tmp_path / "idx")
    index_repository(tmp_path, store, name="w", workers=1)
    calls = {(e.source, e.target) for e in store.find_edges(kind="CALLS")}
    assert ("w:m.py:a", "w:m.py:S.get") in calls
    assert not any(s == "w:m.py:b" and t.endswith(".get") for s, t in calls)


def test_syntax_error_keeps_recovered_objects():
    facts = extract("r", "bad.py", "def ok():\n    return 1\n\ndef broken(:\n    pass\n\nclass Fine:\n    pass\n")
    names = {o.qualname for o in facts.objects}
    assert {"ok", "Fine"} <= names
    assert facts.problems and "syntax errors" in facts.problems[0]


def test_ids_are_stable_across_runs():
    src = "class A:\n    def m(self):\n        return 1\n"
    a = extract("r", "x.py", src)
    b = extract("r", "x.py", src)
    assert [o.to_dict() for o in a.objects] == [o.to_dict() for o in b.objects]
