"""Extraction fixes found by the per-language benchmark (bench/lang_questions,
issue 41 item 3): each a shape of real code the dev repositories hold."""

from __future__ import annotations

from vitalrag.ingest.facts import FileFacts
from vitalrag.ingest.lang import REGISTRY, language_for_path


def _facts(path: str, text: str) -> FileFacts:
    language = language_for_path(path)
    assert language is not None
    return REGISTRY[language].extract("r", path, text)


def test_a_calling_convention_macro_does_not_rename_the_function():
    """cJSON's tests: ``int CJSON_CDECL main(void)`` reads to tree-sitter as the
    declaration ``int CJSON_CDECL`` and a function of type ``main``; its name is main."""
    src = "int CJSON_CDECL main(void)\n{\n    return run();\n}\n\nstatic void CJSON_CDECL f(int a)\n{\n}\n"
    for path in ("tests/t.c", "tests/t.cpp"):
        objs = {o.name: o for o in _facts(path, src).objects}
        assert set(objs) == {"main", "f"}, path
        assert (objs["main"].start_line, objs["main"].end_line) == (1, 4)


def test_macros_around_a_cpp_definition_leave_its_qualified_name():
    """spdlog's ``-inl.h`` files: an export macro before the return type and a
    noexcept macro after the parameters."""
    src = (
        "#include <memory>\n"
        "SPDLOG_INLINE std::shared_ptr<logger> spdlog::async_logger::clone(std::string n) {\n    return x;\n}\n"
        "namespace spdlog {\n"
        "SPDLOG_INLINE void logger::swap(spdlog::logger &other) SPDLOG_NOEXCEPT {\n    name_.swap(other.name_);\n}\n"
        "SPDLOG_INLINE std::tm localtime() SPDLOG_NOEXCEPT {\n    return now();\n}\n"
        "SPDLOG_INLINE spdlog::log_clock::time_point now() {\n    return clock();\n}\n"
        "bool A::operator bool() const { return true; }\n"
        "}\n"
    )
    objs = {o.qualname: o.kind for o in _facts("include/spdlog/logger-inl.h", src).objects}
    assert objs == {"spdlog.async_logger.clone": "method", "spdlog.logger.swap": "method",
                    "spdlog.localtime": "function", "spdlog.now": "function",
                    "spdlog.A.operatorbool": "method"}


def test_a_script_with_no_ending_is_code_when_its_first_lines_say_so(tmp_path):
    """bash-completion's library is ``bash_completion`` (an Emacs mode line, no
    ``#!``); helpers and ``bin/`` scripts have a ``#!`` line and no ending."""
    from vitalrag.graph.memory import MemoryStore
    from vitalrag.ingest import index_repository
    from vitalrag.ingest.walk import walk_repository

    (tmp_path / "bin").mkdir()
    (tmp_path / "bash_completion").write_text(
        "#          -*- shell-script -*-\n#\n_comp_initialize()\n{\n    _comp_split words\n}\n"
        "_comp_split()\n{\n    echo split\n}\n")
    (tmp_path / "bin" / "deploy").write_text("#!/usr/bin/env bash\nrelease() { echo go; }\nrelease\n")
    (tmp_path / "bin" / "tool").write_text("#!/usr/bin/python3.12\ndef main():\n    pass\n")
    (tmp_path / "bin" / "report").write_text("#!/usr/bin/perl\nprint 1;\n")
    (tmp_path / "NOTES").write_text("nothing to see\n")
    walked = {f.path: f.language for f in walk_repository(tmp_path).files}
    assert walked == {"bash_completion": "bash", "bin/deploy": "bash", "bin/tool": "python"}
    assert walk_repository(tmp_path, content="docs").files == []
    store = MemoryStore(tmp_path / ".idx")
    index_repository(tmp_path, store, name="r", workers=1)
    calls = {(e.source, e.target) for e in store.find_edges(repo="r", kind="CALLS")}
    assert ("r:bash_completion:_comp_initialize", "r:bash_completion:_comp_split") in calls
    assert "r:bin/tool:main" in {o.id for o in store.find_objects(repo="r", kind="function")}


def _calls(tmp_path, files: dict[str, str]) -> set[tuple[str, str]]:
    from vitalrag.graph.memory import MemoryStore
    from vitalrag.ingest import index_repository

    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    store = MemoryStore(tmp_path / ".idx")
    index_repository(tmp_path, store, name="r", workers=1)
    return {(e.source.removeprefix("r:"), e.target.removeprefix("r:"))
            for e in store.find_edges(repo="r", kind="CALLS")}


