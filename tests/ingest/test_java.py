"""Java extraction and import-aware resolution, on small fixture repositories.

``java_shapes`` compiles with javac 17; the CALLS edges asserted here were
checked against ``javap -c`` of its classes. ``java_junit`` needs JUnit on the
class path to compile; ``java_broken`` has a syntax error on purpose.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tree_sitter import QueryCursor

from vitalrag.graph.memory import MemoryStore
from vitalrag.ingest import index_repository
from vitalrag.kernel.text import content_hash
from vitalrag.ingest.lang.java.extraction import extract
from vitalrag.ingest.lang import parser, tags_query

REPOS = Path(__file__).parent.parent / "fixtures" / "repos"
APP = "jfix:src/com/acme/app/"
UTIL = "jfix:src/com/acme/util/"


def _index(tmp_path_factory: pytest.TempPathFactory, name: str):
    store = MemoryStore(tmp_path_factory.mktemp(name) / "idx")
    report = index_repository(REPOS / name, store, name="jfix", workers=1)
    return store, report


@pytest.fixture(scope="module")
def shapes(tmp_path_factory):
    return _index(tmp_path_factory, "java_shapes")


@pytest.fixture(scope="module")
def junit(tmp_path_factory):
    return _index(tmp_path_factory, "java_junit")


def out(store, source: str, kind: str) -> dict[str, tuple[int, ...]]:
    """Targets (and lines) of ``source``'s edges of one kind."""
    return {e.target: e.lines for e in store.find_edges(source=source, kind=kind)}


def obj(store, node_id: str):
    return store.get_objects([node_id])[node_id]


# ---- objects ----------------------------------------------------------------------


def test_file_object(shapes):
    store, _ = shapes
    path = "src/com/acme/app/Circle.java"
    text = (REPOS / "java_shapes" / path).read_text()
    f = obj(store, "jfix:" + path)
    assert (f.kind, f.name, f.qualname, f.language) == ("file", "Circle.java", path, "java")
    assert (f.start_line, f.end_line) == (1, len(text.splitlines()))
    assert f.content_hash == content_hash(text)


def test_class_object_lines_signature_javadoc(shapes):
    store, _ = shapes
    c = obj(store, APP + "Circle.java:Circle")
    assert (c.kind, c.name, c.qualname, c.language) == ("class", "Circle", "Circle", "java")
    # the declaration node's lines: modifiers and annotations in, the Javadoc out
    assert (c.start_line, c.end_line) == (10, 59)
    assert c.signature == "public class Circle extends Base implements Shape, Comparable<Circle>"
    assert c.docstring == "A circle.\n<p>\nRadius only."
    lines = (REPOS / "java_shapes/src/com/acme/app/Circle.java").read_text().split("\n")
    assert c.content_hash == content_hash("\n".join(lines[9:59]))


def test_kinds_nested_enum_record_interface(shapes):
    store, _ = shapes
    kinds = {o.qualname: o.kind for o in store.find_objects(repo="jfix") if o.path.endswith("Main.java")}
    assert kinds["Main"] == "class"
    assert kinds["Main.Mode"] == "enum"
    assert kinds["Main.Pair"] == "class"  # a record
    assert kinds["Main.main(String[])"] == "method"
    assert obj(store, UTIL + "Shape.java:Shape").kind == "interface"
    rim = obj(store, APP + "Circle.java:Circle.Rim")
    assert (rim.name, rim.qualname, rim.docstring) == ("Rim", "Circle.Rim", "A circle's rim.")
    # members of the anonymous Runnable in Main.main are not objects
    assert not [o for o in store.find_objects(repo="jfix", name="run") if o.path.endswith("Main.java")]


