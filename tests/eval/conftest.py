from __future__ import annotations

import pytest

from vitalrag.eval.tasks import build_tasks


@pytest.fixture
def eval_tasks(index_fixture):
    """Index an eval fixture repository and build its tasks: (store, tasks, report)."""

    def run(name: str, **kwargs):
        store, _ = index_fixture(name)
        tasks, report = build_tasks(store, name, **kwargs)
        return store, tasks, report

    return run
