"""``pull`` writes only what an index folder's records name: files a user keeps
in the folder survive pulls, and a folder that is not an index is refused
(issue 38 item 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from vitalrag.cli import main

FIXTURES = Path(__file__).parents[1] / "fixtures" / "repos"
USER_FILES = {
    "retrieval-utils.py": "def helper():\n    return 1\n",
    "retrieval-experiments/notes.txt": "results\n",
    "graph-2024.json": '{"nodes": []}\n',
    "graph.json": '{"edges": []}\n',
}


def _put(folder: Path) -> None:
    for rel, text in USER_FILES.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)


def _kept(folder: Path) -> dict[str, str | None]:
    return {rel: (folder / rel).read_text() if (folder / rel).is_file() else None for rel in USER_FILES}


def _ok(*args: str) -> None:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output


@pytest.mark.neo4j
def test_pull_keeps_the_users_files_and_refuses_a_folder_that_is_not_an_index(neo4j_url, repo, tmp_path,
                                                                               open_neo4j):
    open_neo4j()  # the test's repository is purged from the server afterwards
    ref = tmp_path / "ref"
    _ok("index", str(FIXTURES / "py_resolution"), "--store", str(ref), "--name", repo, "--model", "hashing")
    _ok("push", "--store", str(ref), "--to", neo4j_url, "--repo", repo)

    shared = tmp_path / "shared"
    _ok("pull", "--from", neo4j_url, "--store", str(shared), "--repo", repo)
    _put(shared)
    for _ in range(3):
        _ok("pull", "--from", neo4j_url, "--store", str(shared), "--repo", repo)
    assert _kept(shared) == USER_FILES
    live = json.loads((shared / "current.json").read_text())
    snapshots = {p.name for p in shared.iterdir() if p.name.startswith(("graph-", "retrieval-"))}
    assert snapshots - set(USER_FILES) - {"retrieval-experiments"} == {
        live["graph"], live["retrieval"], *live["previous"].values()}

    checkout = tmp_path / "checkout"
    checkout.mkdir()
    _put(checkout)
    refused = CliRunner().invoke(main, ["pull", "--from", neo4j_url, "--store", str(checkout), "--repo", repo])
    assert refused.exit_code != 0 and "not a VitalRAG index" in refused.stderr
    assert _kept(checkout) == USER_FILES
    assert sorted(p.name for p in checkout.iterdir()) == sorted({r.split("/")[0] for r in USER_FILES})