def test_overloads_and_constructors_are_distinct_objects(shapes):
    store, _ = shapes
    prints = {o.id for o in store.find_objects(repo="jfix", name="print")}
    assert prints == {APP + "Printer.java:Printer.print(Object)", APP + "Printer.java:Printer.print(String)",
                      APP + "Printer.java:Printer.print(int)", APP + "Printer.java:Printer.print(String,int)"}
    ctors = {o.id for o in store.find_objects(repo="jfix", name="Circle", kind="method")}
    assert ctors == {APP + "Circle.java:Circle.Circle()", APP + "Circle.java:Circle.Circle(double)"}


def test_containment_and_packages(shapes):
    store, _ = shapes
    assert out(store, APP + "Circle.java", "CONTAINS").keys() == {APP + "Circle.java:Circle"}
    assert APP + "Circle.java:Circle.Rim" in out(store, APP + "Circle.java:Circle", "CONTAINS")
    assert out(store, APP + "Circle.java:Circle.Rim", "CONTAINS").keys() == {
        APP + "Circle.java:Circle.Rim.Rim(Circle)", APP + "Circle.java:Circle.Rim.length()",
        APP + "Circle.java:Circle.Rim.label()"}
    util = obj(store, UTIL)
    assert (util.kind, util.qualname, util.name) == ("module", "com.acme.util", "util")
    assert UTIL + "Shape.java" in out(store, UTIL, "CONTAINS")


def test_parameter_types_in_ids():
    src = """package p;
import java.util.*;
/**
 * Kinds of thing.
 *   @author me
 */
public @interface Marker { String value() default ""; }
class Q<T> {
    <R extends Comparable<R>> Map.Entry<String, R> pick(final List<String> names, int[] counts,
            T item, java.util.Map<String, List<Integer>> deep, String... rest) { return null; }
    void matrix(int grid[][], @Deprecated Object o) {}
    abstract static class Inner { abstract void go(); }
}
class LegacyTest extends junit.framework.TestCase {
    public void testOld() {}
    public void helper() {}
}
"""
    facts = extract("r", "src/p/Marker.java", src)
    ids = {o.qualname: o for o in facts.objects}
    assert ids["Marker"].kind == "interface"
    assert ids["Marker"].docstring == "Kinds of thing.\n  @author me"
    assert ids["Marker.value()"].kind == "method"
    pick = ids["Q.pick(List,int[],T,java.util.Map,String...)"]
    assert pick.name == "pick"
    assert pick.signature == ("<R extends Comparable<R>> Map.Entry<String, R> pick(final List<String> names, "
                              "int[] counts, T item, java.util.Map<String, List<Integer>> deep, String... rest)")
    assert "Q.matrix(int[][],Object)" in ids
    assert ids["Q.Inner.go()"].signature == "abstract void go()"
    assert ids["LegacyTest.testOld()"].kind == "test"
    assert ids["LegacyTest.helper()"].kind == "method"
    assert facts.parents[pick.id] == "r:src/p/Marker.java:Q"
    assert (facts.namespace, facts.package_dir, facts.package_name) == ("p", "src/p", "p")
    assert extract("r", "Top.java", "class Top {}").package_dir is None


