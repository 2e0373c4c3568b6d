"""``copy_store`` between embedded stores, and the ``push`` / ``pull`` commands."""

from __future__ import annotations

import json

import click
import pytest
from click.testing import CliRunner

from test_store_suite import Graph
from vitalrag.cli import VitalGroup
from vitalrag.cli.neo4j_commands import register
from vitalrag.errors import InputError
from vitalrag.graph.memory import MemoryStore
from vitalrag.graph.transfer import copy_store


@click.group(cls=VitalGroup)
def cli() -> None:
    """Test group carrying the push / pull commands."""


register(cli)


@pytest.fixture
def indexed(tmp_path, repo):
    """An embedded index on disk holding two repositories."""
    store = MemoryStore(tmp_path / "index")
    Graph(repo).load(store)
    Graph(f"{repo}-two").load(store)
    return tmp_path / "index"


def test_copy_store_between_embedded_stores(tmp_path, indexed, repo):
    src = MemoryStore.open(indexed, create=False)
    dst = MemoryStore(tmp_path / "copy")
    report = copy_store(src, dst)
    assert report.repos == (repo, f"{repo}-two")
    assert dst.export() == src.export()
    assert all(dst.get_meta(r) == src.get_meta(r) for r in report.repos)
    assert report.sources == 6 and report.unresolved == 6
    again = copy_store(src, dst)
    assert again.objects == report.objects and dst.export() == src.export()


def test_copy_one_repository(tmp_path, indexed, repo):
    src = MemoryStore.open(indexed, create=False)
    dst = MemoryStore(tmp_path / "copy")
    copy_store(src, dst, f"{repo}-two")
    assert dst.repositories() == [f"{repo}-two"]
    assert dst.export(f"{repo}-two") == src.export(f"{repo}-two")
    with pytest.raises(InputError, match="no repository 'nope'"):
        copy_store(src, dst, "nope")


def test_commands_have_help():
    runner = CliRunner()
    for name in ("push", "pull"):
        result = runner.invoke(cli, [name, "--help"])
        assert result.exit_code == 0 and "Neo4j" in result.output


def test_push_refuses_a_folder_as_target(indexed, tmp_path):
    result = CliRunner().invoke(cli, ["push", "--store", str(indexed), "--to", str(tmp_path / "x")])
    assert result.exit_code == 1
    assert "--to takes a neo4j:// or bolt:// URI" in result.output


def test_pull_refuses_a_uri_as_store():
    result = CliRunner().invoke(cli, ["pull", "--from", "bolt://127.0.0.1:1", "--store", "bolt://127.0.0.1:2"])
    assert result.exit_code == 1
    assert "Error:" in result.output


@pytest.mark.neo4j
def test_push_then_pull_round_trips(tmp_path, indexed, repo, open_neo4j, neo4j_url):
    runner = CliRunner()
    pushed = runner.invoke(cli, ["push", "--store", str(indexed), "--to", neo4j_url, "--repo", repo, "--json"])
    assert pushed.exit_code == 0, pushed.output
    summary = json.loads(pushed.output)
    assert summary["repos"] == [repo] and summary["objects"] == 11 and summary["edges"] == 17
    neo = open_neo4j()
    src = MemoryStore.open(indexed, create=False)
    assert neo.export(repo) == src.export(repo)
    pulled = runner.invoke(cli, ["pull", "--from", neo4j_url, "--store", str(tmp_path / "pulled"),
                                 "--repo", repo])
    assert pulled.exit_code == 0, pulled.output
    assert pulled.output.startswith(f"pulled {repo}: 11 objects, 17 edges, 3 unresolved, 3 sources")
    back = MemoryStore.open(tmp_path / "pulled", create=False)
    assert back.export(repo) == src.export(repo)
    assert back.get_meta(repo) == src.get_meta(repo)


def test_push_to_a_server_that_is_down_is_one_line(indexed):
    pytest.importorskip("neo4j")
    result = CliRunner().invoke(cli, ["push", "--store", str(indexed), "--to", "bolt://127.0.0.1:9"])
    assert result.exit_code == 1
    assert result.output.strip() == "Error: cannot reach Neo4j at bolt://127.0.0.1:9"
