"""Repository bytes cannot drive a terminal: what the CLI prints and what the MCP
tools return carry no control character but tab, newline and CRLF (ESC, BEL, C1
and a lone CR are written as ``\\xNN``), and no user text is read as rich markup."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner

from vitalrag.cli import main

#: what no output may hold: a control character but tab, newline and the CR of a CRLF
UNSAFE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]|\r(?!\n)")
TERM_PY = ('def banner():\n'
           '    """Show \x1b]0;pwned\x07 a banner \x1b[2J\x9b2J."""\n'
           '    x = 1  # looks fine\r# hidden by the carriage return\n'
           '    return "\x1b]52;c;ZWNobyBwd25lZA==\x07"\n')
TABS_PY = "def tabbed():\r\n\treturn 'tab'\r\n"
#: a file name holding an escape: the walk skips it, and the skipped list prints it escaped
EVIL_NAME = "evil\x1b]0;title\x07.py"


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("escapes")
    repo = root / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "term.py").write_text(TERM_PY, newline="")
    (repo / "src" / "tabs.py").write_text(TABS_PY, newline="")
    (repo / "src" / EVIL_NAME).write_text("def evil():\n    return 1\n")
    store = root / "idx"
    result = CliRunner().invoke(main, ["index", str(repo), "--store", str(store), "--name", "h", "--no-embed"])
    assert result.exit_code == 0, result.output
    assert not UNSAFE.search(result.stdout + result.stderr)
    assert "src/evil\\x1b]0;title\\x07.py: file name holds a control character" in result.stdout
    return store


def _run(*args: str) -> tuple[str, str]:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout, result.stderr


@pytest.mark.parametrize("command", [
    ["context", "banner pwned"],
    ["explain", "banner pwned"],
    ["search", "banner pwned"],
    ["show", "h:src/term.py:banner"],
    ["objects"],
    ["edges"],
    ["stats"],
])
def test_printed_output_has_no_terminal_controls(hostile, command):
    out, err = _run(*command, "--store", str(hostile))
    assert not UNSAFE.search(out) and not UNSAFE.search(err)
    if command[0] in ("context", "show"):  # the bytes are there to read, escaped
        assert "\\x1b]0;pwned\\x07 a banner \\x1b[2J\\x9b2J" in out
        assert "\\x1b]52;c;ZWNobyBwd25lZA==\\x07" in out


def test_ordinary_code_keeps_its_tabs(hostile):
    out, _ = _run("show", "h:src/tabs.py:tabbed", "--store", str(hostile))
    assert "\treturn 'tab'" in out
    out, _ = _run("context", "tabbed", "--store", str(hostile))
    assert "\treturn 'tab'" in out


def test_json_output_is_lossless_and_terminal_safe(hostile):
    out, _ = _run("show", "h:src/term.py:banner", "--json", "--store", str(hostile))
    assert not UNSAFE.search(out)
    source = json.loads(out)["source"]  # the index reads a lone CR as a line break
    assert "\x1b]0;pwned\x07 a banner \x1b[2J\x9b2J" in source and "\x1b]52;c;" in source


def test_mcp_tools_return_no_terminal_controls(hostile):
    pytest.importorskip("mcp", reason="the MCP server needs the mcp SDK")
    from mcp import Client

    from vitalrag.serve import ContextService, build_server

    service = ContextService(str(hostile)).open(warm=False)
    answers: list[str] = []

    async def call() -> None:
        async with Client(build_server(service)) as client:
            for tool, args in (("get_context", {"query": "banner pwned"}), ("search", {"query": "banner pwned"}),
                               ("get_object", {"id": "h:src/term.py:banner"}), ("explain", {"query": "banner"})):
                answer = await client.session.call_tool(tool, args)
                assert not answer.is_error, answer
                answers.extend(c.text for c in answer.content)
                answers.append(json.dumps(answer.structured_content, ensure_ascii=False))

    try:
        anyio.run(call)
    finally:
        service.close()
    assert not [a for a in answers if UNSAFE.search(a)]
    assert "\\x1b]0;pwned\\x07" in answers[0]


@pytest.mark.parametrize("folder", ["wt/[/]repo", "wt/[wip]", "wt/[bold]x[/bold]"])
def test_watch_prints_a_path_with_brackets_as_it_is(tmp_path, folder):
    """A path is never read as rich markup: ``[/]`` once raised a MarkupError and
    ``[wip]`` vanished from the message."""
    (tmp_path / folder).mkdir(parents=True)
    (tmp_path / folder / "a.py").write_text("def a():\n    return 1\n")
    log = tmp_path / "stderr.txt"
    with log.open("wb") as err:
        proc = subprocess.Popen([sys.executable, "-m", "vitalrag", "watch", folder, "--store", str(tmp_path / "idx"),
                                 "--no-embed"], cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=err)
        try:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and proc.poll() is None and "watching" not in log.read_text():
                time.sleep(0.2)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    printed = log.read_text()
    assert f"watching {folder} (Ctrl-C to stop)" in printed, printed
    assert "Traceback" not in printed