def test_shared_encodings_equal_fresh_ones(monkeypatch):
    """The walk encodes a nested call's receiver and arguments once, for the
    outermost call, and shares them: the references must equal those of a walk
    that encodes everything afresh (pattern variables declared mid-expression,
    chains past the depth cut, lambdas, nested calls)."""
    deep = "x" + ".next()" * 30
    src = f"""package p;
class Node {{ Node next() {{ return this; }} int bar() {{ return 1; }} }}
class Use {{
    boolean check(boolean a, int b) {{ return a; }}
    int twice(int v) {{ return v; }}
    void run(Object o, Node x, java.util.List<Node> xs) {{
        check(o instanceof Node f, f.bar());
        if (o instanceof Node g && check(g.bar() > 0, twice(g.next().bar()))) {{ g.bar(); }}
        twice(twice(x.next().bar()));
        twice(twice(x.next().bar()) + x.bar());
        Node y = {deep};
        {deep}.bar();
        xs.forEach(n -> check(true, n.next().bar()));
    }}
}}
"""
    from vitalrag.ingest.lang.java import walk as java_walk
    from vitalrag.ingest.lang.java.facts import CallSite, Opaque, Var

    shared = extract("r", "src/p/Use.java", src).refs
    monkeypatch.setattr(java_walk.ReferenceWalker, "encode",
                        lambda self, node, scope, depth: (self._encode(node, scope, depth) if node is not None
                                                          else Opaque("missing")))
    fresh = extract("r", "src/p/Use.java", src).refs
    assert [(r.kind, r.source, r.name, r.line, r.data) for r in shared] == \
        [(r.kind, r.source, r.name, r.line, r.data) for r in fresh]
    calls = {id(r): r.data for r in shared if isinstance(r.data, CallSite)}
    # the pattern variable declared by the first argument types the second one's receiver
    f_bar = next(r for r in shared if r.name == "f.bar")
    assert calls[id(f_bar)].call.receiver == Var("Node")
    # a cut chain is cut as before, and a nested call shares its encodings with its ancestor
    assert any("too-deep" in repr(r.data) for r in shared)
    # twice(twice(x.next().bar()))
    outer, inner = [calls[id(r)].call for r in shared if r.name == "twice" and r.line == 9]
    assert outer.argv[0].name == "twice" and inner.argv[0].name == "bar"
    assert outer.argv[0].argv[0] is inner.argv[0]


def test_tags_query_definitions():
    src = b"class A { A() {} void m() { n(); } interface I {} enum E { X } record R(int x) {} }"
    caps = QueryCursor(tags_query("java")).captures(parser("java").parse(src).root_node)
    names = sorted(n.text.decode() for key in ("name.definition.class", "name.definition.interface",
                                                "name.definition.enum") for n in caps.get(key, ()))
    assert names == ["A", "E", "I", "R"]
    assert [n.text.decode() for n in caps["name.reference.call"]] == ["n"]
    assert [n.text.decode() for n in caps["name.definition.constructor"]] == ["A"]


# ---- resolution ---------------------------------------------------------------------


def test_same_package_class_without_import(shapes):
    store, _ = shapes
    calls = out(store, APP + "Circle.java:Circle.run()", "CALLS")
    assert calls[APP + "Helper.java:Helper.assist(String)"] == (35,)
    assert APP + "Base.java:Base" in out(store, APP + "Circle.java:Circle", "INHERITS")


def test_single_type_import(shapes):
    store, _ = shapes
    assert out(store, APP + "Circle.java", "IMPORTS") == {UTIL + "Shape.java:Shape": (3,)}
    assert out(store, APP + "Circle.java:Circle", "INHERITS")[UTIL + "Shape.java:Shape"] == (10,)


def test_on_demand_import(shapes):
    store, _ = shapes
    imports = out(store, APP + "Main.java", "IMPORTS")
    assert imports[UTIL] == (5,)  # import com.acme.util.*; -> the package's module
    calls = out(store, APP + "Main.java:Main.main(String[])", "CALLS")
    assert calls[UTIL + "Strings.java:Strings.trim(String)"] == (23,)
    assert calls[UTIL + "Strings.java:Strings.repeat(String,int)"] == (37,)  # inside an anonymous class
    assert out(store, APP + "Main.java:Main.Pair.joined()", "CALLS") == {
        UTIL + "Strings.java:Strings.trim(String)": (18,)}


def test_static_import(shapes):
    store, _ = shapes
    assert out(store, APP + "Main.java", "IMPORTS")[UTIL + "Numbers.java:Numbers.twice(int)"] == (3,)
    assert out(store, APP + "Main.java:Main.main(String[])", "CALLS")[UTIL + "Numbers.java:Numbers.twice(int)"] == (24,)


