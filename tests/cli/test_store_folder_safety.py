"""A store folder loses nothing its user put there: ``index``, ``watch`` and ``pull``
create, switch and remove only what the index folder's records name, and refuse
a folder that holds other files and is not an index (issue 38 item 1)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from vitalrag.cli import main
from vitalrag.graph.version import OWNED_FILE, current

FIXTURES = Path(__file__).parents[1] / "fixtures" / "repos"

#: files a user may keep that look like an index's snapshots (the ones the old sweep
#: removed), and some that even carry a snapshot's exact name
USER_FILES = {
    "retrieval-utils.py": "def helper():\n    return 1\n",
    "retrieval-experiments/notes.txt": "results\n",
    "graph-2024.json": '{"nodes": []}\n',
    "graph.json": '{"edges": []}\n',
    "retrieval.json": '{"current": "mine"}\n',
    "graph-0123456789ab.db": "not a graph\n",
    "retrieval-0123456789ab/meta.json": "{}\n",
    ".graph-notes.tmp": "scratch\n",
}


def _put(folder: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _kept(folder: Path, files: dict[str, str]) -> dict[str, str | None]:
    return {rel: (folder / rel).read_text() if (folder / rel).is_file() else None for rel in files}


def _one_line(result, *fragments: str) -> str:
    assert result.exit_code != 0, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for fragment in fragments:
        assert fragment in lines[0]
    return lines[0]


def _index(store: Path, repo: Path, *extra: str):
    return CliRunner().invoke(main, ["index", str(repo), "--store", str(store), "--name", "pyr",
                                     "--model", "hashing", "--workers", "1", "--json", *extra])


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A repository holding files with names the old sweep took for snapshots."""
    repo = tmp_path / "checkout"
    shutil.copytree(FIXTURES / "py_resolution", repo)
    _put(repo, USER_FILES)
    return repo


def test_indexing_a_checkout_into_itself_is_refused_and_writes_nothing(checkout):
    before = sorted(p.relative_to(checkout) for p in checkout.rglob("*"))
    line = _one_line(_index(checkout, checkout), str(checkout), "not a VitalRAG index",
                     "give an empty or new folder")
    assert "Traceback" not in line
    assert sorted(p.relative_to(checkout) for p in checkout.rglob("*")) == before  # not even a lock file
    assert _kept(checkout, USER_FILES) == USER_FILES


def test_watch_and_pull_refuse_a_folder_that_is_not_an_index(checkout):
    runner = CliRunner()
    _one_line(runner.invoke(main, ["watch", str(checkout), "--store", str(checkout), "--no-embed"]),
              "not a VitalRAG index")
    # refused before the server is asked anything (none listens on this port)
    _one_line(runner.invoke(main, ["pull", "--from", "bolt://127.0.0.1:1", "--store", str(checkout)]),
              "not a VitalRAG index")
    assert _kept(checkout, USER_FILES) == USER_FILES


def test_files_put_into_an_index_folder_survive_every_reindex(tmp_path, checkout):
    """A shared store folder: the user's files beside the index stay through
    re-indexes, switches and sweeps, whatever their names."""
    store = tmp_path / "shared"
    assert _index(store, checkout).exit_code == 0
    _put(store, USER_FILES)
    for extra in ((), ("--force",), ("--no-embed",), ("--force",)):
        (checkout / "pkg" / "more.py").write_text(f"def more():\n    return {len(extra)}\n")
        result = _index(store, checkout, *extra)
        assert result.exit_code == 0, result.output
    assert _kept(store, USER_FILES) == USER_FILES
    # the index's own snapshots: the live pair, the previous one, and no other
    live = json.loads((store / "current.json").read_text())
    named = {live["graph"], live["retrieval"], *live["previous"].values()}
    owned = set(json.loads((store / OWNED_FILE).read_text())["snapshots"])
    assert owned == named and all((store / n).exists() for n in named)
    search = CliRunner().invoke(main, ["search", "slugify", "--store", str(store), "--json"])
    assert search.exit_code == 0 and json.loads(search.stdout), search.output


def test_an_empty_folder_becomes_an_index_and_a_new_one_is_made(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    for store in (empty, tmp_path / "new" / "idx"):
        assert _index(store, FIXTURES / "py_resolution").exit_code == 0
        assert current(store).graph is not None and (store / OWNED_FILE).exists()


def test_an_index_of_an_earlier_version_is_adopted_with_its_users_files(tmp_path, checkout):
    """An index written before the folder kept its records (no snapshots.json)
    is still an index: its snapshots are taken over, and files beside it stay."""
    store = tmp_path / "old"
    assert _index(store, checkout).exit_code == 0
    (store / OWNED_FILE).unlink()
    _put(store, USER_FILES)
    for extra in ((), ("--force",), ("--force",)):
        assert _index(store, checkout, *extra).exit_code == 0
    assert _kept(store, USER_FILES) == USER_FILES
    live = json.loads((store / "current.json").read_text())
    named = {live["graph"], live["retrieval"], *live["previous"].values()}
    snapshots = {p.name for p in store.iterdir() if p.name.startswith(("graph-", "retrieval-"))}
    assert snapshots - set(USER_FILES) - {"retrieval-experiments", "retrieval-0123456789ab"} == named


def test_the_eval_cache_removes_only_its_own_indexes(tmp_path):
    from vitalrag.eval.index_cache import corpus_store

    corpus, cache = tmp_path / "corpus", tmp_path / "cache"
    shutil.copytree(FIXTURES / "py_resolution", corpus)
    mine = cache / "pyr-0123456789abcdef"  # a name the cache gives, to a folder it did not make
    _put(mine, {"notes.txt": "keep\n"})
    first = Path(corpus_store(corpus, "pyr", cache=cache, workers=1).location)
    (corpus / "pkg" / "more.py").write_text("def more():\n    return 2\n")  # a new key
    second = Path(corpus_store(corpus, "pyr", cache=cache, workers=1).location)
    assert second != first and not first.exists()  # the cache's own stale index is gone
    assert (mine / "notes.txt").read_text() == "keep\n"
