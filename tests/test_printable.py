"""kernel.printable: control characters escaped for descriptors and for output,
ordinary code left byte for byte; and the walk skipping names that hold them."""

from __future__ import annotations

import json

import pytest

from vitalrag.ingest.walk import walk_repository
from vitalrag.kernel.printable import (
    escape_controls,
    has_control,
    json_printable,
    one_line,
    printable,
    printable_data,
)

ORDINARY = ("def f(x):\n\treturn {'é': x, '日本': '🙂'}  # tab, unicode\r\n"
            "    s = 'a\\x1b b'  # an escape spelt in source\n\u2028\u00a0\n")


def test_ordinary_code_is_unchanged():
    assert printable(ORDINARY) == ORDINARY


@pytest.mark.parametrize(("raw", "shown"), [
    ("\x1b]0;title\x07", "\\x1b]0;title\\x07"),  # OSC: the window title
    ("\x1b]52;c;ZXZpbA==\x07", "\\x1b]52;c;ZXZpbA==\\x07"),  # OSC 52: the clipboard
    ("\x1b[2J", "\\x1b[2J"),  # CSI: clear the screen
    ("\x9b2J", "\\x9b2J"),  # C1 CSI
    ("safe\rEVIL", "safe\\x0dEVIL"),  # a lone CR overwrites the line
    ("end\r", "end\\x0d"),
    ("a\x00b\x7fc\x0bd\x0ce\x08", "a\\x00b\\x7fc\\x0bd\\x0ce\\x08"),
    ("keep\ttabs\nand\r\nCRLF", "keep\ttabs\nand\r\nCRLF"),
])
def test_printable_escapes_what_drives_a_terminal(raw, shown):
    assert printable(raw) == shown


def test_escape_controls_keeps_a_descriptor_on_one_line():
    name = "zz\n--- src/auth.py:1-3 check\t\r\x1b[2J\x85\u2028x  y.py"
    shown = escape_controls(name)
    assert shown == "zz\\x0a--- src/auth.py:1-3 check\\x09\\x0d\\x1b[2J\\x85\\u2028x  y.py"
    assert len(shown.splitlines()) == 1 and not has_control(shown)
    assert one_line("Foo(int,\n     String)\x1b") == "Foo(int, String)\\x1b"


def test_json_stays_lossless_and_terminal_safe():
    data = {"k\x9b": ["\x1b]0;t\x07", "\x85\x7f", "plain é"]}
    text = json_printable(json.dumps(data, ensure_ascii=False))
    assert not has_control(text.replace("\n", ""))
    assert json.loads(text) == data


def test_printable_data_reaches_every_string():
    assert printable_data({"a\x1b": [1, ("x\x07", None)], "n": 2.5}) == {"a\\x1b": [1, ["x\\x07", None]], "n": 2.5}


def test_the_walk_skips_names_with_control_characters(tmp_path):
    (tmp_path / "ok.py").write_text("x = 1\n")
    (tmp_path / "bell\x07.py").write_text("x = 1\n")
    (tmp_path / "tab\tname.py").write_text("x = 1\n")
    (tmp_path / "dir\x1b]0;t\x07").mkdir()
    (tmp_path / "dir\x1b]0;t\x07" / "inner.py").write_text("x = 1\n")
    result = walk_repository(tmp_path)
    assert [f.path for f in result.files] == ["ok.py"]
    skipped = {s.path: s.reason for s in result.skipped}
    assert set(skipped) == {"bell\\x07.py", "tab\\x09name.py", "dir\\x1b]0;t\\x07/"}
    assert all("control character" in r for r in skipped.values())
