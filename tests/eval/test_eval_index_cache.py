"""Per-corpus index cache: a rerun reuses the graph; a changed corpus gets a new one."""

from __future__ import annotations

import shutil
from pathlib import Path

from vitalrag.eval import index_cache

FIXTURES = Path(__file__).parents[1] / "fixtures" / "repos"


def test_reuse_and_invalidation(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "eval_py", repo)
    cache = tmp_path / "cache"
    calls = []
    import vitalrag.ingest as ingest

    real = ingest.index_repository

    def counting(*args, **kwargs):
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(ingest, "index_repository", counting)
    first = index_cache.corpus_store(repo, "shop", cache=cache, workers=1)
    again = index_cache.corpus_store(repo, "shop", cache=cache, workers=1)
    assert first.folder == again.folder and len(calls) == 1
    assert again.find_objects(repo="shop", name="total")

    (repo / "shop" / "pricing.py").write_text("def total(order):\n    return 0\n")
    changed = index_cache.corpus_store(repo, "shop", cache=cache, workers=1)
    assert changed.folder != first.folder and len(calls) == 2
    assert not first.folder.exists()  # the stale index of this corpus is gone
    assert [p.name for p in cache.iterdir() if not p.name.startswith(".")] == [changed.folder.name]