def test_field_parameter_and_local_types(shapes):
    store, _ = shapes
    assert out(store, APP + "Printer.java:Printer.shapes(Circle)", "CALLS") == {
        APP + "Circle.java:Circle.run()": (43,),               # parameter
        APP + "Circle.java:Circle.area()": (45,),              # field
        APP + "Circle.java:Circle.Circle(double)": (46,),
        APP + "Circle.java:Circle.compareTo(Circle)": (47,),   # local
        APP + "Circle.java:Circle.Rim.Rim(Circle)": (48,),
        APP + "Circle.java:Circle.Rim.length()": (49,),        # local of a nested type
    }
    assert out(store, APP + "Printer.java:Printer.print(String)", "CALLS") == {
        APP + "Helper.java:Helper.help()": (14,)}
    # interface-typed locals call the interface's methods
    calls = out(store, APP + "Main.java:Main.main(String[])", "CALLS")
    assert calls[UTIL + "Shape.java:Shape.describe()"] == (26,)
    assert calls[UTIL + "Named.java:Named.name()"] == (28,)
    assert calls[APP + "Main.java:Main.Mode.quick()"] == (30,)


def test_overloads_told_apart(shapes):
    store, _ = shapes
    p = APP + "Printer.java:Printer."
    assert out(store, p + "printAll(List)", "CALLS") == {
        p + "print(String)": (27,), p + "print(String,int)": (29,), p + "print(int)": (30,)}
    assert out(store, p + "print(Object)", "CALLS") == {p + "print(String)": (10,)}  # String.valueOf
    assert out(store, p + "print(int)", "CALLS") == {p + "print(String)": (18,)}     # Integer.toString
    # a repository method's declared return type decides: mystery() returns Object
    assert out(store, p + "ambiguous(List)", "CALLS") == {p + "mystery()": (35,), p + "print(Object)": (35,)}


def test_ambiguous_call_stays_unresolved(shapes):
    store, _ = shapes
    refs = [u for u in store.unresolved("jfix") if u.source == APP + "Printer.java:Printer.ambiguous(List)"]
    assert [(u.kind, u.name, u.line, u.reason) for u in refs] == [("CALLS", "print", 34, "ambiguous-overload")]


def test_this_super_and_enclosing_calls(shapes):
    store, _ = shapes
    assert out(store, APP + "Circle.java:Circle.run()", "CALLS") == {
        APP + "Base.java:Base.run()": (33,),            # super.run()
        APP + "Base.java:Base.log(String)": (34, 35),   # this.log(...), inherited log(...)
        APP + "Circle.java:Circle.name()": (35,),
        APP + "Helper.java:Helper.assist(String)": (35,),
    }
    assert out(store, APP + "Circle.java:Circle.Circle()", "CALLS") == {
        APP + "Circle.java:Circle.Circle(double)": (14,)}  # this(1.0)
    assert out(store, APP + "Outer.java:Outer.Inner.touch()", "CALLS") == {
        APP + "Outer.java:Outer.bump()": (12, 13)}  # bump() and Outer.this.bump()
    assert out(store, APP + "Circle.java:Circle.Rim.label()", "CALLS") == {
        APP + "Circle.java:Circle.name()": (56,)}


def test_constructor_calls(shapes):
    store, _ = shapes
    calls = out(store, APP + "Main.java:Main.main(String[])", "CALLS")
    assert calls[APP + "Circle.java:Circle.Circle(double)"] == (25,)
    assert calls[APP + "Main.java:Main.Pair"] == (31,)          # a record without a declared constructor
    assert calls[APP + "Outer.java:Outer"] == (32,)             # no declared constructor: the class
    assert calls[APP + "Outer.java:Outer.Inner"] == (32,)       # outer.new Inner()
    assert out(store, APP + "Printer.java:Printer", "CALLS") == {APP + "Helper.java:Helper": (6,)}  # field initializer


