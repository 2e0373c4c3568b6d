"""Golden views of fixture objects: body, signature, docstring, call sites, tests, windows."""

from __future__ import annotations

from vitalrag.retrieve.views import ViewConfig, build_views


def _by_object(views, oid):
    return sorted((v.kind, v.path, v.start_line, v.end_line, v.text) for v in views if v.object_id == oid)


def test_views_of_a_called_and_tested_function(pyr_store):
    views = build_views(pyr_store, "pyr")
    assert _by_object(views, "pyr:pkg/core.py:make") == [
        ("body", "pkg/core.py", 45, 48,
         "def make(name: str) -> Engine:\n    engine = Engine(name)\n    engine.run()\n    return engine"),
        ("call_site", "tests/test_core.py", 10, 12, "def test_make():\n    assert make(\"a\").name == \"a\"\n"),
        ("signature", "pkg/core.py", 45, 45, "def make(name: str) -> Engine"),
        ("test", "tests/test_core.py", 10, 11, "def test_make():\n    assert make(\"a\").name == \"a\""),
    ]


def test_views_of_a_documented_function_with_two_callers(pyr_store):
    views = build_views(pyr_store, "pyr")
    got = _by_object(views, "pyr:pkg/helpers.py:slugify")
    kinds = [k for k, *_ in got]
    assert kinds == ["body", "call_site", "call_site", "call_site", "docstring", "signature", "window"]
    assert ("docstring", "pkg/helpers.py", 1, 3, "Lower-case and dash-join.") in got
    # call sites: h.slugify and slug(...) in Engine.run, pkg.helpers.slugify in app.main
    assert ("call_site", "pkg/core.py", 18, 20,
            "        self.runner.go()\n        h.slugify(self.name)\n        slug(\"x\")") in got
    assert ("call_site", "pkg/core.py", 19, 21,
            "        h.slugify(self.name)\n        slug(\"x\")\n        util.tool()") in got
    assert ("call_site", "app.py", 9, 11,
            "    engine = Engine(\"app\")\n    pkg.helpers.slugify(\"A B\")\n    deep_fn()") in got


def test_every_view_names_its_object_and_hash(pyr_store):
    views = build_views(pyr_store, "pyr")
    ids = {o.id for o in pyr_store.find_objects(repo="pyr")}
    assert len({v.id for v in views}) == len(views)
    for v in views:
        assert v.object_id in ids and v.content_hash and v.repo == "pyr" and v.text.strip()


def test_windows_tag_innermost_enclosing_object(pyr_store):
    views = build_views(pyr_store, "pyr", config=ViewConfig(window_lines=3, window_stride=2))
    windows = {(v.start_line, v.end_line): v.object_id for v in views
               if v.kind == "window" and v.path == "pkg/core.py"}
    assert windows[(17, 19)] == "pyr:pkg/core.py:Engine.run"      # inside run
    assert windows[(13, 15)] == "pyr:pkg/core.py:Engine"          # spans __init__ and the blank line
    assert windows[(1, 3)] == "pyr:pkg/core.py"                   # module level: the file


def test_long_bodies_are_sliced(tmp_path):
    from vitalrag.graph.memory import MemoryStore
    from vitalrag.ingest import index_repository

    body = "\n".join(f"    x{i} = {i}" for i in range(100))
    (tmp_path / "long.py").write_text(f"def long():\n{body}\n    return x0\n")
    store = MemoryStore(tmp_path / "idx")
    index_repository(tmp_path, store, name="l", workers=1)
    slices = [(v.start_line, v.end_line) for v in build_views(store, "l") if v.kind == "slice"]
    assert slices == [(1, 40), (31, 70), (61, 100), (91, 102)]


def test_a_headers_declarations_get_short_windows_of_their_own(tmp_path):
    """cJSON.h: a prototype makes no object (its definition in cJSON.c is the
    object), so a header's declarations are found through windows; 30 lines of
    prototypes are one window that loses to every call site in BM25, so the lines
    outside a header's definitions get short ones."""
    from vitalrag.graph.memory import MemoryStore
    from vitalrag.ingest import index_repository

    protos = "".join(f"/* Frees item {i}. */\nvoid item_free_{i}(int *p);\n\n" for i in range(12))
    inline = "static inline int twice(int x)\n{\n" + "".join(f"    x += {i};\n" for i in range(40)) + "    return x;\n}\n"
    (tmp_path / "lib.h").write_text(protos + inline)
    (tmp_path / "lib.c").write_text('#include "lib.h"\n\nvoid item_free_3(int *p)\n{\n    *p = 0;\n}\n'
                                    + "".join(f"/* note {i} */\n" for i in range(14)))
    store = MemoryStore(tmp_path / "idx")
    index_repository(tmp_path, store, name="c", workers=1)
    config = ViewConfig()
    windows = [v for v in build_views(store, "c", config=config) if v.kind == "window"]
    header = [v for v in windows if v.path == "lib.h"]
    of_file = [v for v in header if v.object_id == "c:lib.h"]
    assert of_file and all(v.end_line - v.start_line + 1 <= config.declaration_lines for v in of_file)
    assert any("item_free_3" in v.text and "Frees item 3" in v.text for v in of_file)
    # inside a definition, and in a source file, windows keep their size
    assert any(v.object_id == "c:lib.h:twice" and v.end_line - v.start_line + 1 == config.window_lines
               for v in header)
    assert [(v.start_line, v.end_line) for v in windows if v.path == "lib.c"] == [(1, 20)]
