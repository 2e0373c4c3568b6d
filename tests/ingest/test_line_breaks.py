"""Line numbers follow the parser's line breaks: \\n (and \\r\\n, \\r, read as \\n).

U+2028, U+0085, U+000C and the other characters ``str.splitlines`` breaks at are
characters inside a line for tree-sitter and Python alike; they must not shift
the lines of the objects after them, in the graph, the views or a context.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from vitalrag.cli import main
from vitalrag.graph.memory import MemoryStore
from vitalrag.graph.store import object_lines
from vitalrag.ingest import index_repository
from vitalrag.retrieve.views import build_views

ODD = "x = '\u2028'\n# a\x85comment\x1c\n\f\ndef f():\n    return 1\n\nclass C:\n    def m(self):\n        return f()\n"
JS = "// a\u2028b\x0bc\nfunction g() {\n  return 1;\n}\n"
CR = "def f():\r    return 1\r\rclass C:\r    def m(self):\r        return f()\r"


@pytest.fixture
def repo(tmp_path) -> Path:
    root = tmp_path / "lb"
    root.mkdir()
    (root / "odd.py").write_bytes(ODD.encode("utf-8"))
    (root / "odd.js").write_bytes(JS.encode("utf-8"))
    (root / "cr.py").write_bytes(CR.encode("utf-8"))
    (root / "crlf.py").write_bytes(CR.replace("\r", "\r\n").encode("utf-8"))
    return root


EXPECTED = {
    "lb:odd.py:f": (4, 5, "def f():"), "lb:odd.py:C": (7, 9, "class C:"),
    "lb:odd.py:C.m": (8, 9, "    def m(self):"), "lb:odd.js:g": (2, 4, "function g() {"),
    "lb:cr.py:f": (1, 2, "def f():"), "lb:cr.py:C": (4, 6, "class C:"),
    "lb:cr.py:C.m": (5, 6, "    def m(self):"), "lb:crlf.py:C.m": (5, 6, "    def m(self):"),
}


def test_objects_views_and_source_lines_agree(repo, tmp_path):
    store = MemoryStore(tmp_path / "idx")
    index_repository(repo, store, name="lb", workers=1)
    found = store.get_objects(list(EXPECTED))
    for oid, (start, end, first) in EXPECTED.items():
        obj = found[oid]
        assert (obj.start_line, obj.end_line) == (start, end), oid
        lines = object_lines(store, obj)
        assert len(lines) == end - start + 1 and lines[0] == first, (oid, lines)
    bodies = {v.object_id: v for v in build_views(store, "lb") if v.kind == "body"}
    for oid, (start, end, first) in EXPECTED.items():
        v = bodies[oid]
        assert (v.start_line, v.end_line) == (start, end)
        assert v.text.split("\n")[0] == first and v.text.count("\n") == end - start


def test_show_and_context_number_the_lines_of_the_file(repo, tmp_path):
    store = tmp_path / "s"
    runner = CliRunner()
    r = runner.invoke(main, ["index", str(repo), "--store", str(store), "--name", "lb", "--model", "hashing"])
    assert r.exit_code == 0, r.output
    shown = runner.invoke(main, ["show", "lb:odd.py:C", "--store", str(store)])
    assert shown.exit_code == 0, shown.output
    assert "     9          return f()" in shown.stdout.split("\n")
    ctx = runner.invoke(main, ["context", "class C method m", "--store", str(store), "--repo", "lb"])
    assert ctx.exit_code == 0, ctx.output
    file_lines = {"odd.py": ODD.split("\n"), "cr.py": CR.split("\r"), "odd.js": JS.split("\n"),
                  "crlf.py": CR.split("\r")}
    path = None
    checked = 0
    for line in ctx.stdout.split("\n"):
        head = re.match(r"--- (\S+?):\d+", line)
        if head:
            path = head.group(1)
            continue
        numbered = re.match(r"\s*(\d+) (.*)$", line)
        if path and numbered:
            assert file_lines[path][int(numbered.group(1)) - 1].rstrip() == numbered.group(2).rstrip(), line
            checked += 1
    assert checked