def test_an_imported_member_of_an_object_shadows_the_packages_function(tmp_path):
    """okio's ``ByteStringJavaTest`` imports ``okio.TestUtil.makeSegments`` while
    its package also has a top-level ``makeSegments``: the import wins."""
    calls = _calls(tmp_path, {
        "src/TestUtil.kt": "package okio\n\nobject TestUtil {\n  fun makeSegments(s: String): String = s\n}\n",
        "src/Testing.kt": "package okio\n\nfun makeSegments(s: String): String = s\n",
        "src/UseTest.kt": "package okio\n\nimport okio.TestUtil.makeSegments\nimport java.util.Collections.max\n\n"
                          "class UseTest {\n  fun run() = makeSegments(\"a\") + max(listOf(1))\n}\n",
        "src/Max.kt": "package okio\n\nfun max(xs: List<Int>): Int = 0\n",
    })
    assert ("src/UseTest.kt:UseTest.run", "src/TestUtil.kt:TestUtil.makeSegments") in calls
    assert ("src/UseTest.kt:UseTest.run", "src/Testing.kt:makeSegments") not in calls
    # a name imported from outside the repository is not the package's function of that name
    assert ("src/UseTest.kt:UseTest.run", "src/Max.kt:max") not in calls


def test_the_types_of_an_elixir_spec_are_not_calls(tmp_path):
    """jason's ``@spec integer(integer) :: iodata`` above ``def integer``: the
    module called nothing there (21 such edges in jason's index)."""
    calls = _calls(tmp_path, {"lib/enc.ex": (
        "defmodule Enc do\n"
        "  @type opts :: keyword()\n"
        "  @spec integer(integer) :: iodata\n"
        "  def integer(n), do: Integer.to_string(n)\n\n"
        "  @callback value(term) :: opts()\n"
        "  @table build(3)\n"
        "  def value(v), do: integer(v)\n"
        "  defp build(n), do: n\n"
        "end\n")})
    assert calls == {("lib/enc.ex:Enc.value", "lib/enc.ex:Enc.integer"),
                     ("lib/enc.ex:Enc", "lib/enc.ex:Enc.build")}


def test_a_bare_call_never_resolves_to_an_instance_method(tmp_path):
    """optparse-applicative's ``Types.hs`` has ``instance Show (Option a)`` and
    ``instance Alternative Parser``: ``show r`` on a result and ``mappend e1 e2``
    on chunks are not those instances' equations (the argument's type is not
    followed); a ``where`` function of the instance's equation still is."""
    calls = _calls(tmp_path, {
        "src/Types.hs": ("module Types where\n\ndata Box a = Box a\n\n"
                         "instance Show (Box a) where\n  show (Box _) = helper \"box\"\n    where helper s = s\n\n"
                         "class Render a where\n  render :: a -> String\n\n"
                         "errorP :: String -> String\nerrorP s = s\n\n"
                         "instance Render (Box a) where\n  render b = errorP (show b)\n"),
        "src/Main.hs": "module Main where\n\nimport Types\n\nmain :: IO ()\nmain = putStrLn (show 3 ++ render (Box 1))\n",
    })
    assert calls == {("src/Main.hs:main", "src/Types.hs:Render.render"),
                     ("src/Types.hs:instance Render (Box a).render", "src/Types.hs:errorP"),
                     ("src/Types.hs:instance Show (Box a).show", "src/Types.hs:instance Show (Box a).show.helper")}


def test_catch2_and_doctest_test_cases_are_test_objects_with_their_calls():
    """spdlog's tests: ``TEST_CASE("name", "[tags]") { ... }`` reads to tree-sitter as
    a call statement missing its ``;`` and a block after it."""
    src = (
        '#include "includes.h"\n'
        'TEST_CASE("flush on level", "[flush]") {\n'
        '    auto l = make();\n'
        '    SECTION("twice") {\n        l->flush();\n        check(l);\n    }\n'
        '}\n'
        'namespace {\n'
        'TEST_CASE_METHOD(Fixture, R"(raw "name")") {\n    check(0);\n}\n'
        '}\n'
        'SCENARIO("rotating files") {\n    GIVEN("a sink") {\n        rotate();\n    }\n}\n'
        'static void check(int) {}\n'
    )
    facts = _facts("tests/test_flush.cpp", src)
    tests = {o.name: (o.start_line, o.end_line) for o in facts.objects if o.kind == "test"}
    assert tests == {"flush on level": (2, 8), 'raw "name"': (10, 12), "rotating files": (14, 18)}
    by_name = {o.name: o.id for o in facts.objects}
    calls = {(r.source, r.name) for r in facts.refs if r.kind == "call"}
    assert (by_name["flush on level"], "check") in calls and (by_name["flush on level"], "make") in calls
    assert (by_name['raw "name"'], "check") in calls and (by_name["rotating files"], "rotate") in calls
    # the macro idiom is no syntax error; a real one still is
    assert facts.problems == []
    assert _facts("tests/t.cpp", src + "int broken( {\n").problems
    # in C (no macro blocks of this kind) nothing changes
    assert not [o for o in _facts("tests/t.c", src).objects if o.kind == "test" and " " in o.name]
