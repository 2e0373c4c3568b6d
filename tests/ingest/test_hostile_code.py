"""Hostile code (deep nesting, minified bundles, objects piled on long lines) is
extracted in time and memory that grow with the file, or skipped with a reason:
it never stalls or swamps a run."""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from vitalrag.graph.memory import MemoryStore
from vitalrag.ingest import index_repository
from vitalrag.ingest.cache import facts_to_json
from vitalrag.ingest.facts import FileFacts
from vitalrag.ingest.lang.java.facts import MAX_ANON
from vitalrag.ingest.lang.limits import MAX_NESTING
from vitalrag.ingest.parse import MAX_LINE_CHARS, parse_file
from vitalrag.ingest.walk import Skipped, SourceFile

#: language -> (file name, source whose function ``outer`` holds ``n`` nested
#: callbacks, each calling ``g<i>``)
NESTED: dict[str, tuple[str, Callable[[int], str]]] = {
    "javascript": ("app.js", lambda n: "function outer() {\n" + "".join(
        f"g{i}(function () {{\n" for i in range(n)) + "});\n" * n + "}\n"),
    "typescript": ("app.ts", lambda n: "function outer(): void {\n" + "".join(
        f"g{i}((x: number) => {{\n" for i in range(n)) + "});\n" * n + "}\n"),
    "go": ("p/app.go", lambda n: "package p\n\nfunc outer() {\n" + "".join(
        f"g{i}(func() {{\n" for i in range(n)) + "})\n" * n + "}\n"),
    "rust": ("src/lib.rs", lambda n: "fn outer() {\n" + "".join(
        f"g{i}(|x: i32| {{\n" for i in range(n)) + "});\n" * n + "}\n"),
    "csharp": ("App.cs", lambda n: "class C {\n void outer() {\n" + "".join(
        f"g{i}(() => {{\n" for i in range(n)) + "});\n" * n + "}\n}\n"),
    "java": ("App.java", lambda n: "class C {\n void outer() {\n" + "".join(
        f"g{i}(() -> {{\n" for i in range(n)) + "});\n" * n + "}\n}\n"),
    "ruby": ("app.rb", lambda n: "def outer\n" + "".join(f"g{i} do\n" for i in range(n)) + "end\n" * (n + 1)),
    "c": ("app.c", lambda n: "void outer(void) {\n" + "".join(f"g{i}(\n" for i in range(n)) + ")" * n + ";\n}\n"),
    "cpp": ("app.cpp", lambda n: "void outer() {\n" + "".join(
        f"g{i}([&]() {{\n" for i in range(n)) + "});\n" * n + "}\n"),
    "lua": ("app.lua", lambda n: "function outer()\n" + "".join(
        f"g{i}(function()\n" for i in range(n)) + "end)\n" * n + "end\n"),
    "bash": ("app.sh", lambda n: "outer() {\n" + "".join(f"if g{i}; then\n" for i in range(n - 1)) + f"g{n - 1}\n"
             + "fi\n" * (n - 1) + "}\n"),
    "kotlin": ("App.kt", lambda n: "fun outer() {\n" + "".join(f"g{i} {{\n" for i in range(n)) + "}\n" * n + "}\n"),
    "elixir": ("app.ex", lambda n: "defmodule M do\n  def outer do\n" + "".join(
        f"g{i}(fn ->\n" for i in range(n)) + "end)\n" * n + "end\nend\n"),
    "zig": ("app.zig", lambda n: "fn outer() void {\n_ = " + "".join(f"g{i}(\n" for i in range(n)) + "0"
            + ")\n" * n + ";\n}\n"),
    "scala": ("App.scala", lambda n: "object O {\n  def outer(): Unit = {\n" + "".join(
        f"g{i} {{ () =>\n" for i in range(n)) + "}\n" * n + "}\n}\n"),
    "swift": ("App.swift", lambda n: "func outer() {\n" + "".join(f"g{i} {{\n" for i in range(n)) + "}\n" * n + "}\n"),
    "php": ("app.php", lambda n: "<?php\nfunction outer() {\n" + "".join(
        f"g{i}(function () {{\n" for i in range(n)) + "});\n" * n + "}\n"),
    "python": ("app.py", lambda n: "def outer():\n    return g0(\n" + "".join(
        f"        lambda: g{i}(\n" for i in range(1, n)) + "0" + ")" * n + "\n"),
}


