from __future__ import annotations

from pathlib import Path

import pytest

from vitalrag.graph.memory import MemoryStore
from vitalrag.ingest import index_repository
from vitalrag.transfer import RepositoryIndex, decide, load_scope

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    """The Python and Java fixture shops indexed into one MemoryStore."""
    store = MemoryStore(tmp_path_factory.mktemp("transfer") / "idx")
    index_repository(FIXTURES / "shop_py", store, name="shop", workers=1)
    index_repository(FIXTURES / "shop_java", store, name="shopj", workers=1)
    store.save()
    return store


@pytest.fixture(scope="module")
def choose(shop):
    """``choose(target, default, alternative, gate="full") -> Decision``."""
    indexes = {repo: RepositoryIndex(shop, repo) for repo in ("shop", "shopj")}

    def run(target: str, default: str, alternative: str, gate: str = "full"):
        scope = load_scope(indexes[target.split(":", 1)[0]], target)
        return decide(default, alternative, scope, gate=gate, target=target)

    return run
