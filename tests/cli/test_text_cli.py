"""Text files from the command line: a question about deploying finds the document
that answers it, ``context`` shows its section, ``--content code`` leaves it out,
and a changed --content indexes again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from vitalrag.cli import main

FIXTURE = Path(__file__).parents[1] / "fixtures" / "repos" / "text_basic"


@pytest.fixture
def runner():
    return CliRunner()


def _index(runner, store: Path, *extra: str) -> dict:
    result = runner.invoke(main, ["index", str(FIXTURE), "--store", str(store), "--name", "t",
                                  "--model", "hashing", "--workers", "1", "--json", *extra])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _search(runner, store: Path, query: str) -> list[dict]:
    out = runner.invoke(main, ["search", query, "--store", str(store), "--json", "-k", "10"])
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


def test_a_deploy_question_finds_the_deploy_document(runner, tmp_path):
    store = tmp_path / "s"
    data = _index(runner, store)
    assert data["files"] == 8 and data["objects"]["section"] == 13
    hits = _search(runner, store, "deploy release")
    assert hits[0]["view"]["object_id"] == "t:DEPLOY.md:deploying/release-steps"
    assert {"bm25", "dense"} <= set(hits[0]["retrievers"])
    config = _search(runner, store, "database host port")
    assert config[0]["view"]["object_id"] == "t:config.yaml" and config[0]["view"]["kind"] == "text"
    assert _search(runner, store, "customer total numeric")[0]["view"]["path"] == "schema.sql"


def test_context_renders_the_section_with_line_numbers(runner, tmp_path):
    store = tmp_path / "s"
    _index(runner, store)
    out = runner.invoke(main, ["context", "how do I deploy a release", "--store", str(store), "--budget", "300"])
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    head = lines.index("--- DEPLOY.md:9-17 Deploying > Release steps")
    assert lines[head + 1:head + 4] == [" 9 ## Release steps", "10", "11 1. Tag the release with `git tag v1.2`."]


def test_content_code_leaves_the_documents_out(runner, tmp_path):
    store = tmp_path / "s"
    data = _index(runner, store, "--content", "code")
    assert data["files"] == 1 and "section" not in data["objects"]
    hits = _search(runner, store, "deploy release")
    assert all(h["view"]["path"] == "shop.py" for h in hits)


def test_a_changed_content_choice_indexes_again(runner, tmp_path):
    store = tmp_path / "s"
    _index(runner, store)
    assert "unchanged_since" in _index(runner, store)
    narrowed = _index(runner, store, "--content", "code")
    assert "unchanged_since" not in narrowed and narrowed["files"] == 1
    assert "unchanged_since" in _index(runner, store, "--content", "code")
    assert "unchanged_since" not in _index(runner, store, "--content", "all")


def test_the_content_choice_is_explained(runner):
    out = runner.invoke(main, ["index", "--help"])
    assert "--content [all|code|docs]" in out.output and "default: all" in out.output
    assert "--content" in runner.invoke(main, ["watch", "--help"]).output
