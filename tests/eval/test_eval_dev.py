"""The dev corpora end to end (slow, network): six real repositories."""

from __future__ import annotations

import pytest

from vitalrag.eval.corpora import expand, fetch
from vitalrag.eval.index_cache import corpus_store
from vitalrag.eval.report import write_report
from vitalrag.eval.run import RunPlan, run_tasks
from vitalrag.eval.tasks import build_tasks

pytestmark = [pytest.mark.slow, pytest.mark.network]


def test_dev_corpora_evaluation(tmp_path):
    tasks = []
    for spec in expand(["dev"]):
        c = fetch(spec)
        found, report = build_tasks(corpus_store(c.path, c.name), c.name, root=str(c.path), corpus=spec)
        for t in found:
            assert t.next_line.strip() not in t.query
        tasks += found
    assert {t.language for t in tasks} == {"python", "java"}
    summary = run_tasks(tasks, RunPlan(sweep_budgets=(1024, 2048, 8192)), tmp_path)
    assert summary["run"]["skipped"] == {}
    result = write_report(tmp_path)
    assert "Table 3: paired results" in result["markdown"]