def test_inherits_extends_implements_and_interface_extends(shapes):
    store, _ = shapes
    edges = {(e.source, e.target, e.lines) for e in store.find_edges(repo="jfix", kind="INHERITS")}
    assert edges == {
        (APP + "Circle.java:Circle", APP + "Base.java:Base", (10,)),
        (APP + "Circle.java:Circle", UTIL + "Shape.java:Shape", (10,)),   # Comparable is external
        (UTIL + "Shape.java:Shape", UTIL + "Named.java:Named", (10,)),    # Serializable is external
    }
    assert out(store, UTIL + "Shape.java:Shape.describe()", "CALLS") == {
        UTIL + "Named.java:Named.name()": (14,), UTIL + "Shape.java:Shape.area()": (14,)}


def test_references_from_declared_types(shapes):
    store, _ = shapes
    assert out(store, APP + "Circle.java:Circle.Rim", "REFERENCES") == {APP + "Circle.java:Circle": (45,)}
    refs = out(store, APP + "Printer.java:Printer.shapes(Circle)", "REFERENCES")
    assert refs == {APP + "Circle.java:Circle": (42, 46), APP + "Circle.java:Circle.Rim": (48,)}


def test_inferred_and_dynamic_receivers(shapes):
    store, _ = shapes
    assert out(store, APP + "Printer.java:Printer.inferred()", "CALLS") == {
        APP + "Circle.java:Circle.Circle()": (53,),
        APP + "Circle.java:Circle.name()": (54,),   # var made = new Circle()
        APP + "Printer.java:Printer.find()": (55,),
    }
    refs = {(u.name, u.line, u.reason) for u in store.unresolved("jfix")
            if u.source == APP + "Printer.java:Printer.inferred()"}
    assert refs == {("found.name", 56, "var-inferred"), ("c.area", 58, "lambda-parameter"),
                    ("all.get(0).area", 59, "untyped-chain")}


def test_external_references_are_counted_not_stored(shapes):
    store, report = shapes
    assert report.external > 0
    assert len(store.unresolved("jfix")) == 4
    assert not any("Math" in u.name or "journal" in u.name for u in store.unresolved("jfix"))


def test_junit_test_kinds(junit):
    store, _ = junit
    t = "jfix:src/test/java/org/calc/"
    kinds = {o.id.removeprefix(t): o.kind for o in store.find_objects(repo="jfix") if o.id.startswith(t)}
    assert kinds["CalculatorTest.java:CalculatorTest.addsInts()"] == "test"          # JUnit 4 @Test
    assert kinds["CalculatorTest.java:CalculatorTest.negates()"] == "test"           # @Test(expected = ...)
    assert kinds["CalculatorTest.java:CalculatorTest.setUp()"] == "method"           # @Before
    assert kinds["CalculatorJupiterTest.java:CalculatorJupiterTest.addsDoubles()"] == "test"       # JUnit 5
    assert kinds["CalculatorJupiterTest.java:CalculatorJupiterTest.negatesTwice(int)"] == "test"   # parameterized
    assert kinds["CalculatorJupiterTest.java:CalculatorJupiterTest.addsZero()"] == "test"          # repeated
    assert kinds["CalculatorJupiterTest.java:CalculatorJupiterTest.negated(int)"] == "method"


def test_junit_tests_edges(junit):
    store, _ = junit
    t = "jfix:src/test/java/org/calc/"
    calc = "jfix:src/main/java/org/calc/Calculator.java:Calculator"
    edges = {(e.source.removeprefix(t), e.target.removeprefix(calc), e.lines)
             for e in store.find_edges(repo="jfix", kind="TESTS")}
    assert edges == {
        ("CalculatorTest.java:CalculatorTest.addsInts()", ".add(int,int)", (18,)),
        ("CalculatorTest.java:CalculatorTest.negates()", ".negate(int)", (23,)),
        ("CalculatorJupiterTest.java:CalculatorJupiterTest.addsDoubles()", ".add(double,double)", (15,)),
        ("CalculatorJupiterTest.java:CalculatorJupiterTest.negatesTwice(int)", ".negate(int)", (21,)),
        ("CalculatorJupiterTest.java:CalculatorJupiterTest.negatesTwice(int)",   # a helper in the test class
         t + "CalculatorJupiterTest.java:CalculatorJupiterTest.negated(int)", (21,)),
        ("CalculatorJupiterTest.java:CalculatorJupiterTest.addsZero()", "", (26,)),   # new Calculator()
        ("CalculatorJupiterTest.java:CalculatorJupiterTest.addsZero()", ".add(int,int)", (26,)),
    }
    assert store.unresolved("jfix") == []