def _parse(tmp_path: Path, name: str, text: str, language: str, **kwargs: float | None) -> FileFacts | Skipped:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return parse_file("r", SourceFile(name, str(path), language, path.stat().st_size), **kwargs)


@pytest.mark.parametrize("language", sorted(NESTED))
def test_nested_callbacks_are_extracted_in_linear_time(tmp_path, language):
    """1,000 nested callbacks: each call belongs to ``outer``, found in one walk
    (walking up from every call took minutes, cubic in the depth; the file would
    now run out of its time budget and be skipped)."""
    name, make = NESTED[language]
    n = 1000
    started = time.perf_counter()
    facts = _parse(tmp_path, name, make(n), language)
    elapsed = time.perf_counter() - started
    assert isinstance(facts, FileFacts), facts
    calls = [r for r in facts.refs if r.kind == "call"]
    outer = [o.id for o in facts.objects if o.name == "outer"]
    assert sorted(r.name for r in calls) == sorted(f"g{i}" for i in range(n))
    assert {r.source for r in calls} == set(outer) and len(outer) == 1
    assert elapsed < 8, f"{elapsed:.1f} s"


def _java_anonymous(n: int) -> str:
    return "class C {\n void outer() {\n" + "".join(
        f"Runnable r{i} = new Runnable() {{ public void run() {{ go{i}(x{i});\n" for i in range(n)
    ) + "}};\n" * n + "}\n}\n"


def test_nested_java_anonymous_classes_take_linear_memory(tmp_path):
    """Every call site kept every anonymous class around it, which the facts cache
    wrote out in full: 5,000 nested ones took 9.8 GB. Now the facts grow with the file."""
    n = 1500
    text = _java_anonymous(n)
    tracemalloc.start()
    try:
        started = time.perf_counter()
        facts = _parse(tmp_path, "C.java", text, "java")
        assert isinstance(facts, FileFacts), facts
        packed = orjson.dumps(facts_to_json(facts))
        elapsed = time.perf_counter() - started
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len([r for r in facts.refs if r.kind == "call"]) == 2 * n  # each new Runnable(), each go<i>
    assert len(packed) < 40 * len(text), f"{len(packed):,} bytes of facts from {len(text):,}"
    assert peak < 120 * 2**20, f"peak {peak / 2**20:.0f} MiB"
    assert elapsed < 20, f"{elapsed:.1f} s"


def test_a_name_inside_too_many_anonymous_classes_stays_unresolved(tmp_path):
    """Past ``MAX_ANON`` anonymous classes a call site no longer knows them all: what
    it calls is left unresolved (``too-deep``), not guessed from the named class."""
    def nested(depth: int, call: str) -> str:
        return ("".join("new Runnable() { public void run() {\n" for _ in range(depth)) + f"{call}();\n"
                + "}}.run();\n" * depth)

    root = tmp_path / "r"
    root.mkdir()
    (root / "C.java").write_text(
        "class C {\n void helper() {}\n"
        f" void shallow() {{\n{nested(2, 'helper')} }}\n"
        f" void deep() {{\n{nested(MAX_ANON + 2, 'helper')} }}\n}}\n")
    store = MemoryStore(tmp_path / "idx")
    index_repository(root, store, name="r", workers=1)
    calls = {(e.source, e.target) for e in store.find_edges(repo="r", kind="CALLS")}
    assert ("r:C.java:C.shallow()", "r:C.java:C.helper()") in calls
    assert not any(source == "r:C.java:C.deep()" and target.endswith("helper()") for source, target in calls)
    deep = [(u.name, u.reason) for u in store.unresolved(repo="r") if u.source == "r:C.java:C.deep()"]
    assert ("helper", "too-deep") in deep


