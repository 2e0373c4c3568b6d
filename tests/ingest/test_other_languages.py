"""Extraction and resolution for JavaScript, TypeScript/TSX, Go, Rust and C#.

Each fixture repository under ``tests/fixtures/repos/<lang>_basic`` is indexed
through the real pipeline and compared with golden sets of objects, CONTAINS,
IMPORTS and CALLS edges and unresolved references. Ids are written without the
``fx:`` repository prefix; the repository node itself is ``fx``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from vitalrag.ingest.lang import REGISTRY
from vitalrag.ingest.lang.tags import go as tags_go, javascript as tags_js, rust as tags_rust
from vitalrag.ingest.facts import FileFacts, resolve_all
from language_golden import (  # noqa: F401 - pytest runs the imported tests here
    by_qualname as _by_qualname,
    facts as _facts,
    indexed_fixture,
    test_broken_file_is_partly_indexed_and_reported,
    test_edges_match_golden,
    test_every_definition_has_lines_hash_and_language,
    test_objects_match_golden,
    test_repository_contains_every_top_file_or_folder,
    test_tests_edges_follow_calls_from_tests,
    test_unresolved_match_golden,
)

FIXTURES = Path(__file__).parents[1] / "fixtures" / "repos"

GOLDEN: dict[str, dict] = {
    "js_basic": {
        "broken": 'src/broken.js',
        "tests": False,
    "objects": {
        ('class', 'src/broken.js:Still'),
        ('class', 'src/math.js:Calculator'),
        ('file', 'src/broken.js'),
        ('file', 'src/index.js'),
        ('file', 'src/math.js'),
        ('file', 'src/util/format.cjs'),
        ('file', 'src/util/index.js'),
        ('file', 'src/util/strings.js'),
        ('file', 'test/math.test.js'),
        ('function', 'src/broken.js:ok'),
        ('function', 'src/index.js:main'),
        ('function', 'src/index.js:run'),
        ('function', 'src/math.js:add'),
        ('function', 'src/util/format.cjs:format'),
        ('function', 'src/util/index.js:helper'),
        ('function', 'src/util/strings.js:lower'),
        ('function', 'src/util/strings.js:upper'),
        ('method', 'src/broken.js:Still.m'),
        ('method', 'src/math.js:Calculator.constructor'),
        ('method', 'src/math.js:Calculator.plus'),
        ('method', 'src/math.js:Calculator.reset'),
    },
    "CONTAINS": {
        ('src/broken.js', 'src/broken.js:Still'),
        ('src/broken.js', 'src/broken.js:ok'),
        ('src/broken.js:Still', 'src/broken.js:Still.m'),
        ('src/index.js', 'src/index.js:main'),
        ('src/index.js', 'src/index.js:run'),
        ('src/math.js', 'src/math.js:Calculator'),
        ('src/math.js', 'src/math.js:add'),
        ('src/math.js:Calculator', 'src/math.js:Calculator.constructor'),
        ('src/math.js:Calculator', 'src/math.js:Calculator.plus'),
        ('src/math.js:Calculator', 'src/math.js:Calculator.reset'),
        ('src/util/format.cjs', 'src/util/format.cjs:format'),
        ('src/util/index.js', 'src/util/index.js:helper'),
        ('src/util/strings.js', 'src/util/strings.js:lower'),
        ('src/util/strings.js', 'src/util/strings.js:upper'),
    },
    "IMPORTS": {
        ('src/index.js', 'src/math.js:Calculator'),
        ('src/index.js', 'src/math.js:add'),
        ('src/index.js', 'src/util/format.cjs'),
        ('src/index.js', 'src/util/index.js:helper'),
        ('src/index.js', 'src/util/strings.js'),
        ('test/math.test.js', 'src/math.js:add'),
    },
    "CALLS": {
        ('src/index.js:main', 'src/math.js:Calculator'),
        ('src/index.js:main', 'src/math.js:add'),
        ('src/index.js:main', 'src/util/format.cjs:format'),
        ('src/index.js:main', 'src/util/index.js:helper'),
        ('src/index.js:main', 'src/util/strings.js:upper'),
        ('src/index.js:run', 'src/index.js:main'),
        ('src/math.js:Calculator.plus', 'src/math.js:Calculator.reset'),
        ('src/math.js:Calculator.plus', 'src/math.js:add'),
        ('test/math.test.js', 'src/math.js:add'),  # inside describe(...): no definition holds it
    },
    "unresolved": {
        ('src/index.js', 'IMPORTS', './missing', 'missing-module'),
        # methods of values whose type is not known (String(...) is a global: external)
        ('src/util/strings.js:lower', 'CALLS', 's.toLowerCase', 'dynamic-receiver'),
        ('src/util/strings.js:upper', 'CALLS', 's.toUpperCase', 'dynamic-receiver'),
        ('test/math.test.js', 'CALLS', 'expect(add(1, 2)).toBe', 'dynamic-receiver'),
    },
    },
    "ts_basic": {
        "broken": 'src/broken.ts',
        "tests": False,
    "objects": {
        ('class', 'src/models.ts:Circle'),
        ('enum', 'src/models.ts:Kind'),
        ('file', 'src/broken.ts'),
        ('file', 'src/geometry.ts'),
        ('file', 'src/models.ts'),
        ('file', 'src/service.ts'),
        ('file', 'src/view.tsx'),
        ('function', 'src/broken.ts:fine'),
        ('function', 'src/geometry.ts:Geometry.origin'),
        ('function', 'src/geometry.ts:twice'),
        ('function', 'src/geometry.ts:twice#2'),
        ('function', 'src/service.ts:show'),
        ('function', 'src/service.ts:total'),
        ('function', 'src/service.ts:unit'),
        ('function', 'src/view.tsx:Badge'),
        ('function', 'src/view.tsx:render'),
        ('interface', 'src/models.ts:Shape'),
        ('method', 'src/models.ts:Circle.area'),
        ('method', 'src/models.ts:Circle.constructor'),
        ('method', 'src/models.ts:Shape.area'),
    },
    "CONTAINS": {
        ('src/broken.ts', 'src/broken.ts:fine'),
        ('src/geometry.ts', 'src/geometry.ts:Geometry.origin'),
        ('src/geometry.ts', 'src/geometry.ts:twice'),
        ('src/geometry.ts', 'src/geometry.ts:twice#2'),
        ('src/models.ts', 'src/models.ts:Circle'),
        ('src/models.ts', 'src/models.ts:Kind'),
        ('src/models.ts', 'src/models.ts:Shape'),
        ('src/models.ts:Circle', 'src/models.ts:Circle.area'),
        ('src/models.ts:Circle', 'src/models.ts:Circle.constructor'),
        ('src/models.ts:Shape', 'src/models.ts:Shape.area'),
        ('src/service.ts', 'src/service.ts:show'),
        ('src/service.ts', 'src/service.ts:total'),
        ('src/service.ts', 'src/service.ts:unit'),
        ('src/view.tsx', 'src/view.tsx:Badge'),
        ('src/view.tsx', 'src/view.tsx:render'),
    },
    "IMPORTS": {
        ('src/service.ts', 'src/models.ts:Circle'),
        ('src/service.ts', 'src/models.ts:Kind'),
        ('src/service.ts', 'src/models.ts:Shape'),
        ('src/service.ts', 'src/view.tsx:render'),
        ('src/view.tsx', 'src/models.ts:Circle'),
    },
    "CALLS": {
        ('src/service.ts:show', 'src/service.ts:unit'),
        ('src/service.ts:show', 'src/view.tsx:render'),
        ('src/service.ts:unit', 'src/models.ts:Circle'),
    },
    "unresolved": {
        ('src/service.ts', 'IMPORTS', './nowhere', 'missing-module'),
        ('src/service.ts:show', 'CALLS', 'gone', 'unknown-name'),  # imported from the missing module
        ('src/service.ts:total', 'CALLS', 'shapes.reduce', 'dynamic-receiver'),
        ('src/service.ts:total', 'CALLS', 's.area', 'dynamic-receiver'),
        ('src/view.tsx:render', 'CALLS', 'c.area', 'dynamic-receiver'),  # parameter types are not followed
    },
    },
    "go_basic": {
        "broken": 'pkg/money/broken.go',
    "objects": {
        ('class', 'internal/store/store.go:Store'),
        ('class', 'pkg/money/broken.go:Later'),
        ('file', 'internal/store/store.go'),
        ('file', 'internal/store/store_test.go'),
        ('file', 'internal/store/total.go'),
        ('file', 'main.go'),
        ('file', 'pkg/money/broken.go'),
        ('file', 'pkg/money/money.go'),
        ('function', 'internal/store/store.go:New'),
        ('function', 'internal/store/store_test.go:testHelper'),
        ('function', 'internal/store/total.go:sum'),
        ('function', 'main.go:main'),
        ('function', 'pkg/money/broken.go:Bad'),
        ('function', 'pkg/money/broken.go:Good'),
        ('function', 'pkg/money/money.go:Format'),
        ('interface', 'internal/store/store.go:Sizer'),
        ('method', 'internal/store/store.go:Sizer.Size'),
        ('method', 'internal/store/total.go:Store.Total'),
        ('module', 'internal/store/'),
        ('module', 'pkg/money/'),
        ('test', 'internal/store/store_test.go:TestTotal'),
    },
    "CONTAINS": {
        ('internal/store/', 'internal/store/store.go'),
        ('internal/store/', 'internal/store/store_test.go'),
        ('internal/store/', 'internal/store/total.go'),
        ('internal/store/store.go', 'internal/store/store.go:New'),
        ('internal/store/store.go', 'internal/store/store.go:Sizer'),
        ('internal/store/store.go', 'internal/store/store.go:Store'),
        ('internal/store/store.go:Sizer', 'internal/store/store.go:Sizer.Size'),
        ('internal/store/store.go:Store', 'internal/store/total.go:Store.Total'),
        ('internal/store/store_test.go', 'internal/store/store_test.go:TestTotal'),
        ('internal/store/store_test.go', 'internal/store/store_test.go:testHelper'),
        ('internal/store/total.go', 'internal/store/total.go:sum'),
        ('main.go', 'main.go:main'),
        ('pkg/money/', 'pkg/money/broken.go'),
        ('pkg/money/', 'pkg/money/money.go'),
        ('pkg/money/broken.go', 'pkg/money/broken.go:Bad'),
        ('pkg/money/broken.go', 'pkg/money/broken.go:Good'),
        ('pkg/money/broken.go', 'pkg/money/broken.go:Later'),
        ('pkg/money/money.go', 'pkg/money/money.go:Format'),
    },
    "IMPORTS": {
        ('internal/store/store.go', 'pkg/money/broken.go'),
        ('internal/store/store.go', 'pkg/money/money.go'),
        ('internal/store/total.go', 'pkg/money/broken.go'),
        ('internal/store/total.go', 'pkg/money/money.go'),
        ('main.go', 'internal/store/store.go'),
        ('main.go', 'internal/store/total.go'),
        ('main.go', 'pkg/money/broken.go'),
        ('main.go', 'pkg/money/money.go'),
    },
    "CALLS": {
        ('internal/store/store_test.go:TestTotal', 'internal/store/store.go:New'),
        ('internal/store/store_test.go:TestTotal', 'internal/store/total.go:sum'),
        ('internal/store/total.go:Store.Total', 'internal/store/total.go:sum'),
        ('main.go:main', 'internal/store/store.go:New'),
        ('main.go:main', 'pkg/money/money.go:Format'),
    },
    "unresolved": {
        ('main.go', 'IMPORTS', 'example.com/shop/pkg/missing', 'missing-module'),
        # methods of values (fmt.Println is a package outside the repository: external)
        ('main.go:main', 'CALLS', 's.Total', 'dynamic-receiver'),
        ('internal/store/store_test.go:TestTotal', 'CALLS', 't.Fatal', 'dynamic-receiver'),
        ('internal/store/store_test.go:TestTotal', 'CALLS', 'New().Total', 'dynamic-receiver'),
    },
    },
    "rust_basic": {
        "broken": 'src/broken.rs',
    "objects": {
        ('class', 'src/broken.rs:After'),
        ('class', 'src/shapes/mod.rs:Circle'),
        ('class', 'src/shapes/square.rs:Square'),
        ('enum', 'src/shapes/mod.rs:Kind'),
        ('file', 'src/broken.rs'),
        ('file', 'src/lib.rs'),
        ('file', 'src/shapes/mod.rs'),
        ('file', 'src/shapes/square.rs'),
        ('file', 'src/util.rs'),
        ('function', 'src/broken.rs:broken'),
        ('function', 'src/broken.rs:fine'),
        ('function', 'src/lib.rs:default_circle'),
        ('function', 'src/util.rs:clamp'),
        ('function', 'src/util.rs:unit'),
        ('interface', 'src/shapes/mod.rs:Shape'),
        ('method', 'src/shapes/mod.rs:Circle.area'),
        ('method', 'src/shapes/mod.rs:Circle.new'),
        ('method', 'src/shapes/mod.rs:Shape.area'),
        ('method', 'src/shapes/square.rs:Square.area'),
        ('test', 'src/util.rs:tests.unit_is_one'),
    },
    "CONTAINS": {
        ('src/broken.rs', 'src/broken.rs:After'),
        ('src/broken.rs', 'src/broken.rs:broken'),
        ('src/broken.rs', 'src/broken.rs:fine'),
        ('src/lib.rs', 'src/lib.rs:default_circle'),
        ('src/shapes/mod.rs', 'src/shapes/mod.rs:Circle'),
        ('src/shapes/mod.rs', 'src/shapes/mod.rs:Kind'),
        ('src/shapes/mod.rs', 'src/shapes/mod.rs:Shape'),
        ('src/shapes/mod.rs:Circle', 'src/shapes/mod.rs:Circle.area'),
        ('src/shapes/mod.rs:Circle', 'src/shapes/mod.rs:Circle.new'),
        ('src/shapes/mod.rs:Shape', 'src/shapes/mod.rs:Shape.area'),
        ('src/shapes/square.rs', 'src/shapes/square.rs:Square'),
        ('src/shapes/square.rs:Square', 'src/shapes/square.rs:Square.area'),
        ('src/util.rs', 'src/util.rs:clamp'),
        ('src/util.rs', 'src/util.rs:tests.unit_is_one'),
        ('src/util.rs', 'src/util.rs:unit'),
    },
    "IMPORTS": {
        ('src/lib.rs', 'src/shapes/mod.rs'),
        ('src/lib.rs', 'src/shapes/mod.rs:Circle'),
        ('src/lib.rs', 'src/util.rs'),
        ('src/shapes/mod.rs', 'src/shapes/square.rs'),
        ('src/shapes/mod.rs', 'src/util.rs:clamp'),
        ('src/shapes/mod.rs', 'src/util.rs:unit'),
        ('src/shapes/square.rs', 'src/shapes/mod.rs:Shape'),
    },
    "CALLS": {
        ('src/lib.rs:default_circle', 'src/shapes/mod.rs:Circle.new'),
        ('src/lib.rs:default_circle', 'src/util.rs:unit'),
        ('src/shapes/mod.rs:Circle.area', 'src/util.rs:unit'),
        ('src/shapes/mod.rs:Circle.new', 'src/util.rs:clamp'),
        ('src/util.rs:tests.unit_is_one', 'src/util.rs:unit'),
    },
    "unresolved": {
        ('src/lib.rs', 'IMPORTS', 'missing', 'missing-module'),
        ('src/util.rs:clamp', 'CALLS', 'x.max', 'dynamic-receiver'),  # a method of a value
    },
    },
    "csharp_basic": {
        "broken": 'src/Broken.cs',
    "objects": {
        ('class', 'src/Broken.cs:Fine'),
        ('class', 'src/Broken.cs:Half'),
        ('class', 'src/Core/Greeter.cs:Greeter'),
        ('class', 'src/Core/Greeter.cs:Greeter.Options'),
        ('class', 'src/Util/Format.cs:Format'),
        ('class', 'src/Util/Format.cs:Money'),
        ('class', 'src/Util/Format.cs:Pair'),
        ('class', 'tests/GreeterTests.cs:GreeterTests'),
        ('enum', 'src/Core/Greeter.cs:Tone'),
        ('file', 'src/Broken.cs'),
        ('file', 'src/Core/Greeter.cs'),
        ('file', 'src/Util/Format.cs'),
        ('file', 'tests/GreeterTests.cs'),
        ('interface', 'src/Core/Greeter.cs:IGreeter'),
        ('method', 'src/Broken.cs:Fine.One'),
        ('method', 'src/Broken.cs:Half.Bad'),
        ('method', 'src/Core/Greeter.cs:Greeter.Greet(string)'),
        ('method', 'src/Core/Greeter.cs:Greeter.Greet(string,int)'),
        ('method', 'src/Core/Greeter.cs:Greeter.Greeter'),
        ('method', 'src/Core/Greeter.cs:Greeter.Options.Loud'),
        ('method', 'src/Core/Greeter.cs:IGreeter.Greet'),
        ('method', 'src/Util/Format.cs:Format.Title'),
        ('method', 'src/Util/Format.cs:Format.Upper'),
        ('method', 'tests/GreeterTests.cs:GreeterTests.Helper'),
        ('test', 'tests/GreeterTests.cs:GreeterTests.GreetsByName'),
    },
    "CONTAINS": {
        ('src/Broken.cs', 'src/Broken.cs:Fine'),
        ('src/Broken.cs', 'src/Broken.cs:Half'),
        ('src/Broken.cs:Fine', 'src/Broken.cs:Fine.One'),
        ('src/Broken.cs:Half', 'src/Broken.cs:Half.Bad'),
        ('src/Core/Greeter.cs', 'src/Core/Greeter.cs:Greeter'),
        ('src/Core/Greeter.cs', 'src/Core/Greeter.cs:IGreeter'),
        ('src/Core/Greeter.cs', 'src/Core/Greeter.cs:Tone'),
        ('src/Core/Greeter.cs:Greeter', 'src/Core/Greeter.cs:Greeter.Greet(string)'),
        ('src/Core/Greeter.cs:Greeter', 'src/Core/Greeter.cs:Greeter.Greet(string,int)'),
        ('src/Core/Greeter.cs:Greeter', 'src/Core/Greeter.cs:Greeter.Greeter'),
        ('src/Core/Greeter.cs:Greeter', 'src/Core/Greeter.cs:Greeter.Options'),
        ('src/Core/Greeter.cs:Greeter.Options', 'src/Core/Greeter.cs:Greeter.Options.Loud'),
        ('src/Core/Greeter.cs:IGreeter', 'src/Core/Greeter.cs:IGreeter.Greet'),
        ('src/Util/Format.cs', 'src/Util/Format.cs:Format'),
        ('src/Util/Format.cs', 'src/Util/Format.cs:Money'),
        ('src/Util/Format.cs', 'src/Util/Format.cs:Pair'),
        ('src/Util/Format.cs:Format', 'src/Util/Format.cs:Format.Title'),
        ('src/Util/Format.cs:Format', 'src/Util/Format.cs:Format.Upper'),
        ('tests/GreeterTests.cs', 'tests/GreeterTests.cs:GreeterTests'),
        ('tests/GreeterTests.cs:GreeterTests', 'tests/GreeterTests.cs:GreeterTests.GreetsByName'),
        ('tests/GreeterTests.cs:GreeterTests', 'tests/GreeterTests.cs:GreeterTests.Helper'),
    },
    "IMPORTS": {
        ('src/Core/Greeter.cs', 'src/Util/Format.cs'),
        ('tests/GreeterTests.cs', 'src/Core/Greeter.cs'),
        ('tests/GreeterTests.cs', 'src/Util/Format.cs:Format'),
    },
    "CALLS": {
        ('src/Core/Greeter.cs:Greeter.Greet(string)', 'src/Util/Format.cs:Format.Title'),
        ('src/Util/Format.cs:Format.Upper', 'src/Util/Format.cs:Format.Title'),
        ('tests/GreeterTests.cs:GreeterTests.GreetsByName', 'src/Core/Greeter.cs:Greeter'),
        ('tests/GreeterTests.cs:GreeterTests.GreetsByName', 'src/Util/Format.cs:Format.Title'),
    },
    "unresolved": {
        ('src/Core/Greeter.cs:Greeter.Greet(string,int)', 'CALLS', 'Greet', 'ambiguous-overload'),
        ('tests/GreeterTests.cs', 'IMPORTS', 'Acme.Missing', 'missing-module'),
        ('src/Util/Format.cs:Format.Upper', 'CALLS', 'Title(s).ToUpper', 'dynamic-receiver'),
        ('tests/GreeterTests.cs:GreeterTests.GreetsByName', 'CALLS', 'g.Greet', 'dynamic-receiver'),  # var g
    },
    },
}


indexed = indexed_fixture(GOLDEN, content="code")


# --- details of single objects ---------------------------------------------------------------

def test_javascript_docstring_signature_and_lines():
    source = (FIXTURES / "js_basic/src/math.js").read_text()
    add = _by_qualname(_facts("src/math.js", source))["add"]
    assert (add.start_line, add.end_line) == (5, 7)
    assert add.signature == "export function add(a, b)"
    assert add.docstring == "Adds two numbers.\n@param {number} a"
    assert add.language == "javascript"


def test_go_doc_comment_receiver_and_test():
    facts = _facts("internal/store/total.go", (FIXTURES / "go_basic/internal/store/total.go").read_text())
    total = _by_qualname(facts)["Store.Total"]
    assert total.kind == "method" and total.docstring == "Total sums the items."
    assert total.signature == "func (s *Store) Total() money.Cents"
    tests = _facts("internal/store/store_test.go",
                   (FIXTURES / "go_basic/internal/store/store_test.go").read_text())
    assert {o.name: o.kind for o in tests.objects} == {"TestTotal": "test", "testHelper": "function"}
    assert not tags_go.is_test_name("Testify") and tags_go.is_test_name("Test_x")


def test_rust_doc_lines_attributes_and_impl_methods():
    facts = _facts("src/shapes/mod.rs", (FIXTURES / "rust_basic/src/shapes/mod.rs").read_text())
    objs = _by_qualname(facts)
    assert objs["Shape"].docstring == "Something with an area."
    assert objs["Circle"].start_line == 10  # the #[derive] line belongs to the struct
    assert facts.parents[objs["Circle.new"].id] == objs["Circle"].id
    assert facts.namespace == "crate::shapes"


@pytest.mark.parametrize("path, crate, module", [
    ("src/lib.rs", "src", ["crate"]),
    ("src/main.rs", "src", ["crate"]),
    ("src/a/mod.rs", "src", ["crate", "a"]),
    ("src/a/b.rs", "src", ["crate", "a", "b"]),
    ("crates/x/src/y.rs", "crates/x/src", ["crate", "y"]),
    ("src/bin/tool.rs", "src/bin/tool.rs", ["crate"]),
    ("tests/it.rs", "tests/it.rs", ["crate"]),
])
def test_rust_module_paths(path, crate, module):
    assert tags_rust.module_path(path) == (crate, module)


def test_csharp_overloads_carry_parameter_types_and_docs():
    facts = _facts("src/Core/Greeter.cs", (FIXTURES / "csharp_basic/src/Core/Greeter.cs").read_text())
    objs = _by_qualname(facts)
    assert {"Greeter.Greet(string)", "Greeter.Greet(string,int)", "Greeter.Greeter"} <= set(objs)
    assert objs["Greeter"].docstring == "Greets people."
    assert facts.namespace == "Acme.Core"
    test = _facts("t/T.cs", "class T {\n    [Fact]\n    public void A() {}\n}\n").objects[1]
    assert (test.kind, test.signature, test.start_line) == ("test", "public void A()", 2)


def test_duplicate_definitions_get_numbered_ids():
    facts = _facts("src/geometry.ts", (FIXTURES / "ts_basic/src/geometry.ts").read_text())
    assert [o.id for o in facts.objects if o.name == "twice"] == [
        "r:src/geometry.ts:twice", "r:src/geometry.ts:twice#2"]


@pytest.mark.parametrize("spec, expected", [
    ("./math", "src/math.js"),
    ("./util", "src/util/index.js"),
    ("./util/strings.js", "src/util/strings.js"),
    ("../lib/x", None),
    ("./models.js", "src/models.ts"),
])
def test_javascript_module_resolution(spec, expected):
    files = dict.fromkeys(["src/math.js", "src/util/index.js", "src/util/strings.js", "src/models.ts"])
    assert tags_js.module_file("src/index.js", spec, files) == expected  # type: ignore[arg-type]


def test_typescript_and_tsx_are_resolved_as_one_family(tmp_path):
    from vitalrag.graph.memory import MemoryStore
    from vitalrag.ingest import index_repository

    ts = _facts("src/a.ts", "import { f } from './b';\nexport function g() { return f(); }\n")
    alone = resolve_all(REGISTRY["typescript"].resolver("r", [ts]), [ts])
    # resolved alone, the import of b is missing and so is the f it would bind
    assert [(u.kind, u.reason) for u in alone.unresolved] == [("IMPORTS", "missing-module"),
                                                              ("CALLS", "unknown-name")]
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.ts").write_text("import { f } from './b';\nexport function g() { return f(); }\n")
    (tmp_path / "src" / "b.tsx").write_text("export function f() { return <div/>; }\n")
    store = MemoryStore(tmp_path / "idx")
    index_repository(tmp_path, store, name="r", workers=1)
    got = {(e.source, e.target, e.kind) for e in store.find_edges() if e.kind != "CONTAINS"}
    assert got == {("r:src/a.ts", "r:src/b.tsx:f", "IMPORTS"), ("r:src/a.ts:g", "r:src/b.tsx:f", "CALLS")}


def test_go_module_path_is_inferred_from_imports_and_ties_stay_unknown():
    def go(path: str, imports: list[str]) -> FileFacts:
        body = "".join(f'import "{i}"\n' for i in imports)
        return _facts(path, f"package p\n{body}")

    facts = [go("a/x.go", ["example.com/m/b", "fmt"]), go("b/y.go", ["example.com/m/a"])]
    assert tags_go.infer_module_path(facts) == "example.com/m"
    tie = [go("a/x.go", ["one.org/b"]), go("b/y.go", ["two.org/a"])]
    assert tags_go.infer_module_path(tie) is None
    REGISTRY["go"].prepare("r", tie)
    res = resolve_all(REGISTRY["go"].resolver("r", tie), tie)
    assert {u.reason for u in res.unresolved} == {"ambiguous-module"} and not res.edges


def test_syntax_problem_is_reported_in_facts():
    facts = _facts("src/x.go", "package p\nfunc A( {\n}\nfunc B() {}\n")
    assert facts.problems and "syntax" in facts.problems[0]
    assert "B" in {o.name for o in facts.objects}