def test_syntax_errors_keep_what_is_recovered(tmp_path):
    store = MemoryStore(tmp_path / "idx")
    report = index_repository(REPOS / "java_broken", store, name="jfix", workers=1)
    assert [(s.path, s.reason) for s in report.skipped] == [
        ("src/p/Broken.java", "syntax errors at line(s) 8, 9: indexed what tree-sitter recovered")]
    b = "jfix:src/p/Broken.java:Broken."
    assert {o.id for o in store.find_objects(repo="jfix", kind="method")} == {
        b + "fine()", b + "broken()", b + "helper()", "jfix:src/p/Ok.java:Ok.use(Broken)"}
    assert out(store, b + "fine()", "CALLS") == {b + "helper()": (5,)}
    assert out(store, "jfix:src/p/Ok.java:Ok.use(Broken)", "CALLS") == {b + "fine()": (5,)}


def test_imports_in_source_order_whatever_the_parse():
    """tree-sitter's ``captures()`` lists are not in source order (their order
    changes from one parse to the next): imports are read in source order, so a
    file's references, and the order of its IMPORTS edges, never vary."""
    names = [f"p{i}.T{i}" for i in range(40)]
    src = "package q;\n" + "".join(f"import {n};\n" for n in names) + "class A {}\n"
    orders = set()
    for _ in range(8):
        refs = [r for r in extract("r", "src/q/A.java", src).refs if r.kind == "import"]
        orders.add(tuple((r.line, r.name) for r in refs))
    assert orders == {tuple((i + 2, n) for i, n in enumerate(names))}


def test_objects_are_the_tags_query_definitions():
    """The walk makes an object of exactly the declarations the tags query
    captures as definitions (none here is inside an anonymous class)."""
    src = (
        "package p;\n"
        "import java.util.List;\n"
        "@interface Ann { int value(); }\n"
        "public class A<T> extends B implements C {\n"
        "  A() {}\n"
        "  A(int x) { this(); }\n"
        "  void m() { class Local { void inner() {} } Runnable r = () -> {}; }\n"
        "  static <U> U g(List<U> xs) { return xs.get(0); }\n"
        "  interface I { default void d() {} }\n"
        "  enum E { X, Y; void e() {} }\n"
        "  record R(int x) { R { } int twice() { return 2 * x; } }\n"
        "  static { class InInit {} }\n"
        "}\n"
        "class A {}\n"  # a second A: both are objects, the second suffixed
    )
    root = parser("java").parse(src.encode()).root_node
    caps = QueryCursor(tags_query("java")).captures(root)
    expected = sorted((n.start_point[0] + 1, n.child_by_field_name("name").text.decode())
                      for key, nodes in caps.items() if key.startswith("definition.") for n in nodes)
    facts = extract("r", "p/A.java", src)
    assert sorted((o.start_line, o.name) for o in facts.objects) == expected
    assert len(expected) == 18
    quals = [o.qualname for o in facts.objects]
    assert "A.m().Local" not in quals and "A.Local" in quals and "A.Local.inner()" in quals
    assert "A.InInit" in quals and "A.R.R(int)" in quals and "A#2" in quals
    assert facts.parents["r:p/A.java:A.Local"] == "r:p/A.java:A.m()"