def test_a_minified_bundle_is_skipped_before_it_is_parsed(tmp_path):
    """Every object on a one-line bundle would get the whole line as its body."""
    root = tmp_path / "r"
    root.mkdir()
    line = "".join(f"function f{i}(a){{return g(a)+{i}}}" for i in range(3000))
    (root / "app.js").write_text(line + "\n")
    (root / "main.js").write_text("function main() {\n  return 1;\n}\n")
    tracemalloc.start()
    try:
        report = index_repository(root, MemoryStore(tmp_path / "idx"), name="r", workers=1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert {s.path: s.reason for s in report.skipped} == {"app.js": f"minified (longest line {len(line)} chars)"}
    assert report.files == 1
    assert peak < 40 * 2**20, f"peak {peak / 2**20:.0f} MiB"


def test_a_line_at_the_limit_is_indexed(tmp_path):
    text = "function f() {\n  return '" + "x" * (MAX_LINE_CHARS - 12) + "';\n}\n"
    assert max(map(len, text.split("\n"))) == MAX_LINE_CHARS
    facts = _parse(tmp_path, "a.js", text, "javascript")
    assert isinstance(facts, FileFacts) and [o.name for o in facts.objects] == ["f"]


def test_objects_piled_on_long_lines_are_skipped(tmp_path):
    """Under the line limit, many objects on each long line would still make the
    file's views copy it dozens of times."""
    row = "".join(f"function f{{}}_{i}(a){{return a+{i}}}" for i in range(150))
    text = "".join(row.replace("{}", str(k), 150) + "\n" for k in range(40))
    facts = _parse(tmp_path, "packed.js", text, "javascript")
    assert isinstance(facts, Skipped)
    assert facts.reason.startswith("objects cover its text ") and facts.reason.endswith(
        " times over (nested deep or sharing long lines)")


@pytest.mark.parametrize(("language", "name", "make"), [
    ("javascript", "deep.js", lambda n: "".join(f"function f{i}() {{\n" for i in range(n)) + "}\n" * n),
    ("python", "deep.py", lambda n: "".join(f"{' ' * i}def f{i}():\n" for i in range(n)) + " " * n + "pass\n"),
    ("java", "Deep.java", lambda n: "".join(f"class C{i} {{\n" for i in range(n)) + "}\n" * n),
    ("ruby", "deep.rb", lambda n: "".join(f"module M{i}\n" for i in range(n)) + "end\n" * n),
    ("c", "deep.c", lambda n: "".join(f"struct s{i} {{\n" for i in range(n)) + "int x;\n" + "} f;\n" * n),
    ("cpp", "deep.cpp", lambda n: "".join(f"namespace n{i} {{\n" for i in range(n)) + "void f() {}\n" + "}\n" * n),
    ("lua", "deep.lua", lambda n: "".join(f"function f{i}()\n" for i in range(n)) + "end\n" * n),
    ("bash", "deep.sh", lambda n: "".join(f"f{i}() {{\n" for i in range(n)) + ":\n" + "}\n" * n),
    ("kotlin", "Deep.kt", lambda n: "".join(f"class C{i} {{\n" for i in range(n)) + "}\n" * n),
    ("elixir", "deep.ex", lambda n: "".join(f"defmodule M{i} do\n" for i in range(n)) + "end\n" * n),
    ("zig", "deep.zig", lambda n: "".join(f"const S{i} = struct {{\n" for i in range(n)) + "};\n" * n),
    ("haskell", "Deep.hs", lambda n: "".join(f"{' ' * (2 * i)}f{i} = 1\n{' ' * (2 * i)} where\n" for i in range(n))
     + " " * (2 * n) + "z = 1\n"),
    ("scala", "Deep.scala", lambda n: "".join(f"object O{i} {{\n" for i in range(n)) + "}\n" * n),
    ("swift", "Deep.swift", lambda n: "".join(f"struct S{i} {{\n" for i in range(n)) + "}\n" * n),
    ("php", "deep.php", lambda n: "<?php\n" + "".join(f"function f{i}() {{\n" for i in range(n)) + "}\n" * n),
    ("rust", "src/deep.rs", lambda n: "".join(f"mod m{i} {{ use super::x{i};\n" for i in range(n))
     + "fn f() {}\n" + "}\n" * n),
])
def test_definitions_nested_too_deep_are_skipped(tmp_path, language, name, make):
    """Qualified names, bodies and scopes grow with the depth for every object (and
    nested objects cover the file too often well before: see the test above)."""
    assert isinstance(_parse(tmp_path, name, make(20), language), FileFacts)
    facts = _parse(tmp_path, name, make(MAX_NESTING + 1), language)
    assert facts == Skipped(name, f"definitions nested over {MAX_NESTING} deep")


def test_an_extraction_past_its_time_is_skipped(tmp_path):
    text = "".join(f"def f{i}():\n    return g{i}()\n\n" for i in range(200))
    assert isinstance(_parse(tmp_path, "slow.py", text, "python"), FileFacts)
    assert _parse(tmp_path, "slow.py", text, "python", seconds=1e-9) == Skipped(
        "slow.py", "took over 1e-09 s to parse")
