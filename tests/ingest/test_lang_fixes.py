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
