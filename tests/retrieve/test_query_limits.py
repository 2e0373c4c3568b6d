"""A query's length: every step a query takes is linear in it, and a query over
``MAX_QUERY_CHARS`` is refused with one line from the CLI, the MCP tools
(``tests/serve/serve_support.py``'s bad calls) and the Python API alike."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from vitalrag.allocate.fill import named_in_query
from vitalrag.cli import main
from vitalrag.context import ContextSettings, context
from vitalrag.errors import InputError
from vitalrag.retrieve.query import MAX_QUERY_CHARS, Query

FIXTURES = Path(__file__).parents[1] / "fixtures" / "repos"


def pathological(n: int) -> dict[str, str]:
    """Queries of ``n`` characters that make a backtracking pattern rescan: long
    words of one kind, humps, dotted runs, punctuation, spaces."""
    cut = {
        "letters": "a" * n,
        "capitals": "A" * n,
        "capitals then a small letter": "A" * (n - 1) + "a",
        "underscores": "_" * n,
        "humps": "aA" * n,
        "letters and digits": "a1" * n,
        "digits and letters": "1a" * n,
        "PascalCase": "AbCd" * n,
        "dotted names": "a.b " * n,
        "one dotted run": "a." * n,
        "qualified": "a::" * n,
        "calls": "f(" * n,
        "backticks": "`a" * n,
        "punctuation": "(*-." * n,
        "many words": " ".join(f"w{i}x" for i in range(n)),
    }
    out = {name: q[:n] for name, q in cut.items()}
    out["spaces"] = "x" + " " * (n - 2) + "y"
    return out


@pytest.mark.parametrize("name", sorted(pathological(8)))
def test_named_in_query_is_linear_in_a_long_word(name):
    """The query-name patterns of the allocator scan each word once: 100,000
    characters of any shape take milliseconds (rescanning a word from each of its
    letters took about a minute)."""
    query = pathological(100_000)[name]
    start = time.perf_counter()
    named_in_query(query)
    assert time.perf_counter() - start < 2.0


def test_named_in_query_finds_what_it_found():
    dotted, words = named_in_query("why does JsonPrimitive.hashCode call parse_header, HTTPAdapter and 1x.Y.z")
    assert dotted == {"jsonprimitive.hashcode", "x.y.z"}
    assert words == {"parse_header", "httpadapter"}
    assert named_in_query("see a.b.c then send( it") == (frozenset({"a.b.c"}), frozenset({"send"}))


@pytest.fixture(scope="module")
def store(tmp_path_factory, packaged_model) -> str:
    """The fixture repository indexed with the real model, as a user's index is."""
    folder = tmp_path_factory.mktemp("limits") / "idx"
    result = CliRunner().invoke(main, ["index", str(FIXTURES / "py_resolution"), "--store", str(folder),
                                       "--name", "pyr", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["model"] == packaged_model.name
    return str(folder)


def test_a_query_at_the_limit_answers_quickly(store):
    """Every shape at the limit, through retrieval, ranking and allocation, within
    a bound far above what a linear pass takes (a query with no searchable word is
    refused at once)."""
    for name, query in pathological(MAX_QUERY_CHARS).items():
        assert len(query) == MAX_QUERY_CHARS
        start = time.perf_counter()
        try:
            context(query, ContextSettings(budget=1024), index=store)
        except InputError as exc:
            assert "no searchable words" in str(exc), name
        assert time.perf_counter() - start < 5.0, name


def test_a_long_snake_case_word_that_fails_at_its_end_answers_quickly(store):
    """A pattern that backtracks exponentially on such a word took seconds at 26 parts
    and twice as long with each one more (half a minute here)."""
    query = "_".join("abcdefghijklmnopqrstuvwxyz") + "_x_y-"
    start = time.perf_counter()
    context(query, ContextSettings(budget=512), index=store)
    assert time.perf_counter() - start < 5.0


def test_the_limit_is_checked_where_a_query_is_made():
    Query("x" * MAX_QUERY_CHARS)
    with pytest.raises(InputError, match=f"over the limit of {MAX_QUERY_CHARS:,}"):
        Query("x" * (MAX_QUERY_CHARS + 1))
    with pytest.raises(InputError, match="over the limit"):
        context("x" * (MAX_QUERY_CHARS + 1), index="/nonexistent/store")  # before any store is opened


@pytest.mark.parametrize("command", ["context", "search", "explain"])
def test_the_cli_refuses_a_query_over_the_limit_in_one_line(store, command):
    result = CliRunner().invoke(main, [command, "send " * 2000, "--store", store])
    assert result.exit_code != 0
    assert isinstance(result.exception, SystemExit)  # no traceback
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert "10,000 characters long, over the limit of 8,000" in lines[0]
