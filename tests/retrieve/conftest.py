from __future__ import annotations

from pathlib import Path

import pytest

from vitalrag.graph.memory import MemoryStore
from vitalrag.ingest import index_repository

FIXTURES = Path(__file__).parents[1] / "fixtures" / "repos"


@pytest.fixture
def pyr_store(tmp_path):
    store = MemoryStore(tmp_path / "idx")
    index_repository(FIXTURES / "py_resolution", store, name="pyr", workers=1)
    return store
