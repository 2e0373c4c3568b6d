"""The command line: JSON shapes, human output, and clean errors."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from tests_support import graph_file, graph_payload, write_graph_payload

from vitalrag.cli import main

FIXTURES = Path(__file__).parents[1] / "fixtures" / "repos"


@pytest.fixture
def runner():
    return CliRunner()


@pytest.fixture
def indexed(runner, tmp_path):
    store = tmp_path / "idx"
    result = runner.invoke(main, ["index", str(FIXTURES / "py_resolution"), "--store", str(store),
                                  "--name", "pyr", "--model", "hashing", "--json"])
    assert result.exit_code == 0, result.output
    return store, json.loads(result.stdout)


def _commands(group: click.Group, prefix=()):
    for name, cmd in group.commands.items():
        yield prefix + (name,), cmd
        if isinstance(cmd, click.Group):
            yield from _commands(cmd, prefix + (name,))


def test_every_command_has_help(runner):
    for path, cmd in _commands(main):
        assert cmd.help, f"{' '.join(path)} has no help"
        result = runner.invoke(main, [*path, "--help"])
        assert result.exit_code == 0 and "Usage:" in result.output


def test_index_json_summary(indexed):
    _, data = indexed
    assert set(data) >= {"files", "objects", "edges", "skipped", "unresolved"}
    assert data["files"] == 9
    assert data["objects"]["class"] == 4 and data["objects"]["test"] == 2
    assert data["edges"]["CALLS"] == 22 and data["edges"]["INHERITS"] == 1
    assert data["skipped"] == []
    assert data["unresolved"] == 5


def test_objects_and_edges_json(runner, indexed):
    store, _ = indexed
    out = runner.invoke(main, ["objects", "--store", str(store), "--kind", "class", "--json"])
    rows = json.loads(out.stdout)
    assert {r["id"] for r in rows} == {"pyr:pkg/base.py:Base", "pyr:pkg/core.py:Engine",
                                        "pyr:pkg/core.py:Runner", "pyr:tests/test_core.py:TestEngine"}
    assert set(rows[0]) == {"id", "kind", "name", "qualname", "path", "start_line", "end_line"}
    out = runner.invoke(main, ["objects", "--store", str(store), "--path", "pkg/base.py", "--json"])
    assert [r["id"] for r in json.loads(out.stdout)] == [
        "pyr:pkg/base.py", "pyr:pkg/base.py:Base", "pyr:pkg/base.py:Base.setup"]
    out = runner.invoke(main, ["edges", "--store", str(store), "--kind", "INHERITS", "--json"])
    assert json.loads(out.stdout) == [
        {"source": "pyr:pkg/core.py:Engine", "target": "pyr:pkg/base.py:Base", "kind": "INHERITS"}]


def test_show_prints_source_and_edges(runner, indexed):
    store, _ = indexed
    out = runner.invoke(main, ["show", "pyr:pkg/core.py:Engine.prepare", "--store", str(store)])
    assert out.exit_code == 0
    assert "return super().setup()" in out.stdout
    assert "-CALLS-> pyr:pkg/base.py:Base.setup" in out.stdout
    assert "<-CALLS- pyr:pkg/core.py:Engine.run" in out.stdout
    data = json.loads(runner.invoke(main, ["show", "pyr:pkg/util.py:tool", "--store", str(store),
                                           "--json"]).stdout)
    assert data["source"] == "def tool():\n    return 42"


def test_stats(runner, indexed):
    store, _ = indexed
    data = json.loads(runner.invoke(main, ["stats", "--store", str(store), "--json"]).stdout)
    assert data["pyr"]["objects"]["function"] == 9


@pytest.mark.parametrize("command", ["stats", "objects", "edges"])
def test_a_repository_filter_naming_no_repository_is_an_error(runner, indexed, command):
    """A misspelt --repo lists nothing silently no more: one line, naming those there are."""
    store, _ = indexed
    r = runner.invoke(main, [command, "--store", str(store), "--repo", "pry"])
    _assert_clean_error(r, "no repository 'pry'", "(have: pyr)")
    assert runner.invoke(main, [command, "--store", str(store), "--repo", "pyr"]).exit_code == 0


def _assert_clean_error(result, *fragments):
    assert result.exit_code != 0
    assert "Traceback" not in result.output
    err = result.stderr.strip().splitlines()
    assert len(err) == 1, result.stderr
    for f in fragments:
        assert f in err[0]


def test_missing_path(runner, tmp_path):
    r = runner.invoke(main, ["index", str(tmp_path / "nope"), "--store", str(tmp_path / "s")])
    _assert_clean_error(r, "does not exist")


def test_empty_repository(runner, tmp_path):
    (tmp_path / "empty").mkdir()
    r = runner.invoke(main, ["index", str(tmp_path / "empty"), "--store", str(tmp_path / "s")])
    _assert_clean_error(r, "no files to index")


def test_unknown_object(runner, indexed):
    store, _ = indexed
    r = runner.invoke(main, ["show", "pyr:nope", "--store", str(store)])
    _assert_clean_error(r, "no object with id 'pyr:nope'")


def test_missing_store(runner, tmp_path):
    r = runner.invoke(main, ["objects", "--store", str(tmp_path / "none"), "--json"])
    _assert_clean_error(r, "no index at")


def test_other_schema_version_is_refused_and_kept(runner, indexed):
    store, _ = indexed
    graph = graph_file(store)
    data = graph_payload(store)
    data["schema_version"] = 999
    write_graph_payload(store, data)
    before = graph.read_bytes()
    r = runner.invoke(main, ["objects", "--store", str(store)])
    _assert_clean_error(r, "schema version 999")
    r = runner.invoke(main, ["index", str(FIXTURES / "py_resolution"), "--store", str(store)])
    _assert_clean_error(r, "schema version 999")
    assert graph.read_bytes() == before


def test_a_corrupt_graph_is_one_line_to_readers_and_rebuilt_by_index(runner, indexed):
    store, _ = indexed
    graph_file(store).write_text('{"schema_version": 1, "objects": [')
    _assert_clean_error(runner.invoke(main, ["stats", "--store", str(store)]), "cannot read index")
    r = runner.invoke(main, ["index", str(FIXTURES / "py_resolution"), "--store", str(store),
                             "--name", "pyr", "--model", "hashing"])
    assert r.exit_code == 0, r.output
    data = json.loads(runner.invoke(main, ["stats", "--store", str(store), "--json"]).stdout)
    assert data["pyr"]["objects"]["function"] == 9


def test_failed_index_leaves_previous_index(runner, indexed, tmp_path):
    store, _ = indexed
    before = graph_file(store).read_bytes()
    (tmp_path / "empty").mkdir()
    r = runner.invoke(main, ["index", str(tmp_path / "empty"), "--store", str(store), "--name", "pyr"])
    assert r.exit_code != 0
    assert graph_file(store).read_bytes() == before


def test_human_summary_lists_skipped(runner, tmp_path):
    repo = tmp_path / "r"
    repo.mkdir()
    (repo / "a.py").write_text("def a(:\n")
    (repo / "b.py").write_bytes(b"\xff\xfe")
    r = runner.invoke(main, ["index", str(repo), "--store", str(tmp_path / "s"), "--no-embed"])
    assert r.exit_code == 0
    assert "b.py: not UTF-8" in r.stdout
    assert "a.py: syntax errors" in r.stdout


def test_search_json_and_text(runner, indexed):
    store, data = indexed
    assert data["views"] > 0 and data["model"] == "hashing-256"
    out = runner.invoke(main, ["search", "slugify", "--store", str(store), "--json", "-k", "3"])
    assert out.exit_code == 0, out.output
    hits = json.loads(out.stdout)
    assert len(hits) == 3
    assert hits[0]["view"]["object_id"] == "pyr:pkg/helpers.py:slugify"
    assert set(hits[0]["retrievers"]) == {"bm25", "dense", "walk"}
    out = runner.invoke(main, ["search", "complete", "--store", str(store), "--retriever", "walk",
                               "--file", "pkg/core.py", "--line", "34"])
    assert out.stdout.splitlines()[0].split()[3] == "pyr:pkg/core.py:Runner.go"


def test_search_errors(runner, indexed, tmp_path):
    store, _ = indexed
    _assert_clean_error(runner.invoke(main, ["search", " ", "--store", str(store)]), "empty query")
    _assert_clean_error(runner.invoke(main, ["search", "x", "--store", str(store), "--file", "nope.py"]),
                        "not in the index")
    bare = tmp_path / "bare"
    runner.invoke(main, ["index", str(FIXTURES / "py_resolution"), "--store", str(bare), "--no-embed"])
    _assert_clean_error(runner.invoke(main, ["search", "slugify", "--store", str(bare), "--retriever", "dense"]),
                        "--no-embed")


def test_a_command_sets_the_collector_once_for_its_process(runner, tmp_path):
    import gc

    from vitalrag.cli import GC_OLDER_THRESHOLDS, GC_YOUNG_THRESHOLD

    before = gc.get_threshold()
    try:
        gc.set_threshold(700, *before[1:])
        r = runner.invoke(main, ["stats", "--store", str(tmp_path / "none")])
        assert gc.get_threshold() == (GC_YOUNG_THRESHOLD, *GC_OLDER_THRESHOLDS), r.output
        assert gc.isenabled()
    finally:
        gc.set_threshold(*before)
