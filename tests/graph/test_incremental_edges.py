"""Re-indexing deletes edges whose ends both survive, on every store.

An edge can vanish while its source and target stay: a call removed from a
function that stays, or a call in an unchanged file that now resolves to
another object because a file it imports from changed.
"""

from __future__ import annotations

from pathlib import Path

from vitalrag.graph.memory import MemoryStore
from vitalrag.ingest import index_repository


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _calls(store, repo: str) -> set[tuple[str, str]]:
    n = len(repo) + 1
    return {(e.source[n:], e.target[n:]) for e in store.find_edges(repo=repo, kind="CALLS")}


def test_edges_that_vanish_between_surviving_objects_are_deleted(store, repo, tmp_path):
    src = tmp_path / "src"
    _write(src, {
        "lib/__init__.py": "from .one import run\n",
        "lib/one.py": "def run():\n    return 1\n",
        "lib/two.py": "def run():\n    return 2\n",
        "lib/keep.py": "def first():\n    return 1\n\n\ndef second():\n    return 2\n\n\n"
                       "def kept():\n    first()\n    second()\n",
        "app.py": "from lib import run\n\n\ndef main():\n    return run()\n",
    })
    cache = tmp_path / "facts"
    index_repository(src, store, name=repo, workers=1, cache_dir=cache)
    assert _calls(store, repo) == {
        ("app.py:main", "lib/one.py:run"),
        ("lib/keep.py:kept", "lib/keep.py:first"), ("lib/keep.py:kept", "lib/keep.py:second")}

    # kept() stops calling second(), both stay; the package re-exports two.run,
    # so app.py, unchanged, now calls another function, and one.run stays
    _write(src, {
        "lib/keep.py": "def first():\n    return 1\n\n\ndef second():\n    return 2\n\n\n"
                       "def kept():\n    first()\n",
        "lib/__init__.py": "from .two import run\n",
    })
    report = index_repository(src, store, name=repo, workers=1, cache_dir=cache)
    assert report.parsed == 2 and report.reused == 3
    assert report.delta["objects_removed"] == 0
    assert _calls(store, repo) == {("app.py:main", "lib/two.py:run"), ("lib/keep.py:kept", "lib/keep.py:first")}
    fresh = MemoryStore(tmp_path / "fresh")
    index_repository(src, fresh, name=repo, workers=1)
    assert store.export(repo) == fresh.export(repo)
